"""Render the committed raw results (benchmarks/results/*.json) as the README's tables.

    .venv/bin/python -m benchmarks.report

Ratios are Threadline / Data.Rentgen for throughput (higher is better for Threadline) and
Data.Rentgen / Threadline for latency (how many times faster Threadline answers).
"""

import sys
from typing import Any

import orjson

from benchmarks.env import RESULTS_DIR


def _load(name: str) -> Any:
    path = RESULTS_DIR / name
    return orjson.loads(path.read_bytes()) if path.exists() else None


def _ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}x" if a and b else "n/a"


def ingest_table(runs: list[dict[str, Any]]) -> str:
    lines = [
        "| system | consumers | events | wall s | events/s | consumer CPU s per 1k events "
        "| peak RSS MB | PostgreSQL CPU s | load avg (1 min) at start |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        rss = ", ".join(f"{r:.0f}" for r in run["consumer_peak_rss_mb"])
        lines.append(
            f"| {run['system']} {run['version']} | {run['consumers']} | {run['events']} "
            f"| {run['wall_s']:.1f} | {run['events_per_s']:.0f} "
            f"| {run['consumer_cpu_per_1k_events_s']:.3f} | {rss} | {run['postgres_cpu_s']} "
            f"| {run['load_avg_at_start'][0]} |"
        )
    lines.append("")
    by_key = {(r["system"], r["consumers"], r["events"]): r for r in runs}
    for system, k, events in sorted(by_key):
        tl, dr = by_key.get(("threadline", k, events)), by_key.get(("data-rentgen", k, events))
        if system != "threadline" or not (tl and dr):
            continue
        speed = _ratio(tl["events_per_s"], dr["events_per_s"])
        cpu = _ratio(dr["consumer_cpu_per_1k_events_s"], tl["consumer_cpu_per_1k_events_s"])
        lines.append(
            f"- {events} events, {k} consumer(s): events/s Threadline / Data.Rentgen {speed}; "
            f"consumer CPU per event Data.Rentgen / Threadline {cpu}"
        )
    return "\n".join(lines) + "\n"


def api_table(threadline: dict[str, Any], rentgen: dict[str, Any] | None) -> str:
    other = {(c["granularity"], c["depth"]): c for c in (rentgen or {}).get("cases", [])}
    lines = [
        "| granularity | depth | Threadline p50 / p95 / p99 ms | nodes (median) "
        "| Data.Rentgen p50 / p95 / p99 ms | nodes (median) | p95 ratio DR/TL |",
        "|---|---|---|---|---|---|---|",
    ]
    for case in threadline["cases"]:
        dr = other.get((case["granularity"], case["depth"]))
        tl_ms = f"{case['p50_ms']:.0f} / {case['p95_ms']:.0f} / {case['p99_ms']:.0f}"
        dr_ms = f"{dr['p50_ms']:.0f} / {dr['p95_ms']:.0f} / {dr['p99_ms']:.0f}" if dr else "n/a"
        lines.append(
            f"| {case['granularity']} | {case['depth']} | {tl_ms} | {case['nodes_median']} "
            f"| {dr_ms} | {dr['nodes_median'] if dr else 'n/a'} "
            f"| {_ratio(dr['p95_ms'], case['p95_ms']) if dr else 'n/a'} |"
        )
    loads = f"load avg at start: Threadline {threadline['load_avg_at_start'][0]}"
    if rentgen:
        loads += f", Data.Rentgen {rentgen['load_avg_at_start'][0]}"
    return "\n".join(lines) + f"\n\n{loads}\n"


def main() -> None:
    out = []
    ingest = _load("ingest.json")
    if ingest:
        out += ["## Ingest", "", ingest_table(ingest)]
    tl40, dr40 = _load("api-threadline-40k.json"), _load("api-data-rentgen-40k.json")
    if tl40:
        out += ["## Lineage API, ~40k-event database", "", api_table(tl40, dr40)]
    tl_jobs, dr_jobs = (
        _load("api-threadline-40k-jobs.json"),
        _load("api-data-rentgen-40k-jobs.json"),
    )
    if tl_jobs:
        out += ["## Job lineage, ~40k-event database", "", api_table(tl_jobs, dr_jobs)]
    for name, title in (
        ("api-threadline-1m.json", "1M-event database, all history (Threadline)"),
        ("api-threadline-1m-7d.json", "1M-event database, last 7 days (Threadline)"),
    ):
        result = _load(name)
        if result:
            out += [f"## Lineage API, {title}", "", api_table(result, None)]
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main()
