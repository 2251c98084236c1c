"""Domain types of a lineage graph: what the service returns and the schemas render."""

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, NamedTuple, TypeVar
from uuid import UUID

from server.common.refs import LocationRef

NodeId = int | UUID

# Open time bounds as concrete values, so every query keeps the same shape (and the
# `created_at <= :until` bound still prunes partitions when the caller gives one).
MIN_TIME = datetime(1, 1, 1, tzinfo=UTC)
MAX_TIME = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)


class NodeKind(StrEnum):
    DATASET = "DATASET"
    JOB = "JOB"
    RUN = "RUN"
    OPERATION = "OPERATION"


class Direction(StrEnum):
    UPSTREAM = "UPSTREAM"
    DOWNSTREAM = "DOWNSTREAM"
    BOTH = "BOTH"


class Granularity(StrEnum):
    """What stands between two datasets: an operation, a run, a job, or nothing."""

    OPERATION = "OPERATION"
    RUN = "RUN"
    JOB = "JOB"
    DATASET = "DATASET"


class RelationKind(StrEnum):
    INPUT = "INPUT"  # dataset -> process that read it
    OUTPUT = "OUTPUT"  # process -> dataset it wrote
    DATASET = "DATASET"  # dataset -> dataset through one operation (DATASET granularity)


# Kinds whose ids are UUIDs (the others' are integers).
UUID_KINDS = frozenset({NodeKind.RUN, NodeKind.OPERATION})
# Finest first: a graph may be asked at the start node's own level or finer, never coarser.
PROCESS_LEVELS = (NodeKind.OPERATION, NodeKind.RUN, NodeKind.JOB)


class NodeRef(NamedTuple):
    """A node of any kind; a tuple so that graphs of thousands of nodes hash and sort fast
    (ids only ever compare within one kind, where they share a type)."""

    kind: NodeKind
    id: NodeId


# Calling a namedtuple class runs a Python-level __new__ behind the type call; a RUN graph
# makes tens of thousands of refs and relations, and these build the same tuples in about
# half the time.
_tuple_new = tuple.__new__
T = TypeVar("T", bound=tuple[Any, ...])


def node_ref(kind: NodeKind, ident: NodeId) -> NodeRef:
    """NodeRef(kind, ident), made faster."""
    return _tuple_new(NodeRef, (kind, ident))


def make(cls: type[T], values: Iterable[Any]) -> T:
    """`cls._make(values)` for a namedtuple class, without its length check (callers pass
    exactly the fields: a pair, or a row of a statement selecting them in order)."""
    return _tuple_new(cls, values)


def order_key(ref: NodeRef) -> tuple[str, int]:
    """Sorts like the NodeRef itself, without a Python-level UUID comparison per step
    (a UUID orders as its integer; sorting thousands of run refs was a visible cost)."""
    ident = ref.id
    return (ref.kind, ident.int if isinstance(ident, UUID) else ident)


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """Relations observed in [since, until]: first seen <= until and last seen >= since."""

    since: datetime = MIN_TIME
    until: datetime = MAX_TIME


@dataclass(frozen=True, slots=True)
class LineageRequest:
    start_kind: NodeKind
    start_ids: tuple[NodeId, ...]
    direction: Direction
    depth: int
    granularity: Granularity
    window: TimeWindow
    include_column_lineage: bool
    max_nodes: int


# The graph's nodes and relations are immutable tuples: a frozen dataclass's __init__ sets
# each field through object.__setattr__, ~1.5 µs a node here (5% of a small graph's server
# time went to building its datasets, jobs and symlinks).
class SchemaInfo(NamedTuple):
    id: int
    fields: Any


class DatasetNode(NamedTuple):
    id: int
    name: str
    format: str | None
    location: LocationRef
    schema: SchemaInfo | None


class JobNode(NamedTuple):
    id: int
    name: str
    type: str
    location: LocationRef
    parent_job_id: int | None


# Runs and operations come by the thousand: tuples built straight from their rows
# (node_queries selects the columns in this order). `status` is a shared.enums.Status value.
class RunNode(NamedTuple):
    id: UUID
    job_id: int
    parent_run_id: UUID | None
    status: int
    created_at: datetime
    started_at: datetime | None
    ended_at: datetime | None
    external_id: str | None
    attempt: int | None


class OperationNode(NamedTuple):
    id: UUID
    run_id: UUID
    name: str | None
    type: str | None
    status: int
    position: int | None
    group: str | None
    description: str | None
    created_at: datetime
    started_at: datetime | None
    ended_at: datetime | None


class ParentRelation(NamedTuple):
    parent: NodeRef
    child: NodeRef


class SymlinkRelation(NamedTuple):
    source_id: int
    target_id: int
    type: str


class IORelation(NamedTuple):
    """An input, output or dataset->dataset edge aggregated to the requested granularity
    (a tuple: a RUN graph has thousands)."""

    kind: RelationKind
    source: NodeRef
    target: NodeRef
    num_rows: int | None
    num_bytes: int | None
    num_files: int | None
    output_types: int | None  # OutputType bits; None for inputs
    first_seen_at: datetime
    last_seen_at: datetime

    @property
    def key(self) -> tuple[RelationKind, NodeRef, NodeRef]:
        return (self.kind, self.source, self.target)


@dataclass(frozen=True, slots=True)
class ColumnEdge:
    """Column lineage between two datasets of the graph, unioned over its processes."""

    source_dataset_id: int
    target_dataset_id: int
    source_column: str
    target_column: str
    types: int  # ColumnLineageType bits
    last_seen_at: datetime


@dataclass(slots=True)
class LineageGraph:
    datasets: list[DatasetNode] = field(default_factory=list)
    jobs: list[JobNode] = field(default_factory=list)
    runs: list[RunNode] = field(default_factory=list)
    operations: list[OperationNode] = field(default_factory=list)
    parents: list[ParentRelation] = field(default_factory=list)
    symlinks: list[SymlinkRelation] = field(default_factory=list)
    relations: list[IORelation] = field(default_factory=list)
    columns: list[ColumnEdge] = field(default_factory=list)
    truncated: bool = False
