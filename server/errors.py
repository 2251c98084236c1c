"""Errors as RFC 9457 `application/problem+json`: type, title, status, detail (+ request_id).

Handlers turn every failure into a problem document: bad input is 422 with the field errors,
unknown ids 404, conflicts 409; only a genuine server fault is 500, and it never leaks internals.
"""

import logging
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import asyncpg
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from sqlalchemy.exc import DBAPIError
from starlette.exceptions import HTTPException as StarletteHTTPException

from server.observability import current_request_id

log = logging.getLogger("threadline.server")

PROBLEM_MEDIA_TYPE = "application/problem+json"
_TYPE_BASE = "https://threadline.dev/problems/"
# asyncpg/PostgreSQL SQLSTATEs we answer as something better than a 500.
_QUERY_CANCELED = "57014"
_INSUFFICIENT_PRIVILEGE = "42501"
_DATA_EXCEPTION_CLASS = "22"  # a value PostgreSQL cannot take: only a request can bring one


class FieldError(BaseModel):
    loc: list[str | int] = Field(description="Where the bad value is: query/path/body + names.")
    msg: str = Field(description="What is wrong with it.")
    type: str = Field(description="Machine-readable error kind.")


class Problem(BaseModel):
    """A problem document (RFC 9457)."""

    type: str = Field(description="URI naming the problem kind.")
    title: str = Field(description="Short summary of the problem kind.")
    status: int = Field(description="HTTP status code.")
    detail: str = Field(description="What went wrong with this request.")
    request_id: str | None = Field(default=None, description="X-Request-ID of the request.")
    errors: list[FieldError] | None = Field(default=None, description="Field errors (422).")


class ProblemResponse(JSONResponse):
    media_type = PROBLEM_MEDIA_TYPE


class ProblemError(Exception):
    """An error the API reports as a problem document; subclasses fix status and title."""

    status: ClassVar[int] = 500
    title: ClassVar[str] = "Internal server error"
    kind: ClassVar[str] = "internal"
    headers: ClassVar[Mapping[str, str]] = {}

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class NotFoundError(ProblemError):
    status, title, kind = 404, "Not found", "not-found"

    def __init__(self, entity: str, key: object) -> None:
        super().__init__(f"{entity} {key} does not exist")


class ConflictError(ProblemError):
    status, title, kind = 409, "Conflict", "conflict"


class InvalidInputError(ProblemError):
    status, title, kind = 422, "Invalid request", "invalid-request"


class AdminUnavailableError(ProblemError):
    status, title, kind = 503, "Admin database not configured", "admin-unavailable"

    def __init__(self) -> None:
        super().__init__(
            "admin database not configured: set THREADLINE__SERVER__ADMIN_DATABASE_URL "
            "to a role that may write to enable location admin endpoints"
        )


def problem_response(
    status: int,
    title: str,
    detail: str,
    *,
    kind: str,
    errors: Sequence[Mapping[str, Any]] | None = None,
    headers: Mapping[str, str] | None = None,
) -> ProblemResponse:
    body = Problem(
        type=_TYPE_BASE + kind,
        title=title,
        status=status,
        detail=detail,
        request_id=current_request_id(),
        errors=[FieldError.model_validate(e) for e in errors] if errors is not None else None,
    )
    content = body.model_dump(mode="json", exclude_none=True)
    return ProblemResponse(content, status_code=status, headers=dict(headers or {}))


def _field_errors(exc: RequestValidationError) -> list[dict[str, Any]]:
    return [
        {"loc": list(err.get("loc", ())), "msg": str(err.get("msg", "")), "type": err["type"]}
        for err in exc.errors()
    ]


def _describe(errors: list[dict[str, Any]]) -> str:
    parts = [".".join(str(p) for p in e["loc"]) + ": " + e["msg"] for e in errors]
    return "; ".join(parts) or "invalid request"


async def _on_validation(_: Request, exc: Exception) -> ProblemResponse:
    assert isinstance(exc, RequestValidationError)  # noqa: S101 - registered for this type only
    errors = _field_errors(exc)
    return problem_response(
        422, "Invalid request", _describe(errors), kind="invalid-request", errors=errors
    )


async def _on_problem(_: Request, exc: Exception) -> ProblemResponse:
    assert isinstance(exc, ProblemError)  # noqa: S101 - registered for this type only
    return problem_response(exc.status, exc.title, exc.detail, kind=exc.kind, headers=exc.headers)


