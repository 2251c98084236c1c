"""decode: envelopes of every kind and spelling accepted, everything else rejected precisely."""

import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from consumer.decode import (
    _COMMON_TIME,
    DecodeError,
    Event,
    Kind,
    Reject,
    _any_time,
    _common_time,
    decode,
    parse_time,
)
from consumer.ingest import DEFAULT_MAX_EVENT_BYTES
from tests.corpus import corpus_events, expected_reject, ingestable, payloads_of

pytestmark = pytest.mark.unit
# A UUIDv7 with the greatest 48-bit time (year 10889): no datetime holds it.
FAR_V7 = str(uuid.UUID(int=((2**48 - 1) << 80) | (7 << 76) | (2 << 62) | 1))

LIMIT = 1 << 20
V7 = "01908224-8410-79a2-8de6-a769ad6944c9"


def run_event(**changes: Any) -> dict[str, Any]:
    event: dict[str, Any] = {
        "eventType": "START",
        "eventTime": "2024-05-01T10:00:00.123Z",
        "producer": "https://example.com/producer",
        "run": {"runId": V7},
        "job": {"namespace": "default", "name": "job"},
    }
    event.update(changes)
    return event


def outcome(doc: Any) -> Event | Reject:
    return decode(orjson.dumps(doc), LIMIT)


def accepted(doc: Any) -> Event:
    event = outcome(doc)
    assert isinstance(event, Event), event
    return event


def utc(year: int, month: int, day: int, *clock: int) -> datetime:
    hour, minute, second, micros = (*clock, 0, 0, 0, 0)[:4]
    return datetime(year, month, day, hour, minute, second, micros, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-07-05T09:04:48.7949Z", utc(2024, 7, 5, 9, 4, 48, 794900)),  # data-rentgen
        ("2025-06-26T18:33:50.391222794Z", utc(2025, 6, 26, 18, 33, 50, 391222)),  # 9 digits
        ("2021-01-01T00:00:01Z", utc(2021, 1, 1, 0, 0, 1)),  # no fraction
        ("2020-12-28T19:51:01.641499", utc(2020, 12, 28, 19, 51, 1, 641499)),  # no offset: UTC
        ("2020-12-28T19:52:00.001+10:00", utc(2020, 12, 28, 9, 52, 0, 1000)),  # Marquez
        ("2024-01-01T05:30:00.5+0530", utc(2024, 1, 1, 0, 0, 0, 500000)),
        ("2024-01-01T00:00:00-03", utc(2024, 1, 1, 3)),
        ("2024-01-01T00:00:00,25z", utc(2024, 1, 1, 0, 0, 0, 250000)),
        ("2024-01-01 10:15Z", utc(2024, 1, 1, 10, 15)),
        ("2024-11-26T13:05:23.809955+00:00", utc(2024, 11, 26, 13, 5, 23, 809955)),
    ],
)
def test_event_time_spellings(text: str, expected: datetime) -> None:
    assert accepted(run_event(eventTime=text)).event_time == expected


@pytest.mark.parametrize(
    "text",
    ["yesterday", "2024-13-01T00:00:00Z", "2024-01-01T25:00:00Z", "0001-01-01T00:00:00+01:00"],
)
def test_unreadable_event_times_are_rejected(text: str) -> None:
    reject = outcome(run_event(eventTime=text))
    assert isinstance(reject, Reject)
    assert (reject.reason, text in reject.detail) == ("invalid_event_time", True)


@pytest.mark.parametrize(
    "run_id",
    [
        V7,
        str(uuid.uuid1()),
        str(uuid.uuid3(uuid.NAMESPACE_DNS, "x")),
        str(uuid.uuid4()),
        str(uuid.uuid5(uuid.NAMESPACE_DNS, "x")),
        "f69a6e9b-9bac-3c9a-9cf6-eacb70ecc9a9",  # spec_tests_example_full_event: v3
        V7.upper(),
    ],
)
def test_run_ids_of_any_uuid_version(run_id: str) -> None:
    assert accepted(run_event(run={"runId": run_id})).run_id == uuid.UUID(run_id)


def without(path: str) -> dict[str, Any]:
    event = run_event()
    *parents, last = path.split(".")
    target = event
    for key in parents:
        target = target[key]
    del target[last]
    return event


