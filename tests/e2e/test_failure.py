"""Job d: a Spark job that fails while writing.

What the listener (1.53) reports: the SQL job START/RUNNING, then FAIL with the run facet
`spark.exception` {message, stackTrace}, then a COMPLETE for the same SQL job (the SQL
execution end); the application itself ends with COMPLETE. Status only moves forward,
so the operation must end FAILED whatever the order of FAIL and COMPLETE.
"""

import pytest

from tests.e2e.api import Api, Json
from tests.e2e.conftest import NAMESPACE
from tests.e2e.harness import JobResult, Pipeline
from tests.e2e.jobs.names import FAILING_APP as APP_NAME
from tests.e2e.jobs.names import FAILING_ERROR as ERROR

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
async def failing_job(pipeline: Pipeline) -> JobResult:
    result = await pipeline.run_job("failing_job")
    assert result.returncode != 0, result.tail()
    assert ERROR in result.log.read_text(errors="replace"), result.tail()
    await pipeline.drained()
    return result


async def failed_operation(api: Api) -> tuple[Json, Json]:
    run = await api.run((await api.job(NAMESPACE, APP_NAME))["last_run"]["id"])
    [operation] = await api.spark_operations(run["id"])
    return run, await api.operation(operation["id"])


async def test_every_event_is_accepted(pipeline: Pipeline, failing_job: JobResult) -> None:
    assert await pipeline.dead_letters() == 0


async def test_failed_operation_and_what_it_tried_to_write(
    api: Api, pipeline: Pipeline, failing_job: JobResult
) -> None:
    run, operation = await failed_operation(api)
    assert (operation["type"], operation["status"]) == ("SQL_JOB", "FAILED")
    assert operation["ended_at"] is not None
    [output] = operation["outputs"]
    assert output["dataset"]["name"] == str(pipeline.work / "failing" / "doubled")
    assert output["types"] == ["OVERWRITE"]
    # No assertion on num_rows: the listener counts the rows of the tasks that finished
    # before the abort (nothing was committed), which depends on task timing.
    # The listener reports the application COMPLETE (Spark's application end): the
    # failure belongs to the operation, the application run is SUCCEEDED.
    assert (run["status"], run["state"]) == ("SUCCEEDED", "COMPLETE")


async def test_run_views_list_the_failure(api: Api, failing_job: JobResult) -> None:
    run, operation = await failed_operation(api)
    failed = await api.get("/v1/operations", run_id=run["id"], status="FAILED")
    assert [o["id"] for o in failed["items"]] == [operation["id"]]


async def test_error_message_is_kept(api: Api, failing_job: JobResult) -> None:
    run, operation = await failed_operation(api)
    stored = [run.get("ended_reason"), operation.get("ended_reason"), operation.get("error")]
    assert any(ERROR in (text or "") for text in stored), stored
