"""Which quarters the consumer asks partitions for."""

from datetime import UTC, date, datetime

import pytest

from consumer.write.partitions import quarters

pytestmark = pytest.mark.unit

NOW = datetime(2026, 11, 27, tzinfo=UTC)


def test_quarters_are_named_by_their_first_day() -> None:
    times = [
        datetime(2026, 1, 1, tzinfo=UTC),
        datetime(2026, 3, 31, 23, 59, 59, 999999, tzinfo=UTC),
        datetime(2026, 4, 1, tzinfo=UTC),
        datetime(2026, 12, 31, 12, tzinfo=UTC),
    ]
    assert quarters(times, NOW) == {date(2026, 1, 1), date(2026, 4, 1), date(2026, 10, 1)}


def test_times_far_from_now_stay_in_the_default_partition() -> None:
    hostile = [datetime(1, 1, 1, tzinfo=UTC), datetime(9999, 12, 31, tzinfo=UTC)]
    assert quarters(hostile, NOW) == set()
