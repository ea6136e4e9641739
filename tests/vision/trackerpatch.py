"""Switching one of the tracker's rules off in a test: its helper replaced wherever the tracker's code looks it up."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

# the modules the tracker was split into
_TRACKER_PARTS = ("tracker", "still_board", "interpret", "point_evidence", "move_checks", "hand", "frames")


def patch_tracker(monkeypatch: pytest.MonkeyPatch, name: str, value: Any) -> None:
    """Replace the tracker's helper `name` with `value` in every part of the tracker that uses it."""
    found = False
    for part in _TRACKER_PARTS:
        try:
            module = importlib.import_module(f"xqarb.vision.{part}")
        except ModuleNotFoundError:
            continue
        if hasattr(module, name):
            monkeypatch.setattr(module, name, value)
            found = True
    assert found, f"no part of the tracker has {name}"
