"""Lineage graphs: breadth-first expansion in SQL, one round trip per level.

Depth counts relation hops, as Data.Rentgen does: at OPERATION / RUN / JOB granularity
dataset -> process is one level and process -> dataset the next, so
dataset -> run -> dataset is depth 2; at DATASET granularity dataset -> dataset is one
level. Symlinks and parent relations never cost a level. The node cap stops the search
(flagging `truncated`) instead of letting a wide graph run into the statement timeout.
"""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Row
from sqlalchemy.ext.asyncio import AsyncSession

from server.lineage import node_queries, queries
from server.lineage.assemble import assemble_graph
from server.lineage.columns import column_lineage
from server.lineage.model import (
    Direction,
    Granularity,
    IORelation,
    LineageGraph,
    LineageRequest,
    NodeId,
    NodeKind,
    NodeRef,
    RelationKind,
    SymlinkRelation,
)
from server.lineage.traversal import DOWN, UP, Traversal

# A level may return at most this many relation rows per allowed node: enough for any
# graph that fits the cap, and a bound on what one pathological hub can cost.
ROWS_PER_NODE = 20


@dataclass(slots=True)
class Level:
    """What one expansion step found, per direction."""

    relations: list[IORelation] = field(default_factory=list)
    reached: dict[str, list[NodeRef]] = field(default_factory=lambda: defaultdict(list))
    members: dict[str, list[NodeRef]] = field(default_factory=lambda: defaultdict(list))
    schemas: list[tuple[int, datetime, int | None]] = field(default_factory=list)
    capped: bool = False


async def get_lineage(session: AsyncSession, request: LineageRequest) -> LineageGraph:
    """The lineage graph around the start nodes (NotFoundError if one does not exist)."""
    await queries.tune_session(session)
    trav = Traversal(request.max_nodes)
    start = trav.admit(NodeRef(request.start_kind, i) for i in request.start_ids)
    await _follow_symlinks(session, trav, start)
    await _expand(session, request, trav, start)
    graph = await assemble_graph(session, request, trav)
    if request.include_column_lineage:
        graph.columns = await column_lineage(session, request, trav)
    return cap_relations(graph, RELATIONS_PER_NODE * request.max_nodes)


# The node cap alone does not bound the body: a few hub nodes can carry tens of
# thousands of relations. Beyond this many per allowed node the graph is cut too.
RELATIONS_PER_NODE = 10


def cap_relations(graph: LineageGraph, limit: int) -> LineageGraph:
    """Keep at most `limit` I/O relations and `limit` column edges; flag `truncated` if cut."""
    if len(graph.relations) > limit:
        graph.relations = graph.relations[:limit]
        graph.truncated = True
    if len(graph.columns) > limit:
        graph.columns = graph.columns[:limit]
        graph.truncated = True
    return graph


def _directions(direction: Direction) -> tuple[str, ...]:
    return {Direction.DOWNSTREAM: (DOWN,), Direction.UPSTREAM: (UP,)}.get(direction, (DOWN, UP))


async def _expand(
    session: AsyncSession, request: LineageRequest, trav: Traversal, start: list[NodeRef]
) -> None:
    frontier = {d: trav.claim(d, start) for d in _directions(request.direction)}
    kind = request.start_kind
    for _ in range(request.depth):
        if trav.truncated or not any(frontier.values()):
            return
        level = await _level(session, request, kind, frontier)
        for direction, members in level.members.items():
            trav.admit(members)
            trav.claim(direction, members)  # their relations are in this level already
        admitted = trav.admit(ref for refs in level.reached.values() for ref in refs)
        for relation in level.relations:
            trav.add_relation(relation)
        for dataset_id, seen, schema_id in level.schemas:
            trav.note_schema(dataset_id, seen, schema_id)
        await _follow_symlinks(session, trav, admitted)
        trav.truncated |= level.capped
        frontier = {d: trav.claim(d, level.reached.get(d, ())) for d in frontier}
        kind = _next_kind(request.granularity, kind)


def _next_kind(granularity: Granularity, kind: NodeKind) -> NodeKind:
    if granularity is Granularity.DATASET or kind is not NodeKind.DATASET:
        return NodeKind.DATASET
    return NodeKind(granularity.value)


