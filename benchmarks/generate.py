"""A seeded, realistic OpenLineage stream: Airflow DAG -> task -> Spark app -> SQL jobs.

    python -m benchmarks.generate --events 20000 --seed 1 --out benchmarks/data/events-20k.ndjson

Writes one JSON object per line, ``{"key": <Kafka key>, "value": <OpenLineage event>}``, plus
``<out>.meta.json`` with the totals the ingest harness waits for. The same seed and event
count always give byte-identical output.

The world (fixed by the seed): 50 Airflow DAGs scheduled daily, 4 tasks each, every task
launching one Spark application that runs 3 SQL jobs. Each SQL job writes one Hive table
(stored on HDFS, linked by a TABLE symlink) or a PostgreSQL table, and reads 1-3 datasets of
the layer below, so lineage chains are 6 layers deep (raw HDFS paths and PostgreSQL tables at
layer 0). Events per run: START, sometimes RUNNING, then COMPLETE, or FAIL (about 0.5% of SQL
jobs; the application, task and DAG run then fail too and the DAG's later tasks never run).
Run ids are UUIDv7 carrying the run's start time (``--run-ids v4``: the same stream with each
id replaced by a random-looking UUIDv4 derived from it, as producers without UUIDv7 send them,
so the consumer dates runs by eventTime instead of by id; ``--run-ids v7-fresh``: by another
UUIDv7 of the same time, new to a database seeded from the plain stream). Kafka keys are
those of the OpenLineage clients' Kafka transport: ``run:<root job namespace>/<root job
name>`` (so every event of one DAG run lands on one partition, in order).

Location aliases, as producers really send them: the HDFS namenode pair of an HA cluster
(nn1/nn2, one location once declared as aliases), the Hive metastore with and without its
default port, PostgreSQL as ``postgres://`` and ``postgresql://`` with an upper-case host,
and partition directories (``.../dt=2026-01-05``) that belong to their table.
"""

import argparse
import hashlib
import heapq
import random
import sys
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from uuid import UUID

import orjson

Json = dict[str, Any]

T0 = datetime(2026, 1, 5, tzinfo=UTC)
DAGS = 50
TASKS_PER_DAG = 4
SQL_JOBS_PER_APP = 3
LAYERS = 6  # 0 = raw sources, 1..5 = Hive tables
FAIL_RATE = 0.005
RUNNING_RATE = 0.3

AIRFLOW_NS = "http://airflow-prod.corp:8080"
SPARK_NS = "spark-prod"
HDFS_NS = "hdfs://nn1.cluster-a.corp:8020"
HDFS_STANDBY_NS = "hdfs://nn2.cluster-a.corp:8020"  # the HA pair's other namenode
HIVE_NS = "hive://metastore.cluster-a.corp:9083"
HIVE_NO_PORT_NS = "hive://metastore.cluster-a.corp"  # same metastore, default port omitted
PG_NS = "postgres://pg-prod.corp:5432"
PG_ALIAS_NS = "postgresql://PG-PROD.corp:5432"  # scheme alias + upper-case host
ALIAS_GROUPS = [[HDFS_NS, HDFS_STANDBY_NS], [HIVE_NS, HIVE_NO_PORT_NS]]

SPARK_PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.22.0/integration/spark"
AIRFLOW_PRODUCER = "https://github.com/apache/airflow/tree/providers-openlineage/1.14.0"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
FACET_URL = "https://openlineage.io/spec/facets/1-0-1/{}.json#/$defs/{}"
TYPES = ("string", "bigint", "int", "double", "decimal(18,2)", "timestamp", "date", "boolean")
WORDS = [
    "customer",
    "order",
    "item",
    "product",
    "price",
    "amount",
    "region",
    "store",
    "account",
    "balance",
    "event",
    "session",
    "country",
    "city",
    "channel",
    "campaign",
    "device",
    "status",
    "currency",
    "payment",
    "invoice",
    "shipment",
    "warehouse",
    "supplier",
    "category",
    "discount",
    "margin",
    "revenue",
    "cost",
    "quantity",
    "user",
    "click",
]


