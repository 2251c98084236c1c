"""The server's cycle-collector settings: `shared.runtime.tune_gc` with a higher threshold."""

from shared.runtime import tune_gc

# Net allocations of tracked objects between young collections. A lineage graph under the
# production cap holds up to ~100,000 tracked objects when it is largest (rows, refs,
# relations): the largest graph of the 1M-event benchmark database reaches ~100,000. With the
# consumer's 100,000 a young collection then ran inside such a request, scanned every one of
# those live objects (~10 ms) and freed none; it fell on a fresh server's first large graphs
# (benchmarks/README.md, thirty-fifth set). Cyclic garbage still starts a collection once it
# reaches this many objects, so it stays bounded.
YOUNG_THRESHOLD = 500_000


def tune_server_gc() -> None:
    """The collector as the server runs it (also for benchmarks that build graphs in process)."""
    tune_gc(young=YOUNG_THRESHOLD)