async def _follow_symlinks(session: AsyncSession, trav: Traversal, refs: list[NodeRef]) -> None:
    """Add symlinked datasets (and theirs, transitively) without spending a level."""
    pending = sorted(int(r.id) for r in refs if r.kind is NodeKind.DATASET)
    while pending:
        rows = await node_queries.list_symlinks(session, pending)
        added = trav.admit(NodeRef(NodeKind.DATASET, row.to_dataset_id) for row in rows)
        for row in rows:
            trav.add_symlink(SymlinkRelation(row.from_dataset_id, row.to_dataset_id, row.type))
        pending = sorted(int(r.id) for r in added)


async def _level(
    session: AsyncSession,
    request: LineageRequest,
    kind: NodeKind,
    frontier: dict[str, set[NodeRef]],
) -> Level:
    ids: dict[str, list[NodeId]] = {
        d: sorted((ref.id for ref in refs), key=str) for d, refs in frontier.items() if refs
    }
    row_limit = ROWS_PER_NODE * request.max_nodes + 1
    if request.granularity is Granularity.DATASET:
        rows = await queries.list_dataset_level(session, ids, request.window, row_limit)
        level = _dataset_level(rows)
    else:
        process = NodeKind(request.granularity.value)
        parts = _io_parts(kind, process, tuple(ids))
        rows = await queries.list_io_level(session, parts, ids, request.window, row_limit)
        level = _io_level(rows, kind, process)
    level.capped = len(rows) >= row_limit
    return level


def _io_parts(
    kind: NodeKind, process: NodeKind, directions: tuple[str, ...]
) -> tuple[queries.IOPart, ...]:
    """Datasets expand through inputs (downstream) / outputs (upstream); processes the reverse."""
    group = queries.PROCESS_COLUMN[process]
    if kind is NodeKind.DATASET:
        tables = {DOWN: "input", UP: "output"}
        return tuple(queries.IOPart(tables[d], d, "dataset_id", group) for d in directions)
    tables = {DOWN: "output", UP: "input"}
    return tuple(
        queries.IOPart(tables[d], d, queries.PROCESS_COLUMN[kind], group) for d in directions
    )


def _io_level(rows: Sequence[Row[Any]], kind: NodeKind, process: NodeKind) -> Level:
    level = Level()
    for row in rows:
        dataset = NodeRef(NodeKind.DATASET, row.dataset_id)
        proc = NodeRef(process, row.process_id)
        level.schemas.append((row.dataset_id, row.last_seen_at, row.schema_id))
        reads = (row.dir == DOWN) == (kind is NodeKind.DATASET)
        if reads:
            level.relations.append(_relation(RelationKind.INPUT, dataset, proc, row))
        else:
            level.relations.append(_relation(RelationKind.OUTPUT, proc, dataset, row))
        if kind is NodeKind.DATASET:
            level.reached[row.dir].append(proc)
            continue
        level.reached[row.dir].append(dataset)
        if kind is not process:  # a job's runs / a run's operations: finer nodes of the start
            level.members[row.dir].append(proc)
    return level


def _dataset_level(rows: Sequence[Row[Any]]) -> Level:
    level = Level()
    for row in rows:
        source = NodeRef(NodeKind.DATASET, row.source_id)
        target = NodeRef(NodeKind.DATASET, row.target_id)
        level.relations.append(_relation(RelationKind.DATASET, source, target, row))
        level.schemas.append((row.source_id, row.last_seen_at, row.source_schema_id))
        level.schemas.append((row.target_id, row.last_seen_at, row.target_schema_id))
        level.reached[row.dir].append(target if row.dir == DOWN else source)
    return level


def _relation(kind: RelationKind, source: NodeRef, target: NodeRef, row: Row[Any]) -> IORelation:
    return IORelation(
        kind=kind,
        source=source,
        target=target,
        num_rows=row.num_rows,
        num_bytes=row.num_bytes,
        num_files=row.num_files,
        output_types=row.types if kind is not RelationKind.INPUT else None,
        first_seen_at=row.first_seen_at,
        last_seen_at=row.last_seen_at,
    )
