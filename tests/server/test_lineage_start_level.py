"""The first level from start datasets comes in one statement with their symlink closure; it
is used only where it is the level the two-step path (closure, then level) fetches."""

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from server.lineage import node_queries, queries, service, sql
from server.lineage.model import (
    Direction,
    Granularity,
    LineageRequest,
    NodeKind,
    NodeRef,
    TimeWindow,
)
from server.lineage.render import render_json
from server.lineage.sql import Connection, Record, Statement
from server.lineage.traversal import Traversal
from tests.server.lineage_conftest import LineageWorld, conn, lineage_world
from tests.server.lineage_scenarios import EVENTS_TABLE, STAR_A, STAR_B, STAR_PATH

pytestmark = pytest.mark.db
__all__ = ["conn", "lineage_world"]  # fixtures used by name


async def _two_step(
    conn: Connection,
    request: LineageRequest,
    trav: Traversal,
    start: list[NodeRef],
    directions: tuple[str, ...],
) -> None:
    """The reference: the start's symlink closure in a statement of its own, no level."""
    datasets = sorted(int(r.id) for r in start if r.kind is NodeKind.DATASET)
    if datasets:
        closure = await node_queries.list_symlink_closure(conn, datasets)
        service._admit_symlinks(trav, start, closure)


def _request(
    dataset: int, granularity: str, depth: int, direction: str, max_nodes: int
) -> LineageRequest:
    return LineageRequest(
        start_kind=NodeKind.DATASET,
        start_ids=(dataset,),
        direction=Direction(direction),
        depth=depth,
        granularity=Granularity(granularity),
        window=TimeWindow(),
        include_column_lineage=False,
        max_nodes=max_nodes,
    )


Fetch = Callable[..., Awaitable[list[Record]]]


async def _body_and_statements(
    conn: Connection, request: LineageRequest, *, two_step: bool = False
) -> tuple[bytes, int]:
    """The response body and how many statements the service ran for it."""
    statements = 0
    fetch: Fetch = sql.fetch

    async def counted(conn: Connection, statement: Statement, **params: Any) -> list[Record]:
        nonlocal statements
        statements += 1
        return await fetch(conn, statement, **params)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(queries, "fetch", counted)
        patch.setattr(node_queries, "fetch", counted)
        if two_step:
            patch.setattr(service, "_start_level", _two_step)
        body = render_json(await service.get_lineage(conn, request))
    return body, statements


async def _statements_saved(conn: Connection, request: LineageRequest) -> int:
    """How many statements fewer than the two-step path the service ran for `request`,
    after checking that both gave the same body."""
    folded, statements = await _body_and_statements(conn, request)
    reference, reference_statements = await _body_and_statements(conn, request, two_step=True)
    assert folded == reference, request
    return reference_statements - statements


async def test_every_start_dataset_gets_the_two_step_graph(
    conn: Connection, lineage_world: LineageWorld
) -> None:
    # Every dataset of the lineage scenarios (symlinked ones, the star's leaves and centre
    # among them), every granularity, under a cap that cuts twins and one that does not.
    compared = 0
    for dataset in sorted(lineage_world.datasets.values()):
        for granularity in ("DATASET", "JOB", "RUN", "OPERATION"):
            for depth, direction, cap in ((1, "BOTH", 2), (3, "BOTH", 1000), (2, "UPSTREAM", 4)):
                request = _request(dataset, granularity, depth, direction, cap)
                assert await _statements_saved(conn, request) in (0, 1)
                compared += 1
    assert compared >= 200


async def test_a_symlinked_table_costs_one_statement_less(
    conn: Connection, lineage_world: LineageWorld
) -> None:
    table = lineage_world.datasets[EVENTS_TABLE]
    assert await _statements_saved(conn, _request(table, "JOB", 3, "BOTH", 1000)) == 1


async def test_a_longer_symlink_chain_fetches_the_first_level_again(
    conn: Connection, lineage_world: LineageWorld
) -> None:
    # table_a -> path -> table_b: the closure has all three, the first frontier two (a
    # twin is one hop), so the folded level is not the first level and is fetched again:
    # one statement fewer for the closure, one more for the first level.
    leaf = lineage_world.datasets[STAR_A]
    request = _request(leaf, "RUN", 1, "DOWNSTREAM", 1000)
    assert await _statements_saved(conn, request) == 0
    graph = await service.get_lineage(conn, request)
    names = {lineage_world.datasets[n]: n for n in (STAR_A, STAR_B, STAR_PATH)}
    assert {names[d.id] for d in graph.datasets if d.id in names} == {STAR_A, STAR_B, STAR_PATH}
