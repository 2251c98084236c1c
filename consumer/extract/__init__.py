"""extract: one decoded event -> immutable records keyed by natural keys, per integration.

Each integration module documents what its events map to; anything else goes
down the generic path (a run of its job, one operation, its inputs and outputs).
"""

from collections.abc import Callable

from consumer.decode import Event, Kind
from consumer.extract.airflow import extract_airflow
from consumer.extract.datasets import add_dataset, schema_of
from consumer.extract.dbt import extract_dbt
from consumer.extract.debezium import extract_debezium
from consumer.extract.facets import obj, text
from consumer.extract.flink import extract_flink
from consumer.extract.hive import extract_hive
from consumer.extract.io import add_io
from consumer.extract.runs import Placement, add_job, generic
from consumer.extract.spark import extract_spark
from consumer.records import Extracted, JobDatasetRecord
from shared.enums import IODirection, JobType

Extractor = Callable[[Extracted, Event], Placement]

# Producer URL fragments for events without a jobType facet (older integrations).
PRODUCERS = (
    ("/integration/spark", "SPARK"),
    ("providers-openlineage", "AIRFLOW"),
    ("/integration/airflow", "AIRFLOW"),
    ("/integration/dbt", "DBT"),
    ("/integration/flink", "FLINK"),
    ("/integration/hive", "HIVE"),
    ("debezium", "DEBEZIUM"),
)

EXTRACTORS: dict[str, Extractor] = {
    "SPARK": extract_spark,
    "AIRFLOW": extract_airflow,
    "DBT": extract_dbt,
    "FLINK": extract_flink,
    "HIVE": extract_hive,
    "DEBEZIUM": extract_debezium,
}

# Job types of JobEvents (no run to map), by integration.
JOB_TYPES = {
    "SPARK": JobType.SPARK_APPLICATION,
    "FLINK": JobType.FLINK_JOB,
    "DBT": JobType.DBT_JOB,
    "HIVE": JobType.HIVE_QUERY,
    "DEBEZIUM": JobType.DEBEZIUM,
}


def integration(event: Event) -> str:
    """SPARK, AIRFLOW, DBT, ... from the jobType facet, else from the producer URL."""
    declared = text(obj(event.job_facets, "jobType"), "integration", limit=100)
    if declared:
        return declared.strip().upper()
    producer = event.producer.lower()
    return next((name for marker, name in PRODUCERS if marker in producer), "GENERIC")


def _generic(out: Extracted, event: Event) -> Placement:
    return generic(out, event, JobType.UNKNOWN)


def extract(event: Event) -> Extracted:
    """Everything the event says, as records; never raises on odd facets."""
    out = Extracted()
    if event.kind is Kind.RUN:
        placement = EXTRACTORS.get(integration(event), _generic)(out, event)
        add_io(out, event, placement)
    elif event.kind is Kind.DATASET and event.dataset is not None:
        add_dataset(out, event.dataset)
        schema_of(out, event.dataset)
    elif event.kind is Kind.JOB:
        _job_event(out, event)
    return out


def _job_event(out: Extracted, event: Event) -> None:
    """A JobEvent: the job and its declared inputs/outputs, with no run."""
    if not event.job_namespace or not event.job_name:
        return
    job_type = JOB_TYPES.get(integration(event), JobType.UNKNOWN)
    job = add_job(out, event.job_namespace, event.job_name, job_type, None)
    for direction, datasets in (
        (IODirection.INPUT, event.inputs),
        (IODirection.OUTPUT, event.outputs),
    ):
        for dataset in datasets:
            key = add_dataset(out, dataset)
            out.job_datasets.append(
                JobDatasetRecord(job, key, direction, event.event_time, event.event_time)
            )
