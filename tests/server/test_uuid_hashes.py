"""asyncpg's UUIDs given their hash natively (`native/src/uuids.rs`) hash exactly as Python
hashes them, and the module refuses any UUID class it does not know the layout of. Once a
class is checked, the body writer and the orderings read its UUIDs in place, with the
values Python reads."""

import random
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from asyncpg.pgproto import pgproto

from server.lineage import assemble, native, node_queries, queries, render, sql, traversal
from server.lineage.model import (
    IORelation,
    LineageGraph,
    NodeKind,
    NodeRef,
    ParentRelation,
    RelationKind,
    RunNode,
    order_key,
)
from server.lineage.native import FillHashes
from server.lineage.traversal import DOWN, UP

pytestmark = pytest.mark.unit

EDGES = [0, 1, (1 << 61) - 2, (1 << 61) - 1, 1 << 61, (1 << 127) - 1, 1 << 127, (1 << 128) - 1]


def _fill() -> FillHashes:
    fill = native.uuid_hashes()
    # Installed with the pinned asyncpg, the module fits its UUID: the server uses it.
    assert fill is not None
    assert sql.FILL_UUID_HASHES is not None
    return fill


def _values() -> list[uuid.UUID]:
    rng = random.Random(7)
    return [uuid.UUID(int=i) for i in EDGES] + [
        uuid.UUID(int=rng.getrandbits(128)) for _ in range(2000)
    ]


def test_filled_hashes_are_the_hashes_python_computes() -> None:
    values = _values()
    rows = [(pgproto.UUID(v.bytes), v.int, pgproto.UUID(v.bytes)) for v in values]
    _fill()(rows, (0, 2))
    for value, (first, _, second) in zip(values, rows, strict=True):
        expected = hash(pgproto.UUID(value.bytes))  # asyncpg's own, on a fresh object
        assert hash(first) == hash(second) == expected == hash(value)
        assert first == value


def test_other_values_are_left_as_they_are() -> None:
    plain = uuid.UUID(int=12345)
    rows: list[tuple[Any, ...]] = [
        (plain,),
        (None,),
        (17,),
        ("019b8b87-d8e3-7ce5-b64c-b211635ae23f",),
    ]
    _fill()(rows, (0,))
    assert [row[0] for row in rows] == [plain, None, 17, "019b8b87-d8e3-7ce5-b64c-b211635ae23f"]
    assert hash(plain) == hash(plain.int)


def test_a_uuid_hashed_before_keeps_its_hash() -> None:
    value = pgproto.UUID(uuid.UUID(int=(1 << 128) - 3).bytes)
    before = hash(value)
    _fill()([(value,)], (0,))
    assert hash(value) == before


def test_checked_uuids_are_written_and_ordered_as_python_reads_them() -> None:
    _fill()  # the layout is checked: the native steps now read asyncpg's UUIDs in place
    values = _values()[:200]
    ids = [pgproto.UUID(v.bytes) for v in values]
    seen = datetime(2026, 1, 5, tzinfo=UTC)
    runs = [RunNode(i, 1, ids[-1 - n], 1, seen, None, None, None, None) for n, i in enumerate(ids)]
    refs = [NodeRef(NodeKind.RUN, i) for i in ids]
    dataset = NodeRef(NodeKind.DATASET, 3)
    relations = [
        IORelation(RelationKind.OUTPUT, ref, dataset, 1, 2, 3, 1, seen, seen) for ref in refs
    ]
    parents = [ParentRelation(ref, NodeRef(NodeKind.JOB, 1)) for ref in refs]
    graph = LineageGraph(runs=runs, parents=parents, relations=relations)
    assert render.NATIVE is not None
    python = render.render_json(graph, None)
    assert render.native_body(graph, render.NATIVE) == python
    assert str(values[0]) in python.decode()
    ordered = assemble.NATIVE_ORDER
    assert ordered is not None
    assert ordered(relations, set()) == assemble.ordered_relations(relations, set(), None)
    fresh = traversal.NATIVE_FRESH
    assert fresh is not None
    python_order = sorted(set(refs), key=order_key)
    assert fresh(iter(refs), {}) == python_order


def test_classes_of_another_layout_are_refused() -> None:
    module = native._module()
    assert module is not None
    with pytest.raises(module.UnsupportedValueError):
        module.UuidHashes(uuid.UUID, [uuid.UUID(int=5)])
    hashed = pgproto.UUID(uuid.UUID(int=5).bytes)
    hash(hashed)  # its cache is no longer empty: not a probe the layout can be checked on
    with pytest.raises(module.UnsupportedValueError):
        module.UuidHashes(pgproto.UUID, [hashed])
    with pytest.raises(module.UnsupportedValueError):
        module.UuidHashes(pgproto.UUID, [])


def test_statements_name_their_uuid_columns() -> None:
    run_level = (queries.IOPart("output", DOWN, "run_id", "run_id"),)
    job_level = (queries.IOPart("input", UP, "job_id", "job_id"),)
    assert node_queries._RUNS.uuids == (0, 2)  # id, parent_run_id
    assert node_queries._OPERATIONS.uuids == (0, 1)  # id, run_id
    assert queries.io_level_statement(run_level).uuids == (2,)
    assert queries.io_level_statement(run_level, grouped=False).uuids == (2,)
    assert queries.io_level_statement(job_level).uuids == ()
    assert queries.PROCESS_COLUMN[NodeKind.RUN] in queries.UUID_PROCESS_COLUMNS
