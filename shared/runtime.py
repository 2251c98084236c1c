"""Process-wide settings of the Python runtime, for the consumer and the server processes."""

import gc
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


def run(main: Coroutine[Any, Any, T]) -> T:
    """Run a process's main coroutine on uvloop's event loop.

    Both processes are I/O loops around asyncpg and a Kafka or HTTP socket: uvloop's
    libuv loop (written in C) cut the server's per-request CPU and the consumer's
    client overhead (benchmarks/README.md, "Optimisations applied").
    """
    return uvloop.run(main)
