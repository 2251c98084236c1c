"""Lineage statements: named parameters numbered for asyncpg, every statement well-formed."""

import pytest

from server.lineage import node_queries, queries
from server.lineage.sql import PARAMETER, Statement
from server.lineage.traversal import DOWN, UP

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
        queries.io_level_statement((part,), from_start=from_start)
        for part in io_parts
        for from_start in (False, True)
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
