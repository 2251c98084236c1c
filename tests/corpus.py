"""The shared corpus of real OpenLineage events as (file, index, bytes) triples.

`.json` files hold one event or an array of events, `.jsonl` files one event per
line; see ../shared/corpus/PROVENANCE.md for where each comes from. Some are
test-harness templates whose fields hold matchers instead of values
(`{{ any(result) }}`, `${json-unit.any-string}`) or partial expectations that
lack required fields: `placeholders` and `missing_required` find those.
"""

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import orjson
import pytest

from consumer.decode import Event, decode
from consumer.extract import extract
from consumer.ingest import DEFAULT_MAX_EVENT_BYTES
from consumer.merge import merge
from consumer.records import Extracted

# The repository is checked out next to the shared folder: <root>/../shared/corpus.
CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "events"
PLACEHOLDER = re.compile(r"\{\{.*?\}\}|\$\{json-unit\.[^}]*\}", re.S)
# What Threadline needs to store each kind of event (producer and schemaURL identify nothing).
REQUIRED = {
    "run": (("eventTime",), ("run", "runId"), ("job", "namespace"), ("job", "name")),
    "dataset": (("eventTime",), ("dataset", "namespace"), ("dataset", "name")),
    "job": (("eventTime",), ("job", "namespace"), ("job", "name")),
}


@dataclass(frozen=True, slots=True)
class CorpusEvent:
    file: str  # relative to the events folder, e.g. "data-rentgen/events_spark.jsonl"
    index: int  # position in the file (array element or line)
    payload: bytes

    @property
    def doc(self) -> Any:
        return orjson.loads(self.payload)

    @property
    def id(self) -> str:
        return f"{self.file}#{self.index}"

    @property
    def kind(self) -> str | None:
        """The kind: "run", "dataset" or "job" (the key that makes it one), else None."""
        doc = self.doc
        return next((k for k in REQUIRED if isinstance(doc, dict) and k in doc), None)

    def placeholders(self) -> list[str]:
        """Every template matcher anywhere in the event."""
        return PLACEHOLDER.findall(self.payload.decode())

    def missing_required(self) -> list[str]:
        """Required fields of its kind that are absent or not strings ("run.runId", ...)."""
        paths = REQUIRED.get(self.kind or "run", ())
        return [".".join(p) for p in paths if not isinstance(_at(self.doc, p), str)]


