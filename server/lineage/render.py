"""LineageGraph (service dataclasses) -> the JSON body documented by `LineageResponse`.

A graph can hold thousands of nodes and relations; building and re-validating pydantic
models for them cost more than the SQL (about 0.1 ms per node), so the body is built as
plain dicts and serialised with orjson. tests/server/test_lineage_api.py checks every
body against `LineageResponse` so the two cannot drift apart.
"""

from collections import defaultdict
from collections.abc import Iterable
from typing import Any
from uuid import UUID

import orjson

from server.common.refs import LocationRef
from server.lineage.model import (
    ColumnEdge,
    DatasetNode,
    IORelation,
    JobNode,
    LineageGraph,
    NodeKind,
    NodeRef,
    OperationNode,
    RelationKind,
    RunNode,
)
from shared.enums import ColumnLineageType, OutputType

Json = dict[str, Any]


def output_type_names(bits: int | None) -> list[str]:
    return [t.name for t in OutputType if t.name and t & (bits or 0)]


def _ref(ref: NodeRef) -> Json:
    return {"kind": ref.kind, "id": ref.id}


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


def _run(node: RunNode) -> Json:
    return {
        "id": node.id,
        "job_id": node.job_id,
        "parent_run_id": node.parent_run_id,
        "status": node.status.name,
        "created_at": node.created_at,
        "started_at": node.started_at,
        "ended_at": node.ended_at,
        "external_id": node.external_id,
        "attempt": node.attempt,
    }


def _operation(node: OperationNode) -> Json:
    return {
        "id": node.id,
        "run_id": node.run_id,
        "name": node.name,
        "type": node.type,
        "status": node.status.name,
        "position": node.position,
        "group": node.group,
        "description": node.description,
        "created_at": node.created_at,
        "started_at": node.started_at,
        "ended_at": node.ended_at,
    }


def _io(rel: IORelation) -> Json:
    body: Json = {
        "from": _ref(rel.source),
        "to": _ref(rel.target),
        "num_rows": rel.num_rows,
        "num_bytes": rel.num_bytes,
        "num_files": rel.num_files,
        "first_seen_at": rel.first_seen_at,
        "last_seen_at": rel.last_seen_at,
    }
    if rel.kind is not RelationKind.INPUT:
        body["types"] = output_type_names(rel.output_types)
    return body


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


def _relations(graph: LineageGraph) -> Json:
    by_kind: dict[RelationKind, list[Json]] = {kind: [] for kind in RelationKind}
    for rel in graph.relations:
        by_kind[rel.kind].append(_io(rel))
    return {
        "parents": [{"from": _ref(p.parent), "to": _ref(p.child)} for p in graph.parents],
        "symlinks": [
            {"from": _dataset_ref(s.source_id), "to": _dataset_ref(s.target_id), "type": s.type}
            for s in graph.symlinks
        ],
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
        "runs": [_run(n) for n in graph.runs],
        "operations": [_operation(n) for n in graph.operations],
    }
    return {"nodes": nodes, "relations": _relations(graph), "truncated": graph.truncated}


def _text(value: object) -> str:
    # asyncpg returns its own UUID subclass, which orjson does not know; str() is canonical.
    if isinstance(value, UUID):
        return str(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def render_json(graph: LineageGraph) -> bytes:
    """The response body: times as RFC 3339 with Z, like pydantic's JSON elsewhere."""
    return orjson.dumps(render(graph), default=_text, option=orjson.OPT_UTC_Z)
