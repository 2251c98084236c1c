"""LineageGraph (service dataclasses) -> the JSON body documented by `LineageResponse`.

A graph can hold thousands of nodes and relations; building and re-validating pydantic
models for them cost more than the SQL (about 0.1 ms per node), so the body is built as
plain dicts and serialised with orjson; the largest sections (runs, operations, parent and
I/O relations) are written natively when `threadline_native` is installed (`native.py`).
tests/server/test_lineage_api.py checks every body against `LineageResponse` so the two
cannot drift apart, and tests/server/test_native_render.py the native sections against
these functions.
"""

import sys
from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import suppress
from functools import cache
from typing import TYPE_CHECKING, Any
from uuid import UUID

import orjson

from server.common.refs import LocationRef
from server.lineage import native
from server.lineage.model import (
    ColumnEdge,
    DatasetNode,
    IORelation,
    JobNode,
    LineageGraph,
    NodeId,
    NodeKind,
    NodeRef,
    OperationNode,
    RelationKind,
    RunNode,
)
from shared.enums import ColumnLineageType, OutputType, Status

if TYPE_CHECKING:
    from threadline_native import Renderer

Json = dict[str, Any]
STATUS_NAMES = {status.value: status.name for status in Status}


@cache
def output_type_names(bits: int | None) -> list[str]:
    """Flag names of the bits, in declaration order (cached: a graph repeats a few values;
    callers must not mutate the list)."""
    return [t.name for t in OutputType if t.name and t & (bits or 0)]


class _Refs(dict[NodeRef, Json]):
    """One `{"kind", "id"}` object per node, shared by every relation end naming it."""

    def __missing__(self, ref: NodeRef) -> Json:
        body = self[ref] = {"kind": ref.kind, "id": _id(ref.id)}
        return body


def _id(value: NodeId) -> int | str:
    # asyncpg returns its own UUID subclass, which orjson does not know; str() is canonical.
    return str(value) if isinstance(value, UUID) else value


def _dataset_ref(dataset_id: int) -> Json:
    return {"kind": NodeKind.DATASET, "id": dataset_id}


def _location(location: LocationRef) -> Json:
    return {"id": location.id, "type": location.type, "name": location.name}


def _dataset(node: DatasetNode) -> Json:
    schema = node.schema and {"id": node.schema.id, "fields": node.schema.fields}
    return {
        "id": node.id,
        "name": node.name,
        "format": node.format,
        "location": _location(node.location),
        "schema": schema,
    }


def _job(node: JobNode) -> Json:
    return {
        "id": node.id,
        "name": node.name,
        "type": node.type,
        "location": _location(node.location),
        "parent_job_id": node.parent_job_id,
    }


# Runs and operations come by the thousand: one dict display per node, unpacked in field
# order, costs half of `_asdict()` and a status fix-up per node. Their UUIDs are made text
# here rather than by orjson's `default` hook, a Python call per value from C.
def _runs(nodes: list[RunNode]) -> list[Json]:
    names = STATUS_NAMES
    return [
        {
            "id": str(run_id),
            "job_id": job_id,
            "parent_run_id": None if parent_run_id is None else str(parent_run_id),
            "status": names[status],
            "created_at": created_at,
            "started_at": started_at,
            "ended_at": ended_at,
            "external_id": external_id,
            "attempt": attempt,
        }
        for (
            run_id,
            job_id,
            parent_run_id,
            status,
            created_at,
            started_at,
            ended_at,
            external_id,
            attempt,
        ) in nodes
    ]


def _operations(nodes: list[OperationNode]) -> list[Json]:
    names = STATUS_NAMES
    return [
        {
            "id": str(op_id),
            "run_id": str(run_id),
            "name": name,
            "type": op_type,
            "status": names[status],
            "position": position,
            "group": group,
            "description": description,
            "created_at": created_at,
            "started_at": started_at,
            "ended_at": ended_at,
        }
        for (
            op_id,
            run_id,
            name,
            op_type,
            status,
            position,
            group,
            description,
            created_at,
            started_at,
            ended_at,
        ) in nodes
    ]


