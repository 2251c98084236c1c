"""Request and response models of the lineage endpoints."""

from datetime import UTC, datetime
from typing import Annotated, Any, Self
from uuid import UUID

from fastapi.exceptions import RequestValidationError
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    ValidationError,
    field_validator,
    model_validator,
)
from starlette.datastructures import QueryParams

from server.common.schemas import LocationRefResponse, Model, StatusName
from server.errors import InvalidInputError
from server.lineage.model import (
    MAX_TIME,
    MIN_TIME,
    PROCESS_LEVELS,
    Direction,
    Granularity,
    LineageRequest,
    NodeId,
    NodeKind,
    TimeWindow,
)
from server.settings import ServerOptions

MAX_DEPTH = 50
MAX_START_NODES = 1000
_BIGINT_MAX = 2**63 - 1


def _parse_id(kind: NodeKind, raw: int | str) -> NodeId:
    """An int id for datasets/jobs, a UUID for runs/operations; ValueError otherwise."""
    if kind in (NodeKind.RUN, NodeKind.OPERATION):
        if not isinstance(raw, str):
            raise ValueError(f"{kind} ids are UUIDs, got {raw!r}")
        try:
            return UUID(raw)
        except ValueError:
            raise ValueError(f"{kind} ids are UUIDs, got {raw!r}") from None
    value = raw if isinstance(raw, int) else int(raw) if raw.isascii() and raw.isdigit() else 0
    if not 1 <= value <= _BIGINT_MAX:
        raise ValueError(f"{kind} ids are positive 64-bit integers, got {raw!r}")
    return value


def _default_granularity(kind: NodeKind) -> Granularity:
    return Granularity.RUN if kind is NodeKind.DATASET else Granularity(kind.value)


class LineageQuery(BaseModel):
    """A lineage graph request: the same fields as query parameters (GET) or a body (POST)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    start_node_type: NodeKind = Field(description="Kind of the start node(s).")
    start_node_id: list[StrictInt | Annotated[str, Field(max_length=64)]] = Field(
        min_length=1,
        max_length=MAX_START_NODES,
        description="Start node ids (repeat the parameter for several): integers for "
        "DATASET/JOB, UUIDs for RUN/OPERATION.",
    )
    direction: Direction = Field(
        default=Direction.BOTH,
        description="UPSTREAM (what it came from), DOWNSTREAM (what it fed), or BOTH "
        "(the union of the two, not everything connected).",
    )
    depth: int = Field(
        default=1,
        ge=1,
        le=MAX_DEPTH,
        description="Relation hops from the start: dataset -> run is 1, "
        "dataset -> run -> dataset is 2; at DATASET granularity dataset -> dataset is 1. "
        "Symlinks and parents are free.",
    )
    granularity: Granularity | None = Field(
        default=None,
        description="Process level between datasets; not coarser than a process start node. "
        "Default: RUN for datasets, the start node's own level otherwise.",
    )
    since: datetime | None = Field(
        default=None, description="Only relations last seen at or after this time."
    )
    until: datetime | None = Field(
        default=None, description="Only relations first seen at or before this time."
    )
    include_column_lineage: bool = Field(default=False, description="Add column lineage.")
    max_nodes: int | None = Field(
        default=None,
        ge=1,
        description="Node cap for this graph (at most the server's cap, which is the default).",
    )

    @field_validator("since", "until")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        if value is None:
            return None
        aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
        try:
            return aware.astimezone(UTC)
        except OverflowError:
            raise ValueError("time out of range") from None

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        for raw in self.start_node_id:
            _parse_id(self.start_node_type, raw)
        granularity = self.resolved_granularity
        if self.start_node_type is not NodeKind.DATASET and (
            granularity is Granularity.DATASET
            or PROCESS_LEVELS.index(NodeKind(granularity.value))
            > PROCESS_LEVELS.index(self.start_node_type)
        ):
            raise ValueError(
                f"granularity {granularity} is not available from a {self.start_node_type} "
                "start node (use its own level or a finer one)"
            )
        if self.since and self.until and self.since > self.until:
            raise ValueError("since must not be after until")
        return self

    @property
    def resolved_granularity(self) -> Granularity:
        return self.granularity or _default_granularity(self.start_node_type)

    def to_request(self, options: ServerOptions) -> LineageRequest:
        """The service request, within the server's depth and node limits."""
        if self.depth > options.max_lineage_depth:
            raise InvalidInputError(f"depth: must be at most {options.max_lineage_depth}")
        cap = options.max_lineage_nodes
        ids = dict.fromkeys(_parse_id(self.start_node_type, raw) for raw in self.start_node_id)
        max_nodes = min(self.max_nodes or cap, cap)
        if len(ids) > max_nodes:
            raise InvalidInputError(f"start_node_id: more start nodes than the cap {max_nodes}")
        return LineageRequest(
            start_kind=self.start_node_type,
            start_ids=tuple(ids),
            direction=self.direction,
            depth=self.depth,
            granularity=self.resolved_granularity,
            window=TimeWindow(self.since or MIN_TIME, self.until or MAX_TIME),
            include_column_lineage=self.include_column_lineage,
            max_nodes=max_nodes,
        )


