"""The writer's time-series statements overlap with building the next one's rows
(`consumer.write.timeseries.Sender`): errors still surface, and a failing caller leaves the
connection idle for its transaction's rollback."""

from collections.abc import AsyncIterator

import asyncpg
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from consumer.write.timeseries import Sender

pytestmark = pytest.mark.db


@pytest.fixture
async def conn(engine: AsyncEngine) -> AsyncIterator[asyncpg.Connection]:
    async with engine.connect() as sa_conn:
        raw = await sa_conn.get_raw_connection()
        driver: asyncpg.Connection = raw.driver_connection  # type: ignore[assignment]
        yield driver


async def test_statements_run_in_order_and_are_done_before_done_returns(
    conn: asyncpg.Connection,
) -> None:
    async with conn.transaction():
        await conn.execute("CREATE TEMP TABLE sent (n int) ON COMMIT DROP")
        sender = Sender(conn)
        for n in range(5):
            await sender.send("INSERT INTO sent SELECT $1::int FROM pg_sleep(0.01)", n)
        await sender.done()
        assert [r["n"] for r in await conn.fetch("SELECT n FROM sent")] == list(range(5))


async def _failing_batch(conn: asyncpg.Connection, *, then_done: bool) -> None:
    async with conn.transaction():
        sender = Sender(conn)
        await sender.send("SELECT 1 / 0")
        if then_done:
            await sender.done()
        else:
            await sender.send("SELECT 1")


@pytest.mark.parametrize("then_done", [False, True])
async def test_an_error_surfaces_at_the_next_send_or_at_done(
    conn: asyncpg.Connection, then_done: bool
) -> None:
    with pytest.raises(asyncpg.DivisionByZeroError):
        await _failing_batch(conn, then_done=then_done)
    assert await conn.fetchval("SELECT 2") == 2  # rolled back, the connection usable


async def _batch_with_a_bug(conn: asyncpg.Connection) -> None:
    async with conn.transaction():
        sender = Sender(conn)
        await sender.send("SELECT pg_sleep(0.2)")
        try:
            raise KeyError("a row builder's bug")
        except BaseException:
            await sender.settle()
            raise


async def test_a_failing_caller_settles_the_running_statement_first(
    conn: asyncpg.Connection,
) -> None:
    with pytest.raises(KeyError):
        await _batch_with_a_bug(conn)
    # Without settle the rollback would meet the statement still running ("another
    # operation is in progress") and the transaction would not end cleanly.
    assert not conn.is_in_transaction()
    assert await conn.fetchval("SELECT 3") == 3
