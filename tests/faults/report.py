"""Measured outcomes of the reliability tests, appended as JSON lines under build/reliability/.

`python -m tests.faults.report` prints the markdown tables that docs/reliability.md shows.
"""

import sys
import time
from pathlib import Path
from typing import Any

import orjson


class Report:
    def __init__(self, path: Path) -> None:
        self.path = path

    def add(self, **fields: Any) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = orjson.dumps({"at": time.strftime("%Y-%m-%dT%H:%M:%S"), **fields}, default=str)
        with self.path.open("ab") as out:
            out.write(line + b"\n")


def _latest(path: Path, key: str) -> dict[str, dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    if path.exists():
        for line in path.read_bytes().splitlines():
            row = orjson.loads(line)
            rows[row[key]] = row
    return rows


def fault_table(path: Path) -> str:
    head = (
        "| fault | events sent | resent by producer | lost rows | duplicated / extra rows"
        " | dead-lettered | recovery (s) | scenario (s) |\n|---|---|---|---|---|---|---|---|"
    )
    lines = [head]
    for row in _latest(path, "scenario").values():
        lines.append(
            f"| {row['fault']} | {row['events']} | {row['resent']} | {row['lost_rows']}"
            f" | {row['extra_rows']} | {row['dead_letters']} | {row['recovery_s']}"
            f" | {row['scenario_s']} |"
        )
    return "\n".join(lines)


def hostile_table(path: Path) -> str:
    lines = ["| case | what | expected | actual |", "|---|---|---|---|"]
    for row in _latest(path, "case").values():
        lines.append(f"| `{row['case']}` | {row['what']} | {row['expected']} | {row['actual']} |")
    return "\n".join(lines)


def main() -> None:
    base = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("build/reliability")
    sys.stdout.write(fault_table(base / "faults.jsonl") + "\n\n")
    sys.stdout.write(hostile_table(base / "hostile.jsonl") + "\n")


if __name__ == "__main__":
    main()
