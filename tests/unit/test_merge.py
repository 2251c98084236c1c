"""merge: the documented rules, and that merging is order-, duplication- and grouping-free."""

import itertools
import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from uuid import UUID

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from consumer.merge import (
    RUN_FIELDS,
    field_times,
    merge,
    merge_jobs,
    merge_operations,
    merge_run_fields,
    merge_runs,
)
from consumer.records import (
    Checkpoints,
    Extracted,
    IORecord,
    JobRecord,
    OperationRecord,
    RunRecord,
)
from shared.enums import OutputType, Status

pytestmark = pytest.mark.unit

T0 = datetime(2024, 5, 1, tzinfo=UTC)
RUN = UUID("01908224-8410-79a2-8de6-a769ad6944c9")
JOB = ("namespace", "default", "app")


def at(minute: int) -> datetime:
    return T0 + timedelta(minutes=minute)


def run(minute: int, status: Status, **fields: object) -> RunRecord:
    started = at(minute) if status == Status.STARTED else None
    ended = at(minute) if status >= Status.SUCCEEDED else None
    record = RunRecord(RUN, T0, JOB, at(minute), int(status), started_at=started, ended_at=ended)
    return replace(record, **fields)  # type: ignore[arg-type] # test fields are RunRecord's


def merged_run(*records: RunRecord) -> RunRecord:
    [result] = merge([Extracted(runs=list(records))]).runs
    return result


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        ([Status.STARTED, Status.SUCCEEDED], Status.SUCCEEDED),
        ([Status.SUCCEEDED, Status.STARTED], Status.SUCCEEDED),  # a late START never regresses
        ([Status.FAILED, Status.SUCCEEDED], Status.FAILED),
        ([Status.KILLED, Status.FAILED, Status.STARTED], Status.KILLED),
        ([Status.UNKNOWN, Status.STARTED], Status.STARTED),
    ],
)
def test_status_only_moves_forward(statuses: list[Status], expected: Status) -> None:
    records = [run(i, s) for i, s in enumerate(statuses)]
    assert merged_run(*records).status == expected


def test_times_widen() -> None:
    result = merged_run(
        run(5, Status.STARTED, created_at=at(5)),
        run(1, Status.STARTED, created_at=at(1)),
        run(9, Status.SUCCEEDED),
        run(7, Status.FAILED),
    )
    assert (result.created_at, result.started_at, result.ended_at) == (T0, at(1), at(9))
    assert result.event_time == at(9)


def test_descriptive_fields_take_the_latest_non_null() -> None:
    result = merged_run(
        run(1, Status.STARTED, user="alice", external_id="app-1", attempt=1),
        run(3, Status.SUCCEEDED),  # says nothing: removes nothing
        run(2, Status.STARTED, user="bob", attempt=2, running_log_url="http://ui"),
    )
    assert (result.user, result.external_id, result.attempt, result.running_log_url) == (
        "bob",
        "app-1",
        2,
        "http://ui",
    )
    assert result.field_times == (at(3), None, None, at(2), None, None, at(1), at(2), at(2), None)


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_the_latest_value_wins_in_every_arrival_order_even_when_smaller(
    order: tuple[int, ...],
) -> None:
    """t1 zed, t3 no user, t2 alice: alice, though zed is greater and t3 is the row's time."""
    events = [
        run(1, Status.STARTED, user="zed"),
        run(3, Status.SUCCEEDED),
        run(2, Status.STARTED, user="alice"),
    ]
    pairwise = events[order[0]]
    for i in order[1:]:
        pairwise = merge_runs(pairwise, events[i])
    assert (pairwise.user, pairwise.event_time) == ("alice", at(3))
    assert merged_run(*(events[i] for i in order)).user == "alice"


def test_equal_times_fall_back_to_the_greater_value() -> None:
    result = merged_run(run(1, Status.STARTED, user="bob"), run(1, Status.STARTED, user="alice"))
    assert result.user == "bob"


