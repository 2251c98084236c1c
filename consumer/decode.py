"""decode: bytes -> a typed OpenLineage event, or a Reject with a precise reason.

Only the envelope is validated here: what the model cannot do without
(eventTime; a RunEvent's run.runId; job.namespace and job.name; each dataset's
namespace and name). Facets stay plain dicts that extractors read defensively,
so an unknown, custom or wrongly-typed facet never fails an event, and facets
of spec 1-x and 2-x are read alike. `producer` and `schemaURL` are required by
the spec but identify nothing, so events without them are accepted.

- runId: a UUID of any version (v7 carries the run's creation time; others get
  theirs from eventTime, see `consumer.extract.runs.created_at`).
- eventTime: ISO 8601 with 0-9 fraction digits and any offset; a missing
  offset is read as UTC (the spec requires one, some producers omit it).
- Reject reasons: `too_large`, `nul_character`, `invalid_json`, `not_an_object`,
  `unknown_kind`, `missing_field`, `placeholder` (a required field holds a
  test-template matcher such as `{{ any(result) }}` or `${json-unit.any-string}`,
  or the runId is the nil or max UUID),
  `invalid_run_id`, `invalid_event_type`, `invalid_event_time`, `invalid_field`.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any
from uuid import UUID

import orjson

from shared.enums import Status
from shared.frozen import fast_init
from shared.uuids import v7_time_fits

Json = Mapping[str, Any]

EVENT_STATUS = {
    "START": Status.STARTED,
    "RUNNING": Status.STARTED,
    "COMPLETE": Status.SUCCEEDED,
    "FAIL": Status.FAILED,
    "ABORT": Status.KILLED,
    "OTHER": Status.UNKNOWN,
}

# ISO 8601 with 0-9 fraction digits and an optional offset.
_TIME = re.compile(
    r"(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)"  # date and clock
    r"(?:[.,](\d{1,9}))?"  # fraction, 0-9 digits
    r"\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?"  # offset, optional
)
# "2024-05-01T12:00:00.123Z" and "...+00:00": what `_common_time` reads directly.
_COMMON_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?(?:Z|\+00:00)", re.ASCII)


_MAX_UUID = 2**128 - 1
# A jinja expression or a json-unit matcher; `${...}` alone could be a real name.
_PLACEHOLDER = re.compile(r"\{\{.*\}\}|\$\{json-unit\.", re.S)


_MIN_TIME = datetime.min.replace(tzinfo=UTC)
_MAX_TIME = datetime.max.replace(tzinfo=UTC)


class Kind(StrEnum):
    RUN = "RunEvent"
    DATASET = "DatasetEvent"
    JOB = "JobEvent"


@fast_init
@dataclass(frozen=True, slots=True)
class Event:
    kind: Kind
    event_type: str | None
    event_time: datetime
    producer: str
    run_id: UUID | None
    run_facets: Json
    job_namespace: str | None
    job_name: str | None
    job_facets: Json
    inputs: tuple[Json, ...]
    outputs: tuple[Json, ...]
    dataset: Json | None


@dataclass(frozen=True, slots=True)
class Reject:
    reason: str  # a short machine-readable code, e.g. "invalid_json"
    detail: str  # what exactly was wrong, for the dead-letter header


class DecodeError(ValueError):
    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reject = Reject(reason, detail)


def decode(payload: bytes, max_bytes: int) -> Event | Reject:
    """Parse one Kafka message value into an Event, or say precisely why not."""
    if len(payload) > max_bytes:
        return Reject("too_large", f"{len(payload)} bytes > limit {max_bytes}")
    # PostgreSQL text cannot hold NUL; JSON can only carry it escaped.
    if b"\\u0000" in payload:
        return Reject("nul_character", "a string contains the NUL character (\\u0000)")
    try:
        raw = orjson.loads(payload)
    except orjson.JSONDecodeError as exc:
        return Reject("invalid_json", _json_error(str(exc)))
    if not isinstance(raw, dict):
        return Reject("not_an_object", f"top-level JSON is {type(raw).__name__}, not an object")
    try:
        return _event(raw)
    except DecodeError as exc:
        return exc.reject


def _json_error(message: str) -> str:
    # orjson stops at 1024 levels of nesting and says only "depth limit exceeded".
    if "depth limit" in message:
        message = f"nested deeper than the parser's recursion limit (1024 levels): {message}"
    return message[:500]


def _event(raw: Json) -> Event:
    kind = _kind(raw)
    run = raw.get("run")
    job = raw.get("job")
    run_id = _run_id(run) if kind is Kind.RUN else None
    namespace, name = _job_names(job) if kind is not Kind.DATASET else (None, None)
    return Event(
        kind=kind,
        event_type=_event_type(raw.get("eventType")),
        event_time=parse_time(_required_str(raw, "eventTime")),
        producer=_str(raw.get("producer")) or "",
        run_id=run_id,
        run_facets=_facets(run),
        job_namespace=namespace,
        job_name=name,
        job_facets=_facets(job),
        inputs=_datasets(raw.get("inputs"), "inputs"),
        outputs=_datasets(raw.get("outputs"), "outputs"),
        dataset=_dataset_of(raw) if kind is Kind.DATASET else None,
    )


def _kind(raw: Json) -> Kind:
    # Only a RunEvent has an eventType (Marquez also sends it on JobEvents, which have a job).
    if "run" in raw or ("eventType" in raw and "job" not in raw and "dataset" not in raw):
        return Kind.RUN
    if "dataset" in raw:
        return Kind.DATASET
    if "job" in raw:
        return Kind.JOB
    raise DecodeError("unknown_kind", "neither run, job nor dataset: not an OpenLineage event")


def _event_type(value: Any) -> str | None:
    if value is None:
        return None
    _no_placeholder(value, "eventType")
    if not isinstance(value, str) or value.upper() not in EVENT_STATUS:
        raise DecodeError(
            "invalid_event_type",
            f"eventType {str(value)[:100]!r} is not one of {', '.join(EVENT_STATUS)}",
        )
    return value.upper()


def _run_id(run: Any) -> UUID:
    if not isinstance(run, dict):
        raise DecodeError("missing_field", "run is missing or not an object with a runId")
    value = run.get("runId")
    if not isinstance(value, str):
        raise DecodeError("missing_field", "run.runId is missing")
    _no_placeholder(value, "run.runId")
    try:
        run_id = UUID(value)
    except ValueError:
        raise DecodeError("invalid_run_id", f"run.runId {value[:100]!r} is not a UUID") from None
    # The nil and max UUIDs are "no id yet" values: accepting them would merge every
    # such event into one run.
    if run_id.int in (0, _MAX_UUID):
        raise DecodeError("placeholder", f"run.runId {value[:100]!r} is the nil or max UUID")
    if not v7_time_fits(run_id):
        raise DecodeError(
            "invalid_run_id", f"run.runId {value[:100]!r} is a UUIDv7 dated after year 9999"
        )
    return run_id


def _job_names(job: Any) -> tuple[str, str]:
    if not isinstance(job, dict):
        raise DecodeError("missing_field", "job must be an object with namespace and name")
    return _required_str(job, "namespace", "job."), _required_str(job, "name", "job.")


def _dataset_of(raw: Json) -> Json:
    dataset = raw.get("dataset")
    if not isinstance(dataset, dict):
        raise DecodeError("missing_field", "dataset must be an object")
    _required_str(dataset, "namespace", "dataset.")
    _required_str(dataset, "name", "dataset.")
    return dataset


def _datasets(value: Any, where: str) -> tuple[Json, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise DecodeError("invalid_field", f"{where} must be a list")
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise DecodeError("invalid_field", f"{where}[{i}] must be an object")
        _required_str(item, "namespace", f"{where}[{i}].")
        _required_str(item, "name", f"{where}[{i}].")
    return tuple(value)


def _facets(owner: Any) -> Json:
    facets = owner.get("facets") if isinstance(owner, dict) else None
    return facets if isinstance(facets, dict) else {}


def _required_str(obj: Json, key: str, prefix: str = "") -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not value.strip():
        raise DecodeError("missing_field", f"{prefix}{key} is missing or not a non-empty string")
    _no_placeholder(value, f"{prefix}{key}")
    return value


def _no_placeholder(value: Any, where: str) -> None:
    """Reject test-template matchers (jinja `{{ ... }}`, json-unit `${json-unit...}`)."""
    # Every match contains one of these substrings, and `in` rules out almost every string
    # several times faster than the search (about eight required strings an event; one
    # scan of the whole payload for them costs more than the checks it would save).
    if not isinstance(value, str) or ("{{" not in value and "${json-unit." not in value):
        return
    if _PLACEHOLDER.search(value):
        raise DecodeError("placeholder", f"{where} is a template placeholder: {value[:100]!r}")


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def parse_time(text: str) -> datetime:
    """An ISO 8601 time with 0-9 fraction digits; no offset means UTC."""
    value = _common_time(text)
    if value is None:
        value = _any_time(text)
    # asyncpg writes the extremes as -infinity/infinity, which no longer read back as times.
    if value in (_MIN_TIME, _MAX_TIME):
        raise DecodeError("invalid_event_time", f"eventTime {text[:100]!r} is out of range")
    return value


def _common_time(text: str) -> datetime | None:
    """The spellings nearly every producer sends, read directly; None for anything else.

    For these `datetime.fromisoformat` (Python 3.11+) gives exactly what `_any_time`
    would, at a third of the cost; what it rejects (month 13, hour 24) goes to
    `_any_time` too, so the reject detail stays the same.
    """
    if _COMMON_TIME.fullmatch(text) is None:
        return None
    try:
        return datetime.fromisoformat(text).astimezone(UTC)
    except ValueError:
        return None


def _any_time(text: str) -> datetime:
    match = _TIME.fullmatch(text.strip())
    if match is None:
        raise DecodeError("invalid_event_time", f"eventTime {text[:100]!r} is not ISO 8601")
    date, clock, fraction, offset = match.groups()
    micros = (fraction or "").ljust(6, "0")[:6]
    if clock.count(":") == 1:
        clock += ":00"
    tz = "+00:00" if offset in (None, "Z", "z") else _offset(offset)
    try:
        return datetime.fromisoformat(f"{date}T{clock}.{micros}{tz}").astimezone(UTC)
    except (ValueError, OverflowError) as exc:
        raise DecodeError("invalid_event_time", f"eventTime {text[:100]!r}: {exc}") from None


def _offset(offset: str) -> str:
    digits = offset[1:].replace(":", "")
    return f"{offset[0]}{digits[:2]}:{digits[2:4] or '00'}"
