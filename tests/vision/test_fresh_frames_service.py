"""`vision serve` with no committed offset starts the frames near now, not at a retention's worth back (Apache
Kafka keeps xq.frames some 24 h); with a committed offset it resumes there, whatever the frames' age.

The embedded broker does not search by time (ListOffsets with a timestamp answers the log's first record:
tests/foundation/test_fresh_frames.py); here that one call is answered as Apache Kafka documents it, from the
records written (the first record stamped at or after the time, None where there is none)."""

from __future__ import annotations

import threading
import time
from typing import Any

import cv2
import pytest
from synthetic import START_SQUARES, draw_board

HOUR_MS = 3_600_000


def test_a_fresh_vision_group_reads_the_recent_frames_and_a_committed_one_resumes(tmp_path, monkeypatch) -> None:
    from kafka import KafkaConsumer, KafkaProducer
    from kafka import TopicPartition as KafkaTopicPartition
    from kafka.structs import OffsetAndTimestamp

    from xqarb import bus, codec
    from xqarb.broker import BrokerError, EmbeddedBroker
    from xqarb.events import make_event
    from xqarb.vision.evidence import DirectoryEvidenceStore
    from xqarb.vision.service import VisionCore, run

    try:
        broker = EmbeddedBroker(log_path=tmp_path / "broker.log").start()
    except BrokerError as exc:
        pytest.skip(f"no embedded broker here: {exc}")
    stored: dict[tuple[str, int], list[tuple[int, int]]] = {}

    def offsets_for_times(self: Any, timestamps: dict[Any, int]) -> dict[Any, Any]:
        answers: dict[Any, Any] = {}
        for tp, target in timestamps.items():
            later = [(o, ts) for o, ts in stored.get((tp.topic, tp.partition), []) if ts >= target]
            answers[tp] = OffsetAndTimestamp(*min(later), -1) if later else None
        return answers

    monkeypatch.setattr(KafkaConsumer, "offsets_for_times", offsets_for_times)
    done = threading.Event()
    try:
        bus.ensure_topics(broker.bootstrap, partitions=2)
        d = draw_board(START_SQUARES, seed=5, tilt=18, rotate=6, line_colour=(30, 30, 150), glare=False)
        _, jpg = cv2.imencode(".jpg", d.image, [cv2.IMWRITE_JPEG_QUALITY, 90])
        producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all")

        def send(k: int, stamped_ms: int) -> int:
            event = make_event("FrameCaptured", "board-1", source="cam-1", source_seq=k, occurred_at=k * 250_000,
                               received_at=k * 250_000, camera_id="cam-1", width=1280, height=720, encoding="jpeg",
                               image=bytes(jpg))
            meta = producer.send(bus.FRAMES, codec.encode(event), key=b"board-1", timestamp_ms=stamped_ms).get(10)
            stored.setdefault((meta.topic, meta.partition), []).append((meta.offset, stamped_ms))
            return meta.partition

        now_ms = int(time.time() * 1000)
        # three frames taken an hour ago (a day, on a venue's Kafka), then two of the last seconds
        [partition, *_] = [send(k, now_ms - HOUR_MS + k) for k in range(3)] + [send(k, now_ms - 2_000 + k)
                                                                              for k in (3, 4)]
        tp = KafkaTopicPartition(bus.FRAMES, partition)
        probe = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id="vision-test", enable_auto_commit=False)

        def serve(until: int) -> list[int]:
            """Run vision (a new process's core) until the group committed `until` on the frames' partition."""
            # (no still frames held back between moves: the commit tells which frames were read; in_progress.py)
            core = VisionCore(DirectoryEvidenceStore(tmp_path / "evidence"), source="vision-test", read_back_us=0)
            done.clear()
            handled: list[int] = []
            t = threading.Thread(target=lambda: handled.append(
                run(broker.bootstrap, "vision-test", core, stop=done.is_set, poll_s=0.5)), daemon=True)
            t.start()
            deadline = time.time() + 90
            while time.time() < deadline and (probe.committed(tp) or 0) < until:
                time.sleep(0.2)
            done.set()
            t.join(30)
            assert probe.committed(tp) == until
            return handled

        assert serve(until=5) == [2]  # the frames of the last seconds only
        # Frames stamped an hour ago again, after the group's commit: resumed from it, none skipped for their age.
        for k in (5, 6, 7):
            send(k, now_ms - HOUR_MS + k)
        assert serve(until=8) == [3]
        producer.close()
        probe.close()
    finally:
        done.set()
        broker.stop()
