"""`xqarb up` (one board, no demo) as a subprocess: a SIGKILLed vision process or embedded broker is restarted,
said on /api/venue/parts and /metrics, and the venue works again; SIGTERM still stops everything promptly."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

START_S = 60  # `up` answers in about 2 s here; a loaded shared machine gets slack
RECOVER_S = 30  # a restart takes about a second; joining the consumer groups again a few more
STOP_S = 20  # SIGTERM to exit


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _request(url: str, *, body: bytes | None = None, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    req = urllib.request.Request(url, data=body, method="POST" if body is not None else "GET", headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=20) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


class Up:
    def __init__(self, proc: subprocess.Popen[bytes], base: str, data: Path, out: Path) -> None:
        self.proc, self.base, self.data, self.out = proc, base, data, out

    def parts(self) -> dict[str, dict[str, Any]]:
        status, body = _request(self.base + "/api/venue/parts")
        assert status == 200, body
        return {p["part"]: p for p in json.loads(body)["parts"]}

    def venue(self) -> dict[str, Any]:
        return json.loads((self.data / "venue.json").read_text())

    def bootstrap(self) -> str:
        found = re.search(r"broker: (\S+) \(embedded\)", self.out.read_text())
        assert found, self.out.read_text()
        return found.group(1)

    def log(self) -> str:
        return self.out.read_text(errors="replace")

    def wait_for(self, what: str, check: Any, timeout: float = RECOVER_S) -> float:
        """Seconds until `check()` is true."""
        t0 = time.monotonic()
        while not check():
            assert self.proc.poll() is None, f"xqarb up exited: {self.log()[-2000:]}"
            assert time.monotonic() - t0 < timeout, f"{what} not within {timeout} s: {self.log()[-2000:]}"
            time.sleep(0.1)
        return time.monotonic() - t0


@pytest.fixture
def up(tmp_path: Path) -> Iterator[Up]:
    port = _free_port()
    out = tmp_path / "up.log"
    data = tmp_path / "data"
    with open(out, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "xqarb.cli", "up", "--port", str(port), "--data-dir", str(data), "--boards", "1",
             "--quiet", "--partitions", "2"],
            stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path,
        )  # fmt: skip
    server = Up(proc, f"http://127.0.0.1:{port}", data, out)

    def ready() -> bool:
        try:
            return _request(server.base + "/readyz")[0] == 200
        except OSError:
            return False

    try:
        server.wait_for("/readyz", ready, START_S)
        yield server
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def _stop(up: Up) -> float:
    t0 = time.monotonic()
    up.proc.send_signal(signal.SIGTERM)
    code = up.proc.wait(STOP_S)
    assert code == 0, up.log()[-2000:]
    return time.monotonic() - t0


def _frame(up: Up, seq: int) -> dict[str, Any]:
    board, info = next(iter(up.venue()["boards"].items()))
    token = next(t for name, t in info["devices"].items() if name.startswith("cam"))
    ok, jpeg = cv2.imencode(".jpg", np.full((48, 64, 3), 180, dtype=np.uint8))
    assert ok
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "image/jpeg",
               "X-Capture-Time": str(time.time_ns() // 1000), "X-Sequence": str(seq)}
    status, body = _request(f"{up.base}/ingest/v1/boards/{board}/frames", body=jpeg.tobytes(), headers=headers)
    assert status == 202, body
    return json.loads(body)


def _vision_committed(bootstrap: str, topic: str, partition: int) -> int | None:
    """The xq-vision group's committed offset on a frames topic (read without joining the group)."""
    from kafka import KafkaConsumer, TopicPartition

    probe = KafkaConsumer(bootstrap_servers=bootstrap, group_id="xq-vision", enable_auto_commit=False)
    try:
        return probe.committed(TopicPartition(topic, partition))
    finally:
        probe.close()


def _metric(up: Up, name: str, part: str) -> float:
    status, body = _request(up.base + "/metrics")
    assert status == 200
    found = re.search(rf'^{name}{{part="{part}"}} (\S+)$', body.decode(), re.M)
    return float(found.group(1)) if found else 0.0


def _consumer(up: Up, seq: list[int]) -> Any:
    """A check for `wait_for`: a frame posted now is committed by the xq-vision group within 2 s."""
    bootstrap = up.bootstrap()

    def consumed() -> bool:
        seq[0] += 1
        # The embedded broker's frames roll between two topics (xqarb.broker.FramesRoller): the answer names the
        # one the frame went to.
        where = _frame(up, seq[0])
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline:
            committed = _vision_committed(bootstrap, where["topic"], where["partition"])
            if committed is not None and committed > where["offset"]:
                return True
            time.sleep(0.2)
        return False

    return consumed


