"""Turn a finished traversal into a graph: load node details, attach parents, column lineage.

Parents (operation -> run -> job, run -> parent run, job -> parent job) are added after
the search: they describe the nodes found and never lead to more lineage. They still
count against the node cap, nearest first.
"""

from collections.abc import Collection
from contextlib import suppress
from operator import attrgetter
from typing import Any, TypeVar
from uuid import UUID

import orjson

from server.common.refs import LocationRef
from server.errors import NotFoundError
from server.lineage import native, node_queries
from server.lineage.model import (
    UUID_KINDS,
    DatasetNode,
    Granularity,
    IORelation,
    JobNode,
    LineageGraph,
    LineageRequest,
    NodeKind,
    NodeRef,
    OperationNode,
    ParentRelation,
    RunNode,
    SchemaInfo,
    make,
    node_ref,
    order_key,
)
from server.lineage.native import ParentsOf, RelationOrder
from server.lineage.node_queries import JOB_COLUMNS
from server.lineage.prefetch import RunPrefetch
from server.lineage.sql import Connection, Record
from server.lineage.traversal import Traversal

# Airflow DAG -> task -> Spark application is two hops; ten is generous, and bounded.
ANCESTOR_HOPS = 10
N = TypeVar("N", DatasetNode, JobNode, RunNode, OperationNode)


def _ids(trav: Traversal, kind: NodeKind) -> list[Any]:
    return [ref.id for ref in trav.of_kind(kind)]


async def assemble_graph(
    conn: Connection,
    request: LineageRequest,
    trav: Traversal,
    prefetch: RunPrefetch | None = None,
) -> LineageGraph:
    """The graph of `trav`'s nodes and relations, their details loaded (`prefetch`: runs
    being loaded on another connection)."""
    hops = 0 if request.granularity is Granularity.DATASET else ANCESTOR_HOPS
    operations = await _operations(conn, trav)
    runs = await _runs(conn, trav, hops, prefetch or RunPrefetch(None))
    jobs, datasets = await _jobs_and_datasets(conn, trav, hops)
    unloaded: set[NodeRef] = set()  # graph nodes whose row does not exist (any more)
    graph = LineageGraph(
        datasets=_present(datasets, trav, NodeKind.DATASET, unloaded),
        jobs=_present(jobs, trav, NodeKind.JOB, unloaded),
        runs=_present(runs, trav, NodeKind.RUN, unloaded),
        operations=_present(operations, trav, NodeKind.OPERATION, unloaded),
        truncated=trav.truncated,
    )
    _check_start(request, graph)
    _attach_relations(graph, trav, unloaded)
    return graph


def _present(
    loaded: dict[Any, N], trav: Traversal, kind: NodeKind, unloaded: set[NodeRef]
) -> list[N]:
    """The loaded nodes of a kind in node order; the others are added to `unloaded`."""
    ids = _ids(trav, kind)
    unloaded.update(node_ref(kind, i) for i in ids if i not in loaded)
    # One kind's ids share a type: sorted by value. A UUID by its bytes, big-endian: the order
    # of its integer (order_key's), but asyncpg's UUID makes its `int` anew on every call
    # (~2x the cost of its bytes: 0.23 against 0.10 ms for 1,100 runs).
    by_value = attrgetter("bytes") if kind in UUID_KINDS else None
    return [loaded[i] for i in sorted(ids, key=by_value) if i in loaded]


async def _operations(conn: Connection, trav: Traversal) -> dict[UUID, OperationNode]:
    ids = _ids(trav, NodeKind.OPERATION)
    if not ids:
        return {}
    rows = await node_queries.rows_by_id(conn, node_queries.list_operations, ids)
    operations = {op_id: make(OperationNode, row) for op_id, row in rows.items()}
    trav.admit(NodeRef(NodeKind.RUN, op.run_id) for op in operations.values())
    return operations


def _full(trav: Traversal) -> bool:
    """No ancestor can be admitted any more, and the graph already says it was cut."""
    return trav.truncated and len(trav.nodes) >= trav.max_nodes


