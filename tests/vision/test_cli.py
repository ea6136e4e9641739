"""`xqarb vision render` writes a sample video through the renderer; `vision` alone says what to do."""

from __future__ import annotations

import json
import subprocess
import sys


def test_vision_render_writes_frames_and_truth(tmp_path, shared_data) -> None:
    out = tmp_path / "video"
    games = shared_data / "games" / "ccpd_dev.jsonl"
    run = subprocess.run([sys.executable, "-m", "xqarb.cli", "vision", "render", "--out", str(out), "--frames", "2",
                          "--games", str(games), "--difficulty", "easy"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert sorted(p.name for p in out.iterdir()) == ["frame_00000.jpg", "frame_00001.jpg", "truth.jsonl"]
    truth = [json.loads(line) for line in (out / "truth.jsonl").read_text().splitlines()]
    assert len(truth) == 2 and len(truth[0]["squares"]) == 90


def test_vision_without_a_subcommand_fails_with_help() -> None:
    run = subprocess.run([sys.executable, "-m", "xqarb.cli", "vision"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "detect" in run.stderr
