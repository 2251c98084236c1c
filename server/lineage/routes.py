"""HTTP handlers for lineage graphs (thin: validation in schemas, work in service)."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Response

from server.deps import LineageConnectionDep, SettingsDep
from server.errors import NOT_FOUND
from server.lineage import service
from server.lineage.render import render_json
from server.lineage.schemas import LineageQuery, LineageResponse
from server.settings import ServerOptions

router = APIRouter(prefix="/lineage", tags=["lineage"])
_RESPONSES: dict[int | str, dict[str, Any]] = {404: NOT_FOUND[404]}
# The body is built by render_json (plain dicts + orjson) and documented by LineageResponse.
_DOCUMENTED: dict[str, Any] = {"response_model": LineageResponse, "responses": _RESPONSES}


async def _options(settings: SettingsDep) -> ServerOptions:
    return settings.server


OptionsDep = Annotated[ServerOptions, Depends(_options)]


@router.get("", summary="Lineage graph around start nodes", **_DOCUMENTED)
async def get_lineage(
    query: Annotated[LineageQuery, Query()], conn: LineageConnectionDep, options: OptionsDep
) -> Response:
    graph = await service.get_lineage(conn, query.to_request(options))
    return Response(render_json(graph), media_type="application/json")


@router.post("", summary="Lineage graph around many start nodes (JSON body)", **_DOCUMENTED)
async def post_lineage(
    body: LineageQuery, conn: LineageConnectionDep, options: OptionsDep
) -> Response:
    graph = await service.get_lineage(conn, body.to_request(options))
    return Response(render_json(graph), media_type="application/json")
