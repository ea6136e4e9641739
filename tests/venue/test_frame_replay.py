"""Camera frames across an embedded broker that dies while vision lags behind the cameras: ingest sends again the
frames the broker lost, before any frame posted meanwhile, and vision reads each frame once, in order, missing none
(services/ingest/frame_replay.py, services/vision/order.py)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.vision.test_vision_broker_restart import frame, kill, missed
from xqarb import bus

READ = range(8)  # read by vision before the broker died
UNREAD = range(8, 100)  # acknowledged by the broker, not yet read by vision when it died
AFTER = range(100, 120)  # posted once the broker was seen dead: they wait for it and for the frames sent again


def test_frames_a_killed_broker_lost_are_sent_again_and_read_once_in_order(tmp_path: Path) -> None:
    from xqarb.broker import BrokerError, EmbeddedBroker
    from xqarb.ingest.outbox import OutboxPublisher
    from xqarb.vision.evidence import DirectoryEvidenceStore
    from xqarb.vision.service import VisionCore, run

    try:
        broker = EmbeddedBroker(log_path=tmp_path / "broker.log").start()
    except BrokerError as exc:
        pytest.skip(f"no embedded broker here: {exc}")
    core = VisionCore(DirectoryEvidenceStore(tmp_path / "evidence"), source="vision-test")
    handled: list[int] = []  # the camera numbers of the frames vision read (stepped its tracker with)
    reading, go, done = threading.Event(), threading.Event(), threading.Event()
    place, handle = core.place, core.handle

    def slow_place(e: Any, partition: int = 0) -> Any:
        if int(e.source_seq) == READ[-1] and not go.is_set():  # vision busy while the next frames come in
            reading.set()
            go.wait(30)
        return place(e, partition)

    def counted_handle(e: Any, partition: int = 0, at_us: int | None = None, stored: Any = None) -> list[Any]:
        handled.append(int(e.source_seq))
        return handle(e, partition, at_us, stored)

    core.place = slow_place  # type: ignore[method-assign]
    core.handle = counted_handle  # type: ignore[method-assign]
    failures: list[BaseException] = []

    def vision() -> None:
        try:
            run(broker.bootstrap, "vision-replay", core, stop=done.is_set, poll_s=0.2)
        except BaseException as exc:  # the test fails on it below
            failures.append(exc)

    def camera(seqs: range) -> None:
        for s in seqs:
            try:
                publisher.publish(bus.FRAMES, frame(s), 10.0)
            except BaseException as exc:  # the test fails on it below
                failures.append(exc)

    bus.ensure_topics(broker.bootstrap, partitions=2)
    publisher = OutboxPublisher.connect(broker.bootstrap, tmp_path / "outbox.sqlite", ack_timeout_s=10.0,
                                        replay_frames=True)
    assert publisher.frames is not None
    publisher.frames.hold_s = 30.0  # (a loaded machine restarts the broker slowly)
    t = threading.Thread(target=vision, daemon=True)
    before = missed()
    try:
        camera(READ)
        t.start()
        assert reading.wait(30), "vision did not read the first frames"
        time.sleep(0.5)  # (its fetch made before these frames were sent has had its empty answer)
        camera(UNREAD)  # acknowledged: the broker holds them, vision has not read them
        kill(broker)
        publisher.broker_down()  # as `xqarb up`'s supervisor says once it saw the broker dead
        late = threading.Thread(target=camera, args=(AFTER,), daemon=True)
        late.start()  # posted while the broker is down: they wait
        time.sleep(0.5)
        broker = EmbeddedBroker(broker.port, log_path=tmp_path / "broker2.log").start()  # same address, empty
        bus.ensure_topics(broker.bootstrap, partitions=2)
        publisher.broker_back()
        go.set()
        late.join(60)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (not handled or handled[-1] != AFTER[-1]) and t.is_alive():
            time.sleep(0.1)
        assert not failures
        assert t.is_alive(), "vision stopped"
        assert handled == list(range(AFTER[-1] + 1))  # every frame read once, in the camera's order
        assert missed() == before  # none never read
        assert publisher.frames.replayed == len(READ) + len(UNREAD)  # all kept were sent again
    finally:
        go.set()
        done.set()
        t.join(30)
        publisher.close()
        broker.stop()
    assert not failures
