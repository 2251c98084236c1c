"""Event builders shared by the database tests."""

from typing import Any

PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.30.0/integration/spark"


def envelope(kind: str, at: str, run: str, job: str, **run_facets: Any) -> dict[str, Any]:
    """A RunEvent of job `synthetic/<job>` with no datasets yet."""
    return {
        "eventType": kind,
        "eventTime": at,
        "producer": PRODUCER,
        "run": {"runId": run, "facets": run_facets},
        "job": {"namespace": "synthetic", "name": job, "facets": {}},
        "inputs": [],
        "outputs": [],
    }
