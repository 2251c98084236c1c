"""Both processes keep the large blocks they free: glibc's thresholds raised at start-up."""

import sys

import pytest

from shared import runtime

pytestmark = pytest.mark.unit


def test_both_processes_keep_the_memory_they_free_under_glibc() -> None:
    # CI and the benchmark VM run Linux with glibc: both thresholds are accepted.
    assert runtime.keep_freed_memory()
    assert runtime.MMAP_THRESHOLD <= 32 << 20  # glibc refuses more on 64-bit
    assert runtime.TRIM_THRESHOLD > runtime.MMAP_THRESHOLD


def test_elsewhere_the_allocator_is_left_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    assert not runtime.keep_freed_memory()
