"""`vision serve` against the embedded Kafka-compatible broker: frames in on xq.frames, observations out on
xq.observations (keyed by board), evidence frames in the directory; a corrupt frame gives a CameraFault; the
positions the arbiters and the referee hold come back to the board's tracker."""

from __future__ import annotations

import threading
import time

import cv2
import pytest
from synthetic import START_SQUARES, draw_board


def test_serve_round_trip(tmp_path) -> None:
    from xqarb import bus
    from xqarb.broker import BrokerError, EmbeddedBroker
    from xqarb.events import make_event
    from xqarb.vision.evidence import DirectoryEvidenceStore
    from xqarb.vision.service import VisionCore, run
    from xqarb.vision.tracker import squares_of_fen

    try:
        broker = EmbeddedBroker(log_path=tmp_path / "broker.log").start()
    except BrokerError as exc:
        pytest.skip(f"no embedded broker here: {exc}")
    try:
        bus.ensure_topics(broker.bootstrap, partitions=2)
        d = draw_board(START_SQUARES, seed=5, tilt=18, rotate=6, line_colour=(30, 30, 150), glare=False)
        _, jpg = cv2.imencode(".jpg", d.image, [cv2.IMWRITE_JPEG_QUALITY, 90])
        with bus.Producer(broker.bootstrap, client_id="cam-test") as prod:
            frames = [bytes(jpg)] * 5 + [b"\x00broken"]
            prod.send_many(bus.FRAMES, [
                make_event("FrameCaptured", "board-1", source="cam-1", source_seq=k, occurred_at=k * 250_000,
                           received_at=k * 250_000, camera_id="cam-1", width=1280, height=720, encoding="jpeg",
                           image=data)
                for k, data in enumerate(frames)])
        store = DirectoryEvidenceStore(tmp_path / "evidence")
        core = VisionCore(store, source="vision-test")
        done = threading.Event()
        handled: list[int] = []
        t = threading.Thread(target=lambda: handled.append(
            run(broker.bootstrap, "vision-test", core, stop=done.is_set, poll_s=0.5)), daemon=True)
        t.start()
        seen = []
        reader = bus.Reader(broker.bootstrap, [bus.OBSERVATIONS])
        deadline = time.time() + 90
        while time.time() < deadline and not any(r.event.type == "CameraFault" for r in seen if r.event):
            seen.extend(reader.poll(1.0))
        reader.close()
        # An arbiter's restored position (xq.arbiter, same board, same partition number) becomes the board's known
        # position in the tracker: the service reads the positions the referee and the arbiters hold.
        restored = "3k5/9/9/9/9/9/9/9/9/4K4 w - - 0 1"
        with bus.Producer(broker.bootstrap, client_id="arbiter-test") as prod:
            prod.send(bus.ARBITER, make_event("PositionRestored", "board-1", source="arbiter-1", source_seq=1,
                                              occurred_at=2_000_000, received_at=2_000_000, fen=restored,
                                              article="5.8.2", game_id=None))
        deadline = time.time() + 60
        while time.time() < deadline and not any(
                slot.state.known == squares_of_fen(restored) for slot in core.boards.values()):
            time.sleep(0.2)
        assert [slot.state.known for slot in core.boards.values()] == [squares_of_fen(restored)]
        # The referee's AttentionNeeded for a board change it could not follow (xq.game-events), with the position it
        # holds: the board's tracker is to read its next still board again from there.
        with bus.Producer(broker.bootstrap, client_id="referee-test") as prod:
            prod.send(bus.GAME_EVENTS, make_event("AttentionNeeded", "board-1", source="referee-1", source_seq=1,
                                                  occurred_at=2_500_000, received_at=2_500_000, game_id=None,
                                                  reason="board change is no single legal move", evidence=[],
                                                  fen=restored))
        deadline = time.time() + 60
        while time.time() < deadline and not any(slot.state.held == restored for slot in core.boards.values()):
            time.sleep(0.2)
        assert [slot.state.held for slot in core.boards.values()] == [restored]
        done.set()
        t.join(30)
        # How far the board's frames are read (CameraProgress) comes with its first frame, then once a second.
        assert "CameraProgress" in [r.event.type for r in seen if r.event]
        seen = [r for r in seen if r.event and r.event.type != "CameraProgress"]
        types = [r.event.type for r in seen]
        assert types == ["BoardCalibrated", "BoardStable", "CameraFault"], types
        assert all(r.key == "board-1" for r in seen)
        stable = seen[1].event
        assert stable.data["squares"] == START_SQUARES
        assert store.get(stable.data["frame_sha256"]) == bytes(jpg)
        assert handled == [6]
    finally:
        broker.stop()


