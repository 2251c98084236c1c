"""Link views: search links from/to a dataset, and the processes behind a batch of links."""

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from server.common.queries import list_dataset_refs, list_job_refs, list_run_refs
from server.common.refs import DatasetRef, JobRef, RunRef
from server.links import queries
from server.links.schemas import LinkProcessesRequest, LinkSearchQuery
from server.pagination import Keyset, Page, after_id, make_page, resolve_limit
from server.settings import ServerOptions

BY_OTHER_END = Keyset("links.dataset_id", (int,))
BY_JOB = Keyset("links.job_id", (int,))


@dataclass(frozen=True, slots=True)
class Link:
    source: DatasetRef
    target: DatasetRef
    first_seen: datetime
    last_seen: datetime


@dataclass(frozen=True, slots=True)
class ProcessLink:
    source_dataset_id: int
    target_dataset_id: int
    first_seen: datetime
    last_seen: datetime
    runs: list[RunRef]


@dataclass(frozen=True, slots=True)
class LinkProcess:
    job: JobRef
    links: list[ProcessLink]


async def search_links(
    session: AsyncSession, query: LinkSearchQuery, options: ServerOptions
) -> Page[Link]:
    scope = query.scope()
    after = BY_OTHER_END.decode(query.cursor, scope)
    limit = resolve_limit(query.limit, options)
    rows = await queries.list_links(
        session,
        source_id=query.source_dataset_id,
        target_id=query.target_dataset_id,
        window=(query.seen_since, query.seen_until),
        after=after_id(after),
        limit=limit,
    )
    mine = query.source_dataset_id is not None
    page = make_page(
        rows, limit, BY_OTHER_END, scope, lambda r: (r.target_id if mine else r.source_id,)
    )
    ends = {r.source_id for r in page.items} | {r.target_id for r in page.items}
    refs = await list_dataset_refs(session, ends)
    links = [
        Link(refs[r.source_id], refs[r.target_id], r.first_seen, r.last_seen)
        for r in page.items
        if r.source_id in refs and r.target_id in refs
    ]
    return Page(links, page.next_cursor)


async def search_link_processes(
    session: AsyncSession, request: LinkProcessesRequest, options: ServerOptions
) -> Page[LinkProcess]:
    scope = request.model_dump(mode="json", exclude={"cursor", "limit"})
    after = BY_JOB.decode(request.cursor, scope)
    limit = resolve_limit(request.limit, options)
    pairs = sorted({(k.source_dataset_id, k.target_dataset_id) for k in request.links})
    window = (request.seen_since, request.seen_until)
    job_ids = await queries.list_link_job_ids(session, pairs, window, after_id(after), limit)
    page = make_page(job_ids, limit, BY_JOB, scope, lambda job_id: (job_id,))
    if not page.items:
        return Page([], None)
    links = await queries.list_process_links(session, pairs, page.items, window)
    runs = await _runs(session, pairs, page.items, window, request.runs_per_link)
    jobs = await list_job_refs(session, page.items)
    by_job: dict[int, list[ProcessLink]] = defaultdict(list)
    for r in links:
        key = (r.job_id, r.source_id, r.target_id)
        by_job[r.job_id].append(
            ProcessLink(r.source_id, r.target_id, r.first_seen, r.last_seen, runs.get(key, []))
        )
    items = [LinkProcess(jobs[j], by_job[j]) for j in page.items if j in jobs]
    return Page(items, page.next_cursor)


async def _runs(
    session: AsyncSession,
    pairs: list[tuple[int, int]],
    job_ids: list[int],
    window: tuple[datetime | None, datetime | None],
    per_link: int,
) -> dict[tuple[int, int, int], list[RunRef]]:
    if per_link == 0:
        return {}
    rows = await queries.list_link_runs(session, pairs, job_ids, window, per_link)
    refs = await list_run_refs(session, {run_id for *_, run_id in rows})
    found: dict[tuple[int, int, int], list[RunRef]] = defaultdict(list)
    for job_id, src, tgt, run_id in rows:
        if run_id in refs:
            found[(job_id, src, tgt)].append(refs[run_id])
    return found
