"""Lineage graph shapes: cycles, a fan-out over the node cap, time windows, a symlinked
path, column lineage and node details; all from events ingested by the consumer."""

from typing import Any

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.server.lineage_conftest import (
    SMALL_CAP,
    LineageWorld,
    columns_world,
    lineage_client,
    lineage_world,
    small_cap_client,
)
from tests.server.lineage_events import T0, iso, minutes
from tests.server.lineage_scenarios import (
    APP_RUN,
    CLEAN_PATH,
    CLEAN_TABLE,
    COL_DST,
    COL_SRC,
    COLS_AT,
    COLS_DST,
    COLS_RUN,
    COLS_SRC,
    COLU_AT,
    COLU_DST,
    COLU_SRC,
    CYCLE_A,
    CYCLE_B,
    DAILY,
    EVENTS_PATH,
    EVENTS_TABLE,
    FAN_SOURCE,
    FAN_WIDTH,
    RAW_TABLE,
    SYM_REPORT,
    SYM_SOURCE,
    WIN_DAYS,
    WIN_SRC,
)
from tests.server.test_lineage_spark import graph, lineage

pytestmark = pytest.mark.db
__all__ = [
    "columns_world",
    "lineage_client",
    "lineage_world",
    "small_cap_client",
]  # fixtures used by name

CYCLE = {
    "inputs": {(CYCLE_A, "cycle_run1"): (None, None, None), (CYCLE_B, "cycle_run2"): (None,) * 3},
    "outputs": {
        ("cycle_run1", CYCLE_B): (None, None, None, "APPEND"),
        ("cycle_run2", CYCLE_A): (None, None, None, "APPEND"),
    },
}


@pytest.mark.parametrize("direction", ["DOWNSTREAM", "UPSTREAM", "BOTH"])
async def test_cycle_never_loops_nor_duplicates(
    lineage_client: httpx.AsyncClient, lineage_world: LineageWorld, direction: str
) -> None:
    got = await lineage(
        lineage_client, lineage_world, CYCLE_A, direction=direction, depth=10, granularity="RUN"
    )
    assert got == graph(
        nodes={CYCLE_A, CYCLE_B, "cycle_run1", "cycle_run2", "job:job1", "job:job2"},
        parents={("job:job1", "cycle_run1"), ("job:job2", "cycle_run2")},
        **CYCLE,
    )


async def test_cycle_at_dataset_granularity(
    lineage_client: httpx.AsyncClient, lineage_world: LineageWorld
) -> None:
    got = await lineage(
        lineage_client, lineage_world, CYCLE_B, direction="BOTH", depth=50, granularity="DATASET"
    )
    edge = (None, None, None, "APPEND")
    assert got == graph(
        nodes={CYCLE_A, CYCLE_B},
        dataset_lineage={(CYCLE_A, CYCLE_B): edge, (CYCLE_B, CYCLE_A): edge},
    )


async def test_fan_out_within_cap(
    lineage_client: httpx.AsyncClient, lineage_world: LineageWorld
) -> None:
    got = await lineage(lineage_client, lineage_world, FAN_SOURCE, direction="DOWNSTREAM", depth=2)
    targets = {f"fan.public.t{i:02d}" for i in range(FAN_WIDTH)}
    assert got["nodes"] == {FAN_SOURCE, "fan_run", "job:fanout"} | targets
    assert {target for _, target in got["outputs"]} == targets
    assert got["truncated"] is False


@pytest.mark.parametrize("granularity", ["RUN", "DATASET", "JOB", "OPERATION"])
async def test_fan_out_over_cap_is_truncated(
    small_cap_client: httpx.AsyncClient, lineage_world: LineageWorld, granularity: str
) -> None:
    got = await lineage(
        small_cap_client, lineage_world, FAN_SOURCE, direction="BOTH", depth=2,
        granularity=granularity,
    )  # fmt: skip
    assert got["truncated"] is True
    assert FAN_SOURCE in got["nodes"]
    assert 1 < len(got["nodes"]) <= SMALL_CAP
    ends = {end for rel in ("inputs", "outputs", "dataset_lineage") for e in got[rel] for end in e}
    assert ends <= got["nodes"]  # no relation to a node that was cut


