"""Lineage of an Airflow DAG -> task -> Spark application with two SQL operations.

The events go through the consumer pipeline; every graph is compared exactly (nodes,
relations, aggregates) at each granularity and direction.
"""

from typing import Any

import httpx
import pytest

from tests.server.lineage_conftest import LineageWorld, lineage_client, lineage_world
from tests.server.lineage_scenarios import (
    APP_RUN,
    CLEAN_PATH,
    CLEAN_TABLE,
    DAILY,
    OP2,
    RAW_PATH,
    RAW_TABLE,
)

pytestmark = pytest.mark.db
__all__ = ["lineage_client", "lineage_world"]  # fixtures used by name

DAG, TASK, APP = "job:sales_dag", "job:sales_dag.run_spark", "job:sales_app"
# The application run's ancestry, attached to any graph holding the run.
CHAIN = {"app_run", APP, "task_run", TASK, "dag_run", DAG}
CHAIN_PARENTS = {
    (APP, "app_run"),
    ("task_run", "app_run"),
    (TASK, "task_run"),
    ("dag_run", "task_run"),
    (DAG, "dag_run"),
    (DAG, TASK),
    (TASK, APP),
}
SYMLINKS = {
    (RAW_PATH, RAW_TABLE, "METASTORE"),
    (RAW_TABLE, RAW_PATH, "WAREHOUSE"),
    (CLEAN_PATH, CLEAN_TABLE, "METASTORE"),
    (CLEAN_TABLE, CLEAN_PATH, "WAREHOUSE"),
}
RAW_READ = (120, 1200, 3)
CLEAN_READ = (100, 1000, 2)
CLEAN_WRITE = (100, 1000, 2, "OVERWRITE")
DAILY_WRITE = (10, 200, 1, "APPEND")


async def lineage(
    client: httpx.AsyncClient, world: LineageWorld, start: str, **params: Any
) -> dict[str, Any]:
    """GET /v1/lineage from a dataset or job name, or a run/operation UUID; compacted."""
    kind, node_id = _start(world, start)
    query = {"start_node_type": kind, "start_node_id": node_id, **params}
    response = await client.get("/v1/lineage", params=query)
    assert response.status_code == 200, response.text
    return world.compact(response.json())


def _start(world: LineageWorld, start: str) -> tuple[str, str]:
    if start in world.datasets:
        return "DATASET", str(world.datasets[start])
    if start.startswith("job:"):
        return "JOB", str(world.jobs[start[4:]])
    return ("OPERATION" if start == str(OP2) else "RUN"), start


def graph(**parts: Any) -> dict[str, Any]:
    empty: dict[str, Any] = {"parents": set(), "symlinks": set(), "inputs": {}, "outputs": {}}
    return {"dataset_lineage": {}, "truncated": False, **empty, **parts}


async def test_operation_granularity_downstream(
    lineage_client: httpx.AsyncClient, lineage_world: LineageWorld
) -> None:
    got = await lineage(
        lineage_client, lineage_world, RAW_TABLE, direction="DOWNSTREAM", depth=4,
        granularity="OPERATION",
    )  # fmt: skip
    assert got == graph(
        nodes={RAW_TABLE, RAW_PATH, "op1", CLEAN_TABLE, CLEAN_PATH, "op2", DAILY} | CHAIN,
        parents=CHAIN_PARENTS | {("app_run", "op1"), ("app_run", "op2")},
        symlinks=SYMLINKS,
        inputs={(RAW_TABLE, "op1"): RAW_READ, (CLEAN_TABLE, "op2"): CLEAN_READ},
        outputs={("op1", CLEAN_TABLE): CLEAN_WRITE, ("op2", DAILY): DAILY_WRITE},
    )


