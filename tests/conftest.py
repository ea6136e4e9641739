"""Fixtures shared by the whole suite."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _shared_dir() -> Path | None:
    env = os.environ.get("XQARB_SHARED")
    for candidate in ([Path(env)] if env else []) + [ROOT.parent / "shared", ROOT.parent.parent / "shared"]:
        if (candidate / "data" / "games").is_dir():
            return candidate
    return None


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """`../shared/data`: real games and piece photographs (see its README for sources and licences)."""
    shared = _shared_dir()
    if shared is None:
        pytest.skip("the real data set ../shared/data is not beside this clone (set XQARB_SHARED)")
    return shared / "data"
