"""One event the database refuses is isolated and rejected; the rest of its batch is written."""

import json
import random
import uuid
from datetime import UTC, datetime

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from consumer.ingest import ingest_payloads

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


async def test_refused_event_is_isolated(clean_engine: AsyncEngine) -> None:
    # 2000 random three-byte characters (~6 kB, incompressible): past PostgreSQL's btree
    # row limit (~2.7 kB) for the unique (location, name) index, so the database refuses it.
    rng = random.Random(7)
    too_wide = "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(2000))
    payloads = [event(f"ok/{i}") for i in range(5)] + [event(too_wide)] + [event("ok/last")]
    result = await ingest_payloads(clean_engine, payloads)
    assert set(result.rejects) == {5}
    assert result.rejects[5].reason == "database_refused"
    assert "54000" in result.rejects[5].detail or "index row" in result.rejects[5].detail
    async with clean_engine.connect() as conn:
        names = (await conn.execute(text("SELECT name FROM dataset ORDER BY name"))).scalars().all()
    assert names == [f"ok/{i}" for i in range(5)] + ["ok/last"]
    assert result.written == 6
