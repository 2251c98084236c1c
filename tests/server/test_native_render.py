"""The native writer of a lineage body gives render.py's bytes, the native relation order
assemble.py's order, and the native level steps levels.py's relations and levels, exactly.

`render_json(graph, None)` renders the whole body in Python (the definition);
`render_json(graph)` writes the runs, operations, parent and I/O relations natively
(`native/src/render.rs`). Every graph here must come out byte for byte the same both ways,
including the values the native writer declines (it then leaves the body to Python, errors
included). The lineage API tests run the native path on every scenario graph as well.
"""

import random
import sys
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, TypeVar
from uuid import UUID

import orjson
import pytest
from asyncpg.pgproto import pgproto

from server.common.refs import LocationRef
from server.lineage import assemble, levels, native, render, traversal
from server.lineage.levels import Level
from server.lineage.model import (
    PROCESS_LEVELS,
    IORelation,
    JobNode,
    LineageGraph,
    NodeKind,
    NodeRef,
    OperationNode,
    ParentRelation,
    RelationKind,
    RunNode,
)
from server.lineage.traversal import Traversal
from shared.enums import Status

if TYPE_CHECKING:
    from threadline_native import Renderer

pytestmark = pytest.mark.unit
S = TypeVar("S")

TEXTS = [
    "scheduled__2026-01-05T00:00:00+00:00",
    "",
    'quote " and backslash \\ and slash /',
    "controls \x00\x01\x08\t\n\x0b\x0c\r\x1f\x7f end",
    "unicode é ß 中文 \u2028\u2029 \U0001f600",
]
TIMES = [
    datetime(2026, 1, 5, 0, 38, 23, 172000, tzinfo=UTC),
    datetime(2026, 1, 5, 0, 38, 23, tzinfo=UTC),  # no fraction: none written
    datetime(2026, 1, 5, 0, 38, 23, 5, tzinfo=UTC),
    datetime(1, 1, 1, tzinfo=UTC),
    datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    datetime(2026, 11, 26, 12, 0, tzinfo=UTC).replace(tzinfo=None),  # naive: no zone written
]
AWARE_TIMES = [t for t in TIMES if t.tzinfo is not None]
INTS = [0, 1, -1, 42, 2**31, 2**63 - 1, -(2**63), 2**64 - 1]


def built(step: S | None) -> S:
    """The native step; a failure (not a skip) where the module is missing: these tests are
    about it."""
    if step is None:
        pytest.fail("threadline_native is not built (scripts/install.sh builds it)", pytrace=False)
    return step


def built_renderer() -> "Renderer":
    return built(render.NATIVE)


# (items per native call, bytes per piece) for render_chunks: a piece per item, a few items
# per piece, the server's own sizes.
PIECES = [(1, 1), (3, 200), (None, None)]


def both(graph: LineageGraph, *, declined: bool = False) -> bytes:
    """The body both ways, and in pieces; they must be equal. Unless the graph holds a value
    the native writer declines, its sections must be written natively (no fallback)."""
    python = render.render_json(graph, None)
    assert render.render_json(graph, built_renderer()) == python
    for step, size in PIECES:
        assert b"".join(render.render_chunks(graph, built_renderer(), step, size)) == python
    if declined:
        with pytest.raises(render.NATIVE_DECLINES):
            render.native_body(graph, built_renderer())
    else:
        assert render.native_body(graph, built_renderer()) == python
    return python


def asyncpg_uuid(value: UUID) -> UUID:
    """The UUID subclass asyncpg decodes into, which orjson does not know."""
    made: UUID = pgproto.UUID(value.bytes)
    return made