def test_checkpoint_snapshots_take_the_one_with_the_most_checkpoints() -> None:
    early, late = Checkpoints(3, 3, 0, 0, 1), Checkpoints(9, 8, 1, 0, 0)
    result = merged_run(
        run(2, Status.STARTED, checkpoints=late), run(1, Status.STARTED, checkpoints=early)
    )
    assert result.checkpoints == late


def operation(minute: int, **fields: object) -> OperationRecord:
    record = OperationRecord(RUN, T0, RUN, at(minute), int(Status.STARTED))
    return replace(record, **fields)  # type: ignore[arg-type] # test fields are the record's


def test_operation_position_takes_the_least_and_names_the_latest() -> None:
    result = merge_operations(
        operation(1, position=4, name="execute_b", description="load"),
        operation(2, position=2, name="execute_a"),
    )
    assert (result.position, result.name, result.description) == (2, "execute_a", "load")
    assert result.field_times == (at(2), at(2), None, None, at(1), None, None)


def io(direction: int, dataset: str, **fields: object) -> IORecord:
    record = IORecord(direction, RUN, T0, RUN, JOB, ("s3", "b", dataset), T0)
    return replace(record, **fields)  # type: ignore[arg-type] # test fields are the record's


def test_inputs_and_outputs_are_unioned_and_counters_take_the_maximum() -> None:
    first = Extracted(
        ios=[io(0, "in"), io(1, "out", num_rows=10, output_types=int(OutputType.CREATE))]
    )
    later = Extracted(
        ios=[io(1, "out", num_rows=5, num_bytes=80, output_types=int(OutputType.APPEND))]
    )
    ios = merge([first, later]).ios
    assert [(r.direction, r.dataset[2]) for r in ios] == [(0, "in"), (1, "out")]
    assert (ios[1].num_rows, ios[1].num_bytes, ios[1].output_types) == (
        10,
        80,
        OutputType.CREATE | OutputType.APPEND,
    )


def test_an_input_keeps_the_latest_schema() -> None:
    early, late = UUID(int=9), UUID(int=1)
    later_without = Extracted(ios=[io(0, "in", event_time=at(3))])
    for order in itertools.permutations(
        [
            Extracted(ios=[io(0, "in", schema=early, event_time=at(1))]),
            Extracted(ios=[io(0, "in", schema=late, event_time=at(2))]),
            later_without,
        ]
    ):
        [result] = merge(order).ios
        assert (result.schema, result.schema_time, result.event_time) == (late, at(2), at(3))


def test_a_known_job_type_beats_unknown_and_the_parent_is_kept() -> None:
    parent = ("namespace", "airflow", "dag")
    unknown = JobRecord(("namespace", "airflow"), "dag.task", "UNKNOWN", None)
    typed = JobRecord(("namespace", "airflow"), "dag.task", "AIRFLOW_TASK", parent)
    assert (merge_jobs(unknown, typed).type, merge_jobs(unknown, typed).parent) == (
        "AIRFLOW_TASK",
        parent,
    )
    assert merge_jobs(typed, unknown) == merge_jobs(unknown, typed)


def test_a_job_met_again_is_kept_as_it_is() -> None:
    """merge_jobs is a join: the same job from event after event makes no new record."""
    parent = ("namespace", "airflow", "dag")
    typed = JobRecord(("namespace", "airflow"), "dag.task", "AIRFLOW_TASK", parent)
    again = JobRecord(("namespace", "airflow"), "dag.task", "UNKNOWN", None)
    assert merge_jobs(typed, again) is typed
    assert merge_jobs(typed, typed) is typed


def test_every_user_seen_is_kept_even_when_the_run_names_another() -> None:
    batch = merge(
        [
            Extracted(runs=[run(1, Status.STARTED, user="alice")]),
            Extracted(runs=[run(2, Status.STARTED, user="bob")]),
        ]
    )
    assert (batch.users, batch.runs[0].user) == (["alice", "bob"], "bob")


