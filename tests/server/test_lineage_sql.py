"""Lineage statements: named parameters numbered for asyncpg, every statement well-formed,
and each level's row limit where the planner does not plan for it."""

import re

import pytest

from server.lineage import node_queries, queries
from server.lineage.sql import PARAMETER, Statement
from server.lineage.traversal import DOWN, UP
from server.lineage.warmup import lineage_statements

pytestmark = pytest.mark.unit


def test_named_parameters_are_numbered_once_in_order_of_first_use() -> None:
    statement = Statement.named(
        "SELECT CAST(:ids AS bigint[]), x::text, :since FROM t WHERE a = ANY(:ids) AND b >= :since"
    )
    assert statement.sql == (
        "SELECT CAST($1 AS bigint[]), x::text, $2 FROM t WHERE a = ANY($1) AND b >= $2"
    )
    assert statement.names == ("ids", "since")


def test_casts_and_times_are_not_parameters() -> None:
    statement = Statement.named("SELECT a::bigint, '12:30'::time, b FROM t WHERE c = :c_1")
    assert statement.sql == "SELECT a::bigint, '12:30'::time, b FROM t WHERE c = $1"
    assert statement.names == ("c_1",)


def _all_statements() -> list[Statement]:
    io_parts = [
        queries.IOPart(table, direction, where, "run_id")
        for table, direction in (("input", DOWN), ("output", UP))
        for where in ("dataset_id", "run_id")
    ]
    found = [
        queries.io_level_statement((part,), from_start=from_start, grouped=grouped)
        for part in io_parts
        for from_start in (False, True)
        for grouped in (True, False)
        if part.where == "dataset_id" or not from_start
    ]
    found += [queries.dataset_level_statement((DOWN, UP), from_start=f) for f in (False, True)]
    found += [queries.column_lineage_statement(c) for c in (*queries.PROCESS_COLUMNS, None)]
    found += [
        node_queries._SYMLINK_CLOSURE,
        node_queries._DATASETS,
        node_queries._JOBS_AND_DATASETS,
    ]
    return [*found, node_queries._RUNS, node_queries._OPERATIONS]


@pytest.mark.parametrize("statement", _all_statements())
def test_no_named_parameter_is_left(statement: Statement) -> None:
    assert PARAMETER.search(statement.sql) is None
    assert all(f"${i}" in statement.sql for i in range(1, len(statement.names) + 1))


def _cte_bodies(sql: str) -> list[str]:
    """The text inside the parentheses of every `AS MATERIALIZED (...)` CTE of `sql`."""
    bodies = []
    for match in re.finditer(r"AS MATERIALIZED \(", sql):
        depth = 1
        for end in range(match.end(), len(sql)):
            depth += {"(": 1, ")": -1}.get(sql[end], 0)
            if depth == 0:
                bodies.append(sql[match.end() : end])
                break
    return bodies


_LEVELS = [s for s in lineage_statements() if "row_limit" in s.names]


@pytest.mark.parametrize("statement", _LEVELS, ids=[f"level-{i}" for i in range(len(_LEVELS))])
def test_a_levels_row_limit_is_outside_its_ctes(statement: Statement) -> None:
    # Inside a CTE, the planner plans the level to return its first rows soonest: from a
    # job frontier that read the whole input or output table (queries._WITH_SYMLINKS).
    limit = re.compile(rf"\${statement.names.index('row_limit') + 1}(?!\d)")
    assert limit.search(statement.sql)
    assert not [body for body in _cte_bodies(statement.sql) if limit.search(body)]
