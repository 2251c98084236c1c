"""A large graph's runs loaded on a second connection while its expansion goes on.

The runs of a RUN graph are loaded after the search (`assemble._runs`), one statement of
per-key lookups: ~10 ms for the ~2,000 runs of a capped depth-5 graph over all history on the
1M-event benchmark database. Most of them are admitted by the first level, and the next
levels' statements take as long or longer. PostgreSQL runs one statement on one core, and
the server waits while it does: on a second connection the runs found so far are loaded
while the next level is fetched, on another core. On that database the 30 such graphs
from the benchmark's start datasets took 1,588.5 ms in process instead of 1,429.0, the
largest 58.4 ms instead of 69.6 (benchmarks/README.md, thirty-fifth set).

Only with a spare connection: one the pool has idle now (`server.deps`), never one a request
would wait for, so that a busy server runs each graph on one connection as before. The rows
are the same statement's for the same ids (`node_queries.rows_by_id`), and the graph does not
depend on the order they come in; the runs admitted later are loaded after the search, as
all of them were.
"""

import asyncio
from collections.abc import Callable, Collection
from contextlib import AbstractAsyncContextManager
from typing import Any
from uuid import UUID

from server.lineage import node_queries
from server.lineage.model import NodeKind
from server.lineage.sql import Connection, Record
from server.lineage.traversal import Traversal

# A connection the pool has idle, or None: the caller then runs without one.
Spare = Callable[[], AbstractAsyncContextManager[Connection | None]]
# Fewer runs found before a level saved nothing: from the benchmark's job start nodes ~440
# of a graph's ~1,980 runs are known before its second level, and prefetching them left the
# graphs as slow in process and ~2 ms slower at p50 through HTTP (a second statement for the
# rest, two backends sharing the cores); from its dataset start nodes 867-1,750 are.
MIN_PREFETCH_RUNS = 500


class RunPrefetch:
    """At most one load of the graph's runs found so far, on a spare connection."""

    def __init__(self, spare: Spare | None) -> None:
        self._spare = spare
        self._ids: frozenset[Any] = frozenset()
        self._task: asyncio.Task[dict[UUID, Record] | None] | None = None

    def start(self, trav: Traversal) -> None:
        """Begin loading the runs in `trav` now, if there are enough and nothing began yet."""
        if self._spare is None or self._task is not None or len(trav.nodes) < MIN_PREFETCH_RUNS:
            return
        ids: list[Any] = [ref.id for ref in trav.of_kind(NodeKind.RUN)]
        if len(ids) < MIN_PREFETCH_RUNS:
            return
        self._ids = frozenset(ids)
        self._task = asyncio.create_task(self._load(self._spare, ids))

    @staticmethod
    async def _load(spare: Spare, ids: list[Any]) -> dict[UUID, Record] | None:
        async with spare() as conn:
            if conn is None:
                return None
            return await node_queries.rows_by_id(conn, node_queries.list_runs, ids)

    async def runs(self, conn: Connection, ids: Collection[UUID]) -> dict[UUID, Record]:
        """The rows of `ids` (the graph's runs, a superset of those prefetched): the loaded
        ones, the others from `conn`."""
        task, self._task = self._task, None
        loaded = None if task is None else await task
        if loaded is None:
            return await node_queries.rows_by_id(conn, node_queries.list_runs, ids)
        rows = {i: loaded[i] for i in ids if i in loaded}
        rest = [i for i in ids if i not in self._ids]
        if rest:
            rows.update(await node_queries.rows_by_id(conn, node_queries.list_runs, rest))
        return rows

    async def close(self) -> None:
        """Stop a load the graph did not take (it failed before): its connection goes back."""
        task, self._task = self._task, None
        if task is None:
            return
        task.cancel()
        # Waits for the load to end without raising its outcome: the request's own error is
        # the one to report, and a cancellation of the request itself still reaches it.
        await asyncio.wait([task])
        if not task.cancelled():
            task.exception()  # retrieved: asyncio would log it as never retrieved