def random_graph(rng: random.Random) -> LineageGraph:
    def maybe(values: Sequence[Any]) -> Any:
        return rng.choice([None, *values])

    def an_id() -> UUID:
        value = UUID(int=rng.getrandbits(128))
        return asyncpg_uuid(value) if rng.random() < 0.5 else value

    def ref() -> NodeRef:
        kind = rng.choice(list(NodeKind))
        ident = an_id() if kind in (NodeKind.RUN, NodeKind.OPERATION) else rng.choice(INTS)
        return NodeRef(kind, ident)

    runs = [
        RunNode(
            an_id(),
            rng.choice(INTS),
            maybe([an_id()]),
            rng.choice(list(Status)).value,
            rng.choice(TIMES),
            maybe(TIMES),
            maybe(TIMES),
            maybe(TEXTS),
            maybe(INTS),
        )
        for _ in range(rng.randrange(20))
    ]
    operations = [
        OperationNode(
            an_id(),
            an_id(),
            maybe(TEXTS),
            maybe(["BATCH", "STREAMING"]),
            int(rng.choice(list(Status))),
            maybe(INTS),
            maybe(TEXTS),
            maybe(TEXTS),
            rng.choice(TIMES),
            maybe(TIMES),
            maybe(TIMES),
        )
        for _ in range(rng.randrange(10))
    ]
    relations = [
        IORelation(
            rng.choice(list(RelationKind)),
            ref(),
            ref(),
            maybe(INTS),
            maybe(INTS),
            maybe(INTS),
            maybe([0, 1, 8, 16, 24, 127]),
            rng.choice(TIMES),
            rng.choice(TIMES),
        )
        for _ in range(rng.randrange(20))
    ]
    parents = [ParentRelation(ref(), ref()) for _ in range(rng.randrange(20))]
    graph = LineageGraph(runs=runs, operations=operations, relations=relations, parents=parents)
    graph.truncated = rng.random() < 0.5
    return graph


@pytest.mark.parametrize("seed", range(200))
def test_random_graphs_render_the_same(seed: int) -> None:
    both(random_graph(random.Random(seed)))


def test_every_character_below_128_and_beyond_is_escaped_as_orjson_does() -> None:
    text = "".join(map(chr, range(128))) + "é\u2028\U0001f600"
    run = RunNode(uuid.uuid4(), 1, None, 2, TIMES[0], None, None, text, None)
    body = orjson.loads(both(LineageGraph(runs=[run])))
    assert body["nodes"]["runs"][0]["external_id"] == text


def test_ids_of_either_uuid_class_are_their_canonical_text() -> None:
    value = uuid.uuid4()
    runs = [
        RunNode(value, 1, asyncpg_uuid(value), 1, TIMES[0], None, None, None, None),
        RunNode(asyncpg_uuid(value), 1, value, 1, TIMES[0], None, None, None, None),
    ]
    parents = [ParentRelation(NodeRef(NodeKind.RUN, asyncpg_uuid(value)), NodeRef(NodeKind.JOB, 7))]
    body = orjson.loads(both(LineageGraph(runs=runs, parents=parents)))
    assert [r["id"] for r in body["nodes"]["runs"]] == [str(value)] * 2
    assert body["relations"]["parents"][0]["from"] == {"kind": "RUN", "id": str(value)}


def test_output_types_are_named_on_outputs_and_dataset_lineage_only() -> None:
    source, target = NodeRef(NodeKind.DATASET, 1), NodeRef(NodeKind.RUN, uuid.uuid4())
    relations = [
        IORelation(kind, source, target, 1, 2, 3, bits, TIMES[0], TIMES[1])
        for kind in RelationKind
        for bits in (None, 0, 8, 24)
    ]
    body = orjson.loads(both(LineageGraph(relations=relations)))["relations"]
    assert all("types" not in r for r in body["inputs"])
    assert [r["types"] for r in body["outputs"]] == [[], [], ["APPEND"], ["APPEND", "OVERWRITE"]]
    assert len(body["dataset_lineage"]) == 4


# Values the native writer declines (a time zone other than UTC, a float, an id that is
# neither a UUID nor text) or writes though the database never gives them (a bool): the body
# is the Python rendering's all the same.
ELSEWHERE = timezone(timedelta(hours=1))


def run_with(**fields: object) -> RunNode:
    values = {
        "id": uuid.uuid4(),
        "job_id": 1,
        "parent_run_id": None,
        "status": 1,
        "created_at": TIMES[0],
        "started_at": None,
        "ended_at": None,
        "external_id": None,
        "attempt": None,
    }
    return RunNode(**{**values, **fields})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "run",
    [
        run_with(created_at=datetime(2026, 1, 5, tzinfo=ELSEWHERE)),
        run_with(attempt=1.5),
        run_with(attempt=True),
        run_with(id="text id"),
        run_with(id=12),
    ],
    ids=["time zone", "float", "bool", "text id", "integer id"],
)
def test_unusual_values_render_the_python_way(run: RunNode) -> None:
    declined = not isinstance(run.attempt, bool) and not isinstance(run.id, str)
    both(LineageGraph(runs=[run]), declined=declined)


