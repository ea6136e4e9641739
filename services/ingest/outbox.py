"""Ingest's durable outbox: what ingest answers 202 to is on disk before the answer, and reaches Kafka from there.

Clock presses, arbiter actions, scoresheet entries and catalogue events are written to a local SQLite table (WAL,
`synchronous=FULL`: the commit is fsync'd before `put` returns) and a background thread publishes them in the
order they were written, retrying with backoff while the broker is away. An entry the broker acknowledged is kept
for `KEEP_ACKED_S` more: a broker whose log starts over (the embedded one keeps its topics in memory) is noticed
(the log is empty or ends before where it ended, or a new acknowledgement goes back), and the kept entries are
sent again. A broker that dies and comes back therefore loses none of them; an ingest process that dies
re-publishes on its next start whatever is left. A message may reach Kafka twice (acknowledged, then the process
died before marking it, or sent again after a restart of the broker): the referee drops doubles by event id.

Order per board: entries go out strictly in the order of their row ids (one thread, one producer with one request
in flight per connection); after a failed send only the acknowledged prefix of the batch is removed, and the rest
is sent again from the first failure on.

Frames are not kept here: they are many and each is only worth something while it is fresh, so under pressure
(broker away) a frame is refused at once with 503 and counted (`xq_frames_dropped_total`), never queued. Against a
broker that restarts empty (the embedded one) they are kept in memory for a while and sent again after its restart
(frame_replay.py).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from prometheus_client import Counter, Gauge

from xqarb import bus, codec
from xqarb.events import Event
from xqarb.ingest.app import BrokerUnavailable, Stored

if TYPE_CHECKING:  # (frame_replay imports this module's counters)
    from xqarb.ingest.frame_replay import FrameReplay

log = logging.getLogger(__name__)

# How many entries one publishing round sends before waiting for their acknowledgements: large enough that a
# backlog after an outage drains in seconds, small enough that one round's wait stays short.
BATCH_SIZE = 500
# In a folder of the data directory: the ledger stays the one *.sqlite file at its top (tools look for it there).
OUTBOX_FILE = "outbox/ingest.sqlite"
# How long stopping waits for a publishing round in progress (a stop must stay prompt: nothing is lost by not
# waiting, the entries stay in the outbox for the next start).
CLOSE_WAIT_S = 5.0
# Backoff between publishing rounds that failed (broker away): from the first to the most, doubling.
RETRY_FIRST_S = 0.2
RETRY_MAX_S = 5.0
# How long an acknowledged entry is kept, to be sent again should the broker lose it (the embedded broker keeps
# its topics in memory: one that dies loses what it acknowledged and nobody read yet). The referee reads its inputs
# within seconds; two minutes also cover a broker restarted by a supervisor with backoff.
KEEP_ACKED_S = 120.0
# How often, while acknowledged entries are kept, the outbox asks the broker where its logs end: a log that is
# empty, or ends before where it ended at the last check, has started over (lost them).
CHECK_LOG_S = 1.0
# The most entries the outbox holds before ingest answers 503 (backpressure instead of filling the disk): at a
# venue's rate of a few clock presses and actions per board-minute this is hours of a broker outage.
MAX_BACKLOG = 200_000
# How long a request waits for the broker's acknowledgement of its own entry, while the broker answers, so that
# the 202 can still say where it was stored; past that (or while the broker is away) the 202 says "queued".
CONFIRM_WAIT_S = 2.0

OUTBOX_PENDING = Gauge("xq_ingest_outbox_pending", "entries in ingest's durable outbox not yet acknowledged by Kafka")
OUTBOX_PUBLISHED = Counter("xq_ingest_outbox_published_total", "outbox entries acknowledged by Kafka and removed")
OUTBOX_RESENT = Counter(
    "xq_ingest_outbox_resent_total", "acknowledged outbox entries sent again because the broker lost them"
)
OUTBOX_FAILURES = Counter("xq_ingest_outbox_send_failures_total", "outbox sends the broker did not acknowledge")
FRAMES_DROPPED = Counter(
    "xq_frames_dropped_total", "camera frames refused with 503 because the broker was away or slow", ["reason"]
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS outbox (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    topic     TEXT NOT NULL,
    key       TEXT,
    value     BLOB NOT NULL,
    acked_at  REAL            -- NULL while waiting for the broker; then kept KEEP_ACKED_S in case it loses it
)
"""


class OutboxError(RuntimeError):
    """The outbox could not be opened or written (disk full, unreadable file)."""


