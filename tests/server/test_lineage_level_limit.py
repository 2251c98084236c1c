"""A level's row limit (service.ROWS_PER_NODE per allowed node) bounds the rows the level
returns, not the symlinks of the datasets it reached, and a level it cuts truncates the
graph."""

import pytest

from server.lineage import queries, service
from server.lineage.model import (
    Direction,
    Granularity,
    LineageRequest,
    NodeId,
    NodeKind,
    NodeRef,
    TimeWindow,
)
from server.lineage.queries import DOWN
from server.lineage.sql import Connection
from tests.server.lineage_conftest import LineageWorld, conn, lineage_world
from tests.server.lineage_scenarios import FAN_RUN, FAN_SOURCE, FAN_WIDTH, SYM_WRITER

pytestmark = pytest.mark.db
__all__ = ["conn", "lineage_world"]  # fixtures used by name


@pytest.mark.parametrize("row_limit", [1, 5, FAN_WIDTH, FAN_WIDTH + 1])
async def test_a_level_returns_at_most_its_row_limit(
    conn: Connection, lineage_world: LineageWorld, row_limit: int
) -> None:
    window = TimeWindow()
    parts = service.io_parts(NodeKind.RUN, NodeKind.RUN, (DOWN,))
    written = await queries.list_io_level(conn, parts, {DOWN: [FAN_RUN]}, window, row_limit)
    source = lineage_world.datasets[FAN_SOURCE]
    edges = await queries.list_dataset_level(conn, {DOWN: [source]}, window, row_limit)
    # The fan run wrote FAN_WIDTH tables: one row each, from the run and from its source.
    for level in (written, edges):
        assert len(level.rows) == min(row_limit, FAN_WIDTH)
        assert level.symlinks == []


@pytest.mark.parametrize("row_limit", [1, FAN_WIDTH + 1])
async def test_the_symlinks_of_a_level_cut_by_its_limit_still_come(
    conn: Connection, lineage_world: LineageWorld, row_limit: int
) -> None:
    # The symlink writer's path (a Hive table's location: a link each way) and the fan
    # run's tables: the closure is of every dataset the level reached, kept or not.
    parts = service.io_parts(NodeKind.RUN, NodeKind.RUN, (DOWN,))
    frontier: dict[str, list[NodeId]] = {DOWN: [FAN_RUN, SYM_WRITER]}
    level = await queries.list_io_level(conn, parts, frontier, TimeWindow(), row_limit)
    assert len(level.rows) == min(row_limit, FAN_WIDTH + 1)
    assert len(level.symlinks) == 2


@pytest.mark.parametrize("granularity", list(Granularity))
@pytest.mark.parametrize("direction", [Direction.DOWNSTREAM, Direction.BOTH])
async def test_a_level_cut_by_its_row_limit_truncates_the_graph(
    conn: Connection,
    lineage_world: LineageWorld,
    granularity: Granularity,
    direction: Direction,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    request = LineageRequest(
        start_kind=NodeKind.DATASET,
        start_ids=(lineage_world.datasets[FAN_SOURCE],),
        direction=direction,
        depth=2,
        granularity=granularity,
        window=TimeWindow(),
        include_column_lineage=False,
        max_nodes=1000,  # every node of the fan fits
    )
    whole = await service.get_lineage(conn, request)
    assert whole.truncated is False
    monkeypatch.setattr(service, "ROWS_PER_NODE", 0)  # a row limit of 1
    cut = await service.get_lineage(conn, request)
    assert cut.truncated is True
    assert len(cut.datasets) < len(whole.datasets) == FAN_WIDTH + 1
    kept = {NodeRef(NodeKind.DATASET, n.id) for n in cut.datasets}
    kept |= {NodeRef(NodeKind.RUN, n.id) for n in cut.runs}
    kept |= {NodeRef(NodeKind.JOB, n.id) for n in cut.jobs}
    kept |= {NodeRef(NodeKind.OPERATION, n.id) for n in cut.operations}
    assert {end for r in cut.relations for end in (r.source, r.target)} <= kept
