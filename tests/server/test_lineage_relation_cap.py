"""The node cap bounds the body too: relations beyond their own cap are cut and flagged."""

from datetime import UTC, datetime

import pytest

from server.lineage.model import IORelation, LineageGraph, NodeKind, NodeRef, RelationKind
from server.lineage.service import cap_relations

pytestmark = pytest.mark.unit

AT = datetime(2026, 11, 1, tzinfo=UTC)


def relation(i: int) -> IORelation:
    return IORelation(
        kind=RelationKind.INPUT,
        source=NodeRef(NodeKind.DATASET, i),
        target=NodeRef(NodeKind.JOB, 1),
        num_rows=None,
        num_bytes=None,
        num_files=None,
        output_types=None,
        first_seen_at=AT,
        last_seen_at=AT,
    )


def test_relations_over_the_cap_are_cut_and_flagged() -> None:
    graph = cap_relations(LineageGraph(relations=[relation(i) for i in range(25)]), limit=10)
    assert len(graph.relations) == 10
    assert graph.truncated


def test_graph_within_the_cap_is_untouched() -> None:
    graph = cap_relations(LineageGraph(relations=[relation(i) for i in range(5)]), limit=10)
    assert len(graph.relations) == 5
    assert not graph.truncated
