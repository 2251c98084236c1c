"""Migrations: round trip on a fresh database, and the models agree with them."""

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine

from migrations.filters import include_object
from shared.migrate import alembic_config
from shared.models import Base
from tests.conftest import create_database, drop_database
from tests.services import Services

pytestmark = pytest.mark.db


@pytest.fixture(scope="module")
def scratch_url(test_services: Services) -> Iterator[str]:
    name = f"threadline_mig_{uuid.uuid4().hex[:12]}"
    yield create_database(test_services, name)
    drop_database(test_services, name)


def _diff(connection: Connection) -> list[Any]:
    context = MigrationContext.configure(
        connection,
        opts={"include_object": include_object, "compare_type": True},
    )
    return list(compare_metadata(context, Base.metadata))


def test_upgrade_downgrade_upgrade(scratch_url: str) -> None:
    config = alembic_config(scratch_url)
    command.downgrade(config, "base")
    command.upgrade(config, "head")
    command.downgrade(config, "base")
    command.upgrade(config, "head")


async def test_models_match_migrations(scratch_url: str) -> None:
    engine = create_async_engine(scratch_url)
    async with engine.connect() as conn:
        assert await conn.run_sync(_diff) == []
    await engine.dispose()


async def test_partition_appears_for_rows_already_in_default(scratch_url: str) -> None:
    """A month first written to the default partition is moved out when its partition appears."""
    engine = create_async_engine(scratch_url)
    when = datetime(2031, 5, 17, tzinfo=UTC)
    async with engine.begin() as conn:
        await conn.execute(
            text(
                "INSERT INTO run (created_at, id, job_id, status, last_event_time)"
                " VALUES (:t, :id, 1, 0, :t)"
            ),
            {"t": when, "id": uuid.uuid4()},
        )
        created = await conn.execute(
            text("SELECT threadline_ensure_partition(:d)"), {"d": when.date()}
        )
        assert created.scalar_one() == 5
        counts = (
            await conn.execute(
                text(
                    "SELECT (SELECT count(*) FROM run_default), (SELECT count(*) FROM run_y2031m05)"
                )
            )
        ).one()
        assert tuple(counts) == (0, 1)
        again = await conn.execute(
            text("SELECT threadline_ensure_partition(:d)"), {"d": when.date()}
        )
        assert again.scalar_one() == 0
    await engine.dispose()
