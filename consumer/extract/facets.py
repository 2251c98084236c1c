"""Defensive readers for facet dicts: a facet of the wrong type reads as absent.

Facets of spec 1-x and 2-x differ mostly in which optional fields exist, so
every reader returns None (or an empty container) for anything missing or
mistyped instead of raising: an unknown, custom or broken facet never fails
an event.
"""

from collections.abc import Mapping
from functools import lru_cache
from typing import Any
from uuid import UUID

from consumer.decode import DecodeError
from shared.uuids import v7_time_fits

Json = Mapping[str, Any]

_EMPTY: Json = {}

# PostgreSQL bigint/int ranges; values outside them (negative, 2^64) are dropped.
_BIGINT_MAX = 2**63 - 1
INT_MAX = 2**31 - 1
# Descriptive strings are bounded so one odd event cannot bloat a row.
MAX_TEXT = 10_000


def obj(value: Any, *path: str) -> Json:
    """The dict at `path` inside value, or an empty dict."""
    for key in path:
        if not isinstance(value, dict):
            return _EMPTY
        value = value.get(key)
    return value if isinstance(value, dict) else _EMPTY


def text(value: Any, key: str, limit: int = MAX_TEXT) -> str | None:
    """A non-empty string field, trimmed to `limit` characters, else None."""
    item = value.get(key) if isinstance(value, dict) else None
    if isinstance(item, str):
        return item[:limit] if item else None
    # A tuple, not `int | float`: isinstance with a union is measurably slower here.
    if isinstance(item, (int, float)) and not isinstance(item, bool):
        return str(item)
    return None


def count(value: Any, *keys: str) -> int | None:
    """The first non-negative integer statistic among `keys` that fits in a bigint."""
    if not isinstance(value, dict):
        return None
    for key in keys:
        item = value.get(key)
        if isinstance(item, bool):
            continue
        if isinstance(item, float) and item.is_integer():
            item = int(item)
        if isinstance(item, int) and 0 <= item <= _BIGINT_MAX:
            return item
    return None


def small_int(value: Any, key: str) -> int | None:
    """A non-negative integer (or digit string) that fits a PostgreSQL int column."""
    item = value.get(key) if isinstance(value, dict) else None
    if isinstance(item, str) and item.isascii() and item.isdigit() and len(item) < 11:
        item = int(item)
    if isinstance(item, int) and not isinstance(item, bool) and 0 <= item <= INT_MAX:
        return item
    return None


def uuid_at(value: Any, key: str) -> UUID | None:
    """A UUID-valued string field, else None (placeholders and hand-written ids included)."""
    raw = text(value, key, limit=100)
    return _uuid(raw) if raw else None


# Parent and root run ids repeat in every event of their children, and UUID() parses its
# string in Python; UUIDs are immutable, so one instance may serve every event.
@lru_cache(maxsize=4096)
def _uuid(raw: str) -> UUID | None:
    try:
        value = UUID(raw)
    except ValueError:
        return None
    return value if v7_time_fits(value) else None  # a v7 id dated after 9999 is no id


def items(value: Any, key: str) -> list[Json]:
    """The dict elements of a list field."""
    seq = value.get(key) if isinstance(value, dict) else None
    if not isinstance(seq, list):
        return []
    return [item for item in seq if isinstance(item, dict)]


def first_of_list(value: str | None) -> str | None:
    """The first entry of a comma-separated list (Spark joins several UI URLs with commas)."""
    if value is None:
        return None
    return value.split(",", 1)[0].strip() or None


# Names that key a unique index (dataset, job, location, column) must fit one btree
# entry (~2.7 kB). A longer one is rejected whole with `name_too_long`, never cut:
# a cut name would silently merge distinct datasets.
MAX_KEY_BYTES = 2000


def key_part(value: str, what: str) -> str:
    """`value` unchanged when it fits an index key, else the event is rejected."""
    if len(value) * 4 <= MAX_KEY_BYTES:  # UTF-8 needs at most 4 bytes a character
        return value
    size = len(value.encode("utf-8", "surrogatepass"))
    if size > MAX_KEY_BYTES:
        raise DecodeError(
            "name_too_long", f"{what} is {size} bytes (UTF-8); at most {MAX_KEY_BYTES}"
        )
    return value