def uuid7(at: datetime, rng: random.Random) -> UUID:
    """A UUIDv7 carrying `at` (milliseconds) with random bits from the seeded `rng`."""
    millis = int(at.timestamp() * 1000)
    rand = rng.getrandbits(74)
    high = (millis << 80) | (0x7 << 76) | ((rand >> 62) << 64)
    return UUID(int=high | (0b10 << 62) | (rand & (2**62 - 1)))


def _digest(value: UUID, salt: bytes) -> bytes:
    return hashlib.blake2b(value.bytes + salt, digest_size=16).digest()


def as_v4(value: UUID) -> UUID:
    """A UUIDv4 derived from `value` (the same id always maps to the same v4)."""
    digest = bytearray(_digest(value, b"v4"))
    digest[6] = (digest[6] & 0x0F) | 0x40  # version 4
    digest[8] = (digest[8] & 0x3F) | 0x80  # RFC 4122 variant
    return UUID(bytes=bytes(digest))


def as_fresh_v7(value: UUID) -> UUID:
    """A UUIDv7 of the same millisecond as `value` with other random bits, derived from it."""
    rand = int.from_bytes(_digest(value, b"v7"), "big") & (2**74 - 1)
    millis = value.int >> 80
    high = (millis << 80) | (0x7 << 76) | ((rand >> 62) << 64)
    return UUID(int=high | (0b10 << 62) | (rand & (2**62 - 1)))


def _same(value: UUID) -> UUID:
    return value


# "v7": the stream's own ids; "v4": each replaced by a UUIDv4 derived from it;
# "v7-fresh": by another UUIDv7 of the same time (the same stream with ids that a
# database seeded from the plain stream does not hold yet).
RUN_ID_KINDS: dict[str, Callable[[UUID], UUID]] = {
    "v7": _same,
    "v4": as_v4,
    "v7-fresh": as_fresh_v7,
}


