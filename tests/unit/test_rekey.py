"""rekey: records naming an alias location move to the canonical key and merge again."""

from datetime import UTC, datetime
from uuid import UUID

import pytest

from consumer.merge import merge
from consumer.records import DatasetRecord, Extracted, IORecord, LocationRecord, RunRecord
from consumer.rekey import rekey

pytestmark = pytest.mark.unit

T0 = datetime(2024, 5, 1, tzinfo=UTC)
RUN = UUID("01908224-8410-79a2-8de6-a769ad6944c9")
A, B = ("hdfs", "nn1:8020"), ("hdfs", "nn2:8020")
JOB = ("airflow", "af", "dag.task")


def batch() -> Extracted:
    def io(location: tuple[str, str], rows: int) -> IORecord:
        return IORecord(0, RUN, T0, RUN, JOB, (*location, "/t"), T0, num_rows=rows)

    return merge(
        [
            Extracted(
                locations=[LocationRecord(*A, frozenset({"nn1:8020"}))],
                datasets=[DatasetRecord(A, "/t")],
                ios=[io(A, 5)],
                runs=[RunRecord(RUN, T0, JOB, T0, 1)],
            ),
            Extracted(
                locations=[LocationRecord(*B, frozenset({"nn2:8020"}))],
                datasets=[DatasetRecord(B, "/t")],
                ios=[io(B, 9)],
            ),
        ]
    )


def test_records_of_the_alias_merge_into_the_canonical_key() -> None:
    before = batch()
    after = rekey(before, {A: A, B: A})
    assert [r.key for r in after.locations] == [A]
    assert after.locations[0].addresses == {"nn1:8020", "nn2:8020"}
    assert [r.key for r in after.datasets] == [(*A, "/t")]
    assert [(r.dataset, r.num_rows) for r in after.ios] == [((*A, "/t"), 9)]
    assert after.runs is before.runs  # nothing named the alias: left as merged


def test_no_moved_key_leaves_the_batch_as_it_is() -> None:
    before = batch()
    assert rekey(before, {A: A, B: B}) is before
