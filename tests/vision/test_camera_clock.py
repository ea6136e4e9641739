"""A camera whose clock steps back mid-game (an NTP step) or that restarts (its count starts again with a greater
epoch) does not blind its board: over the real embedded broker with the real referee service, every move of the
game is made; the frames' count (source_seq, source_epoch) tells their order (order.py), ingest puts the epoch on
the frame."""

from __future__ import annotations

import functools
import threading
import time
from typing import Any

import pytest

from xqarb.events import Event, make_event
from xqarb.referee.rules import START_FEN

BOARD = "5"
STEP = 250_000  # 4 frames per second
MOVES = ["h2e2", "h9g7", "h0g2", "i9h9"]  # cannon to the centre, horses out, a rook
BEHIND_US = 5_000_000  # the camera's clock steps back 5 s (within ingest's allowed skew)
T0 = 1_764_460_800_000_000


@functools.cache
def _game(restart: bool) -> tuple[list[Any], list[Event], int]:
    """The game's frames (their truths, the FrameCaptured events, the index of the first frame after the step): the
    camera's clock 5 s back as the hand comes for ply 3, or the camera restarted then (count from 0, epoch 1)."""
    from xqarb.vision.render import jpeg, render_game

    video = list(render_game(START_FEN, MOVES, 11, fps=1e6 / STEP, difficulty="plain", misplace_rate=0.0,
                             nudge_rate=0.0))
    step_at = next(k for k in range(1, len(video))  # the hand comes for ply 3
                   if video[k].truth.ply == 2 and video[k].truth.hand_present and video[k - 1].truth.stable)
    frames = []
    for k, f in enumerate(video):
        stepped = k >= step_at
        seq, epoch = (k - step_at, 1) if restart and stepped else (k, 0)
        frames.append(make_event(
            "FrameCaptured", BOARD, source="cam-5", source_seq=seq, occurred_at=T0 + k * STEP - BEHIND_US * stepped,
            received_at=T0 + k * STEP, camera_id="cam-5", width=f.image.shape[1], height=f.image.shape[0],
            encoding="jpeg", image=jpeg(f.image), game_id="g1", source_epoch=epoch))
    return [f.truth for f in video], frames, step_at


def _steps() -> float:
    from prometheus_client import REGISTRY

    return REGISTRY.get_sample_value("xq_vision_camera_clock_steps_total") or 0.0


