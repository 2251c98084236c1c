"""UUID helpers: the time a UUIDv7 carries, and deterministic ids for derived rows."""

from datetime import UTC, datetime
from functools import lru_cache
from uuid import UUID

_UNIX_MS_SHIFT = 80
# Version nibble and the two variant bits: a UUIDv7 has version 7 and the RFC 9562 variant
# (binary 10), which is exactly when `UUID.version == 7`; masking the int skips two property
# calls per id on the consumer's hot path.
_V7_MASK = (0xF << 76) | (0x3 << 62)
_V7_BITS = (0x7 << 76) | (0x2 << 62)
# 9999-12-31T23:59:59.999Z in Unix milliseconds: the latest time a datetime can hold.
_MAX_MILLIS = 253_402_300_799_999
# A batch repeats a few ids (a run, its operations, its parents) and ids minted in the same
# millisecond share a time, so a small cache saves most datetime constructions.
_CACHE_SIZE = 4096


def uuid7_time(value: UUID) -> datetime | None:
    """The creation time encoded in a UUIDv7 (48-bit Unix milliseconds), else None."""
    bits = value.int
    if bits & _V7_MASK != _V7_BITS:
        return None
    return from_millis(bits >> _UNIX_MS_SHIFT)


def uuid7_millis(value: UUID) -> int | None:
    """The Unix milliseconds of a UUIDv7 a datetime can hold (year <= 9999), else None: 48
    bits of milliseconds reach year 10889, and a later id is a typo or a probe. The server
    sends thousands of these to PostgreSQL as integers, no datetime made."""
    bits = value.int
    if bits & _V7_MASK != _V7_BITS:
        return None
    millis = bits >> _UNIX_MS_SHIFT
    return millis if millis <= _MAX_MILLIS else None


def uuid7_time_or_none(value: UUID) -> datetime | None:
    """uuid7_time, with None too for a UUIDv7 dated after year 9999."""
    millis = uuid7_millis(value)
    return None if millis is None else from_millis(millis)


def v7_time_fits(value: UUID) -> bool:
    """False for a UUIDv7 dated after year 9999; True for every other UUID."""
    return value.int & _V7_MASK != _V7_BITS or uuid7_millis(value) is not None


@lru_cache(maxsize=_CACHE_SIZE)
def from_millis(millis: int) -> datetime:
    """The UTC datetime of Unix milliseconds (a UUIDv7's time), memoised."""
    return datetime.fromtimestamp(millis / 1000, tz=UTC)