async def test_max_nodes_parameter_lowers_the_cap(
    lineage_client: httpx.AsyncClient, lineage_world: LineageWorld
) -> None:
    got = await lineage(lineage_client, lineage_world, FAN_SOURCE, depth=2, max_nodes=5)
    assert got["truncated"] is True
    assert len(got["nodes"]) <= 5


DAY1, DAY2, DAY3 = WIN_DAYS


@pytest.mark.parametrize(
    ("since", "until", "runs", "read", "written"),
    [
        (None, None, {"day1", "day2", "day3"}, (60, 600, 3), (600, 6000, 6, "APPEND")),
        (DAY2 - minutes(60), DAY2 + minutes(60), {"day2"}, (20, 200, 1), (200, 2000, 2, "APPEND")),
        # A run overlaps the window when it was first seen before `until` and last after `since`.
        (DAY1 + minutes(5), DAY2, {"day1", "day2"}, (30, 300, 2), (300, 3000, 3, "APPEND")),
        (DAY3 + minutes(11), None, set(), None, None),
        (None, DAY1 - minutes(1), set(), None, None),
    ],
)
async def test_time_window_cuts_relations(
    lineage_client: httpx.AsyncClient,
    lineage_world: LineageWorld,
    since: Any,
    until: Any,
    runs: set[str],
    read: tuple[int, ...] | None,
    written: tuple[Any, ...] | None,
) -> None:
    window = {k: iso(v) for k, v in (("since", since), ("until", until)) if v is not None}
    job = await lineage(
        lineage_client, lineage_world, WIN_SRC, direction="DOWNSTREAM", depth=2,
        granularity="JOB", **window,
    )  # fmt: skip
    if read is None:
        assert job == graph(nodes={WIN_SRC})
        return
    job_name = "job:daily_copy"
    assert job["inputs"] == {(WIN_SRC, job_name): read}
    assert job["outputs"] == {(job_name, "win.public.dst"): written}
    per_run = await lineage(
        lineage_client, lineage_world, WIN_SRC, direction="DOWNSTREAM", depth=1,
        granularity="RUN", **window,
    )  # fmt: skip
    assert per_run["nodes"] - {WIN_SRC, job_name} == runs


async def test_first_and_last_seen(
    lineage_client: httpx.AsyncClient, lineage_world: LineageWorld
) -> None:
    response = await lineage_client.get(
        "/v1/lineage",
        params={
            "start_node_type": "DATASET",
            "start_node_id": lineage_world.datasets[WIN_SRC],
            "direction": "DOWNSTREAM",
            "granularity": "JOB",
        },
    )
    [relation] = response.json()["relations"]["inputs"]
    assert relation["first_seen_at"] == iso(DAY1)
    assert relation["last_seen_at"] == iso(DAY3 + minutes(10))


async def test_path_written_then_read_as_table(
    lineage_client: httpx.AsyncClient, lineage_world: LineageWorld
) -> None:
    got = await lineage(lineage_client, lineage_world, SYM_SOURCE, direction="DOWNSTREAM", depth=4)
    nones = (None, None, None)
    assert got == graph(
        nodes={SYM_SOURCE, "writer_run", "job:writer", EVENTS_PATH, EVENTS_TABLE}
        | {"reader_run", "job:reader", SYM_REPORT},
        parents={("job:writer", "writer_run"), ("job:reader", "reader_run")},
        symlinks={
            (EVENTS_PATH, EVENTS_TABLE, "METASTORE"),
            (EVENTS_TABLE, EVENTS_PATH, "WAREHOUSE"),
        },
        inputs={(SYM_SOURCE, "writer_run"): nones, (EVENTS_TABLE, "reader_run"): nones},
        outputs={
            ("writer_run", EVENTS_PATH): (*nones, "APPEND"),
            ("reader_run", SYM_REPORT): (*nones, "APPEND"),
        },
    )


