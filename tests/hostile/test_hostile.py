"""The hostile-input catalogue (tests/hostile/cases) through the real consumer and read API.

Every case is sent between two valid "guard" events on one partition, all into one topic
that a real `threadline-consumer` process reads. Afterwards, per case: it is either stored
and read back exactly through the API, or dead-lettered with the manifest's reason; its
guards are stored either way; the consumer never exited and drained the topic within a
bound (no crash, no stall). Outcomes go to build/reliability/hostile.jsonl.
"""

import asyncio
import gzip
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import httpx
import orjson
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from tests.faults.harness import LagProbe, Target, Worker, create_topics
from tests.faults.private import ROOT
from tests.faults.report import Report
from tests.hostile.make_cases import CASES_DIR
from tests.server.conftest import open_client, reader_url, server_settings
from tests.services import Services

pytestmark = pytest.mark.kafka

MANIFEST: list[dict[str, Any]] = orjson.loads((CASES_DIR / "manifest.json").read_bytes())["cases"]
DRAIN_BOUND_S = 180.0
DS_LOCATION = "hostile-db.example.com:5432"  # postgres://hostile-db.example.com:5432


def payload(case: dict[str, Any]) -> bytes:
    data = (CASES_DIR / case["file"]).read_bytes()
    return gzip.decompress(data) if case["file"].endswith(".gz") else data


def guard(case_id: str, side: str) -> tuple[uuid.UUID, bytes]:
    run_id = uuid.uuid4()
    body = {
        "eventType": "COMPLETE",
        "eventTime": "2025-05-05T11:00:00Z",
        "producer": "https://example.com/threadline-hostile-guard",
        "run": {"runId": str(run_id)},
        "job": {"namespace": "hostile-guards", "name": f"guard_{side}_{case_id}"},
        "outputs": [{"namespace": "s3://guards", "name": f"{case_id}/{side}"}],
    }
    return run_id, orjson.dumps(body)


@dataclass(frozen=True, slots=True)
class Ingested:
    offsets: dict[str, int]
    guards: dict[str, tuple[uuid.UUID, uuid.UUID]]
    dead: dict[int, tuple[str, str]]  # original offset -> (reason, detail)
    seconds: float


async def _produce(
    bootstrap: str, topic: str
) -> tuple[dict[str, int], dict[str, tuple[uuid.UUID, uuid.UUID]]]:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, max_request_size=32 << 20, linger_ms=5)
    await producer.start()
    offsets, guards = {}, {}
    try:
        for case in MANIFEST:
            before, before_value = guard(case["id"], "before")
            after, after_value = guard(case["id"], "after")
            await producer.send_and_wait(topic, before_value, key=b"hostile")
            sent = await producer.send_and_wait(topic, payload(case), key=b"hostile")
            await producer.send_and_wait(topic, after_value, key=b"hostile")
            offsets[case["id"]] = sent.offset
            guards[case["id"]] = (before, after)
    finally:
        await producer.stop()
    return offsets, guards


async def _dead_letters(bootstrap: str, topic: str) -> dict[int, tuple[str, str]]:
    reader = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        max_partition_fetch_bytes=64 << 20,
        fetch_max_bytes=64 << 20,
    )
    await reader.start()
    found: dict[int, tuple[str, str]] = {}
    try:
        quiet_since = time.monotonic()
        while time.monotonic() - quiet_since < 3:
            batch = await reader.getmany(timeout_ms=500)
            for record in (r for rs in batch.values() for r in rs):
                headers = {k: v.decode() for k, v in record.headers}
                found[int(headers["x-original-offset"])] = (
                    headers["x-threadline-reason"],
                    headers.get("x-threadline-detail", ""),
                )
                quiet_since = time.monotonic()
    finally:
        await reader.stop()
    return found


