"""OpenLineage event builders: real payloads the tests run through the consumer pipeline.

Each builder returns encoded events (bytes, as read from Kafka) shaped like what the real
integrations send: the Spark listener (application run + SQL-job child runs with a parent
facet), the Airflow provider (DAG run -> task run, `airflow`/`airflowDagRun` facets, and a
Spark application launched by a task), Hive tables over warehouse paths (symlinks facet),
input/output statistics, schema and columnLineage facets.
"""

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

import orjson

Json = dict[str, Any]
T0 = datetime(2024, 6, 3, 6, 0, tzinfo=UTC)
SPARK = "https://github.com/OpenLineage/OpenLineage/tree/1.22.0/integration/spark"
AIRFLOW = "https://github.com/apache/airflow/tree/providers-openlineage/1.14.0"
GENERIC = "https://example.com/threadline-tests/generic-producer"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
JOB_EVENT_SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent"

# (namespace, name, field, DIRECT | INDIRECT) of one source column.
ColumnSource = tuple[str, str, str, str]


def uuid7(at: datetime, seed: int) -> UUID:
    """A UUIDv7 carrying `at` (milliseconds) with deterministic random bits from `seed`."""
    millis = int(at.timestamp() * 1000)
    rand = random.Random(seed).getrandbits(74)
    high = (millis << 80) | (0x7 << 76) | ((rand >> 62) << 64)
    return UUID(int=high | (0b10 << 62) | (rand & (2**62 - 1)))