@dataclass(frozen=True, slots=True)
class Entry:
    id: int
    topic: str
    key: str | None
    value: bytes


class Outbox:
    """The table of messages not yet acknowledged by Kafka; safe to use from several threads."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            # FULL: each commit's WAL frames are fsync'd before the commit returns, so a 202 survives a power cut.
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute(_SCHEMA)
            # The publisher's own marks (acknowledged, pruned) need no fsync of their own: one lost in a power cut
            # only sends that message again. The next put's fsync carries them to disk anyway.
            self._marks = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
            self._marks.execute("PRAGMA synchronous=NORMAL")
        except (sqlite3.Error, OSError) as exc:
            raise OutboxError(f"cannot open ingest's outbox {self.path}: {exc}") from exc
        self._lock = threading.Lock()

    def put(self, topic: str, key: str | None, value: bytes) -> int:
        """Keep one message durably; returns its id (ids grow in the order of the puts)."""
        with self._lock:
            try:
                cur = self._db.execute("INSERT INTO outbox (topic, key, value) VALUES (?, ?, ?)", (topic, key, value))
            except sqlite3.Error as exc:
                raise OutboxError(f"cannot write to ingest's outbox {self.path}: {exc}") from exc
            return int(cur.lastrowid or 0)

    def pending(self, limit: int = BATCH_SIZE) -> list[Entry]:
        """The oldest entries not yet acknowledged, in the order they were put."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id, topic, key, value FROM outbox WHERE acked_at IS NULL ORDER BY id LIMIT ?", (limit,)
            ).fetchall()
        return [Entry(int(i), str(t), k, bytes(v)) for i, t, k, v in rows]

    def acknowledge(self, ids: Sequence[int], now: float) -> None:
        """Mark entries acknowledged by the broker (kept a while, then `prune` removes them)."""
        if not ids:
            return
        with self._lock:
            self._marks.executemany("UPDATE outbox SET acked_at = ? WHERE id = ?", [(now, i) for i in ids])

    def prune(self, before: float) -> int:
        """Remove the entries acknowledged before `before`; returns how many acknowledged entries are still kept."""
        with self._lock:
            self._marks.execute("DELETE FROM outbox WHERE acked_at IS NOT NULL AND acked_at < ?", (before,))
            return int(self._marks.execute("SELECT COUNT(*) FROM outbox WHERE acked_at IS NOT NULL").fetchone()[0])

    def resend_kept(self) -> int:
        """Make every kept acknowledged entry wait again (the broker lost them); returns how many. They are older
        than every waiting entry, so they go out first, in their order."""
        with self._lock:
            return int(self._db.execute("UPDATE outbox SET acked_at = NULL WHERE acked_at IS NOT NULL").rowcount)

    def count(self) -> int:
        """How many entries wait for the broker."""
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM outbox WHERE acked_at IS NULL").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._marks.close()
            self._db.close()


class RawSender(Protocol):
    """What the outbox needs of a producer (`xqarb.bus.Producer`)."""

    def send_raw_batch(
        self, messages: Sequence[tuple[str, str | None, bytes]]
    ) -> list[bus.Delivery | bus.PublishError]: ...


def publish_once(
    outbox: Outbox, sender: RawSender, limit: int = BATCH_SIZE, now: float = 0.0
) -> tuple[list[tuple[int, bus.Delivery]], str | None]:
    """One round: send the oldest waiting entries, mark the acknowledged prefix (at `now`). Returns (id and
    delivery of each entry acknowledged, the first failure's reason or None)."""
    entries = outbox.pending(limit)
    if not entries:
        return [], None
    results = sender.send_raw_batch([(e.topic, e.key, e.value) for e in entries])
    done: list[tuple[int, bus.Delivery]] = []
    failure: str | None = None
    for entry, result in zip(entries, results, strict=True):
        if isinstance(result, bus.PublishError):
            # Stop at the first failure: what follows is sent again after it, so one board's order holds.
            failure = str(result)
            break
        done.append((entry.id, result))
    outbox.acknowledge([i for i, _ in done], now)
    return done, failure