class OddBytesUUID(UUID):
    """A UUID subclass whose `bytes` are not its 16 bytes: its text is still `str()`'s."""

    @property
    def bytes(self) -> bytes:
        return b"odd"


def test_a_uuid_whose_bytes_it_cannot_read_is_left_to_python() -> None:
    ident = OddBytesUUID(int=7)
    both(LineageGraph(runs=[run_with(id=ident)]), declined=True)
    dataset = NodeRef(NodeKind.DATASET, 1)
    relations = [
        IORelation(RelationKind.OUTPUT, run, dataset, None, None, None, 8, TIMES[0], TIMES[1])
        for run in (NodeRef(NodeKind.RUN, i) for i in (UUID(int=9), ident, UUID(int=3)))
    ]
    with pytest.raises(assemble.NATIVE_DECLINES):
        built(assemble.NATIVE_ORDER)(relations, set())
    ordered = assemble.ordered_relations(relations, set())
    assert ordered == [relations[2], relations[1], relations[0]]


@pytest.mark.parametrize(
    "run",
    [
        run_with(job_id=2**64),
        run_with(external_id="\ud800"),
        run_with(status=99),
        run_with(attempt=object()),
    ],
    ids=["integer past 64 bits", "lone surrogate", "unknown status", "object"],
)
def test_values_python_refuses_raise_the_same_error(run: RunNode) -> None:
    graph = LineageGraph(runs=[run])
    with pytest.raises((KeyError, TypeError)) as python:  # orjson's errors are TypeErrors
        render.render_json(graph, None)
    with pytest.raises((KeyError, TypeError)) as spliced:
        render.render_json(graph, built_renderer())
    assert type(spliced.value) is type(python.value)
    assert str(spliced.value) == str(python.value)
    with pytest.raises(type(python.value)) as pieces:
        b"".join(render.render_chunks(graph, built_renderer(), 1, 1))
    assert str(pieces.value) == str(python.value)


def test_a_value_declined_midway_ends_the_pieces_the_python_way() -> None:
    """Pieces already given are native; the rest is the Python body's, from where they end."""
    runs = [run_with() for _ in range(5)]
    odd = IORelation(
        RelationKind.INPUT,
        NodeRef(NodeKind.DATASET, 1),
        NodeRef(NodeKind.RUN, runs[0].id),
        1,
        None,
        None,
        None,
        datetime(2026, 1, 5, tzinfo=ELSEWHERE),  # a time zone other than UTC: declined
        TIMES[1],
    )
    graph = LineageGraph(runs=runs, relations=[odd])
    pieces = list(render.render_chunks(graph, built_renderer(), 1, 1))
    python = render.render_json(graph, None)
    assert len(pieces) > 5  # the runs were given natively, one by one, before the relation
    assert b"".join(pieces) == python


def test_only_large_bodies_are_sent_in_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    small = LineageGraph(runs=[run_with() for _ in range(3)])
    assert not render.is_large(small)
    monkeypatch.setattr(render, "STREAM_MIN_ITEMS", 3)
    assert render.is_large(small)
    monkeypatch.setattr(render, "NATIVE", None)  # pieces come from the native writer only
    assert not render.is_large(small)
    assert list(render.render_chunks(small, None)) == [render.render_json(small, None)]


def test_items_of_an_unknown_list_are_refused() -> None:
    with pytest.raises(ValueError, match="not a list section"):
        built_renderer().items("symlinks", [], 0, 1, first=True)


def bigint(ref: NodeRef) -> NodeRef:
    """The ref with an integer id a bigint column holds (the database's ids)."""
    return ref if not isinstance(ref.id, int) else NodeRef(ref.kind, ref.id % 2**63)


def relations_and_keep(rng: random.Random) -> tuple[list[IORelation], dict[NodeRef, None]]:
    graph = random_graph(rng)
    graph.relations = [
        r._replace(source=bigint(r.source), target=bigint(r.target)) for r in graph.relations
    ]
    nodes = {end: None for r in graph.relations for end in (r.source, r.target)}
    # Relations between the same nodes, both ways and of every kind: ties broken by each part.
    relations = [
        *graph.relations,
        *(r._replace(source=r.target, target=r.source) for r in graph.relations),
    ]
    relations += [r._replace(kind=kind) for r in graph.relations for kind in RelationKind]
    keep = {node: None for node in nodes if rng.random() < 0.8}
    return relations, keep


