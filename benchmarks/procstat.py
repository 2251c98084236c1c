"""CPU time and peak memory of processes, from /proc (no psutil needed)."""

import os
from dataclasses import dataclass
from pathlib import Path

HZ = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True, slots=True)
class Usage:
    cpu_s: float  # user + system, the process and its reaped children
    peak_rss_mb: float  # VmHWM: the high-water mark of resident memory


def _stat_fields(pid: int) -> list[str]:
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rindex(")") + 2 :].split()


def cpu_seconds(pid: int) -> float:
    """utime + stime + cutime + cstime of `pid`, in seconds."""
    fields = _stat_fields(pid)
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / HZ


def children(pid: int) -> list[int]:
    """Live direct children of `pid`."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(_stat_fields(int(stat.parent.name))[1]) == pid:
                found.append(int(stat.parent.name))
        except (OSError, ValueError):
            continue
    return found


def tree_cpu_seconds(pid: int) -> float:
    """CPU of a process and all its live descendants (reaped ones are in cutime/cstime)."""
    total = 0.0
    stack = [pid]
    while stack:
        current = stack.pop()
        try:
            total += cpu_seconds(current)
        except OSError:
            continue
        stack.extend(children(current))
    return total


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def usage(pid: int) -> Usage:
    return Usage(tree_cpu_seconds(pid), peak_rss_mb(pid))


def pids_of(pattern: str) -> list[int]:
    """Pids whose command line contains `pattern` (to find a service's processes)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if pattern in text:
            found.append(int(cmdline.parent.name))
    return found