def _column_times(
    body: dict[str, Any], world: LineageWorld, key: str
) -> dict[tuple[str, ...], str]:
    return {
        (world.label(r["from"]), world.label(r["to"]), f["source_column"], f["target_column"]): f[
            "last_seen_at"
        ]
        for r in body["relations"][key]
        for f in r["fields"]
    }


def _columns(body: dict[str, Any], world: LineageWorld, key: str) -> set[tuple[str, ...]]:
    return set(_column_times(body, world, key))


async def _downstream_columns(
    client: httpx.AsyncClient, dataset_id: int, granularity: str, since: str | None = None
) -> dict[str, Any]:
    """The graph downstream of a dataset at depth 2 (dataset -> process -> dataset), with
    column lineage, over all history or `since` a time."""
    params: dict[str, Any] = {
        "start_node_type": "DATASET",
        "start_node_id": dataset_id,
        "direction": "DOWNSTREAM",
        "depth": 2,
        "granularity": granularity,
        "include_column_lineage": "true",
        **({"since": since} if since else {}),
    }
    body: dict[str, Any] = (await client.get("/v1/lineage", params=params)).json()
    return body


@pytest.mark.parametrize("granularity", ["OPERATION", "RUN", "JOB", "DATASET"])
async def test_column_lineage_on_request(
    lineage_client: httpx.AsyncClient, lineage_world: LineageWorld, granularity: str
) -> None:
    params: dict[str, Any] = {
        "start_node_type": "DATASET",
        "start_node_id": lineage_world.datasets[RAW_TABLE],
        "direction": "DOWNSTREAM",
        "depth": 4,
        "granularity": granularity,
    }
    plain = (await lineage_client.get("/v1/lineage", params=params)).json()
    assert plain["relations"]["direct_column_lineage"] == []
    params["include_column_lineage"] = "true"
    body = (await lineage_client.get("/v1/lineage", params=params)).json()
    # The facet names the path; the consumer stores it as its Hive table, like the input.
    assert _columns(body, lineage_world, "direct_column_lineage") == {
        (CLEAN_TABLE, DAILY, "ts", "day"),
        (CLEAN_TABLE, DAILY, "amount", "total"),
    }
    assert body["relations"]["indirect_column_lineage"] == []
    [relation] = body["relations"]["direct_column_lineage"]
    assert {f["last_seen_at"] for f in relation["fields"]} == {iso(T0 + minutes(6))}


async def test_direct_and_indirect_column_lineage(
    lineage_client: httpx.AsyncClient, columns_world: LineageWorld
) -> None:
    params: dict[str, Any] = {
        "start_node_type": "DATASET",
        "start_node_id": columns_world.datasets[COL_SRC],
        "direction": "DOWNSTREAM",
        "depth": 2,
        "include_column_lineage": "true",
    }
    body = (await lineage_client.get("/v1/lineage", params=params)).json()
    assert _columns(body, columns_world, "direct_column_lineage") == {
        (COL_SRC, COL_DST, "amount", "total"),
        (COL_SRC, COL_DST, "region", "region"),
    }
    assert _columns(body, columns_world, "indirect_column_lineage") == {
        (COL_SRC, COL_DST, "status", "total"),
        (COL_SRC, COL_DST, "region", "region"),
    }


@pytest.mark.parametrize("granularity", ["OPERATION", "RUN", "JOB", "DATASET"])
async def test_column_lineage_unions_its_processes(
    lineage_client: httpx.AsyncClient, columns_world: LineageWorld, granularity: str
) -> None:
    """A column pair two runs wrote, once as DIRECT and once as INDIRECT, is one field per
    kind with the latest time of the runs that wrote it as that kind or another."""
    body = await _downstream_columns(lineage_client, columns_world.datasets[COLU_SRC], granularity)
    later = iso(COLU_AT[1])
    assert _column_times(body, columns_world, "direct_column_lineage") == {
        (COLU_SRC, COLU_DST, "v", "n"): later,
        (COLU_SRC, COLU_DST, "w", "m"): later,
    }
    assert _column_times(body, columns_world, "indirect_column_lineage") == {
        (COLU_SRC, COLU_DST, "v", "n"): later,
    }