async def test_depth_counts_each_relation_hop(
    lineage_client: httpx.AsyncClient, lineage_world: LineageWorld
) -> None:
    # dataset -> op1 -> dataset -> op2 is three hops: op2's output is one hop further.
    got = await lineage(
        lineage_client, lineage_world, RAW_TABLE, direction="DOWNSTREAM", depth=3,
        granularity="OPERATION",
    )  # fmt: skip
    assert got["nodes"] == {RAW_TABLE, RAW_PATH, "op1", CLEAN_TABLE, CLEAN_PATH, "op2"} | CHAIN
    assert got["outputs"] == {("op1", CLEAN_TABLE): CLEAN_WRITE}
    assert set(got["inputs"]) == {(RAW_TABLE, "op1"), (CLEAN_TABLE, "op2")}


async def test_run_granularity_merges_operations(
    lineage_client: httpx.AsyncClient, lineage_world: LineageWorld
) -> None:
    params = {"direction": "DOWNSTREAM", "granularity": "RUN"}
    two = await lineage(lineage_client, lineage_world, RAW_TABLE, depth=2, **params)
    assert two == graph(
        nodes={RAW_TABLE, RAW_PATH, CLEAN_TABLE, CLEAN_PATH, DAILY} | CHAIN,
        parents=CHAIN_PARENTS,
        symlinks=SYMLINKS,
        inputs={(RAW_TABLE, "app_run"): RAW_READ},
        outputs={("app_run", CLEAN_TABLE): CLEAN_WRITE, ("app_run", DAILY): DAILY_WRITE},
    )
    # One hop more: the run also reads what it wrote (a cycle at run level), no new node.
    three = await lineage(lineage_client, lineage_world, RAW_TABLE, depth=3, **params)
    assert three == {**two, "inputs": {**two["inputs"], (CLEAN_TABLE, "app_run"): CLEAN_READ}}


async def test_job_granularity(
    lineage_client: httpx.AsyncClient, lineage_world: LineageWorld
) -> None:
    got = await lineage(
        lineage_client, lineage_world, RAW_TABLE, direction="DOWNSTREAM", depth=2,
        granularity="JOB",
    )  # fmt: skip
    assert got == graph(
        nodes={RAW_TABLE, RAW_PATH, APP, CLEAN_TABLE, CLEAN_PATH, DAILY, TASK, DAG},
        parents={(TASK, APP), (DAG, TASK)},
        symlinks=SYMLINKS,
        inputs={(RAW_TABLE, APP): RAW_READ},
        outputs={(APP, CLEAN_TABLE): CLEAN_WRITE, (APP, DAILY): DAILY_WRITE},
    )


@pytest.mark.parametrize(
    ("start", "direction", "depth"),
    [(RAW_TABLE, "DOWNSTREAM", 2), (DAILY, "UPSTREAM", 5), (CLEAN_PATH, "BOTH", 1)],
)
async def test_dataset_granularity(
    lineage_client: httpx.AsyncClient,
    lineage_world: LineageWorld,
    start: str,
    direction: str,
    depth: int,
) -> None:
    got = await lineage(
        lineage_client, lineage_world, start, direction=direction, depth=depth,
        granularity="DATASET",
    )  # fmt: skip
    assert got == graph(
        nodes={RAW_TABLE, RAW_PATH, CLEAN_TABLE, CLEAN_PATH, DAILY},
        symlinks=SYMLINKS,
        dataset_lineage={(RAW_TABLE, CLEAN_TABLE): CLEAN_WRITE, (CLEAN_TABLE, DAILY): DAILY_WRITE},
    )


async def test_dataset_granularity_depth_one(
    lineage_client: httpx.AsyncClient, lineage_world: LineageWorld
) -> None:
    got = await lineage(
        lineage_client, lineage_world, RAW_TABLE, direction="DOWNSTREAM", depth=1,
        granularity="DATASET",
    )  # fmt: skip
    assert got["nodes"] == {RAW_TABLE, RAW_PATH, CLEAN_TABLE, CLEAN_PATH}
    assert got["dataset_lineage"] == {(RAW_TABLE, CLEAN_TABLE): CLEAN_WRITE}


