"""uuid7_time: the bit test and the cache agree with the uuid module's own reading."""

from datetime import UTC, datetime
from uuid import UUID

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.uuids import uuid7_millis, uuid7_time, uuid7_time_or_none

pytestmark = pytest.mark.unit


def reference(value: UUID) -> datetime | None:
    """The plain reading: version 7 (RFC 4122/9562 variant only), then 48-bit milliseconds."""
    if value.version != 7:
        return None
    return datetime.fromtimestamp((value.int >> 80) / 1000, tz=UTC)


# Keep to years datetime can hold: 48-bit milliseconds reach past 9999.
MILLIS = st.integers(min_value=0, max_value=253_402_300_799_999)


@given(
    millis=MILLIS,
    version=st.integers(min_value=0, max_value=15),
    variant=st.integers(min_value=0, max_value=3),
    rest=st.integers(min_value=0, max_value=2**62 - 1),
)
def test_matches_uuid_version(millis: int, version: int, variant: int, rest: int) -> None:
    bits = (millis << 80) | (version << 76) | (variant << 62) | rest
    value = UUID(int=bits)
    assert uuid7_time(value) == reference(value)
    assert uuid7_time(value) == reference(value)  # the cached answer too


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("01890a5d-ac96-774b-bcce-b302099a8057", datetime(2023, 6, 30, 3, 34, 18, 518000, UTC)),
        ("6ba7b810-9dad-11d1-80b4-00c04fd430c8", None),  # version 1
        ("01890a5d-ac96-774b-0cce-b302099a8057", None),  # version nibble 7, NCS variant
        ("00000000-0000-0000-0000-000000000000", None),
    ],
)
def test_known_ids(text: str, expected: datetime | None) -> None:
    assert uuid7_time(UUID(text)) == expected


@given(
    millis=st.integers(min_value=0, max_value=2**48 - 1),
    version=st.sampled_from([1, 4, 7, 7, 7]),
    variant=st.integers(min_value=0, max_value=3),
    rest=st.integers(min_value=0, max_value=2**62 - 1),
)
def test_uuid7_millis_agrees_with_uuid7_time_or_none(
    millis: int, version: int, variant: int, rest: int
) -> None:
    value = UUID(int=(millis << 80) | (version << 76) | (variant << 62) | rest)
    millis_of = uuid7_millis(value)
    dated = uuid7_time_or_none(value)
    assert (millis_of is None) == (dated is None)
    if millis_of is not None and dated is not None:
        assert millis_of == value.int >> 80


@pytest.mark.parametrize("millis", [253_402_300_799_999, 253_402_300_800_000, 2**48 - 1])
def test_uuid7_millis_at_year_9999(millis: int) -> None:
    value = UUID(int=(millis << 80) | (7 << 76) | (2 << 62))
    try:
        datetime.fromtimestamp(millis / 1000, tz=UTC)
        holds = True
    except (ValueError, OverflowError, OSError):
        holds = False
    assert (uuid7_millis(value) is not None) == holds  # the bound is datetime's own
    millis_of = uuid7_millis(value)
    dated = uuid7_time_or_none(value)
    assert (millis_of is None) == (dated is None)
    if millis_of is not None and dated is not None:
        assert millis_of == value.int >> 80
