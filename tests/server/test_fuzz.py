"""No request is a server error: random parameters on every catalogue endpoint."""

from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.server.conftest import World

pytestmark = pytest.mark.db

_VALUES = st.one_of(
    st.text(max_size=40),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.uuids().map(str),
    st.sampled_from(["FAILED", "AIRFLOW_TASK", "hive", "true", "", "null", "%", "eyJrIjoxfQ"]),
    st.datetimes().map(lambda d: d.isoformat()),
    st.datetimes(timezones=st.timezones()).map(lambda d: d.isoformat()),
)
_NAMES = {
    "datasets": ["search", "location_id", "location_type", "location_name", "format"],
    "jobs": ["search", "location_id", "type", "parent_job_id"],
    "runs": [
        "job_id",
        "job_type",
        "parent_run_id",
        "status",
        "started_by",
        "started_since",
        "ended_until",
        "created_since",
    ],
    "operations": ["run_id", "status", "created_since", "created_until"],
    "locations": ["search", "type"],
    "links": ["source_dataset_id", "target_dataset_id", "seen_since", "seen_until"],
}
_ANY_PARAMS = st.dictionaries(
    st.sampled_from(sorted({n for names in _NAMES.values() for n in names} | {"cursor", "limit"})),
    _VALUES,
    max_size=4,
)
_PATHS = st.one_of(
    st.sampled_from([f"/v1/{kind}" for kind in _NAMES]),
    st.builds(
        lambda kind, key: f"/v1/{kind}/{quote(key, safe='')}",
        st.sampled_from(["datasets", "jobs", "runs", "operations", "locations"]),
        _VALUES.filter(lambda v: v not in {"", ".", ".."}),
    ),
)


@settings(
    max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(path=_PATHS, params=_ANY_PARAMS)
async def test_no_request_is_a_server_error(
    api_client: httpx.AsyncClient, world: World, path: str, params: dict[str, str]
) -> None:
    response = await api_client.get(path, params=params)
    assert response.status_code in {200, 404, 422}, (path, params, response.text)
    if response.status_code != 200:
        assert response.headers["content-type"] == "application/problem+json"
