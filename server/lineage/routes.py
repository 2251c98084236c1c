"""HTTP handlers for lineage graphs (thin: validation in schemas, work in service).

They take the Request rather than FastAPI dependencies for the query, the connection and
the options. Solving those per request (the query model, the connection's exit stack, the
settings) cost 1.0 M of the 6.8 M instructions of a DATASET depth-3 request, whose graph
work is 4.7 M (benchmarks/README.md, seventh session). The router's own dependencies
(authentication) still run first.
"""

from collections.abc import Iterator
from functools import partial
from typing import Any

from fastapi import APIRouter, Request, Response
from starlette.background import BackgroundTask
from starlette.types import Receive, Scope, Send

from server.deps import get_settings, lineage_connection, spare_lineage_connection
from server.errors import NOT_FOUND, problem_doc
from server.lineage import service
from server.lineage.model import LineageGraph
from server.lineage.render import is_large, render_chunks, render_json
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
    if is_large(graph):
        return _Streamed(render_chunks(graph), background=held)
    return Response(render_json(graph), media_type="application/json", background=held)


class _Streamed(Response):
    """A JSON body sent in pieces (chunked) as they are written.

    The client reads each piece while the next is written: the capped depth-5 graphs'
    bodies (2-3.6 MB) arrived whole ~2 ms sooner at the median, through httpx
    (benchmarks/README.md, thirty-sixth set). The pieces are written on the event loop's
    thread, between sends, never in a worker thread: they read the graph's Python objects.
    Starlette's StreamingResponse would also start a task per request to listen for a
    disconnect; a client gone midway only wastes the rest of the writing.
    """

    media_type = "application/json"

    def __init__(self, chunks: Iterator[bytes], background: BackgroundTask) -> None:
        self.chunks = chunks
        self.status_code = 200
        self.background = background
        self.init_headers()  # no body: no Content-Length, so uvicorn frames the pieces

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
        for chunk in self.chunks:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        if self.background is not None:
            await self.background()


async def _release(graph: LineageGraph) -> None:
    """Nothing: the graph is freed when the task that holds it is (after the response)."""


@router.get("", summary="Lineage graph around start nodes", **_GET_DOCUMENTED)
async def get_lineage(request: Request) -> Response:
    return await _lineage(request, lineage_query_from(request.query_params))


@router.post("", summary="Lineage graph around many start nodes (JSON body)", **_DOCUMENTED)
async def post_lineage(request: Request, body: LineageQuery) -> Response:
    return await _lineage(request, body)
