"""The summaries' triggers (`job_edge`, migration 0013; `dataset_edge`, 0014): each kind of
write the consumer, the anchor moves and the merges make to input and output rows keeps
the summaries exact, or marks the ones sums cannot follow stale. Each test writes in a
transaction it rolls back."""

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any
from uuid import UUID

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from tests.edges import edge_mismatches

pytestmark = pytest.mark.db

T = datetime(2031, 3, 2, 10, 0, tzinfo=UTC)
DATASET, OTHER_DATASET, JOB, OTHER_JOB = 990_001, 990_002, 990_011, 990_012
OP1, OP2 = UUID(int=990_101), UUID(int=990_102)
RUN = UUID(int=990_201)
COLUMNS = (
    "created_at, operation_id, dataset_id, run_id, job_id, schema_id, schema_time,"
    " num_rows, num_bytes, num_files, last_event_time"
)
# The consumer's conflict rule for counters and times (consumer.write.sql), its owner rule
# left out: these tests change owners with plain updates.
UPSERT = f"""
INSERT INTO {{table}} AS x ({COLUMNS}{{extra}})
VALUES (:at, :op, :dataset, :run, :job, :schema, :seen, :rows, :bytes, :files, :seen{{value}})
ON CONFLICT (created_at, operation_id, dataset_id) DO UPDATE SET
  num_rows = GREATEST(x.num_rows, excluded.num_rows),
  num_bytes = GREATEST(x.num_bytes, excluded.num_bytes),
  num_files = GREATEST(x.num_files, excluded.num_files),
  schema_id = coalesce(excluded.schema_id, x.schema_id),
  last_event_time = GREATEST(x.last_event_time, excluded.last_event_time){{types}}
"""  # noqa: S608 - constant table names


@pytest.fixture
async def db(engine: AsyncEngine) -> AsyncIterator[AsyncConnection]:
    async with engine.connect() as conn:
        transaction = await conn.begin()
        yield conn
        await transaction.rollback()


async def write(db: AsyncConnection, table: str = "input", **row: Any) -> None:
    values = {
        "at": T,
        "op": OP1,
        "dataset": DATASET,
        "run": RUN,
        "job": JOB,
        "schema": None,
        "seen": T,
        "rows": None,
        "bytes": None,
        "files": None,
        **row,
    }
    output = table == "output"
    sql = UPSERT.format(
        table=table,
        extra=", types" if output else "",
        value=", :types" if output else "",
        types=",\n  types = x.types | excluded.types" if output else "",
    )
    await db.execute(text(sql), values | ({"types": row.get("types", 0)} if output else {}))


async def summary(db: AsyncConnection, job: int = JOB, direction: int = 0) -> dict[str, Any]:
    found = await db.execute(
        text("SELECT * FROM job_edge WHERE dataset_id = :d AND job_id = :j AND direction = :k"),
        {"d": DATASET, "j": job, "k": direction},
    )
    return dict(found.mappings().one())


async def test_inserts_and_raised_counters_are_summed(db: AsyncConnection) -> None:
    await write(db, rows=10, files=1)
    await write(db, op=OP2, at=T + timedelta(hours=1), seen=T + timedelta(hours=1), rows=5)
    await write(db, rows=12, bytes=100, seen=T + timedelta(hours=2))  # OP1 again: raised
    edge = await summary(db)
    assert (edge["num_rows"], edge["rows_known"], edge["num_bytes"], edge["bytes_known"]) == (
        17,
        2,
        100,
        1,
    )
    assert (edge["num_files"], edge["files_known"], edge["stale"]) == (1, 1, False)
    assert (edge["first_seen_at"], edge["last_seen_at"]) == (T, T + timedelta(hours=2))
    assert await edge_mismatches(db) == {}


async def test_the_latest_schema_wins_and_a_tie_takes_the_greater_id(db: AsyncConnection) -> None:
    await write(db, schema=7)
    await write(db, op=OP2, schema=5)  # the same time: the greater id stays
    assert (await summary(db))["schema_id"] == 7
    await write(db, op=OP2, schema=5, seen=T + timedelta(minutes=1))  # later: it wins
    assert (await summary(db))["schema_id"] == 5
    assert await edge_mismatches(db) == {}


async def test_output_types_are_or_ed(db: AsyncConnection) -> None:
    await write(db, "output", types=1)
    await write(db, "output", op=OP2, types=4)
    await write(db, "output", types=2)
    assert (await summary(db, direction=1))["types"] == 7
    assert await edge_mismatches(db) == {}


async def test_a_row_that_changes_jobs_leaves_its_old_summary_stale(db: AsyncConnection) -> None:
    await write(db, rows=10)
    await write(db, op=OP2, rows=3)
    await db.execute(
        text("UPDATE input SET job_id = :j WHERE operation_id = :op"), {"j": OTHER_JOB, "op": OP2}
    )
    assert (await summary(db))["stale"]
    moved = await summary(db, OTHER_JOB)
    assert (moved["num_rows"], moved["stale"]) == (3, False)
    assert await edge_mismatches(db) == {}