def test_a_killed_vision_process_is_restarted_and_reads_frames_again(up: Up) -> None:
    before = up.parts()["vision-1"]
    assert before["status"] == "up" and before["restarts"] == 0
    os.kill(before["pid"], signal.SIGKILL)

    def restarted() -> bool:
        now = up.parts()["vision-1"]
        return now["status"] == "up" and now["restarts"] == 1 and now["pid"] != before["pid"]

    back_s = up.wait_for("vision-1 restarted", restarted)
    assert "vision-1 went down (killed by SIGKILL); restarting in 0.5 s" in up.log()
    assert _metric(up, "xq_restarts_total", "vision-1") == 1.0
    assert _metric(up, "xq_part_up", "vision-1") == 1.0
    # The new process consumes: frames posted now are committed by the xq-vision group.
    reading_s = up.wait_for("frames consumed by the new vision process", _consumer(up, [0]))
    assert _request(up.base + "/api/boards")[0] == 200
    stop_s = _stop(up)
    print(f"vision: restarted {back_s:.1f} s after SIGKILL, reading frames {reading_s:.1f} s later; "
          f"SIGTERM stopped up in {stop_s:.1f} s")


def test_no_part_outlives_an_up_killed_outright(up: Up) -> None:
    up.wait_for("frames consumed by vision", _consumer(up, [0]))  # (past its start, which needs the broker)
    parts = up.parts()
    children = [parts[name]["pid"] for name in ("vision-1", "broker")]
    up.proc.kill()
    up.proc.wait(10)

    def gone(pid: int) -> bool:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                state = stat.read().rsplit(")", 1)[-1].split()[0]
        except FileNotFoundError:
            return True
        return state in ("Z", "X")  # (ended, not reaped yet: its parent is gone, init reaps it)

    deadline = time.monotonic() + STOP_S
    while not all(gone(pid) for pid in children) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = [pid for pid in children if not gone(pid)]
    assert not left, f"left running after up's SIGKILL: {left} of vision-1, broker {children}"


def test_a_killed_broker_is_restarted_and_ingest_accepts_again(up: Up) -> None:
    venue = up.venue()
    board = next(iter(venue["boards"]))
    arbiter = next(iter(venue["arbiters"].values()))["token"]
    headers = {"Authorization": f"Bearer {arbiter}", "Content-Type": "application/json"}
    url = f"{up.base}/ingest/v1/boards/{board}/events"
    before = up.parts()
    broker = before["broker"]
    os.kill(broker["pid"], signal.SIGKILL)
    t0 = time.monotonic()
    # A refusal does not wait on the dead broker for its dead-letter copy.
    status, _ = _request(url, body=b"{not json", headers=headers)
    assert status == 400 and time.monotonic() - t0 < 3
    seq = [int(time.time())]

    def accepted() -> bool:
        seq[0] += 1
        event = {"type": "GameStarted", "game_id": "supervised-1", "red_player": "R", "black_player": "B",
                 "time_control": {"scheme": "sudden_death", "base_ms": 900_000}, "recording_required": False,
                 "source_seq": seq[0], "occurred_at": time.time_ns() // 1000}
        return _request(url, body=json.dumps(event).encode(), headers=headers)[0] == 202

    accepted_s = up.wait_for("ingest answering 202", accepted)
    # (ingest answers 202 even while the broker is down: the event waits in its outbox; so the restart is
    # waited for on its own)
    up.wait_for("the broker shown restarted", lambda: up.parts()["broker"]["restarts"] == 1)
    assert up.parts()["broker"]["pid"] != broker["pid"]
    assert "broker went down (killed by SIGKILL)" in up.log()
    assert _metric(up, "xq_restarts_total", "broker") == 1.0
    # The referee and the live stream work on the new broker: a resignation reaches /api/boards.
    seq[0] += 1
    resign = {"type": "Resigned", "side": "red", "source_seq": seq[0], "occurred_at": time.time_ns() // 1000}
    assert _request(url, body=json.dumps(resign).encode(), headers=headers)[0] == 202

    def ended() -> bool:
        boards = json.loads(_request(up.base + "/api/boards")[1])["boards"]
        return any(b["game_id"] == "supervised-1" and b["result"] == "0-1" for b in boards)

    ended_s = up.wait_for("the game's end on /api/boards", ended, 45)
    # Neither vision nor the referee was stopped: the same process and thread reconnected by themselves.
    parts = up.parts()
    assert all(p["status"] == "up" for p in parts.values()), parts
    assert (parts["referee"]["restarts"], parts["vision-1"]["restarts"]) == (0, 0)
    assert parts["vision-1"]["pid"] == before["vision-1"]["pid"]
    assert "referee, vision-1 keep running and reconnect once broker is back" in up.log()
    up.wait_for("frames consumed by the same vision process", _consumer(up, [1000]), 45)
    stop_s = _stop(up)
    print(f"broker: ingest 202 again {accepted_s:.1f} s after SIGKILL, the game's end on the stream "
          f"{ended_s:.1f} s after that; SIGTERM stopped up in {stop_s:.1f} s")
