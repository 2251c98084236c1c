"""The server's cycle collector waits for more young objects than a capped graph holds."""

import gc

import pytest

from server import runtime
from shared import runtime as shared_runtime

pytestmark = pytest.mark.unit


def test_the_server_collects_young_objects_less_often_than_the_consumer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(gc, "freeze", lambda: None)  # leave this test process's heap as it is
    monkeypatch.setattr(gc, "collect", lambda *args: 0)
    before = gc.get_threshold()
    try:
        runtime.tune_server_gc()
        assert gc.get_threshold() == (runtime.YOUNG_THRESHOLD, 20, 20)
        shared_runtime.tune_gc()
        assert gc.get_threshold() == (shared_runtime.YOUNG_THRESHOLD, 20, 20)
    finally:
        gc.set_threshold(*before)
    # A capped graph peaks at ~100,000 tracked objects (the 1M-event benchmark's largest).
    assert runtime.YOUNG_THRESHOLD >= 5 * shared_runtime.YOUNG_THRESHOLD
