"""Lineage SQL runs on the asyncpg connection itself, not through SQLAlchemy's execution layer.

A graph takes four to ten statements, some of thousands of rows. On top of asyncpg,
SQLAlchemy's execute (compiled-cache lookup, parameter and result processing, Row objects)
cost ~0.3 ms per statement on this project's benchmark machine, about a fifth of a small
graph's server time. The statements stay written with named `:parameters` and are numbered
once, when built, into asyncpg's `$n`; asyncpg prepares each once per connection (its
statement cache), so LINEAGE_TUNING's generic plans apply as before.
"""

import re
from dataclasses import dataclass
from typing import Any

import asyncpg

Connection = asyncpg.Connection
Record = asyncpg.Record

# `:name`, but not the second colon of a `::type` cast nor a colon after a word character
# (`'12:30'`). The lineage SQL has no other colons (no quoted text holding one).
PARAMETER = re.compile(r"(?<![:\w]):([a-z_][a-z0-9_]*)")


@dataclass(frozen=True, slots=True)
class Statement:
    """SQL with asyncpg's `$n` parameters and the name each number stands for."""

    sql: str
    names: tuple[str, ...]

    @classmethod
    def named(cls, sql: str) -> "Statement":
        """Number the `:name` parameters of `sql` in order of first use."""
        names: list[str] = []

        def number(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in names:
                names.append(name)
            return f"${names.index(name) + 1}"

        return cls(PARAMETER.sub(number, sql), tuple(names))


async def fetch(conn: Connection, statement: Statement, **params: Any) -> list[Record]:
    """All rows of `statement` with `params` bound by name (a missing one is a KeyError)."""
    return await conn.fetch(statement.sql, *(params[name] for name in statement.names))
