"""The native decode + extract gives the Python path's records, or declines; the native
merge gives consumer.merge.merge's result.

`threadline_native` (native/, Rust) is a fast path only: for every payload it must return
exactly what `extract(decode(payload))` returns, or None, and then the Python path runs.
Held here on the real-event corpus, on benchmark-generator streams (which it must read
whole: they are the Spark and Airflow shapes it exists for) and on random mutations of
real events (wrong types, odd spellings, missing and extra fields at every depth).
"""

import copy
import random
from dataclasses import replace
from typing import Any, TypeVar, cast

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.generate import generate
from consumer.decode import DecodeError, Reject, decode
from consumer.extract import extract
from consumer.ingest import DEFAULT_MAX_EVENT_BYTES, Pipeline
from consumer.merge import merge
from consumer.native import (
    NativeExtract,
    NativeMerge,
    NativeRekey,
    native_extractor,
    native_merger,
    native_rekeyer,
)
from consumer.records import Extracted, LocationKey
from consumer.rekey import rekey
from consumer.retry import Backoff
from consumer.write import Writer
from tests.corpus import corpus_events

pytestmark = pytest.mark.unit


T = TypeVar("T")


def built(found: T | None) -> T:
    """A native entry point, or the test fails: the module is part of the build."""
    if found is None:
        pytest.fail("threadline_native is not built (scripts/install.sh builds it)", pytrace=False)
    return found


@pytest.fixture(scope="module")
def native() -> NativeExtract:
    return built(native_extractor())


def python_path(payload: bytes) -> Extracted | Reject:
    event = decode(payload, DEFAULT_MAX_EVENT_BYTES)
    if isinstance(event, Reject):
        return event
    try:
        return extract(event)
    except DecodeError as exc:
        return exc.reject


def assert_same(native: NativeExtract, payload: bytes) -> bool:
    """The native result equals the Python one; True if it did not decline."""
    fast = native(payload, DEFAULT_MAX_EVENT_BYTES)
    if fast is None:
        return False
    assert fast == python_path(payload), payload[:300]
    return True


def test_corpus(native: NativeExtract) -> None:
    handled = [e.id for e in corpus_events() if assert_same(native, e.payload)]
    # Spark (data-rentgen, compatibility tests, the listener's own), Airflow and generic
    # RunEvents in the common spelling: 95 of the corpus's 219 events when this was written.
    assert len(handled) >= 90, handled


def _stream(events: int, seed: int, run_ids: str) -> list[bytes]:
    pairs, _ = generate(events, seed, run_ids)
    return [value for _, value in pairs]


@pytest.mark.parametrize("run_ids", ["v7", "v4"])
def test_generated_streams_are_read_whole(native: NativeExtract, run_ids: str) -> None:
    values = _stream(1500, seed=7, run_ids=run_ids)
    declined = [v[:200] for v in values if not assert_same(native, v)]
    assert not declined


def test_size_limit_and_broken_json_decline(native: NativeExtract) -> None:
    payload = _stream(1, seed=3, run_ids="v7")[0]
    assert native(payload, len(payload) - 1) is None
    assert native(payload[:-1], DEFAULT_MAX_EVENT_BYTES) is None
    assert native(b'{"eventType": "START", "x": "\\u0000"}', DEFAULT_MAX_EVENT_BYTES) is None


@pytest.mark.parametrize(
    "event_time",
    [
        "2024-05-01T10:00:00.123456+02:00",  # another offset: the same instant in UTC
        "2024-05-01T10:00:00.123456",  # no offset: read as UTC
        "2024-05-01T10:00:00.391222794Z",  # nanoseconds (Debezium): cut to microseconds
        "2024-05-01 10:00:00,5z",
        "2024-05-01T00:30-01:30",  # the UTC date is the next day
    ],
)
def test_other_event_time_spellings_are_read_by_parse_time(
    native: NativeExtract, event_time: str
) -> None:
    doc = orjson.loads(_stream(1, seed=3, run_ids="v7")[0])
    doc["eventTime"] = event_time
    payload = orjson.dumps(doc)
    assert assert_same(native, payload)  # read natively, parse_time reading the time


def test_decline_reason(native: NativeExtract) -> None:
    extractor: Any = native.__self__  # type: ignore[attr-defined]
    payload = _stream(1, seed=3, run_ids="v7")[0]
    assert extractor.decline_reason(payload, DEFAULT_MAX_EVENT_BYTES) is None
    assert extractor.decline_reason(b"[]", DEFAULT_MAX_EVENT_BYTES) == "not an object"


