"""The benchmark's client split: it records the client's own collections only while a parse
runs, and counts the parses that a full collection interrupted."""

import gc

import pytest

from benchmarks.client_split import Collections, summary

pytestmark = pytest.mark.unit


def test_collections_are_recorded_only_while_active() -> None:
    collections = Collections()
    gc.callbacks.append(collections)
    try:
        gc.collect()
        assert collections.found == []
        collections.active = True
        gc.collect(0)
        gc.collect()
        collections.active = False
        gc.collect()
    finally:
        gc.callbacks.remove(collections)
    assert [generation for generation, _ in collections.found] == [0, 2]
    assert all(ms >= 0 for _, ms in collections.found)


def test_summary_counts_parses_with_a_full_collection() -> None:
    def request(parse_ms: float, collections: list[tuple[int, float]]) -> dict[str, object]:
        times = {"headers_ms": 10.0, "read_ms": 1.0, "parse_ms": parse_ms}
        return {"bytes": 1000, **times, "collections": collections}

    requests = [
        request(5.0, []),
        request(6.0, [(0, 0.1)]),
        request(20.0, [(0, 0.1), (2, 14.0)]),
        request(22.0, [(2, 16.0)]),
    ]
    found = summary(requests)
    assert found["requests"] == 4
    assert found["parses_with_a_full_collection"] == 2
    assert found["full_collection_ms_median"] == 15.0
    assert found["parse_max_ms"] == 22.0
    assert summary([request(5.0, [])])["full_collection_ms_median"] is None