def _io(relations: list[IORelation], refs: _Refs) -> dict[RelationKind, list[Json]]:
    """Relation bodies by kind, in the graph's order."""
    by_kind: dict[RelationKind, list[Json]] = {kind: [] for kind in RelationKind}
    for kind, source, target, rows, size, files, types, first_seen, last_seen in relations:
        body: Json = {
            "from": refs[source],
            "to": refs[target],
            "num_rows": rows,
            "num_bytes": size,
            "num_files": files,
            "first_seen_at": first_seen,
            "last_seen_at": last_seen,
        }
        if kind is not RelationKind.INPUT:
            body["types"] = output_type_names(types)
        by_kind[kind].append(body)
    return by_kind


def _columns(edges: Iterable[ColumnEdge], bit: ColumnLineageType) -> list[Json]:
    """Group column edges by dataset pair; an edge with no kind bits counts as direct."""
    pairs: dict[tuple[int, int], list[Json]] = defaultdict(list)
    for edge in edges:
        if (edge.types or ColumnLineageType.DIRECT) & bit:
            pairs[(edge.source_dataset_id, edge.target_dataset_id)].append(
                {
                    "source_column": edge.source_column,
                    "target_column": edge.target_column,
                    "last_seen_at": edge.last_seen_at,
                }
            )
    return [
        {"from": _dataset_ref(s), "to": _dataset_ref(t), "fields": fields}
        for (s, t), fields in sorted(pairs.items())
    ]


def _symlinks(graph: LineageGraph) -> list[Json]:
    return [
        {"from": _dataset_ref(s.source_id), "to": _dataset_ref(s.target_id), "type": s.type}
        for s in graph.symlinks
    ]


def _relations(graph: LineageGraph) -> Json:
    refs = _Refs()
    by_kind = _io(graph.relations, refs)
    return {
        "parents": [{"from": refs[parent], "to": refs[child]} for parent, child in graph.parents],
        "symlinks": _symlinks(graph),
        "inputs": by_kind[RelationKind.INPUT],
        "outputs": by_kind[RelationKind.OUTPUT],
        "dataset_lineage": by_kind[RelationKind.DATASET],
        "direct_column_lineage": _columns(graph.columns, ColumnLineageType.DIRECT),
        "indirect_column_lineage": _columns(graph.columns, ColumnLineageType.INDIRECT),
    }


def render(graph: LineageGraph) -> Json:
    nodes = {
        "datasets": [_dataset(n) for n in graph.datasets],
        "jobs": [_job(n) for n in graph.jobs],
        "runs": _runs(graph.runs),
        "operations": _operations(graph.operations),
    }
    return {"nodes": nodes, "relations": _relations(graph), "truncated": graph.truncated}


