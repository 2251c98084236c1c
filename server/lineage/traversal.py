"""State of one breadth-first lineage expansion: nodes, node budget, visited sets, relations.

No I/O (an admission's new nodes are sorted natively when the module is installed). The
graph is explored as two independent searches that run in lockstep, one per direction: a
node is expanded downstream at most once and upstream at most once, so cycles end and nodes
never repeat. BOTH is the union of UPSTREAM and DOWNSTREAM from the start nodes, not
"everything connected": a downstream dataset's other producers are not pulled in.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from server.lineage import native
from server.lineage.model import (
    IORelation,
    NodeKind,
    NodeRef,
    RelationKind,
    SymlinkRelation,
    node_ref,
    order_key,
)

DOWN, UP = "down", "up"
NATIVE_FRESH = native.fresh_refs()


@dataclass(slots=True)
class Traversal:
    max_nodes: int
    nodes: dict[NodeRef, None] = field(default_factory=dict)  # insertion-ordered set
    expanded: dict[str, set[NodeRef]] = field(default_factory=lambda: {DOWN: set(), UP: set()})
    relations: dict[tuple[RelationKind, NodeRef, NodeRef], IORelation] = field(default_factory=dict)
    symlinks: dict[tuple[int, int], SymlinkRelation] = field(default_factory=dict)
    twins: dict[int, set[int]] = field(default_factory=dict)  # dataset -> symlinked datasets
    schemas: dict[int, tuple[datetime, int]] = field(default_factory=dict)  # (seen, schema)
    truncated: bool = False

    def __contains__(self, ref: NodeRef) -> bool:
        return ref in self.nodes

    def admit(
        self, refs: Iterable[NodeRef], new: native.FreshRefs | None = NATIVE_FRESH
    ) -> list[NodeRef]:
        """Add new nodes in a stable order while the budget lasts; return those added (`new`
        finds and orders them natively; None: in Python)."""
        if new is not None:
            fresh: list[NodeRef] = new(refs, self.nodes)
        else:
            fresh = sorted({r for r in refs if r not in self.nodes}, key=order_key)
        room = self.max_nodes - len(self.nodes)
        if len(fresh) > room:
            self.truncated = True
            fresh = fresh[: max(room, 0)]
        self.nodes.update(dict.fromkeys(fresh))
        return fresh

    def add_relation(self, relation: IORelation) -> None:
        """Keep a relation only when both ends made it into the graph (the cap may cut one)."""
        if relation.source in self.nodes and relation.target in self.nodes:
            self.relations.setdefault(relation.key, relation)

    def add_symlink(self, symlink: SymlinkRelation) -> None:
        source = node_ref(NodeKind.DATASET, symlink.source_id)
        target = node_ref(NodeKind.DATASET, symlink.target_id)
        if source in self.nodes and target in self.nodes:
            self.symlinks.setdefault((symlink.source_id, symlink.target_id), symlink)
            self.twins.setdefault(symlink.source_id, set()).add(symlink.target_id)
            self.twins.setdefault(symlink.target_id, set()).add(symlink.source_id)

    def with_twins(self, refs: Iterable[NodeRef]) -> set[NodeRef]:
        """A dataset and its symlinked twins are one node for expansion purposes (`refs`
        itself if it is a set and no twin is added: callers do not change it)."""
        given = refs if isinstance(refs, set) else set(refs)
        twins, dataset = self.twins, NodeKind.DATASET
        # The shorter loop: a RUN graph's levels claim thousands of runs and few datasets
        # have twins, a DATASET graph's the reverse. A plain (kind, id) tuple equals and
        # hashes as its NodeRef. Twins of twins are not followed (one hop).
        if len(twins) <= len(given):
            found = [t for d, ts in twins.items() if (dataset, d) in given for t in ts]
        else:
            found = [t for r in given if r.kind == dataset for t in twins.get(int(r.id), ())]
        if not found:
            return given
        return given.union([node_ref(dataset, t) for t in found])

    def claim(self, direction: str, refs: Iterable[NodeRef]) -> set[NodeRef]:
        """The graph nodes among `refs` not yet expanded in `direction`, now marked expanded."""
        todo = self.with_twins(refs) & self.nodes.keys()
        todo -= self.expanded[direction]
        self.expanded[direction].update(todo)
        return todo

    def note_schemas(self, found: Iterable[tuple[int, datetime, int | None]]) -> None:
        """Keep the most recently seen schema of each dataset among the relations found, from
        (dataset id, seen, schema id) triples, later ones winning ties (an I/O level gives
        each dataset's latest only: levels.io_level)."""
        schemas = self.schemas
        for dataset_id, seen, schema_id in found:
            if schema_id is None:
                continue
            known = schemas.get(dataset_id)
            if known is None or seen >= known[0]:
                schemas[dataset_id] = (seen, schema_id)

    def latest_schema(self, dataset_id: int) -> int | None:
        """The dataset's latest schema on the graph's relations, else its symlink twin's (the
        consumer records the I/O of a Hive table's path on the table)."""
        candidates = [self.schemas.get(dataset_id)]
        candidates += [self.schemas.get(t) for t in sorted(self.twins.get(dataset_id, ()))]
        return next((c[1] for c in candidates if c is not None), None)

    def of_kind(self, kind: NodeKind) -> list[NodeRef]:
        return [ref for ref in self.nodes if ref.kind is kind]
