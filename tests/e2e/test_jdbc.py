"""Job c: JDBC writes and reads against the local PostgreSQL, reached by two host names.

`load` connects to localhost, `export` to 127.0.0.1. Both are the same server, so the
naming rules (loopback addresses are `localhost`, the default port is explicit) must
put their tables in one postgres location and make export's input the very dataset
load wrote: one lineage graph, no duplicates.
"""

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from urllib.parse import urlsplit

import asyncpg
import pytest

from tests.e2e.api import Api, Json, by_name, dataset_names
from tests.e2e.conftest import NAMESPACE
from tests.e2e.harness import JobResult, Pipeline
from tests.e2e.jobs.names import JDBC_APP_PREFIX
from tests.services import Services

pytestmark = pytest.mark.e2e


@dataclass(frozen=True, slots=True)
class Source:
    """The database Spark reads and writes over JDBC (not Threadline's)."""

    database: str
    port: int
    user: str
    password: str

    def jdbc_env(self, host: str) -> dict[str, str]:
        return {
            "THREADLINE_E2E_JDBC_URL": f"jdbc:postgresql://{host}:{self.port}/{self.database}",
            "THREADLINE_E2E_JDBC_USER": self.user,
            "THREADLINE_E2E_JDBC_PASSWORD": self.password,
        }

    def table(self, name: str) -> str:
        """The OpenLineage dataset name: database.schema.table."""
        return f"{self.database}.public.{name}"


@pytest.fixture(scope="module")
async def source(test_services: Services) -> AsyncIterator[Source]:
    admin = urlsplit(test_services.pg_admin_url)
    name = f"threadline_e2e_jdbc_{uuid.uuid4().hex[:8]}"
    conn = await asyncpg.connect(test_services.pg_admin_url)
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
        yield Source(name, admin.port or 5432, admin.username or "", admin.password or "")
    finally:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await conn.close()


@pytest.fixture(scope="module")
async def jdbc_jobs(pipeline: Pipeline, source: Source) -> tuple[JobResult, JobResult]:
    load = await pipeline.run_job("jdbc_job", "load", env=source.jdbc_env("localhost"))
    assert load.returncode == 0, load.tail()
    export = await pipeline.run_job("jdbc_job", "export", env=source.jdbc_env("127.0.0.1"))
    assert export.returncode == 0, export.tail()
    await pipeline.drained()
    return load, export


async def last_run(api: Api, mode: str) -> Json:
    job = await api.job(NAMESPACE, f"{JDBC_APP_PREFIX}{mode}")
    return await api.run(job["last_run"]["id"])


async def test_both_host_names_resolve_to_one_location_and_one_dataset(
    api: Api, source: Source, jdbc_jobs: tuple[JobResult, JobResult]
) -> None:
    port = source.port
    via_localhost = await api.dataset(f"postgres://localhost:{port}", source.table("orders"))
    via_ip = await api.dataset(f"postgres://127.0.0.1:{port}", source.table("orders"))
    via_scheme_alias = await api.dataset(f"postgresql://127.0.0.1:{port}", source.table("orders"))
    assert via_localhost["id"] == via_ip["id"] == via_scheme_alias["id"]
    location = via_localhost["location"]
    assert (location["type"], location["name"]) == ("postgres", f"localhost:{port}")
    assert location["addresses"] == [f"postgres://localhost:{port}"]
    datasets = await api.get("/v1/datasets", location_id=location["id"], limit=100)
    assert sorted(d["name"] for d in datasets["items"]) == sorted(
        source.table(t) for t in ("big_orders", "order_totals", "orders")
    )


async def test_load_writes_through_localhost(
    api: Api, source: Source, jdbc_jobs: tuple[JobResult, JobResult]
) -> None:
    run = await last_run(api, "load")
    assert run["status"] == "SUCCEEDED"
    writes = {o["dataset"]["name"]: (o["types"], o["num_rows"]) for o in run["outputs"]}
    assert writes == {
        source.table("orders"): (["OVERWRITE"], 4),
        source.table("order_totals"): (["OVERWRITE"], 3),
    }
    operations = await api.spark_operations(run["id"])
    totals = await api.operation(by_name(operations, "public_order_totals")["id"])
    assert dataset_names(totals["inputs"]) == {source.table("orders")}


async def test_export_reads_what_load_wrote(
    api: Api, source: Source, jdbc_jobs: tuple[JobResult, JobResult]
) -> None:
    load, export = await last_run(api, "load"), await last_run(api, "export")
    assert dataset_names(export["inputs"]) == {source.table("orders")}
    [big] = export["outputs"]
    assert big["dataset"]["name"] == source.table("big_orders")
    # mode("append") on a table that does not exist yet: the listener reports CREATE.
    assert (big["types"], big["num_rows"]) == (["CREATE"], 2)
    # DataHub's upstream instances: the run that wrote what export read.
    assert [u["run"]["id"] for u in export["upstream_runs"]] == [load["id"]]
    orders = await api.dataset(f"postgres://localhost:{source.port}", source.table("orders"))
    assert [u["dataset_ids"] for u in export["upstream_runs"]] == [[orders["id"]]]


async def test_one_graph_across_both_jobs(
    api: Api, source: Source, jdbc_jobs: tuple[JobResult, JobResult]
) -> None:
    big = await api.dataset(f"postgres://127.0.0.1:{source.port}", source.table("big_orders"))
    graph = await api.lineage("DATASET", big["id"], direction="UPSTREAM", depth=4)
    jobs = {j["name"] for j in graph["nodes"]["jobs"]}
    assert {f"{JDBC_APP_PREFIX}load", f"{JDBC_APP_PREFIX}export"} <= jobs
    assert {d["name"] for d in graph["nodes"]["datasets"]} == {
        source.table("orders"),
        source.table("big_orders"),
    }
    assert len({d["location"]["id"] for d in graph["nodes"]["datasets"]}) == 1
