"""Events the database or the key rules refuse are isolated; the rest of their batch is written."""

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from consumer.ingest import ingest_payloads
from tests.conftest import create_database, drop_database
from tests.services import Services

pytestmark = pytest.mark.db


def event(output_name: str) -> bytes:
    return json.dumps(
        {
            "eventType": "COMPLETE",
            "eventTime": datetime.now(UTC).isoformat(),
            "producer": "https://example.com/tests",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json",
            "run": {"runId": str(uuid.uuid4())},
            "job": {"namespace": "tests", "name": f"job-{uuid.uuid4().hex[:6]}"},
            "outputs": [{"namespace": "s3://bucket", "name": output_name}],
        }
    ).encode()


async def dataset_names(engine: AsyncEngine) -> list[str]:
    async with engine.connect() as conn:
        rows = await conn.execute(text("SELECT name FROM dataset ORDER BY name"))
        return list(rows.scalars())


DATASET_CHECK = "ALTER TABLE dataset ADD CONSTRAINT refuse_me CHECK (name <> 'refused/by/db')"


async def _run_sql(url: str, statement: str) -> None:
    engine = create_async_engine(url)
    async with engine.begin() as conn:
        await conn.execute(text(statement))
    await engine.dispose()


@pytest.fixture
def strict_url(test_services: Services) -> Iterator[str]:
    """A database with one extra CHECK constraint: a stand-in for any row PostgreSQL refuses."""
    name = f"threadline_strict_{uuid.uuid4().hex[:10]}"
    url = create_database(test_services, name)
    asyncio.run(_run_sql(url, DATASET_CHECK))
    yield url
    drop_database(test_services, name)


@pytest.fixture
async def strict_engine(strict_url: str) -> AsyncIterator[AsyncEngine]:
    engine = create_async_engine(strict_url)
    yield engine
    await engine.dispose()


async def test_event_the_database_refuses_is_bisected_out(strict_engine: AsyncEngine) -> None:
    payloads = [event(f"ok/{i}") for i in range(5)] + [event("refused/by/db"), event("ok/last")]
    result = await ingest_payloads(strict_engine, payloads)
    assert set(result.rejects) == {5}
    assert result.rejects[5].reason == "database_refused"
    assert "23514" in result.rejects[5].detail  # check_violation, with the SQLSTATE
    assert await dataset_names(strict_engine) == [f"ok/{i}" for i in range(5)] + ["ok/last"]
    assert result.written == 6


async def test_name_longer_than_an_index_key_is_rejected_not_cut(clean_engine: AsyncEngine) -> None:
    payloads = [event("ok/first"), event("x" * 100_000), event("ok/second")]
    result = await ingest_payloads(clean_engine, payloads)
    assert {i: r.reason for i, r in result.rejects.items()} == {1: "name_too_long"}
    assert "100000 bytes" in result.rejects[1].detail
    assert await dataset_names(clean_engine) == ["ok/first", "ok/second"]


def _statistics_event(output_name: str, row_count: int, event_type: str = "COMPLETE") -> bytes:
    body = json.loads(event(output_name))
    body["eventType"] = event_type
    body["outputs"][0]["outputFacets"] = {
        "outputStatistics": {
            "_producer": "https://example.com/tests",
            "_schemaURL": "https://openlineage.io/spec/facets/1-0-2/OutputStatisticsOutputDatasetFacet.json",
            "rowCount": row_count,
        }
    }
    return json.dumps(body).encode()


# Constraints on time-series tables, whose statements run while the next one's rows are
# built (consumer.write.timeseries.Sender): the first statement of the sequence (run) and
# one in its middle (output). A refused row there must surface, roll the batch back and be
# bisected out like a refused dataset.
TIME_SERIES_CHECKS = {
    "run": "ALTER TABLE run ADD CONSTRAINT refuse_me CHECK (status <> 3)",
    "output": "ALTER TABLE output ADD CONSTRAINT refuse_me CHECK (num_rows <> 666)",
}


@pytest.fixture(params=sorted(TIME_SERIES_CHECKS))
def checked(request: pytest.FixtureRequest, test_services: Services) -> Iterator[tuple[str, str]]:
    """(table, url): a database whose `table` refuses one row (TIME_SERIES_CHECKS)."""
    table: str = request.param
    name = f"threadline_strict_{uuid.uuid4().hex[:10]}"
    url = create_database(test_services, name)
    asyncio.run(_run_sql(url, TIME_SERIES_CHECKS[table]))
    yield table, url
    drop_database(test_services, name)


async def test_time_series_row_the_database_refuses_is_bisected_out(
    checked: tuple[str, str],
) -> None:
    table, url = checked
    engine = create_async_engine(url)
    try:
        refused = (
            _statistics_event("refused", 1, "FAIL")
            if table == "run"
            else _statistics_event("refused", 666)
        )
        payloads = [_statistics_event(f"ok/{i}", i + 1) for i in range(4)]
        payloads += [refused, _statistics_event("ok/last", 99)]
        result = await ingest_payloads(engine, payloads)
        assert {i: r.reason for i, r in result.rejects.items()} == {4: "database_refused"}
        assert "23514" in result.rejects[4].detail
        assert result.written == 5
        async with engine.connect() as conn:
            rows = await conn.execute(
                text(
                    "SELECT d.name, o.num_rows FROM output o JOIN dataset d ON d.id = o.dataset_id"
                    " ORDER BY d.name"
                )
            )
            written = [tuple(row) for row in rows]
        assert written == [(f"ok/{i}", i + 1) for i in range(4)] + [("ok/last", 99)]
    finally:
        await engine.dispose()
