"""Location admin: addresses, external id, and merging two locations (datasets and jobs)."""

import uuid
from typing import Any

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from consumer.ingest import ingest_payloads
from tests.server.events import (
    AIRFLOW,
    T0,
    dataset,
    hours,
    job_event,
    run_event,
    uuid7,
)

pytestmark = pytest.mark.db


async def _ingest(engine: AsyncEngine, events: list[bytes]) -> None:
    result = await ingest_payloads(engine, events)
    assert not result.rejects, result.rejects


async def _location_id(engine: AsyncEngine, name: str) -> int:
    async with engine.connect() as conn:
        found = await conn.execute(text("SELECT id FROM location WHERE name = :n"), {"n": name})
        return int(found.scalar_one())


async def _dataset_ids(engine: AsyncEngine, location_id: int) -> dict[str, int]:
    async with engine.connect() as conn:
        rows = await conn.execute(
            text("SELECT name, id FROM dataset WHERE location_id = :l"), {"l": location_id}
        )
        return {r.name: r.id for r in rows}


def _ok(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _problem(response: httpx.Response, status: int, words: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert words in response.json()["detail"]


class Cluster:
    """One HDFS cluster recorded as two locations (two namenode addresses), plus its jobs."""

    def __init__(self) -> None:
        self.tag = f"adm-{uuid.uuid4().hex[:8]}"
        self.a = f"hdfs://{self.tag}-a.example:8020"
        self.b = f"hdfs://{self.tag}-b.example:8020"
        self.jobs = f"{self.tag}-jobs"
        self.hive = f"hive://{self.tag}-hms.example:9083"
        self.seed = int(uuid.uuid4().int % 10**9)

    def run(self, offset: float, name: str, **io: Any) -> list[bytes]:
        at = T0 + hours(offset)
        run_id = uuid7(at, self.seed + int(offset * 100))
        job = (self.jobs, name)
        return [run_event("COMPLETE", at, run_id, job, **io)]

    def events(self) -> list[bytes]:
        a, b = self.a, self.b
        lineage = {"x": [(a, "/data/events", "id", "DIRECT")]}
        return [
            *self.run(
                1,
                "writer",
                outputs=[
                    dataset(a, "/data/events", stats=(10, 100, 1), output=True),
                    dataset(a, "/data/only_a", output=True),
                    dataset(a, "/data/tbl", table=(self.hive, "adm.tbl"), output=True),
                ],
            ),
            *self.run(
                2,
                "reader",
                inputs=[dataset(b, "/data/events"), dataset(b, "/data/tbl")],
                outputs=[dataset(b, "/data/only_b", columns=lineage, transformations=False)],
            ),
            *self.run(
                3,
                "both",
                inputs=[
                    dataset(a, "/data/events", stats=(5, 50, 1)),
                    dataset(b, "/data/events", stats=(7, 70, 1)),
                ],
            ),
            job_event(
                T0 + hours(4),
                (self.jobs, "declared"),
                inputs=[dataset(a, "/data/events")],
                outputs=[],
            ),
        ]


@pytest.fixture
async def cluster(engine: AsyncEngine) -> Cluster:
    made = Cluster()
    await _ingest(engine, made.events())
    return made


async def test_merge_unifies_same_named_datasets(
    api_client: httpx.AsyncClient, engine: AsyncEngine, cluster: Cluster
) -> None:
    source = await _location_id(engine, f"{cluster.tag}-a.example:8020")
    target = await _location_id(engine, f"{cluster.tag}-b.example:8020")
    before_source = await _dataset_ids(engine, source)
    before_target = await _dataset_ids(engine, target)

    body = _ok(
        await api_client.post(f"/v1/locations/{target}/merge", json={"source_location_id": source})
    )

    assert body["merged"] == {
        "addresses": 1,
        "datasets_moved": 1,
        "datasets_merged": 2,
        "jobs_moved": 0,
        "jobs_merged": 0,
    }
    assert {a["url"] for a in body["location"]["addresses"]} == {cluster.a, cluster.b}
    assert (await api_client.get(f"/v1/locations/{source}")).status_code == 404
    after = await _dataset_ids(engine, target)
    assert after == {**before_target, "/data/only_a": before_source["/data/only_a"]}
    gone = before_source["/data/events"]
    assert (await api_client.get(f"/v1/datasets/{gone}")).status_code == 404

    events = _ok(await api_client.get(f"/v1/datasets/{after['/data/events']}"))
    uses = {(u["job"]["name"], u["direction"]) for u in events["jobs"]}
    assert uses == {
        ("writer", "OUTPUT"),
        ("reader", "INPUT"),
        ("both", "INPUT"),
        ("declared", "INPUT"),
    }
    # Looked up by the source's address, the dataset is now the target's.
    found = _ok(
        await api_client.get(
            "/v1/datasets/by-name", params={"namespace": cluster.a, "name": "/data/events"}
        )
    )
    assert found["id"] == after["/data/events"]
    tbl = _ok(await api_client.get(f"/v1/datasets/{after['/data/tbl']}"))
    assert [(s["type"], s["dataset"]["name"]) for s in tbl["symlinks"]] == [
        ("METASTORE", "adm.tbl")
    ]


async def test_merge_merges_rows_of_one_operation(
    api_client: httpx.AsyncClient, engine: AsyncEngine, cluster: Cluster
) -> None:
    source = await _location_id(engine, f"{cluster.tag}-a.example:8020")
    target = await _location_id(engine, f"{cluster.tag}-b.example:8020")
    _ok(await api_client.post(f"/v1/locations/{target}/merge", json={"source_location_id": source}))
    events_id = (await _dataset_ids(engine, target))["/data/events"]
    async with engine.connect() as conn:
        rows = (
            await conn.execute(
                text(
                    "SELECT i.num_rows FROM input AS i JOIN job AS j ON j.id = i.job_id"
                    " WHERE j.name = 'both' AND i.dataset_id = :d AND j.location_id ="
                    " (SELECT id FROM location WHERE name = :ns)"
                ),
                {"d": events_id, "ns": cluster.jobs},
            )
        ).all()
        assert [r.num_rows for r in rows] == [7]  # two rows became one; counters take the max
        edges = (
            await conn.execute(
                text("SELECT count(*) FROM column_lineage WHERE source_dataset_id = :d"),
                {"d": events_id},
            )
        ).scalar_one()
        assert edges == 1


async def test_merge_unifies_same_named_jobs(
    api_client: httpx.AsyncClient, engine: AsyncEngine
) -> None:
    tag = f"adm-{uuid.uuid4().hex[:8]}"
    dag_runs = [uuid7(T0 + hours(h), h) for h in (40, 41)]
    task_run = uuid7(T0 + hours(40.5), 99)
    kinds = {"processingType": "BATCH", "integration": "AIRFLOW"}
    events = [
        run_event(
            "COMPLETE",
            T0 + hours(40),
            dag_runs[0],
            (f"{tag}-a", "dag1"),
            producer=AIRFLOW,
            job_type={**kinds, "jobType": "DAG"},
        ),
        run_event(
            "COMPLETE",
            T0 + hours(40.5),
            task_run,
            (f"{tag}-a", "dag1.t"),
            producer=AIRFLOW,
            job_type={**kinds, "jobType": "TASK"},
            parent=(dag_runs[0], f"{tag}-a", "dag1"),
        ),
        run_event(
            "COMPLETE",
            T0 + hours(41),
            dag_runs[1],
            (f"{tag}-b", "dag1"),
            producer=AIRFLOW,
            job_type={**kinds, "jobType": "DAG"},
        ),
    ]
    await _ingest(engine, events)
    source, target = await _location_id(engine, f"{tag}-a"), await _location_id(engine, f"{tag}-b")

    body = _ok(
        await api_client.post(f"/v1/locations/{target}/merge", json={"source_location_id": source})
    )

    assert (body["merged"]["jobs_merged"], body["merged"]["jobs_moved"]) == (1, 1)
    jobs = _ok(await api_client.get("/v1/jobs", params={"location_id": target}))["items"]
    by_name = {j["name"]: j for j in jobs}
    assert set(by_name) == {"dag1", "dag1.t"}
    assert by_name["dag1.t"]["parent_job_id"] == by_name["dag1"]["id"]
    dag = _ok(await api_client.get(f"/v1/jobs/{by_name['dag1']['id']}"))
    assert {r["id"] for r in dag["runs"]} == {str(r) for r in dag_runs}
    assert [c["name"] for c in dag["children"]] == ["dag1.t"]


async def test_merge_errors(
    api_client: httpx.AsyncClient, engine: AsyncEngine, cluster: Cluster
) -> None:
    target = await _location_id(engine, f"{cluster.tag}-b.example:8020")
    url = f"/v1/locations/{target}/merge"
    _problem(await api_client.post(url, json={"source_location_id": target}), 409, "into itself")
    _problem(await api_client.post(url, json={"source_location_id": 987654321}), 404, "987654321")
    _problem(
        await api_client.post("/v1/locations/987654321/merge", json={"source_location_id": target}),
        404,
        "987654321",
    )
    _problem(
        await api_client.post(url, json={"source_location_id": "x"}), 422, "source_location_id"
    )
    _problem(await api_client.post(url, json={"source": 1}), 422, "source")


async def test_addresses_add_and_remove(
    api_client: httpx.AsyncClient, engine: AsyncEngine, cluster: Cluster
) -> None:
    loc = await _location_id(engine, f"{cluster.tag}-a.example:8020")
    other = await _location_id(engine, f"{cluster.tag}-b.example:8020")
    path = f"/v1/locations/{loc}/addresses"
    # Spelled differently from the canonical form: stored as the consumer would record it.
    added = _ok(await api_client.post(path, json={"url": f"HDFS://{cluster.tag}-c.example"}))
    urls = {a["url"]: a["id"] for a in added["addresses"]}
    assert set(urls) == {cluster.a, f"hdfs://{cluster.tag}-c.example:8020"}
    again = _ok(await api_client.post(path, json={"url": f"hdfs://{cluster.tag}-c.example:8020"}))
    assert again == added
    _problem(await api_client.post(path, json={"url": cluster.b}), 409, f"location {other}")
    _problem(await api_client.post(path, json={"url": "s3://bucket"}), 422, "'s3' namespace")
    _problem(await api_client.post(path, json={"url": ""}), 422, "url")
    found = _ok(
        await api_client.get(
            "/v1/datasets/by-name",
            params={"namespace": f"hdfs://{cluster.tag}-c.example", "name": "/data/only_a"},
        )
    )
    assert found["location"]["id"] == loc

    removed = _ok(await api_client.delete(f"{path}/{urls[cluster.a]}"))
    assert [a["url"] for a in removed["addresses"]] == [f"hdfs://{cluster.tag}-c.example:8020"]
    last = urls[f"hdfs://{cluster.tag}-c.example:8020"]
    _problem(await api_client.delete(f"{path}/{last}"), 409, "at least one address")
    _problem(await api_client.delete(f"{path}/987654321"), 404, "987654321")


async def test_external_id(
    api_client: httpx.AsyncClient, engine: AsyncEngine, cluster: Cluster
) -> None:
    loc = await _location_id(engine, f"{cluster.tag}-a.example:8020")
    path = f"/v1/locations/{loc}"
    assert (
        _ok(await api_client.patch(path, json={"external_id": "urn:cluster:7"}))["external_id"]
        == "urn:cluster:7"
    )
    assert _ok(await api_client.get(path))["external_id"] == "urn:cluster:7"
    assert _ok(await api_client.patch(path, json={"external_id": None}))["external_id"] is None
    _problem(
        await api_client.patch("/v1/locations/987654321", json={"external_id": "x"}),
        404,
        "987654321",
    )
    _problem(await api_client.patch(path, json={}), 422, "external_id")
    _problem(await api_client.patch(path, json={"external_id": "a\u0000b"}), 422, "external_id")


async def test_admin_needs_an_admin_database(
    reader_api_client: httpx.AsyncClient, engine: AsyncEngine, cluster: Cluster
) -> None:
    loc = await _location_id(engine, f"{cluster.tag}-a.example:8020")
    for response in (
        await reader_api_client.patch(f"/v1/locations/{loc}", json={"external_id": "x"}),
        await reader_api_client.post(f"/v1/locations/{loc}/addresses", json={"url": cluster.b}),
        await reader_api_client.post(f"/v1/locations/{loc}/merge", json={"source_location_id": 1}),
    ):
        _problem(response, 503, "admin database not configured")
