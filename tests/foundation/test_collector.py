"""The service processes' collector settings (xqarb.collector): fewer young collections, the collector still on."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from xqarb.collector import YOUNG_THRESHOLD, tune_for_service


@pytest.fixture
def restored_collector() -> Iterator[None]:
    before = gc.get_threshold()
    enabled = gc.isenabled()
    yield
    gc.unfreeze()
    gc.set_threshold(*before)
    (gc.enable if enabled else gc.disable)()


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def test_young_collections_are_rarer_and_start_up_objects_frozen(restored_collector: None) -> None:
    _, older, oldest = gc.get_threshold()
    tune_for_service()
    assert gc.get_threshold() == (YOUNG_THRESHOLD, older, oldest)
    assert gc.get_freeze_count() > 0  # what the process built while starting is out of the scans
    assert gc.isenabled()


def test_a_cycle_made_after_tuning_is_still_collected(restored_collector: None) -> None:
    tune_for_service()
    a, b = _Node(), _Node()
    a.other, b.other = b, a  # a reference cycle: only the collector frees it
    gone = weakref.ref(a)
    del a, b
    assert gone() is not None
    gc.collect()
    assert gone() is None
