"""Keyset cursors: round trip, and every way a cursor can be wrong is a 422."""

import base64
from datetime import UTC, datetime
from uuid import UUID

import orjson
import pytest

from server.errors import InvalidInputError
from server.pagination import Keyset, make_page, resolve_limit
from server.settings import ServerOptions

pytestmark = pytest.mark.unit

RUNS = Keyset("runs", (datetime, UUID))
SCOPE = {"status": ["FAILED"]}


def _token(doc: object) -> str:
    return base64.urlsafe_b64encode(orjson.dumps(doc)).decode().rstrip("=")


def test_round_trip() -> None:
    key = (datetime(2024, 6, 3, 6, tzinfo=UTC), UUID(int=7))
    assert RUNS.decode(RUNS.encode(key, SCOPE), SCOPE) == key
    assert RUNS.decode(None, SCOPE) is None


@pytest.mark.parametrize(
    ("token", "words"),
    [
        ("!!!", "not a cursor"),
        (_token([1, 2]), "not a cursor"),
        (_token({"k": "jobs", "f": "", "v": []}), "another endpoint"),
        (_token({"k": "runs", "f": "0", "v": []}), "different filters"),
    ],
)
def test_foreign_cursors(token: str, words: str) -> None:
    with pytest.raises(InvalidInputError, match=words):
        RUNS.decode(token, SCOPE)


@pytest.mark.parametrize(
    "values",
    [
        [],
        ["2024-06-03T06:00:00+00:00"],
        ["2024-06-03T06:00:00", str(UUID(int=7))],  # naive time
        ["2024-06-03T06:00:00+00:00", "not-a-uuid"],
        [True, str(UUID(int=7))],
        ["2024-06-03T06:00:00+00:00", str(UUID(int=7)), 3],
    ],
)
def test_tampered_positions(values: list[object]) -> None:
    good = orjson.loads(
        base64.urlsafe_b64decode(RUNS.encode((datetime.now(UTC), UUID(int=1)), SCOPE) + "==")
    )
    with pytest.raises(InvalidInputError, match="malformed position"):
        RUNS.decode(_token({**good, "v": values}), SCOPE)


def test_ints_are_not_bools() -> None:
    by_id = Keyset("ids", (int,))
    fingerprint = orjson.loads(base64.urlsafe_b64decode(by_id.encode((1,), {}) + "=="))["f"]
    with pytest.raises(InvalidInputError):
        by_id.decode(_token({"k": "ids", "f": fingerprint, "v": [True]}), {})


def test_make_page_probes_one_extra_row() -> None:
    ids = Keyset("ids", (int,))
    full = make_page([1, 2, 3], 2, ids, {}, lambda r: (r,))
    assert full.items == [1, 2]
    assert ids.decode(full.next_cursor, {}) == (2,)
    assert make_page([1, 2], 2, ids, {}, lambda r: (r,)).next_cursor is None


def test_limits() -> None:
    options = ServerOptions(default_page_size=20, max_page_size=100)
    assert resolve_limit(None, options) == 20
    assert resolve_limit(100, options) == 100
    with pytest.raises(InvalidInputError, match="at most 100"):
        resolve_limit(101, options)
    with pytest.raises(ValueError, match="default_page_size"):
        ServerOptions(default_page_size=200, max_page_size=100)
