"""The server's cycle collector waits for more young objects than a capped graph holds, and
its C allocator keeps the memory a request frees."""

import gc
import sys

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


def test_the_server_keeps_the_memory_a_request_frees_under_glibc() -> None:
    # CI and the benchmark VM run Linux with glibc: both thresholds are accepted.
    assert runtime.keep_freed_memory()
    assert runtime.MMAP_THRESHOLD <= 32 << 20  # glibc refuses more on 64-bit
    assert runtime.TRIM_THRESHOLD > runtime.MMAP_THRESHOLD


def test_elsewhere_the_allocator_is_left_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    assert not runtime.keep_freed_memory()
