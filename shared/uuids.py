"""UUID helpers: the time a UUIDv7 carries, and deterministic ids for derived rows."""

from datetime import UTC, datetime
from uuid import UUID

_UNIX_MS_SHIFT = 80


def uuid7_time(value: UUID) -> datetime | None:
    """The creation time encoded in a UUIDv7 (48-bit Unix milliseconds), else None."""
    if value.version != 7:  # RFC 9562 version number
        return None
    millis = value.int >> _UNIX_MS_SHIFT
    return datetime.fromtimestamp(millis / 1000, tz=UTC)
