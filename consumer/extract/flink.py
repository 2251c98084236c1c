"""Flink: a job run (streaming or batch) with one operation holding its sources and sinks.

The Flink listener sends START, RUNNING events every few checkpoints while a
streaming job runs, and COMPLETE, FAIL or ABORT (cancelled) at the end.
RUNNING keeps the run STARTED (status never moves back) and the inputs and
outputs of all events are unioned, statistics taking the maximum.

- external id = `flink_job.jobId`;
- log URLs when the job namespace is the JobManager's web address
  (`http://host:8081`): the web UI routes `#/job/running/<id>` and
  `#/job/completed/<id>`;
- checkpoints: the `checkpoints` facet's counters, kept on the run record;
  merging keeps the snapshot with the most checkpoints (the latest one, as
  the totals only grow).
"""

from consumer.decode import Event
from consumer.extract.facets import Json, count, obj, text
from consumer.extract.runs import Placement, generic
from consumer.records import Checkpoints, Extracted
from shared.enums import JobType


def extract_flink(out: Extracted, event: Event) -> Placement:
    job_id = text(obj(event.run_facets, "flink_job"), "jobId", limit=200)
    ui = _web_ui(event.job_namespace or "")
    return generic(
        out,
        event,
        JobType.FLINK_JOB,
        external_id=job_id,
        running_log_url=f"{ui}/#/job/running/{job_id}" if ui and job_id else None,
        persistent_log_url=f"{ui}/#/job/completed/{job_id}" if ui and job_id else None,
        checkpoints=checkpoints(obj(event.run_facets, "checkpoints")),
    )


def _web_ui(namespace: str) -> str | None:
    base = namespace.strip().rstrip("/")
    return base if base.lower().startswith(("http://", "https://")) else None


def checkpoints(facet: Json) -> Checkpoints | None:
    """The facet's counters; None when it has none (placeholders and absent facets)."""
    values = [count(facet, key) for key in ("total", "completed", "failed", "restored")]
    in_progress = count(facet, "in-progress")
    if all(v is None for v in [*values, in_progress]):
        return None
    total, completed, failed, restored = (v or 0 for v in values)
    return Checkpoints(total, completed, failed, restored, in_progress or 0)
