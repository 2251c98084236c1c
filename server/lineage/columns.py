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
from server.lineage.sql import Connection, Record
from server.lineage.traversal import Traversal

Pairs = set[tuple[int, NodeId]]  # (dataset id, process id)


async def column_lineage(
    conn: Connection, request: LineageRequest, trav: Traversal
) -> list[ColumnEdge]:
    """Column lineage of the graph's dataset pairs, through relations the graph holds."""
    datasets = [int(ref.id) for ref in trav.of_kind(NodeKind.DATASET)]
    if request.granularity is Granularity.DATASET:
        rows = await queries.list_column_lineage(conn, None, datasets, None, request.window)
        return _union_columns([r for r in rows if _has_dataset_edge(trav, r)])
    kind = NodeKind(request.granularity.value)
    processes = [ref.id for ref in trav.of_kind(kind)]
    rows = await queries.list_column_lineage(
        conn, queries.PROCESS_COLUMN[kind], datasets, processes, request.window
    )
    read, written = _process_pairs(trav, kind)
    return _union_columns(
        [
            r
            for r in rows
            if (r["source_dataset_id"], r["process_id"]) in read
            and (r["target_dataset_id"], r["process_id"]) in written
        ]
    )


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


def _process_pairs(trav: Traversal, kind: NodeKind) -> tuple[Pairs, Pairs]:
    """The graph's (dataset, process) inputs and outputs at `kind`, each dataset with its
    symlink twins (one hop, as `Traversal.with_twins`): a row whose process read its source
    (or a twin of it) and wrote its target (or a twin) in the graph is lineage through the
    graph. Two set lookups per row, where a check per row built its refs and twin sets (a
    depth-3 RUN graph from a job brings ~1,000 rows)."""
    twins = trav.twins
    read: Pairs = set()
    written: Pairs = set()
    for relation, source, target in trav.relations:
        if relation is RelationKind.INPUT and target.kind is kind:
            dataset, pairs, process = int(source.id), read, target.id
        elif relation is RelationKind.OUTPUT and source.kind is kind:
            dataset, pairs, process = int(target.id), written, source.id
        else:
            continue
        pairs.add((dataset, process))
        pairs.update((twin, process) for twin in twins.get(dataset, ()))
    return read, written


def _union_columns(rows: Sequence[Record]) -> list[ColumnEdge]:
    """One edge per (source, target, columns): types OR-ed, latest time kept, over processes."""
    merged: dict[tuple[int, int, str, str], ColumnEdge] = {}
    for row in rows:
        key = (
            row["source_dataset_id"],
            row["target_dataset_id"],
            row["source_column"],
            row["target_column"],
        )
        old = merged.get(key)
        types = row["types"] | (old.types if old else 0)
        last = max(row["last_seen_at"], old.last_seen_at) if old else row["last_seen_at"]
        merged[key] = ColumnEdge(*key, types=types, last_seen_at=last)
    return [merged[key] for key in sorted(merged)]