class OutboxPublisher:
    """Ingest's `Publisher`: events into the outbox (then 202), frames straight to Kafka, dead letters through
    `direct`. A thread publishes the outbox; start it with `start()`, stop with `close()`."""

    def __init__(
        self,
        outbox: Outbox,
        sender: RawSender,
        direct: Any,
        *,
        registry: codec.SchemaRegistry | None = None,
        confirm_wait_s: float = CONFIRM_WAIT_S,
        max_backlog: int = MAX_BACKLOG,
        log_ends: bus.LogEnds | None = None,
        log_commits: bus.LogCommits | None = None,
        keep_acked_s: float = KEEP_ACKED_S,
        wall_clock: Callable[[], float] = time.time,
        frames: FrameReplay | None = None,
    ) -> None:
        self.outbox = outbox
        # Frames kept and sent again after a broker restart (xqarb.ingest.frame_replay.FrameReplay); None: frames
        # straight through `direct`, refused while the broker is known to be away.
        self.frames = frames
        self.sender = sender
        self.direct = direct  # a publisher for frames and dead letters (xqarb.ingest.publish.BusPublisher)
        self.registry = registry
        self.confirm_wait_s = confirm_wait_s
        self.max_backlog = max_backlog
        self.log_ends = log_ends  # where the broker's logs end now; None: never checked (no resend)
        # The referee group's commits: a resting log of a rolled pair (bus.ROLLED) that it had committed past what was
        # acknowledged there may be emptied by the roller (xqarb.broker.TopicRoller), which is no loss. None: every
        # log that starts over is a loss.
        self.log_commits = log_commits
        self.keep_acked_s = keep_acked_s
        self.wall_clock = wall_clock
        self.resent = 0  # acknowledged entries sent again because the broker lost them
        self._acked: dict[bus.TopicPartitionKey, int] = {}  # the highest offset acknowledged per partition, kept
        self._ends: dict[bus.TopicPartitionKey, int] = {}  # where those logs ended at the last check
        self._consumed: set[bus.TopicPartitionKey] = set()  # of those, the ones the referee group committed past it
        self._check_log = True  # ask the broker where its logs end before the next round
        self._next_check = 0.0
        self._close_log_ends: Callable[[], None] | None = None
        self.healthy = True  # the last publishing round reached the broker
        self.last_failure: str | None = None
        self._wake = threading.Condition()
        self._delivered: dict[int, bus.Delivery] = {}  # entries acknowledged, for requests waiting on them
        self._waiting: set[int] = set()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._own_sender: bus.Producer | None = None
        self._backlog = outbox.count()
        OUTBOX_PENDING.set(self._backlog)

    @classmethod
    def connect(cls, bootstrap: str, path: str | Path, *, ack_timeout_s: float = 10.0,
                replay_frames: bool = False) -> OutboxPublisher:
        """The outbox at `path` (a file in the data directory), published to `bootstrap` by a producer of its own,
        started: entries left by an earlier run go out first. `replay_frames`: a broker that may restart empty (the
        embedded one, whose supervisor calls `broker_down` and `broker_back`): frames are kept and sent again."""
        from xqarb.ingest.frame_replay import FrameReplay
        from xqarb.ingest.publish import BusPublisher

        direct = BusPublisher.connect(bootstrap, ack_timeout_s=ack_timeout_s)
        sender = bus.Producer(bootstrap, client_id="xq-ingest-outbox", timeout_s=ack_timeout_s)
        outbox = Outbox(path)
        ends, close_ends = bus.kafka_log_ends(bootstrap, client_id="xq-ingest-outbox-check")
        commits, close_commits = bus.kafka_log_commits(bootstrap, client_id="xq-ingest-outbox-commits")
        frames = None
        if replay_frames:
            read, close_read = bus.kafka_log_commits(bootstrap, bus.VISION_GROUP, client_id="xq-ingest-frames-read")
            frames = FrameReplay(
                lambda: bus.Producer(bootstrap, client_id="xq-ingest-frames", timeout_s=ack_timeout_s),
                read_commits=read, close_commits=close_read,
            )
        publisher = cls(outbox, sender, direct, log_ends=ends, log_commits=commits, frames=frames)
        publisher._own_sender = sender

        def close_checks() -> None:
            close_ends()
            close_commits()

        publisher._close_log_ends = close_checks
        return publisher.start()

    # --- the Publisher protocol ---------------------------------------------------------------------------------

    def publish(self, topic: str, event: Event, timeout: float) -> Stored | tuple[int, int] | None:
        """Frames: sent and acknowledged, or BrokerUnavailable at once while the broker is known to be away.
        Everything else: kept durably, then (partition, offset) if the broker acknowledged it within the
        confirmation wait, else None (queued: it will be published)."""
        if topic == bus.FRAMES:
            return self._publish_frame(topic, event, timeout)
        if self._backlog >= self.max_backlog:
            raise BrokerUnavailable(
                f"ingest's outbox holds {self._backlog} messages the broker has not taken yet (at most "
                f"{self.max_backlog}); retry later"
            )
        value = codec.encode(event, self.registry)
        try:
            entry_id = self.outbox.put(topic, event.board_id, value)
        except OutboxError as exc:
            raise BrokerUnavailable(str(exc)) from exc
        with self._wake:
            self._backlog += 1
            OUTBOX_PENDING.set(self._backlog)
            self._waiting.add(entry_id)
            self._wake.notify_all()
            deadline = time.monotonic() + min(timeout, self.confirm_wait_s)
            try:
                while self.healthy and entry_id not in self._delivered and self._thread is not None:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._wake.wait(left)
                delivery = self._delivered.pop(entry_id, None)
            finally:
                self._waiting.discard(entry_id)
        if delivery is None:
            return None
        if delivery.topic != topic:  # the topic of the period where the broker rolls it (bus.ROLLED)
            return Stored(delivery.partition, delivery.offset, delivery.topic)
        return delivery.partition, delivery.offset

    def _publish_frame(self, topic: str, event: Event, timeout: float) -> Stored | tuple[int, int] | None:
        if self.frames is not None:  # (it waits for a restarting broker itself; the outbox's state is not its)
            return self.frames.publish(topic, event, timeout)
        if not self.healthy:
            FRAMES_DROPPED.labels("broker_away").inc()
            raise BrokerUnavailable(f"the broker is away ({self.last_failure}); frames are not queued")
        try:
            result: Stored | tuple[int, int] | None = self.direct.publish(topic, event, timeout)
        except BrokerUnavailable:
            FRAMES_DROPPED.labels("not_acknowledged").inc()
            raise
        return result

    def dead_letter(self, reason: str, payload: bytes, *, board_id: str, source: str, topic: str) -> None:
        # The direct publisher bounds how long a refusal waits for its copy (xqarb.ingest.publish.DLQ_WAIT_S).
        self.direct.dead_letter(reason, payload, board_id=board_id, source=source, topic=topic)

    def ready(self) -> bool:
        ready = getattr(self.direct, "ready", None)
        return bool(ready()) if ready is not None else self.healthy

    def broker_down(self) -> None:
        """The broker died and will come back empty (its supervisor says so): frames wait for it (FrameReplay)."""
        if self.frames is not None:
            self.frames.broker_down()

    def broker_back(self) -> None:
        """The broker is back, empty, its topics made again: the kept frames go again (the outbox's entries are
        sent again on its own check of the broker's logs)."""
        if self.frames is not None:
            self.frames.broker_back()

    # --- the publishing thread ----------------------------------------------------------------------------------

    def start(self) -> OutboxPublisher:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="xq-ingest-outbox", daemon=True)
            self._thread.start()
        return self

    def _run(self) -> None:
        backoff = RETRY_FIRST_S
        while not self._stop.is_set():
            try:
                failure = self._round()
            except Exception as exc:  # the one thread that publishes what was answered 202
                # Whatever a round raised that it did not foresee (a client library's odd answer), the entries stay
                # on disk; ending this thread would hold every later acknowledged event there unpublished, so the
                # round is retried with backoff like a broker that is away, and the error is logged in full.
                log.exception("ingest outbox: an unexpected error in a publishing round")
                failure = f"unexpected {type(exc).__name__}: {exc}"
            if failure is not None:
                self.healthy, self.last_failure = False, failure
                with self._wake:
                    self._wake.notify_all()
                OUTBOX_FAILURES.inc()
                log.warning("ingest outbox: %d messages wait for the broker (retry in %.1f s): %s",
                            self._backlog, backoff, failure)
                self._stop.wait(backoff)
                backoff = min(backoff * 2, RETRY_MAX_S)
                continue
            backoff = RETRY_FIRST_S
            with self._wake:
                if self._backlog == 0 and not self._stop.is_set():
                    self._wake.wait(CHECK_LOG_S)  # woken by the next put; the timeout checks the logs again

    def _round(self) -> str | None:
        """Check the broker's logs where due, send one batch; the failure's reason, or None."""
        now = self.wall_clock()
        if self.log_ends is not None and self._acked and (self._check_log or now >= self._next_check):
            try:
                self._note_consumed(now)
                self._resend_if_lost(self.log_ends(sorted(self._acked)), now)
                self._check_log = False
            except bus.BusError as exc:
                if self._check_log:
                    return str(exc)  # after a failure: send nothing before knowing what the broker kept
                log.info("ingest outbox: the periodic check of the broker's logs failed: %s", exc)
            self._next_check = now + CHECK_LOG_S
        try:
            done, failure = publish_once(self.outbox, self.sender, now=now)
            kept = self.outbox.prune(now - self.keep_acked_s)
        except (sqlite3.Error, bus.BusError) as exc:
            return f"{type(exc).__name__}: {exc}"
        lost = False
        for _, delivery in done:
            key = (delivery.topic, delivery.partition)
            lost = lost or delivery.offset <= self._acked.get(key, -1)  # the log counts from 0 again
            self._acked[key] = max(delivery.offset, self._acked.get(key, -1))
            self._consumed.discard(key)  # (consumed up to an earlier entry: asked again)
        if kept == 0:
            self._acked.clear()
            self._ends.clear()
            self._consumed.clear()
        with self._wake:
            self._backlog = max(0, self._backlog - len(done))
            OUTBOX_PENDING.set(self._backlog)
            for entry_id, delivery in done:
                if entry_id in self._waiting:
                    self._delivered[entry_id] = delivery
            self.healthy, self.last_failure = failure is None, failure
            self._wake.notify_all()
        OUTBOX_PUBLISHED.inc(len(done))
        if lost:
            self._resend_if_lost(None, now)
        if failure is not None:
            self._check_log = True  # the broker went away: did it keep what it acknowledged?
        return failure

    def _note_consumed(self, now: float) -> None:
        """Ask the referee group's commits of the resting logs of rolled pairs that hold acknowledged entries not yet
        known consumed (the roller empties a resting log only once every group that reads it committed all of it,
        bus.ROLL_KEEP_S after the switch at the earliest: this looks every CHECK_LOG_S before)."""
        if self.log_commits is None:
            return
        keys = [key for key in sorted(self._acked) if key not in self._consumed and bus.resting(key[0], now)]
        if not keys:
            return
        for key, committed in self.log_commits(keys).items():
            if committed is not None and committed > self._acked.get(key, -1):
                self._consumed.add(key)

    def _resend_if_lost(self, ends: Mapping[bus.TopicPartitionKey, int] | None, now: float) -> None:
        """Send the kept acknowledged entries again when a log they were acknowledged in is empty or ends before
        where it ended at the last check (`bus.log_went_back`; `ends` None: known lost). Not lost: a resting log
        of a rolled pair whose entries the referee group had committed (`_note_consumed`): the roller emptied it;
        those entries are forgotten."""
        if ends is not None:
            lost = sorted(bus.log_went_back({key: ends.get(key, 0) for key in self._acked}, self._ends))
            emptied = [key for key in lost if key in self._consumed and bus.resting(key[0], now)]
            for key in emptied:
                del self._acked[key]
                self._ends.pop(key, None)
                self._consumed.discard(key)
            if emptied:
                log.info("ingest outbox: %s emptied by the roller after the referee group read them", emptied)
            if len(lost) == len(emptied):
                self._ends.update({key: ends[key] for key in self._acked})
                return
        count = self.outbox.resend_kept()
        self._acked.clear()
        self._ends.clear()
        self._consumed.clear()
        self.resent += count
        OUTBOX_RESENT.inc(count)
        with self._wake:
            self._backlog += count
            OUTBOX_PENDING.set(self._backlog)
        log.warning("ingest outbox: the broker lost messages it had acknowledged (its log starts over): "
                    "sending the %d kept from the last %.0f s again", count, self.keep_acked_s)

    def flush(self, timeout_s: float = 10.0) -> bool:
        """Wait until the outbox is empty (True) or the timeout passed (False)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.outbox.count() == 0:
                return True
            with self._wake:
                self._wake.notify_all()
            time.sleep(0.05)
        return self.outbox.count() == 0

    def close(self) -> None:
        """Stop publishing (what is left stays in the outbox for the next start), then close the direct side."""
        self._stop.set()
        with self._wake:
            self._wake.notify_all()
        if self._thread is not None:
            # A round stuck on a dead broker is left to die with the process: what it held stays in the outbox.
            self._thread.join(timeout=CLOSE_WAIT_S)
            self._thread = None
        self.outbox.close()
        if self.frames is not None:
            self.frames.close()
        if self._own_sender is not None:
            self._own_sender.close()
        if self._close_log_ends is not None:
            self._close_log_ends()
        close = getattr(self.direct, "close", None)
        if close is not None:
            close()