def test_results_are_sorted_by_key() -> None:
    ids = [UUID(int=n) for n in (5, 1, 3)]
    runs = [replace(run(0, Status.STARTED), id=i) for i in ids]
    assert [r.id for r in merge([Extracted(runs=runs)]).runs] == sorted(ids)


USERS = st.none() | st.sampled_from(["alice", "bob", "carol"])
RUNS = st.builds(
    run,
    minute=st.integers(0, 5),
    status=st.sampled_from(list(Status)),
    user=USERS,
    external_id=st.none() | st.sampled_from(["a", "b"]),
    attempt=st.none() | st.integers(0, 3),
    parent_run_id=st.none() | st.sampled_from([UUID(int=1), UUID(int=2)]),
    running_log_url=st.none() | st.sampled_from(["http://a", "http://b"]),
    checkpoints=st.none() | st.builds(Checkpoints, *[st.integers(0, 3)] * 5),
)


@settings(max_examples=200)
@given(records=st.lists(RUNS, min_size=1, max_size=6), seed=st.integers(0, 2**32 - 1))
def test_merge_is_a_join_any_order_duplication_or_grouping_gives_the_same_run(
    records: list[RunRecord], seed: int
) -> None:
    """Commutative, associative and idempotent, which the write stage relies on."""
    rng = random.Random(seed)
    delivered = [r for r in records for _ in range(rng.randint(1, 3))]
    rng.shuffle(delivered)
    cut = rng.randint(0, len(delivered))
    grouped = (
        merged_run(merged_run(*delivered[:cut]), *delivered[cut:])
        if cut
        else merged_run(*delivered)
    )
    assert explicit(grouped) == explicit(merged_run(*records))
    pairwise = records[0]
    for record in records[1:]:
        pairwise = merge_runs(record, pairwise)
    assert explicit(pairwise) == explicit(merged_run(*records))


REFERENCES = st.builds(
    lambda minute, created: RunRecord(RUN, at(created), JOB, at(minute), int(Status.UNKNOWN)),
    minute=st.integers(-2, 7),
    created=st.integers(-2, 2),
)


@settings(max_examples=300)
@given(records=st.lists(RUNS, min_size=1, max_size=4), reference=REFERENCES)
def test_a_parent_reference_merges_exactly_as_the_general_rule_merges_it(
    records: list[RunRecord], reference: RunRecord
) -> None:
    """merge_runs' shortcut for a bare parent/root reference (most run merges of a batch)
    gives the general rule's record, field times included, merged or unmerged."""
    for full in (records[0], merged_run(*records)):
        assert merge_runs(full, reference) == merge_run_fields(full, reference)
    other_job = replace(reference, job=("namespace", "default", "other"))
    assert merge_runs(records[0], other_job) == merge_run_fields(records[0], other_job)


def explicit(record: RunRecord) -> RunRecord:
    """The record with its field times spelled out (an unmerged record leaves them implied)."""
    return replace(record, field_times=field_times(record, RUN_FIELDS))


def owned_output(minute: int, run_id: UUID, job: str, rows: int | None = None) -> IORecord:
    dataset = ("s3", "bucket", "out")
    return IORecord(1, RUN, T0, run_id, ("namespace", "default", job), dataset, at(minute),
                    num_rows=rows)  # fmt: skip


@pytest.mark.parametrize("order", list(itertools.permutations(range(4))))
def test_an_output_names_the_run_and_job_of_its_latest_event(order: tuple[int, ...]) -> None:
    low, high = UUID(int=RUN.int + 1), UUID(int=RUN.int + 2)
    records = [
        owned_output(1, high, "c", rows=5),
        owned_output(2, low, "b"),
        owned_output(2, high, "a"),  # as late as b: the greater run id wins
        owned_output(1, RUN, "z", rows=9),
    ]
    [result] = merge([Extracted(ios=[records[i] for i in order])]).ios
    assert (result.run_id, result.job, result.num_rows) == (high, ("namespace", "default", "a"), 9)
