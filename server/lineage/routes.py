"""HTTP handlers for lineage graphs (thin: validation in schemas, work in service).

They take the Request rather than FastAPI dependencies for the query, the connection and
the options. Solving those per request (the query model, the connection's exit stack, the
settings) cost 1.0 M of the 6.8 M instructions of a DATASET depth-3 request, whose graph
work is 4.7 M (benchmarks/README.md, seventh session). The router's own dependencies
(authentication) still run first.
"""

from functools import partial
from typing import Any

from fastapi import APIRouter, Request, Response
from starlette.background import BackgroundTask

from server.deps import get_settings, lineage_connection, spare_lineage_connection
from server.errors import NOT_FOUND, problem_doc
from server.lineage import service
from server.lineage.model import LineageGraph
from server.lineage.render import render_json
from server.lineage.schemas import (
    LineageQuery,
    LineageResponse,
    lineage_query_from,
    query_parameters,
)

router = APIRouter(prefix="/lineage", tags=["lineage"])
_RESPONSES: dict[int | str, dict[str, Any]] = {404: NOT_FOUND[404]}
# The body is built by render_json (plain dicts + orjson) and documented by LineageResponse.
_DOCUMENTED: dict[str, Any] = {"response_model": LineageResponse, "responses": _RESPONSES}
# GET declares no parameters to FastAPI (it parses them itself), so it documents them, and
# its 422, as FastAPI would for `Annotated[LineageQuery, Query()]`.
_GET_DOCUMENTED: dict[str, Any] = {
    "response_model": LineageResponse,
    "responses": {**_RESPONSES, 422: problem_doc("Validation Error")},
    "openapi_extra": {"parameters": query_parameters(LineageQuery)},
}


async def _lineage(request: Request, query: LineageQuery) -> Response:
    options = (await get_settings(request)).server
    lineage_request = query.to_request(options)
    spare = partial(spare_lineage_connection, request)
    async with lineage_connection(request) as conn:
        graph = await service.get_lineage(conn, lineage_request, spare)
    # A large graph is tens of thousands of objects: freeing them took ~4 ms of a 2,000-node
    # graph's response time. The background task holds the graph until the body is sent.
    held = BackgroundTask(_release, graph)
    return Response(render_json(graph), media_type="application/json", background=held)


async def _release(graph: LineageGraph) -> None:
    """Nothing: the graph is freed when the task that holds it is (after the response)."""


@router.get("", summary="Lineage graph around start nodes", **_GET_DOCUMENTED)
async def get_lineage(request: Request) -> Response:
    return await _lineage(request, lineage_query_from(request.query_params))


@router.post("", summary="Lineage graph around many start nodes (JSON body)", **_DOCUMENTED)
async def post_lineage(request: Request, body: LineageQuery) -> Response:
    return await _lineage(request, body)
