"""The API harness asks both systems the same question: its request for each start kind."""

import pytest

from benchmarks.api import SINCE, lineage_request

pytestmark = pytest.mark.unit


def test_threadline_names_the_start_kind_and_granularity() -> None:
    path, params = lineage_request("threadline", "0190-op", (3, "OPERATION", SINCE), "OPERATION")
    assert path == "/v1/lineage"
    assert params == {
        "start_node_id": "0190-op",
        "start_node_type": "OPERATION",
        "direction": "BOTH",
        "depth": 3,
        "granularity": "OPERATION",
        "since": SINCE,
    }


def test_data_rentgen_operation_lineage_has_no_granularity() -> None:
    # Its operation query model forbids extra fields: a granularity would be a 422.
    path, params = lineage_request("data-rentgen", "0190-op", (3, "OPERATION", SINCE), "OPERATION")
    assert path == "/v1/operations/lineage"
    assert "granularity" not in params
    assert params["depth"] == 3
    with pytest.raises(ValueError, match="OPERATION only"):
        lineage_request("data-rentgen", "0190-op", (3, "RUN", SINCE), "OPERATION")


def test_data_rentgen_dataset_lineage_keeps_its_granularity() -> None:
    path, params = lineage_request(
        "data-rentgen", 42, (3, "OPERATION", SINCE), "DATASET", direction="UPSTREAM"
    )
    assert path == "/v1/datasets/lineage"
    assert params["granularity"] == "OPERATION"
    assert params["direction"] == "UPSTREAM"