def test_a_frame_older_than_one_read_is_skipped_and_committed(tmp_path) -> None:
    """A board's frame that comes after a later one (acknowledged late into a rolled-away frames topic, or sent
    again after a broker restart) is not stepped: the board's tracker state stays as it was, the frame is counted
    and its offset committed; a frame captured later is stepped again."""
    from kafka import KafkaConsumer
    from kafka import TopicPartition as KafkaTopicPartition
    from prometheus_client import REGISTRY

    from xqarb import bus
    from xqarb.broker import BrokerError, EmbeddedBroker
    from xqarb.events import make_event
    from xqarb.vision.evidence import DirectoryEvidenceStore
    from xqarb.vision.service import VisionCore, run

    def frame(k: int, at_us: int, data: bytes):
        return make_event("FrameCaptured", "board-1", source="cam-1", source_seq=k, occurred_at=at_us,
                          received_at=at_us, camera_id="cam-1", width=1280, height=720, encoding="jpeg",
                          image=data, game_id="g1")

    def skipped() -> float:
        return REGISTRY.get_sample_value("xq_vision_frames_out_of_order_total") or 0.0

    try:
        broker = EmbeddedBroker(log_path=tmp_path / "broker.log").start()
    except BrokerError as exc:
        pytest.skip(f"no embedded broker here: {exc}")
    done = threading.Event()
    try:
        bus.ensure_topics(broker.bootstrap, partitions=2)
        d = draw_board(START_SQUARES, seed=5, tilt=18, rotate=6, line_colour=(30, 30, 150), glare=False)
        _, jpg = cv2.imencode(".jpg", d.image, [cv2.IMWRITE_JPEG_QUALITY, 90])
        prod = bus.Producer(broker.bootstrap, client_id="cam-test")
        # (the camera numbers its frames 0, 2, 4, ...: the frame numbered between two of them comes late)
        [first, *_] = prod.send_many(bus.FRAMES, [frame(2 * k, k * 250_000, bytes(jpg)) for k in range(5)])
        # (no still frames held back between moves: the commit tells which frames were read; in_progress.py)
        core = VisionCore(DirectoryEvidenceStore(tmp_path / "evidence"), source="vision-test", read_back_us=0)
        handled: list[int] = []
        t = threading.Thread(target=lambda: handled.append(
            run(broker.bootstrap, "vision-test", core, stop=done.is_set, poll_s=0.5)), daemon=True)
        t.start()
        tp = KafkaTopicPartition(bus.FRAMES, first.partition)
        probe = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id="vision-test", enable_auto_commit=False)

        def committed_to(offset: int) -> None:
            deadline = time.time() + 90
            while time.time() < deadline and (probe.committed(tp) or 0) < offset:
                time.sleep(0.2)
            assert probe.committed(tp) == offset

        committed_to(5)
        [slot] = core.boards.values()
        assert slot.state.known is not None  # the start position seen: the board is followed
        state, before = slot.state, skipped()
        # A broken frame captured between two frames already read: stepped, it would be a CameraFault
        prod.send(bus.FRAMES, frame(5, 600_000, b"\x00broken"))  # (its number: between two frames read)
        committed_to(6)
        assert slot.state is state
        assert skipped() == before + 1
        # the same frame of the next moment is stepped (the guard lets later frames by)
        prod.send(bus.FRAMES, frame(10, 1_250_000, b"\x00broken"))
        committed_to(7)
        prod.close()
        probe.close()
        done.set()
        t.join(30)
        assert handled == [6]
        with bus.Reader(broker.bootstrap, [bus.OBSERVATIONS]) as reader:
            seen = []
            deadline = time.time() + 30
            while time.time() < deadline and not any(r.event and r.event.type == "CameraFault" for r in seen):
                seen.extend(reader.poll(1.0))
        faults = [r.event.occurred_at for r in seen if r.event and r.event.type == "CameraFault"]
        assert faults == [1_250_000]
    finally:
        done.set()
        broker.stop()


def test_a_vision_process_makes_missing_topics_with_the_venues_partitions(tmp_path) -> None:
    # A vision process starting while the embedded broker restarts empty makes the topics before `up` does: with
    # the venue's partition count (`vision serve --partitions`, passed by `up`), not the default 12.
    from xqarb import bus
    from xqarb.broker import BrokerError, EmbeddedBroker
    from xqarb.vision.evidence import DirectoryEvidenceStore
    from xqarb.vision.service import VisionCore, run

    try:
        broker = EmbeddedBroker(log_path=tmp_path / "broker.log").start()
    except BrokerError as exc:
        pytest.skip(f"no embedded broker here: {exc}")
    try:
        core = VisionCore(DirectoryEvidenceStore(tmp_path / "evidence"), source="vision-test")
        assert run(broker.bootstrap, "vision-test", core, stop=lambda: True, partitions=2) == 0
        counts = bus.ensure_topics(broker.bootstrap, partitions=5)  # (finds them: nothing made again)
        assert {counts[t] for t in bus.TOPICS} == {2}, counts
    finally:
        broker.stop()