@pytest.mark.parametrize(
    ("doc", "reason", "detail"),
    [
        (without("eventTime"), "missing_field", "eventTime"),
        (without("run.runId"), "missing_field", "run.runId"),
        (without("job.namespace"), "missing_field", "job.namespace"),
        (without("job.name"), "missing_field", "job.name"),
        (run_event(job={"namespace": "ns", "name": "  "}), "missing_field", "job.name"),
        (run_event(run="x"), "missing_field", "run is missing"),
        ({"eventType": "COMPLETE", "inputs": []}, "missing_field", "run is missing"),
        (run_event(run={"runId": "{{ any(result) }}"}), "placeholder", "run.runId"),
        (run_event(run={"runId": "${json-unit.any-string}"}), "placeholder", "run.runId"),
        (run_event(eventTime="{{ is_datetime(result) }}"), "placeholder", "eventTime"),
        (
            run_event(job={"namespace": "{{ result is string }}", "name": "j"}),
            "placeholder",
            "job.namespace",
        ),
        (run_event(eventType="${json-unit.any-string}"), "placeholder", "eventType"),
        (
            run_event(outputs=[{"namespace": "s3://b", "name": "${json-unit.regex}x"}]),
            "placeholder",
            "outputs[0].name",
        ),
        (run_event(run={"runId": "run_id"}), "invalid_run_id", "'run_id'"),
        (run_event(run={"runId": FAR_V7}), "invalid_run_id", "dated after year 9999"),
        (run_event(run={"runId": str(uuid.UUID(int=0))}), "placeholder", "nil or max UUID"),
        (
            run_event(run={"runId": "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF"}),
            "placeholder",
            "nil or max",
        ),
        (run_event(eventType="FINISHED"), "invalid_event_type", "FINISHED"),
        (run_event(inputs={"namespace": "a"}), "invalid_field", "inputs must be a list"),
        (run_event(inputs=[{"namespace": "a"}]), "missing_field", "inputs[0].name"),
        ({"inputs": [], "outputs": []}, "unknown_kind", "neither run, job nor dataset"),
        ([run_event()], "not_an_object", "list"),
    ],
)
def test_rejects_name_the_field(doc: Any, reason: str, detail: str) -> None:
    reject = outcome(doc)
    assert isinstance(reject, Reject)
    assert (reject.reason, detail in reject.detail) == (reason, True), reject


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (b"{not json", "invalid_json"),
        (b'{"run": ' + b"[" * 5000 + b"]" * 5000 + b"}", "invalid_json"),
        (orjson.dumps(run_event(job={"namespace": "a\u0000b", "name": "j"})), "nul_character"),
        (b" " * (LIMIT + 1), "too_large"),
    ],
)
def test_rejects_before_parsing(payload: bytes, reason: str) -> None:
    reject = decode(payload, LIMIT)
    assert isinstance(reject, Reject)
    assert reject.reason == reason


def test_too_deep_nesting_says_so() -> None:
    reject = decode(b"[" * 2000 + b"]" * 2000, LIMIT)
    assert isinstance(reject, Reject)
    assert "recursion limit" in reject.detail


def test_the_size_limit_is_inclusive_and_the_default_at_least_10_mb() -> None:
    payload = orjson.dumps(run_event(outputs=[{"namespace": "s3://b", "name": "x" * 500}]))
    assert isinstance(decode(payload, len(payload)), Event)
    assert decode(payload, len(payload) - 1) == Reject(
        "too_large", f"{len(payload)} bytes > limit {len(payload) - 1}"
    )
    assert DEFAULT_MAX_EVENT_BYTES >= 10 * 1024 * 1024
    [large] = payloads_of("marquez/event_large.json")  # ~220 KB
    assert isinstance(decode(large, DEFAULT_MAX_EVENT_BYTES), Event)


