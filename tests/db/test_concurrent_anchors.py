"""Workers racing on the same non-UUIDv7 runs end with the tables of one pass.

A non-v7 run or operation is stored under its anchor, the earliest eventTime ever seen
(`consumer.write.timeseries.anchor`). Two workers that meet a new id at once both try to
insert its anchor: one inserts it, the other waits for that transaction, then locks the
stored anchor and, if its own events are earlier, moves the anchor and the rows already
written under it. Here two pipelines (two connections, as two consumer processes) write
the late and the early events of the same runs at the same time, in several splits, and
the tables must equal those of one batch with every event.
"""

import asyncio
import random
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from consumer.ingest import DEFAULT_MAX_EVENT_BYTES, Pipeline
from consumer.retry import Backoff
from consumer.write import Writer
from tests.db.dump import Dump, differences, dump, empty
from tests.db.events import envelope

pytestmark = pytest.mark.db

BASE = datetime(2024, 6, 1, tzinfo=UTC)
COLUMNS = {
    "fields": {"id": {"inputFields": [{"namespace": "s3://in", "name": "a", "field": "id"}]}}
}


def event(kind: str, minute: int, run: str, job: str, **run_facets: Any) -> dict[str, Any]:
    at = (BASE + timedelta(minutes=minute)).isoformat().replace("+00:00", "Z")
    return envelope(kind, at, run, job, **run_facets)


def application(number: int) -> list[bytes]:
    """A Spark application with two SQL executions, every id a UUIDv4; each run's events a
    few minutes apart, so that whoever sees a later event first anchors it too late."""
    app, app_job = str(uuid.uuid4()), f"app_{number}"
    events = [event(kind, m, app, app_job) for kind, m in (("START", 0), ("COMPLETE", 30))]
    parent = {"run": {"runId": app}, "job": {"namespace": "synthetic", "name": app_job}}
    for position in range(2):
        execution, job = str(uuid.uuid4()), f"{app_job}.execute_{position}"
        for kind, minute in (("START", 1 + position), ("RUNNING", 5), ("COMPLETE", 9)):
            sql = event(kind, minute + position, execution, job, parent=parent)
            sql["inputs"] = [{"namespace": "s3://in", "name": "a"}]
            output: dict[str, Any] = {"namespace": "s3://out", "name": f"t{number}_{position}"}
            if kind != "START":
                output["facets"] = {"columnLineage": COLUMNS}
            sql["outputs"] = [output]
            events.append(sql)
    return [orjson.dumps(e) for e in events]


def new_pipeline(engine: AsyncEngine) -> Pipeline:
    return Pipeline(Writer(engine), max_event_bytes=DEFAULT_MAX_EVENT_BYTES, backoff=Backoff())


async def write(pipeline: Pipeline, batch: list[bytes]) -> None:
    result = await pipeline.run(batch)
    assert not result.rejects, result.rejects


async def race(engine: AsyncEngine, late: list[bytes], early: list[bytes]) -> Dump:
    """Empty the tables, then two workers write `late` and `early` at the same time."""
    await empty(engine)
    await asyncio.gather(write(new_pipeline(engine), late), write(new_pipeline(engine), early))
    return await dump(engine)


@pytest.mark.parametrize("seed", range(10))
async def test_workers_racing_on_new_non_v7_ids_give_the_one_batch_tables(
    fast_engine: AsyncEngine, seed: int
) -> None:
    events = [e for number in range(8) for e in application(number)]
    await empty(fast_engine)
    await write(new_pipeline(fast_engine), events)
    reference = await dump(fast_engine)
    rng = random.Random(seed)
    # Per run, its later events to one worker and its earlier ones to the other: both
    # meet every id at once, and the worker with the earlier times must move the other's.
    by_time = sorted(events, key=lambda e: orjson.loads(e)["eventTime"])
    cut = rng.randint(len(by_time) // 4, 3 * len(by_time) // 4)
    early, late = by_time[:cut], by_time[cut:]
    rng.shuffle(early)
    rng.shuffle(late)
    got = await race(fast_engine, late, early)
    assert got == reference, "\n".join(differences(reference, got))
    # And again on top, everything to both workers (a redelivery): nothing changes.
    await asyncio.gather(
        write(new_pipeline(fast_engine), events[::-1]), write(new_pipeline(fast_engine), events)
    )
    assert await dump(fast_engine) == reference
