"""Threadline's native decode + extract (native/src/lib.rs; see consumer/native.py) and the
lineage server's body writer (native/src/render.rs; see server/lineage/native.py)."""

from typing import Any

class Extractor:
    def __init__(self, config: dict[str, Any]) -> None: ...
    def extract(self, payload: bytes, max_bytes: int) -> Any | None:
        """The `Extracted` records of `payload`, or None: the Python path decides."""
    def decline_reason(self, payload: bytes, max_bytes: int) -> str | None:
        """Why `extract` declines `payload`, or None if it does not."""

class Merger:
    def __init__(self, config: dict[str, Any]) -> None: ...
    def merge(self, parts: Any) -> Any:
        """consumer.merge.merge(parts), the combining in Rust (RuntimeError on a bug)."""
    def rekey(self, batch: Any, canon: dict[Any, Any]) -> Any:
        """consumer.rekey.rekey(batch, canon), the rebuilding in Rust (RuntimeError on a bug)."""

class UnsupportedValueError(Exception):
    """A value the native writer does not render as orjson would: render in Python."""

class Renderer:
    def __init__(self, config: dict[str, Any]) -> None: ...
    def items(self, section: str, items: list[Any], lo: int, hi: int, *, first: bool) -> bytes:
        """Items lo..hi of one of the lineage body's lists as render_json writes them, without
        the list's brackets."""

def order_relations(relations: list[Any], unloaded: Any, uuid: type) -> list[Any]:
    """The relations with neither end in `unloaded`, sorted by (kind, source, target)."""

def add_relations(
    edges: list[Any], nodes: dict[Any, None], relations: dict[Any, Any], relation: type, input: Any
) -> None:
    """Level.add_relations: the edges' relations whose two ends are in `nodes`, first kept."""

def fill_io_level(
    rows: Any,
    level: tuple[list[Any], Any, Any, list[Any]],
    from_datasets: bool,
    finer: bool,
    refs: tuple[type, Any, Any, Any, Any],
) -> None:
    """levels.io_level's loop: the rows' edges, reached nodes, members and schemas appended."""

def group_io_rows(rows: Any, merged: Any) -> list[Any]:
    """grouping.group_io_rows: one row per (direction, dataset, process), merged(rows) for more."""

def fresh_refs(refs: Any, nodes: dict[Any, None], uuid: type, key: Any) -> list[Any]:
    """Traversal.admit's new nodes: the refs not in `nodes`, once each, in `key`'s order."""

def parent_relations(
    nodes: tuple[list[Any], list[Any], list[Any]], keep: Any, relation: type
) -> list[Any]:
    """assemble._parents: the jobs', operations' and runs' parent relations to kept refs."""

class UuidHashes:
    def __init__(self, kind: type, probes: list[Any]) -> None: ...
    def fill_rows(self, rows: Any, columns: tuple[int, ...]) -> None:
        """Cache the hash of the UUIDs (of `kind`) at `columns` of each row in the UUID."""

class TimeDecoder:
    def __init__(self, utc: Any) -> None: ...
    def __call__(self, data: bytes) -> Any:
        """A binary timestamptz (8 bytes) as a datetime in `utc`."""