@pytest.mark.parametrize("restart", [False, True], ids=["ntp-step-back", "camera-restarts"])
def test_a_game_whose_camera_clock_steps_back_mid_game_is_followed_move_for_move(tmp_path, restart: bool) -> None:
    """Four plies at 4 frames a second; as the hand reaches for ply 3 the camera's clock goes 5 s back (or the
    camera restarts: its count from 0 again, epoch 1, its clock 5 s behind). Judged by capture time alone, every
    frame of ply 3's still board lies within those 5 s: the next still board read would be two moves on. The
    referee makes all four moves, with no AttentionNeeded; the step is counted once; the board's observations
    never go back in time."""
    from xqarb import bus
    from xqarb.broker import BrokerError, EmbeddedBroker
    from xqarb.referee.ledger import SqliteLedger
    from xqarb.referee.service import RefereeService
    from xqarb.vision.evidence import MemoryEvidenceStore
    from xqarb.vision.order import FrameOrder
    from xqarb.vision.service import VisionCore, run

    truths, frames, step_at = _game(restart)
    # (the case: by capture time alone the 5 s of frames after the step are skipped, ply 3's still board in them)
    by_time = FrameOrder()
    admitted = [by_time.place((0, BOARD), "g1", int(e.occurred_at)).admitted for e in frames]
    assert admitted == [not step_at <= k < step_at + BEHIND_US // STEP for k in range(len(frames))]
    assert not any(ok for ok, truth in zip(admitted, truths, strict=True) if truth.ply == 3 and truth.stable)

    try:
        broker = EmbeddedBroker(log_path=tmp_path / "broker.log").start()
    except BrokerError as exc:
        pytest.skip(f"no embedded broker here: {exc}")
    referee = vision = None
    done = threading.Event()
    steps_before = _steps()
    try:
        bus.ensure_topics(broker.bootstrap, partitions=1)
        referee = RefereeService(broker.bootstrap, SqliteLedger(tmp_path / "ledger.db"), poll_timeout_s=0.2,
                                 hold_s=0.3)
        threading.Thread(target=referee.run, daemon=True).start()
        with bus.Producer(broker.bootstrap, client_id="test") as producer:
            producer.send(bus.ARBITER, make_event(
                "GameStarted", BOARD, source="arbiter", source_seq=1, occurred_at=T0 - STEP, received_at=T0,
                game_id="g1", red_player="Red", black_player="Black",
                time_control={"scheme": "sudden_death", "base_ms": 3_600_000}))
            producer.send_many(bus.FRAMES, frames)
        core = VisionCore(MemoryEvidenceStore(), source="vision-test")
        vision = threading.Thread(target=lambda: run(broker.bootstrap, "vision-clock-test", core, stop=done.is_set,
                                                     poll_s=0.2), daemon=True)
        vision.start()
        got: list[Event] = []
        seen: list[Event] = []
        with bus.Reader(broker.bootstrap, [bus.GAME_EVENTS, bus.OBSERVATIONS]) as reader:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and sum(e.type == "MoveMade" for e in got) < len(MOVES):
                for r in reader.poll(0.3):
                    if r.event is not None:
                        (got if r.topic == bus.GAME_EVENTS else seen).append(r.event)
        assert [e.data["iccs"] for e in got if e.type == "MoveMade"] == MOVES
        assert [e.data["reason"] for e in got if e.type == "AttentionNeeded"] == []
        assert _steps() == steps_before + 1
        # the board's time line: the frames after the step go on one frame interval after the last one read
        times = [int(e.occurred_at) for e in seen if e.type != "CameraProgress"]
        assert times == sorted(times)
        end = T0 + (len(frames) - 1) * STEP
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and core.order.last((0, BOARD), "g1") != end:
            time.sleep(0.1)
        assert core.order.last((0, BOARD), "g1") == end
    finally:
        done.set()
        if vision is not None:
            vision.join(30)  # (its producer closed while the broker answers)
        if referee is not None:
            referee.stop()
        broker.stop()


def test_ingest_puts_the_camera_epoch_on_its_frames() -> None:
    """X-Sequence-Epoch travels on the FrameCaptured (source_epoch) to vision; a camera that gives none: 0."""
    import cv2
    import numpy as np

    from xqarb.ingest.validate import FrameRequest, frame_event

    jpg = bytes(cv2.imencode(".jpg", np.zeros((8, 8, 3), np.uint8))[1])

    def posted(headers: dict[str, str]) -> Event:
        req = FrameRequest("5", "cam-5", {"X-Capture-Time": str(T0), "X-Sequence": "3", **headers}, jpg)
        return frame_event(req, now_us=T0, max_skew_s=30).event

    assert posted({"X-Sequence-Epoch": "2"}).data["source_epoch"] == 2
    assert posted({}).data["source_epoch"] == 0


def test_the_same_frames_give_the_same_observations_at_the_board_time() -> None:
    """Determinism: the stepped game's frames read twice by fresh vision cores give the same observation events,
    byte for byte (ids, times, fields). Their times are the board's time line: after the step, the capture time
    plus the camera's 5 s (here the frames' true times), never going back."""
    from xqarb import codec
    from xqarb.vision.evidence import MemoryEvidenceStore
    from xqarb.vision.service import VisionCore

    _, frames, step_at = _game(False)

    def observations() -> list[Event]:
        core = VisionCore(MemoryEvidenceStore(), source="vision-test", now_us=lambda: 1)
        out: list[Event] = []
        for frame in frames:
            placed = core.place(frame)
            assert placed.admitted
            out += core.handle(frame, at_us=placed.at_us)
        return out

    first = observations()
    assert [codec.encode(e) for e in first] == [codec.encode(e) for e in observations()]
    assert "BoardStable" in [e.type for e in first]
    times = [int(e.occurred_at) for e in first]
    assert times == sorted(times)
    after = [e for e in first if e.source_seq // 16 >= step_at]
    assert after and all(int(e.occurred_at) == T0 + (e.source_seq // 16) * STEP for e in after)