async def _on_http(_: Request, exc: Exception) -> ProblemResponse:
    assert isinstance(exc, StarletteHTTPException)  # noqa: S101 - registered for this type only
    if exc.status_code == 400:  # FastAPI: "There was an error parsing the body"
        # A body that is not valid JSON text (e.g. not UTF-8) is invalid input like any
        # other: the documented 422 problem, not an undocumented 400.
        return problem_response(422, "Invalid request", str(exc.detail), kind="invalid-request")
    title = {404: "Not found", 405: "Method not allowed", 401: "Unauthorized"}.get(
        exc.status_code, "HTTP error"
    )
    kind = title.lower().replace(" ", "-")
    return problem_response(exc.status_code, title, str(exc.detail), kind=kind, headers=exc.headers)


async def _on_database(_: Request, exc: Exception) -> ProblemResponse:
    """PostgreSQL errors, raised through SQLAlchemy (DBAPIError wrapping asyncpg's) or by
    asyncpg itself (lineage statements, see server.lineage.sql)."""
    cause = exc.orig if isinstance(exc, DBAPIError) else exc
    sqlstate = getattr(cause, "sqlstate", None)
    if sqlstate == _QUERY_CANCELED:
        detail = "the query ran past the database statement timeout; narrow the request"
        return problem_response(504, "Query timed out", detail, kind="query-timeout")
    if sqlstate == _INSUFFICIENT_PRIVILEGE:
        log.error("database role may not do this: %s", cause)
        detail = "the database role the server uses may not perform this operation"
        return problem_response(503, "Database permission denied", detail, kind="db-permission")
    if isinstance(sqlstate, str) and sqlstate.startswith(_DATA_EXCEPTION_CLASS):
        log.warning("database refused a parameter value: %s", cause)
        detail = "a parameter value is outside what the database can store or compare"
        return problem_response(422, "Invalid request", detail, kind="invalid-request")
    return await _on_unexpected(_, exc)


async def _on_unexpected(_: Request, exc: Exception) -> ProblemResponse:
    log.error("unhandled error", exc_info=exc)
    detail = "unexpected server error; quote the request id when reporting it"
    return problem_response(500, "Internal server error", detail, kind="internal")


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, _on_validation)
    app.add_exception_handler(ProblemError, _on_problem)
    app.add_exception_handler(StarletteHTTPException, _on_http)
    app.add_exception_handler(DBAPIError, _on_database)
    app.add_exception_handler(asyncpg.PostgresError, _on_database)
    app.add_exception_handler(Exception, _on_unexpected)
    _document_problems(app)


_PROBLEM_REF = {"$ref": "#/components/schemas/Problem"}
_VALIDATION_SCHEMAS = ("HTTPValidationError", "ValidationError")


def _as_problem(response: dict[str, Any]) -> None:
    """A documented error response: problem+json with the Problem schema, nothing else."""
    response["content"] = {PROBLEM_MEDIA_TYPE: {"schema": _PROBLEM_REF}}


def _document_problems(app: FastAPI) -> None:
    """Make the OpenAPI document say what the handlers do: every 4xx/5xx is a Problem."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        schema = generate()
        for path_item in schema.get("paths", {}).values():
            for operation in path_item.values():
                for status, response in operation.get("responses", {}).items():
                    if str(status)[0] in "45":
                        _as_problem(response)
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        components["Problem"] = Problem.model_json_schema(ref_template=_REF_TEMPLATE)
        components.update(components["Problem"].pop("$defs", {}))
        for name in _VALIDATION_SCHEMAS:
            components.pop(name, None)
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]  # FastAPI's documented override hook


_REF_TEMPLATE = "#/components/schemas/{model}"


ResponsesDoc = dict[int | str, dict[str, Any]]


def problem_doc(description: str) -> dict[str, Any]:
    return {"description": description, "content": {PROBLEM_MEDIA_TYPE: {}}}


# OpenAPI `responses=` for routes: the problem shapes a handler can answer with.
NOT_FOUND: ResponsesDoc = {404: problem_doc("Unknown id")}
CONFLICT: ResponsesDoc = {409: problem_doc("Conflicts with the current state")}
ADMIN_UNAVAILABLE: ResponsesDoc = {503: problem_doc("Admin database not configured")}
