"""OpenLineage event builders for lineage tests: real payloads for the consumer pipeline."""

import random
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

import orjson

T0 = datetime(2024, 5, 1, 8, 0, tzinfo=UTC)
SPARK = "https://github.com/OpenLineage/OpenLineage/tree/1.22.0/integration/spark"
AIRFLOW = "https://github.com/apache/airflow/tree/providers-openlineage/1.12.0"
GENERIC = "https://example.com/threadline-tests/generic-producer"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent"

Json = dict[str, Any]
# target column -> [(namespace, name, field, DIRECT | INDIRECT | None)]; None is a spec 1-0
# facet without transformations (read as DIRECT).
Columns = dict[str, list[tuple[str, str, str, str | None]]]


def uuid7(at: datetime, seed: int) -> UUID:
    """A UUIDv7 carrying `at` (ms) with deterministic random bits from `seed`."""
    millis = int(at.timestamp() * 1000)
    rand = random.Random(seed).getrandbits(74)
    value = (
        (millis << 80) | (0x7 << 76) | ((rand >> 62) << 64) | (0b10 << 62) | (rand & (2**62 - 1))
    )
    return UUID(int=value)


def iso(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


def dataset(
    namespace: str,
    name: str,
    *,
    fields: list[str] | None = None,
    table: tuple[str, str] | None = None,
    stats: tuple[int, int, int] | None = None,
    output: bool = False,
    columns: Columns | None = None,
    lifecycle: str | None = None,
) -> Json:
    """A dataset of an event. `table`: Hive symlink (namespace, name); `stats`: rows,
    bytes, files; `columns`: column lineage of an output."""
    facets: Json = {}
    if fields:
        facets["schema"] = {"fields": [{"name": f, "type": "string"} for f in fields]}
    if table:
        ident = {"namespace": table[0], "name": table[1], "type": "TABLE"}
        facets["symlinks"] = {"identifiers": [ident]}
    if columns:
        facets["columnLineage"] = {"fields": _column_fields(columns)}
    if lifecycle:
        facets["lifecycleStateChange"] = {"lifecycleStateChange": lifecycle}
    doc: Json = {"namespace": namespace, "name": name, "facets": facets}
    if stats:
        rows, size, files = stats
        key = "outputFacets" if output else "inputFacets"
        facet = "outputStatistics" if output else "inputStatistics"
        doc[key] = {facet: {"rowCount": rows, "size": size, "fileCount": files}}
    return doc


def _source(namespace: str, name: str, field: str, kind: str | None) -> Json:
    source: Json = {"namespace": namespace, "name": name, "field": field}
    if kind:
        source["transformations"] = [{"type": kind, "subtype": "TRANSFORMATION"}]
    return source


def _column_fields(columns: Columns) -> Json:
    return {
        target: {
            "inputFields": [_source(*source) for source in sources],
        }
        for target, sources in columns.items()
    }


def run_event(
    event_type: str,
    at: datetime,
    run_id: UUID,
    job: tuple[str, str],
    *,
    producer: str = GENERIC,
    job_type: Json | None = None,
    parent: tuple[UUID, str, str] | None = None,
    inputs: list[Json] | None = None,
    outputs: list[Json] | None = None,
    run_facets: Json | None = None,
) -> bytes:
    """One RunEvent as the consumer reads it from Kafka."""
    facets: Json = dict(run_facets or {})
    if parent:
        parent_run, namespace, name = parent
        facets["parent"] = {
            "run": {"runId": str(parent_run)},
            "job": {"namespace": namespace, "name": name},
        }
    job_facets = {"jobType": job_type} if job_type else {}
    event = {
        "eventType": event_type,
        "eventTime": iso(at),
        "producer": producer,
        "schemaURL": SCHEMA_URL,
        "run": {"runId": str(run_id), "facets": facets},
        "job": {"namespace": job[0], "name": job[1], "facets": job_facets},
        "inputs": inputs or [],
        "outputs": outputs or [],
    }
    return orjson.dumps(event)


def spark_type(job_type: str) -> Json:
    return {"processingType": "BATCH", "integration": "SPARK", "jobType": job_type}


def airflow_type(job_type: str) -> Json:
    return {"processingType": "BATCH", "integration": "AIRFLOW", "jobType": job_type}


def minutes(n: float) -> timedelta:
    return timedelta(minutes=n)
