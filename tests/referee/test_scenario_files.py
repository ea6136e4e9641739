"""Scenario files (tests/referee/scenarios/*.jsonl): input events in the JSON form of `xqarb referee run`, with
`#expect {...}` lines naming every output in order (each expected field must match) and `#expect {"none":
{...}}` lines naming what must not appear. Run through the real command line, as an outside check would."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from xqarb.cli import main

SCENARIOS = sorted((Path(__file__).parent / "scenarios").glob("*.jsonl"))


def _expectations(path: Path) -> tuple[list[dict], list[dict]]:
    wanted, forbidden = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#expect "):
            spec = json.loads(line[len("#expect "):])
            (forbidden if "none" in spec else wanted).append(spec.get("none", spec))
    return wanted, forbidden


def _matches(output: dict, spec: dict) -> bool:
    return all(output.get(k) == v for k, v in spec.items())


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_scenario_file(path, capsys):
    assert main(["referee", "run", str(path)]) == 0
    outputs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    wanted, forbidden = _expectations(path)
    assert len(outputs) == len(wanted), "\n".join(json.dumps(o, ensure_ascii=False) for o in outputs)
    for out, spec in zip(outputs, wanted, strict=True):
        assert _matches(out, spec), (out, spec)
    for spec in forbidden:
        assert not [o for o in outputs if _matches(o, spec)], spec


def test_there_are_scenario_files():
    assert len(SCENARIOS) >= 3
