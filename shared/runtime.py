"""Process-wide settings of the Python runtime, for the consumer and the server processes."""

import ctypes
import gc
import sys
from collections.abc import Coroutine
from typing import Any, TypeVar

import uvloop

T = TypeVar("T")

# Allocations (net) between young-generation collections; CPython's default is 700.
YOUNG_THRESHOLD = 100_000


def tune_gc(young: int = YOUNG_THRESHOLD) -> None:
    """Collect cycles rarely (a young collection every `young` net allocations); leave the
    start-up heap out of every later collection.

    Both processes allocate millions of short-lived, acyclic objects (parsed JSON,
    records, result rows) that reference counting frees at once; with the default
    threshold the cycle collector still ran every 700 allocations and rescanned every
    surviving object: ~45% of the consumer's decode/extract/merge CPU, and the
    server's latency tail (benchmarks/README.md). Frozen objects (modules, settings,
    the app built at start-up) are never scanned again.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(young, 20, 20)


# glibc's mallopt parameters (malloc.h) and the values both processes set. Each consumer
# batch and each large lineage graph frees megabytes of large blocks (batch buffers, a
# body's pieces, big dicts' and lists' tables) when it is done; glibc handed them back to
# the kernel (munmap, or trimming the heap's top), and the next batch or graph faulted the
# same pages in again at ~3 us a page on the benchmark VM. A 20k-event ingest faulted
# 31,000-41,500 pages in, ~20,000 with these thresholds; the server 1,000-1,250 per 30
# capped depth-5 graphs, ~100 with them (benchmarks/README.md, fortieth set). Blocks up to
# 32 MiB (glibc's largest threshold on 64-bit) now come from the heap, whose top is
# trimmed only once 64 MiB lie free there.
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 64 << 20


def keep_freed_memory() -> bool:
    """Raise glibc's mmap and trim thresholds (above); False where the C library is not
    glibc or refuses them: the allocator then works as before."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the process's own C library
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    # musl's mallopt does nothing and returns 0, as glibc does for a value it refuses.
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    )


def run(main: Coroutine[Any, Any, T]) -> T:
    """Run a process's main coroutine on uvloop's event loop.

    Both processes are I/O loops around asyncpg and a Kafka or HTTP socket: uvloop's
    libuv loop (written in C) cut the server's per-request CPU and the consumer's
    client overhead (benchmarks/README.md, "Optimisations applied").
    """
    return uvloop.run(main)
