"""Idempotent and order-independent, as a property: the same events give the same tables.

Reference: the event set in one batch. Against it: the same events shuffled,
each delivered one to three times, split into random batches (one
`Pipeline.run` each, sometimes through a fresh pipeline with empty caches, as
after a consumer restart). The events are a sample of the ingestable corpus
plus generated Spark applications whose events disagree on purpose: runs and
operations with non-v7 ids, START after COMPLETE, differing users, job
details, schemas and statistics, eventTimes in several spellings, and
datasets reached through aliases (a Kafka bootstrap list, loopback Postgres).
"""

import itertools
import random
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from consumer.ingest import DEFAULT_MAX_EVENT_BYTES, Pipeline
from consumer.retry import Backoff
from consumer.write import Writer
from tests.corpus import ingestable
from tests.db.dump import Dump, column_index, differences, dump, empty
from tests.db.events import envelope

pytestmark = pytest.mark.db

BASE = datetime(2024, 5, 1, tzinfo=UTC)
# Dataset pool: aliases of one location, a partitioned path behind a Hive table, a file.
HDFS_TABLE = {"namespace": "hive://metastore:9083", "name": "db.sales", "type": "TABLE"}
DATASETS = [
    ("kafka://a:9092", "events", None),
    ("kafka://b:9092", "events", None),
    ("kafka://a:9092,b:9092", "events", None),
    ("postgres://localhost:5432", "shop.public.orders", None),
    ("postgres://127.0.0.1", "shop.public.orders", None),
    ("hdfs://nn1:8020", "/warehouse/sales/dt=2024-05-01", HDFS_TABLE),
    ("hdfs://nn1", "/warehouse/sales/dt=2024-05-02/", HDFS_TABLE),
    ("s3://bucket", "raw/file.csv", None),
]
SCHEMAS = [None, [{"name": "id", "type": "int"}], [{"name": "id", "type": "bigint"}]]
# Storage facets that disagree: a dataset keeps the greatest format any event gave it.
STORAGE = [None, {"fileFormat": "parquet"}, {"fileFormat": "ORC"}, {"storageLayer": "iceberg"}]


def event_time(seconds: float, spelling: int) -> str:
    """One instant in one of several spellings: Z, +02:00, no offset (UTC), 0-9 digits."""
    at = BASE + timedelta(seconds=seconds)
    if spelling == 0:
        return at.isoformat().replace("+00:00", "Z")
    if spelling == 1:
        return at.astimezone(UTC).replace(tzinfo=None).isoformat()  # read as UTC
    shifted = at + timedelta(hours=2)
    return shifted.strftime("%Y-%m-%dT%H:%M:%S.%f") + "000+02:00"  # nanoseconds


def run_id(draw: st.DrawFn, seconds: int) -> str:
    """A UUIDv7 of that time, or a v4/v1 id whose created_at comes from eventTimes."""
    version = draw(st.sampled_from(["v7", "v4", "v1"]))
    if version == "v7":
        millis = int((BASE + timedelta(seconds=seconds)).timestamp() * 1000)
        tail = draw(st.integers(0, 2**74 - 1))
        value = (millis << 80) | (7 << 76) | ((tail >> 62) << 64) | (2 << 62) | (tail & (2**62 - 1))
        return str(uuid.UUID(int=value))
    return str(draw(st.uuids(version=4 if version == "v4" else 1)))


# Column-lineage sources, two of them aliases of one Kafka cluster: the events of one
# operation name different column sets, which must not depend on how they were batched.
COLUMN_SOURCES = [DATASETS[0], DATASETS[1], DATASETS[3], DATASETS[5]]


@st.composite
def column_lineage(draw: st.DrawFn) -> dict[str, Any]:
    def source(draw_one: tuple[tuple[str, str, Any], str, str]) -> dict[str, Any]:
        (namespace, name, _), field, kind = draw_one
        return {"namespace": namespace, "name": name, "field": field,
                "transformations": [{"type": kind}]}  # fmt: skip

    sources = st.tuples(
        st.sampled_from(COLUMN_SOURCES),
        st.sampled_from(["id", "amount"]),
        st.sampled_from(["DIRECT", "INDIRECT"]),
    )
    targets = draw(st.lists(st.sampled_from(["id", "total", "day"]), max_size=3, unique=True))
    named = st.lists(sources, min_size=1, max_size=3)
    fields = {target: {"inputFields": [source(s) for s in draw(named)]} for target in targets}
    return {"fields": fields, "dataset": [source(s) for s in draw(st.lists(sources, max_size=1))]}


