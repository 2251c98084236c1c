"""The native fast paths of decode + extract and of merge (`threadline_native`, Rust, in
`native/`).

`native_extractor()` returns a function payload -> Extracted | None. It gives exactly the
records `extract(decode(payload))` gives, or None when the event is outside what it reads
(not a RunEvent, a dbt/Flink/Hive/Debezium event, a reject, an unusual spelling): the
caller then runs the Python path, which stays the definition of every rule.
`tests/unit/test_native_parity.py` holds the two to that on the benchmark streams, the
real-event corpus and mutations of it.

Why: decode + extract in Python cost ~75-90 CPU-us per benchmark event, most of the
consumer's budget (benchmarks/README.md, "What limits ingest on this machine"). The
native walk builds the same record objects; naming, schema digests and SQL verbs are
the Python functions themselves, called once per distinct name (memoised on both sides).

`native_merger()` returns `consumer.merge.merge` with its combining rules in Rust: the keys
are merge.RULES's own, kept in a Python dict and sorted by Python, so only the rules moved
(merge was the consumer's largest stage once decode and extract were native).
`native_rekeyer()` returns `consumer.rekey.rekey` the same way (the writer re-keys a batch
whose location keys turned out to be one location: every batch of an aliased cluster).
"""

import logging
import uuid
from collections.abc import Callable
from datetime import UTC
from typing import TYPE_CHECKING

from consumer.decode import parse_time
from consumer.extract import EXTRACTORS, PRODUCERS, airflow, columns, datasets, spark
from consumer.merge import OPERATION_FIELDS, RULES, RUN_FIELDS
from consumer.records import (
    ColumnLineageRecord,
    DatasetRecord,
    Extracted,
    IORecord,
    JobDatasetRecord,
    JobRecord,
    LocationKey,
    LocationRecord,
    OperationRecord,
    RunRecord,
    SymlinkRecord,
)
from shared.enums import IODirection, JobType, SymlinkType

if TYPE_CHECKING:
    from threadline_native import Merger

log = logging.getLogger("threadline.consumer")

# The record classes both native classes build records of, by name (each takes those it uses).
RECORD_CLASSES = {
    cls.__name__: cls
    for cls in (
        Extracted,
        LocationRecord,
        DatasetRecord,
        SymlinkRecord,
        JobRecord,
        RunRecord,
        OperationRecord,
        IORecord,
        ColumnLineageRecord,
        JobDatasetRecord,
    )
}

NativeExtract = Callable[[bytes, int], Extracted | None]
NativeMerge = Callable[[list[Extracted]], Extracted]
NativeRekey = Callable[[Extracted, dict[LocationKey, LocationKey]], Extracted]


def native_extractor() -> NativeExtract | None:
    """The native extractor's `extract`, or None if the module is not built (the consumer's
    setting THREADLINE__CONSUMER__NATIVE_EXTRACT=false leaves it unused)."""
    try:
        # Imported here: optional, the Python path works without it.
        import threadline_native
    except ImportError:
        log.warning("threadline_native is not installed: decode + extract run in Python only")
        return None
    config = {
        **RECORD_CLASSES,
        "UUID": uuid.UUID,
        "safe_unknown": uuid.SafeUUID.unknown,
        "utc": UTC,
        "job_types": {t.value: t for t in JobType},
        "directions": (IODirection.INPUT, IODirection.OUTPUT),
        "metastore": SymlinkType.METASTORE,
        "warehouse": SymlinkType.WAREHOUSE,
        "path_families": datasets.PATH_FAMILIES,
        # The extractors' own tables, so that they have one definition.
        "producers": list(PRODUCERS),
        "integrations": set(EXTRACTORS),
        "spark_operation_types": spark.OPERATION_TYPES,
        "anonymous_owners": airflow.ANONYMOUS_OWNERS,
        "lifecycle": {name: int(bits) for name, bits in datasets.LIFECYCLE.items()},
        "dataset": datasets.dataset_records,
        "job_location": datasets.job_location,
        "schema": datasets.schema_record,
        "sql_output_type": datasets.sql_output_type,
        "column_set_id": columns.column_set_id,
        # eventTimes in any other spelling than Z / +00:00 with 0-6 fraction digits.
        "parse_time": parse_time,
    }
    try:
        extract: NativeExtract = threadline_native.Extractor(config).extract
    except Exception:  # a module built from other sources than these: run without it
        log.exception("threadline_native does not fit this consumer: decode + extract in Python")
        return None
    return extract


def native_merger() -> NativeMerge | None:
    """`consumer.merge.merge` with its combining rules in Rust (the same records, kept and
    sorted by the same Python keys), or None if the module is not built."""
    merger = _merger()
    return None if merger is None else merger.merge


def native_rekeyer() -> NativeRekey | None:
    """`consumer.rekey.rekey` in Rust (the same records, re-merged by the native merge's
    rules), or None if the module is not built."""
    merger = _merger()
    return None if merger is None else merger.rekey


def _merger() -> "Merger | None":
    try:
        # Imported here: optional, the Python path works without it.
        import threadline_native
    except ImportError:
        return None
    config = {
        **RECORD_CLASSES,
        # merge.RULES's own key functions, in its order: the same keys, grouped and sorted alike.
        "keys": [key for key, _ in RULES.values()],
        "run_fields": list(RUN_FIELDS),
        "operation_fields": list(OPERATION_FIELDS),
    }
    try:
        return threadline_native.Merger(config)
    except Exception:  # field orders that changed in Python and not in native/src/merge.rs
        log.exception("threadline_native does not fit this consumer: merging in Python")
        return None
