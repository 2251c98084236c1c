"""Hive: each query is an operation of its session's run; a session is a run of a HIVE_SESSION job.

The Hive hook sends one event per query (jobType QUERY) with the `hive_query`
(queryId, operationName) and `hive_session` (sessionId, username, clientIp,
creationTime) facets, and no events for sessions (OpenLineage issue 3784), so
the session run is made from the session facet:

- id: uuid5(SESSION_NAMESPACE, sessionId). A session has no run id of its own
  and every query of it must reach the same run whichever arrives first. The
  id is no UUIDv7, so `created_at` is anchored by the writer: the session's
  creationTime when the facet gives one, else the earliest query's eventTime;
- job: `<username>@<clientIp>` in the query's job namespace (the HiveServer2),
  type HIVE_SESSION, unless the query job has a custom name (not the hook's
  `<operation>.<table>` default), which then names the session's job;
- status STARTED (sessions never report their end), started_at = creationTime,
  user = username (not `anonymous`), external id = sessionId; a parent facet
  (an Airflow task, say) is the session run's parent.

The query operation: id = the event's run id, name = the query's job name,
type = operationName (CREATETABLE_AS_SELECT, QUERY, ...), description = queryId.
Query events without a session facet stay runs of a HIVE_QUERY job.
"""

import uuid
from datetime import datetime

from consumer.decode import DecodeError, Event, parse_time
from consumer.extract.facets import Json, obj, text
from consumer.extract.runs import (
    Parent,
    Placement,
    add_job,
    as_operation,
    created_at,
    generic,
    parent_of,
)
from consumer.records import Extracted, RunRecord
from shared.enums import JobType, Status

SESSION_NAMESPACE = uuid.UUID("2d8f6c1e-5b7a-4e39-9a0c-7f3e1b6d4c52")
ANONYMOUS = frozenset({"anonymous", ""})


def extract_hive(out: Extracted, event: Event) -> Placement:
    session = obj(event.run_facets, "hive_session")
    session_id = text(session, "sessionId", limit=200)
    if not session_id:
        return generic(out, event, JobType.HIVE_QUERY)
    query = obj(event.run_facets, "hive_query")
    parent = _session_run(out, event, session, session_uuid(session_id))
    return as_operation(
        out,
        event,
        parent,
        type=text(query, "operationName", limit=200),
        description=text(query, "queryId", limit=500),
    )


def session_uuid(session_id: str) -> uuid.UUID:
    return uuid.uuid5(SESSION_NAMESPACE, session_id)


def _session_run(out: Extracted, event: Event, session: Json, run_id: uuid.UUID) -> Parent:
    name = session_job_name(event, session)
    namespace = event.job_namespace or ""
    job = add_job(out, namespace, name, JobType.HIVE_SESSION, None)
    caller = parent_of(out, event)
    started = _time(text(session, "creationTime", limit=100))
    user = (text(session, "username", limit=200) or "").strip()
    out.runs.append(
        RunRecord(
            id=run_id,
            created_at=started or created_at(run_id, event.event_time),
            job=job,
            event_time=event.event_time,
            status=int(Status.STARTED),
            parent_run_id=caller.run_id if caller else None,
            started_at=started,
            user=None if user.lower() in ANONYMOUS else user,
            external_id=text(session, "sessionId", limit=200),
        )
    )
    return Parent(run_id, job)


def session_job_name(event: Event, session: Json) -> str:
    """The query job's name when the user set one, else `<username>@<clientIp>`."""
    name = event.job_name or ""
    operation = (text(obj(event.run_facets, "hive_query"), "operationName") or "").lower()
    if name and operation and not name.lower().startswith(f"{operation}."):
        return name
    user = text(session, "username", limit=200) or "anonymous"
    return f"{user}@{text(session, 'clientIp', limit=200) or 'unknown'}"


def _time(value: str | None) -> datetime | None:
    try:
        return parse_time(value) if value else None
    except DecodeError:
        return None