def test_records_hold_the_python_types(native: NativeExtract) -> None:
    payload = _stream(1, seed=3, run_ids="v7")[0]
    fast = native(payload, DEFAULT_MAX_EVENT_BYTES)
    slow = python_path(payload)
    assert isinstance(fast, Extracted)
    assert isinstance(slow, Extracted)
    run, reference = fast.runs[-1], slow.runs[-1]
    assert type(run.id) is type(reference.id)
    assert run.id.is_safe == reference.id.is_safe
    assert hash(run.id) == hash(reference.id)
    assert str(run.id) == str(reference.id)
    assert run.event_time.tzinfo is reference.event_time.tzinfo
    assert [type(j.type) for j in fast.jobs] == [type(j.type) for j in slow.jobs]
    assert [type(i.direction) for i in fast.ios] == [type(i.direction) for i in slow.ios]


# Values a field may be replaced with: every JSON type, and the spellings and edge cases
# the readers treat specially (placeholders, non-ASCII, floats, big and negative numbers,
# UUIDs, times, blank and long strings, integration names).
ODD_VALUES: list[Any] = [
    None,
    True,
    0,
    -1,
    7,
    1.5,
    2.0,
    1e19,
    2**63,
    2**64 - 1,
    "",
    " ",
    "\x1c",
    "x",
    "ÄÖ",
    "\u017ftart",  # a long s: upper-cases to ASCII "START" in Python
    "{{ any(result) }}",
    "${json-unit.any-string}",
    "START",
    "fail",
    "DAG",
    "SQL_JOB",
    "TASK",
    "airflow",
    "***",
    "spark",
    "dbt",
    "INDIRECT",
    "LOCATION",
    "CREATE",
    "parquet",
    "INSERT OVERWRITE TABLE t SELECT 1",
    "01908224-8410-79a2-8de6-a769ad6944c9",
    "01908224841079a28de6a769ad6944c9",
    "00000000-0000-0000-0000-000000000000",
    "2024-05-01T10:00:00Z",
    "2024-05-01T10:00:00.1234567+00:00",
    "2024-13-01T10:00:00Z",
    "hdfs://nn:8020",
    "a" * 2100,
    [],
    [{}],
    {},
    {"namespace": "hdfs://nn:8020", "name": "/x"},
]


def _paths(doc: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [at]
    if isinstance(doc, dict):
        for key, value in doc.items():
            found += _paths(value, (*at, key))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            found += _paths(value, (*at, index))
    return found


def _mutate(doc: Any, rng: random.Random) -> Any:
    """The document with one to three random edits: replace, delete or add a field."""
    doc = copy.deepcopy(doc)
    for _ in range(rng.randint(1, 3)):
        path = rng.choice(_paths(doc)[1:] or [()])
        if not path:
            return doc
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        last = path[-1]
        action = rng.random()
        if action < 0.6:
            parent[last] = copy.deepcopy(rng.choice(ODD_VALUES))
        elif action < 0.8 and isinstance(parent, dict):
            del parent[last]
        elif isinstance(parent[last], dict):
            parent[last][rng.choice(["type", "name", "facets", "runId", "x"])] = rng.choice(
                ODD_VALUES
            )
    return doc


def _run_events() -> list[Any]:
    corpus = [orjson.loads(e.payload) for e in corpus_events()]
    generated = [orjson.loads(v) for v in _stream(40, seed=11, run_ids="v7")]
    return [d for d in corpus + generated if isinstance(d, dict) and "run" in d]


RUN_EVENTS = _run_events()


@settings(max_examples=600, deadline=None)
@given(st.integers(min_value=0, max_value=len(RUN_EVENTS) - 1), st.randoms(use_true_random=False))
def test_mutations(native: NativeExtract, index: int, rng: random.Random) -> None:
    payload = orjson.dumps(_mutate(RUN_EVENTS[index], rng))
    assert_same(native, payload)


# Bytes that JSON parsers disagree about when misplaced: quotes, escapes, lone surrogates,
# NUL, invalid UTF-8, a BOM, leading zeros, out-of-range and huge numbers, comments, NaN.
ODD_BYTES = [
    *(b'"', b"\\", b"{", b"}", b"[", b"]", b",", b":", b" ", b"\n", b"\t", b"0", b"-", b"."),
    *(b"\\u", b"\\ud800", b"\\ud83d\\ude00", b"\x00", b"\x1f", b"\xff", b"\xc3", b"\xef\xbb\xbf"),
    *(b"01", b"-0", b"1e400", b"1e-400", b"123456789012345678901234567890"),
    *(b"null", b"true", b"\\x", b"/*", b"NaN", b"Infinity"),
]
SEEDS = [e.payload for e in corpus_events()] + _stream(60, seed=8, run_ids="v7")


@settings(max_examples=500, deadline=None)
@given(st.randoms(use_true_random=False))
def test_byte_mutations(native: NativeExtract, rng: random.Random) -> None:
    """Broken payloads, not only odd documents: the native parser must never accept what
    the Python path rejects (or read it differently)."""
    payload = bytearray(rng.choice(SEEDS))
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(payload) + 1)
        kind = rng.random()
        if kind < 0.4:
            payload[at:at] = rng.choice(ODD_BYTES)
        elif kind < 0.7 and len(payload) > 1:
            del payload[at : at + rng.randint(1, 4)]
        elif at < len(payload):
            payload[at] = rng.randrange(256)
    assert_same(native, bytes(payload))


