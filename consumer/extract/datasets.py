"""Datasets of an event: names, Hive table symlinks, schemas, statistics, output types."""

import re
import uuid
from functools import lru_cache
from typing import Any

import orjson

from consumer.extract.facets import Json, count, items, key_part, obj, text
from consumer.records import (
    DatasetKey,
    DatasetRecord,
    Extracted,
    LocationRecord,
    SchemaRecord,
    SymlinkRecord,
)
from shared.enums import OutputType, SymlinkType
from shared.naming import (
    Namespace,
    normalize_dataset_name,
    parse_job_namespace,
    parse_namespace,
)
from shared.naming.families import FILE_FAMILIES

# Location types whose datasets are paths (storage), as opposed to tables or topics.
PATH_FAMILIES = FILE_FAMILIES
# Symlink identifier types that link a table and its storage (a missing type is TABLE).
LINKED = frozenset({"TABLE", "LOCATION"})

SCHEMA_NAMESPACE = uuid.UUID("6f1b3c4e-8a5d-4f2e-9b7a-2c1d0e9f8a7b")

LIFECYCLE = {
    "CREATE": OutputType.CREATE,
    "ALTER": OutputType.ALTER,
    "RENAME": OutputType.RENAME,
    "OVERWRITE": OutputType.OVERWRITE,
    "DROP": OutputType.DROP,
    "TRUNCATE": OutputType.TRUNCATE,
}
SQL_VERBS = {
    "CREATE": OutputType.CREATE,
    "ALTER": OutputType.ALTER,
    "DROP": OutputType.DROP,
    "TRUNCATE": OutputType.TRUNCATE,
    "INSERT": OutputType.APPEND,
    "MERGE": OutputType.APPEND,
    "UPDATE": OutputType.APPEND,
    "DELETE": OutputType.APPEND,
    "COPY": OutputType.APPEND,
}
_FIRST_WORD = re.compile(r"\s*(?:--[^\n]*\n\s*|/\*.*?\*/\s*)*([A-Za-z]+)(\s+[A-Za-z]+)?", re.S)


# Events name the same few locations and datasets over and over; parsing and checking a
# namespace and name, and building their frozen records, is the same work every time, so
# the records are memoised by the spelling (an event that fails a check raises each time:
# lru_cache keeps only results). Sharing one frozen record between events is safe.
_CACHE_SIZE = 4096


@lru_cache(maxsize=_CACHE_SIZE)
def dataset_location(namespace: str) -> LocationRecord:
    """The location a dataset namespace names, its addresses checked as index keys."""
    return _location(parse_namespace(namespace))


@lru_cache(maxsize=_CACHE_SIZE)
def job_location(namespace: str) -> LocationRecord:
    """The location a job namespace names, its addresses checked as index keys."""
    return _location(parse_job_namespace(namespace))


def _location(ns: Namespace) -> LocationRecord:
    for address in ns.addresses:
        key_part(address, "namespace")
    return LocationRecord(ns.location_type, ns.location_name, frozenset(ns.addresses))


def dataset_key(
    out: Extracted, namespace: str, name: str, file_format: str | None = None
) -> DatasetKey:
    """Record a dataset (and its location) by its OpenLineage namespace and name."""
    location, record, key = dataset_records(namespace, name, file_format)
    out.locations.append(location)
    out.datasets.append(record)
    return key


@lru_cache(maxsize=_CACHE_SIZE)
def dataset_records(
    namespace: str, name: str, file_format: str | None
) -> tuple[LocationRecord, DatasetRecord, DatasetKey]:
    location = dataset_location(namespace)
    normal = normalize_dataset_name(location.type, name)
    record = DatasetRecord(location.key, key_part(normal, "dataset name"), file_format)
    return location, record, record.key


# Longer is not a format name but a producer's free text; it is not stored.
MAX_FORMAT_LENGTH = 100


def dataset_format(dataset: Json) -> str | None:
    """The storage facet's file format (parquet, orc, ...), else its storage layer (iceberg,
    delta, ...), lower-cased; None when the event does not say."""
    storage = obj(dataset, "facets", "storage")
    for field in ("fileFormat", "storageLayer"):
        value = (text(storage, field) or "").strip().lower()
        if value and len(value) <= MAX_FORMAT_LENGTH:  # (decode rejects NUL characters)
            return value
    return None


def add_dataset(out: Extracted, dataset: Json) -> DatasetKey:
    """Record a dataset with its symlinks; return the key its lineage is stored under.

    A path with a TABLE symlink (Spark, Glue, Iceberg) is stored as the table, what
    users search for, linked to the path both ways: path -METASTORE-> table and
    table -WAREHOUSE-> path. A table with a LOCATION symlink (Hive) stays the table
    and gets the same pair. A TABLE symlink on a dataset that is not a path is not
    storage behind a table: Flink 2.x names Kafka topics by their catalog table that
    way (OpenLineage PR 3657), and other producers reach the topic by its own name,
    so it is ignored.
    """
    key = dataset_key(out, str(dataset["namespace"]), str(dataset["name"]), dataset_format(dataset))
    for ident in items(obj(dataset, "facets", "symlinks"), "identifiers"):
        kind = (text(ident, "type") or "TABLE").upper()
        if kind not in LINKED or (kind == "TABLE" and key[0] not in PATH_FAMILIES):
            continue
        other = _symlink_key(out, ident)
        if other is None or other == key:
            continue
        if kind == "LOCATION":
            _link(out, path=other, table=key)
            continue
        _link(out, path=key, table=other)
        return other
    return key