async def _drain(worker: Worker, probe: LagProbe) -> float:
    started = time.monotonic()
    try:
        while time.monotonic() - started < DRAIN_BOUND_S:
            assert worker.alive(), f"the consumer exited:\n{worker.log_tail()}"
            if await probe.lag() == 0:
                return time.monotonic() - started
            await asyncio.sleep(0.5)
    finally:
        await probe.close()
    raise AssertionError(f"the consumer stalled (lag {await probe.lag()}):\n{worker.log_tail()}")


@pytest.fixture(scope="module")
async def ingested(
    database_url: str, test_services: Services, tmp_path_factory: pytest.TempPathFactory
) -> Ingested:
    """The whole catalogue, sent once and consumed by one real consumer process."""
    bootstrap = test_services.kafka_bootstrap
    topic = f"hostile-{uuid.uuid4().hex[:8]}"
    await create_topics(bootstrap, topic, partitions=1)
    offsets, guards = await _produce(bootstrap, topic)
    target = Target(
        database_url, bootstrap, topic, f"{topic}-group", tmp_path_factory.mktemp("hostile")
    )
    worker = Worker(target, "consumer")
    await worker.start()
    try:
        seconds = await _drain(worker, LagProbe(bootstrap, topic, target.group_id))
    finally:
        await worker.stop()
    return Ingested(
        offsets, guards, await _dead_letters(bootstrap, target.dead_letter_topic), seconds
    )


@pytest.fixture(scope="module")
async def api(database_url: str, test_services: Services) -> AsyncIterator[httpx.AsyncClient]:
    """The read API as deployed: the read-only role."""
    async with open_client(server_settings(reader_url(database_url, test_services))) as client:
        yield client


@pytest.fixture(scope="module")
def report() -> Report:
    return Report(ROOT / "build" / "reliability" / "hostile.jsonl")


def test_catalogue_is_complete() -> None:
    ids = [c["id"] for c in MANIFEST]
    assert len(ids) == len(set(ids)) >= 30
    on_disk = {p.name for p in CASES_DIR.iterdir()} - {"manifest.json"}
    assert on_disk == {c["file"] for c in MANIFEST}
    for case in MANIFEST:
        assert case["expect"] in {"stored", "dead_letter"}
        assert case["expect"] == "stored" or case.get("reason"), case["id"]


@pytest.mark.parametrize("case", MANIFEST, ids=[c["id"] for c in MANIFEST])
async def test_hostile_case(
    case: dict[str, Any], ingested: Ingested, api: httpx.AsyncClient, report: Report
) -> None:
    dead = ingested.dead.get(ingested.offsets[case["id"]])
    actual = f"dead-lettered `{dead[0]}`: {dead[1][:120]}" if dead else "stored"
    expected = (
        f"dead-lettered `{case['reason']}`"
        if case["expect"] == "dead_letter"
        else "stored, read back"
    )
    problems = [
        f"guard {g} not stored" for g in ingested.guards[case["id"]] if not await _run(api, g)
    ]
    if case["expect"] == "dead_letter":
        problems += _dead_letter_problems(case, dead)
    elif dead is not None:
        problems.append(f"expected stored, got {actual}")
    else:
        problems += await _read_back_problems(case, api)
    verdict = "ok" if not problems else "MISMATCH: " + "; ".join(problems)
    report.add(
        case=case["id"], what=case["what"], expected=expected, actual=f"{actual} ({verdict})"
    )
    assert not problems, problems


def _dead_letter_problems(case: dict[str, Any], dead: tuple[str, str] | None) -> list[str]:
    if dead is None:
        return [f"expected dead letter `{case['reason']}`, but it was stored"]
    reason, detail = dead
    problems = []
    if reason != case["reason"]:
        problems.append(f"reason `{reason}` ({detail[:200]}), expected `{case['reason']}`")
    if not detail.strip():
        problems.append("empty x-threadline-detail")
    wanted = case.get("detail_contains")
    if wanted and wanted.lower() not in detail.lower():
        problems.append(f"detail {detail[:200]!r} does not mention {wanted!r}")
    return problems


