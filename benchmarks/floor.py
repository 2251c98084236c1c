"""What the records cost, and what real events cost, in process (no Kafka, no database).

    .venv/bin/python -m benchmarks.floor --events-file /tmp/bench-data/events-20k.ndjson \
        [--corpus ../shared/corpus/events] [--out RESULT.json]

1. On the stream: Python decode + extract + merge (2,000-event batches, the consumer's GC
   settings, best of --repeat), the records extract makes per event and what merge leaves
   of them, and the CPU of building those same records again from their field values.
   That last figure is what any extractor that hands Python records to the Python merge
   still pays, however fast its JSON walk: the native one (consumer/native.py) included,
   so it is the case for merging natively too. The UUIDs and datetimes are made from text
   as well, as a native walker has them.
2. On the real corpus (every event Threadline accepts, each its own batch): Python decode +
   extract + merge per event, to see whether some producer's shape costs far more per
   kilobyte than the benchmark's.

Prints one JSON object (and appends it to --out, a JSON list).
"""

import argparse
import dataclasses
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any
from uuid import UUID

import orjson

from benchmarks import env
from benchmarks.generate import read_ndjson
from consumer.decode import Event, Reject, decode
from consumer.extract import extract
from consumer.ingest import DEFAULT_MAX_EVENT_BYTES
from consumer.merge import merge
from consumer.records import Extracted
from shared.runtime import tune_gc

BATCH = 2000
CORPUS = env.ROOT.parent / "shared" / "corpus" / "events"
KINDS = [f.name for f in dataclasses.fields(Extracted) if f.name != "users"]
# A record as its class and field values, UUIDs and datetimes as text.
Plan = tuple[type, list[Any]]


def _events(values: list[bytes]) -> list[Event]:
    return [e for e in (decode(v, DEFAULT_MAX_EVENT_BYTES) for v in values) if isinstance(e, Event)]


def _best(run: Callable[[], object], repeat: int) -> float:
    """The least process CPU seconds of `repeat` calls."""
    spent = []
    for _ in range(repeat):
        start = time.process_time()
        run()
        spent.append(time.process_time() - start)
    return min(spent)


def _pipeline(values: list[bytes]) -> None:
    for start in range(0, len(values), BATCH):
        merge([extract(e) for e in _events(values[start : start + BATCH])])


def _records(part: Extracted) -> Iterator[Any]:
    for kind in KINDS:
        yield from getattr(part, kind)


def _as_text(value: Any) -> Any:
    if isinstance(value, UUID):
        return ("uuid", str(value))
    if isinstance(value, datetime):
        return ("time", value.isoformat())
    return value


def _plan(record: Any) -> Plan:
    values = [_as_text(getattr(record, f.name)) for f in dataclasses.fields(record)]
    return type(record), values


def _from_text(value: Any, uuids: dict[str, UUID]) -> Any:
    """A value of `_plan` as the record holds it; a UUID parsed once per text, as a cache
    would."""
    if type(value) is tuple and len(value) == 2 and value[0] == "uuid":
        return uuids.get(value[1]) or uuids.setdefault(value[1], UUID(value[1]))
    if type(value) is tuple and len(value) == 2 and value[0] == "time":
        return datetime.fromisoformat(value[1])
    return value


def _rebuild(plans: list[Plan]) -> None:
    uuids: dict[str, UUID] = {}
    for cls, values in plans:
        cls(*[_from_text(v, uuids) for v in values])


def stream(values: list[bytes], repeat: int) -> dict[str, Any]:
    events = _events(values)
    parts = [extract(e) for e in events]
    merged = [merge(parts[i : i + BATCH]) for i in range(0, len(parts), BATCH)]
    n = len(values)
    made = {k: sum(len(getattr(p, k)) for p in parts) for k in KINDS}
    kept = {k: sum(len(getattr(m, k)) for m in merged) for k in KINDS}
    plans = [_plan(r) for p in parts for r in _records(p)]
    uuids: dict[str, UUID] = {}
    ready = [(cls, [_from_text(v, uuids) for v in values]) for cls, values in plans]
    return {
        "events": n,
        "pipeline_us_per_event": round(_best(lambda: _pipeline(values), repeat) / n * 1e6, 1),
        "merge_us_per_event": round(_best(lambda: [merge(parts)], repeat) / n * 1e6, 1),
        "records_per_event": round(sum(made.values()) / n, 2),
        "records_per_event_by_kind": {k: round(v / n, 2) for k, v in made.items()},
        "merged_records_per_event": round(sum(kept.values()) / n, 2),
        "build_records_us_per_event": round(
            _best(lambda: [cls(*args) for cls, args in ready], repeat) / n * 1e6, 1
        ),
        "build_records_from_text_us_per_event": round(
            _best(lambda: _rebuild(plans), repeat) / n * 1e6, 1
        ),
    }


def _corpus_payloads(folder: Path) -> Iterator[tuple[str, bytes]]:
    for path in sorted(folder.rglob("*.json*")):
        raw = path.read_bytes()
        name = str(path.relative_to(folder))
        if path.suffix == ".jsonl":
            yield from ((name, line) for line in raw.splitlines() if line.strip())
            continue
        doc = orjson.loads(raw)
        yield from ((name, orjson.dumps(e)) for e in (doc if isinstance(doc, list) else [doc]))


def corpus(folder: Path, loops: int) -> dict[str, Any]:
    costs = []
    for name, payload in _corpus_payloads(folder):
        event = decode(payload, DEFAULT_MAX_EVENT_BYTES)
        if isinstance(event, Reject):
            continue
        try:
            extract(event)
        except ValueError:  # a reject extract raises (name_too_long, ...)
            continue

        def one(data: bytes = payload) -> None:
            for _ in range(loops):
                merge([extract(e) for e in _events([data])])

        costs.append((_best(one, 3) / loops * 1e6, len(payload), name))
    costs.sort()
    total_us = sum(c[0] for c in costs)
    total_kb = sum(c[1] for c in costs) / 1024
    return {
        "events": len(costs),
        "us_per_event_median": round(statistics.median(c[0] for c in costs), 1),
        "us_per_kb_overall": round(total_us / total_kb, 1),
        "us_per_kb_max": round(max(c[0] / (c[1] / 1024) for c in costs), 1),
        "costliest": [
            {"file": name, "bytes": size, "us": round(us, 1)} for us, size, name in costs[-5:]
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events-file", type=Path, required=True)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path, help="append the result to this JSON list")
    args = parser.parse_args()
    tune_gc()  # as consumer/__main__.py does
    values = [v for _, v in read_ndjson(args.events_file)]
    result = {
        "events_file": str(args.events_file),
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "stream": stream(values, args.repeat),
        "corpus": corpus(args.corpus, loops=200),
    }
    line = orjson.dumps(result).decode()
    sys.stdout.write(line + "\n")
    if args.out:
        previous = orjson.loads(args.out.read_bytes()) if args.out.exists() else []
        args.out.write_bytes(orjson.dumps([*previous, result], option=orjson.OPT_INDENT_2))


if __name__ == "__main__":
    main()
