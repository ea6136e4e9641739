"""Vision across a broker that dies and comes back empty on the same address: its consumer goes on by itself (a
commit the new broker refuses means rejoining, not a stopped process), reads the frames sent after the restart,
and counts the acknowledged frames the broker lost with it as never read (xq_vision_frames_missed_total)."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from xqarb import bus

BOARD = "board-1"
LOST = range(8, 100)  # acknowledged by the broker, then lost with it before vision read them
AFTER = range(100, 120)  # sent once the broker is back


def frame(seq: int) -> Any:
    from xqarb.events import make_event

    at = 1_767_225_600_000_000 + seq * 200_000  # a camera at 5 frames a second
    return make_event("FrameCaptured", BOARD, source="cam-1", source_seq=seq, occurred_at=at, received_at=at,
                      camera_id="cam-1", width=1280, height=720, encoding="jpeg", image=b"\x00not a jpeg",
                      game_id="g1", source_epoch=0)


def missed() -> float:
    from prometheus_client import REGISTRY

    return REGISTRY.get_sample_value("xq_vision_frames_missed_total") or 0.0


def kill(broker: Any) -> None:
    assert broker._process is not None
    os.kill(broker._process.pid, signal.SIGKILL)  # its in-memory topics, frames and group offsets go with it
    broker._process.wait(5)
    broker._process = None


def test_vision_goes_on_across_a_broker_restart_and_counts_the_frames_lost(tmp_path: Path) -> None:
    from xqarb.broker import BrokerError, EmbeddedBroker
    from xqarb.vision.evidence import DirectoryEvidenceStore
    from xqarb.vision.service import VisionCore, run

    try:
        broker = EmbeddedBroker(log_path=tmp_path / "broker.log").start()
    except BrokerError as exc:
        pytest.skip(f"no embedded broker here: {exc}")
    core = VisionCore(DirectoryEvidenceStore(tmp_path / "evidence"), source="vision-test")
    placed: list[int] = []  # the camera numbers of the frames that reached vision
    reading, go, done = threading.Event(), threading.Event(), threading.Event()
    place = core.place

    def slow_place(e: Any, partition: int = 0) -> Any:
        placed.append(int(e.source_seq))
        if int(e.source_seq) == 7:  # vision is busy with its first frames while the rest come in
            reading.set()
            go.wait(30)
        return place(e, partition)

    core.place = slow_place  # type: ignore[method-assign]
    failures: list[BaseException] = []

    def vision() -> None:
        try:
            run(broker.bootstrap, "vision-restart", core, stop=done.is_set, poll_s=0.2)
        except BaseException as exc:  # the test fails on it below
            failures.append(exc)

    t = threading.Thread(target=vision, daemon=True)
    before = missed()
    try:
        bus.ensure_topics(broker.bootstrap, partitions=2)
        with bus.Producer(broker.bootstrap, client_id="cam-test") as cam:
            cam.send_many(bus.FRAMES, [frame(s) for s in range(8)])
            t.start()
            assert reading.wait(30), "vision did not read the first frames"
            time.sleep(0.5)  # (its fetch made before these frames were sent has had its empty answer)
            cam.send_many(bus.FRAMES, [frame(s) for s in LOST])  # acknowledged: the broker holds them
        kill(broker)
        broker = EmbeddedBroker(broker.port, log_path=tmp_path / "broker2.log").start()  # same address, empty
        bus.ensure_topics(broker.bootstrap, partitions=2)
        go.set()
        with bus.Producer(broker.bootstrap, client_id="cam-test") as cam:
            cam.send_many(bus.FRAMES, [frame(s) for s in AFTER])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not set(AFTER) <= set(placed) and t.is_alive():
            time.sleep(0.1)
        assert t.is_alive(), f"vision stopped: {failures}"
        assert set(AFTER) <= set(placed)
        never = set(range(AFTER[-1] + 1)) - set(placed)
        assert never and never <= set(LOST)
        assert missed() - before == len(never)
    finally:
        go.set()
        done.set()
        t.join(30)
        broker.stop()
    assert not failures
