"""Small pieces of the benchmark tools: a rounds file with two HTTP clients renders one table
per client (never one client's cells over the other's), fetch_split writes a statement's
arguments as the typed literals its COPY runs with, lineage_phases' timers keep their step's
time when it raises, and level_variants picks only the row-by-row level from runs."""

from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import pytest

from benchmarks.fetch_split import _literal
from benchmarks.level_variants import _from_runs, plain_level
from benchmarks.lineage_phases import Timings
from benchmarks.report import rounds_tables
from server.lineage.model import NodeKind
from server.lineage.queries import DOWN, UP, io_level_statement
from server.lineage.service import io_parts

pytestmark = pytest.mark.unit


def _run(system: str, client: str, p50: float) -> dict[str, Any]:
    case = {
        "granularity": "DATASET",
        "depth": 3,
        "p50_ms": p50,
        "p95_ms": p50 * 2,
        "p99_ms": p50 * 3,
        "nodes_median": 14.5,
        "nodes_max": 75,
    }
    return {
        "system": system,
        "client": client,
        "round": 1,
        "start_kind": "DATASET",
        "cases": [case],
    }


def test_a_rounds_file_with_two_clients_renders_a_table_per_client() -> None:
    result = {
        "runs": [
            _run("threadline", "httpx", 6.0),
            _run("threadline", "raw", 4.0),
            _run("data-rentgen", "httpx", 48.0),
            _run("data-rentgen", "raw", 46.0),
        ]
    }
    httpx_part, raw_part = rounds_tables(result).split("client: raw")
    assert httpx_part.startswith("client: httpx")
    assert "| 6.0 / 12.0 / 18.0 | 48.0 / 96.0 / 144.0 | 8.0x | 8.0x |" in httpx_part
    assert "| 4.0 / 8.0 / 12.0 | 46.0 / 92.0 / 138.0 | 11.5x | 11.5x |" in raw_part


def test_a_rounds_file_with_one_client_renders_one_table() -> None:
    table = rounds_tables({"runs": [_run("threadline", "httpx", 6.0)]})
    assert "client:" not in table
    assert table.count("| start |") == 1


def test_statement_arguments_become_typed_literals() -> None:
    run = UUID("0190a4b2-0000-7000-8000-000000000001")
    assert _literal([1, 2], "int8[]") == '\'{"1","2"}\'::int8[]'
    assert _literal([run, None], "uuid[]") == f"'{{\"{run}\",NULL}}'::uuid[]"
    assert _literal(40001, "int8") == "40001"
    assert _literal(None, "timestamptz") == "NULL::timestamptz"
    at = datetime(2026, 1, 5, 10, 11, 12, tzinfo=UTC)
    assert _literal(at, "timestamptz") == "'2026-01-05T10:11:12+00:00'::timestamptz"
    assert _literal("it's", "text") == "'it''s'::text"


def test_a_timed_step_counts_its_time_even_when_it_raises() -> None:
    timings = Timings()

    def fails() -> None:
        raise ValueError("declined")

    with pytest.raises(ValueError, match="declined"):
        timings.wrap("step", fails)()
    assert timings.wrap("step", lambda: 7)() == 7
    assert set(timings.spent) == {"step"}
    assert timings.spent["step"] > 0


def test_only_the_row_by_row_level_from_runs_is_varied() -> None:
    parts = io_parts(NodeKind.RUN, NodeKind.RUN, (DOWN, UP))
    level = io_level_statement(parts, grouped=False).sql
    args: tuple[Any, ...] = ([], None, None, [], 40001)
    assert _from_runs(level, args)
    assert not _from_runs(io_level_statement(parts).sql, args)  # the aggregated retry
    assert not _from_runs(level.replace("run_id", "job_id"), args)
    assert not _from_runs(level, args[:4])
    plain = plain_level(level)
    assert "$5" in plain  # the server's row limit
    assert "symlink" not in plain
    assert "MATERIALIZED" not in plain
    assert "FROM output\nWHERE run_id = ANY($1) AND created_at <= $2" in plain
