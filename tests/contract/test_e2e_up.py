"""The whole system as an outside check drives it (slow): `xqarb up`, a rendered game video posted frame by frame
at its own pace to the camera endpoint, the clock presses to the clock endpoint, and the moves read back from
the API. Run with `-m slow`."""

from __future__ import annotations

import json
import signal
import subprocess
import time

import pytest

from .conftest import load_games, run_xqarb, xqarb_command
from .test_http_up import Up, _free_port, _request

PLIES = 6  # frames 0-109: six moves, before the video's first nudge (a touch) at frame 112


@pytest.mark.slow
def test_rendered_game_through_http_gives_its_moves(tmp_path, shared_data):
    video = tmp_path / "video"
    r = run_xqarb(["vision", "render", "--game-index", "0", "--seed", "3", "--difficulty", "plain", "--fps", "4",
                   "--frames", "110", "--out", video], cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr
    truth = [json.loads(line) for line in (video / "truth.jsonl").read_text(encoding="utf-8").splitlines()]
    plies = max(d["ply"] for d in truth)
    assert plies >= PLIES
    game = load_games(shared_data, "ccpd_dev.jsonl", 1)[0]

    data, port = tmp_path / "data", _free_port()
    log = tmp_path / "up.log"
    with open(log, "wb") as err:
        proc = subprocess.Popen([*xqarb_command(), "up", "--port", str(port), "--data-dir", str(data), "--boards",
                                 "1", "--quiet"], cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=err)
    up = Up(proc, f"http://127.0.0.1:{port}", data, log)
    try:
        deadline = time.monotonic() + 90
        while True:
            assert proc.poll() is None, log.read_text(errors="replace")[-2000:]
            try:
                if _request(up.base + "/api/boards")[0] == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "xqarb up did not answer"
            time.sleep(0.3)
        venue = up.venue()
        devices = venue["boards"]["1"]["devices"]
        cam = next(t for n, t in devices.items() if n.startswith("cam"))
        clock = next(t for n, t in devices.items() if n.startswith("clock"))
        arbiter = next(iter(venue["arbiters"].values()))["token"]
        t0 = int(time.time() * 1e6)
        started = {"type": "GameStarted", "game_id": "e2e", "red_player": "R", "black_player": "B",
                   "time_control": {"scheme": "increment", "base_ms": 3_600_000, "increment_ms": 30_000},
                   "recording_required": False, "source_seq": 1, "occurred_at": t0}
        assert up.post_json("/ingest/v1/boards/1/events", started, token=arbiter)[0] == 202
        wall0 = time.monotonic()
        presses, side = 0, "red"
        for i, d in enumerate(truth):
            time.sleep(max(0.0, d["t_us"] / 1e6 - (time.monotonic() - wall0)))  # the video's own pace
            body = (video / d["frame"]).read_bytes()
            status = _request(f"{up.base}/ingest/v1/boards/1/frames", method="POST", body=body, headers={
                "Authorization": f"Bearer {cam}", "Content-Type": "image/jpeg",
                "X-Capture-Time": str(t0 + 1000 + d["t_us"]), "X-Sequence": str(i + 1)})
            assert status[0] == 202, status
            if d["event"] == "hand_leave" and d["ply"] > presses:  # the mover presses after letting go (5.7)
                presses += 1
                press = {"type": "ClockPressed", "side": side, "source_seq": presses,
                         "occurred_at": t0 + 1000 + d["t_us"] + 400_000}
                assert up.post_json("/ingest/v1/boards/1/clock", press, token=clock)[0] == 202
                side = "black" if side == "red" else "red"
        outputs: list[tuple[str, str]] = []
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            status, _, body = up.get("/api/games/e2e/events?after=0")
            if status == 200:
                entries = json.loads(body)
                entries = entries.get("entries", entries) if isinstance(entries, dict) else entries
                outputs = [(e["event"]["type"], e["event"].get("iccs") or e["event"].get("article") or "")
                           for e in entries if e["kind"] == "output"]
                if sum(t == "MoveMade" for t, _ in outputs) >= presses or any(t == "GameEnded" for t, _ in outputs):
                    break
            time.sleep(2)
        said = [e["event"] for e in entries if e["kind"] == "output" and e["event"]["type"] != "MoveMade"]
        assert outputs[:presses] == [("MoveMade", m) for m in game["iccs"][:presses]], json.dumps(
            [outputs, [x.get("message") or x.get("reason") for x in said]], ensure_ascii=False)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(45)
            except subprocess.TimeoutExpired:
                proc.kill()
