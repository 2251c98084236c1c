"""The server's runtime settings: `shared.runtime.tune_gc` with a higher threshold, and the
C allocator told to keep the memory a request frees."""

import ctypes
import sys

from shared.runtime import tune_gc

# Net allocations of tracked objects between young collections. A lineage graph under the
# production cap holds up to ~100,000 tracked objects when it is largest (rows, refs,
# relations): the largest graph of the 1M-event benchmark database reaches ~100,000. With the
# consumer's 100,000 a young collection then ran inside such a request, scanned every one of
# those live objects (~10 ms) and freed none; it fell on a fresh server's first large graphs
# (benchmarks/README.md, thirty-fifth set). Cyclic garbage still starts a collection once it
# reaches this many objects, so it stays bounded.
YOUNG_THRESHOLD = 500_000

# glibc's mallopt parameters (malloc.h) and the values the server sets. A capped depth-5
# graph frees megabytes of large blocks (its body's pieces, its dicts' and lists' tables)
# when it is done; glibc gave them back to the kernel (munmap, or trimming the heap's top)
# and the next large graph faulted the same pages in again: ~500-1,500 page faults of
# ~3.6 us each on the benchmark VM, 2-3 ms of a 65 ms graph (benchmarks/README.md,
# fortieth set). Blocks up to 32 MiB (glibc's largest threshold) now come from the heap,
# and its top is trimmed only once 64 MiB lie free there.
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 64 << 20


def tune_server_gc() -> None:
    """The collector as the server runs it (also for benchmarks that build graphs in process)."""
    tune_gc(young=YOUNG_THRESHOLD)


def keep_freed_memory() -> bool:
    """Raise glibc's mmap and trim thresholds (above); False where the C library is not
    glibc, or refuses them: the allocator then works as before."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the process's own C library
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    # musl has a mallopt that does nothing and returns 0, as glibc does for a refused value.
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    )