def iso(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"


def facet(producer: str, name: str, body: Json) -> Json:
    """A facet with the `_producer`/`_schemaURL` fields every real integration sends."""
    return {"_producer": producer, "_schemaURL": FACET_URL.format(name, name), **body}


# -- the world -------------------------------------------------------------------------


@dataclass(slots=True)
class Dataset:
    layer: int
    kind: str  # "hive", "hdfs" (raw, partitioned) or "postgres"
    name: str  # hive: db.table; hdfs: /raw/...; postgres: db.schema.table
    fields: list[tuple[str, str]]

    def reference(self, rng: random.Random, day: datetime) -> tuple[str, str, Json | None]:
        """(namespace, name, symlinks facet) as a producer would spell it this time."""
        if self.kind == "postgres":
            return (PG_ALIAS_NS if rng.random() < 0.2 else PG_NS), self.name, None
        if self.kind == "hdfs":
            ns = HDFS_STANDBY_NS if rng.random() < 0.1 else HDFS_NS
            return ns, f"{self.name}/dt={day:%Y-%m-%d}", None
        db, table = self.name.split(".")
        ns = HDFS_STANDBY_NS if rng.random() < 0.1 else HDFS_NS
        hive = HIVE_NO_PORT_NS if rng.random() < 0.1 else HIVE_NS
        ident = {"namespace": hive, "name": self.name, "type": "TABLE"}
        symlinks = facet(SPARK_PRODUCER, "SymlinksDatasetFacet", {"identifiers": [ident]})
        return ns, f"/warehouse/{db}.db/{table}", symlinks


@dataclass(slots=True)
class SqlJob:
    name: str
    inputs: list[Dataset]
    output: Dataset
    columns: dict[str, list[tuple[Dataset, str]]]  # output column -> source columns


@dataclass(slots=True)
class Task:
    task_id: str
    app_name: str
    sql_jobs: list[SqlJob]


@dataclass(slots=True)
class Dag:
    dag_id: str
    owner: str
    hour: float
    tasks: list[Task]


def _fields(rng: random.Random) -> list[tuple[str, str]]:
    names = rng.sample(WORDS, rng.randint(4, 9))
    return [(f"{n}_{i}" if i else n, rng.choice(TYPES)) for i, n in enumerate(names)]


def _raw_sources(rng: random.Random) -> list[Dataset]:
    raw = [
        Dataset(0, "postgres", f"crm.public.{rng.choice(WORDS)}_{i}", _fields(rng))
        for i in range(40)
    ]
    raw += [
        Dataset(0, "hdfs", f"/data/raw/{rng.choice(WORDS)}_events_{i}", _fields(rng))
        for i in range(40)
    ]
    return raw


def _sql_job(rng: random.Random, by_layer: list[list[Dataset]], app: str, n: int) -> SqlJob:
    layer = rng.choice([n for n in range(1, LAYERS) if by_layer[n - 1]])
    kind = "postgres" if layer == LAYERS - 1 and rng.random() < 0.3 else "hive"
    table = f"{rng.choice(WORDS)}_{rng.choice(WORDS)}_{n}"
    name = f"reporting.public.{table}" if kind == "postgres" else f"l{layer}_db.{table}"
    output = Dataset(layer, kind, name, _fields(rng))
    pool = by_layer[layer - 1]
    inputs = rng.sample(pool, min(len(pool), rng.choice((1, 1, 2, 2, 3))))
    if layer > 1 and rng.random() < 0.2:
        extra = rng.choice(by_layer[rng.randint(0, layer - 2)])
        if extra not in inputs:
            inputs.append(extra)
    columns = {
        col: [(src, rng.choice(src.fields)[0]) for src in rng.sample(inputs, 1)]
        for col, _ in output.fields
    }
    by_layer[layer].append(output)
    verb = "overwrite" if rng.random() < 0.5 else "insert_into"
    return SqlJob(f"{app}.execute_{verb}_{table}", inputs, output, columns)


def build_world(seed: int) -> list[Dag]:
    """The DAGs, tasks, applications and SQL jobs of the seed; every layer gets its writers."""
    rng = random.Random(seed)
    by_layer: list[list[Dataset]] = [_raw_sources(rng)] + [[] for _ in range(LAYERS - 1)]
    # Fill layer 1 first so every later layer has something to read.
    for _ in range(20):
        by_layer[1].append(Dataset(1, "hive", f"l1_db.seed_{len(by_layer[1])}", _fields(rng)))
    dags = []
    n = 0
    for d in range(DAGS):
        tasks = []
        for t in range(TASKS_PER_DAG):
            app = f"dag_{d:02d}_task_{t}_app"
            jobs = []
            for _ in range(SQL_JOBS_PER_APP):
                jobs.append(_sql_job(rng, by_layer, app, n))
                n += 1
            tasks.append(Task(f"spark_task_{t}", app, jobs))
        owner = rng.choice(["data-eng", "analytics", "finance-dwh", "ml-platform"])
        dags.append(Dag(f"dag_{d:02d}_{rng.choice(WORDS)}", owner, rng.uniform(0, 20), tasks))
    return dags


# -- events ----------------------------------------------------------------------------


@dataclass(slots=True)
class Totals:
    """What one stream holds; the ingest harness derives each system's row counts from it."""

    events: int = 0
    bytes: int = 0
    dag_runs: int = 0
    task_runs: int = 0
    app_runs: int = 0
    sql_jobs: int = 0
    sql_inputs: int = 0
    sql_outputs: int = 0
    failed_sql_jobs: int = 0
    first_event_time: str = ""
    last_event_time: str = ""
    by_type: dict[str, int] = field(default_factory=dict)


def _job_type(integration: str, job_type: str) -> Json:
    body = {"processingType": "BATCH", "integration": integration, "jobType": job_type}
    return facet(
        SPARK_PRODUCER if integration == "SPARK" else AIRFLOW_PRODUCER, "JobTypeJobFacet", body
    )


def _parent(run_id: UUID, ns: str, name: str, root: tuple[UUID, str, str] | None) -> Json:
    body: Json = {"run": {"runId": str(run_id)}, "job": {"namespace": ns, "name": name}}
    if root is not None:
        body["root"] = {
            "run": {"runId": str(root[0])},
            "job": {"namespace": root[1], "name": root[2]},
        }
    return facet(SPARK_PRODUCER, "ParentRunFacet", body)


class Stream:
    """Builds the events of DAG runs; each event is (time, seq, key, event)."""

    def __init__(self, seed: int, run_ids: str = "v7") -> None:
        self.rng = random.Random(seed * 7919 + 17)
        self.run_ids = run_ids
        self.world = build_world(seed)
        self.totals = Totals()
        self.seq = 0

    def _run_id(self, at: datetime) -> UUID:
        # Derived from the v7 id, so the rest of the stream is the same whatever the ids are.
        run_id = uuid7(at, self.rng)
        return RUN_ID_KINDS[self.run_ids](run_id)

    def _event(self, out: list[Any], at: datetime, key: str, event: Json) -> None:
        self.seq += 1
        out.append((at, self.seq, key, event))

    def _run_event(
        self, kind: str, at: datetime, run_id: UUID, job: tuple[str, str], **parts: Any
    ) -> Json:
        job_facets = {"jobType": parts.pop("job_type")}
        job_facets.update(parts.pop("job_facets", {}))
        return {
            "eventType": kind,
            "eventTime": iso(at),
            "producer": parts.pop("producer"),
            "schemaURL": SCHEMA_URL,
            "run": {"runId": str(run_id), "facets": parts.pop("run_facets", {})},
            "job": {"namespace": job[0], "name": job[1], "facets": job_facets},
            "inputs": parts.pop("inputs", []),
            "outputs": parts.pop("outputs", []),
        }

    def dag_run(self, dag: Dag, day: datetime) -> list[Any]:
        """Every event of one run of `dag` on `day`, in emission order with their times."""
        rng = self.rng
        out: list[Any] = []
        start = day + timedelta(hours=dag.hour, seconds=rng.uniform(0, 60))
        run_id = self._run_id(start)
        key = f"run:{AIRFLOW_NS}/{dag.dag_id}"
        root = (run_id, AIRFLOW_NS, dag.dag_id)
        dag_run_id = f"scheduled__{day:%Y-%m-%dT%H:%M:%S}+00:00"
        dag_facet = {"dag_id": dag.dag_id, "owner": dag.owner, "tags": ["daily", dag.owner]}
        dag_run_facet = {
            "dag_id": dag.dag_id,
            "run_id": dag_run_id,
            "run_type": "scheduled",
            "data_interval_start": iso(day - timedelta(days=1)),
            "data_interval_end": iso(day),
        }
        airflow_dag = facet(
            AIRFLOW_PRODUCER, "AirflowDagRunFacet", {"dag": dag_facet, "dagRun": dag_run_facet}
        )
        common = {"producer": AIRFLOW_PRODUCER, "job_type": _job_type("AIRFLOW", "DAG")}
        self._event(
            out,
            start,
            key,
            self._run_event(
                "START",
                start,
                run_id,
                (AIRFLOW_NS, dag.dag_id),
                run_facets={"airflowDagRun": airflow_dag},
                **common,
            ),
        )
        self.totals.dag_runs += 1
        at, ok = start + timedelta(seconds=rng.uniform(2, 10)), True
        for task in dag.tasks:
            at, ok = self._task(out, key, root, dag, dag_facet, dag_run_facet, task, at, day)
            if not ok:
                break
        at += timedelta(seconds=rng.uniform(1, 5))
        final = "COMPLETE" if ok else "FAIL"
        self._event(
            out,
            at,
            key,
            self._run_event(
                final,
                at,
                run_id,
                (AIRFLOW_NS, dag.dag_id),
                run_facets={"airflowDagRun": airflow_dag},
                **common,
            ),
        )
        return out

    def _task(
        self,
        out: list[Any],
        key: str,
        root: tuple[UUID, str, str],
        dag: Dag,
        dag_facet: Json,
        dag_run_facet: Json,
        task: Task,
        at: datetime,
        day: datetime,
    ) -> tuple[datetime, bool]:
        rng = self.rng
        run_id = self._run_id(at)
        job = (AIRFLOW_NS, f"{dag.dag_id}.{task.task_id}")
        log_url = (
            f"{AIRFLOW_NS}/log?dag_id={dag.dag_id}&task_id={task.task_id}"
            f"&execution_date={day:%Y-%m-%dT%H:%M:%S}%2B00%3A00"
        )
        airflow = facet(
            AIRFLOW_PRODUCER,
            "AirflowRunFacet",
            {
                "dag": dag_facet,
                "dagRun": dag_run_facet,
                "task": {
                    "task_id": task.task_id,
                    "operator_class": "SparkSubmitOperator",
                    "owner": dag.owner,
                },
                "taskInstance": {"try_number": 1, "map_index": -1, "log_url": log_url},
            },
        )
        parent = _parent(root[0], root[1], root[2], None)
        common = {"producer": AIRFLOW_PRODUCER, "job_type": _job_type("AIRFLOW", "TASK")}
        self._event(
            out,
            at,
            key,
            self._run_event(
                "START",
                at,
                run_id,
                job,
                run_facets={"parent": parent, "airflow": airflow},
                **common,
            ),
        )
        self.totals.task_runs += 1
        end, ok = self._app(
            out,
            key,
            root,
            (run_id, job[0], job[1]),
            task,
            at + timedelta(seconds=rng.uniform(5, 20)),
            day,
        )
        end += timedelta(seconds=rng.uniform(1, 5))
        facets: Json = {"parent": parent, "airflow": airflow}
        if not ok:
            facets["errorMessage"] = facet(
                AIRFLOW_PRODUCER,
                "ErrorMessageRunFacet",
                {
                    "message": f"Spark application {task.app_name} failed",
                    "programmingLanguage": "python",
                },
            )
        self._event(
            out,
            end,
            key,
            self._run_event(
                "COMPLETE" if ok else "FAIL", end, run_id, job, run_facets=facets, **common
            ),
        )
        return end, ok

    def _app(
        self,
        out: list[Any],
        key: str,
        root: tuple[UUID, str, str],
        task_run: tuple[UUID, str, str],
        task: Task,
        at: datetime,
        day: datetime,
    ) -> tuple[datetime, bool]:
        rng = self.rng
        run_id = self._run_id(at)
        app_id = f"application_{int(at.timestamp())}_{rng.randint(1000, 9999)}"
        details = facet(
            SPARK_PRODUCER,
            "SparkApplicationDetailsFacet",
            {
                "master": "yarn",
                "appName": task.app_name,
                "applicationId": app_id,
                "deployMode": "cluster",
                "driverHost": f"worker-{rng.randint(1, 40):02d}.cluster-a.corp",
                "userName": "svc_spark",
                "uiWebUrl": "http://worker-01.cluster-a.corp:4040",
                "proxyUrl": f"http://rm1.cluster-a.corp:8088/proxy/{app_id}",
                "historyUrl": f"http://history.cluster-a.corp:18081/history/{app_id}",
            },
        )
        engine = facet(
            SPARK_PRODUCER,
            "ProcessingEngineRunFacet",
            {"version": "3.5.1", "name": "spark", "openlineageAdapterVersion": "1.22.0"},
        )
        props = facet(
            SPARK_PRODUCER,
            "SparkPropertiesFacet",
            {
                "properties": {
                    "spark.master": "yarn",
                    "spark.app.name": task.app_name,
                    "spark.submit.deployMode": "cluster",
                }
            },
        )
        run_facets = {
            "parent": _parent(*task_run, root),
            "spark_applicationDetails": details,
            "processing_engine": engine,
            "spark_properties": props,
        }
        job = (SPARK_NS, task.app_name)
        common = {"producer": SPARK_PRODUCER, "job_type": _job_type("SPARK", "APPLICATION")}
        self._event(
            out, at, key, self._run_event("START", at, run_id, job, run_facets=run_facets, **common)
        )
        self.totals.app_runs += 1
        t, ok = at + timedelta(seconds=rng.uniform(10, 30)), True
        for position, sql_job in enumerate(task.sql_jobs):
            t, ok = self._sql_job(
                out, key, root, (run_id, job[0], job[1]), engine, sql_job, position, t, day
            )
            if not ok:
                break
        t += timedelta(seconds=rng.uniform(1, 10))
        self._event(
            out,
            t,
            key,
            self._run_event(
                "COMPLETE" if ok else "FAIL", t, run_id, job, run_facets=run_facets, **common
            ),
        )
        return t, ok

    def _dataset(
        self,
        ds: Dataset,
        day: datetime,
        *,
        output: bool,
        full: bool,
        sources: dict[int, tuple[str, str]] | None = None,
        columns: dict[str, list[tuple[Dataset, str]]] | None = None,
    ) -> Json:
        ns, name, symlinks = ds.reference(self.rng, day)
        facets: Json = {}
        if symlinks:
            facets["symlinks"] = symlinks
        if full:  # the listener knows schemas once the plan ran: not on START/RUNNING here
            fields = [{"name": n, "type": t} for n, t in ds.fields]
            facets["schema"] = facet(SPARK_PRODUCER, "SchemaDatasetFacet", {"fields": fields})
        doc: Json = {"namespace": ns, "name": name, "facets": facets}
        if output and full and columns and sources:
            facets["columnLineage"] = facet(
                SPARK_PRODUCER,
                "ColumnLineageDatasetFacet",
                {
                    "fields": {
                        col: {
                            "inputFields": [
                                {
                                    "namespace": sources[id(src)][0],
                                    "name": sources[id(src)][1],
                                    "field": src_col,
                                    "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}],
                                }
                                for src, src_col in refs
                            ]
                        }
                        for col, refs in columns.items()
                    }
                },
            )
        if full:
            rows = self.rng.randint(10_000, 50_000_000)
            stats = {
                "rowCount": rows,
                "size": rows * self.rng.randint(80, 400),
                "fileCount": self.rng.randint(1, 200),
            }
            if output:
                doc["outputFacets"] = {
                    "outputStatistics": facet(
                        SPARK_PRODUCER, "OutputStatisticsOutputDatasetFacet", stats
                    )
                }
            else:
                doc["inputFacets"] = {
                    "inputStatistics": facet(
                        SPARK_PRODUCER, "InputStatisticsInputDatasetFacet", stats
                    )
                }
        return doc

    def _sql_job(
        self,
        out: list[Any],
        key: str,
        root: tuple[UUID, str, str],
        app_run: tuple[UUID, str, str],
        engine: Json,
        job: SqlJob,
        position: int,
        at: datetime,
        day: datetime,
    ) -> tuple[datetime, bool]:
        rng = self.rng
        run_id = self._run_id(at)
        failed = rng.random() < FAIL_RATE
        verb = "INSERT OVERWRITE TABLE" if "overwrite" in job.name else "INSERT INTO"
        sources = ", ".join(d.name.rsplit("/", 1)[-1] for d in job.inputs)
        columns = ", ".join(c for c, _ in job.output.fields[:6])
        sql = f"{verb} {job.output.name} SELECT {columns} FROM {sources}"  # noqa: S608 - event text
        sql += f" WHERE dt = '{day:%Y-%m-%d}'"
        run_facets = {
            "parent": _parent(*app_run, root),
            "spark_jobDetails": facet(
                SPARK_PRODUCER,
                "SparkJobDetailsFacet",
                {
                    "jobId": position,
                    "jobDescription": job.name.rsplit(".", 1)[-1],
                    "jobGroup": None,
                    "jobCallSite": "SparkSqlRunner.scala:42",
                },
            ),
        }
        name = (SPARK_NS, job.name)
        common = {
            "producer": SPARK_PRODUCER,
            "job_type": _job_type("SPARK", "SQL_JOB"),
            "job_facets": {"sql": facet(SPARK_PRODUCER, "SQLJobFacet", {"query": sql})},
        }
        refs: dict[int, tuple[str, str]] = {}

        def datasets(*, full: bool) -> tuple[list[Json], list[Json]]:
            inputs = []
            for ds in job.inputs:
                doc = self._dataset(ds, day, output=False, full=full)
                refs[id(ds)] = (doc["namespace"], doc["name"])
                inputs.append(doc)
            outputs = [
                self._dataset(
                    job.output, day, output=True, full=full, sources=refs, columns=job.columns
                )
            ]
            return inputs, outputs

        inputs, outputs = datasets(full=False)
        self._event(
            out,
            at,
            key,
            self._run_event(
                "START",
                at,
                run_id,
                name,
                run_facets=run_facets,
                inputs=inputs,
                outputs=outputs,
                **common,
            ),
        )
        self.totals.sql_jobs += 1
        self.totals.sql_inputs += len(job.inputs)
        self.totals.sql_outputs += 1
        t = at + timedelta(seconds=rng.uniform(30, 240))
        if rng.random() < RUNNING_RATE:
            mid = at + (t - at) / 2
            inputs, outputs = datasets(full=False)
            self._event(
                out,
                mid,
                key,
                self._run_event(
                    "RUNNING",
                    mid,
                    run_id,
                    name,
                    run_facets=run_facets,
                    inputs=inputs,
                    outputs=outputs,
                    **common,
                ),
            )
        inputs, outputs = datasets(full=not failed)
        facets = dict(run_facets)
        if failed:
            self.totals.failed_sql_jobs += 1
            facets["errorMessage"] = facet(
                SPARK_PRODUCER,
                "ErrorMessageRunFacet",
                {
                    "message": "org.apache.spark.SparkException: Job aborted due to stage failure",
                    "programmingLanguage": "JAVA",
                },
            )
        self._event(
            out,
            t,
            key,
            self._run_event(
                "FAIL" if failed else "COMPLETE",
                t,
                run_id,
                name,
                run_facets=facets,
                inputs=inputs,
                outputs=outputs,
                **common,
            ),
        )
        return t, not failed


def generate(
    events: int, seed: int = 1, run_ids: str = "v7"
) -> tuple[Iterator[tuple[bytes, bytes]], Totals]:
    """(key, value) pairs in eventTime order, whole DAG runs until at least `events`.

    The Totals object fills in as the iterator is consumed.
    """
    stream = Stream(seed, run_ids)

    def pairs() -> Iterator[tuple[bytes, bytes]]:
        pending: list[Any] = []  # heap of (time, seq, key, event) not yet emitted
        day, generated = T0, 0
        schedule = sorted(stream.world, key=lambda d: d.hour)
        while generated < events:
            for dag in schedule:
                run = stream.dag_run(dag, day)
                generated += len(run)
                for item in run:
                    heapq.heappush(pending, item)
                if generated >= events:
                    break
            day += timedelta(days=1)
            # Runs start on their day and last less than a day: what happened before the
            # next day's first start is final, so it can be emitted in time order now.
            while pending and pending[0][0] < day:
                yield _emit(stream.totals, heapq.heappop(pending))
        while pending:
            yield _emit(stream.totals, heapq.heappop(pending))

    return pairs(), stream.totals


def _emit(totals: Totals, item: Any) -> tuple[bytes, bytes]:
    at, _, key, event = item
    value = orjson.dumps(event)
    totals.events += 1
    totals.bytes += len(value)
    totals.first_event_time = totals.first_event_time or iso(at)
    totals.last_event_time = iso(at)
    kind = f"{event['job']['facets']['jobType']['jobType']}:{event['eventType']}"
    totals.by_type[kind] = totals.by_type.get(kind, 0) + 1
    return key.encode(), value


def write_ndjson(path: Path, events: int, seed: int, run_ids: str = "v7") -> Totals:
    pairs, totals = generate(events, seed, run_ids)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:
        for key, value in pairs:
            out.write(b'{"key":' + orjson.dumps(key.decode()) + b',"value":' + value + b"}\n")
    meta = {
        "seed": seed,
        "requested": events,
        "run_ids": run_ids,
        "alias_groups": ALIAS_GROUPS,
        **asdict(totals),
    }
    Path(f"{path}.meta.json").write_bytes(orjson.dumps(meta, option=orjson.OPT_INDENT_2))
    return totals


def read_ndjson(path: Path) -> Iterator[tuple[bytes, bytes]]:
    """(key, value) pairs of a file written by `write_ndjson`; value bytes as produced."""
    with path.open("rb") as src:
        for line in src:
            item = orjson.loads(line)
            yield item["key"].encode(), orjson.dumps(item["value"])


def read_meta(path: Path) -> dict[str, Any]:
    meta: dict[str, Any] = orjson.loads(Path(f"{path}.meta.json").read_bytes())
    return meta


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--run-ids", choices=sorted(RUN_ID_KINDS), default="v7", help="what run ids are"
    )
    args = parser.parse_args()
    totals = write_ndjson(args.out, args.events, args.seed, args.run_ids)
    sys.stderr.write(
        f"{totals.events} events, {totals.bytes / totals.events:.0f} B/event avg -> {args.out}\n"
    )


if __name__ == "__main__":
    main()
