"""Ingest's frames across a broker restart, without a broker (services/ingest/frame_replay.py): the producer of a
dead broker is closed at once, frames posted meanwhile wait, the kept frames go again in order on a new producer
before them, and a frame that waits too long is refused and counted."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from xqarb import bus
from xqarb.events import make_event
from xqarb.ingest.app import BrokerUnavailable
from xqarb.ingest.frame_replay import DOWN, OPEN, FrameReplay
from xqarb.ingest.frames_kept import FrameKeep


class FakeProducer:
    """Acknowledges every frame into one shared log of (producer number, camera number); `closed` with its
    timeout."""

    def __init__(self, number: int, log: list[tuple[int, int]]) -> None:
        self.number, self.log = number, log
        self.closed: float | None = None

    def send(self, topic: str, event: Any) -> bus.Delivery:
        if self.closed is not None:
            raise bus.PublishError("closed")
        self.log.append((self.number, int(event.source_seq)))
        return bus.Delivery(topic, 0, len(self.log) - 1)

    def send_many(self, topic: str, events: list[Any]) -> list[bus.Delivery]:
        return [self.send(topic, e) for e in events]

    def close(self, timeout_s: float | None = None) -> None:
        self.closed = timeout_s


def frame(seq: int) -> Any:
    at = 1_767_225_600_000_000 + seq * 500_000
    return make_event("FrameCaptured", "7", source="cam-7", source_seq=seq, occurred_at=at, received_at=at,
                      camera_id="cam-7", width=8, height=8, encoding="jpeg", image=b"x" * 100, source_epoch=0)


def dropped(reason: str) -> float:
    from prometheus_client import REGISTRY

    return REGISTRY.get_sample_value("xq_frames_dropped_total", {"reason": reason}) or 0.0


def replayer(hold_s: float = 5.0) -> tuple[FrameReplay, list[FakeProducer], list[tuple[int, int]]]:
    log: list[tuple[int, int]] = []
    made: list[FakeProducer] = []

    def connect() -> FakeProducer:
        made.append(FakeProducer(len(made), log))
        return made[-1]

    clock = iter(range(1_000, 10_000))
    return FrameReplay(connect, keep=FrameKeep(keep_s=30.0, max_bytes=10_000), hold_s=hold_s,
                       wall_clock=lambda: float(next(clock))), made, log


def test_kept_frames_go_again_in_order_before_the_frames_that_waited() -> None:
    frames, made, log = replayer()
    for s in range(5):
        frames.publish(bus.FRAMES, frame(s), 10.0)
    frames.broker_down()
    assert frames.state == DOWN and made[0].closed == 0  # given up at once: nothing on its way reaches the new one
    waiting = threading.Thread(target=frames.publish, args=(bus.FRAMES, frame(5), 10.0))
    waiting.start()
    time.sleep(0.2)
    assert log == [(0, s) for s in range(5)]  # the frame posted meanwhile waits
    frames.broker_back()
    waiting.join(5)
    assert frames.state == OPEN
    # on the new producer: the five kept, in their order, then the one that waited
    assert log[5:] == [(1, s) for s in range(6)]
    assert frames.replayed == 5
    frames.close()
    with pytest.raises(BrokerUnavailable, match="stopping"):  # closed: a 503, never a 500
        frames.publish(bus.FRAMES, frame(6), 10.0)


def test_a_frame_that_waits_past_the_hold_is_refused_and_counted() -> None:
    frames, _, log = replayer(hold_s=0.2)
    frames.broker_down()
    before = dropped("broker_restarting")
    with pytest.raises(BrokerUnavailable, match="restarting"):
        frames.publish(bus.FRAMES, frame(0), 10.0)
    assert dropped("broker_restarting") == before + 1
    assert log == []
    frames.close()


def test_a_broker_down_again_during_the_replay_keeps_frames_waiting() -> None:
    frames, made, _ = replayer()
    frames.publish(bus.FRAMES, frame(0), 10.0)
    frames.broker_down()
    frames.broker_back()
    frames.broker_down()  # (before or after the replay's producer came: the gate is closed either way)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and frames._thread is not None and frames._thread.is_alive():
        time.sleep(0.01)
    assert frames.state == DOWN
    assert all(p.closed == 0 for p in made)
    frames.close()


def test_frames_vision_committed_are_not_sent_again() -> None:
    log: list[tuple[int, int]] = []
    made: list[FakeProducer] = []
    asked: list[list[tuple[str, int]]] = []

    def connect() -> FakeProducer:
        made.append(FakeProducer(len(made), log))
        return made[-1]

    def commits(partitions: Any) -> dict[tuple[str, int], int | None]:
        asked.append(list(partitions))
        return {(bus.FRAMES, 0): 3}  # vision read offsets 0-2

    frames = FrameReplay(connect, keep=FrameKeep(keep_s=30.0, max_bytes=10_000), read_commits=commits,
                         read_check_s=0.05)
    for s in range(5):
        frames.publish(bus.FRAMES, frame(s), 10.0)  # stored at offsets 0-4
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and frames.read < 3:
        time.sleep(0.02)
    assert frames.read == 3 and asked[0] == [(bus.FRAMES, 0)]
    frames.broker_down()
    frames.broker_back()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and frames.state != OPEN:
        time.sleep(0.02)
    assert log[5:] == [(1, 3), (1, 4)]  # only the two vision had not read
    frames.close()
