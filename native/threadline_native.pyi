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
    def runs(self, nodes: list[Any]) -> bytes:
        """server.lineage.render's runs list as JSON."""
    def operations(self, nodes: list[Any]) -> bytes:
        """server.lineage.render's operations list as JSON."""
    def parents(self, pairs: list[Any]) -> bytes:
        """The parent relations (pairs of NodeRefs) as JSON."""
    def io(self, relations: list[Any]) -> tuple[bytes, bytes, bytes]:
        """The I/O relations as JSON: inputs, outputs and dataset lineage."""
