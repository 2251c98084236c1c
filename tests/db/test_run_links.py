"""Root-run links and streaming checkpoint counters are stored."""

import json
import uuid

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from consumer.ingest import ingest_payloads
from tests.corpus import ingestable

pytestmark = pytest.mark.db


def flink_running(run_id: uuid.UUID, minute: int, completed: int) -> bytes:
    """A Flink listener RUNNING event (the corpus's checkpoint events are all templates)."""
    checkpoints = {"completed": completed, "failed": 0, "in-progress": 1, "restored": 0}
    job_type = {"integration": "FLINK", "jobType": "JOB", "processingType": "STREAMING"}
    return json.dumps(
        {
            "eventType": "RUNNING",
            "eventTime": f"2026-11-01T10:{minute:02d}:00Z",
            "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.23.0/integration/flink",
            "run": {
                "runId": str(run_id),
                "facets": {"checkpoints": {**checkpoints, "total": completed + 1}},
            },
            "job": {
                "namespace": "flink_job_namespace",
                "name": "flink_examples_stateful",
                "facets": {"jobType": job_type},
            },
        }
    ).encode()


async def scalar(engine: AsyncEngine, sql: str) -> object:
    async with engine.connect() as conn:
        return (await conn.execute(text(sql))).scalar_one()


async def test_root_runs_of_real_events_are_linked(clean_engine: AsyncEngine) -> None:
    result = await ingest_payloads(clean_engine, [e.payload for e in ingestable()])
    assert result.rejects == {}
    assert await scalar(clean_engine, "SELECT count(*) FROM run WHERE root_run_id IS NOT NULL")


async def test_latest_checkpoint_snapshot_wins_in_any_order(clean_engine: AsyncEngine) -> None:
    run_id = uuid.uuid4()
    events = [flink_running(run_id, m, completed) for m, completed in ((1, 3), (5, 9), (3, 6))]
    for event in events:  # one batch each: the SQL upsert applies the rule, not merge()
        await ingest_payloads(clean_engine, [event])
    assert await scalar(clean_engine, "SELECT checkpoints FROM run") == [10, 9, 0, 0, 1]
