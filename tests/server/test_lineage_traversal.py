"""The traversal state without a database: node cap, visited sets, twins, schemas."""

from datetime import UTC, datetime, timedelta
from uuid import UUID

import pytest

from server.lineage.model import IORelation, NodeKind, NodeRef, RelationKind, SymlinkRelation
from server.lineage.schemas import LineageQuery
from server.lineage.traversal import DOWN, UP, Traversal
from server.settings import ServerOptions

pytestmark = pytest.mark.unit
T = datetime(2024, 5, 1, tzinfo=UTC)


def dataset(i: int) -> NodeRef:
    return NodeRef(NodeKind.DATASET, i)


def run(i: int) -> NodeRef:
    return NodeRef(NodeKind.RUN, UUID(int=i))


def relation(source: NodeRef, target: NodeRef) -> IORelation:
    return IORelation(RelationKind.INPUT, source, target, None, None, None, None, T, T)


def test_admit_is_ordered_and_capped() -> None:
    trav = Traversal(max_nodes=3)
    assert trav.admit([dataset(10), dataset(9), run(1)]) == [dataset(9), dataset(10), run(1)]
    assert not trav.truncated
    assert trav.admit([dataset(9), dataset(11), dataset(12)]) == []
    assert trav.truncated
    assert len(trav.nodes) == 3


def test_relations_to_cut_nodes_are_dropped() -> None:
    trav = Traversal(max_nodes=2)
    trav.admit([dataset(1), run(1), run(2)])
    trav.add_relation(relation(dataset(1), run(1)))
    trav.add_relation(relation(dataset(1), run(2)))
    assert list(trav.relations) == [(RelationKind.INPUT, dataset(1), run(1))]


def test_each_node_expands_once_per_direction() -> None:
    trav = Traversal(max_nodes=10)
    trav.admit([dataset(1), dataset(2)])
    assert trav.claim(DOWN, [dataset(1)]) == {dataset(1)}
    assert trav.claim(DOWN, [dataset(1), dataset(2)]) == {dataset(2)}
    assert trav.claim(UP, [dataset(1)]) == {dataset(1)}  # the other search is independent
    assert trav.claim(DOWN, [dataset(3)]) == set()  # not in the graph


def test_symlinked_twins_expand_together() -> None:
    trav = Traversal(max_nodes=10)
    trav.admit([dataset(1), dataset(2)])
    trav.add_symlink(SymlinkRelation(1, 2, "METASTORE"))
    assert trav.claim(DOWN, [dataset(1)]) == {dataset(1), dataset(2)}


@pytest.mark.parametrize("extra_twins", [0, 30])  # fewer datasets with twins than refs, more
def test_twins_are_found_from_either_side(extra_twins: int) -> None:
    trav = Traversal(max_nodes=100)
    trav.admit([dataset(1), dataset(2), dataset(3), run(1)])
    trav.add_symlink(SymlinkRelation(1, 2, "METASTORE"))
    trav.twins.update({100 + i: {200 + i} for i in range(extra_twins)})  # outside `refs`
    refs = [dataset(1), dataset(3), run(1), dataset(3)]
    assert trav.with_twins(refs) == {dataset(1), dataset(2), dataset(3), run(1)}
    alone = {dataset(3), run(1)}
    assert trav.with_twins(alone) is alone  # nothing added: the caller's own set, unchanged
    assert alone == {dataset(3), run(1)}


def test_latest_schema_falls_back_to_the_twin() -> None:
    trav = Traversal(max_nodes=10)
    trav.admit([dataset(1), dataset(2)])
    trav.note_schemas([(1, T, 5)])
    trav.note_schemas([(1, T - timedelta(days=1), 4)])  # older: ignored
    trav.note_schemas([(1, T + timedelta(days=1), None)])  # no schema: ignored
    trav.add_symlink(SymlinkRelation(2, 1, "WAREHOUSE"))
    assert (trav.latest_schema(1), trav.latest_schema(2), trav.latest_schema(3)) == (5, 5, None)


def test_of_schemas_seen_at_the_same_time_the_last_noted_is_kept() -> None:
    trav = Traversal(max_nodes=10)
    trav.note_schemas([(1, T, 5), (2, T, 8), (1, T, 6), (1, T - timedelta(seconds=1), 7)])
    assert (trav.latest_schema(1), trav.latest_schema(2)) == (6, 8)


@pytest.mark.parametrize(
    ("cap", "max_nodes", "expected"), [(2000, None, 2000), (2000, 10, 10), (5, 10, 5)]
)
def test_node_cap_is_the_smaller_of_request_and_server(
    cap: int, max_nodes: int | None, expected: int
) -> None:
    query = LineageQuery(start_node_type=NodeKind.DATASET, start_node_id=[1], max_nodes=max_nodes)
    options = ServerOptions(max_lineage_nodes=cap, max_lineage_depth=50)
    assert query.to_request(options).max_nodes == expected