@pytest.mark.parametrize("granularity", ["OPERATION", "RUN", "JOB", "DATASET"])
async def test_column_sets_of_one_operation_are_unioned(
    lineage_client: httpx.AsyncClient, columns_world: LineageWorld, granularity: str
) -> None:
    """Two events of one operation naming different column sets: the pair both name is
    one field per kind with the later time, the pair only the first names keeps its time."""
    body = await _downstream_columns(lineage_client, columns_world.datasets[COLS_SRC], granularity)
    first, later = (iso(at) for at in COLS_AT)
    assert _column_times(body, columns_world, "direct_column_lineage") == {
        (COLS_SRC, COLS_DST, "v", "n"): later,
        (COLS_SRC, COLS_DST, "w", "m"): first,
    }
    assert _column_times(body, columns_world, "indirect_column_lineage") == {
        (COLS_SRC, COLS_DST, "v", "n"): later,
    }


@pytest.mark.parametrize("granularity", ["OPERATION", "RUN", "JOB", "DATASET"])
async def test_column_sets_of_one_operation_in_a_window(
    lineage_client: httpx.AsyncClient, columns_world: LineageWorld, granularity: str
) -> None:
    """A window that starts between the operation's two events: what the later event named
    is in it, with the kind that event gave it; the earlier event's set is not (a pair it
    alone named, or a kind it alone gave)."""
    since = iso(COLS_AT[0] + (COLS_AT[1] - COLS_AT[0]) / 2)
    body = await _downstream_columns(
        lineage_client, columns_world.datasets[COLS_SRC], granularity, since=since
    )
    later = iso(COLS_AT[1])
    assert _column_times(body, columns_world, "direct_column_lineage") == {}
    assert _column_times(body, columns_world, "indirect_column_lineage") == {
        (COLS_SRC, COLS_DST, "v", "n"): later
    }


async def test_operation_column_edges_union_its_sets(
    lineage_client: httpx.AsyncClient, columns_world: LineageWorld, engine: AsyncEngine
) -> None:
    """An operation's column edges: a pair two of its sets hold once, with both kinds."""
    op = (await lineage_client.get(f"/v1/operations/{COLS_RUN}")).json()
    edges = {(e["source_column"], e["target_column"], *e["types"]) for e in op["column_lineage"]}
    assert edges == {("v", "n", "DIRECT", "INDIRECT"), ("w", "m", "DIRECT")}
    async with engine.connect() as conn:
        stored = await conn.execute(
            text("SELECT count(*) FROM column_lineage WHERE operation_id = :o"), {"o": COLS_RUN}
        )
        assert stored.scalar_one() == 2  # one row per set


async def test_node_details(lineage_client: httpx.AsyncClient, lineage_world: LineageWorld) -> None:
    params = {
        "start_node_type": "RUN",
        "start_node_id": str(APP_RUN),
        "granularity": "RUN",
        "direction": "DOWNSTREAM",
    }
    nodes = (await lineage_client.get("/v1/lineage", params=params)).json()["nodes"]
    runs = {r["id"]: r for r in nodes["runs"]}
    app = runs[str(APP_RUN)]
    assert (app["status"], app["external_id"]) == ("SUCCEEDED", "application_1_0001")
    assert (app["started_at"], app["ended_at"]) == (iso(T0 + minutes(2)), iso(T0 + minutes(15)))
    jobs = {j["name"]: j for j in nodes["jobs"]}
    assert jobs["sales_app"]["type"] == "SPARK_APPLICATION"
    assert jobs["sales_dag.run_spark"]["type"] == "AIRFLOW_TASK"
    assert jobs["sales_dag"]["type"] == "AIRFLOW_DAG"
    datasets = {d["name"]: d for d in nodes["datasets"]}
    clean = datasets[CLEAN_TABLE]
    assert clean["location"]["type"] == "hive"
    assert [f["name"] for f in clean["schema"]["fields"]] == ["id", "amount", "ts"]
    path_location = datasets[CLEAN_PATH]["location"]
    assert (path_location["type"], path_location["name"]) == ("hdfs", "lin-nn:8020")
