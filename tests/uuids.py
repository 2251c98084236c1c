"""UUIDv7 ids for test events: the time bits carry the given instant."""

import random
from datetime import datetime
from uuid import UUID


def uuid7(at: datetime, rng: random.Random) -> UUID:
    """A UUIDv7 carrying `at` (milliseconds), its 74 random bits from `rng`."""
    millis = int(at.timestamp() * 1000)
    rand = rng.getrandbits(76) & ~(0x3 << 62) | (0x2 << 62)  # the RFC 9562 variant, 10
    return UUID(int=(millis << 80) | (0x7 << 76) | rand)