async def _run(api: httpx.AsyncClient, run_id: uuid.UUID | str) -> dict[str, Any] | None:
    response = await api.get(f"/v1/runs/{run_id}")
    return response.json() if response.status_code == 200 else None


async def _read_back_problems(case: dict[str, Any], api: httpx.AsyncClient) -> list[str]:
    """The stored event read back through the API: run, job, datasets, exact values."""
    event = orjson.loads(payload(case))
    checks = case.get("checks", {})
    run = await _run(api, checks.get("run_id", event["run"]["runId"]))
    if run is None:
        return ["run not found through /v1/runs/{id}"]
    problems = []
    job = event["job"]
    if run["job"]["name"] != job["name"]:
        problems.append(f"job name {run['job']['name'][:80]!r} != {job['name'][:80]!r}")
    by_name = await api.get(
        "/v1/jobs/by-name", params={"namespace": job["namespace"], "name": job["name"]}
    )
    if by_name.status_code != 200 or by_name.json()["name"] != job["name"]:
        problems.append(f"/v1/jobs/by-name answered {by_name.status_code}")
    if "status" in checks and run["status"] != checks["status"]:
        problems.append(f"status {run['status']} != {checks['status']}")
    if "ended_at" in checks and _time(run["ended_at"]) != _time(checks["ended_at"]):
        problems.append(f"ended_at {run['ended_at']} != {checks['ended_at']}")
    problems += await _dataset_problems(event, run, checks, api)
    return problems


async def _dataset_problems(
    event: dict[str, Any], run: dict[str, Any], checks: dict[str, Any], api: httpx.AsyncClient
) -> list[str]:
    problems = []
    outputs = {o["dataset"]["name"]: o for o in run["outputs"]}
    for dataset in event.get("outputs", []):
        found = outputs.get(dataset["name"])
        if found is None:
            problems.append(f"output {dataset['name'][:80]!r} missing from the run")
        elif "output_stats" in checks:
            stats = [found["num_rows"], found["num_bytes"], found["num_files"]]
            if stats != checks["output_stats"]:
                problems.append(f"output statistics {stats} != {checks['output_stats']}")
    if "inputs" in checks:
        problems += await _input_count_problems(run, checks["inputs"], api)
    datasets = event.get("outputs", []) + event.get("inputs", [])[:1] + event.get("inputs", [])[-1:]
    for dataset in datasets:
        response = await api.get(
            "/v1/datasets/by-name",
            params={"namespace": dataset["namespace"], "name": dataset["name"]},
        )
        if response.status_code != 200 or response.json()["name"] != dataset["name"]:
            problems.append(
                f"/v1/datasets/by-name {dataset['name'][:80]!r}: {response.status_code}"
            )
    return problems


async def _input_count_problems(
    run: dict[str, Any], expected: int, api: httpx.AsyncClient
) -> list[str]:
    """All inputs stored (counted through the paginated catalogue); the run view may bound
    its list, but then it must say so rather than cut it silently."""
    problems = []
    flagged = any(v is True for k, v in run.items() if "truncated" in k)
    if len(run["inputs"]) != expected and not flagged:
        problems.append(f"run detail lists {len(run['inputs'])} of {expected} inputs, unflagged")
    names = await _catalogue_names(api, {"location_type": "postgres", "location_name": DS_LOCATION})
    stored = sum(1 for n in names if n.startswith("wide_input_"))
    if stored != expected:
        problems.append(f"{stored} of {expected} inputs found in /v1/datasets")
    return problems


async def _catalogue_names(api: httpx.AsyncClient, params: dict[str, str]) -> list[str]:
    names: list[str] = []
    cursor: str | None = None
    for _ in range(100):  # bounded: 100 pages of 500
        query = {**params, "limit": "500", **({"cursor": cursor} if cursor else {})}
        page = (await api.get("/v1/datasets", params=query)).json()
        names += [item["name"] for item in page["items"]]
        cursor = page.get("next_cursor")
        if not cursor:
            break
    return names


def _time(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text.replace("Z", "+00:00"))