@pytest.mark.parametrize(
    ("file", "kind"),
    [
        ("openlineage-spec-examples/client_python_serde_dataset_event.json", Kind.DATASET),
        ("marquez/event_dataset_event.json", Kind.DATASET),
        ("openlineage-spec-examples/client_python_serde_job_event.json", Kind.JOB),
        ("marquez/event_job_event.json", Kind.JOB),  # a JobEvent with an eventType
        ("openlineage-spec-examples/spec_tests_example_full_event.json", Kind.RUN),  # + dataset
        ("marquez/event_required_only.json", Kind.RUN),  # no eventType
    ],
)
def test_kinds_of_corpus_events(file: str, kind: Kind) -> None:
    [payload] = payloads_of(file)
    event = decode(payload, LIMIT)
    assert isinstance(event, Event)
    assert event.kind is kind
    assert (event.run_id is None) == (kind is not Kind.RUN)
    assert (event.dataset is not None) == (kind is Kind.DATASET)


@pytest.mark.parametrize(
    "facets",
    [
        {"run": {"runId": V7, "facets": "not an object"}},
        {
            "run": {"runId": V7, "facets": [1, 2]},
            "job": {"namespace": "n", "name": "j", "facets": 7},
        },
        {"run": {"runId": V7, "facets": {"custom": 5, "parent": "x", "spark_jobDetails": []}}},
        {"outputs": [{"namespace": "s3://b", "name": "k", "facets": {"schema": {"fields": 3}}}]},
    ],
)
def test_odd_or_custom_facets_never_fail_an_event(facets: dict[str, Any]) -> None:
    accepted(run_event(**facets))


@pytest.mark.parametrize(
    "file",
    [
        "openlineage-spec-examples/fluentd_event_invalid_dataset_facet.json",
        "openlineage-spec-examples/fluentd_event_invalid_input_dataset_facet.json",
        "openlineage-spec-examples/fluentd_event_invalid_job_facet.json",
        "openlineage-spec-examples/fluentd_event_invalid_output_dataset_facet.json",
        "openlineage-spec-examples/fluentd_event_invalid_run_facet.json",
        "marquez/event_additional_facet.json",
    ],
)
def test_schema_invalid_facets_in_the_corpus_are_accepted(file: str) -> None:
    [payload] = payloads_of(file)
    assert isinstance(decode(payload, LIMIT), Event)


def test_every_corpus_event_decodes_or_is_rejected_precisely() -> None:
    """Stored exactly when ingestable; else the reason and field PROVENANCE.md implies."""
    must_store = set(ingestable())
    for event in corpus_events():
        result = decode(event.payload, DEFAULT_MAX_EVENT_BYTES)
        expected = expected_reject(event)
        assert isinstance(result, Event) == (event in must_store) == (expected is None), event.id
        if isinstance(result, Reject) and expected is not None:
            assert (result.reason, expected[1] in result.detail) == (expected[0], True), event.id


def _read(read: Callable[[str], datetime | None], text: str) -> datetime | str | None:
    """The time `read` gives, or the reject reason it raises."""
    try:
        return read(text)
    except DecodeError as exc:
        return exc.reject.reason


@settings(max_examples=500)
@given(text=st.from_regex(_COMMON_TIME, fullmatch=True))
def test_the_common_spellings_read_as_the_general_rule_reads_them(text: str) -> None:
    # Dates the regex lets through but the calendar does not (month 13) included: those
    # must leave the fast path, so the reject detail is the general rule's.
    fast = _common_time(text)
    assert fast is None or (fast == _any_time(text) and fast.tzinfo is UTC)
    if fast is None:
        with pytest.raises(DecodeError, match="invalid_event_time"):
            _any_time(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-05-01T12:00:00Z", datetime(2024, 5, 1, 12, tzinfo=UTC)),
        ("2024-05-01T12:00:00.1Z", datetime(2024, 5, 1, 12, 0, 0, 100000, UTC)),
        ("2024-05-01T12:00:00.123+00:00", datetime(2024, 5, 1, 12, 0, 0, 123000, UTC)),
        ("2024-05-01T12:00:00.123456Z", datetime(2024, 5, 1, 12, 0, 0, 123456, UTC)),
        ("2024-02-30T12:00:00.123Z", "invalid_event_time"),  # not a day
        ("2024-05-01T24:00:00Z", "invalid_event_time"),  # not an hour
        ("0001-01-01T00:00:00Z", "invalid_event_time"),  # the asyncpg extremes
        ("9999-12-31T23:59:59.999999+00:00", "invalid_event_time"),
    ],
)
def test_common_spellings_at_the_edges(text: str, expected: datetime | str) -> None:
    assert _read(parse_time, text) == expected