async def test_an_anchor_moving_earlier_moves_the_first_time(db: AsyncConnection) -> None:
    await write(db, rows=10, at=T, seen=T + timedelta(hours=1))
    earlier = T - timedelta(days=40)  # another quarter: the row moves between partitions
    moved = {"at": earlier, "op": OP1}
    await db.execute(text("UPDATE input SET created_at = :at WHERE operation_id = :op"), moved)
    edge = await summary(db)
    assert (edge["num_rows"], edge["first_seen_at"], edge["stale"]) == (10, earlier, False)
    assert await edge_mismatches(db) == {}


async def test_a_schema_replaced_at_the_same_time_leaves_the_summary_stale(
    db: AsyncConnection,
) -> None:
    await write(db, schema=9)
    await db.execute(text("UPDATE input SET schema_id = 3 WHERE operation_id = :op"), {"op": OP1})
    assert (await summary(db))["stale"]
    assert await edge_mismatches(db) == {}


async def test_deleted_rows_leave_their_summaries_stale(db: AsyncConnection) -> None:
    await write(db, rows=10)
    await write(db, dataset=OTHER_DATASET, rows=1)
    await db.execute(text("DELETE FROM input WHERE dataset_id = :d"), {"d": DATASET})
    assert (await summary(db))["stale"]
    assert await edge_mismatches(db) == {}


async def pair(db: AsyncConnection, target: int = OTHER_DATASET) -> dict[str, Any]:
    found = await db.execute(
        text("SELECT * FROM dataset_edge WHERE source_id = :s AND target_id = :t"),
        {"s": DATASET, "t": target},
    )
    return dict(found.mappings().one())


@pytest.mark.parametrize("outputs_first", [False, True], ids=["inputs first", "outputs first"])
async def test_an_operations_inputs_and_outputs_pair_in_either_order(
    db: AsyncConnection, outputs_first: bool
) -> None:
    writes = [
        partial(write, db, schema=4),
        partial(write, db, "output", dataset=OTHER_DATASET, rows=10, types=1),
    ]
    for step in reversed(writes) if outputs_first else writes:
        await step()
    await write(db, op=OP2, schema=6, seen=T + timedelta(hours=1))
    await write(db, "output", op=OP2, dataset=OTHER_DATASET, rows=5, types=2)
    edge = await pair(db)
    assert (edge["num_rows"], edge["rows_known"], edge["types"]) == (15, 2, 3)
    assert (edge["source_schema_id"], edge["stale"]) == (6, False)
    assert await edge_mismatches(db) == {}


async def test_raised_output_counters_add_their_difference(db: AsyncConnection) -> None:
    await write(db)
    await write(db, "output", dataset=OTHER_DATASET, rows=10)
    await write(db, "output", dataset=OTHER_DATASET, rows=25, seen=T + timedelta(minutes=5))
    assert (await pair(db))["num_rows"] == 25
    assert await edge_mismatches(db) == {}


async def test_an_anchor_move_of_both_sides_keeps_the_pairs_sums(db: AsyncConnection) -> None:
    # The consumer moves an operation's inputs, then its outputs (consumer.write.sql.REHOME):
    # between the two statements the sides' created_at differ.
    await write(db)
    await write(db, "output", dataset=OTHER_DATASET, rows=10, files=2)
    earlier = {"at": T - timedelta(days=40), "op": OP1}
    for table in ("input", "output"):
        sql = f"UPDATE {table} SET created_at = :at WHERE operation_id = :op"  # noqa: S608
        await db.execute(text(sql), earlier)
    edge = await pair(db)
    assert (edge["num_rows"], edge["num_files"], edge["first_seen_at"]) == (10, 2, earlier["at"])
    assert await edge_mismatches(db) == {}


async def test_a_source_schema_replaced_at_the_same_time_leaves_the_pair_stale(
    db: AsyncConnection,
) -> None:
    await write(db, schema=9)
    await write(db, "output", dataset=OTHER_DATASET, rows=1)
    await db.execute(text("UPDATE input SET schema_id = 3 WHERE operation_id = :op"), {"op": OP1})
    assert (await pair(db))["stale"]
    assert await edge_mismatches(db) == {}


async def test_deleted_outputs_leave_their_pairs_stale(db: AsyncConnection) -> None:
    await write(db)
    await write(db, "output", dataset=OTHER_DATASET, rows=1)
    await db.execute(text("DELETE FROM output WHERE dataset_id = :d"), {"d": OTHER_DATASET})
    assert (await pair(db))["stale"]
    assert await edge_mismatches(db) == {}


async def test_a_rebuild_refills_both_tables_from_the_rows(db: AsyncConnection) -> None:
    # What an operator runs after dropping partitions, which fire no trigger.
    await write(db, rows=10)
    await write(db, "output", dataset=OTHER_DATASET, rows=3)
    await db.execute(text("UPDATE job_edge SET num_rows = -1, stale = true"))
    await db.execute(text("UPDATE dataset_edge SET num_rows = -1, stale = true"))
    await db.execute(text("SELECT threadline_rebuild_edges()"))
    assert ((await summary(db))["num_rows"], (await summary(db))["stale"]) == (10, False)
    assert ((await pair(db))["num_rows"], (await pair(db))["stale"]) == (3, False)
    assert await edge_mismatches(db) == {}