async def test_upstream_run_granularity(
    lineage_client: httpx.AsyncClient, lineage_world: LineageWorld
) -> None:
    got = await lineage(
        lineage_client, lineage_world, DAILY, direction="UPSTREAM", depth=2, granularity="RUN"
    )
    assert got == graph(
        nodes={DAILY, RAW_TABLE, RAW_PATH, CLEAN_TABLE, CLEAN_PATH} | CHAIN,
        parents=CHAIN_PARENTS,
        symlinks=SYMLINKS,
        inputs={(RAW_TABLE, "app_run"): RAW_READ, (CLEAN_TABLE, "app_run"): CLEAN_READ},
        outputs={("app_run", DAILY): DAILY_WRITE},
    )


@pytest.mark.parametrize("start", [CLEAN_TABLE, CLEAN_PATH])
async def test_both_directions_through_symlink(
    lineage_client: httpx.AsyncClient, lineage_world: LineageWorld, start: str
) -> None:
    # The path carries no I/O of its own: its table twin's relations are found through the
    # symlink, which costs no depth.
    got = await lineage(
        lineage_client, lineage_world, start, direction="BOTH", depth=1, granularity="OPERATION"
    )
    assert got == graph(
        nodes={CLEAN_TABLE, CLEAN_PATH, "op1", "op2"} | CHAIN,
        parents=CHAIN_PARENTS | {("app_run", "op1"), ("app_run", "op2")},
        symlinks={s for s in SYMLINKS if CLEAN_TABLE in s},
        inputs={(CLEAN_TABLE, "op2"): CLEAN_READ},
        outputs={("op1", CLEAN_TABLE): CLEAN_WRITE},
    )


async def test_from_run_at_operation_granularity(
    lineage_client: httpx.AsyncClient, lineage_world: LineageWorld
) -> None:
    got = await lineage(
        lineage_client, lineage_world, str(APP_RUN), direction="DOWNSTREAM", depth=1,
        granularity="OPERATION",
    )  # fmt: skip
    assert got == graph(
        nodes={"op1", "op2", CLEAN_TABLE, CLEAN_PATH, DAILY} | CHAIN,
        parents=CHAIN_PARENTS | {("app_run", "op1"), ("app_run", "op2")},
        symlinks={s for s in SYMLINKS if CLEAN_TABLE in s},
        outputs={("op1", CLEAN_TABLE): CLEAN_WRITE, ("op2", DAILY): DAILY_WRITE},
    )


async def test_from_job_at_run_granularity(
    lineage_client: httpx.AsyncClient, lineage_world: LineageWorld
) -> None:
    got = await lineage(
        lineage_client, lineage_world, APP, direction="UPSTREAM", depth=1, granularity="RUN"
    )
    assert got == graph(
        nodes={RAW_TABLE, RAW_PATH, CLEAN_TABLE, CLEAN_PATH} | CHAIN,
        parents=CHAIN_PARENTS,
        symlinks=SYMLINKS,
        inputs={(RAW_TABLE, "app_run"): RAW_READ, (CLEAN_TABLE, "app_run"): CLEAN_READ},
    )


async def test_from_operation(
    lineage_client: httpx.AsyncClient, lineage_world: LineageWorld
) -> None:
    got = await lineage(lineage_client, lineage_world, str(OP2), direction="BOTH", depth=1)
    assert got == graph(
        nodes={"op2", CLEAN_TABLE, CLEAN_PATH, DAILY} | CHAIN,
        parents=CHAIN_PARENTS | {("app_run", "op2")},
        symlinks={s for s in SYMLINKS if CLEAN_TABLE in s},
        inputs={(CLEAN_TABLE, "op2"): CLEAN_READ},
        outputs={("op2", DAILY): DAILY_WRITE},
    )