def _at(doc: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        doc = doc.get(key) if isinstance(doc, dict) else None
    return doc


def _split(path: Path) -> Iterator[bytes]:
    raw = path.read_bytes()
    if path.suffix == ".jsonl":
        yield from (line for line in raw.splitlines() if line.strip())
        return
    doc = orjson.loads(raw)
    for event in doc if isinstance(doc, list) else [doc]:
        yield orjson.dumps(event)


@cache
def corpus_events() -> tuple[CorpusEvent, ...]:
    """Every event of the corpus, in file order."""
    if not CORPUS.is_dir():
        pytest.fail(f"the shared corpus is missing at {CORPUS}", pytrace=False)
    return tuple(
        CorpusEvent(str(path.relative_to(CORPUS)), index, payload)
        for path in sorted(CORPUS.rglob("*.json*"))
        for index, payload in enumerate(_split(path))
    )


def events_of(*files: str) -> list[CorpusEvent]:
    """The events of the given files (relative names), in file order."""
    wanted = set(files)
    found = [e for e in corpus_events() if e.file in wanted]
    missing = wanted - {e.file for e in found}
    assert not missing, f"not in the corpus: {sorted(missing)}"
    return found


def payloads_of(*files: str) -> list[bytes]:
    return [e.payload for e in events_of(*files)]


# Every corpus event that must be rejected, by file: one reason for all its events, or
# one per index. Sources: ../shared/corpus/PROVENANCE.md ("placeholders", "missing: ...").
PLACEHOLDER_FILES = [
    *(f"openlineage-dbt/structured_logs_{n}.json" for n in ("bigquery_successful_run",)),
    *(f"openlineage-dbt/structured_logs_postgres_{n}.json" for n in ("failed_run", "test_source")),
    "openlineage-dbt/structured_logs_snowflake_failed_run.json",
    *(f"openlineage-hive/{n}.json" for n in ("simpleCtasStart", "simpleCtasComplete")),
    *(f"openlineage-hive/{n}Complete.json" for n in ("import", "loadToPartition")),
    "openlineage-hive/partitionedExportComplete.json",
]
MISSING_RUN_ID = [
    *(
        f"openlineage-hive/cll{n}Complete.json"
        for n in ("MultiInserts", "Union", "ComplexQueryCTEJoins")
    ),
    *(f"openlineage-hive/cll{n}Complete.json" for n in ("SimpleQueryMasking", "PartitionedTable")),
    "openlineage-hive/cllSimpleQueryWindowedAggregateComplete.json",
    *(
        f"openlineage-spark-partial/{n}.json"
        for n in ("applicationLevelStartApplication", "sparksql_1")
    ),
    *(
        f"openlineage-spark-partial/pyspark{n}.json"
        for n in ("HiveCompleteEvent", "KafkaReadStartEvent")
    ),
    *(f"openlineage-spark-partial/pyspark{n}.json" for n in ("KafkaWriteCompleteEvent",)),
    "openlineage-spark-partial/pysparkKafkaAssignReadCompleteEvent.json",
    "openlineage-spark-partial/pysparkOverwriteNameRunningEvent.json",
    "openlineage-spec-examples/fluentd_event_no_run_id.json",
]
# Partial expectations with a job but neither run nor eventTime (decoded as JobEvents).
MISSING_EVENT_TIME = [
    *(f"openlineage-spark-partial/columnLineageJDBC{n}.json" for n in ("Start", "Complete")),
    *(f"openlineage-spark-partial/pyspark{n}.json" for n in ("TruncateTableCompleteEvent",)),
    "openlineage-spark-partial/pysparkV2MergeIntoTableCowCompleteEvent.json",
    "openlineage-spark-partial/pysparkWriteIcebergTableVersionEnd.json",
]
EXPECTED_REJECTS: dict[str, tuple[str, str] | list[tuple[str, str]]] = {
    **dict.fromkeys(PLACEHOLDER_FILES, ("placeholder", "run.runId")),
    **dict.fromkeys(MISSING_RUN_ID, ("missing_field", "run.runId")),
    **dict.fromkeys(MISSING_EVENT_TIME, ("missing_field", "eventTime")),
    "openlineage-spark-partial/pysparkBigquerySaveEnd.json": ("missing_field", "job.name"),
    "openlineage-spark-partial/pysparkCLLEnd.json": ("missing_field", "job.name"),
    "openlineage-spark-partial/deltaMergeCommandVerificationComplete.json": (
        "missing_field",
        "run ",
    ),
    "openlineage-spark-partial/pysparkSingleRDDStatistics.json": ("unknown_kind", "neither"),
    "compatibility-tests/simple_run_event.json": ("invalid_run_id", "'run_id'"),
    "airflow-system-tests/openlineage_custom_operator_failure_dag.json": [
        ("missing_field", "run.runId"),
        ("placeholder", "run.runId"),
    ],
}


def expected_reject(event: CorpusEvent) -> tuple[str, str] | None:
    """(reason, a word of the detail) the event must be rejected with; None: it is stored."""
    expected = EXPECTED_REJECTS.get(event.file)
    if expected is None and event.file.startswith("openlineage-flink/"):
        return ("placeholder", "run.runId")  # every Flink template's runId is json-unit
    return expected[event.index] if isinstance(expected, list) else expected


@cache
def ingestable() -> tuple[CorpusEvent, ...]:
    """Events a consumer must store: no placeholders, the required fields of their kind
    present and, for RunEvents, a UUID runId."""
    return tuple(e for e in corpus_events() if _ingestable(e))


def _ingestable(event: CorpusEvent) -> bool:
    if event.kind is None or event.placeholders() or event.missing_required():
        return False
    return event.kind != "run" or _is_uuid(event.doc["run"]["runId"])


def _is_uuid(value: str) -> bool:
    return re.fullmatch(r"[0-9a-fA-F]{8}(-?[0-9a-fA-F]{4}){3}-?[0-9a-fA-F]{12}", value) is not None


def decoded(payload: bytes) -> Event:
    """The decoded event; fails the test with the reject when there is one."""
    event = decode(payload, DEFAULT_MAX_EVENT_BYTES)
    assert isinstance(event, Event), event
    return event


def extracted(*payloads: bytes) -> Extracted:
    """The records of the events, merged as one batch would be."""
    return merge(extract(decoded(p)) for p in payloads)


def edited(payload: bytes, change: Callable[[dict[str, Any]], object]) -> bytes:
    """A copy of an event with `change` applied to its parsed JSON (in place)."""
    doc = orjson.loads(payload)
    change(doc)
    return orjson.dumps(doc)
