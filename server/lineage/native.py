"""The native writer of a lineage body's large sections (`threadline_native.Renderer`, Rust,
`native/src/render.rs`), when the module is installed.

A RUN graph of ~1,600 runs, ~2,900 parent relations and ~1,100 I/O relations spent ~4 ms of
its ~30 ms of server time building a dict per node and relation and serialising them
(benchmarks/README.md). The native writer gives the same bytes for those sections, and
declines (`UnsupportedValueError`) any value it does not write exactly as orjson does;
render.py then renders the whole body in Python, which stays the definition.
"""

import logging
import uuid
from collections.abc import Callable
from datetime import UTC
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from threadline_native import Renderer

log = logging.getLogger("threadline.server")


class NoNativeRendererError(Exception):
    """Stands for `threadline_native.UnsupportedValueError` when the module is not installed."""


def renderer(
    status_names: dict[int, str], output_type_names: Callable[[int | None], list[str]]
) -> "tuple[Renderer | None, type[Exception]]":
    """The native renderer and the exception by which it declines a graph, or (None,
    NoNativeRendererError) without the module (the body is then rendered in Python)."""
    try:
        # Imported here: optional, the Python rendering works without it.
        import threadline_native
    except ImportError:
        log.warning("threadline_native is not installed: lineage bodies render in Python only")
        return None, NoNativeRendererError
    config = {
        "status_names": status_names,
        "output_type_names": output_type_names,
        "UUID": uuid.UUID,
        "utc": UTC,
    }
    try:
        made = threadline_native.Renderer(config)
    except Exception:  # a module built from other sources than these: run without it
        log.exception("threadline_native does not fit this server: bodies render in Python")
        return None, NoNativeRendererError
    return made, threadline_native.UnsupportedValueError