def _symlink_key(out: Extracted, ident: Json) -> DatasetKey | None:
    namespace, name = text(ident, "namespace"), text(ident, "name")
    return dataset_key(out, namespace, name) if namespace and name else None


def _link(out: Extracted, *, path: DatasetKey, table: DatasetKey) -> None:
    out.symlinks.append(SymlinkRecord(path, table, SymlinkType.METASTORE))
    out.symlinks.append(SymlinkRecord(table, path, SymlinkType.WAREHOUSE))


def schema_of(out: Extracted, dataset: Json) -> uuid.UUID | None:
    """Record the dataset's schema once per distinct field list; return its digest."""
    fields = items(obj(dataset, "facets", "schema"), "fields")
    if not fields:
        return None
    record = schema_record(fields)
    out.schemas.append(record)
    return record.digest


# Every event of a job repeats its datasets' field lists, and cleaning and hashing one costs
# more than the rest of the dataset. The key is the raw fields' JSON: facets come from
# orjson.loads (decode), whose values dump back to bytes that are equal exactly when the
# lists are (key order included), so a hit is the record those fields would give. Records
# are frozen and the writer only reads `fields`, so one record may serve many events.
class _SchemaMemo:
    """SchemaRecords by raw JSON, dropped all at once when the keys pass `budget` bytes."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.size = 0
        self.records: dict[bytes, SchemaRecord] = {}

    def get(self, fields: list[Json]) -> SchemaRecord:
        try:
            raw = orjson.dumps(fields)
        except orjson.JSONEncodeError:  # nested past orjson's 255 levels (loads takes 1024)
            return _schema(fields)
        record = self.records.get(raw)
        if record is None:
            record = _schema(fields)
            if self.size + len(raw) > self.budget:
                self.records.clear()  # a job's schemas come straight back after a clear
                self.size = 0
            self.records[raw] = record
            self.size += len(raw)
        return record


# Bounds the memo's memory (keys plus their cleaned fields, a few times the keys) on
# streams with many distinct schemas; typical field lists are a few hundred bytes.
_SCHEMAS = _SchemaMemo(budget=4 << 20)


def schema_record(fields: list[Json]) -> SchemaRecord:
    """The SchemaRecord of a dataset's field list (memoised by its JSON)."""
    return _SCHEMAS.get(fields)


def _schema(fields: list[Json]) -> SchemaRecord:
    clean = tuple(_field(f) for f in fields)
    canonical = orjson.dumps(clean, option=orjson.OPT_SORT_KEYS).decode()
    return SchemaRecord(uuid.uuid5(SCHEMA_NAMESPACE, canonical), clean)


def _field(field: Json) -> dict[str, Any]:
    clean: dict[str, Any] = {"name": text(field, "name") or "", "type": text(field, "type")}
    if description := text(field, "description"):
        clean["description"] = description
    if nested := items(field, "fields"):
        clean["fields"] = [_field(f) for f in nested]
    return clean


def input_stats(dataset: Json) -> tuple[int | None, int | None, int | None]:
    """(rows, bytes, files) from inputStatistics or the older dataQualityMetrics."""
    facets = obj(dataset, "inputFacets")
    stats = obj(facets, "inputStatistics") or obj(facets, "dataQualityMetrics")
    return (count(stats, "rowCount"), count(stats, "size", "bytes"), count(stats, "fileCount"))


def output_stats(dataset: Json) -> tuple[int | None, int | None, int | None]:
    stats = obj(dataset, "outputFacets", "outputStatistics")
    return (count(stats, "rowCount"), count(stats, "size", "bytes"), count(stats, "fileCount"))


def output_types(dataset: Json, sql: str | None) -> int:
    """Output kind from lifecycleStateChange, else the SQL statement verb, else APPEND."""
    change = text(obj(dataset, "facets", "lifecycleStateChange"), "lifecycleStateChange")
    if change and change.upper() in LIFECYCLE:
        return int(LIFECYCLE[change.upper()])
    return int(sql_output_type(sql) or OutputType.APPEND)


def sql_output_type(sql: str | None) -> OutputType | None:
    match = _FIRST_WORD.match(sql or "")
    if match is None:
        return None
    verb, second = match.group(1).upper(), (match.group(2) or "").strip().upper()
    if verb == "INSERT" and second == "OVERWRITE":
        return OutputType.OVERWRITE
    return SQL_VERBS.get(verb)
