"""A real Airflow run: DAG -> task -> Spark application -> operation -> datasets.

`airflow dags test` (Airflow 3 with apache-airflow-providers-openlineage, Kafka transport)
runs examples/airflow/dags/threadline_example.py, whose task spark-submits
examples/spark/orders_report.py with the spark.openlineage.parent* / rootParent* settings
from the provider's macros. Airflow and Spark emit into the same topic; the whole chain
must come back from the API as one lineage graph.
"""

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.e2e.api import Api, Json, dataset_names
from tests.e2e.conftest import INSTALL
from tests.e2e.harness import ROOT, JobResult, Pipeline, run_process

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

AIRFLOW_NAMESPACE = "threadline-e2e-airflow"
SPARK_NAMESPACE = "threadline-e2e-spark"
DAG_ID, TASK_ID, APP_NAME = "threadline_example", "orders_report", "orders_report"


def airflow_venv() -> Path:
    """Where scripts/install-e2e.sh put Airflow (its own virtualenv)."""
    cache = Path(os.environ.get("THREADLINE_CACHE_DIR") or Path.home() / ".cache/threadline")
    venv = Path(os.environ.get("THREADLINE_AIRFLOW_VENV") or cache / "airflow-venv")
    if not (venv / "bin" / "airflow").exists():
        pytest.fail(f"Airflow is not installed in {venv}: {INSTALL}", pytrace=False)
    return venv


