"""A deterministic stream of small, valid, realistic OpenLineage events for the fault tests.

Runs of generic, Airflow (task -> DAG parent) and Spark (application + SQL-job
operations) jobs, with START/RUNNING/COMPLETE|FAIL events, inputs and outputs,
statistics that grow between events, schemas and column lineage, plus JobEvents
and DatasetEvents. A fifth of the run ids are UUIDv4 (anchored by the earliest
eventTime, so redelivery out of order exercises the rehoming path).

Every job keeps one parent and one type, and every dataset one schema, so the
final database does not depend on arrival order: any difference from the
reference is a delivery fault (a lost or doubled event), not an ordering effect.
"""

import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

import orjson

Json = dict[str, Any]
BASE = datetime(2025, 3, 1, tzinfo=UTC)
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
PRODUCERS = {
    "generic": "https://example.com/threadline-faults/generic",
    "airflow": "https://github.com/apache/airflow/tree/providers-openlineage/1.14.0",
    "spark": "https://github.com/OpenLineage/OpenLineage/tree/1.22.0/integration/spark",
}
NAMESPACES = (
    "postgres://orders-db.example.com:5432",
    "s3://lake",
    "hdfs://namenode.example.com:8020",
    "kafka://broker.example.com:9092",
    "bigquery",
)
COLUMNS = ("id", "customer_id", "amount", "created_at", "status")


@dataclass(frozen=True, slots=True)
class Message:
    key: bytes
    value: bytes


