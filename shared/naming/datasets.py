"""Dataset names within a location: ``normalize_dataset_name``."""

import re
from functools import lru_cache

from shared.naming.families import (
    CACHE_SIZE,
    FILE_FAMILIES,
    MAX_CACHED_NAME_LEN,
    OBJECT_STORES,
    UNKNOWN,
    family_of,
)

_PARTITION_RE = re.compile(r"[A-Za-z_]\w*=[^/]*")


def normalize_dataset_name(location_type: str, name: str) -> str:
    """Canonical dataset name within a location of ``location_type``; never raises.

    File-like families lose duplicate and trailing slashes and trailing ``key=value``
    partition directories (object stores also a leading slash); other families' names are
    only stripped of surrounding whitespace, since their case rules differ per system.
    Never empty: the original name is kept when nothing else is left (``unknown`` for "").
    """
    if len(name) > MAX_CACHED_NAME_LEN:
        return _normalize(location_type, name)
    return _normalize_cached(location_type, name)


@lru_cache(maxsize=CACHE_SIZE)
def _normalize_cached(location_type: str, name: str) -> str:
    return _normalize(location_type, name)


def _normalize(location_type: str, name: str) -> str:
    family = family_of(location_type.strip().lower())
    stripped = name.strip()
    if family in FILE_FAMILIES:
        stripped = _normalize_path(stripped, object_store=family in OBJECT_STORES)
    return stripped or name or UNKNOWN


def _normalize_path(path: str, *, object_store: bool) -> str:
    """Idempotent, so the server may normalise a name the consumer already normalised."""
    head, sep, tail = path.partition("://")
    if not sep:
        head, tail = "", path
    absolute = tail.startswith("/") and not (object_store and not sep)
    # Whitespace-only segments go with the empty ones, else the final strip could expose new
    # empty ones and a second pass would differ.
    segments = [segment for segment in tail.split("/") if segment.strip()]
    keep = len(segments)
    while keep > 1 and _PARTITION_RE.fullmatch(segments[keep - 1]):
        keep -= 1  # the dataset is the table directory, not one of its partitions
    body = "/".join(segments[:keep])
    return (head + sep + ("/" if absolute else "") + body).strip()