def airflow_env(pipeline: Pipeline, home: Path) -> dict[str, str]:
    """Airflow's settings (as in examples/airflow/openlineage.env) and the Spark job's."""
    transport = {
        "type": "kafka",
        "topic": pipeline.topic,
        "config": {
            "bootstrap.servers": pipeline.bootstrap,
            "acks": "all",
            "compression.type": "gzip",
            # librdkafka's default partitioner hashes keys differently from the Java
            # client's; murmur2_random is the Java one, so the Airflow events and the
            # Spark events of one DAG run (same key) share a partition.
            "partitioner": "murmur2_random",
        },
        "flush": True,
    }
    return {
        **pipeline.job_env,
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(ROOT / "examples" / "airflow" / "dags"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
        "AIRFLOW__OPENLINEAGE__NAMESPACE": AIRFLOW_NAMESPACE,
        "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(transport),
        # examples/spark/orders_report.py, spark-submitted by the task:
        "SPARK_JARS": pipeline.job_env["THREADLINE_E2E_JARS"],
        "OPENLINEAGE_KAFKA_BOOTSTRAP": pipeline.bootstrap,
        "OPENLINEAGE_KAFKA_TOPIC": pipeline.topic,
        "OPENLINEAGE_NAMESPACE": SPARK_NAMESPACE,
        "ORDERS_REPORT_DIR": str(home.parent / "orders"),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }


@pytest.fixture(scope="module")
async def dag_run(pipeline: Pipeline) -> JobResult:
    venv = airflow_venv()
    home = pipeline.work / "airflow"
    home.mkdir()
    env = airflow_env(pipeline, home)
    airflow = str(venv / "bin" / "airflow")
    template = venv / "threadline-template.db"
    if template.exists():
        shutil.copyfile(template, home / "airflow.db")
    else:  # slow path: migrate here
        migrate = await run_process((airflow, "db", "migrate"), env, home / "migrate.log", 300)
        assert migrate.returncode == 0, migrate.tail()
    result = await run_process((airflow, "dags", "test", DAG_ID), env, home / "dags-test.log", 600)
    pipeline.results.append(result)
    assert result.returncode == 0, result.tail()
    await pipeline.drained()
    return result


async def last_run(api: Api, namespace: str, name: str) -> tuple[Json, Json]:
    job = await api.job(namespace, name)
    return job, await api.run(job["last_run"]["id"])


def orders_path(pipeline: Pipeline, name: str) -> str:
    return str(pipeline.work / "orders" / name)


async def test_events_of_the_dag_run_share_one_key_and_partition(
    pipeline: Pipeline, dag_run: JobResult
) -> None:
    assert await pipeline.dead_letters() == 0
    records = await pipeline.records()
    producers = {json.loads(r.value)["producer"].split("/tree/")[0] for r in records}
    assert len(producers) == 2  # Airflow's provider and the Spark listener
    # Both clients key run events by the root parent job: the DAG.
    assert {r.key for r in records} == {f"run:{AIRFLOW_NAMESPACE}/{DAG_ID}".encode()}
    assert len({r.partition for r in records}) == 1


async def test_job_hierarchy(api: Api, dag_run: JobResult) -> None:
    dag = await api.job(AIRFLOW_NAMESPACE, DAG_ID)
    task = await api.job(AIRFLOW_NAMESPACE, f"{DAG_ID}.{TASK_ID}")
    app = await api.job(SPARK_NAMESPACE, APP_NAME)
    assert (dag["type"], task["type"], app["type"]) == (
        "AIRFLOW_DAG",
        "AIRFLOW_TASK",
        "SPARK_APPLICATION",
    )
    assert task["parent"]["id"] == dag["id"]
    assert app["parent"]["id"] == task["id"]
    assert [c["id"] for c in dag["children"]] == [task["id"]]


async def test_run_chain(api: Api, pipeline: Pipeline, dag_run: JobResult) -> None:
    _, dag = await last_run(api, AIRFLOW_NAMESPACE, DAG_ID)
    _, task = await last_run(api, AIRFLOW_NAMESPACE, f"{DAG_ID}.{TASK_ID}")
    _, app = await last_run(api, SPARK_NAMESPACE, APP_NAME)
    assert dag["status"] == task["status"] == app["status"] == "SUCCEEDED"
    assert dag["external_id"].startswith("manual__")  # the Airflow run_id
    assert task["attempt"] == 1
    assert task["parent_run"]["id"] == dag["id"]
    assert app["parent_run"]["id"] == task["id"]
    assert [c["id"] for c in task["child_runs"]] == [app["id"]]
    # DataProcessInstance views aggregate descendants: the task "wrote" what Spark wrote.
    assert dataset_names(task["outputs"]) == {orders_path(pipeline, "orders_by_country")}
    assert dataset_names(dag["inputs"]) == {orders_path(pipeline, "orders.csv")}


async def test_spark_operation(api: Api, pipeline: Pipeline, dag_run: JobResult) -> None:
    _, app = await last_run(api, SPARK_NAMESPACE, APP_NAME)
    [operation] = await api.spark_operations(app["id"])
    detail = await api.operation(operation["id"])
    assert (detail["type"], detail["status"]) == ("SQL_JOB", "SUCCEEDED")
    assert dataset_names(detail["inputs"]) == {orders_path(pipeline, "orders.csv")}
    [output] = detail["outputs"]
    assert output["dataset"]["name"] == orders_path(pipeline, "orders_by_country")
    assert (output["types"], output["num_rows"]) == (["OVERWRITE"], 3)


async def test_whole_chain_in_one_lineage_graph(
    api: Api, pipeline: Pipeline, dag_run: JobResult
) -> None:
    report = await api.dataset("file", orders_path(pipeline, "orders_by_country"))
    graph = await api.lineage(
        "DATASET", report["id"], direction="UPSTREAM", depth=2, granularity="OPERATION"
    )
    nodes = graph["nodes"]
    jobs = {j["id"]: j["name"] for j in nodes["jobs"]}
    assert sorted(jobs.values()) == sorted([DAG_ID, f"{DAG_ID}.{TASK_ID}", APP_NAME])
    runs = {r["id"]: jobs[r["job_id"]] for r in nodes["runs"]}
    assert sorted(runs.values()) == sorted(jobs.values())
    [operation] = nodes["operations"]
    assert {d["name"] for d in nodes["datasets"]} == {
        orders_path(pipeline, "orders.csv"),
        orders_path(pipeline, "orders_by_country"),
    }
    names = {**jobs, **runs, operation["id"]: "operation"}
    parents = {
        (e["from"]["kind"], names[e["from"]["id"]], e["to"]["kind"], names[e["to"]["id"]])
        for e in graph["relations"]["parents"]
    }
    task = f"{DAG_ID}.{TASK_ID}"
    assert {
        ("JOB", DAG_ID, "JOB", task),
        ("JOB", task, "JOB", APP_NAME),
        ("RUN", DAG_ID, "RUN", task),
        ("RUN", task, "RUN", APP_NAME),
        ("RUN", APP_NAME, "OPERATION", "operation"),
    } <= parents