# GET /v1/lineage parses its query parameters itself. FastAPI's query-model path (an alias,
# sequence and default check per field in Python, then the model's validation) cost 0.6 M
# instructions a request, a tenth of a whole small-graph request (benchmarks/README.md).
# The parameters are documented exactly as FastAPI documents a query model (the committed
# docs/openapi.json is compared with the code's) and refused with the same 422 errors.
_LIST_PARAMETERS = frozenset({"start_node_id"})


def lineage_query_from(params: QueryParams) -> LineageQuery:
    """The query parameters as a LineageQuery; RequestValidationError (422) when invalid.

    A list field takes every value of its repeated parameter; any other parameter its
    last value, as Starlette's `QueryParams.get` gives it to FastAPI."""
    raw: dict[str, Any] = {}
    for name, value in params.multi_items():
        if name in _LIST_PARAMETERS:
            raw.setdefault(name, []).append(value)
        else:
            raw[name] = value
    try:
        return LineageQuery.model_validate(raw)
    except ValidationError as exc:
        errors = [{**error, "loc": ("query", *error["loc"])} for error in exc.errors()]
        raise RequestValidationError(errors) from None


def query_parameters(model: type[BaseModel]) -> list[dict[str, Any]]:
    """OpenAPI `parameters` for `model`'s fields as query parameters, as FastAPI writes them
    for `Annotated[model, Query()]` (its enums are components through the POST body)."""
    schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
    required = set(schema.get("required", ()))
    for name, field in schema["properties"].items():
        # FastAPI titles each parameter's schema (a bare reference keeps none); the model's
        # schema leaves the title out where a reference sits in an anyOf.
        if "$ref" not in field:
            field.setdefault("title", name.replace("_", " ").title())
    return [
        {
            "description": field["description"],
            "in": "query",
            "name": name,
            "required": name in required,
            "schema": field,
        }
        for name, field in schema["properties"].items()
    ]


class NodeRefResponse(Model):
    kind: NodeKind = Field(description="Node kind.")
    id: StrictInt | UUID = Field(description="Node id: integer (dataset, job) or UUID.")


class SchemaResponse(Model):
    id: int = Field(description="Schema id (schemas are deduplicated).")
    fields: Any = Field(description="Schema fields as OpenLineage reports them.")


class DatasetNodeResponse(Model):
    id: int
    name: str
    format: str | None
    location: LocationRefResponse
    schema_: SchemaResponse | None = Field(
        alias="schema", description="Latest schema seen in the time window."
    )


class JobNodeResponse(Model):
    id: int
    name: str
    type: str = Field(description="Job type (SPARK_APPLICATION, AIRFLOW_TASK...).")
    location: LocationRefResponse
    parent_job_id: int | None


class RunNodeResponse(Model):
    id: UUID
    job_id: int
    parent_run_id: UUID | None
    status: StatusName
    created_at: datetime
    started_at: datetime | None
    ended_at: datetime | None
    external_id: str | None
    attempt: int | None


class OperationNodeResponse(Model):
    id: UUID
    run_id: UUID
    name: str | None
    type: str | None
    status: StatusName
    position: int | None
    group: str | None
    description: str | None
    created_at: datetime
    started_at: datetime | None
    ended_at: datetime | None


class LineageNodesResponse(BaseModel):
    datasets: list[DatasetNodeResponse]
    jobs: list[JobNodeResponse]
    runs: list[RunNodeResponse]
    operations: list[OperationNodeResponse]


class _Edge(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    from_: NodeRefResponse = Field(alias="from", description="Where the relation starts.")
    to: NodeRefResponse = Field(description="Where the relation ends.")


class ParentRelationResponse(_Edge):
    """`from` is the parent: job -> run, run -> child run, run -> operation, job -> child job."""


class SymlinkRelationResponse(_Edge):
    type: str = Field(description="METASTORE or WAREHOUSE.")


class IORelationResponse(_Edge):
    num_rows: int | None = Field(description="Sum over the aggregated relations.")
    num_bytes: int | None = Field(description="Sum over the aggregated relations.")
    num_files: int | None = Field(description="Sum over the aggregated relations.")
    first_seen_at: datetime = Field(description="Earliest observation in the window.")
    last_seen_at: datetime = Field(description="Latest observation in the window.")


class OutputRelationResponse(IORelationResponse):
    types: list[str] = Field(description="Output kinds seen (CREATE, APPEND, OVERWRITE...).")


class ColumnFieldResponse(BaseModel):
    source_column: str
    target_column: str
    last_seen_at: datetime


class ColumnRelationResponse(_Edge):
    fields: list[ColumnFieldResponse]


class LineageRelationsResponse(BaseModel):
    parents: list[ParentRelationResponse]
    symlinks: list[SymlinkRelationResponse]
    inputs: list[IORelationResponse] = Field(description="Dataset -> process that read it.")
    outputs: list[OutputRelationResponse] = Field(description="Process -> dataset it wrote.")
    dataset_lineage: list[OutputRelationResponse] = Field(
        description="DATASET granularity: dataset -> dataset through one operation; "
        "counters and types are those of the outputs."
    )
    direct_column_lineage: list[ColumnRelationResponse]
    indirect_column_lineage: list[ColumnRelationResponse]


class LineageResponse(BaseModel):
    nodes: LineageNodesResponse
    relations: LineageRelationsResponse
    truncated: bool = Field(
        description="True when the node cap cut the graph: it is partial, not wrong."
    )
