"""`xqarb up --port P --data-dir D` as a subprocess (DESIGN: HTTP contract): JSON errors {"error", "detail"},
/api/boards, /metrics, an arbiter's events through ingest reaching the ledger, `xqarb verify` on that ledger, and a
clean stop on SIGINT."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from .conftest import run_xqarb, xqarb_command

START_TIMEOUT = 90
GAME = "contract-g1"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _request(url: str, *, method: str = "GET", body: bytes | None = None,
             headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=15) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


class Up:
    def __init__(self, proc: subprocess.Popen, base: str, data: Path, log: Path) -> None:
        self.proc, self.base, self.data, self.log = proc, base, data, log

    def get(self, path: str) -> tuple[int, dict[str, str], bytes]:
        return _request(self.base + path)

    def post_json(self, path: str, obj: Any, token: str | None = None, raw: bytes | None = None):
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return _request(self.base + path, method="POST", body=raw if raw is not None else json.dumps(obj).encode(),
                        headers=headers)

    def venue(self) -> dict[str, Any]:
        return json.loads((self.data / "venue.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def up(tmp_path_factory):
    folder = tmp_path_factory.mktemp("up")
    data = folder / "data"
    port = _free_port()
    log = folder / "up.log"
    with open(log, "wb") as err:
        proc = subprocess.Popen([*xqarb_command(), "up", "--port", str(port), "--data-dir", str(data), "--quiet",
                                 "--boards", "3"],
                                cwd=folder, stdout=subprocess.DEVNULL, stderr=err)
    base = f"http://127.0.0.1:{port}"
    server = Up(proc, base, data, log)
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        if proc.poll() is not None:
            pytest.fail(f"xqarb up exited with {proc.returncode}: {log.read_text(errors='replace')[-2000:]}")
        try:
            if _request(base + "/api/boards")[0] == 200:
                break
        except OSError:
            pass
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"xqarb up did not answer in {START_TIMEOUT}s: {log.read_text(errors='replace')[-2000:]}")
        time.sleep(0.3)
    yield server
    if proc.poll() is None:
        proc.kill()
        proc.wait(10)


def _is_json_error(status: int, headers: dict[str, str], body: bytes, expect: int) -> dict[str, Any]:
    assert status == expect, (status, body[:300])
    assert headers.get("Content-Type", "").startswith("application/json"), headers
    data = json.loads(body)
    assert isinstance(data.get("error"), str) and data["error"], data
    assert isinstance(data.get("detail"), str) and data["detail"], data
    return data


def test_404_is_a_json_error(up):
    _is_json_error(*up.get("/no/such/page"), 404)
    _is_json_error(*up.get("/api/games/no-such-game"), 404)
    _is_json_error(*up.get("/api/games/no-such-game/verify"), 404)


def test_bad_ingest_requests_are_json_errors(up):
    venue = up.venue()
    board, info = next(iter(venue["boards"].items()))
    token = next(iter(info["devices"].values()))
    ok_shape = {"type": "DrawOffered", "side": "red", "source_seq": 1, "occurred_at": int(time.time() * 1e6)}
    # No token, a wrong token, a body that is not JSON, a field missing, a board the venue does not have.
    assert _is_json_error(*up.post_json(f"/ingest/v1/boards/{board}/events", ok_shape), 401)
    status = up.post_json(f"/ingest/v1/boards/{board}/events", ok_shape, token="wrong-token")
    assert _is_json_error(*status, status[0]) and status[0] in (401, 403)
    _is_json_error(*up.post_json(f"/ingest/v1/boards/{board}/events", None, token=token, raw=b"{not json"), 400)
    bad = {k: v for k, v in ok_shape.items() if k != "side"}
    status = up.post_json(f"/ingest/v1/boards/{board}/events", bad, token=token)
    assert 400 <= status[0] < 500
    _is_json_error(*status, status[0])
    status = up.post_json("/ingest/v1/boards/no-such-board/events", ok_shape, token=token)
    assert status[0] in (403, 404)
    _is_json_error(*status, status[0])
    status = up.post_json(f"/ingest/v1/boards/{board}/clock", {"type": "ClockPressed", "side": "purple",
                                                               "source_seq": 2,
                                                               "occurred_at": int(time.time() * 1e6)}, token=token)
    assert 400 <= status[0] < 500
    _is_json_error(*status, status[0])


def test_other_errors_are_json_too_and_pages_are_served(up):
    status = _request(up.base + "/api/boards", method="DELETE")
    assert 400 <= status[0] < 500
    _is_json_error(*status, status[0])
    _is_json_error(*up.get("/api/games/no-such-game/frames/" + "0" * 64), 404)
    status, headers, body = up.get("/")
    assert status == 200 and headers.get("Content-Type", "").startswith("text/html") and b"<html" in body.lower()


def test_api_boards_lists_the_configured_boards(up):
    status, headers, body = up.get("/api/boards")
    assert status == 200 and headers.get("Content-Type", "").startswith("application/json")
    data = json.loads(body)
    boards = data["boards"] if isinstance(data, dict) else data
    assert {str(b["board_id"]) for b in boards} == set(up.venue()["boards"])
    assert len(boards) == 3  # --boards 3


def test_metrics_is_prometheus_text(up):
    status, headers, body = up.get("/metrics")
    assert status == 200
    text = body.decode()
    assert "text/plain" in headers.get("Content-Type", ""), headers
    assert "# TYPE" in text and "# HELP" in text
    assert any(line.startswith("xq_") for line in text.splitlines()), "no xqarb metric"


def _camera(up) -> tuple[str, str]:
    board, info = next(iter(up.venue()["boards"].items()))
    token = next(t for name, t in info["devices"].items() if name.startswith("cam"))
    return board, token


def test_frames_ingest(up):
    import cv2
    import numpy as np

    board, token = _camera(up)
    ok, jpeg = cv2.imencode(".jpg", np.full((72, 128, 3), 200, dtype=np.uint8))
    assert ok
    url = f"{up.base}/ingest/v1/boards/{board}/frames"
    now = int(time.time() * 1e6)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "image/jpeg", "X-Capture-Time": str(now),
               "X-Sequence": "1"}
    status, _, body = _request(url, method="POST", body=jpeg.tobytes(), headers=headers)
    assert status == 202, body
    # Not a JPEG; no capture time: 4xx with the JSON error shape.
    status = _request(url, method="POST", body=b"GIF89a....", headers={**headers, "X-Sequence": "2"})
    assert 400 <= status[0] < 500
    _is_json_error(*status, status[0])
    no_time = {k: v for k, v in headers.items() if k != "X-Capture-Time"}
    status = _request(url, method="POST", body=jpeg.tobytes(), headers={**no_time, "X-Sequence": "3"})
    assert 400 <= status[0] < 500
    _is_json_error(*status, status[0])


def test_stream_is_server_sent_events(up):
    req = urllib.request.Request(up.base + "/api/stream")
    with urllib.request.urlopen(req, timeout=15) as resp:
        assert resp.status == 200
        assert resp.headers.get("Content-Type", "").startswith("text/event-stream"), dict(resp.headers)


def test_arbiter_events_reach_the_ledger_and_stop_on_sigint_is_clean(up):
    venue = up.venue()
    board = next(iter(venue["boards"]))
    arbiter = next(iter(venue["arbiters"].values()))["token"]
    now = int(time.time() * 1e6)
    started = {"type": "GameStarted", "game_id": GAME, "red_player": "Red", "black_player": "Black",
               "time_control": {"scheme": "sudden_death", "base_ms": 900_000}, "recording_required": False,
               "source_seq": 1, "occurred_at": now}
    resigned = {"type": "Resigned", "side": "red", "source_seq": 2, "occurred_at": now + 1_000_000}
    ids = []
    for event in (started, started, resigned):  # the second GameStarted is a retry: same source_seq
        status, _, body = up.post_json(f"/ingest/v1/boards/{board}/events", event, token=arbiter)
        assert status == 202, body
        ids.append(json.loads(body).get("event_id"))
    assert ids[0] == ids[1] != ids[2], ids  # event_id: stable across retries
    deadline = time.monotonic() + 60
    while True:
        status, _, body = up.get(f"/api/games/{GAME}")
        if status == 200 and b"0-1" in body:
            break
        assert time.monotonic() < deadline, f"the game never showed the resignation: {status} {body[:300]!r}"
        time.sleep(0.5)
    status, _, body = up.get(f"/api/games/{GAME}/events?after=0")
    assert status == 200
    entries = json.loads(body)
    entries = entries.get("entries", entries) if isinstance(entries, dict) else entries
    assert [e["seq"] for e in entries][:2] == [1, 2], entries
    assert entries[0]["event"]["type"] == "GameStarted" and any(e["event"]["type"] == "GameEnded" for e in entries)
    types = [e["event"]["type"] for e in entries]
    assert types.count("GameStarted") == 1 and "AttentionNeeded" not in types, types  # the retry kept once
    status, _, body = up.get(f"/api/games/{GAME}/events?after=1")
    later = json.loads(body)
    later = later.get("entries", later) if isinstance(later, dict) else later
    assert status == 200 and [e["seq"] for e in later] == [e["seq"] for e in entries[1:]]
    status, _, body = up.get(f"/api/games/{GAME}/state?seq=1")
    assert status == 200, body
    assert "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR" in body.decode(), body[:400]
    status, _, body = up.get(f"/api/games/{GAME}/verify")
    assert status == 200 and json.loads(body)["ok"] is True

    # Ctrl-C: a clean stop (exit 0, no traceback), then the ledger it wrote verifies from the command line.
    up.proc.send_signal(signal.SIGINT)
    try:
        code = up.proc.wait(45)
    except subprocess.TimeoutExpired:
        up.proc.kill()
        pytest.fail("xqarb up did not stop within 45 s of SIGINT")
    log = up.log.read_text(errors="replace")
    assert code == 0, (code, log[-2000:])
    assert "Traceback" not in log, log[-3000:]
    ledgers = sorted(up.data.glob("*.sqlite"))
    assert ledgers, list(up.data.iterdir())
    r = run_xqarb(["verify", "--game", GAME, "--db", ledgers[0]], cwd=up.data)
    assert r.returncode == 0, (r.stdout, r.stderr)
    # Without --db: the configured ledger, the one `up` wrote into the same data directory.
    r = run_xqarb(["verify", "--game", GAME], cwd=up.data.parent, env={"XQARB_DATA_DIR": str(up.data)})
    assert r.returncode == 0, (r.stdout, r.stderr)