def iso(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


class Generator:
    """Builds the stream; `messages(n)` yields exactly n messages."""

    def __init__(self, seed: int, datasets: int = 1500, jobs: int = 400) -> None:
        self.rng = random.Random(seed)
        self.datasets = [
            (self.rng.choice(NAMESPACES), f"db.schema_{i % 37}.table_{i}") for i in range(datasets)
        ]
        self.jobs = [self._job(i) for i in range(jobs)]
        self.clock = BASE

    def _job(self, i: int) -> Json:
        kind = ("generic", "airflow", "spark")[i % 3]
        return {
            "kind": kind,
            "namespace": "airflow-prod" if kind == "airflow" else f"team-{i % 7}",
            "name": f"{kind}_job_{i}",
            "inputs": self.rng.sample(range(len(self.datasets)), self.rng.randint(1, 2)),
            "outputs": [self.rng.randrange(len(self.datasets))],
        }

    def _run_id(self, at: datetime) -> UUID:
        bits = self.rng.getrandbits(128)
        if self.rng.random() < 0.2:  # UUIDv4
            return UUID(int=(bits & ~(0xF << 76) | (4 << 76)) & ~(0b11 << 62) | (0b10 << 62))
        millis = int(at.timestamp() * 1000)
        rand = bits & (2**74 - 1)
        high = (millis << 80) | (0x7 << 76) | ((rand >> 62) << 64)
        return UUID(int=high | (0b10 << 62) | (rand & (2**62 - 1)))

    def messages(self, count: int) -> list[Message]:
        out: list[Message] = []
        while len(out) < count:
            out.extend(self._episode())
        return out[:count]

    def _episode(self) -> Iterator[Message]:
        self.clock += timedelta(seconds=self.rng.randint(1, 90))
        roll = self.rng.random()
        if roll < 0.03:
            yield self._dataset_event()
            return
        if roll < 0.06:
            yield self._job_event()
            return
        job = self.rng.choice(self.jobs)
        if job["kind"] == "spark":
            yield from self._spark_run(job)
        else:
            yield from self._run(job)

    # -- event shapes ---------------------------------------------------------

    def _dataset(self, index: int, *, output: bool, rows: int | None = None) -> Json:
        namespace, name = self.datasets[index]
        facets: Json = {
            "schema": {"fields": [{"name": c, "type": "string"} for c in COLUMNS[: 2 + index % 2]]}
        }
        body: Json = {"namespace": namespace, "name": name, "facets": facets}
        if output:
            body["outputFacets"] = {
                "outputStatistics": {"rowCount": rows or 0, "size": (rows or 0) * 40}
            }
        if output and index % 3 == 0:
            source_ns, source_name = self.datasets[(index * 7 + 3) % len(self.datasets)]
            facets["columnLineage"] = {
                "fields": {
                    "amount": {
                        "inputFields": [
                            {
                                "namespace": source_ns,
                                "name": source_name,
                                "field": "amount",
                                "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}],
                            }
                        ]
                    }
                }
            }
        if not output:
            body["inputFacets"] = {"inputStatistics": {"rowCount": rows or 0}}
        return body

    def _event(self, job: Json, run: Json, event_type: str, at: datetime, rows: int) -> Json:
        return {
            "eventType": event_type,
            "eventTime": iso(at),
            "producer": PRODUCERS[job["kind"]],
            "schemaURL": SCHEMA_URL,
            "run": run,
            "job": {"namespace": job["namespace"], "name": job["name"]},
            "inputs": [self._dataset(i, output=False, rows=rows) for i in job["inputs"]],
            "outputs": [self._dataset(i, output=True, rows=rows) for i in job["outputs"]],
        }

    def _run(self, job: Json) -> Iterator[Message]:
        start = self.clock
        run_id = self._run_id(start)
        facets: Json = {}
        if job["kind"] == "airflow":
            dag = f"dag_{job['name'].rsplit('_', 1)[-1][:1]}"
            facets["parent"] = {
                "run": {"runId": str(self._run_id(start))},
                "job": {"namespace": job["namespace"], "name": dag},
            }
            facets["airflow"] = {
                "dag": {"dag_id": dag, "owner": "data-team"},
                "task": {"task_id": job["name"]},
                "taskInstance": {"try_number": 1},
                "dagRun": {"run_id": f"scheduled__{iso(start)}"},
            }
        run = {"runId": str(run_id), "facets": facets}
        rows = self.rng.randint(1, 10_000)
        end_type = "FAIL" if self.rng.random() < 0.1 else "COMPLETE"
        steps = [("START", 0), ("RUNNING", 1), (end_type, 2)][: self.rng.randint(2, 3)]
        if steps[-1][0] == "RUNNING":
            steps.append((end_type, 3))
        for event_type, n in steps:
            at = start + timedelta(seconds=30 * n)
            value = self._event(job, run, event_type, at, rows * (n + 1))
            yield Message(str(run_id).encode(), orjson.dumps(value))

    def _spark_run(self, job: Json) -> Iterator[Message]:
        start = self.clock
        app_id = self._run_id(start)
        app_run = {
            "runId": str(app_id),
            "facets": {
                "spark_applicationDetails": {
                    "applicationId": f"app-{app_id.hex[:8]}",
                    "userName": "spark",
                }
            },
        }
        app_job = {**job, "inputs": [], "outputs": []}
        key = str(app_id).encode()
        yield Message(key, orjson.dumps(self._event(app_job, app_run, "START", start, 0)))
        for n in range(self.rng.randint(1, 2)):
            op_id = self._run_id(start + timedelta(seconds=n + 1))
            op_run = {
                "runId": str(op_id),
                "facets": {
                    "parent": {
                        "run": {"runId": str(app_id)},
                        "job": {"namespace": job["namespace"], "name": job["name"]},
                    },
                    "spark_jobDetails": {"jobId": n},
                },
            }
            op_job = {**job, "name": f"{job['name']}.execute_insert_{n}"}
            for event_type, dt in (("START", 2), ("COMPLETE", 20)):
                value = self._event(
                    op_job, op_run, event_type, start + timedelta(seconds=dt), 100 * dt
                )
                value["job"]["facets"] = {
                    "jobType": {
                        "processingType": "BATCH",
                        "integration": "SPARK",
                        "jobType": "SQL_JOB",
                    }
                }
                yield Message(key, orjson.dumps(value))
        done = self._event(app_job, app_run, "COMPLETE", start + timedelta(seconds=60), 0)
        yield Message(key, orjson.dumps(done))

    def _dataset_event(self) -> Message:
        index = self.rng.randrange(len(self.datasets))
        value = {
            "eventTime": iso(self.clock),
            "producer": PRODUCERS["generic"],
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
            "dataset": self._dataset(index, output=False),
        }
        return Message(f"dataset:{index}".encode(), orjson.dumps(value))

    def _job_event(self) -> Message:
        job = self.rng.choice([j for j in self.jobs[:60] if j["kind"] == "generic"])
        value = {
            "eventTime": iso(self.clock),
            "producer": PRODUCERS["generic"],
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent",
            "job": {"namespace": job["namespace"], "name": job["name"]},
            "inputs": [
                {"namespace": self.datasets[i][0], "name": self.datasets[i][1]}
                for i in job["inputs"]
            ],
            "outputs": [
                {"namespace": self.datasets[i][0], "name": self.datasets[i][1]}
                for i in job["outputs"]
            ],
        }
        return Message(f"job:{job['name']}".encode(), orjson.dumps(value))


def stream(count: int, seed: int = 20250301) -> list[Message]:
    """The fault tests' event stream: `count` messages, the same for the same seed."""
    return Generator(seed).messages(count)
