"""Migrations: round trip on a fresh database, and the models agree with them."""

import asyncio
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

from consumer.extract.columns import column_set_id
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
    """A quarter first written to the default partition is moved out when its partition
    appears."""
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
                    "SELECT (SELECT count(*) FROM run_default), (SELECT count(*) FROM run_y2031q2)"
                )
            )
        ).one()
        assert tuple(counts) == (0, 1)
        again = await conn.execute(
            text("SELECT threadline_ensure_partition(:d)"), {"d": when.date()}
        )
        assert again.scalar_one() == 0
    await engine.dispose()


_PARTITIONS = """
SELECT c.relname FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid
WHERE i.inhparent = 'input'::regclass ORDER BY c.relname
"""
_ROWS = "SELECT tableoid::regclass::text, created_at, num_rows FROM input ORDER BY created_at"
# An input row on the 15th of every month of 2030, one at the year's last microsecond, one
# far away (the default partition's).
_TIMES = [datetime(2030, m, 15, 12, tzinfo=UTC) for m in range(1, 13)] + [
    datetime(2030, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    datetime(1990, 1, 1, tzinfo=UTC),
]


def _sql(url: str, statements: list[tuple[str, dict[str, Any]]]) -> list[list[tuple[Any, ...]]]:
    """Runs the statements in one transaction (the tests' own loop: Alembic runs its own)."""

    async def run() -> list[list[tuple[Any, ...]]]:
        engine = create_async_engine(url)
        found = []
        async with engine.begin() as conn:
            for sql, params in statements:
                result = await conn.execute(text(sql), params)
                found.append([tuple(row) for row in result] if result.returns_rows else [])
        await engine.dispose()
        return found

    return asyncio.run(run())


def test_monthly_partitions_become_quarterly_and_back(scratch_url: str) -> None:
    """0011 rewrites every monthly partition into its quarter's and its downgrade the
    reverse, rows and their values kept; rows of a period that waited in the default
    partition move into its new partition."""
    config = alembic_config(scratch_url)
    command.downgrade(config, "0010")
    insert = (
        "INSERT INTO input (created_at, operation_id, dataset_id, run_id, job_id, num_rows,"
        " last_event_time) VALUES (:t, :o, 1, :r, 1, :n, :t)"
    )
    # The first half year gets monthly partitions; the rest waits in the default one.
    [*_, before] = _sql(
        scratch_url,
        [("SELECT threadline_ensure_partition(:d)", {"d": t.date()}) for t in _TIMES[:6]]
        + [
            (insert, {"t": t, "o": uuid.uuid4(), "r": uuid.uuid4(), "n": n})
            for n, t in enumerate(_TIMES)
        ]
        + [(_ROWS, {})],
    )
    assert [t for t, _, _ in before][:7] == ["input_default"] + [
        f"input_y2030m0{m}" for m in range(1, 7)
    ]

    command.upgrade(config, "0011")
    quarterly, names = _sql(scratch_url, [(_ROWS, {}), (_PARTITIONS, {})])
    assert [(at, n) for _, at, n in quarterly] == [(at, n) for _, at, n in before]
    assert [t for t, _, _ in quarterly][:7] == ["input_default"] + ["input_y2030q1"] * 3 + [
        "input_y2030q2"
    ] * 3
    assert {t for t, at, _ in quarterly if at.year == 2030 and at.month > 6} == {"input_default"}
    assert not [n for (n,) in names if "m" in n.removeprefix("input_y")]

    command.downgrade(config, "0010")
    [monthly] = _sql(scratch_url, [(_ROWS, {})])
    assert monthly == before

    command.upgrade(config, "head")
    _sql(scratch_url, [("DELETE FROM input", {})])


_EDGES = """
SELECT operation_id::text, source_dataset_id, source_column, target_dataset_id, target_column,
       run_id::text, job_id, types, last_event_time
FROM column_lineage ORDER BY 1, 2, 3, 4, 5
"""
_EXPANDED = """
SELECT c.operation_id::text, c.source_dataset_id, m.s, c.target_dataset_id, m.t,
       c.run_id::text, c.job_id, m.types, c.last_event_time
FROM column_lineage c JOIN column_set s ON s.id = c.column_set_id
CROSS JOIN LATERAL unnest(s.source_columns, s.target_columns, s.types) AS m(s, t, types)
ORDER BY 1, 2, 3, 4, 5
"""


def test_column_edges_become_sets_and_back(scratch_url: str) -> None:
    """0012 groups the edges an operation's events gave alike (same run, job and time) into
    one set under the digest the consumer computes, and its downgrade expands them again:
    every edge keeps its types, time and run and job both ways."""
    config = alembic_config(scratch_url)
    command.downgrade(config, "0011")
    t1, t2 = datetime(2030, 2, 1, tzinfo=UTC), datetime(2030, 2, 2, tzinfo=UTC)
    o1, o2 = uuid.UUID(int=1), uuid.UUID(int=2)
    r1, r2, r3 = (uuid.UUID(int=n) for n in (11, 12, 13))
    edges = [  # (operation, source column, target column, run, types, time)
        (o1, "a", "x", r1, 1, t1),
        (o1, "b", "y", r1, 2, t1),
        (o1, "c", "z", r2, 3, t2),  # another event of the operation, other run
        (o2, "a", "x", r3, 1, t1),  # the first set again, in another operation
        (o2, "b", "y", r3, 2, t1),
        (o2, "1:2 3", "\u00e9;", r3, 1, t2),  # separators and a non-ASCII name
    ]
    insert = (
        "INSERT INTO column_lineage (created_at, operation_id, source_dataset_id, source_column,"
        " target_dataset_id, target_column, run_id, job_id, types, last_event_time)"
        " VALUES (:t0, :o, 1, :s, 2, :c, :r, 7, :k, :t)"
    )
    [*_, before] = _sql(
        scratch_url,
        [
            (insert, {"t0": t1, "o": o, "s": s, "c": c, "r": r, "k": k, "t": t})
            for o, s, c, r, k, t in edges
        ]
        + [(_EDGES, {})],
    )
    assert len(before) == 6

    command.upgrade(config, "0012")
    sets, rows, expanded = _sql(
        scratch_url,
        [
            ("SELECT id, source_columns, target_columns, types FROM column_set ORDER BY id", {}),
            ("SELECT count(*) FROM column_lineage", {}),
            (_EXPANDED, {}),
        ],
    )
    assert rows == [(4,)]  # o1: two sets (two runs); o2: the shared set and one more
    assert expanded == before
    expected = {
        ((("a", "x", 1), ("b", "y", 2))),
        ((("c", "z", 3),)),
        ((("1:2 3", "\u00e9;", 1),)),
    }
    assert {id_: tuple(zip(s, t, k, strict=True)) for id_, s, t, k in sets} == {
        column_set_id(members): members for members in expected
    }

    # An edge two sets hold, the later set's run the smaller id: the downgrade gives it
    # both sets' types, the later time and the later row's run.
    late, early = (((("a", "x", 2), ("d", "w", 1))), ((("a", "x", 1),)))
    o3, insert_set = uuid.UUID(int=3), "INSERT INTO column_set VALUES (:i, :s, :t, :k)"
    insert_row = (
        "INSERT INTO column_lineage (created_at, operation_id, source_dataset_id,"
        " target_dataset_id, column_set_id, run_id, job_id, last_event_time)"
        " VALUES (:t0, :o, 1, 2, :i, :r, 7, :t)"
    )
    _sql(
        scratch_url,
        [
            (insert_set, {"i": column_set_id(m), "s": [e[0] for e in m], "t": [e[1] for e in m],
                    "k": [e[2] for e in m]})
            for m in (late, early)
        ]
        + [
            (insert_row, {"t0": t1, "o": o3, "i": column_set_id(late), "r": r1, "t": t2}),
            (insert_row, {"t0": t1, "o": o3, "i": column_set_id(early), "r": r3, "t": t1}),
        ],
    )  # fmt: skip

    command.downgrade(config, "0011")
    [after] = _sql(scratch_url, [(_EDGES, {})])
    assert after == [
        *before,
        (str(o3), 1, "a", 2, "x", str(r1), 7, 3, t2),
        (str(o3), 1, "d", 2, "w", str(r1), 7, 1, t2),
    ]

    command.upgrade(config, "head")
    _sql(scratch_url, [("DELETE FROM column_lineage", {}), ("DELETE FROM column_set", {})])