def _text(value: object) -> str:
    # asyncpg returns its own UUID subclass, which orjson does not know; str() is canonical.
    if isinstance(value, UUID):
        return str(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def _dumps(document: Json | list[Json]) -> bytes:
    return orjson.dumps(document, default=_text, option=orjson.OPT_UTC_Z)


NATIVE = native.renderer(STATUS_NAMES, output_type_names)
NATIVE_DECLINES = native.declines()


def render_json(graph: LineageGraph, renderer: "Renderer | None" = NATIVE) -> bytes:
    """The response body: times as RFC 3339 with Z, like pydantic's JSON elsewhere. Written
    by the native `renderer` when there is one, unless it declines a value (then the whole
    body is rendered here)."""
    if renderer is not None:
        with suppress(NATIVE_DECLINES):  # declined: the Python code below
            return native_body(graph, renderer)
    return _dumps(render(graph))


def native_body(graph: LineageGraph, renderer: "Renderer") -> bytes:
    """render_json's bytes, the runs, operations, parent and I/O relations written natively
    (each list in one call) and the small sections by orjson here."""
    return b"".join(_pieces(graph, renderer, sys.maxsize))


# A body of this many list items (runs, operations, parent and I/O relations: 0.1-0.35 KB
# each) or more is sent in pieces as it is written (`render_chunks`): the client reads the
# first pieces while the server writes the rest, on the machine's other core. Smaller bodies
# go whole, with their length, as before (the small graphs were not measured chunked).
STREAM_MIN_ITEMS = 2_000
# Items per native call, and the size of a piece sent (~1,000 items): 64 KiB and 1 MiB
# pieces were slower for the 3.6 MB bodies (benchmarks/README.md, thirty-sixth session).
STREAM_STEP = 1_000
CHUNK_BYTES = 256 << 10


def is_large(graph: LineageGraph) -> bool:
    """Whether `graph`'s body is sent in pieces (`render_chunks`)."""
    items = len(graph.runs) + len(graph.operations) + len(graph.parents) + len(graph.relations)
    return NATIVE is not None and items >= STREAM_MIN_ITEMS


def render_chunks(
    graph: LineageGraph,
    renderer: "Renderer | None" = NATIVE,
    step: int | None = None,
    chunk_bytes: int | None = None,
) -> Iterator[bytes]:
    """render_json's bytes in pieces of about `chunk_bytes` (CHUNK_BYTES), each written when
    the previous one has been taken, `step` (STREAM_STEP) list items per native call. A
    value the native `renderer` declines midway is rendered in Python (the whole body, as
    render_json would): its bytes after those already given follow, which are the same
    bytes up to there (tests/server/test_native_render.py)."""
    if renderer is None:
        yield render_json(graph, None)
        return
    given: list[bytes] = []
    try:
        chunks = _native_chunks(graph, renderer, step or STREAM_STEP, chunk_bytes or CHUNK_BYTES)
        for chunk in chunks:
            given.append(chunk)
            yield chunk
    except NATIVE_DECLINES:
        whole, done = _dumps(render(graph)), b"".join(given)
        if not whole.startswith(done):  # the native writer and Python's disagree: a bug
            raise RuntimeError("the native body's first bytes differ from Python's") from None
        yield whole[len(done) :]


# A list section of the body: its name for Renderer.items, and its items.
_Section = tuple[str, list[Any]]


def _parts(graph: LineageGraph) -> list[bytes | _Section]:
    """render_json's document in order: its small sections as bytes (orjson's), and its lists
    for Renderer.items."""
    ending = b'},"truncated":true}' if graph.truncated else b'},"truncated":false}'
    return [
        b'{"nodes":{"datasets":' + _dumps([_dataset(n) for n in graph.datasets]),
        b',"jobs":' + _dumps([_job(n) for n in graph.jobs]) + b',"runs":',
        ("runs", graph.runs),
        b',"operations":',
        ("operations", graph.operations),
        b'},"relations":{"parents":',
        ("parents", graph.parents),
        b',"symlinks":' + _dumps(_symlinks(graph)) + b',"inputs":',
        ("inputs", graph.relations),
        b',"outputs":',
        ("outputs", graph.relations),
        b',"dataset_lineage":',
        ("dataset_lineage", graph.relations),
        b',"direct_column_lineage":' + _dumps(_columns(graph.columns, ColumnLineageType.DIRECT)),
        b',"indirect_column_lineage":'
        + _dumps(_columns(graph.columns, ColumnLineageType.INDIRECT))
        + ending,
    ]


def _native_chunks(
    graph: LineageGraph, renderer: "Renderer", step: int, chunk_bytes: int
) -> Iterator[bytes]:
    """The document of `_parts`, its lists written natively, in pieces of `chunk_bytes` or
    more (the last may be smaller)."""
    pending: list[bytes] = []
    size = 0
    for piece in _pieces(graph, renderer, step):
        pending.append(piece)
        size += len(piece)
        if size >= chunk_bytes:
            yield b"".join(pending)
            pending.clear()
            size = 0
    yield b"".join(pending)


def _pieces(graph: LineageGraph, renderer: "Renderer", step: int) -> Iterator[bytes]:
    """The document of `_parts`, its lists written natively `step` items per call."""
    for part in _parts(graph):
        if isinstance(part, bytes):
            yield part
        else:
            yield from _list(renderer, *part, step)


def _list(renderer: "Renderer", section: str, items: list[Any], step: int) -> Iterator[bytes]:
    """One list of the body, `step` items at a time."""
    yield b"["
    first = True
    for lo in range(0, len(items), step):
        piece = renderer.items(section, items, lo, lo + step, first=first)
        first = first and not piece
        yield piece
    yield b"]"