@st.composite
def dataset(draw: st.DrawFn, output: bool) -> dict[str, Any]:
    namespace, name, table = draw(st.sampled_from(DATASETS))
    facets: dict[str, Any] = {}
    if table:
        facets["symlinks"] = {"identifiers": [table]}
    if fields := draw(st.sampled_from(SCHEMAS)):
        facets["schema"] = {"fields": fields}
    if storage := draw(st.sampled_from(STORAGE)):
        facets["storage"] = storage
    item: dict[str, Any] = {"namespace": namespace, "name": name, "facets": facets}
    rows = draw(st.none() | st.integers(0, 1000))
    if output and rows is not None:
        item["outputFacets"] = {"outputStatistics": {"rowCount": rows, "size": rows * 10}}
    if output and draw(st.booleans()):
        facets["columnLineage"] = draw(column_lineage())
    if output and draw(st.booleans()):
        facets["lifecycleStateChange"] = {
            "lifecycleStateChange": draw(st.sampled_from(["CREATE", "OVERWRITE"]))
        }
    return item


@st.composite
def spark_application(draw: st.DrawFn, number: int) -> list[dict[str, Any]]:
    """An application's own events and its SQL executions' events, in any order later."""
    start = draw(st.integers(0, 3600))
    app, app_job = run_id(draw, start), f"app_{number}"
    events = []
    for kind in draw(
        st.lists(st.sampled_from(["START", "RUNNING", "COMPLETE", "FAIL"]), min_size=1, max_size=3)
    ):
        user = draw(st.sampled_from([None, "alice", "bob"]))
        details = {"applicationId": f"application_{number}", **({"userName": user} if user else {})}
        at = event_time(start + draw(st.integers(0, 60)), draw(st.integers(0, 2)))
        events.append(envelope(kind, at, app, app_job, spark_applicationDetails=details))
    for position in range(draw(st.integers(1, 3))):
        events += draw(sql_execution(app, app_job, start, position))
    return events


@st.composite
def sql_execution(
    draw: st.DrawFn, app: str, app_job: str, start: int, position: int
) -> list[dict[str, Any]]:
    seconds = start + draw(st.integers(0, 60))
    execution = run_id(draw, seconds)
    parent = {"run": {"runId": app}, "job": {"namespace": "synthetic", "name": app_job}}
    events = []
    for kind in draw(
        st.lists(st.sampled_from(["START", "RUNNING", "COMPLETE", "FAIL"]), min_size=1, max_size=3)
    ):
        details = {
            "jobId": draw(st.integers(position, position + 2)),
            "jobDescription": draw(st.sampled_from(["load", "merge"])),
        }
        at = event_time(seconds + draw(st.integers(0, 30)), draw(st.integers(0, 2)))
        event = envelope(
            kind,
            at,
            execution,
            f"{app_job}.execute_{position}",
            parent=parent,
            spark_jobDetails=details,
        )
        event["job"]["facets"]["jobType"] = {
            "integration": "SPARK",
            "jobType": "SQL_JOB",
            "processingType": "BATCH",
        }
        if kind == "FAIL":
            event["run"]["facets"]["errorMessage"] = {
                "message": draw(st.sampled_from(["oom", "lost"]))
            }
        event["inputs"] = draw(st.lists(dataset(output=False), max_size=2))
        event["outputs"] = draw(st.lists(dataset(output=True), max_size=2))
        events.append(event)
    return events


CORPUS = [e.payload for e in ingestable()]


@pytest.fixture(scope="module")
async def fast_engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    """The test database without waiting for the WAL flush at each commit.

    Each example commits dozens of small batches (~20 ms of flush each here);
    durability is not what this test is about, the final rows are.
    """
    settings = {"server_settings": {"synchronous_commit": "off", "jit": "off"}}
    fast = create_async_engine(database_url, pool_size=2, connect_args=settings)
    yield fast
    await fast.dispose()


