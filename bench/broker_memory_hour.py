"""The embedded broker's memory over a long run of camera frames through `xqarb up`'s real path.

    nice -n 19 .venv/bin/python bench/broker_memory_hour.py [--minutes 60] [--boards 8] [--fps 2] [--no-roll]

What `xqarb up` does, minus the HTTP server and the vision CPU: the embedded broker with its topics and its
`FramesRoller`, ingest (`Ingest` app, `OutboxPublisher`, its Flask routes through a test client), one camera
thread per board posting JPEGs of the demo's size (~80 KB; synthetic: the broker does not look inside) at `--fps`
and waiting for each answer as a camera does, and a stand-in vision: a `bus.Consumer` in group xq-vision on
xq.frames, xq.game-events and xq.arbiter that decodes and commits every batch. Every minute one JSON line: the
broker's resident memory (VmRSS, MB) now and its highest over the minute, frames accepted (202), consumed, out
of board order, rolls, frames dropped unread. At the end: accepted frames never consumed (must be 0 unless
dropped by the roller, counted).
`--no-roll` runs the broker as before (no second topic), for the unbounded baseline.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from probe import rss_mb

from xqarb import bus
from xqarb.broker import EmbeddedBroker, FramesRoller

JPEG_KB = 80  # the demo's frames: 98 MB of evidence for 1,200 frames (4 boards, 2 fps, 150 s)
PEEK_S = 5.0  # how often the broker's memory is looked at between lines
POOL = 8  # distinct frames cycled through (the broker does not care about content)



def frame_pool(kb: int = JPEG_KB, count: int = POOL) -> list[bytes]:
    """1280x720 JPEGs of about `kb` KB: smooth noise, quality searched down from 95."""
    rng = np.random.default_rng(7)
    pool = []
    for _ in range(count):
        small = rng.integers(0, 255, (90, 160, 3), dtype=np.uint8)
        img = cv2.resize(small, (1280, 720), interpolation=cv2.INTER_CUBIC)
        for quality in range(95, 10, -5):
            ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, quality])
            assert ok
            if len(buf) <= kb * 1024:
                break
        pool.append(buf.tobytes())
    return pool


class Vision:
    """The stand-in vision process: consumes frames like `xqarb.vision.service.run`, without looking at them."""

    def __init__(self, bootstrap: str) -> None:
        self.assignments = 0  # rebalances that reached this member (vision drops its boards' state on each)
        self.consumer = bus.Consumer(bootstrap, bus.VISION_GROUP, [bus.FRAMES, bus.GAME_EVENTS, bus.ARBITER],
                                     on_assigned=self.assigned)
        self.seen: set[str] = set()
        self.last_seq: dict[str, int] = {}
        self.out_of_order = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def assigned(self, partitions: list[bus.TopicPartition]) -> None:
        self.assignments += 1

    def run(self) -> None:
        while not self.stop.is_set():
            records = self.consumer.poll(0.5, max_records=64)
            for r in records:
                e = r.event
                if e is None or e.type != "FrameCaptured":
                    continue
                self.seen.add(e.event_id)
                seq = int(e.source_seq)  # the camera's X-Sequence: a board's frames must come in this order
                if seq < self.last_seq.get(e.board_id, 0):
                    self.out_of_order += 1
                self.last_seq[e.board_id] = seq
            if records:
                self.consumer.commit()
        self.consumer.close()


def camera(client: Any, board: str, token: str, fps: float, pool: list[bytes], stop: threading.Event,
           accepted: dict[str, str], refused: list[int]) -> None:
    seq = 0
    period = 1.0 / fps
    next_at = time.monotonic()
    while not stop.is_set():
        seq += 1
        headers = {"Authorization": f"Bearer {token}", "X-Capture-Time": str(time.time_ns() // 1000),
                   "X-Sequence": str(seq), "Content-Type": "image/jpeg"}
        r = client.post(f"/ingest/v1/boards/{board}/frames", data=pool[seq % len(pool)], headers=headers)
        if r.status_code == 202:
            accepted[r.get_json()["event_id"]] = board
        else:
            refused.append(r.status_code)
        next_at += period
        stop.wait(max(0.0, next_at - time.monotonic()))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=60)
    parser.add_argument("--boards", type=int, default=8)
    parser.add_argument("--fps", type=float, default=2.0)
    parser.add_argument("--sample-s", type=float, default=60.0)
    parser.add_argument("--no-roll", action="store_true", help="no FramesRoller (the broker as before)")
    args = parser.parse_args()
    # The roller's and the consumers' notes (emptied topics, frames dropped) on stderr, with their time.
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("xqarb").setLevel(logging.INFO)
    from xqarb.ingest.app import create_app
    from xqarb.ingest.config import generate_config, parse_config
    from xqarb.ingest.outbox import OUTBOX_FILE, OutboxPublisher

    pool = frame_pool()
    data = Path(tempfile.mkdtemp(prefix="xq-broker-hour-"))
    with EmbeddedBroker() as broker:
        assert broker._process is not None
        pid = broker._process.pid
        bus.ensure_topics(broker.bootstrap)  # as `xqarb up`
        roller = None if args.no_roll else FramesRoller(broker.bootstrap, partitions=bus.DEFAULT_PARTITIONS).start()
        raw = generate_config([str(i) for i in range(1, args.boards + 1)])
        config = parse_config(raw)
        publisher = OutboxPublisher.connect(broker.bootstrap, data / OUTBOX_FILE,
                                            ack_timeout_s=config.limits.ack_timeout_s)
        app = create_app(config, publisher)
        vision = Vision(broker.bootstrap)
        vision.thread.start()
        stop = threading.Event()
        accepted: dict[str, str] = {}
        refused: list[int] = []
        cams = []
        for board, spec in raw["boards"].items():
            token = spec["devices"][f"cam-{board}"]
            t = threading.Thread(target=camera, args=(app.test_client(), board, token, args.fps, pool, stop,
                                                      accepted, refused), daemon=True)
            t.start()
            cams.append(t)
        print(json.dumps({"start": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "boards": args.boards,
                          "fps": args.fps, "frame_bytes": [len(f) for f in pool], "roll": not args.no_roll,
                          "roll_s": bus.FRAMES_ROLL_S}), flush=True)
        t0 = time.monotonic()
        end = t0 + args.minutes * 60

        highest = [0.0]  # the highest RSS since the last line (looked at every PEEK_S: frames roll every 60 s)

        def sample() -> None:
            print(json.dumps({
                "min": round((time.monotonic() - t0) / 60, 1), "rss_mb": round(rss_mb(pid), 1),
                "rss_max_mb": round(max(highest[0], rss_mb(pid)), 1),
                "accepted": len(accepted), "refused": len(refused), "consumed": len(vision.seen),
                "out_of_order": vision.out_of_order, "assignments": vision.assignments,
                "rolls": roller.rolls if roller else 0, "dropped_unread": roller.expired if roller else 0,
                "cpu_s": round(time.process_time(), 1),
            }), flush=True)

        sample()
        next_line = t0 + args.sample_s
        while time.monotonic() < end:
            time.sleep(min(PEEK_S, max(0.0, end - time.monotonic())))
            highest[0] = max(highest[0], rss_mb(pid))
            if time.monotonic() >= min(next_line, end):
                sample()
                highest[0] = 0.0
                next_line += args.sample_s
        stop.set()
        for t in cams:
            t.join(15)
        time.sleep(5)  # the last frames consumed
        vision.stop.set()
        vision.thread.join(15)
        lost = [e for e in accepted if e not in vision.seen]
        print(json.dumps({"end": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "accepted": len(accepted),
                          "consumed": len(vision.seen), "accepted_not_consumed": len(lost),
                          "dropped_unread": roller.expired if roller else 0, "refused": len(refused),
                          "out_of_order": vision.out_of_order, "assignments": vision.assignments,
                          "rss_mb": round(rss_mb(pid), 1)}), flush=True)
        if roller is not None:
            roller.stop()
        publisher.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