@pytest.mark.parametrize("seed", range(100))
def test_relations_are_ordered_as_python_orders_them(seed: int) -> None:
    order = built(assemble.NATIVE_ORDER)
    relations, keep = relations_and_keep(random.Random(seed))
    ends = {end for r in relations for end in (r.source, r.target)}
    for unloaded in (ends - keep.keys(), set()):
        python = assemble.ordered_relations(relations, unloaded, None)
        assert order(relations, unloaded) == python
        assert assemble.ordered_relations(relations, unloaded) == python


@pytest.mark.parametrize("ident", [2**63, "text"], ids=["integer past 64 bits", "text id"])
def test_relation_ids_it_declines_are_ordered_by_python(ident: object) -> None:
    order = built(assemble.NATIVE_ORDER)
    node = NodeRef(NodeKind.JOB, ident)  # type: ignore[arg-type]
    other = NodeRef(NodeKind.DATASET, 1)
    relations = [
        IORelation(RelationKind.OUTPUT, node, other, None, None, None, 8, TIMES[0], TIMES[0]),
        IORelation(RelationKind.INPUT, other, node, None, None, None, None, TIMES[0], TIMES[0]),
    ]
    with pytest.raises(assemble.NATIVE_DECLINES):
        order(relations, set())
    assert assemble.ordered_relations(relations, set()) == [relations[1], relations[0]]


