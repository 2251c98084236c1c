"""The server reads through `threadline_reader`, which may only SELECT.

Grants (threadline-migrate runs `threadline_grant_reader(role)` after every upgrade):
    GRANT USAGE ON SCHEMA public TO threadline_reader;
    GRANT SELECT ON ALL TABLES IN SCHEMA public TO threadline_reader;
    ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO threadline_reader;
On top of that, every connection of the server's read engine starts with
`default_transaction_read_only = on`, so even a misconfigured owner URL cannot write.
"""

from datetime import UTC, datetime, timedelta

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from server.app import create_app
from server.lineage.model import MAX_TIME, MIN_TIME
from tests.server.conftest import World, reader_url, server_settings
from tests.services import Services

pytestmark = pytest.mark.db


async def test_reader_role_serves_reads(reader_api_client: httpx.AsyncClient, world: World) -> None:
    assert (await reader_api_client.get("/health")).status_code == 200
    datasets = await reader_api_client.get("/v1/datasets", params={"search": "orders daily"})
    assert datasets.status_code == 200
    assert datasets.json()["items"]
    dataset_id = datasets.json()["items"][0]["id"]
    assert (await reader_api_client.get(f"/v1/datasets/{dataset_id}")).status_code == 200


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO location (type, name) VALUES ('x', 'reader-was-here')",
        "UPDATE location SET external_id = 'x'",
        "DELETE FROM address",
        "TRUNCATE run",
        "CREATE TABLE reader_table (id int)",
    ],
)
async def test_reader_role_cannot_write(
    database_url: str, test_services: Services, statement: str
) -> None:
    # A plain engine (not the server's read-only one): only the role's grants stand in the way.
    engine = create_async_engine(reader_url(database_url, test_services))
    try:
        async with engine.begin() as conn:
            with pytest.raises(DBAPIError) as caught:
                await conn.execute(text(statement))
        assert getattr(caught.value.orig, "sqlstate", None) == "42501"  # insufficient_privilege
    finally:
        await engine.dispose()


@pytest.mark.parametrize("engine_name", ["reader", "lineage"])
async def test_server_engines_are_read_only_even_as_owner(
    database_url: str, engine_name: str
) -> None:
    app = create_app(server_settings(database_url))
    engine = getattr(app.state.databases, engine_name)
    try:
        async with engine.connect() as conn:
            with pytest.raises(DBAPIError) as caught:
                await conn.execute(text("INSERT INTO user_account (name) VALUES ('owner-write')"))
        assert getattr(caught.value.orig, "sqlstate", None) == "25006"  # read_only_sql_transaction
    finally:
        await app.state.databases.dispose()


async def test_lineage_engine_is_tuned_at_connect(database_url: str) -> None:
    """The lineage settings arrive in the start-up packet: no statement per request sets them."""
    app = create_app(server_settings(database_url))
    try:
        async with app.state.databases.lineage.connect() as conn:
            shown = (
                await conn.execute(
                    text(
                        "SELECT current_setting('plan_cache_mode'), current_setting('jit'),"
                        " current_setting('max_parallel_workers_per_gather')"
                    )
                )
            ).one()
        assert tuple(shown) == ("force_generic_plan", "off", "0")
    finally:
        await app.state.databases.dispose()


async def test_lineage_engine_reads_times_from_text_whatever_the_server_zone(
    database_url: str,
) -> None:
    """Its connections decode timestamptz from PostgreSQL's text form (faster than asyncpg's
    binary decoder), pinned to ISO dates in UTC by the start-up packet: a role whose zone and
    date style differ gets the same instants, and times it binds arrive unchanged."""
    owner = create_async_engine(database_url, poolclass=NullPool)  # new sessions see them
    async with owner.connect() as conn:
        name = (await conn.execute(text("SELECT current_database()"))).scalar_one()
        await conn.execute(text(f"ALTER DATABASE \"{name}\" SET timezone = 'Asia/Kolkata'"))
        await conn.execute(text(f"ALTER DATABASE \"{name}\" SET datestyle = 'SQL, DMY'"))
        await conn.commit()
    async with owner.connect() as conn:
        zone = (await conn.execute(text("SELECT current_setting('timezone')"))).scalar_one()
        assert zone == "Asia/Kolkata"
    app = create_app(server_settings(database_url))
    try:
        async with app.state.databases.lineage.connect() as conn:
            raw = (await conn.get_raw_connection()).driver_connection
            sql = "SELECT timestamptz '2024-05-01 08:00:00.000123+05:30', $1::timestamptz"
            for bound in (MIN_TIME, MAX_TIME, datetime(2024, 5, 1, 2, 30, 0, 7, tzinfo=UTC)):
                shown, echoed = await raw.fetchrow(sql, bound)
                assert shown == datetime(2024, 5, 1, 2, 30, 0, 123, tzinfo=UTC)
                assert shown.utcoffset() == timedelta(0)
                assert echoed == bound
    finally:
        await app.state.databases.dispose()
        async with owner.connect() as conn:
            await conn.execute(text(f'ALTER DATABASE "{name}" RESET timezone'))
            await conn.execute(text(f'ALTER DATABASE "{name}" RESET datestyle'))
            await conn.commit()
        await owner.dispose()
