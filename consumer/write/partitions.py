"""Quarterly partitions made on demand, before the batch transaction that needs them.

`threadline_ensure_partition` (migration 0011) takes locks on the partitioned
parents; running it inside the batch transaction could deadlock against other
workers' inserts, so it runs in its own short transaction first. Quarters far
from now (hostile eventTimes such as year 1 or 9999) stay in the default
partition instead of creating thousands of tables.
"""

from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta

import asyncpg

WINDOW_BACK = timedelta(days=366 * 10)
WINDOW_AHEAD = timedelta(days=366)


def quarters(times: Iterable[datetime], now: datetime | None = None) -> set[date]:
    """First days of the quarters of `times` that deserve a partition of their own."""
    now = now or datetime.now(UTC)
    lo, hi = now - WINDOW_BACK, now + WINDOW_AHEAD
    return {date(t.year, (t.month - 1) // 3 * 3 + 1, 1) for t in times if lo <= t <= hi}


class Partitions:
    """Remembers which quarters exist, so the common case costs no round trip."""

    def __init__(self) -> None:
        self.known: set[date] = set()

    async def ensure(self, conn: asyncpg.Connection, needed: set[date]) -> None:
        for quarter in sorted(needed - self.known):
            async with conn.transaction():
                await conn.execute("SELECT threadline_ensure_partition($1)", quarter)
            self.known.add(quarter)