@st.composite
def event_sets(draw: st.DrawFn) -> list[bytes]:
    corpus = draw(st.lists(st.sampled_from(CORPUS), max_size=25, unique=True))
    apps = [draw(spark_application(i)) for i in range(draw(st.integers(1, 2)))]
    return corpus + [orjson.dumps(e) for app in apps for e in app]


async def ingest(engine: AsyncEngine, batches: list[list[bytes]], fresh: list[bool]) -> Dump:
    """Empty the database, run each batch through the pipeline, dump every table."""
    await empty(engine)
    pipeline = new_pipeline(engine)
    for batch, restart in zip(batches, fresh, strict=True):
        pipeline = new_pipeline(engine) if restart else pipeline
        result = await pipeline.run(batch)
        assert not result.rejects, result.rejects
    return await dump(engine)


def new_pipeline(engine: AsyncEngine) -> Pipeline:
    return Pipeline(Writer(engine), max_event_bytes=DEFAULT_MAX_EVENT_BYTES, backoff=Backoff())


def deliveries(rng: random.Random, events: list[bytes], max_batch: int) -> list[list[bytes]]:
    """Each event one to three times, shuffled, cut into batches of 1..max_batch."""
    delivered = [e for e in events for _ in range(rng.randint(1, 3))]
    rng.shuffle(delivered)
    batches = []
    while delivered:
        size = rng.randint(1, max_batch)
        batches.append(delivered[:size])
        delivered = delivered[size:]
    return batches