async def _runs(
    conn: Connection, trav: Traversal, hops: int, prefetch: RunPrefetch
) -> dict[UUID, RunNode]:
    """The graph's runs (some perhaps loaded already: `prefetch`), then their parent runs hop
    by hop (one query per hop)."""
    found: dict[UUID, RunNode] = {}
    pending = set(_ids(trav, NodeKind.RUN))
    for hop in range(hops + 1):
        if not pending or (hop and _full(trav)):
            break
        if hop:
            rows = await node_queries.rows_by_id(conn, node_queries.list_runs, pending)
        else:
            rows = await prefetch.runs(conn, pending)
        level = [make(RunNode, row) for row in rows.values()]
        found.update((run.id, run) for run in level)
        if hop:  # nearest ancestors first, each with its job
            trav.admit(NodeRef(NodeKind.RUN, run.id) for run in level)
        # A plain (kind, id) tuple equals and hashes as its NodeRef, and is cheaper to make.
        admitted = [run for run in level if (NodeKind.RUN, run.id) in trav.nodes]
        trav.admit(NodeRef(NodeKind.JOB, i) for i in {run.job_id for run in admitted})
        pending = {r.parent_run_id for r in admitted if r.parent_run_id} - found.keys()
    return found


async def _jobs_and_datasets(
    conn: Connection, trav: Traversal, hops: int
) -> tuple[dict[int, JobNode], dict[int, DatasetNode]]:
    """The graph's jobs with their ancestors, and its datasets, in one round trip (admitting
    ancestors never adds datasets)."""
    pending = set(_ids(trav, NodeKind.JOB))
    ids = [int(i) for i in _ids(trav, NodeKind.DATASET)]
    schemas = [trav.latest_schema(i) for i in ids]
    if not pending:
        rows = await node_queries.list_datasets(conn, ids, schemas) if ids else []
        return {}, {row[0]: _dataset(row) for row in rows}
    job_rows, dataset_rows = await node_queries.list_jobs_and_datasets(
        conn, sorted(pending), hops, ids, schemas
    )
    datasets = {row[JOB_COLUMNS]: _dataset(row, JOB_COLUMNS) for row in dataset_rows}
    return _jobs(trav, pending, hops, {row[0]: _job(row) for row in job_rows}), datasets


def _jobs(
    trav: Traversal, pending: set[int], hops: int, loaded: dict[int, JobNode]
) -> dict[int, JobNode]:
    """The graph's jobs, then their parent jobs hop by hop, from the `loaded` ones."""
    found: dict[int, JobNode] = {}
    for hop in range(hops + 1):
        if not pending or (hop and _full(trav)):
            break
        level = [loaded[i] for i in pending if i in loaded]
        found.update((job.id, job) for job in level)
        if hop:
            trav.admit(NodeRef(NodeKind.JOB, job.id) for job in level)
        admitted = [job for job in level if NodeRef(NodeKind.JOB, job.id) in trav]
        pending = {j.parent_job_id for j in admitted if j.parent_job_id} - found.keys()
    return found


def _check_start(request: LineageRequest, graph: LineageGraph) -> None:
    found_by_kind: dict[NodeKind, set[Any]] = {
        NodeKind.DATASET: {n.id for n in graph.datasets},
        NodeKind.JOB: {n.id for n in graph.jobs},
        NodeKind.RUN: {n.id for n in graph.runs},
        NodeKind.OPERATION: {n.id for n in graph.operations},
    }
    found = found_by_kind[request.start_kind]
    missing = [str(i) for i in request.start_ids if i not in found]
    if missing:
        raise NotFoundError(request.start_kind.lower(), ", ".join(missing))


