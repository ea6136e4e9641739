"""Ingest's camera frames to a broker that may restart empty: sent again, in order, before any new frame.

Frames go straight to the broker (they are many, and only worth something while fresh: never queued on disk, unlike
the outbox's inputs), and each one acknowledged is kept FRAME_REPLAY_S (frames_kept.py). Whoever restarts an
in-memory broker (`xqarb up`'s supervisor, for the embedded broker) says so:
  * `broker_down()`: the frames producer is closed at once, so that a frame still on its way cannot reach the
    restarted broker ahead of the ones it lost (vision would then skip those as older than a frame it read); those
    frames are answered 503 (counted, xq_frames_dropped_total{reason="not_acknowledged"}). Frames posted from then on
    wait for the broker, FRAME_HOLD_S at most (else 503, counted as "broker_restarting").
  * `broker_back()`: a new producer sends the kept frames again, in the order the lost broker acknowledged them, then
    the frames that waited go on. Vision skips the frames it had read already by their camera's count
    (services/vision/order.py), so none is read twice; the rest, unread when the broker died, are read in order.
Kept frames the vision group has committed are forgotten (its commits asked every READ_CHECK_S): what goes again is
what vision had not read a second before the broker died, not the whole FRAME_REPLAY_S of every camera.
Counted: xq_ingest_frames_replayed_total (sent again), xq_ingest_frames_replay_forgotten_total (not kept for want of
room, FRAME_REPLAY_MAX_BYTES), xq_ingest_frames_kept_bytes.

A broker that keeps its log (Apache Kafka) loses nothing when it restarts: nobody calls these, nothing is sent again.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from prometheus_client import Counter, Gauge

from xqarb import bus
from xqarb.bus import LogCommits
from xqarb.ingest.app import BrokerUnavailable, Stored
from xqarb.ingest.frames_kept import FrameKeep, Where
from xqarb.ingest.outbox import FRAMES_DROPPED

log = logging.getLogger(__name__)

# How long a frame posted while the broker restarts waits for it, and for the frames sent again, before it is refused
# (503): `xqarb up` has the embedded broker back within 1-2 s (bench/supervise_recovery.py), and 30 s of frames of a
# few boards go again in a second or two. A frame held longer is stale: the camera's next frames show the board.
FRAME_HOLD_S = 5.0
# Frames sent again per batch (each batch acknowledged before the next): a few MB, within the producer's timeout.
REPLAY_BATCH = 100
# Between tries to connect a producer to a broker just restarted (it may not take connections yet).
CONNECT_RETRY_S = 0.5
# How often the vision group's commits are asked, to forget the kept frames it has read: a frame read in the last
# second before a broker dies is sent again, and vision skips it by its camera's count.
READ_CHECK_S = 1.0

FRAMES_REPLAYED = Counter(
    "xq_ingest_frames_replayed_total", "camera frames sent again to a broker that restarted empty"
)
FRAMES_REPLAY_FORGOTTEN = Counter(
    "xq_ingest_frames_replay_forgotten_total",
    "camera frames not kept to be sent again after a broker restart, for want of room (FRAME_REPLAY_MAX_BYTES)",
)
FRAMES_KEPT_BYTES = Gauge("xq_ingest_frames_kept_bytes", "bytes of camera frames kept to be sent again")

OPEN, DOWN, REPLAYING = "open", "down", "replaying"


class FrameReplay:
    """Frames to the broker, kept, and sent again after `broker_back()`; thread-safe (request threads publish)."""

    def __init__(self, connect: Callable[[], Any], *, keep: FrameKeep | None = None, hold_s: float = FRAME_HOLD_S,
                 wall_clock: Callable[[], float] = time.time, read_commits: LogCommits | None = None,
                 close_commits: Callable[[], None] | None = None, read_check_s: float = READ_CHECK_S) -> None:
        self._connect = connect  # a new bus.Producer (or alike: send, send_many, close(timeout_s))
        # the vision group's commits ((topic, partition) -> next offset it reads): the frames it read are forgotten
        self._read_commits = read_commits
        self._close_commits = close_commits
        self.read_check_s = read_check_s
        self.read = 0  # kept frames forgotten because vision had read them
        self.keep = keep if keep is not None else FrameKeep()
        self.hold_s = hold_s
        self.wall_clock = wall_clock
        self.replayed = 0  # frames sent again
        self.forgotten = 0  # frames not kept for want of room
        self._cond = threading.Condition()
        self._state = OPEN
        self._generation = 0  # one per broker_down / broker_back: a replay of an older one stops
        self._stop = threading.Event()
        self._producer: Any = connect()
        self._thread: threading.Thread | None = None
        self._reads: threading.Thread | None = None
        if read_commits is not None:
            self._reads = threading.Thread(target=self._forget_read, name="xq-ingest-frames-read", daemon=True)
            self._reads.start()

    @property
    def state(self) -> str:
        return self._state

    def publish(self, topic: str, event: Any, timeout: float) -> Stored:
        """Send one frame and wait for its acknowledgement (waiting first, `hold_s` at most, while the broker
        restarts and the kept frames go again); BrokerUnavailable where it was not acknowledged."""
        with self._cond:
            deadline = time.monotonic() + min(timeout, self.hold_s)
            while self._state != OPEN:
                left = deadline - time.monotonic()
                if left <= 0 or self._stop.is_set():
                    FRAMES_DROPPED.labels("broker_restarting").inc()
                    raise BrokerUnavailable(
                        f"the broker is restarting ({self._state}); a frame waits for it {self.hold_s:.0f} s at most"
                    )
                self._cond.wait(left)
            producer = self._producer
        if producer is None:  # (closed: ingest is stopping)
            FRAMES_DROPPED.labels("not_acknowledged").inc()
            raise BrokerUnavailable("ingest is stopping: the frame was not sent")
        try:
            delivery = producer.send(topic, event)
        except bus.PublishError as exc:
            FRAMES_DROPPED.labels("not_acknowledged").inc()
            raise BrokerUnavailable(f"the broker did not acknowledge the frame: {exc}") from exc
        image = event.data.get("image") or b""
        where = (delivery.topic, delivery.partition, delivery.offset)
        with self._cond:
            forgotten = self.keep.keep(event, len(image), self.wall_clock(), where)
            self.forgotten += forgotten
            FRAMES_KEPT_BYTES.set(self.keep.bytes)
        if forgotten:
            FRAMES_REPLAY_FORGOTTEN.inc(forgotten)
        return Stored(delivery.partition, delivery.offset, delivery.topic)

    def broker_down(self) -> None:
        """The broker died (it will come back empty): frames wait from now on, and those on their way are given up
        (503) rather than reach the restarted broker before the ones it lost."""
        with self._cond:
            self._generation += 1
            self._state = DOWN
            producer, self._producer = self._producer, None
        if producer is not None:
            producer.close(timeout_s=0)
        log.warning("ingest: the broker went down; frames wait for it (%.0f s at most), %d kept (%.1f MB) to send "
                    "again", self.hold_s, len(self.keep), self.keep.bytes / 1e6)

    def broker_back(self) -> None:
        """The broker is back, empty, its topics made again: the kept frames go again, in order, then new ones."""
        with self._cond:
            self._generation += 1
            self._state = REPLAYING
            generation = self._generation
        self._thread = threading.Thread(target=self._replay, args=(generation,), name="xq-ingest-frame-replay",
                                        daemon=True)
        self._thread.start()

    def _replay(self, generation: int) -> None:
        producer = self._producer_for(generation)
        if producer is None:
            return
        with self._cond:
            if generation != self._generation:  # down again meanwhile
                producer.close(timeout_s=0)
                return
            old, self._producer = self._producer, producer
            frames = self.keep.frames(self.wall_clock())
        if old is not None and old is not producer:
            old.close(timeout_s=0)
        sent = 0
        t0 = time.monotonic()
        moved: dict[str, Where] = {}  # event id -> where the restarted broker stores it
        try:
            for start in range(0, len(frames), REPLAY_BATCH):
                if generation != self._generation or self._stop.is_set():
                    break
                batch = frames[start:start + REPLAY_BATCH]
                for event, d in zip(batch, producer.send_many(bus.FRAMES, batch), strict=True):
                    moved[event.event_id] = (d.topic, d.partition, d.offset)
                sent += len(batch)
        except bus.PublishError as exc:
            log.warning("ingest: %d of %d kept frames sent again before the broker failed: %s", sent, len(frames), exc)
        finally:
            self.replayed += sent
            FRAMES_REPLAYED.inc(sent)
            with self._cond:
                self.keep.moved(moved)  # (their offsets in the lost broker mean nothing in the new one)
                if generation == self._generation:
                    self._state = OPEN
                    self._cond.notify_all()
        log.warning("ingest: the broker restarted empty: %d frames of the last %.0f s sent again in %.2f s",
                    sent, self.keep.keep_s, time.monotonic() - t0)

    def _producer_for(self, generation: int) -> Any:
        """A producer connected to the restarted broker (tried until it connects, or the broker goes down again)."""
        while generation == self._generation and not self._stop.is_set():
            try:
                return self._connect()
            except bus.BusError as exc:
                log.warning("ingest: no frames producer for the restarted broker yet: %s", exc)
                self._stop.wait(CONNECT_RETRY_S)
        return None

    def _forget_read(self) -> None:
        """Every `read_check_s` while the broker is up: forget the kept frames the vision group has committed."""
        assert self._read_commits is not None
        while not self._stop.wait(self.read_check_s):
            with self._cond:
                partitions = self.keep.partitions() if self._state == OPEN else []
                generation = self._generation
            if not partitions:
                continue
            try:
                commits = self._read_commits(partitions)
            except bus.BusError as exc:  # (kept a while longer: nothing is lost by not forgetting)
                log.info("ingest: the vision group's commits were not read: %s", exc)
                continue
            with self._cond:
                if generation != self._generation:
                    continue  # asked of a broker that has died since: its offsets are not the kept frames' now
                read = self.keep.forget_read(commits)
                self.read += read
                FRAMES_KEPT_BYTES.set(self.keep.bytes)

    def close(self) -> None:
        self._stop.set()
        with self._cond:
            self._generation += 1
            producer, self._producer = self._producer, None
            self._cond.notify_all()
        for thread in (self._thread, self._reads):
            if thread is not None:
                thread.join(timeout=5.0)
        if producer is not None:
            producer.close()
        if self._close_commits is not None:
            self._close_commits()
