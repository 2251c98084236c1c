"""Which database errors are worth retrying, and how long to wait between tries."""

import random
from dataclasses import dataclass

import asyncpg
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

# SQLSTATE classes/codes that say "try again", not "this data is bad":
# 08 connection exceptions, 40001 serialization failure, 40P01 deadlock,
# 53 insufficient resources, 57P01-57P03 admin shutdown / cannot connect now,
# 23503 foreign key violation (a cached id whose row another worker merged away;
# the writer drops its caches on any failure, so the retry resolves afresh).
TRANSIENT_PREFIXES = ("08", "53", "57P")
TRANSIENT_CODES = frozenset({"40001", "40P01", "23503", "55P03"})


def is_transient(exc: BaseException) -> bool:
    """True for lost connections, deadlocks, serialisation failures and restarts."""
    if isinstance(exc, DBAPIError | OperationalError | InterfaceError) and exc.orig is not None:
        return is_transient(exc.orig)
    if isinstance(exc, OSError | asyncpg.InterfaceError | asyncpg.PostgresConnectionError):
        return True
    if isinstance(exc, ConnectionError | TimeoutError):
        return True
    code = getattr(exc, "sqlstate", None)
    if isinstance(code, str):
        return code in TRANSIENT_CODES or code.startswith(TRANSIENT_PREFIXES)
    cause = exc.__cause__
    return cause is not None and cause is not exc and is_transient(cause)


@dataclass(frozen=True, slots=True)
class Backoff:
    """Exponential backoff with full jitter, capped."""

    base_s: float = 0.1
    cap_s: float = 5.0

    def delay(self, attempt: int) -> float:
        ceiling = min(self.cap_s, self.base_s * 2 ** min(attempt, 16))
        return random.uniform(0, ceiling)  # noqa: S311 - jitter, not cryptography