def _attach_relations(graph: LineageGraph, trav: Traversal, unloaded: set[NodeRef]) -> None:
    """Keep only relations whose two ends were loaded; parents from the loaded nodes."""
    keep: Collection[NodeRef] = trav.nodes.keys() - unloaded if unloaded else trav.nodes
    graph.parents = _parents(graph, keep)
    graph.relations = ordered_relations(list(trav.relations.values()), unloaded)
    graph.symlinks = sorted(trav.symlinks.values(), key=lambda s: (s.source_id, s.target_id))


NATIVE_ORDER = native.relation_order()
NATIVE_PARENTS = native.parents_maker()
NATIVE_DECLINES = native.declines()


def ordered_relations(
    relations: list[IORelation],
    unloaded: Collection[NodeRef],
    order: RelationOrder | None = NATIVE_ORDER,
) -> list[IORelation]:
    """The relations with neither end in `unloaded`, by kind, source and target (natively
    when the module is installed, unless it declines an id). Both ends of every relation
    are graph nodes (the traversal keeps no other), so only the unloaded ones can drop it."""
    if order is not None:
        with suppress(NATIVE_DECLINES):  # declined: the Python code below
            return order(relations, unloaded)
    kept = (r for r in relations if r.source not in unloaded and r.target not in unloaded)
    return sorted(kept, key=lambda r: (r.kind, *order_key(r.source), *order_key(r.target)))


def _parents(
    graph: LineageGraph, keep: Collection[NodeRef], made: ParentsOf | None = NATIVE_PARENTS
) -> list[ParentRelation]:
    """Parent relations of the graph's nodes to loaded parents, made in their sorted order
    (child, then parent kind) without a sort: each node list is sorted already, and kinds
    order DATASET < JOB < OPERATION < RUN. Natively when the module is installed."""
    if made is not None:
        return made(graph, keep)
    job, operation, run = NodeKind.JOB, NodeKind.OPERATION, NodeKind.RUN
    # The kept refs by kind and id: one dict lookup per parent end, the refs reused, instead of
    # making a ref to test and another to keep (2,754 parents of a 1,544-run graph: 19 M -> 10 M
    # instructions). Every node of `graph` is kept: its lists hold the loaded nodes only.
    kept: dict[NodeKind, dict[Any, NodeRef]] = {kind: {} for kind in NodeKind}
    for ref in keep:
        kept[ref.kind][ref.id] = ref
    jobs, runs = kept[job], kept[run]
    found: list[ParentRelation] = []
    add = found.append
    for j in graph.jobs:
        if j.parent_job_id is not None and (parent := jobs.get(j.parent_job_id)) is not None:
            add(make(ParentRelation, (parent, jobs[j.id])))
    for op in graph.operations:
        if (parent := runs.get(op.run_id)) is not None:
            add(make(ParentRelation, (parent, kept[operation][op.id])))
    for r in graph.runs:
        child = runs[r.id]
        if (parent := jobs.get(r.job_id)) is not None:
            add(make(ParentRelation, (parent, child)))
        if r.parent_run_id is not None and (parent := runs.get(r.parent_run_id)) is not None:
            add(make(ParentRelation, (parent, child)))
    return found


def _dataset(row: Record, at: int = 0) -> DatasetNode:
    """A dataset from the columns of `node_queries.list_datasets` at position `at` of `row`."""
    dataset_id, name, data_format, location_id, location_type, location_name = row[at : at + 6]
    schema_id, fields = row[at + 6], row[at + 7]
    schema = None if schema_id is None else make(SchemaInfo, (schema_id, orjson.loads(fields)))
    location = LocationRef(location_id, location_type, location_name)
    return make(DatasetNode, (dataset_id, name, data_format, location, schema))


def _job(row: Record) -> JobNode:
    """A job from the leading columns of a `node_queries.list_jobs_and_datasets` row (by
    position: the dataset columns that follow repeat some of their names)."""
    job_id, name, job_type, parent_job_id = row[:4]
    location_id, location_type, location_name = row[4:JOB_COLUMNS]
    location = LocationRef(location_id, location_type, location_name)
    return make(JobNode, (job_id, name, job_type, location, parent_job_id))
