"""Collect the API harness's per-run files of an alternated-rounds script into one result.

    .venv/bin/python -m benchmarks.rounds DIR RESULT WHAT [LABEL ...]

Each `DIR/*.json` is named `<round>-<label>-...-<rest>.json`: every run gets its `round`
(an int) and, per LABEL, the next dash-separated part of the name, the last LABEL taking the
rest of it. Used by `depth3_rounds.sh` (no labels) and `depth5_1m_rounds.sh` (window, variant).
"""

import argparse
import json
from pathlib import Path
from typing import Any


def collect(runs_dir: Path, labels: list[str]) -> list[dict[str, Any]]:
    runs = []
    for path in sorted(runs_dir.glob("*.json")):
        run = json.loads(path.read_text())
        first, _, rest = path.stem.partition("-")
        parts = rest.split("-", len(labels) - 1) if labels else []  # the last keeps its dashes
        run.update(round=int(first), **dict(zip(labels, parts, strict=True)))
        runs.append(run)
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("runs_dir", type=Path)
    parser.add_argument("result", type=Path)
    parser.add_argument("what", help="one line saying what the rounds measured")
    parser.add_argument("labels", nargs="*", help="names of the file name's further parts")
    args = parser.parse_args()
    runs = collect(args.runs_dir, args.labels)
    args.result.write_text(json.dumps({"what": args.what, "runs": runs}, indent=2) + "\n")


if __name__ == "__main__":
    main()