def iso(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


def hours(n: float) -> timedelta:
    return timedelta(hours=n)


def schema_facet(fields: Sequence[str | tuple[str, str]]) -> Json:
    """`name` (type string) or `(name, type)` per field."""
    pairs = [(f, "string") if isinstance(f, str) else f for f in fields]
    return {"fields": [{"name": name, "type": kind} for name, kind in pairs]}


def column_lineage_facet(
    columns: Mapping[str, Sequence[ColumnSource]], *, transformations: bool = True
) -> Json:
    """Target column -> its source columns, with the spec 1-2 transformation type (or, with
    `transformations=False`, in the spec 1-0 shape, which readers count as DIRECT)."""
    return {
        "fields": {
            target: {
                "inputFields": [
                    {
                        "namespace": namespace,
                        "name": name,
                        "field": source_field,
                        **(
                            {"transformations": [{"type": kind, "subtype": "IDENTITY"}]}
                            if transformations
                            else {}
                        ),
                    }
                    for namespace, name, source_field, kind in sources
                ]
            }
            for target, sources in columns.items()
        }
    }


def dataset(
    namespace: str,
    name: str,
    *,
    fields: Sequence[str | tuple[str, str]] | None = None,
    table: tuple[str, str] | None = None,
    stats: tuple[int, int, int] | None = None,
    output: bool = False,
    columns: Mapping[str, Sequence[ColumnSource]] | None = None,
    lifecycle: str | None = None,
    transformations: bool = True,
    file_format: str | None = None,
) -> Json:
    """A dataset of an event. `table`: the Hive table (namespace, name) over this path;
    `stats`: (rows, bytes, files) as input or output statistics; `file_format`: the
    storage facet's."""
    facets: Json = {}
    if file_format:
        facets["storage"] = {"storageLayer": "hive", "fileFormat": file_format}
    if fields:
        facets["schema"] = schema_facet(fields)
    if table:
        identifier = {"namespace": table[0], "name": table[1], "type": "TABLE"}
        facets["symlinks"] = {"identifiers": [identifier]}
    if columns:
        facets["columnLineage"] = column_lineage_facet(columns, transformations=transformations)
    if lifecycle:
        facets["lifecycleStateChange"] = {"lifecycleStateChange": lifecycle}
    doc: Json = {"namespace": namespace, "name": name, "facets": facets}
    if stats:
        rows, size, files = stats
        key, facet = (
            ("outputFacets", "outputStatistics")
            if output
            else (
                "inputFacets",
                "inputStatistics",
            )
        )
        doc[key] = {facet: {"rowCount": rows, "size": size, "fileCount": files}}
    return doc


def run_event(
    event_type: str,
    at: datetime,
    run_id: UUID,
    job: tuple[str, str],
    *,
    producer: str = GENERIC,
    job_type: Json | None = None,
    parent: tuple[UUID, str, str] | None = None,
    inputs: Sequence[Json] = (),
    outputs: Sequence[Json] = (),
    run_facets: Json | None = None,
    job_facets: Json | None = None,
) -> bytes:
    """One RunEvent; `parent` = (parent run id, parent job namespace, parent job name)."""
    facets: Json = dict(run_facets or {})
    if parent:
        parent_run, namespace, name = parent
        facets["parent"] = {
            "run": {"runId": str(parent_run)},
            "job": {"namespace": namespace, "name": name},
        }
    jfacets: Json = dict(job_facets or {})
    if job_type:
        jfacets["jobType"] = job_type
    event = {
        "eventType": event_type,
        "eventTime": iso(at),
        "producer": producer,
        "schemaURL": SCHEMA_URL,
        "run": {"runId": str(run_id), "facets": facets},
        "job": {"namespace": job[0], "name": job[1], "facets": jfacets},
        "inputs": list(inputs),
        "outputs": list(outputs),
    }
    return orjson.dumps(event)


def job_event(
    at: datetime, job: tuple[str, str], *, inputs: Sequence[Json], outputs: Sequence[Json]
) -> bytes:
    """A JobEvent: declared lineage of a job, without a run."""
    event = {
        "eventTime": iso(at),
        "producer": GENERIC,
        "schemaURL": JOB_EVENT_SCHEMA_URL,
        "job": {"namespace": job[0], "name": job[1], "facets": {}},
        "inputs": list(inputs),
        "outputs": list(outputs),
    }
    return orjson.dumps(event)


def _job_type(integration: str, job_type: str) -> Json:
    return {"processingType": "BATCH", "integration": integration, "jobType": job_type}


@dataclass(frozen=True, slots=True)
class SqlJob:
    """One Spark SQL execution: a child run of the application (an operation for us)."""

    run_id: UUID
    name: str
    start: datetime
    end: datetime
    job_id: int
    inputs: Sequence[Json] = ()
    outputs: Sequence[Json] = ()
    final: str = "COMPLETE"
    sql: str | None = None


@dataclass(frozen=True, slots=True)
class SparkApp:
    namespace: str
    name: str
    run_id: UUID
    start: datetime
    end: datetime
    app_id: str
    user: str = "spark"
    sql_jobs: Sequence[SqlJob] = field(default_factory=tuple)
    parent: tuple[UUID, str, str] | None = None  # e.g. the Airflow task run that launched it
    final: str = "COMPLETE"


def _app_facets(app: SparkApp) -> Json:
    return {
        "spark_applicationDetails": {
            "master": "yarn",
            "appName": app.name,
            "applicationId": app.app_id,
            "userName": app.user,
            "uiWebUrl": f"http://driver.example:4040/{app.app_id}",
            "historyUrl": f"http://history.example:18080/history/{app.app_id}",
        }
    }


def _sql_job_events(app: SparkApp, job: SqlJob) -> list[bytes]:
    parent = (app.run_id, app.namespace, app.name)
    common: Json = {
        "producer": SPARK,
        "job_type": _job_type("SPARK", "SQL_JOB"),
        "parent": parent,
        "run_facets": {"spark_jobDetails": {"jobId": job.job_id, "jobDescription": job.name}},
        "job_facets": {"sql": {"query": job.sql}} if job.sql else None,
    }
    name = (app.namespace, f"{app.name}.{job.name}")
    return [
        run_event("START", job.start, job.run_id, name, inputs=job.inputs, **common),
        run_event(
            job.final, job.end, job.run_id, name, inputs=job.inputs, outputs=job.outputs, **common
        ),
    ]


def spark_application(app: SparkApp) -> list[bytes]:
    """Application START, each SQL job's START/COMPLETE (parent facet -> app), app end."""
    common: Json = {
        "producer": SPARK,
        "job_type": _job_type("SPARK", "APPLICATION"),
        "parent": app.parent,
        "run_facets": _app_facets(app),
    }
    job = (app.namespace, app.name)
    events = [run_event("START", app.start, app.run_id, job, **common)]
    for sql_job in app.sql_jobs:
        events += _sql_job_events(app, sql_job)
    events.append(run_event(app.final, app.end, app.run_id, job, **common))
    return events


@dataclass(frozen=True, slots=True)
class DagRun:
    namespace: str
    dag_id: str
    run_id: UUID
    start: datetime
    end: datetime
    dag_run_id: str
    owner: str = "data-team"
    final: str = "COMPLETE"


def _dag_facets(dag: DagRun) -> Json:
    return {
        "dag": {"dag_id": dag.dag_id, "owner": dag.owner},
        "dagRun": {"dag_id": dag.dag_id, "run_id": dag.dag_run_id, "run_type": "scheduled"},
    }


def airflow_dag_run(dag: DagRun) -> list[bytes]:
    """The DAG run's own START and end events (airflowDagRun facet)."""
    common: Json = {
        "producer": AIRFLOW,
        "job_type": _job_type("AIRFLOW", "DAG"),
        "run_facets": {"airflowDagRun": _dag_facets(dag)},
    }
    job = (dag.namespace, dag.dag_id)
    return [
        run_event("START", dag.start, dag.run_id, job, **common),
        run_event(dag.final, dag.end, dag.run_id, job, **common),
    ]


@dataclass(frozen=True, slots=True)
class TaskRun:
    dag: DagRun
    task_id: str
    run_id: UUID
    start: datetime
    end: datetime
    try_number: int = 1
    final: str = "COMPLETE"
    error: str | None = None
    inputs: Sequence[Json] = ()
    outputs: Sequence[Json] = ()

    @property
    def job_name(self) -> str:
        return f"{self.dag.dag_id}.{self.task_id}"

    @property
    def parent_of_children(self) -> tuple[UUID, str, str]:
        """The parent facet a Spark application launched by this task carries."""
        return (self.run_id, self.dag.namespace, self.job_name)


def _task_facets(task: TaskRun, *, ending: bool) -> Json:
    log_url = f"http://airflow.example/log?dag_id={task.dag.dag_id}&task_id={task.task_id}"
    facets: Json = {
        "airflow": {
            **_dag_facets(task.dag),
            "task": {"task_id": task.task_id, "owner": task.dag.owner},
            "taskInstance": {"try_number": task.try_number, "log_url": log_url},
        }
    }
    if ending and task.error:
        facets["errorMessage"] = {"message": task.error, "programmingLanguage": "python"}
    return facets


def airflow_task_run(task: TaskRun) -> list[bytes]:
    """A task instance's START and end events, parent facet -> its DAG run."""
    common: Json = {
        "producer": AIRFLOW,
        "job_type": _job_type("AIRFLOW", "TASK"),
        "parent": (task.dag.run_id, task.dag.namespace, task.dag.dag_id),
        "inputs": task.inputs,
    }
    job = (task.dag.namespace, task.job_name)
    start_facets = _task_facets(task, ending=False)
    end_facets = _task_facets(task, ending=True)
    return [
        run_event("START", task.start, task.run_id, job, run_facets=start_facets, **common),
        run_event(
            task.final,
            task.end,
            task.run_id,
            job,
            run_facets=end_facets,
            outputs=task.outputs,
            **common,
        ),
    ]


def airflow_spark_chain(dag: DagRun, task: TaskRun, app: SparkApp) -> list[bytes]:
    """DAG run -> task run -> Spark application (with its SQL jobs), in arrival order."""
    assert task.dag == dag
    assert app.parent == task.parent_of_children
    dag_start, dag_end = airflow_dag_run(dag)
    task_start, task_end = airflow_task_run(task)
    return [dag_start, task_start, *spark_application(app), task_end, dag_end]
