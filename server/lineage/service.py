"""Lineage graphs: breadth-first expansion in SQL, one round trip per level.

Depth counts relation hops, as Data.Rentgen does: at OPERATION / RUN / JOB granularity
dataset -> process is one level and process -> dataset the next, so
dataset -> run -> dataset is depth 2; at DATASET granularity dataset -> dataset is one
level. Symlinks and parent relations never cost a level. The node cap stops the search
(flagging `truncated`) instead of letting a wide graph run into the statement timeout.
"""

from collections import defaultdict
from collections.abc import Sequence
from itertools import chain

from server.lineage import node_queries, queries
from server.lineage.assemble import assemble_graph
from server.lineage.columns import column_lineage
from server.lineage.levels import Level, dataset_level, io_level
from server.lineage.model import (
    Direction,
    Granularity,
    LineageGraph,
    LineageRequest,
    NodeId,
    NodeKind,
    NodeRef,
    SymlinkRelation,
    make,
)
from server.lineage.prefetch import RunPrefetch, Spare
from server.lineage.sql import Connection, Record
from server.lineage.traversal import DOWN, UP, Traversal

# A level may return at most this many relation rows per allowed node: enough for any
# graph that fits the cap, and a bound on what one pathological hub can cost.
ROWS_PER_NODE = 20


async def get_lineage(
    conn: Connection, request: LineageRequest, spare: Spare | None = None
) -> LineageGraph:
    """The lineage graph around the start nodes (NotFoundError if one does not exist);
    `spare`: a second connection, if the pool has one idle, for loading runs meanwhile."""
    trav = Traversal(request.max_nodes)
    start = trav.admit(NodeRef(request.start_kind, i) for i in request.start_ids)
    prefetch = RunPrefetch(spare)
    try:
        await _expand(conn, request, trav, start, prefetch)
        graph = await assemble_graph(conn, request, trav, prefetch)
    finally:
        await prefetch.close()
    if request.include_column_lineage:
        graph.columns = await column_lineage(conn, request, trav)
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
    conn: Connection,
    request: LineageRequest,
    trav: Traversal,
    start: list[NodeRef],
    prefetch: RunPrefetch,
) -> None:
    directions = _directions(request.direction)
    first = await _start_level(conn, request, trav, start, directions)
    frontier = {d: trav.claim(d, start) for d in directions}
    kind = request.start_kind
    for _ in range(request.depth):
        if trav.truncated or not any(frontier.values()):
            return
        if first is not None and all({r.id for r in f} == first[1] for f in frontier.values()):
            level = first[0]
        else:
            prefetch.start(trav)  # the runs found so far, while this level is fetched
            level = await _level(conn, request, kind, frontier)
        first = None
        for direction, members in level.members.items():
            trav.admit(members)
            trav.claim(direction, members)  # their relations are in this level already
        admitted = trav.admit(chain.from_iterable(level.reached.values()))
        # Relations are built only now, for the edges whose two ends made it into the
        # graph: a level cut by the cap may return many more rows than it keeps.
        level.add_relations(trav)
        trav.note_schemas(level.schemas)
        _admit_symlinks(trav, admitted, level.symlinks)
        trav.truncated |= level.capped
        frontier = {d: trav.claim(d, level.reached.get(d, ())) for d in frontier}
        kind = _next_kind(request.granularity, kind)


def _next_kind(granularity: Granularity, kind: NodeKind) -> NodeKind:
    if granularity is Granularity.DATASET or kind is not NodeKind.DATASET:
        return NodeKind.DATASET
    return NodeKind(granularity.value)


async def _start_level(
    conn: Connection,
    request: LineageRequest,
    trav: Traversal,
    start: list[NodeRef],
    directions: tuple[str, ...],
) -> tuple[Level, set[NodeId]] | None:
    """Admit the start datasets' symlinked datasets (and theirs, transitively) without
    spending a level. The first level comes in the same round trip, expanded from the whole
    symlink closure: returned with the closure's ids, it is the first level if that is the
    frontier (a cap that cut a twin, or a chain of symlinks longer than one hop, which
    `Traversal.claim` does not follow, make it another: the service then fetches it)."""
    datasets = sorted(int(r.id) for r in start if r.kind is NodeKind.DATASET)
    if not datasets:
        return None
    if trav.truncated or request.depth < 1:
        _admit_symlinks(trav, start, await node_queries.list_symlink_closure(conn, datasets))
        return None
    every = {d: set[NodeRef]() for d in directions}
    level = await _level(conn, request, NodeKind.DATASET, every, datasets)
    _admit_symlinks(trav, start, level.symlinks)
    return level, _closure(datasets, level.symlinks)


def _closure(datasets: list[int], symlinks: Sequence[Record]) -> set[NodeId]:
    """The datasets and all those their symlinks reach, transitively (no cap)."""
    links = _links(symlinks)
    found: set[NodeId] = set(datasets)
    pending = list(datasets)
    while pending:
        fresh = [t for source in pending for t, _ in links.get(source, ()) if t not in found]
        found.update(fresh)
        pending = fresh
    return found


def _admit_symlinks(trav: Traversal, refs: list[NodeRef], closure: Sequence[Record]) -> None:
    """Admit the symlinked datasets of `refs` from `closure`, the symlink rows reachable from
    them (or from more datasets), hop by hop in the same order and under the same cap as one
    query per hop would."""
    pending = sorted(int(r.id) for r in refs if r.kind is NodeKind.DATASET)
    if not pending or not closure:
        return
    links = _links(closure)
    while pending:
        hop = [(source, *link) for source in pending for link in links.get(source, ())]
        added = trav.admit(NodeRef(NodeKind.DATASET, target) for _, target, _ in hop)
        for link in hop:  # (source, target, type): a SymlinkRelation's fields
            trav.add_symlink(make(SymlinkRelation, link))
        pending = sorted(int(r.id) for r in added)


def _links(symlinks: Sequence[Record]) -> dict[int, list[tuple[int, str]]]:
    """Symlink rows as {from_dataset_id: [(to_dataset_id, type), ...]}."""
    links: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for row in symlinks:
        links[row["from_dataset_id"]].append((row["to_dataset_id"], row["type"]))
    return links


async def _level(
    conn: Connection,
    request: LineageRequest,
    kind: NodeKind,
    frontier: dict[str, set[NodeRef]],
    start: list[int] | None = None,
) -> Level:
    """One level from `frontier` (by direction), or from the symlink closure of the `start`
    datasets in every direction `frontier` names (its refs then unused)."""
    ids: dict[str, list[NodeId]] = {
        d: sorted((ref.id for ref in refs), key=str)
        for d, refs in frontier.items()
        if refs or start
    }
    row_limit = ROWS_PER_NODE * request.max_nodes + 1
    window = request.window
    if request.granularity is Granularity.DATASET:
        found = await queries.list_dataset_level(conn, ids, window, row_limit, start)
        level = dataset_level(found.rows)
    else:
        process = NodeKind(request.granularity.value)
        parts = io_parts(kind, process, tuple(ids))
        found = await queries.list_io_level(conn, parts, ids, window, row_limit, start)
        level = io_level(found.rows, kind, process)
    level.symlinks = found.symlinks
    level.capped = len(found.rows) >= row_limit
    return level


def io_parts(
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
