"""A RUN or OPERATION level's rows grouped per (direction, dataset, process) as the SQL
aggregate groups them: the Python definition, and the native grouping held to it."""

import random
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from asyncpg.pgproto import pgproto

from server.lineage import grouping, native
from server.lineage.grouping import group_io_rows, merged

pytestmark = pytest.mark.unit

T = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def native_group() -> Any:
    """The native grouping; a failure (not a skip) where the module is missing."""
    if grouping.NATIVE_GROUP is None:
        pytest.fail("threadline_native is not built (scripts/install.sh builds it)", pytrace=False)
    return grouping.NATIVE_GROUP


def row(
    direction: str,
    dataset: Any,
    process: Any,
    counters: tuple[int | None, int | None, int | None] = (None, None, None),
    types: int | None = None,
    created: datetime = T,
    seen: datetime = T,
    schema: int | None = None,
) -> tuple[Any, ...]:
    return (direction, dataset, process, *counters, types, created, seen, schema)


def test_a_group_of_one_row_is_that_row() -> None:
    rows = [row("down", 1, "a"), row("up", 1, "a"), row("down", 2, "a"), row("down", 1, "b")]
    for group in (native_group(), None):
        found = group_io_rows(rows, group)
        assert found == rows
        assert all(kept is given for kept, given in zip(found, rows, strict=True))


def test_a_larger_group_is_aggregated_as_sql_aggregates_it() -> None:
    earlier, later = T - timedelta(hours=1), T + timedelta(hours=1)
    rows = [
        row("down", 1, "r", (10, None, 1), 1, created=T, seen=T, schema=7),
        row("up", 1, "r", (5, 5, 5)),  # another direction: its own group
        row("down", 1, "r", (None, None, 2), 4, created=earlier, seen=later, schema=None),
        row("down", 1, "r", (3, None, None), None, created=later, seen=T, schema=9),
    ]
    expected = [
        # sums and OR over the rows that have a value, the earliest creation, the latest
        # event, and of the rows with a schema the latest (equal times: the greater id)
        ("down", 1, "r", 13, None, 3, 5, earlier, later, 9),
        rows[1],
    ]
    for group in (native_group(), None):
        assert group_io_rows(rows, group) == expected


def test_a_group_without_values_keeps_its_nulls() -> None:
    rows = [row("down", 1, "r"), row("down", 1, "r")]
    assert merged(rows) == ("down", 1, "r", None, None, None, None, T, T, None)


def test_the_latest_schema_wins_before_the_greater_id() -> None:
    later = T + timedelta(microseconds=1)
    rows = [row("up", 3, "r", seen=later, schema=1), row("up", 3, "r", seen=T, schema=2)]
    assert merged(rows)[9] == 1


def random_rows(rng: random.Random) -> list[tuple[Any, ...]]:
    """Rows with few distinct keys (so that groups form), process ids of both UUID classes
    as the database and tests give them, and symlink columns after some."""
    rows = []
    for _ in range(rng.randrange(0, 80)):
        value = uuid.UUID(int=rng.randrange(4))
        process = pgproto.UUID(value.bytes) if rng.random() < 0.5 else value
        counters = tuple(rng.choice([None, rng.randrange(100)]) for _ in range(3))
        created = T + timedelta(seconds=rng.randrange(5))
        seen = created + timedelta(seconds=rng.randrange(3))
        made = row(
            rng.choice(["down", "up"]),
            rng.randrange(3),
            process,
            counters,  # type: ignore[arg-type]
            rng.choice([None, 1, 2, 4]),
            created,
            seen,
            rng.choice([None, rng.randrange(5)]),
        )
        rows.append((*made, None, None, None) if rng.random() < 0.3 else made)
    return rows


