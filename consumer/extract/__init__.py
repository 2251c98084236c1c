"""extract: one decoded event -> immutable records keyed by natural keys, per integration."""

from collections.abc import Callable

from consumer.decode import Event, Kind
from consumer.extract.airflow import extract_airflow
from consumer.extract.datasets import add_dataset, schema_of
from consumer.extract.facets import obj, text
from consumer.extract.runs import Placement, add_io, add_job, generic
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

JOB_TYPES = {
    "FLINK": JobType.FLINK_JOB,
    "DBT": JobType.DBT_JOB,
    "HIVE": JobType.HIVE_QUERY,
    "DEBEZIUM": JobType.DEBEZIUM,
}


def integration(event: Event) -> str:
    """SPARK, AIRFLOW, DBT, ... from the jobType facet, else from the producer URL."""
    declared = text(obj(event.job_facets, "jobType"), "integration")
    if declared:
        return declared.upper()
    producer = event.producer.lower()
    return next((name for marker, name in PRODUCERS if marker in producer), "GENERIC")


def _generic_for(name: str) -> Extractor:
    job_type = JOB_TYPES.get(name, JobType.UNKNOWN)
    return lambda out, event: generic(out, event, job_type)


EXTRACTORS: dict[str, Extractor] = {"SPARK": extract_spark, "AIRFLOW": extract_airflow}


def extract(event: Event) -> Extracted:
    """Everything the event says, as records; never raises on odd facets."""
    out = Extracted()
    if event.kind is Kind.RUN:
        name = integration(event)
        placement = EXTRACTORS.get(name, _generic_for(name))(out, event)
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
    name = integration(event)
    job = add_job(
        out,
        event.job_namespace,
        event.job_name,
        JOB_TYPES.get(name, JobType.UNKNOWN),
        None,
        event.event_time,
    )
    for direction, datasets in (
        (IODirection.INPUT, event.inputs),
        (IODirection.OUTPUT, event.outputs),
    ):
        for dataset in datasets:
            key = add_dataset(out, dataset)
            out.job_datasets.append(
                JobDatasetRecord(job, key, direction, event.event_time, event.event_time)
            )
