"""One expansion step's rows -> the nodes it reached and (lazily) the relations it found.

A level's rows are kept as they came: a relation object is made only for an edge whose two
ends the traversal admitted. Under the node cap most rows of a wide level are cut, and
with all history at RUN granularity a level can return tens of thousands of rows.
"""

from collections import defaultdict
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import datetime

from server.lineage import native
from server.lineage.model import IORelation, NodeKind, NodeRef, RelationKind, make, node_ref
from server.lineage.native import AddRelations, FillIOLevel
from server.lineage.sql import Record
from server.lineage.traversal import DOWN, UP, Traversal

# (relation kind, source, target, the row carrying its counters and times)
Edge = tuple[RelationKind, NodeRef, NodeRef, Record]
NATIVE_ADD = native.relation_adder()
NATIVE_FILL = native.io_level_filler()
NATIVE_DECLINES = native.declines()


@dataclass(slots=True)
class Level:
    """What one expansion step found, per direction."""

    edges: list[Edge] = field(default_factory=list)
    reached: dict[str, list[NodeRef]] = field(default_factory=lambda: defaultdict(list))
    members: dict[str, list[NodeRef]] = field(default_factory=lambda: defaultdict(list))
    schemas: list[tuple[int, datetime, int]] = field(default_factory=list)
    # (from_dataset_id, to_dataset_id, type) reachable from the datasets reached
    symlinks: Sequence[Record] = ()
    capped: bool = False

    def add_relations(self, trav: Traversal, add: AddRelations | None = NATIVE_ADD) -> None:
        """Relations whose two ends are in the graph; the first found of a key is kept
        (natively when the module is installed)."""
        nodes, relations = trav.nodes, trav.relations
        if add is not None:
            add(self.edges, nodes, relations)
            return
        for kind, source, target, row in self.edges:
            key = (kind, source, target)
            if source in nodes and target in nodes and key not in relations:
                relations[key] = _relation(kind, source, target, row)


def io_level(
    rows: Sequence[Record],
    kind: NodeKind,
    process: NodeKind,
    fill: FillIOLevel | None = NATIVE_FILL,
) -> Level:
    """Rows of `queries.io_level_statement`: dataset <-> process edges of one step (natively
    when the module is installed, unless it declines a row)."""
    from_datasets = kind is NodeKind.DATASET
    finer = not from_datasets and kind is not process  # a job's runs, a run's operations
    if fill is not None:
        with suppress(NATIVE_DECLINES):  # declined: the Python code below, on a fresh level
            level = Level()
            fill(rows, level, from_datasets=from_datasets, finer=finer, process=process)
            return level
    level = Level()
    reached, members, edges = level.reached, level.members, level.edges
    # A level names few datasets many times (every run of a job writes the same ones).
    datasets: dict[int, NodeRef] = {}
    # Each dataset's latest (dataset id, seen, schema id), later rows winning ties: all that
    # Traversal.note_schemas keeps of them, from a few dozen triples instead of one per row.
    latest: dict[int, tuple[int, datetime, int]] = {}
    read = {DOWN: from_datasets, UP: not from_datasets}  # did the process read the dataset?
    for row in rows:
        # By position (see _relation); symlink columns may follow.
        direction, dataset_id, process_id = row[0], row[1], row[2]
        last_seen_at, schema_id = row[8], row[9]
        dataset = datasets.get(dataset_id) or datasets.setdefault(
            dataset_id, node_ref(NodeKind.DATASET, dataset_id)
        )
        proc = node_ref(process, process_id)
        if schema_id is not None:
            kept = latest.get(dataset_id)
            if kept is None or last_seen_at >= kept[1]:
                latest[dataset_id] = (dataset_id, last_seen_at, schema_id)
        if read[direction]:
            edges.append((RelationKind.INPUT, dataset, proc, row))
        else:
            edges.append((RelationKind.OUTPUT, proc, dataset, row))
        if from_datasets:
            reached[direction].append(proc)
            continue
        reached[direction].append(dataset)
        if finer:
            members[direction].append(proc)
    level.schemas.extend(latest.values())
    return level


def dataset_level(rows: Sequence[Record]) -> Level:
    """Rows of `queries.dataset_level_statement`: dataset -> dataset edges of one step."""
    level = Level()
    for row in rows:
        direction, source_id, target_id = row[0], row[1], row[2]
        source = node_ref(NodeKind.DATASET, source_id)
        target = node_ref(NodeKind.DATASET, target_id)
        level.edges.append((RelationKind.DATASET, source, target, row))
        last_seen_at, source_schema_id, target_schema_id = row[8], row[9], row[10]
        if source_schema_id is not None:
            level.schemas.append((source_id, last_seen_at, source_schema_id))
        if target_schema_id is not None:
            level.schemas.append((target_id, last_seen_at, target_schema_id))
        level.reached[direction].append(target if direction == DOWN else source)
    return level


def _relation(kind: RelationKind, source: NodeRef, target: NodeRef, row: Record) -> IORelation:
    # Both level statements end with: num_rows, num_bytes, num_files, types, first_seen_at,
    # last_seen_at (then their schema columns): IORelation's fields in its order.
    counters, types, seen = row[3:6], row[6], row[7:9]
    output_types = types if kind is not RelationKind.INPUT else None
    return make(IORelation, (kind, source, target, *counters, output_types, *seen))
