"""Run views: pages, and a run as a DataHub DataProcessInstance."""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from uuid import UUID

from sqlalchemy.ext.asyncio import AsyncSession

from server.common.queries import list_dataset_refs, list_job_refs
from server.common.refs import DatasetRef, JobRef
from server.errors import NotFoundError
from server.pagination import Keyset, Page, make_page, resolve_limit
from server.runs import queries
from server.runs.queries import IORow, RunRow
from server.runs.schemas import RunListQuery, RunResult, RunState
from server.settings import ServerOptions
from shared.enums import OutputType, Status

NEWEST_FIRST = Keyset("runs.created_at", (datetime, UUID))


@dataclass(frozen=True, slots=True)
class RunSummary:
    id: UUID
    job_id: int
    status: Status
    created_at: datetime
    started_at: datetime | None
    ended_at: datetime | None
    external_id: str | None
    attempt: int | None
    job: JobRef
    parent_run_id: UUID | None
    started_by: str | None


@dataclass(frozen=True, slots=True)
class RunIO:
    dataset: DatasetRef
    run_id: UUID
    num_rows: int | None
    num_bytes: int | None
    num_files: int | None
    schema_id: int | None
    first_seen: datetime
    last_seen: datetime
    types: list[str]


@dataclass(frozen=True, slots=True)
class LinkedRun:
    run: RunSummary
    dataset_ids: list[int]


@dataclass(frozen=True, slots=True)
class RunDetail(RunSummary):
    state: RunState
    result: RunResult | None
    duration_ms: int | None
    start_reason: str | None
    ended_reason: str | None
    running_log_url: str | None
    persistent_log_url: str | None
    last_event_time: datetime
    parent_run: RunSummary | None
    child_runs: list[RunSummary]
    inputs: list[RunIO]
    outputs: list[RunIO]
    inputs_truncated: bool
    outputs_truncated: bool
    upstream_runs: list[LinkedRun]
    downstream_runs: list[LinkedRun]


_SUMMARY_FIELDS = [f.name for f in fields(RunSummary) if f.name not in {"job", "status"}]


async def summarize(session: AsyncSession, rows: Sequence[RunRow]) -> list[RunSummary]:
    """Attach job references (one query for the whole page)."""
    jobs = await list_job_refs(session, {r.job_id for r in rows})
    return [
        RunSummary(
            job=jobs[r.job_id],
            status=Status(r.status),
            **{name: getattr(r, name) for name in _SUMMARY_FIELDS},
        )
        for r in rows
        if r.job_id in jobs
    ]


async def list_runs(
    session: AsyncSession, query: RunListQuery, options: ServerOptions
) -> Page[RunSummary]:
    scope = query.scope()
    after = NEWEST_FIRST.decode(query.cursor, scope)
    limit = resolve_limit(query.limit, options)
    rows = await queries.list_runs(session, query, after, limit)
    page = make_page(rows, limit, NEWEST_FIRST, scope, lambda r: (r.created_at, r.id))
    return Page(await summarize(session, page.items), page.next_cursor)


def run_state(status: Status) -> RunState:
    if status == Status.STARTED:
        return RunState.RUNNING
    return RunState.UNKNOWN if status == Status.UNKNOWN else RunState.COMPLETE


def run_result(status: Status, *, retried: bool) -> RunResult | None:
    """DataProcessInstance result; see RunDetailResponse.result for the mapping and why."""
    if status == Status.SUCCEEDED:
        return RunResult.SUCCESS
    if status == Status.FAILED:
        return RunResult.UP_FOR_RETRY if retried else RunResult.FAILURE
    if status == Status.KILLED:
        return RunResult.SKIPPED
    return None


def duration_ms(started: datetime | None, ended: datetime | None) -> int | None:
    if started is None or ended is None:
        return None
    return int((ended - started).total_seconds() * 1000)


def _output_types(bits: int) -> list[str]:
    return [str(kind.name) for kind in OutputType if kind & bits]


async def _io(session: AsyncSession, family: list[UUID], *, outputs: bool) -> list[RunIO]:
    rows: list[IORow] = await queries.list_run_io(session, family, outputs=outputs)
    refs = await list_dataset_refs(session, {r.dataset_id for r in rows})
    return [
        RunIO(
            dataset=refs[r.dataset_id],
            types=_output_types(r.types),
            **{
                f.name: getattr(r, f.name)
                for f in fields(r)
                if f.name not in {"types", "dataset_id"}
            },
        )
        for r in rows
        if r.dataset_id in refs
    ]


async def _linked(session: AsyncSession, family: list[UUID], *, upstream: bool) -> list[LinkedRun]:
    pairs = await queries.list_linked_runs(session, family, upstream=upstream)
    via: dict[UUID, list[int]] = defaultdict(list)
    for dataset_id, run_id in pairs:
        via[run_id].append(dataset_id)
    runs = await summarize(session, await queries.list_runs_by_id(session, list(via)))
    return [LinkedRun(run, sorted(set(via[run.id]))) for run in runs]


async def _one_summary(session: AsyncSession, run_id: UUID | None) -> RunSummary | None:
    if run_id is None:
        return None
    found = await summarize(session, await queries.list_runs_by_id(session, [run_id]))
    return found[0] if found else None


async def get_run_detail(session: AsyncSession, run_id: UUID) -> RunDetail:
    row = await queries.get_run(session, run_id)
    if row is None:
        raise NotFoundError("run", run_id)
    (summary,) = await summarize(session, [row])
    status = Status(row.status)
    retried = status == Status.FAILED and await queries.has_later_attempt(session, row)
    family = await queries.list_run_family(session, run_id)
    inputs = await _io(session, family, outputs=False)
    outputs = await _io(session, family, outputs=True)
    return RunDetail(
        **{f.name: getattr(summary, f.name) for f in fields(RunSummary)},
        state=run_state(status),
        result=run_result(status, retried=retried),
        duration_ms=duration_ms(row.started_at, row.ended_at),
        start_reason=row.start_reason,
        ended_reason=row.ended_reason,
        running_log_url=row.running_log_url,
        persistent_log_url=row.persistent_log_url,
        last_event_time=row.last_event_time,
        parent_run=await _one_summary(session, row.parent_run_id),
        child_runs=await summarize(session, await queries.list_child_runs(session, run_id)),
        inputs=inputs[: queries.IO_LIMIT],
        outputs=outputs[: queries.IO_LIMIT],
        inputs_truncated=len(inputs) > queries.IO_LIMIT,
        outputs_truncated=len(outputs) > queries.IO_LIMIT,
        upstream_runs=await _linked(session, family, upstream=True),
        downstream_runs=await _linked(session, family, upstream=False),
    )
