"""`/health`: the process is up and the database answers."""

import asyncio

from fastapi import APIRouter
from pydantic import BaseModel, Field
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from server.deps import SessionDep
from server.errors import ProblemError, problem_doc

router = APIRouter(tags=["health"])
_PING_TIMEOUT_S = 5.0


class DatabaseDownError(ProblemError):
    status, title, kind = 503, "Database unavailable", "database-unavailable"


class HealthResponse(BaseModel):
    status: str = Field(description="`ok` when the server can serve requests.")
    database: str = Field(description="`ok` when the database answered a ping.")


@router.get(
    "/health",
    summary="Liveness and database ping",
    responses={503: problem_doc("The database does not answer")},
)
async def health(session: SessionDep) -> HealthResponse:
    try:
        async with asyncio.timeout(_PING_TIMEOUT_S):
            await session.execute(text("SELECT 1"))
    except (OSError, TimeoutError, SQLAlchemyError) as exc:
        raise DatabaseDownError(f"database ping failed: {type(exc).__name__}") from exc
    return HealthResponse(status="ok", database="ok")
