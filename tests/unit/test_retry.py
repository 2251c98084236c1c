"""Which errors are retried: connection loss, deadlocks, serialisation failures, restarts."""

import asyncpg
import pytest

from consumer.retry import Backoff, is_transient

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    "error",
    [
        ConnectionRefusedError(111, "refused"),
        asyncpg.exceptions.DeadlockDetectedError("deadlock detected"),
        asyncpg.exceptions.SerializationError("could not serialize access"),
        asyncpg.exceptions.AdminShutdownError(
            "terminating connection due to administrator command"
        ),
        asyncpg.exceptions.CannotConnectNowError("the database system is starting up"),
        asyncpg.exceptions.ConnectionDoesNotExistError("connection was closed"),
        asyncpg.exceptions.ForeignKeyViolationError("stale cached id"),
        TimeoutError(),
    ],
)
def test_transient(error: BaseException) -> None:
    assert is_transient(error)


@pytest.mark.parametrize(
    "error",
    [
        asyncpg.exceptions.UntranslatableCharacterError("\\u0000 cannot be converted to text"),
        asyncpg.exceptions.NumericValueOutOfRangeError("bigint out of range"),
        asyncpg.exceptions.ProgramLimitExceededError("index row size exceeds maximum"),
        asyncpg.exceptions.CardinalityViolationError(
            "ON CONFLICT DO UPDATE command cannot affect row a second time"
        ),
        ValueError("a bug"),
    ],
)
def test_refused_data_is_not_retried(error: BaseException) -> None:
    assert not is_transient(error)


def test_backoff_is_capped_and_jittered() -> None:
    backoff = Backoff(base_s=0.1, cap_s=2.0)
    delays = [backoff.delay(attempt) for attempt in range(1, 40)]
    assert all(0 <= d <= 2.0 for d in delays)
    assert len(set(delays)) > 1
