"""`create_app(settings)`: the FastAPI application, its engines, middleware and routers."""

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg
from fastapi import APIRouter, Depends, FastAPI
from fastapi.middleware.cors import CORSMiddleware
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from server.auth import make_auth_dependency
from server.datasets.routes import router as datasets_router
from server.deps import Databases, Held
from server.errors import ResponsesDoc, install_error_handlers, problem_doc, problem_response
from server.health import router as health_router
from server.jobs.routes import router as jobs_router
from server.lineage.routes import router as lineage_router
from server.lineage.sql import TEXT_TIMES, decode_times
from server.lineage.warmup import warm_lineage_connections
from server.links.routes import router as links_router
from server.locations.routes import router as locations_router
from server.observability import RequestContextMiddleware
from server.operations.routes import router as operations_router
from server.runs.routes import router as runs_router
from server.settings import ServerSettings
from shared.db import create_engine, create_sessionmaker
from shared.settings import DatabaseSettings

APPLICATION_NAME = "threadline-server"
log = logging.getLogger("threadline.server")
FEATURE_ROUTERS: tuple[APIRouter, ...] = (
    datasets_router,
    jobs_router,
    runs_router,
    operations_router,
    locations_router,
    links_router,
)


# Every connection of the read engines is READ ONLY, a second guard behind the role's
# grants. Sent at connect time: no round trip per request, and no transaction to undo it.
READ_ONLY = {"default_transaction_read_only": "on"}
# Lineage queries are many small index lookups: a parallel plan's worker start-up (tens of
# ms) and JIT compilation cost far more than they save. Generic plans: the statements are
# prepared once per connection, and re-planning them for every call (many partitions, many
# indexes) costs more than the queries themselves. Catalogue pages keep the defaults.
LINEAGE_TUNING = {
    **READ_ONLY,
    "max_parallel_workers_per_gather": "0",
    "jit": "off",
    "plan_cache_mode": "force_generic_plan",
    **TEXT_TIMES,
}


def create_lineage_engine(database: DatabaseSettings, application_name: str) -> AsyncEngine:
    """The lineage engine: reads without a transaction, tuned at connect time, timestamps
    decoded natively (`server.lineage.sql.decode_times`), and every connection it
    opens kept (up to `pool_size + max_overflow`).

    A lineage connection is worth keeping: its first graph prepares the lineage statements
    and their generic plans, ~25 ms more than the same graph on a used connection (40k
    benchmark database). An overflow connection is closed when returned to a full pool, so
    more concurrent lineage requests than `pool_size` opened and closed connections
    continually: at eight clients, one request in ten paid for a fresh connection, and p95
    doubled (benchmarks/README.md, twenty-first set). Past the kept connections a request
    waits for a free one, as it would for the CPU the others are using."""
    kept = {"pool_size": database.most_connections, "max_overflow": 0}
    engine = create_engine(
        database.model_copy(update=kept),
        application_name=application_name,
        parameters=LINEAGE_TUNING,
        autocommit=True,
        pre_ping=False,  # a closed connection is caught without a round trip: server.deps
        lifo=True,
    )
    decode_times(engine)
    return engine


# Start-up waits this long at most for the lineage connections to be prepared.
WARM_TIMEOUT_S = 30


async def _warm_lineage(engine: AsyncEngine, settings: ServerSettings) -> None:
    """Prepare the lineage connections (server.lineage.warmup); if the database cannot be
    reached, the server starts anyway, as it would without this, and says so."""
    connections = settings.database.most_connections  # all the lineage engine keeps
    began = time.perf_counter()
    try:
        async with asyncio.timeout(WARM_TIMEOUT_S):
            await warm_lineage_connections(engine, connections)
    except (
        OSError,
        TimeoutError,
        SQLAlchemyError,
        asyncpg.PostgresError,
        asyncpg.InterfaceError,
    ) as exc:
        log.warning("lineage connections not prepared at start-up: %r", exc)
        return
    elapsed_ms = (time.perf_counter() - began) * 1000
    log.info("%d lineage connections prepared in %.0f ms", connections, elapsed_ms)


def _databases(settings: ServerSettings) -> Databases:
    # Catalogue requests keep a transaction: name search sets LOCAL planner settings.
    reader = create_engine(
        settings.database, application_name=APPLICATION_NAME, parameters=READ_ONLY
    )
    # A lineage request is only reads, each statement its own snapshot: no transaction.
    lineage = create_lineage_engine(settings.database, f"{APPLICATION_NAME}-lineage")
    admin = None
    if settings.server.admin_database_url is not None:
        admin_db = settings.database.model_copy(update={"url": settings.server.admin_database_url})
        admin = create_engine(admin_db, application_name=f"{APPLICATION_NAME}-admin")
    return Databases(
        reader=reader,
        reader_sessions=create_sessionmaker(reader),
        lineage=lineage,
        admin=admin,
        lineage_held=Held(settings.database.most_connections),
    )


class TimeoutMiddleware:
    """Answers 504 when a request has not started its response within the time limit."""

    def __init__(self, app: ASGIApp, seconds: float) -> None:
        self.app = app
        self.seconds = seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            async with asyncio.timeout(self.seconds):
                await self.app(scope, receive, tracking_send)
        except TimeoutError:
            if started:
                raise
            detail = f"the request took longer than {self.seconds:g}s; narrow it down"
            response = problem_response(504, "Request timed out", detail, kind="timeout")
            await response(scope, receive, send)


def _install_middleware(app: FastAPI, settings: ServerSettings) -> None:
    # Added innermost first: the request context wraps everything, so even CORS
    # rejections and timeouts carry a request id in their log lines.
    app.add_middleware(TimeoutMiddleware, seconds=settings.server.request_timeout_s)
    if settings.server.cors_origins:
        any_origin = settings.server.cors_origins == ["*"]
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.server.cors_origins,
            allow_methods=["GET", "POST", "PATCH", "DELETE"],
            allow_headers=["Authorization", "Content-Type", "X-Request-ID"],
            expose_headers=["X-Request-ID"],
            allow_credentials=not any_origin,
        )
    app.add_middleware(RequestContextMiddleware)


def create_app(settings: ServerSettings) -> FastAPI:
    """The API over one database; engines are created here and disposed on shutdown."""
    databases = _databases(settings)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await _warm_lineage(databases.lineage, settings)
        yield
        await databases.dispose()

    app = FastAPI(
        title="Threadline",
        summary="OpenLineage lineage store: lineage graphs, catalogue, run details.",
        version="1.0.0",
        lifespan=lifespan,
        # A path that ends in a slash (or an escaped one: a key "/") is not ours: 404, not a
        # 307 to a path without it, which clients then follow into another 404.
        redirect_slashes=False,
    )
    app.state.settings = settings
    app.state.databases = databases
    install_error_handlers(app)
    _install_middleware(app, settings)
    app.include_router(health_router)
    auth = [Depends(make_auth_dependency(settings.auth))]
    unauthorized: ResponsesDoc = {401: problem_doc("Missing or invalid bearer token (if enabled)")}
    for router in (lineage_router, *FEATURE_ROUTERS):
        app.include_router(router, prefix="/v1", dependencies=auth, responses=unauthorized)
    return app