# Each example costs a second of database work, so no shrinking (minutes): the failure
# message lists the rows that differ instead.
@settings(
    max_examples=25,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(events=event_sets(), seed=st.integers(0, 2**32 - 1), max_batch=st.integers(1, 12))
async def test_any_order_duplication_and_batching_gives_the_same_tables(
    fast_engine: AsyncEngine, events: list[bytes], seed: int, max_batch: int
) -> None:
    reference = await ingest(fast_engine, [events], [False])
    rng = random.Random(seed)
    batches = deliveries(rng, events, max_batch)
    got = await ingest(fast_engine, batches, [rng.random() < 0.2 for _ in batches])
    assert got == reference, "\n".join(differences(reference, got))


@pytest.mark.parametrize("seed", [1, 2])
async def test_the_whole_corpus_in_any_order_gives_the_same_tables(
    fast_engine: AsyncEngine, seed: int
) -> None:
    reference = await ingest(fast_engine, [CORPUS], [False])
    rng = random.Random(seed)
    batches = deliveries(rng, CORPUS, 20) if seed % 2 else [CORPUS[::-1] * 2]
    got = await ingest(fast_engine, batches, [rng.random() < 0.2 for _ in batches])
    assert got == reference, "\n".join(differences(reference, got))


def user_event(run: str, minute: int, user: str | None) -> bytes:
    details = {"applicationId": "application_1", **({"userName": user} if user else {})}
    event = envelope(
        "RUNNING", event_time(minute * 60, 0), run, "app", spark_applicationDetails=details
    )
    return orjson.dumps(event)


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
async def test_the_latest_user_wins_in_any_order(
    fast_engine: AsyncEngine, order: tuple[int, ...]
) -> None:
    """The case that made "latest non-null" order-dependent with one time per row.

    t1 says bob, t3 says nothing, t2 says alice: with "latest by the row's time",
    t1, t3, t2 kept bob (t2 < t3) while t1, t2, t3 gave alice. Each event is its
    own batch, so the rule that decides is the SQL upsert's, not merge()'s.
    """
    run = str(uuid.uuid4())
    events = [user_event(run, 1, "bob"), user_event(run, 3, None), user_event(run, 2, "alice")]
    got = await ingest(fast_engine, [[events[i]] for i in order], [False] * 3)
    user = column_index("run", "started_by_user_id")  # dumped as the user's name
    times = column_index("run", "field_times")
    assert [row[user] for row in got["run"]] == ["alice"]
    assert got["run"][0][times][3] == BASE + timedelta(minutes=2)


def schema_event(run: str, minute: int, fields: list[dict[str, str]] | None) -> bytes:
    event = envelope("RUNNING", event_time(minute * 60, 0), run, "app.execute_0")
    facets = {"schema": {"fields": fields}} if fields else {}
    event["inputs"] = [{"namespace": "s3://bucket", "name": "in.csv", "facets": facets}]
    return orjson.dumps(event)


@pytest.mark.parametrize("int_is_later", [True, False])
async def test_an_input_keeps_the_latest_schema_in_any_order(
    fast_engine: AsyncEngine, int_is_later: bool
) -> None:
    """The later schema wins whichever digest is greater; a later event without one keeps it."""
    run = str(uuid.uuid4())
    as_int, as_bigint = SCHEMAS[1], SCHEMAS[2]
    early, late = (as_bigint, as_int) if int_is_later else (as_int, as_bigint)
    events = [schema_event(run, 1, early), schema_event(run, 2, late), schema_event(run, 3, None)]
    expected = await ingest(fast_engine, [[events[1]]], [False])
    schema = column_index("input", "schema_id")  # dumped as the schema's digest
    results = set()
    for order in itertools.permutations(range(3)):
        got = await ingest(fast_engine, [[events[i]] for i in order], [False] * 3)
        results.add(tuple(row[schema] for row in got["input"]))
    assert results == {(expected["input"][0][schema],)}


def format_event(run: str, minute: int, storage: dict[str, str] | None) -> bytes:
    event = envelope("RUNNING", event_time(minute * 60, 0), run, "app.execute_0")
    facets = {"storage": storage} if storage else {}
    event["outputs"] = [{"namespace": "s3://bucket", "name": "out", "facets": facets}]
    return orjson.dumps(event)


@pytest.mark.parametrize("fresh", [False, True], ids=["cached", "restarted"])
async def test_a_dataset_keeps_the_greatest_format_in_any_order(
    fast_engine: AsyncEngine, fresh: bool
) -> None:
    """Each event its own batch (with or without the writer's caches): the SQL decides."""
    run = str(uuid.uuid4())
    events = [
        format_event(run, 1, {"fileFormat": "ORC"}),
        format_event(run, 2, {"storageLayer": "iceberg", "fileFormat": "parquet"}),
        format_event(run, 3, None),
    ]
    fmt = column_index("dataset", "format")
    for order in itertools.permutations(range(3)):
        got = await ingest(fast_engine, [[events[i]] for i in order], [fresh] * 3)
        assert [row[fmt] for row in got["dataset"]] == ["parquet"], order


def claimed_event(operation: str, minute: int, app: str, app_job: str) -> bytes:
    """A Spark SQL execution's event whose parent facet names `app` (of job `app_job`)."""
    event = envelope("RUNNING", event_time(minute * 60, 0), operation, f"{app_job}.execute_0")
    event["run"]["facets"]["parent"] = {
        "run": {"runId": app},
        "job": {"namespace": "synthetic", "name": app_job},
    }
    event["job"]["facets"]["jobType"] = {"integration": "SPARK", "jobType": "SQL_JOB"}
    event["outputs"] = [{"namespace": "s3://bucket", "name": "out", "facets": {}}]
    return orjson.dumps(event)


async def test_an_output_names_the_run_and_job_of_its_latest_event(
    fast_engine: AsyncEngine,
) -> None:
    """Events that disagree about whose operation it is: the latest event's run and job win,
    on equal times the greater run id; each event its own batch, so the SQL decides."""
    operation = "018f3173-73e8-7000-8000-000000000001"
    first, low, high = (f"018f3173-7000-7000-8000-00000000000{i}" for i in (1, 2, 3))
    events = [
        claimed_event(operation, 1, high, "app_c"),
        claimed_event(operation, 2, low, "app_b"),
        claimed_event(operation, 2, high, "app_a"),  # as late: the greater run id wins
        claimed_event(operation, 1, first, "app_z"),
    ]
    run = column_index("output", "run_id")
    job = column_index("output", "job_id")  # dumped as the job's natural key
    for order in itertools.permutations(range(4)):
        got = await ingest(fast_engine, [[events[i]] for i in order], [False] * 4)
        assert [(str(r[run]), r[job]) for r in got["output"]] == [
            (high, "namespace synthetic app_a")
        ], order
