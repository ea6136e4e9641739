"""A pytest plugin for bench/interpret_passes.py: which tests' still boards each correction pass reads otherwise.

Load it with `-p interpret_passes_plugin` (bench/ on PYTHONPATH):
- INTERPRET_PASSES_SKIP=NAME[,NAME...]: the tests run without those passes (which tests a pass is needed for), e.g.
  `PYTHONPATH=bench INTERPRET_PASSES_SKIP=_by_outlines .venv/bin/python -m pytest -p interpret_passes_plugin
  tests/vision/test_tracker_interpret.py -q -n 2`;
- INTERPRET_PASSES_OUT=DIR: each process writes there, per test, the passes whose removal changed at least one of
  its still boards' results (a test no pass changes anything for cannot fail without it). Slow: every still board
  is read once per pass, and tests of whole games pass pytest's timeout.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

_current: list[str] = [""]
_seen: dict[str, set[str]] = {}


def pytest_configure(config: pytest.Config) -> None:
    import interpret_passes as B

    skipping = os.environ.get("INTERPRET_PASSES_SKIP")
    if skipping:
        B.skip(set(skipping.split(",")))
        return
    if not os.environ.get("INTERPRET_PASSES_OUT"):
        return
    changed: Counter[str] = Counter()
    calls: Counter[str] = Counter()
    examples: dict[str, list[str]] = {n: [] for n in [*B.pass_names(), *B.LATER]}

    class Noting(Counter[str]):
        def __missing__(self, key: str) -> int:
            return 0

        def __setitem__(self, key: str, value: int) -> None:
            super().__setitem__(key, value)
            if key in examples:
                _seen.setdefault(_current[0], set()).add(key)

    B.shadow(Noting(changed), calls, examples)
    from xqarb.vision import tracker

    tracker.interpret = B.T.interpret  # (the tests that call interpret itself import it from there)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Any:
    _current[0] = item.nodeid  # (a fixture's game is its first test's)
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    _current[0] = item.nodeid
    yield
    _current[0] = ""


def pytest_unconfigure(config: pytest.Config) -> None:
    out = os.environ.get("INTERPRET_PASSES_OUT")
    if out and not os.environ.get("INTERPRET_PASSES_SKIP"):
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / f"{os.getpid()}.json").write_text(
            json.dumps({k: sorted(v) for k, v in _seen.items()}, indent=1))