@pytest.mark.parametrize("seed", range(60))
def test_rows_are_grouped_natively_as_python_groups_them(seed: int) -> None:
    rows = random_rows(random.Random(seed))
    python = group_io_rows(rows, None)
    assert group_io_rows(rows, native_group()) == python
    keys = [(r[0], r[1], r[2]) for r in python]
    assert len(set(keys)) == len(keys) == len({(r[0], r[1], r[2]) for r in rows})


@pytest.mark.parametrize(
    "odd",
    [
        row("sideways", 1, "r"),  # not a direction
        row("down", "1", "r"),  # a dataset id that is not an integer
        row("down", 2**63, "r"),  # nor a 64-bit one
        row("down", 1, -2),  # hash(-2) == hash(-1): a process the native key cannot tell apart
    ],
)
def test_what_the_native_key_cannot_hold_is_left_to_python(odd: tuple[Any, ...]) -> None:
    rows = [row("down", 1, -1), row("down", 1, -1, (1, 1, 1)), odd]
    with pytest.raises(grouping.NATIVE_DECLINES):
        native_group()(rows)
    assert group_io_rows(rows) == group_io_rows(rows, None)
    assert len(group_io_rows(rows, None)) == 2


def python_only(group: list[Any]) -> tuple[Any, ...]:
    raise AssertionError(f"merged in Python: {group}")


def test_a_larger_group_is_merged_natively() -> None:
    """Groups of the values a level holds never reach Python's `merged`."""
    grouper = native.io_row_grouper(python_only)
    if grouper is None:
        pytest.fail("threadline_native is not built (scripts/install.sh builds it)", pytrace=False)
    big = 2**63 - 1
    rows = [
        row("down", 1, "r", (big, 0, None), 8, created=T, seen=T, schema=4),
        row("down", 1, "r", (big, None, None), 16, created=T, seen=T, schema=6),
        row("down", 1, "r", (1, -5, None), None, created=T, seen=T, schema=5),
    ]
    expected = ("down", 1, "r", 2 * big + 1, -5, None, 24, T, T, 6)  # past 64 bits, exactly
    assert grouper(rows) == [expected] == group_io_rows(rows, None)


@pytest.mark.parametrize(
    "odd",
    [
        row("down", 1, "r", (2**64, None, None)),  # a counter past 64 bits
        row("down", 1, "r", (1.5, None, None)),  # type: ignore[arg-type]  # not an integer
        row("down", 1, "r", types=2**70),
    ],
)
def test_values_the_native_merge_cannot_hold_are_merged_in_python(odd: tuple[Any, ...]) -> None:
    rows = [row("down", 1, "r", (1, 2, 3), 1), odd]
    assert group_io_rows(rows, native_group()) == group_io_rows(rows, None) == [merged(rows)]


def test_times_that_do_not_compare_raise_pythons_error() -> None:
    rows = [row("down", 1, "r"), row("down", 1, "r", created=T.replace(tzinfo=None))]
    with pytest.raises(TypeError) as python:
        group_io_rows(rows, None)
    with pytest.raises(TypeError) as native:
        group_io_rows(rows, native_group())
    assert str(native.value) == str(python.value)


@pytest.mark.parametrize("seed", range(200))
def test_merged_groups_natively_as_python_merges_them(seed: int) -> None:
    """Many rows per key, equal times and ids, counters near 64 bits."""
    rng = random.Random(seed)
    rows = []
    for _ in range(rng.randrange(2, 40)):
        counters = [rng.choice([None, 0, rng.randrange(-(2**63), 2**63)]) for _ in range(3)]
        rows.append(
            row(
                "up",
                rng.randrange(2),
                "r",
                tuple(counters),  # type: ignore[arg-type]
                rng.choice([None, 0, 1, 8, 2**62]),
                T + timedelta(seconds=rng.randrange(3)),
                T + timedelta(seconds=rng.randrange(3)),
                rng.choice([None, rng.randrange(3)]),
            )
        )
    assert group_io_rows(rows, native_group()) == group_io_rows(rows, None)