@pytest.mark.parametrize("seed", range(100))
def test_level_relations_are_made_as_python_makes_them(seed: int) -> None:
    built(levels.NATIVE_ADD)
    rng = random.Random(seed)
    relations, keep = relations_and_keep(rng)
    level = Level()
    for r in relations:  # a level's rows: direction, two ids, then the relation's fields
        row = ("down", 1, 2, r.num_rows, r.num_bytes, r.num_files, rng.choice([None, 8, 24]))
        fields = (*row, r.first_seen_at, r.last_seen_at)  # a tuple reads as the Record would
        level.edges.append((r.kind, r.source, r.target, fields))  # type: ignore[arg-type]
    level.edges += level.edges[: len(level.edges) // 3]  # keys seen twice: the first is kept
    first, again = Traversal(10**6), Traversal(10**6)
    for trav in (first, again):
        trav.nodes.update(keep)
    level.add_relations(first, None)
    level.add_relations(again)
    assert list(again.relations.items()) == list(first.relations.items())
    assert all(type(r) is IORelation for r in again.relations.values())


def io_rows(rng: random.Random, process: NodeKind) -> list[Any]:
    """Rows as `queries.io_level_statement` gives them: direction, dataset id, process id,
    the relation's fields, last_seen_at, schema id (a tuple reads as the Record would)."""
    uuid_ids = process in (NodeKind.RUN, NodeKind.OPERATION)
    rows = []
    for _ in range(rng.randrange(0, 60)):
        process_id: Any = uuid.UUID(int=rng.randrange(8)) if uuid_ids else rng.randrange(8)
        direction = rng.choice(["down", "up"])
        counters = (rng.choice([None, 5]), None, 1)
        seen = rng.choice(AWARE_TIMES)  # timestamptz: each dataset's latest schema compares them
        schema_id = rng.choice([None, None, rng.randrange(4)])
        rows.append((direction, rng.randrange(6), process_id, *counters, 8, seen, seen, schema_id))
    return rows


def level_parts(level: Level) -> tuple[Any, ...]:
    """Everything `io_level` fills, dict key order and each edge's row object included."""
    edges = [(*edge[:3], id(edge[3])) for edge in level.edges]
    reached = [(d, refs) for d, refs in level.reached.items()]
    members = [(d, refs) for d, refs in level.members.items()]
    return edges, reached, members, level.schemas, type(level.reached), type(level.members)


@pytest.mark.parametrize("seed", range(60))
def test_io_levels_are_made_as_python_makes_them(seed: int) -> None:
    built(levels.NATIVE_FILL)
    rng = random.Random(seed)
    kind, process = rng.choice(
        [(k, p) for p in PROCESS_LEVELS for k in (NodeKind.DATASET, *PROCESS_LEVELS)]
    )
    rows = io_rows(rng, process)
    python, made = levels.io_level(rows, kind, process, None), levels.io_level(rows, kind, process)
    assert level_parts(made) == level_parts(python)
    refs = [ref for _, refs in made.reached.items() for ref in refs]
    refs += [end for edge in made.edges for end in edge[1:3]]
    assert all(type(ref) is NodeRef for ref in refs)


def test_an_unknown_direction_is_left_to_python() -> None:
    fill = built(levels.NATIVE_FILL)
    rows: list[Any] = [("down", 1, 2, None, None, None, None, TIMES[0], TIMES[0], 3)] * 2
    for direction in ("sideways", None):
        odd = [*rows, (direction, 1, 2, None, None, None, None, TIMES[0], TIMES[0], None)]
        with pytest.raises(levels.NATIVE_DECLINES):
            fill(odd, Level(), from_datasets=True, finer=False, process=NodeKind.JOB)
        with pytest.raises(KeyError, match=str(direction)):  # Python's, from a fresh level
            levels.io_level(odd, NodeKind.DATASET, NodeKind.JOB)


def every_schema(rows: list[Any]) -> list[tuple[int, Any, int]]:
    """The (dataset id, seen, schema id) of every row that names a schema, in row order."""
    return [(row[1], row[8], row[9]) for row in rows if row[9] is not None]


@pytest.mark.parametrize("seed", range(30))
def test_a_level_keeps_each_datasets_latest_schema(seed: int) -> None:
    # Each dataset's latest schema only, later rows winning ties: what the traversal keeps
    # of one triple per row, from a graph that already has a schema for some datasets.
    rng = random.Random(seed)
    rows = io_rows(rng, NodeKind.RUN)
    known = {d: (rng.choice(AWARE_TIMES), 100 + d) for d in range(0, 6, 2)}
    for fill in (levels.NATIVE_FILL, None):
        made = levels.io_level(rows, NodeKind.DATASET, NodeKind.RUN, fill)
        assert len({d for d, _, _ in made.schemas}) == len(made.schemas)
        reference, kept = Traversal(10), Traversal(10)
        reference.schemas, kept.schemas = dict(known), dict(known)
        reference.note_schemas(every_schema(rows))
        kept.note_schemas(made.schemas)
        assert kept.schemas == reference.schemas


def test_times_that_do_not_compare_are_left_to_python() -> None:
    fill = built(levels.NATIVE_FILL)
    naive = TIMES[0].replace(tzinfo=None)
    rows: list[Any] = [("down", 1, 2, None, None, None, None, t, t, 3) for t in (TIMES[0], naive)]
    with pytest.raises(levels.NATIVE_DECLINES):
        fill(rows, Level(), from_datasets=True, finer=False, process=NodeKind.JOB)
    with pytest.raises(TypeError, match="offset-naive and offset-aware"):  # Python's
        levels.io_level(rows, NodeKind.DATASET, NodeKind.JOB)


def random_refs(rng: random.Random) -> list[NodeRef]:
    """Refs of every kind, some repeated, UUIDs of both classes (equal values included)."""
    refs = []
    for _ in range(rng.randrange(0, 80)):
        kind = rng.choice(list(NodeKind))
        if kind in (NodeKind.RUN, NodeKind.OPERATION):
            value = UUID(int=rng.choice([rng.randrange(2**128), rng.randrange(20)]))
            refs.append(NodeRef(kind, rng.choice([value, pgproto.UUID(value.bytes)])))
        else:
            ident = rng.choice([rng.randrange(-(2**63), 2**63), rng.randrange(9)])
            refs.append(NodeRef(kind, ident))
    return refs + rng.sample(refs, len(refs) // 4)


def admit_both_ways(refs: list[NodeRef], in_graph: list[NodeRef], max_nodes: int) -> None:
    """Admitting `refs` natively and in Python adds the same ref objects in the same order."""
    python, made = Traversal(max_nodes), Traversal(max_nodes)
    for trav in (python, made):
        trav.nodes.update(dict.fromkeys(in_graph))
    admitted = python.admit(iter(refs), None)
    assert list(map(id, made.admit(iter(refs)))) == list(map(id, admitted))
    assert list(map(id, made.nodes)) == list(map(id, python.nodes))
    assert made.truncated == python.truncated


@pytest.mark.parametrize("seed", range(60))
def test_admitted_nodes_are_ordered_as_python_orders_them(seed: int) -> None:
    built(traversal.NATIVE_FRESH)
    rng = random.Random(seed)
    refs = random_refs(rng)
    admit_both_ways(refs, refs[::3], rng.choice([rng.randrange(1, 60), 10**6]))


@pytest.mark.parametrize(
    "odd",
    [NodeRef(NodeKind.JOB, 2**63), NodeRef(NodeKind.DATASET, "text"), NodeRef(NodeKind.RUN, 5)],  # type: ignore[arg-type]
    ids=["integer past 64 bits", "text id", "an integer among a kind's UUIDs"],
)
def test_admitted_ids_it_does_not_order_are_ordered_by_python(odd: NodeRef) -> None:
    refs = [NodeRef(NodeKind.RUN, UUID(int=i)) for i in (9, 5, 2)] + [NodeRef(NodeKind.JOB, 3)]
    admit_both_ways([*refs, odd, *refs], [], 10**6)


def graph_with_parents(rng: random.Random) -> tuple[LineageGraph, list[NodeRef]]:
    """Jobs, runs and operations naming each other as parents, and the refs kept: every
    node of the graph, and some of the parents they name (the others were cut or unloaded)."""
    job_ids = rng.sample(range(-5, 40), 12)
    run_ids = [UUID(int=rng.getrandbits(128)) for _ in range(12)]
    location = LocationRef(1, "hdfs", "nn")
    jobs = [JobNode(i, "job", "SPARK", location, rng.choice([None, *job_ids])) for i in job_ids[:8]]
    runs = [
        RunNode(
            i,
            rng.choice(job_ids),
            rng.choice([None, *run_ids]),
            1,
            TIMES[0],
            None,
            None,
            None,
            None,
        )
        for i in run_ids[:8]
    ]
    operations = [
        OperationNode(
            UUID(int=i), rng.choice(run_ids), None, None, 1, None, None, None, TIMES[0], None, None
        )
        for i in range(rng.randrange(6))
    ]
    graph = LineageGraph(jobs=jobs, runs=runs, operations=operations)
    keep = [NodeRef(NodeKind.JOB, j.id) for j in jobs] + [NodeRef(NodeKind.RUN, r.id) for r in runs]
    keep += [NodeRef(NodeKind.OPERATION, op.id) for op in operations]
    keep += [NodeRef(NodeKind.JOB, i) for i in job_ids[8:] if rng.random() < 0.5]
    keep += [NodeRef(NodeKind.RUN, asyncpg_uuid(i)) for i in run_ids[8:] if rng.random() < 0.5]
    keep += [NodeRef(NodeKind.DATASET, i) for i in range(3)]
    rng.shuffle(keep)
    return graph, keep


@pytest.mark.parametrize("seed", range(60))
def test_parent_relations_are_made_as_python_makes_them(seed: int) -> None:
    built(assemble.NATIVE_PARENTS)
    graph, keep = graph_with_parents(random.Random(seed))
    python = assemble._parents(graph, keep, None)
    made = assemble._parents(graph, keep)
    assert [tuple(map(id, p)) for p in made] == [tuple(map(id, p)) for p in python]
    assert all(type(p) is ParentRelation for p in made)


def test_a_node_missing_from_keep_raises_pythons_key_error() -> None:
    built(assemble.NATIVE_PARENTS)
    graph, keep = graph_with_parents(random.Random(1))
    missing = graph.runs[0].id
    keep = [ref for ref in keep if ref.id != missing]
    with pytest.raises(KeyError) as python:
        assemble._parents(graph, keep, None)
    with pytest.raises(KeyError) as made:
        assemble._parents(graph, keep)
    assert made.value.args == python.value.args == (missing,)


def test_without_the_module_every_step_is_python(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server installed without `threadline_native` runs the Python code (a warning)."""
    try:
        with monkeypatch.context() as patched:
            patched.setitem(sys.modules, "threadline_native", None)  # `import` raises
            native._module.cache_clear()
            assert native.renderer(render.STATUS_NAMES, render.output_type_names) is None
            assert native.relation_order() is None
            assert native.relation_adder() is None
            assert native.io_level_filler() is None
            assert native.fresh_refs() is None
            assert native.parents_maker() is None
            assert native.uuid_hashes() is None
            assert native.declines() is native.NoNativeModuleError
    finally:
        native._module.cache_clear()
    assert native.relation_order() is not None  # the module again, once it can be imported
