"""Summarise a py-spy raw (collapsed-stack) profile: self and inclusive % per function.

    .venv/bin/python -m benchmarks.profile_summary /tmp/bench-runs/.../py-spy-0.txt --top 25

Frames look like ``function (path/to/file.py:line)``; paths are shortened to the repository
or to the site-packages package. "Inclusive" counts a sample once per function on its stack.
"""

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

FRAME = re.compile(r"^(?P<func>.*?) \((?P<path>[^:()]*)(?::\d+)?\)$")
# Stage -> frame prefixes; a sample counts for a stage when any frame starts with one.
STAGES = {
    "decode + extract (native or Python)": ("consumer/ingest.py:Pipeline._extract",),
    "  decode (Python)": ("consumer/decode.py:decode",),
    "  extract (Python)": ("consumer/extract/__init__.py:extract",),
    "merge (batch)": ("consumer/ingest.py:Pipeline._merge", "consumer/merge.py:merge"),
    "write (all)": ("consumer/write/__init__.py:Writer.write",),
    "  rekey": ("consumer/write/__init__.py:Writer._canonical", "consumer/rekey.py:rekey"),
    "  asyncpg": ("asyncpg/",),
    "kafka client": ("aiokafka/",),
    "lineage service": ("server/lineage/service.py:get_lineage",),
    "  assemble": ("server/lineage/assemble.py:assemble_graph",),
    "  expand": ("server/lineage/service.py:_expand",),
    "render": ("server/lineage/render.py:render",),
    "waiting (epoll)": ("selectors.py:EpollSelector.select",),
}


def short(frame: str) -> str:
    match = FRAME.match(frame)
    if not match:
        return frame
    path = match["path"]
    for marker in ("site-packages/", "/work/main/", "lib/python3.11/", "lib/python3.12/"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    return f"{path}:{match['func']}"


def load(path: Path) -> list[tuple[list[str], int]]:
    stacks = []
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = [short(f) for f in stack.split(";")]
        stacks.append((frames, int(count)))
    return stacks


def summarise(stacks: list[tuple[list[str], int]], top: int) -> str:
    total = sum(c for _, c in stacks) or 1
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    stages: Counter[str] = Counter()
    for frames, count in stacks:
        own[frames[-1]] += count
        for name in set(frames):
            inclusive[name] += count
        for stage, prefixes in STAGES.items():
            if any(
                f == p or f.startswith(p + ".") or (p.endswith("/") and f.startswith(p))
                for f in frames
                for p in prefixes
            ):
                stages[stage] += count
    lines = [f"samples: {total}", "", "stage (inclusive %):"]
    lines += [
        f"  {stage:16} {stages[stage] / total * 100:5.1f}%" for stage in STAGES if stages[stage]
    ]
    lines += ["", f"top {top} self %:"]
    lines += [f"  {c / total * 100:5.1f}%  {name}" for name, c in own.most_common(top)]
    lines += ["", f"top {top} inclusive % (repository code):"]
    ours = [(n, c) for n, c in inclusive.most_common() if n.split("/")[0] in _OURS]
    lines += [f"  {c / total * 100:5.1f}%  {name}" for name, c in ours[:top]]
    return "\n".join(lines) + "\n"


_OURS = {"consumer", "server", "shared"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("profile", type=Path)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    sys.stdout.write(summarise(load(args.profile), args.top))


if __name__ == "__main__":
    main()
