"""The lineage server's native steps (`threadline_native`, Rust, `native/src/render.rs` and
`graph.rs`), when the module is installed.

A RUN graph of ~1,600 runs, ~2,900 parent relations and ~1,100 I/O relations spent ~4 ms of
its ~30 ms of server time building a dict per node and relation and serialising them,
~0.7 ms ordering its relations, and a large graph from a job ~1.7 ms making its relations
from the levels' rows, ~1 ms its levels' edges, ~0.8 ms its parent relations and ~0.4 ms
ordering the nodes it admits (benchmarks/README.md). The native steps give the same bytes,
objects and order, and decline (`UnsupportedValueError`) any value they do not treat
exactly as the Python code does; the caller then runs that code, which stays the
definition (tests/server/test_native_render.py compares the two).
"""

import logging
import uuid
from collections.abc import Callable, Collection, Iterable, Sequence
from datetime import UTC, datetime
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol

from asyncpg.pgproto import pgproto

from server.lineage.model import (
    IORelation,
    LineageGraph,
    NodeKind,
    NodeRef,
    ParentRelation,
    RelationKind,
    order_key,
)

if TYPE_CHECKING:
    from threadline_native import Renderer

log = logging.getLogger("threadline.server")


class NoNativeModuleError(Exception):
    """Stands for `threadline_native.UnsupportedValueError` when the module is not installed."""


@cache
def _module() -> ModuleType | None:
    try:
        # Imported here: optional, the Python code works without it.
        import threadline_native
    except ImportError:
        log.warning("threadline_native is not installed: lineage graphs are built in Python")
        return None
    return threadline_native


def declines() -> type[Exception]:
    """The exception by which a native step declines a graph."""
    module = _module()
    if module is None:
        return NoNativeModuleError
    found: type[Exception] = module.UnsupportedValueError
    return found


def renderer(
    status_names: dict[int, str], output_type_names: Callable[[int | None], list[str]]
) -> "Renderer | None":
    """The native body writer, or None without the module (bodies then render in Python)."""
    module = _module()
    if module is None:
        return None
    config = {
        "status_names": status_names,
        "output_type_names": output_type_names,
        "UUID": uuid.UUID,
        "utc": UTC,
    }
    try:
        made: Renderer = module.Renderer(config)
    except Exception:  # a module built from other sources than these: run without it
        log.exception("threadline_native does not fit this server: bodies render in Python")
        return None
    return made


RelationOrder = Callable[[list[Any], Collection[Any]], list[Any]]
AddRelations = Callable[[list[Any], dict[Any, None], dict[Any, Any]], None]
FreshRefs = Callable[[Iterable[Any], dict[Any, None]], list[Any]]
ParentsOf = Callable[[LineageGraph, Collection[NodeRef]], list[ParentRelation]]
GroupRows = Callable[[Sequence[Any]], list[Any]]
FillHashes = Callable[[Sequence[Any], tuple[int, ...]], None]


class FillIOLevel(Protocol):
    def __call__(
        self,
        rows: Sequence[Any],
        level: Any,
        *,
        from_datasets: bool,
        finer: bool,
        process: NodeKind,
    ) -> None: ...


def _function(name: str) -> Callable[..., Any] | None:
    """The module's function `name`; None without the module (or in a build without it)."""
    module = _module()
    found: Callable[..., Any] | None = getattr(module, name, None) if module else None
    return found


def relation_order() -> RelationOrder | None:
    """`order_relations(relations, unloaded)`: the relations with neither end in `unloaded`,
    sorted as assemble.py sorts them; None without the module."""
    order = _function("order_relations")
    if order is None:
        return None

    def ordered(relations: list[Any], unloaded: Collection[Any]) -> list[Any]:
        found: list[Any] = order(relations, unloaded, uuid.UUID)
        return found

    return ordered


