"""Opaque keyset cursors: base64url JSON of (kind, query fingerprint, last sort key).

A cursor holds only a position in a stable order such as (name rank, id) or
(created_at, id); the filters always come from the request itself. So a cursor is
validated rather than signed: a forged one can only move within results the caller may
list anyway, while a malformed one, one from another endpoint, or one replayed with
different filters (fingerprint mismatch) is a 422. Pages are fetched with LIMIT n+1 to
know whether another exists: no COUNT(*) anywhere.
"""

import base64
import binascii
import hashlib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar
from uuid import UUID

import orjson
from pydantic import Field

from server.common.schemas import QueryModel
from server.errors import InvalidInputError
from server.settings import ServerOptions

Key = int | float | str | datetime | UUID
KeyType = type[int] | type[float] | type[str] | type[datetime] | type[UUID]
T = TypeVar("T")
R = TypeVar("R")

_MAX_CURSOR_LEN = 2048
# Positions are compared with bigint and double columns: anything wider is not ours.
_BIGINT_MIN, _BIGINT_MAX = -(2**63), 2**63 - 1


class PageQuery(QueryModel):
    """Paging parameters every list endpoint takes; unknown parameters are rejected."""

    cursor: str | None = Field(
        default=None,
        max_length=_MAX_CURSOR_LEN,
        description="`next_cursor` of the previous page; omit for the first page.",
    )
    limit: int | None = Field(
        default=None, ge=1, description="Page size (server default and maximum apply)."
    )

    def scope(self) -> dict[str, Any]:
        """The filters a cursor is bound to: every parameter but the paging ones."""
        return self.model_dump(exclude={"cursor", "limit"}, exclude_none=True, mode="json")


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    items: list[T]
    next_cursor: str | None


def resolve_limit(limit: int | None, options: ServerOptions) -> int:
    if limit is None:
        return options.default_page_size
    if limit > options.max_page_size:
        raise InvalidInputError(f"limit: must be at most {options.max_page_size}")
    return limit


def _fingerprint(scope: Mapping[str, Any]) -> str:
    blob = orjson.dumps(scope, option=orjson.OPT_SORT_KEYS, default=str)
    return hashlib.sha256(blob).hexdigest()[:16]


def _to_json(value: Key) -> int | float | str:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, UUID):
        return str(value)
    return value


def _from_json(raw: object, kind: KeyType) -> Key:
    # bool is an int subclass in Python and JSON alike: never a valid key.
    if kind is int and isinstance(raw, int) and not isinstance(raw, bool):
        if not _BIGINT_MIN <= raw <= _BIGINT_MAX:
            raise ValueError("out of range")
        return raw
    if kind is float and isinstance(raw, int | float) and not isinstance(raw, bool):
        if not math.isfinite(raw) or abs(raw) > _BIGINT_MAX:
            raise ValueError("out of range")
        return float(raw)
    if kind is str and isinstance(raw, str):
        return raw
    if kind is datetime and isinstance(raw, str):
        parsed = datetime.fromisoformat(raw)
        if parsed.tzinfo is None:
            raise ValueError("naive time")
        return parsed
    if kind is UUID and isinstance(raw, str):
        return UUID(raw)
    raise ValueError(f"expected {kind.__name__}")


@dataclass(frozen=True, slots=True)
class Keyset:
    """One endpoint's sort key: its name (binds cursors to the endpoint) and column types."""

    kind: str
    types: tuple[KeyType, ...]

    def encode(self, values: Sequence[Key], scope: Mapping[str, Any]) -> str:
        doc = {"k": self.kind, "f": _fingerprint(scope), "v": [_to_json(v) for v in values]}
        return base64.urlsafe_b64encode(orjson.dumps(doc)).decode().rstrip("=")

    def decode(self, token: str | None, scope: Mapping[str, Any]) -> tuple[Key, ...] | None:
        """The position after which the next page starts; 422 when the token is not ours."""
        if token is None:
            return None
        doc = self._load(token)
        if doc.get("k") != self.kind:
            raise InvalidInputError("cursor: belongs to another endpoint or sort order")
        if doc.get("f") != _fingerprint(scope):
            raise InvalidInputError("cursor: was issued for different filters; start over")
        values = doc.get("v")
        if not isinstance(values, list) or len(values) != len(self.types):
            raise InvalidInputError("cursor: malformed position")
        try:
            return tuple(_from_json(v, t) for v, t in zip(values, self.types, strict=True))
        except ValueError as exc:
            raise InvalidInputError("cursor: malformed position") from exc

    @staticmethod
    def _load(token: str) -> dict[str, Any]:
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
            doc = orjson.loads(raw)
        except (binascii.Error, ValueError, orjson.JSONDecodeError) as exc:
            raise InvalidInputError("cursor: not a cursor this server issued") from exc
        if not isinstance(doc, dict):
            raise InvalidInputError("cursor: not a cursor this server issued")
        return doc


def after_id(after: tuple[Key, ...] | None) -> int | None:
    """The id of a single-id keyset position."""
    if after is None:
        return None
    value = after[0]
    assert isinstance(value, int)  # noqa: S101 - decode() checked the type
    return value


def make_page(
    rows: Sequence[R],
    limit: int,
    keyset: Keyset,
    scope: Mapping[str, Any],
    key: Callable[[R], Sequence[Key]],
) -> Page[R]:
    """Trim the LIMIT n+1 probe row; its presence means there is a next page."""
    if len(rows) <= limit:
        return Page(list(rows), None)
    kept = list(rows[:limit])
    return Page(kept, keyset.encode(key(kept[-1]), scope))
