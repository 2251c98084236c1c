"""Column lineage of a finished graph: only between its datasets, through its relations."""

from collections.abc import Sequence

from server.lineage import queries
from server.lineage.model import (
    ColumnEdge,
    Granularity,
    LineageRequest,
    NodeId,
    NodeKind,
    NodeRef,
    RelationKind,
)
from server.lineage.queries import ProcessPairs
from server.lineage.sql import Connection, Record
from server.lineage.traversal import Traversal


async def column_lineage(
    conn: Connection, request: LineageRequest, trav: Traversal
) -> list[ColumnEdge]:
    """Column lineage of the graph's dataset pairs, through relations the graph holds."""
    datasets = [int(ref.id) for ref in trav.of_kind(NodeKind.DATASET)]
    if request.granularity is Granularity.DATASET:
        rows = await queries.list_column_lineage(conn, None, datasets, None, request.window)
        return _edges([r for r in rows if _has_dataset_edge(trav, r)])
    kind = NodeKind(request.granularity.value)
    rows = await queries.list_column_lineage(
        conn, queries.PROCESS_COLUMN[kind], datasets, _process_pairs(trav, kind), request.window
    )
    return _edges(rows)


def _datasets_of(trav: Traversal, dataset_id: int) -> set[NodeRef]:
    # Column lineage may name a Hive table's path where the inputs name the table: the
    # two are one dataset to the graph, so either side of a symlink matches.
    return trav.with_twins({NodeRef(NodeKind.DATASET, dataset_id)})


def _has_dataset_edge(trav: Traversal, row: Record) -> bool:
    return any(
        (RelationKind.DATASET, source, target) in trav.relations
        for source in _datasets_of(trav, row["source_dataset_id"])
        for target in _datasets_of(trav, row["target_dataset_id"])
    )


def _process_pairs(trav: Traversal, kind: NodeKind) -> ProcessPairs:
    """The graph's (dataset, process) inputs and outputs at `kind`, each dataset with its
    symlink twins: a row whose source one of its processes read (or read as a twin) and
    whose target it wrote (or wrote as a twin) is lineage through the graph."""
    twins = trav.twins  # one hop, as Traversal.with_twins; a set per call cost ~1 µs a relation
    read: set[tuple[int, NodeId]] = set()
    written: set[tuple[int, NodeId]] = set()
    for relation, source, target in trav.relations:
        if relation is RelationKind.INPUT and target.kind is kind:
            dataset, pairs, process = int(source.id), read, target.id
        elif relation is RelationKind.OUTPUT and source.kind is kind:
            dataset, pairs, process = int(target.id), written, source.id
        else:
            continue
        pairs.add((dataset, process))
        pairs.update((twin, process) for twin in twins.get(dataset, ()))
    return ProcessPairs(
        processes=[ref.id for ref in trav.of_kind(kind)],
        read_datasets=[d for d, _ in read],
        readers=[p for _, p in read],
        written_datasets=[d for d, _ in written],
        writers=[p for _, p in written],
    )


def _edges(rows: Sequence[Record]) -> list[ColumnEdge]:
    """One edge per (source, target, columns), in that order: the statement aggregates the
    processes (types OR-ed, latest time kept)."""
    edges = [
        ColumnEdge(
            r["source_dataset_id"],
            r["target_dataset_id"],
            r["source_column"],
            r["target_column"],
            types=r["types"],
            last_seen_at=r["last_seen_at"],
        )
        for r in rows
    ]
    edges.sort(key=_edge_key)
    return edges


def _edge_key(edge: ColumnEdge) -> tuple[int, int, str, str]:
    return (edge.source_dataset_id, edge.target_dataset_id, edge.source_column, edge.target_column)