def time_decoder() -> Callable[[bytes], datetime] | None:
    """asyncpg's decoder of a binary timestamptz into a UTC datetime (`native/src/times.rs`);
    None without the module."""
    module = _module()
    if module is None:
        return None
    decode: Callable[[bytes], datetime] = module.TimeDecoder(UTC)
    return decode


def uuid_hashes() -> FillHashes | None:
    """`fill(rows, columns)`: the hash of asyncpg's UUIDs at `columns` of the rows computed
    natively and cached in each UUID as its own first `hash()` would (`native/src/uuids.rs`);
    None without the module, or if asyncpg's UUID is not laid out as the module expects."""
    module = _module()
    if module is None:
        return None
    kind = pgproto.UUID
    probes = [kind(value.bytes) for value in _PROBES]
    try:
        hashes = module.UuidHashes(kind, probes)
    except module.UnsupportedValueError:
        log.warning("asyncpg's UUID is not laid out as threadline_native expects: hashed in Python")
        return None
    fill: FillHashes = hashes.fill_rows
    return fill


# UUIDs whose hashes differ in each of the integer's 61-bit parts, and the extremes.
_PROBES = (
    uuid.UUID(int=0),
    uuid.UUID(int=(1 << 128) - 1),
    uuid.UUID("019b8b87-d8e3-7ce5-b64c-b211635ae23f"),
    uuid.UUID(int=(1 << 61) - 1),
)


def relation_adder() -> AddRelations | None:
    """`add(edges, nodes, relations)`: `Level.add_relations`'s loop over a level's edges;
    None without the module."""
    add = _function("add_relations")
    if add is None:
        return None

    def adder(edges: list[Any], nodes: dict[Any, None], relations: dict[Any, Any]) -> None:
        add(edges, nodes, relations, IORelation, RelationKind.INPUT)

    return adder


def io_level_filler() -> FillIOLevel | None:
    """`fill(rows, level, from_datasets=, finer=, process=)`: `levels.io_level`'s loop over a
    level's rows into a fresh `level`; None without the module."""
    fill_rows = _function("fill_io_level")
    if fill_rows is None:
        return None
    made = (RelationKind.INPUT, RelationKind.OUTPUT)

    def fill(
        rows: Sequence[Any], level: Any, *, from_datasets: bool, finer: bool, process: NodeKind
    ) -> None:
        parts = (level.edges, level.reached, level.members, level.schemas)
        refs = (NodeRef, NodeKind.DATASET, process, *made)
        fill_rows(rows, parts, from_datasets, finer, refs)

    return fill


def io_row_grouper(merged: Callable[[list[Any]], Any]) -> GroupRows | None:
    """`group(rows)`: `grouping.group_io_rows`'s grouping of a level's rows, `merged(rows)`
    making a group of several; None without the module."""
    group_rows = _function("group_io_rows")
    if group_rows is None:
        return None

    def group(rows: Sequence[Any]) -> list[Any]:
        found: list[Any] = group_rows(rows, merged)
        return found

    return group


def fresh_refs() -> FreshRefs | None:
    """`fresh(refs, nodes)`: `Traversal.admit`'s new nodes, the refs not in `nodes` once
    each in `order_key` order; None without the module."""
    sort_fresh = _function("fresh_refs")
    if sort_fresh is None:
        return None

    def fresh(refs: Iterable[Any], nodes: dict[Any, None]) -> list[Any]:
        found: list[Any] = sort_fresh(refs, nodes, uuid.UUID, order_key)
        return found

    return fresh


def parents_maker() -> ParentsOf | None:
    """`parents(graph, keep)`: `assemble._parents`'s relations; None without the module."""
    make = _function("parent_relations")
    if make is None:
        return None

    def parents(graph: LineageGraph, keep: Collection[NodeRef]) -> list[ParentRelation]:
        found: list[ParentRelation] = make(
            (graph.jobs, graph.operations, graph.runs), keep, ParentRelation
        )
        return found

    return parents
