"""Render the committed raw results (benchmarks/results/*.json) as the README's tables.

    .venv/bin/python -m benchmarks.report
    .venv/bin/python -m benchmarks.report --rounds results/api-40k-depths-thirty-first.json

`--rounds FILE` renders one rounds file (`benchmarks.rounds`) instead: every case with each
system's (or variant's) p50 / p95 / p99 per round, as the thirty-first set's tables.

Ratios are Threadline / Data.Rentgen for throughput (higher is better for Threadline) and
Data.Rentgen / Threadline for latency (how many times faster Threadline answers).
"""

import argparse
import sys
from collections import defaultdict
from pathlib import Path
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


_ORDER = {"DATASET": 0, "JOB": 1, "RUN": 2, "OPERATION": 3}


def _column(run: dict[str, Any]) -> str:
    """A run's column: its system, or its variant (`depth5_1m_rounds.sh`, whose all-history
    files end in -small / -run)."""
    variant: str | None = run.get("variant")
    if variant is None:
        return str(run["system"])
    return variant.removesuffix("-small").removesuffix("-run")


def rounds_table(result: dict[str, Any]) -> str:
    """Per case (start kind, window, granularity, depth): node counts, each column's
    p50 / p95 / p99 ms per round, and Data.Rentgen's p95 and p50 over the first Threadline
    column's (the uncapped one, where there are two) per round."""
    cells: dict[tuple[str, str, str, int], dict[str, dict[int, Any]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    columns: list[str] = []
    for run in result["runs"]:
        column = _column(run)
        columns += [column] if column not in columns else []
        window = run.get("window", "all" if run.get("window_days") is None else "7d")
        for case in run["cases"]:
            key = (run["start_kind"], window, case["granularity"], case["depth"])
            cells[key][column][run["round"]] = case
    columns.sort(key=lambda c: (c == "data-rentgen", c != "threadline-uncapped", c))
    base = columns[0]
    head = " | ".join(columns)
    lines = [
        f"| start | window | granularity | depth | nodes median / max ({base}) | {head} "
        "| p95 ratio | p50 ratio |",
        "|---|---|---|---|---|" + "---|" * len(columns) + "---|---|",
    ]
    for key in sorted(cells, key=lambda k: (_ORDER[k[0]], k[1] != "7d", _ORDER[k[2]], k[3])):
        by = cells[key]
        first = next(iter(by[base].values()))
        ms = [
            "; ".join(
                f"{c['p50_ms']:.1f} / {c['p95_ms']:.1f} / {c['p99_ms']:.1f}"
                for _, c in sorted(by[column].items())
            )
            for column in columns
        ]
        rentgen = by.get("data-rentgen", {})
        ratios = [
            " / ".join(
                f"{rentgen[r][f] / by[base][r][f]:.1f}x" for r in sorted(by[base]) if r in rentgen
            )
            for f in ("p95_ms", "p50_ms")
        ]
        start, window, granularity, depth = key
        lines.append(
            f"| {start} | {window} | {granularity} | {depth} "
            f"| {first['nodes_median']:g} / {first['nodes_max']:g} | {' | '.join(ms)} "
            f"| {' | '.join(ratios)} |"
        )
    return "\n".join(lines) + "\n"


def rounds_tables(result: dict[str, Any]) -> str:
    """`rounds_table`, once per HTTP client where the rounds used several
    (`depth3_rounds.sh CLIENT="httpx raw"`): each system's runs with that client only."""
    clients = sorted({run.get("client", "httpx") for run in result["runs"]})
    if len(clients) == 1:
        return rounds_table(result)
    return "\n".join(
        f"client: {client}\n\n"
        + rounds_table({"runs": [r for r in result["runs"] if r.get("client", "httpx") == client]})
        for client in clients
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=Path, help="render this rounds file only")
    args = parser.parse_args()
    if args.rounds is not None:
        sys.stdout.write(rounds_tables(orjson.loads(args.rounds.read_bytes())))
        return
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