# ---- merge ----


@pytest.fixture(scope="module")
def native_merge() -> NativeMerge:
    return built(native_merger())


def _parts() -> list[Extracted]:
    """Extracted events of every kind the pipeline merges: real, generated and mutated."""
    found = [python_path(e.payload) for e in corpus_events()]
    found += [python_path(v) for v in _stream(300, seed=5, run_ids="v7")]
    found += [python_path(v) for v in _stream(100, seed=6, run_ids="v4")]
    rng = random.Random(2)
    found += [python_path(orjson.dumps(_mutate(rng.choice(RUN_EVENTS), rng))) for _ in range(300)]
    return [p for p in found if isinstance(p, Extracted)]


PARTS = _parts()


def test_merge_of_a_stream(native_merge: NativeMerge) -> None:
    stream = [python_path(v) for v in _stream(2000, seed=9, run_ids="v7")]
    parts = [p for p in stream if isinstance(p, Extracted)]
    for start in range(0, len(parts), 500):
        assert native_merge(parts[start : start + 500]) == merge(parts[start : start + 500])


@settings(max_examples=400, deadline=None)
@given(st.randoms(use_true_random=False))
def test_merge_of_random_batches(native_merge: NativeMerge, rng: random.Random) -> None:
    """Any mix, repeated parts, and a part that is itself a merged batch (the pipeline merges
    merged halves when it isolates a bad event): the same result as merge."""
    batch = [rng.choice(PARTS) for _ in range(rng.randint(1, 40))]
    if rng.random() < 0.3:
        batch.append(rng.choice(batch))
    if rng.random() < 0.3 and len(batch) > 2:
        batch = [merge(batch[: len(batch) // 2]), *batch[len(batch) // 2 :]]
    rng.shuffle(batch)
    assert native_merge(batch) == merge(batch)


def test_merge_of_nothing(native_merge: NativeMerge) -> None:
    assert native_merge([]) == merge([])


def test_merge_of_natively_extracted_parts(
    native: NativeExtract, native_merge: NativeMerge
) -> None:
    """The native extract hands out one job record object per (job, type, parent), which the
    native merge passes over when it meets it again: still merge's result, batch by batch."""
    payloads = _stream(2000, seed=9, run_ids="v7")
    fast = [native(v, DEFAULT_MAX_EVENT_BYTES) for v in payloads]
    slow = [python_path(v) for v in payloads]
    assert all(isinstance(p, Extracted) for p in fast)
    for start in range(0, len(payloads), 500):
        batch = cast(list[Extracted], fast[start : start + 500])
        assert native_merge(batch) == merge(cast(list[Extracted], slow[start : start + 500]))


def test_a_job_named_alike_is_one_record(native: NativeExtract) -> None:
    """An event read twice (or two naming the same job, type and parent) share its record."""
    payload = _stream(20, seed=3, run_ids="v7")[0]
    a = native(payload, DEFAULT_MAX_EVENT_BYTES)
    b = native(payload, DEFAULT_MAX_EVENT_BYTES)
    assert a is not None
    assert b is not None
    assert a.jobs
    assert [id(j) for j in a.jobs] == [id(j) for j in b.jobs]
    assert a.jobs == cast(Extracted, python_path(payload)).jobs


def _with_wide_column_lineage(payload: bytes, number: int) -> bytes:
    """The event with its first output's column lineage replaced by a wide facet: 1,000
    long target column names from two source datasets, duplicates and non-ASCII among them."""
    doc = orjson.loads(payload)
    sources = [("hdfs://nn1:8020", "/warehouse/a"), ("hive://metastore:9083", "db.b")]
    fields = {
        f"col_{number}_{i}_\u00e9_" + "x" * 200: {
            "inputFields": [
                {"namespace": ns, "name": name, "field": f"src_{i % 97}",
                 "transformations": [{"type": "DIRECT" if i % 3 else "INDIRECT"}]}
                for ns, name in sources
            ] * (1 + i % 2)  # every other field names its sources twice
        }
        for i in range(1000)
    }  # fmt: skip
    doc["outputs"][0].setdefault("facets", {})["columnLineage"] = {"fields": fields}
    return orjson.dumps(doc)


def test_wide_column_sets_read_alike(native: NativeExtract) -> None:
    """Sets of a thousand members, 24 distinct ones: more than the native memo holds (4 MB
    of names), so it is emptied and refilled on the way; every event reads alike."""
    payload = next(p for p in _stream(50, seed=5, run_ids="v7") if orjson.loads(p)["outputs"])
    for number in range(24):
        wide = _with_wide_column_lineage(payload, number)
        assert assert_same(native, wide)
    fast = cast(Extracted, native(wide, DEFAULT_MAX_EVENT_BYTES))
    assert sorted(len(r.columns) for r in fast.column_lineage)[-2:] == [1000, 1000]


async def test_pipeline_merges_in_python_when_the_native_merge_fails() -> None:
    def broken(parts: list[Extracted]) -> Extracted:
        raise RuntimeError("native merge panicked")

    pipeline = Pipeline(
        cast(Writer, None), max_event_bytes=DEFAULT_MAX_EVENT_BYTES, backoff=Backoff()
    )
    assert pipeline.native_merge is not None
    pipeline.native_merge = broken
    payloads = _stream(200, seed=4, run_ids="v7")
    prepared = await pipeline.prepare(payloads)
    parts = [python_path(p) for p in payloads]
    assert prepared.merged == merge([p for p in parts if isinstance(p, Extracted)])


def test_an_integration_python_maps_itself_is_declined(monkeypatch: pytest.MonkeyPatch) -> None:
    """The native step reads Spark, Airflow and generic events; an integration that has an
    extractor of its own in Python (EXTRACTORS) goes down the Python path, even a new one."""
    doc = orjson.loads(_stream(1, seed=3, run_ids="v7")[0])
    doc["job"]["facets"]["jobType"]["integration"] = "TRINO"
    payload = orjson.dumps(doc)
    before = native_extractor()
    assert before is not None
    assert before(payload, DEFAULT_MAX_EVENT_BYTES) is not None  # read as generic
    monkeypatch.setattr("consumer.native.EXTRACTORS", {"TRINO": object()})
    after = native_extractor()
    assert after is not None
    assert after(payload, DEFAULT_MAX_EVENT_BYTES) is None


@pytest.fixture(scope="module")
def native_rekey() -> NativeRekey:
    return built(native_rekeyer())


def _canon(batch: Extracted, rng: random.Random) -> dict[LocationKey, LocationKey]:
    """Location keys of `batch` grouped at random as the writer finds aliases (each group's
    least key canonical, as `Writer._canonical` chooses it); some keys alone."""
    keys = sorted({r.key for r in batch.locations})
    groups = rng.randint(1, max(1, len(keys)))
    group_of = {key: rng.randrange(groups) for key in keys}
    first: dict[int, LocationKey] = {}
    return {key: first.setdefault(group_of[key], key) for key in keys}


def test_rekey_of_a_stream(native_rekey: NativeRekey) -> None:
    """Batches of the generated stream, whose HDFS and Hive locations have two spellings each
    (`benchmarks.generate.ALIAS_GROUPS`): every grouping of their keys, the same result."""
    stream = [python_path(v) for v in _stream(2000, seed=9, run_ids="v7")]
    parts = [p for p in stream if isinstance(p, Extracted)]
    rng = random.Random(8)
    for start in range(0, len(parts), 500):
        batch = merge(parts[start : start + 500])
        for _ in range(5):
            canon = _canon(batch, rng)
            assert native_rekey(batch, canon) == rekey(batch, canon)


@settings(max_examples=300, deadline=None)
@given(st.randoms(use_true_random=False))
def test_rekey_of_random_batches(native_rekey: NativeRekey, rng: random.Random) -> None:
    """Merged mixes of real, generated and mutated events (every record kind, parents,
    symlinks, column lineage) with their location keys grouped at random."""
    batch = merge([rng.choice(PARTS) for _ in range(rng.randint(1, 40))])
    canon = _canon(batch, rng)
    fast, slow = native_rekey(batch, canon), rekey(batch, canon)
    assert fast == slow
    if all(k == v for k, v in canon.items()):
        assert fast is batch


def test_rekey_of_a_few_records_that_meet_others(native_rekey: NativeRekey) -> None:
    """A long merged batch in which a few records (under a quarter of their kind, so the
    native side places them one by one instead of merging the kind again) name an alias
    whose canonical records are there too: they are combined and put in their places."""
    parts = [python_path(v) for v in _stream(600, seed=11, run_ids="v7")]
    batch = merge([p for p in parts if isinstance(p, Extracted)])
    rng = random.Random(3)

    def aliased(key: Any) -> Any:
        return (key[0], "alias-of-" + key[1], *key[2:])

    extra = Extracted(
        locations=[replace(r, name="alias-of-" + r.name) for r in batch.locations],
        ios=[replace(r, dataset=aliased(r.dataset)) for r in rng.sample(batch.ios, 9)],
        column_lineage=[
            replace(r, source=aliased(r.source), target=aliased(r.target))
            for r in rng.sample(batch.column_lineage, 9)
        ],
        symlinks=[replace(r, source=aliased(r.source)) for r in rng.sample(batch.symlinks, 5)],
        datasets=[replace(r, location=aliased(r.location)) for r in rng.sample(batch.datasets, 5)],
    )
    mixed = merge([batch, extra])
    canon = {aliased(r.key): r.key for r in batch.locations}
    canon.update({r.key: r.key for r in batch.locations})
    assert native_rekey(mixed, canon) == rekey(mixed, canon)


async def test_writer_rekeys_in_python_when_the_native_rekey_fails(
    native_rekey: NativeRekey,
) -> None:
    def broken(batch: Extracted, canon: dict[LocationKey, LocationKey]) -> Extracted:
        raise RuntimeError("native rekey panicked")

    writer = Writer(cast(Any, None))
    assert writer.native_rekey is not None
    writer.native_rekey = broken
    parts = [python_path(v) for v in _stream(300, seed=5, run_ids="v7")]
    batch = merge([p for p in parts if isinstance(p, Extracted)])
    keys = sorted({r.key for r in batch.locations})
    writer.cache.locations.update(dict.fromkeys(keys, 1))  # all one location
    assert writer._canonical(batch) == rekey(batch, dict.fromkeys(keys, keys[0]))


# The run facets no extractor reads (Spark's logical plan, its unknown-node dump) are checked
# by the native parser but not built (native/src/json.rs). Whatever they hold, the native
# side must decline or give the Python path's records: never accept what Python refuses.
# Each content is raw JSON text (what orjson would not write: escapes, repeated keys, ...).
PLAN_CONTENTS = {
    "nested plan": '{"plan": [{"class": "x", "children": [[{"a": [1, 2.5, null, true]}]]}]}',
    "huge integer": "123456789012345678901234567890",
    "non-finite number": "1e400",
    "lone surrogate": '"\\ud800"',
    "escaped text": '"tab\\t quote\\" slash\\/ \\u00e9 \\ud83d\\ude00"',
    "bad escape": '"\\x"',
    "deep nesting": "[" * 200 + "]" * 200,
    "repeated keys": '{"k": 1, "k": {"k": []}}',
    "escaped key": '{"\\u006b\\ud83d\\ude00": 1}',
    "broken object": '{"k": }',
}
READ = {"nested plan", "escaped text", "repeated keys", "escaped key", "huge integer"}


@pytest.mark.parametrize("facet", ["spark.logicalPlan", "spark_unknown"])
@pytest.mark.parametrize("content", sorted(PLAN_CONTENTS))
def test_unread_run_facets_are_checked_as_strictly(
    native: NativeExtract, facet: str, content: str
) -> None:
    doc = orjson.loads(_stream(1, seed=3, run_ids="v7")[0])
    doc["run"].setdefault("facets", {})[facet] = "PLAN"
    payload = orjson.dumps(doc).replace(b'"PLAN"', PLAN_CONTENTS[content].encode())
    assert_same(native, payload)
    read = native(payload, DEFAULT_MAX_EVENT_BYTES) is not None
    assert read == (content in READ), (content, read, python_path(payload))
