"""Writes the hostile-input catalogue: tests/hostile/cases/<id>.<ext> + manifest.json.

The files are the catalogue (the test reads only them); this script documents how each
was made and regenerates them byte for byte:  .venv/bin/python -m tests.hostile.make_cases

Manifest entries: id, file, what (one line for the docs), expect ("stored" or
"dead_letter"), reason (the x-threadline-reason a dead letter must carry), optional
detail_contains, and for stored cases `checks`: what the read API must give back.
"""

import gzip
import json
from pathlib import Path
from typing import Any

CASES_DIR = Path(__file__).resolve().parent / "cases"
Json = dict[str, Any]

TIME = "2025-05-05T10:00:00Z"
JOB_NS = "hostile"
DS_NS = "postgres://hostile-db.example.com:5432"
PRODUCER = "https://example.com/threadline-hostile-catalogue"
HEBREW = "\u05d8\u05d1\u05dc\u05d4_\u200f\u05de\u05db\u05d9\u05e8\u05d5\u05ea"


def run_id(n: int) -> str:
    """A fixed UUIDv7-shaped id per case (time 2025-05-05, counter n)."""
    return f"0196a000-0000-7000-8000-{n:012x}"


def event(n: int, *, job: str | None = None, outputs: list[Json] | None = None, **top: Any) -> Json:
    body: Json = {
        "eventType": "COMPLETE",
        "eventTime": TIME,
        "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": run_id(n)},
        "job": {"namespace": JOB_NS, "name": job or f"hostile_job_{n}"},
        "inputs": [],
        "outputs": outputs if outputs is not None else [{"namespace": DS_NS, "name": f"out_{n}"}],
    }
    body.update(top)
    return body


def dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def ascii_dumps(value: Any) -> bytes:
    """JSON with every non-ASCII character escaped (\\uXXXX), as many producers send."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":")).encode()


CASES: list[Json] = []


def case(case_id: str, what: str, payload: bytes, expect: str, **extra: Any) -> None:
    ext = ".bin.gz" if len(payload) > 64 * 1024 else ".bin"
    CASES.append(
        {"id": case_id, "what": what, "payload": payload, "ext": ext, "expect": expect, **extra}
    )


def dead(case_id: str, what: str, payload: bytes, reason: str, contains: str | None = None) -> None:
    extra = {"detail_contains": contains} if contains else {}
    case(case_id, what, payload, "dead_letter", reason=reason, **extra)


def stored(
    case_id: str, what: str, body: Json, checks: Json | None = None, *, raw: bytes | None = None
) -> None:
    case(case_id, what, raw if raw is not None else dumps(body), "stored", checks=checks or {})


def build() -> None:
    # -- not an event at all --------------------------------------------------------
    dead("not_json", "plain text, not JSON", b"this is not JSON at all", "invalid_json")
    dead("empty", "empty message value", b"", "invalid_json")
    dead("whitespace_only", "only whitespace", b" \n\t ", "invalid_json")
    dead(
        "json_array", "JSON array instead of an object", b'[{"eventType":"START"}]', "not_an_object"
    )
    dead("json_string", "JSON string", b'"COMPLETE"', "not_an_object")
    dead("json_number", "JSON number", b"42", "not_an_object")
    dead("json_null", "JSON null", b"null", "not_an_object")
    full = dumps(event(1))
    dead("truncated", "a valid event cut in half", full[: len(full) // 2], "invalid_json")
    dead(
        "bom_prefix",
        "UTF-8 byte-order mark before the JSON",
        b"\xef\xbb\xbf" + dumps(event(2)),
        "invalid_json",
    )
    dead(
        "nan_literal",
        "NaN literal (not JSON)",
        dumps(event(3)).replace(b'"inputs":[]', b'"inputs":NaN'),
        "invalid_json",
    )
    dead(
        "number_overflow",
        "a statistic of 1e400 (infinite as a double)",
        _with_stat(4, "1e400"),
        "invalid_json",
    )
    dead(
        "unknown_kind",
        "an object with neither run, job nor dataset",
        dumps({"eventTime": TIME, "foo": 1}),
        "unknown_kind",
    )
    # -- size and shape -------------------------------------------------------------
    big = event(5)
    big["run"]["facets"] = {"blob": {"_producer": PRODUCER, "data": "x" * (20 * 1024 * 1024)}}
    dead("event_20mb", "a 20 MiB event (limit 16 MiB)", dumps(big), "too_large")
    deep = b"[" * 100_000 + b"]" * 100_000
    dead(
        "nesting_100k",
        "100,000 nested arrays in a facet",
        dumps(event(6)).replace(b'"inputs":[]', b'"inputs":[],"x":' + deep),
        "invalid_json",
        "recursion",
    )
    nested: Any = "bottom"
    for _ in range(500):
        nested = {"level": nested}
    body = event(7)
    body["run"]["facets"] = {"custom": {"_producer": PRODUCER, "tree": nested}}
    stored("nesting_500", "500 nested objects inside a custom run facet", body)
    many = event(8, outputs=[])
    many["inputs"] = [{"namespace": DS_NS, "name": f"wide_input_{i:05d}"} for i in range(10_000)]
    stored("inputs_10000", "10,000 inputs in one event", many, {"inputs": 10_000})
    # -- NUL, invalid UTF-8, control characters ---------------------------------------
    dead(
        "nul_escaped_job_name",
        "\\u0000 inside the job name",
        ascii_dumps(event(9, job="job\u0000name")),
        "nul_character",
    )
    nul_facet = event(10)
    nul_facet["run"]["facets"] = {"custom": {"_producer": PRODUCER, "note": "a\u0000b"}}
    dead(
        "nul_escaped_in_facet",
        "\\u0000 inside an unknown facet",
        ascii_dumps(nul_facet),
        "nul_character",
    )
    dead(
        "raw_nul_byte",
        "a raw 0x00 byte inside a string",
        dumps(event(11, job="job_X")).replace(b"job_X", b"job_\x00"),
        "invalid_json",
    )
    dead(
        "invalid_utf8",
        "invalid UTF-8 bytes in the job name",
        dumps(event(12, job="job_X")).replace(b"job_X", b"job_\xff\xfe"),
        "invalid_json",
    )
    dead(
        "lone_surrogate",
        "a lone UTF-16 surrogate escape (\\ud800)",
        dumps(event(13, job="job_X")).replace(b"job_X", b"job_\\ud800"),
        "invalid_json",
    )
    dead(
        "raw_control_char",
        "a raw 0x01 byte inside a string",
        dumps(event(14, job="job_X")).replace(b"job_X", b"job_\x01"),
        "invalid_json",
    )
    stored(
        "control_chars_escaped",
        "escaped control characters (\\u0001, ESC, DEL, tab, newline) inside names",
        event(
            15,
            job="job\u0001\u0007\u001b[31mred\u007fend",
            outputs=[{"namespace": DS_NS, "name": "out\t15\nline2"}],
        ),
        raw=ascii_dumps(
            event(
                15,
                job="job\u0001\u0007\u001b[31mred\u007fend",
                outputs=[{"namespace": DS_NS, "name": "out\t15\nline2"}],
            )
        ),
    )
    # -- names ----------------------------------------------------------------------
    dead(
        "job_name_100k",
        "a 100,000-character job name",
        dumps(event(16, job="j" * 100_000)),
        "name_too_long",
    )
    dead(
        "dataset_name_100k",
        "a 100,000-character dataset name",
        dumps(event(17, outputs=[{"namespace": DS_NS, "name": "d" * 100_000}])),
        "name_too_long",
    )
    dead(
        "namespace_100k",
        "a 100,000-character namespace",
        dumps(event(18, outputs=[{"namespace": "s3://" + "n" * 100_000, "name": "x"}])),
        "name_too_long",
    )
    dead(
        "dataset_name_2000_emoji",
        "a 2,000-emoji dataset name (8,000 UTF-8 bytes)",
        dumps(event(19, outputs=[{"namespace": DS_NS, "name": "📦" * 2000}])),
        "name_too_long",
    )
    stored(
        "sql_injection_names",
        "SQL-injection-looking job and dataset names",
        event(
            20,
            job="x'); DROP TABLE run; --",
            outputs=[
                {"namespace": DS_NS, "name": "Robert'); DROP TABLE dataset;--"},
                {"namespace": DS_NS, "name": "1 OR 1=1; SELECT pg_sleep(10)"},
            ],
        ),
    )
    stored(
        "emoji_names",
        "emoji in job and dataset names",
        event(
            21, job="🚀 launch 🧪 job", outputs=[{"namespace": DS_NS, "name": "таблица_данных_📊"}]
        ),
    )
    stored(
        "rtl_names",
        "right-to-left names with bidi controls (U+202E, U+200F)",
        event(
            22,
            job="مهمة_\u202eevil\u202c_job",
            outputs=[{"namespace": DS_NS, "name": HEBREW}],
        ),
    )
    stored(
        "unicode_normalisation",
        "two dataset names equal only after Unicode normalisation (NFC é vs NFD e+U+0301)",
        event(
            23,
            outputs=[
                {"namespace": DS_NS, "name": "caf\u00e9"},
                {"namespace": DS_NS, "name": "cafe\u0301"},
            ],
        ),
    )
    stored(
        "garbage_namespace",
        "a namespace that is no URL (`:::: //`)",
        event(24, outputs=[{"namespace": ":::: //", "name": "odd"}]),
    )
    dead("job_name_blank", "a job name of blanks", dumps(event(25, job="   ")), "missing_field")
    dead(
        "job_name_template",
        "a templated job name `{{ task.name }}`",
        dumps(event(26, job="{{ task.name }}")),
        "placeholder",
    )
    # -- run ids --------------------------------------------------------------------
    bad_id = event(27)
    bad_id["run"]["runId"] = "not-a-uuid"
    dead("run_id_invalid", "runId that is not a UUID", dumps(bad_id), "invalid_run_id")
    for n, (case_id, value, what) in enumerate(
        [
            ("run_id_template", "{{ run_id }}", "templated runId `{{ run_id }}`"),
            (
                "run_id_nil",
                "00000000-0000-0000-0000-000000000000",
                "the nil UUID as runId (placeholder)",
            ),
            (
                "run_id_max",
                "ffffffff-ffff-ffff-ffff-ffffffffffff",
                "the max UUID as runId (placeholder)",
            ),
        ],
        start=28,
    ):
        body = event(n)
        body["run"]["runId"] = value
        dead(case_id, what, dumps(body), "placeholder")
    braced = event(31)
    braced["run"]["runId"] = "{" + run_id(31).upper() + "}"
    stored(
        "run_id_braced_uppercase",
        "runId in braces and upper case (still one UUID)",
        braced,
        {"run_id": run_id(31)},
    )
    # -- event times ----------------------------------------------------------------
    # datetime.min/max: asyncpg would store them as -infinity/infinity: rejected.
    dead(
        "event_time_year_1",
        "eventTime 0001-01-01T00:00:00Z (datetime.min) -> rejected: asyncpg's -infinity",
        dumps(
            event(
                32,
                eventTime="0001-01-01T00:00:00Z",
                run={"runId": "0196a000-0000-4000-8000-000000000020"},
            )
        ),
        "invalid_event_time",
    )
    dead(
        "event_time_year_9999",
        "eventTime 9999-12-31T23:59:59.999999Z (datetime.max) -> rejected: asyncpg's infinity",
        dumps(
            event(
                33,
                eventTime="9999-12-31T23:59:59.999999Z",
                run={"runId": "0196a000-0000-4000-8000-000000000021"},
            )
        ),
        "invalid_event_time",
    )
    dead(
        "event_time_year_1_offset",
        "eventTime 0001-01-01T00:30:00+01:00 (before year 1 in UTC)",
        dumps(event(34, eventTime="0001-01-01T00:30:00+01:00")),
        "invalid_event_time",
    )
    dead(
        "event_time_year_10000",
        "eventTime in year 10000",
        dumps(event(35, eventTime="10000-01-01T00:00:00Z")),
        "invalid_event_time",
    )
    no_time = event(36)
    del no_time["eventTime"]
    dead("event_time_missing", "no eventTime", dumps(no_time), "missing_field", "eventTime")
    dead(
        "event_time_garbage",
        "eventTime `yesterday`",
        dumps(event(37, eventTime="yesterday")),
        "invalid_event_time",
    )
    dead(
        "event_time_number",
        "eventTime as epoch milliseconds (a number)",
        dumps(event(38, eventTime=1746439200000)),
        "missing_field",
        "eventTime",
    )
    stored(
        "event_time_nanos_offset",
        "eventTime with 9 fraction digits and +14:00",
        event(39, eventTime="2025-05-05T23:59:59.123456789+14:00"),
        {"ended_at": "2025-05-05T09:59:59.123456Z"},
    )
    # -- statistics -----------------------------------------------------------------
    stats = event(40, outputs=[_out(40, rowCount=-5, size=-1, fileCount=-3)])
    stored(
        "statistics_negative",
        "negative rowCount/size/fileCount",
        stats,
        {"output_stats": [None, None, None]},
    )
    stats = event(41, outputs=[_out(41, rowCount=2**64, size=2**63, fileCount=2**63 - 1)])
    stored(
        "statistics_2_pow_64",
        "rowCount 2^64, size 2^63, fileCount 2^63-1",
        stats,
        {"output_stats": [None, None, 2**63 - 1]},
    )
    # -- types ----------------------------------------------------------------------
    dead(
        "event_type_unknown",
        "eventType EXPLODE",
        dumps(event(42, eventType="EXPLODE")),
        "invalid_event_type",
    )
    dead(
        "event_type_number",
        "eventType as a number",
        dumps(event(43, eventType=5)),
        "invalid_event_type",
    )
    stored(
        "event_type_lowercase",
        "eventType `complete` in lower case",
        event(44, eventType="complete"),
        {"status": "SUCCEEDED"},
    )
    wrong = event(
        45,
        outputs=[
            {
                "namespace": DS_NS,
                "name": "out_45",
                "facets": {
                    "schema": "x",
                    "columnLineage": [1],
                    "symlinks": {"identifiers": "x"},
                    "lifecycleStateChange": 5,
                },
                "outputFacets": {"outputStatistics": "lots"},
            }
        ],
    )
    wrong["run"]["facets"] = {"parent": [1, 2], "nominalTime": "now", "errorMessage": 7}
    wrong["job"]["facets"] = {
        "sql": ["SELECT 1"],
        "jobType": "SPARK",
        "documentation": {"description": 5},
    }
    stored(
        "facets_wrong_types",
        "every facet of the wrong JSON type",
        wrong,
        {"output_stats": [None, None, None]},
    )
    parent_bad = event(46)
    parent_bad["run"]["facets"] = {
        "parent": {"run": {"runId": "not-a-uuid"}, "job": {"namespace": JOB_NS, "name": "p"}}
    }
    stored("parent_run_id_invalid", "a parent facet whose runId is no UUID", parent_bad)
    dead(
        "inputs_not_a_list",
        "inputs is an object, not a list",
        dumps(event(47, inputs={"namespace": DS_NS, "name": "x"})),
        "invalid_field",
    )
    dead(
        "input_not_an_object",
        "an input that is a string",
        dumps(event(48, inputs=["postgres://x/y"])),
        "invalid_field",
    )
    dead(
        "output_missing_name",
        "an output without a name",
        dumps(event(49, outputs=[{"namespace": DS_NS}])),
        "missing_field",
    )
    dup = dumps(event(50, eventType="START")).replace(
        b'"eventType":"START"', b'"eventType":"START","eventType":"COMPLETE"'
    )
    stored(
        "duplicate_keys",
        "the same key twice (the last one counts)",
        event(50),
        {"status": "SUCCEEDED"},
        raw=dup,
    )


def _out(n: int, **stats: int) -> Json:
    return {"namespace": DS_NS, "name": f"out_{n}", "outputFacets": {"outputStatistics": stats}}


def _with_stat(n: int, literal: str) -> bytes:
    body = dumps(event(n, outputs=[_out(n, rowCount=123456789)]))
    return body.replace(b"123456789", literal.encode())


def write() -> None:
    build()
    CASES_DIR.mkdir(parents=True, exist_ok=True)
    for old in CASES_DIR.iterdir():
        old.unlink()
    manifest = []
    for entry in CASES:
        payload = entry.pop("payload")
        name = entry["id"] + entry.pop("ext")
        data = gzip.compress(payload, mtime=0) if name.endswith(".gz") else payload
        (CASES_DIR / name).write_bytes(data)
        manifest.append({"file": name, **entry})
    text = json.dumps({"cases": manifest}, indent=1, ensure_ascii=False) + "\n"
    (CASES_DIR / "manifest.json").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    write()
