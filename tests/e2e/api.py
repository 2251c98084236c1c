"""The read API as the e2e tests use it: thin GET helpers that insist on 200."""

from typing import Any
from uuid import UUID

import httpx

Json = dict[str, Any]


class Api:
    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

    async def get(self, path: str, **params: Any) -> Any:
        response = await self.client.get(path, params=params)
        assert response.status_code == 200, f"GET {path} {params}: {response.text[:2000]}"
        return response.json()

    async def dataset(self, namespace: str, name: str) -> Json:
        """Dataset detail by OpenLineage namespace and name (the server applies naming rules)."""
        detail: Json = await self.get("/v1/datasets/by-name", namespace=namespace, name=name)
        return detail

    async def job(self, namespace: str, name: str) -> Json:
        detail: Json = await self.get("/v1/jobs/by-name", namespace=namespace, name=name)
        return detail

    async def run(self, run_id: str | UUID) -> Json:
        detail: Json = await self.get(f"/v1/runs/{run_id}")
        return detail

    async def operation(self, operation_id: str | UUID) -> Json:
        detail: Json = await self.get(f"/v1/operations/{operation_id}")
        return detail

    async def operations(self, run_id: str | UUID) -> list[Json]:
        """Every operation of a run, oldest first."""
        page: Json = await self.get("/v1/operations", run_id=str(run_id), limit=500)
        assert page["next_cursor"] is None, "more than one page of operations"
        return list(reversed(page["items"]))

    async def spark_operations(self, run_id: str | UUID) -> list[Json]:
        """The SQL/RDD job operations of a Spark application run, oldest first.

        WORKAROUND (reported): the application-level events (jobType APPLICATION) also
        become an operation of their own run (id = run id, type null, no inputs/outputs);
        it is left out here so the assertions describe the Spark jobs.
        """
        return [o for o in await self.operations(run_id) if o["id"] != str(run_id)]

    async def lineage(self, kind: str, node_id: int | str | UUID, **params: Any) -> Json:
        graph: Json = await self.get(
            "/v1/lineage", start_node_type=kind, start_node_id=str(node_id), **params
        )
        return graph


def by_name(items: list[Json], name: str) -> Json:
    """The one item whose `name` ends with `name` (operation names carry a long prefix)."""
    found = [i for i in items if str(i.get("name") or "").endswith(name)]
    assert len(found) == 1, f"{len(found)} items named *{name} in {[i.get('name') for i in items]}"
    return found[0]


def dataset_names(ios: list[Json]) -> set[str]:
    return {io["dataset"]["name"] for io in ios}
