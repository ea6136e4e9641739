"""The Kafka adapter (kafka-python 2.x): topics, a producer that waits for the broker, a consumer-group consumer.

DESIGN, Kafka: key = board id everywhere (one board's events stay ordered on one partition); values are Avro
single-object messages (`xqarb.codec`); messages that do not decode go to `xq.dlq` with the reason beside the
original bytes. Nothing here relies on the idempotent producer or on transactions (the development broker does
not have them): a retried send may duplicate a message, and exactly-once comes from the ledger's dedupe by
`event_id`. Idempotence can still be switched on by configuration against Apache Kafka
(`Producer(..., enable_idempotence=True)`).

Services use: `ensure_topics`, `Producer.send` / `send_many` (block until acknowledged with `acks=all`;
`send_soon` + `acknowledged` split the two, so that a message goes out while the sender works on),
`Consumer.poll` (decoded `Record`s; per-partition state is loaded in `on_assigned` and released in
`on_revoked`), `Consumer.commit` after the ledger append, `dead_letter`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from xqarb import codec
from xqarb.events import Event
from xqarb.fresh_start import FreshStart, fresh_start, fresh_target_ms, lacks_offset, read_on_in_pair
from xqarb.offset_holes import OffsetHoles
from xqarb.roll_order import NOTHING_OLDER, RollSide, roll_merge, roll_plan

FRAMES = "xq.frames"
OBSERVATIONS = "xq.observations"
CLOCK = "xq.clock"
ARBITER = "xq.arbiter"
GAME_EVENTS = "xq.game-events"
DLQ = "xq.dlq"
TOPICS: tuple[str, ...] = (FRAMES, OBSERVATIONS, CLOCK, ARBITER, GAME_EVENTS, DLQ)
DEFAULT_PARTITIONS = 12
REPLICATION_ENV = "XQARB_TOPIC_REPLICATION"
# Consumer groups (DESIGN: N vision and N referee processes share the partitions).
VISION_GROUP = "xq-vision"
REFEREE_GROUP = "xq-referee"
# Rolled frames (where the broker keeps every record until its topic is deleted, as the embedded one does): frames
# alternate between two topics; while one takes new frames, the other is consumed, deleted and made again (empty).
# The second topic exists only on such a broker (xqarb.broker.FramesRoller makes it): against Apache Kafka, xq.frames
# alone, with the topic's own retention.
FRAMES_ROLLED = "xq.frames.roll"
# Each frames topic takes new frames this long: a broker holds one to two such periods of frames, three where vision
# falls a period behind (xqarb.broker.FRAMES_KEEP_OVER_PERIODS).
FRAMES_ROLL_S = 60.0
# After a switch, frames sent just before it may still be acknowledged into the other topic: the roller
# (xqarb.broker.FramesRoller) looks at that topic, to empty it, no sooner than this after the switch.
ROLL_SETTLE_S = 1.0
# After a switch, a consumer holds a board's frames of the new topic this long for frames acknowledged late into
# the other one, so that it reads them first; one acknowledged later still is read after frames captured after it,
# and vision skips it (services/vision/order.py: one frame of the board's stream, which the next ones cover). A
# frame routed before the switch is stored by the time its send is acknowledged: measured (bench/roll_acks.py, 25
# boards at 2 fps, load average 14-24), about one frame a switch acknowledged after it, the latest 22 ms after; an
# ingest answer's p90 under a heavier load was 374 ms. Each frame held is a move's latency: 0.25 s of every 60 s.
# Frames only: the referee has no such guard for observations, which keep ROLL_SETTLE_S (once in 300 s).
ROLL_HOLD_S = 0.25
ROLL_CHECK_S = 0.5  # how often a consumer of rolled frames looks for a recreated topic and keeps boards in order
ROLL_RECHECK_S = 30.0  # how often a producer of frames looks again whether the broker rolls them
# Observations roll the same way (the referee group reads them; xqarb.broker.TopicRoller empties one only once that
# group committed all of it, never dropping any): vision reports each board about once a second (CameraProgress)
# beside its still boards and hands, some 75 small records a board-minute that the broker would keep forever. A
# period this long holds a few MB for a venue of a few boards, and the settling after a switch (ROLL_SETTLE_S) delays
# observations at most once in it.
OBSERVATIONS_ROLLED = "xq.observations.roll"
OBSERVATIONS_ROLL_S = 300.0
# The referee's outputs roll too (xq.game-events / xq.game-events.roll; the vision group reads them): some 2.8 MB a
# board-hour at the demo's pace. A resting topic of game events is kept until the last GAME_EVENTS_LAST_S of its rest,
# so the broker holds between one and two periods of them (8 boards: 4-7 MB): a live-stream client may fall one period
# behind and still resume without a reset even after the API process restarted (a running API serves resumes from its
# own buffer of the stream, StreamHub, whatever the broker emptied); a vision process that restarts reads the games in
# progress from them, the starts of longer games from the API's boards (services/vision/resume.py).
GAME_EVENTS_ROLLED = "xq.game-events.roll"
GAME_EVENTS_ROLL_S = 600.0
GAME_EVENTS_LAST_S = 60.0  # the part of a rest of game events in which the roller may empty it (before ROLL_LEAD_S)
# Clock presses and arbiter actions roll (read by the referee group; xq.arbiter by the vision group too): 0.7 and
# 0.04 MB a board-hour. A resting topic of these is kept at least INPUT_REST_KEEP_S: ingest's outbox looks every
# second at the logs it was acknowledged in, and at which of its entries the referee group committed, and must see
# the commit before the log is emptied to tell an emptying from a broker that lost them (services/ingest/outbox.py).
CLOCK_ROLLED = "xq.clock.roll"
ARBITER_ROLLED = "xq.arbiter.roll"
CLOCK_ROLL_S = 300.0
ARBITER_ROLL_S = 600.0  # few actions: a period holds some 7 KB a board
INPUT_REST_KEEP_S = 30.0
# ...and emptied only once every group has committed all of it for this long: a loaded referee commits a resting
# topic late, and the roller, which looks twice a second, would otherwise empty it before the outbox (once a second,
# a look that may fail under load) saw the commit, and the outbox would send again what nobody lost.
ROLL_READ_KEEP_S: dict[str, float] = {CLOCK: 10.0, ARBITER: 10.0}
# A rolled topic -> its second topic, and how long each of the two takes new records in turn.
ROLLED: dict[str, str] = {FRAMES: FRAMES_ROLLED, OBSERVATIONS: OBSERVATIONS_ROLLED, GAME_EVENTS: GAME_EVENTS_ROLLED,
                          CLOCK: CLOCK_ROLLED, ARBITER: ARBITER_ROLLED}
ROLL_PERIODS_S: dict[str, float] = {FRAMES: FRAMES_ROLL_S, OBSERVATIONS: OBSERVATIONS_ROLL_S,
                                    GAME_EVENTS: GAME_EVENTS_ROLL_S, CLOCK: CLOCK_ROLL_S, ARBITER: ARBITER_ROLL_S}
# How long after a switch a resting topic is kept at least before the roller may empty it (the settling of late
# acknowledgements where not given).
ROLL_KEEP_S: dict[str, float] = {GAME_EVENTS: GAME_EVENTS_ROLL_S - GAME_EVENTS_LAST_S, CLOCK: INPUT_REST_KEEP_S,
                                 ARBITER: INPUT_REST_KEEP_S}
# Camera frames may be up to 4 MB (ingest's max_frame_bytes); a request carries one frame plus its envelope.
MAX_REQUEST_BYTES = 5 * 1024 * 1024
# The largest fetch answer a consumer takes. The embedded broker answers a fetch with all it has, whatever the
# client's fetch limits say (measured: 4-5 MB answers to a 1 MB limit), and kafka-python's default (1 MB) drops
# the connection on such an answer ("Invalid frame length") and fetches again; a backlog of frames (a minute of 8
# boards at 2 fps) is some 70 MB.
FETCH_RESPONSE_MAX_BYTES = 128 * 1024 * 1024
# How long a consumer's fetch waits at the broker for a first record (kafka-python's fetch_max_wait_ms, 500 by
# default). Alone, the embedded broker answers a waiting fetch as soon as a record comes (a group consumer of 6
# topics x 12 partitions, 200 records, load 9: median 14 ms with a 500 ms wait, 12 with 50); inside `up` the hops
# still grow with the wait: the referee's (observation -> MoveMade) and the stream's (MoveMade -> client) medians,
# 4 boards at a load of 16-20, were 25-71 / 17-31 ms with 50, 50 / 35 with 100, 60 / 67 with 250, 60-114 / 60-143
# with 500. And every idle consumer asks again each time its wait ends, the broker answering each ask for every
# partition: `up --boards 25` with two vision processes, idle, used 0.39-0.59 of a core with 50 (the broker
# 0.23-0.34), 0.32 with 100, 0.17 with 250, 0.10 with 500; cores the vision processes need on a loaded machine.
FETCH_MAX_WAIT_MS = 250
# kafka-python's max_poll_records default: the most records one poll returns unless asked otherwise.
KAFKA_MAX_POLL_RECORDS = 500
# The least a fetch waits when the consumer looks at a rolled pair again soon (Consumer._bound_fetch_wait): asking
# the broker more often than this buys nothing.
FETCH_MIN_WAIT_MS = 20
# kafka-python's own client metrics (sensors updated on every fetch, request and record), which nothing here reads:
# about 9 % of `up`'s Python time with 25 boards. Prometheus has what the operators see (xqarb/metrics.py).
CLIENT_METRICS = False
# How long a consumer-group member waits for the broker's answer to any request, its JoinGroup and SyncGroup among
# them, before it gives up on it, marks the coordinator dead, finds it again and rejoins: what bounds a member's
# wait for a group that does not settle. kafka-python's default is 305 s (above its 300 s max poll interval). The
# embedded broker restarted empty was seen never to answer the SyncGroup of the leader of xq-referee (two referees
# rejoining it while `up` made its topics again: 80 s until the end of the run, bench/faults.py), and nothing was
# folded meanwhile. A member of a settled group gets its answers in milliseconds, and this broker answers a JoinGroup
# after about 5 s; kafka-python needs more than the session timeout here (SESSION_TIMEOUT_MS). The referee's consumer
# sets it (Consumer(request_timeout_s=...)); vision's keeps kafka-python's, with which it rode through.
GROUP_REQUEST_TIMEOUT_MS = 15_000
# A member that sends no heartbeat for this long is dropped from its group, and its partitions go to the others.
SESSION_TIMEOUT_MS = 10_000
# How often a group member reads the cluster's metadata again (kafka-python's default: every 5 minutes). The group's
# leader rebalances when the partitions of the subscribed topics change, and learns of it only from fresh metadata: a
# member that rejoined a restarted broker before `up` had made its topics again was given no partitions (the
# assignment made from that metadata) and kept none for minutes. Every group member needs it (the referee, vision,
# ingest's readers); one small request this often.
GROUP_METADATA_MAX_AGE_MS = 5_000

# Dead-letter headers: the reason and where the bytes came from (absent topic = rejected at ingest).
DLQ_REASON = "xq.reason"
DLQ_TOPIC = "xq.topic"
DLQ_PARTITION = "xq.partition"
DLQ_OFFSET = "xq.offset"
DLQ_SOURCE = "xq.source"

log = logging.getLogger(__name__)


class BusError(RuntimeError):
    """Talking to Kafka failed."""


class PublishError(BusError):
    """The broker did not acknowledge a message (so it must not be reported as accepted)."""


class CommitFailed(BusError):
    """Offsets could not be committed (typically the partition was reassigned meanwhile)."""


class TopicPartition(NamedTuple):
    topic: str
    partition: int


class Pending(NamedTuple):
    """A message handed to the producer (`Producer.send_soon`), not yet known to be acknowledged."""

    future: Any
    topic: str
    key: str | None


class Delivery(NamedTuple):
    """Where an acknowledged message was stored."""

    topic: str
    partition: int
    offset: int


@dataclass(frozen=True)
class Record:
    """One consumed message: where it was, its key (the board id) and the decoded event."""

    topic: str
    partition: int
    offset: int
    key: str | None
    value: bytes
    headers: Mapping[str, bytes]
    timestamp_ms: int
    event: Event | None  # None from a Consumer created with decode=False, or a Reader's undecodable record
    error: str | None = None  # a Reader's reason why the record did not decode

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)


def rolled_topics_at(topic: str, now_s: float) -> tuple[str, str]:
    """(the topic of the rolled pair of `topic` (a key of ROLLED) that takes new records at wall-clock time
    `now_s`, the other one) on a rolling broker.

    Wall-clock periods need no message between producers, consumers and the roller (they share the machine's
    clock: rolling is only for the embedded broker): even periods write `topic`, odd ones its second topic."""
    if int(now_s // ROLL_PERIODS_S[topic]) % 2 == 0:
        return topic, ROLLED[topic]
    return ROLLED[topic], topic


def frames_topics_at(now_s: float) -> tuple[str, str]:
    """(the frames topic that takes new frames at wall-clock time `now_s`, the other one) on a rolling broker:
    even periods write xq.frames, odd ones xq.frames.roll."""
    return rolled_topics_at(FRAMES, now_s)


def since_switch_s(now_s: float, topic: str = FRAMES) -> float:
    """Seconds since the rolled pair of `topic` (the frames by default) last switched topic."""
    return now_s % ROLL_PERIODS_S[topic]


def roll_keep_s(topic: str) -> float:
    """How long after a switch the resting topic of `topic`'s pair is kept at least (ROLL_KEEP_S)."""
    return max(ROLL_SETTLE_S, ROLL_KEEP_S.get(topic, ROLL_SETTLE_S))


def with_rolled(topics: Iterable[str], existing: Iterable[str]) -> list[str]:
    """`topics` and, for those a broker rolls (their second topic is among `existing`), their second topics: what a
    reader of whole topics (no consumer group) reads to see every record."""
    have = set(existing)
    wanted = list(topics)
    return wanted + [ROLLED[t] for t in wanted if t in ROLLED and ROLLED[t] in have and ROLLED[t] not in wanted]


def generation(topic: str, timestamp_ms: int) -> int:
    """The period (`int(time // period)`) whose producers wrote into the topic of a rolled pair a record stamped
    `timestamp_ms`: its own period where that period writes `topic` (xq.game-events in even periods, its second
    topic in odd ones), else the one before (acknowledged after the switch, sent before it: producers stamp a
    record after choosing its topic)."""
    base = base_topic(topic)
    period = int(timestamp_ms / 1000.0 // ROLL_PERIODS_S[base])
    writes_base = period % 2 == 0
    return period if writes_base == (topic == base) else period - 1


def record_generation(topic: str, timestamp_ms: int | None) -> float:
    """`generation` of a record of a rolled pair's `topic` stamped `timestamp_ms`; one without a time (-1) counts as
    the oldest (read as soon as it is fetched)."""
    if timestamp_ms is None or timestamp_ms < 0:
        return float("-inf")
    return float(generation(topic, timestamp_ms))


# How long a consumer of a rolled pair waits for kafka-python to tell a partition's position (the committed offset,
# or the reset one, asked of the broker) before it looks at the others and comes back to it.
POSITION_READ_S = 2.0
# How long reading a group's committed offsets may take: kafka-python asks again without end while the answer is
# a retriable error (a coordinator it has marked dead, after a broker restart or a process paused past its
# session), and the rollers, the lag sampler and vision's kept observations ask from loops that must go on.
COMMITTED_READ_S = 5.0


def committed_offsets(consumer: Any, partitions: Sequence[Any],
                      timeout_s: float = COMMITTED_READ_S) -> dict[Any, int | None]:
    """Each partition's offset committed by `consumer`'s group (None: none committed), in one request: kafka-python's
    `committed()` asks once per partition, and the lag sampler and the rollers look at dozens of partitions every
    few seconds (5 % of `up`'s Python time with 25 boards). Through the client's coordinator, which `committed()`
    itself uses; a client without it is asked partition by partition. kafka-python's KafkaTimeoutError after
    `timeout_s`."""
    fetch = getattr(getattr(consumer, "_coordinator", None), "fetch_committed_offsets", None)
    if fetch is None:
        return {tp: consumer.committed(tp) for tp in partitions}
    found = fetch(list(partitions), timeout_ms=int(timeout_s * 1000))
    return {tp: (found[tp].offset if tp in found and found[tp].offset >= 0 else None) for tp in partitions}


TopicPartitionKey = tuple[str, int]
LogEnds = Callable[[Sequence[TopicPartitionKey]], Mapping[TopicPartitionKey, int]]
# A group's committed offset (the next offset it will read) of each (topic, partition); None: none.
LogCommits = Callable[[Sequence[TopicPartitionKey]], Mapping[TopicPartitionKey, int | None]]


def kafka_log_ends(bootstrap: str, timeout_s: float = 3.0,
                   client_id: str = "xq-log-ends") -> tuple[LogEnds, Callable[[], None]]:
    """(log_ends, close), for a producer that checks its acknowledged records are still there (the embedded broker
    restarts empty): the next offset of each (topic, partition) as the broker reports it now."""
    from kafka import KafkaConsumer, TopicPartition
    from kafka.errors import KafkaError

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                             client_id=client_id, request_timeout_ms=int(timeout_s * 1000) + 1)

    def ends(keys: Sequence[TopicPartitionKey]) -> Mapping[TopicPartitionKey, int]:
        try:
            got = consumer.end_offsets([TopicPartition(t, p) for t, p in keys])
        # the broker away, or the topic not there (yet); KeyError: kafka-python's answer lacking a partition asked
        # for (seen with the embedded broker), which would otherwise end the checking thread (ingest's outbox, vision's
        # kept observations)
        except (KafkaError, AssertionError, KeyError) as exc:
            raise BusError(f"cannot read the ends of {list(keys)}: {exc}") from exc
        return {(tp.topic, tp.partition): int(offset) for tp, offset in got.items()}

    return ends, consumer.close


def kafka_log_commits(bootstrap: str, group: str = REFEREE_GROUP, timeout_s: float = 3.0,
                      client_id: str = "xq-log-commits") -> tuple[LogCommits, Callable[[], None]]:
    """(log_commits, close): `group`'s committed offset of each (topic, partition) now (without joining it)."""
    from kafka import KafkaConsumer, TopicPartition
    from kafka.errors import KafkaError

    # (never joins the group: its session settings only have to be consistent with a short request timeout)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False,
                             client_id=client_id, request_timeout_ms=int(timeout_s * 1000) + 1,
                             session_timeout_ms=int(timeout_s * 1000), heartbeat_interval_ms=int(timeout_s * 300))

    def commits(keys: Sequence[TopicPartitionKey]) -> Mapping[TopicPartitionKey, int | None]:
        try:
            found = committed_offsets(consumer, [TopicPartition(t, p) for t, p in keys])
            return {(tp.topic, tp.partition): offset for tp, offset in found.items()}
        except (KafkaError, AssertionError, KeyError) as exc:
            raise BusError(f"cannot read {group}'s commits of {list(keys)}: {exc}") from exc

    return commits, consumer.close


def log_went_back(ends: Mapping[TopicPartitionKey, int],
                  before: Mapping[TopicPartitionKey, int]) -> set[TopicPartitionKey]:
    """The partitions that end (`ends`: as the broker reports it now) at 0 or before where they ended at the last
    look (`before`): the broker no longer holds what it acknowledged there (a log's end never goes back on a broker
    that keeps its records). Not "ends at or before an offset acknowledged": the embedded broker reports a log's end
    as its last batch's first offset + 1, short of the true end when that batch held several messages."""
    return {key for key, end in ends.items() if end == 0 or end < before.get(key, 0)}


def resting(topic: str, now: float) -> bool:
    """Whether `topic` is the resting topic of a rolled pair at wall-clock `now` (the roller may empty it)."""
    base = base_topic(topic)
    return base in ROLLED and rolled_topics_at(base, now)[1] == topic


def base_topic(topic: str) -> str:
    """The topic a rolled pair's second topic stands for (xq.frames.roll -> xq.frames); others as they are."""
    return next((base for base, second in ROLLED.items() if second == topic), topic)


def _servers(bootstrap: str | Sequence[str]) -> list[str]:
    return [s.strip() for s in bootstrap.split(",")] if isinstance(bootstrap, str) else list(bootstrap)


# --------------------------------------------------------------------------------------------- topics


def ensure_topics(
    bootstrap: str | Sequence[str],
    topics: Iterable[str] = TOPICS,
    *,
    partitions: int = DEFAULT_PARTITIONS,
    replication_factor: int | None = None,
    timeout_s: float = 30.0,
) -> dict[str, int]:
    """Create the topics that are missing; return every topic's partition count as the broker reports it.

    The replication factor is `replication_factor`, else $XQARB_TOPIC_REPLICATION, else 1.
    Existing topics are left as they are (a different partition count is logged, not changed: growing it would
    move boards between partitions under running consumers).
    """
    from kafka import KafkaAdminClient, KafkaConsumer
    from kafka.admin import NewTopic
    from kafka.errors import KafkaError, TopicAlreadyExistsError

    wanted = list(dict.fromkeys(topics))
    if replication_factor is None:
        # 1 for one broker; a venue cluster sets 3 (deploy/README.md) without every caller knowing it.
        replication_factor = int(os.environ.get(REPLICATION_ENV, "1"))
    servers = _servers(bootstrap)
    timeout_ms = int(timeout_s * 1000)
    try:
        # Metadata through a plain (group-less) consumer: kafka-python 2.3's admin metadata calls choke on
        # authorized-operation bits some brokers report; create_topics itself is fine.
        metadata = KafkaConsumer(
            bootstrap_servers=servers,
            client_id="xqarb-admin",
            enable_auto_commit=False,
            request_timeout_ms=timeout_ms + 1,
        )
        admin = KafkaAdminClient(bootstrap_servers=servers, client_id="xqarb-admin", request_timeout_ms=timeout_ms)
    except (KafkaError, OSError) as exc:
        raise BusError(f"cannot reach Kafka at {bootstrap}: {exc}") from exc
    counts: dict[str, int] = {}
    try:
        existing = metadata.topics()
        missing = [t for t in wanted if t not in existing]
        if missing:
            # TopicAlreadyExists: another process created it between listing and creating.
            with contextlib.suppress(TopicAlreadyExistsError):
                admin.create_topics(
                    [NewTopic(t, num_partitions=partitions, replication_factor=replication_factor) for t in missing],
                    timeout_ms=timeout_ms,
                )
        deadline = time.monotonic() + timeout_s
        while True:
            visible = metadata.topics()  # refreshes the cluster metadata
            for t in wanted:
                parts = metadata.partitions_for_topic(t) if t in visible else None
                if parts:
                    counts[t] = len(parts)
            if len(counts) == len(wanted) or time.monotonic() > deadline:
                break
            time.sleep(0.1)
    except KafkaError as exc:
        raise BusError(f"creating topics {wanted} on {bootstrap} failed: {exc}") from exc
    finally:
        admin.close()
        metadata.close()
    absent = [t for t in wanted if t not in counts]
    if absent:
        raise BusError(f"topics {absent} were not visible on {bootstrap} within {timeout_s:.0f} s")
    for topic, count in counts.items():
        if count != partitions:
            log.warning("topic %s has %d partitions, configured %d: left unchanged", topic, count, partitions)
    return counts


# --------------------------------------------------------------------------------------------- producing


class Producer:
    """A keyed producer that reports a message as sent only once the broker acknowledged it (`acks=all`)."""

    def __init__(
        self,
        bootstrap: str | Sequence[str],
        *,
        client_id: str = "xqarb",
        registry: codec.SchemaRegistry | None = None,
        timeout_s: float = 30.0,
        **config: Any,
    ) -> None:
        from kafka import KafkaProducer
        from kafka.errors import KafkaError

        self.registry = registry
        self.timeout_s = timeout_s
        settings: dict[str, Any] = {
            "bootstrap_servers": _servers(bootstrap),
            "client_id": client_id,
            "acks": "all",
            "retries": 5,
            # Without the idempotent producer, one request in flight per connection is what keeps a retried
            # batch from overtaking the next one: one board's events stay in order.
            "max_in_flight_requests_per_connection": 1,
            "linger_ms": 2,
            "max_request_size": MAX_REQUEST_BYTES,
            "metrics_enabled": CLIENT_METRICS,
            "max_block_ms": int(timeout_s * 1000),
            "request_timeout_ms": int(timeout_s * 1000),
            # Topics are made by ensure_topics only: after a broker restart, a client asking for one first would
            # have it made with the broker's default partition count (range assignment needs the same count).
            "allow_auto_create_topics": False,
        }
        settings.update(config)
        self._bootstrap = bootstrap
        self._rolling: frozenset[str] = frozenset()  # the topics of ROLLED whose second topic the broker has
        self._rolled_checked_at: float | None = None
        self._topics_probe: Any = None
        self._rolled_lock = threading.Lock()
        try:
            self._producer = KafkaProducer(**settings)
        except (KafkaError, OSError) as exc:
            raise BusError(f"cannot connect a producer to Kafka at {bootstrap}: {exc}") from exc

    def frames_rolled(self) -> bool:
        """Whether the broker rolls frames (xq.frames.roll exists), looked up again every ROLL_RECHECK_S."""
        return self.rolls(FRAMES)

    def rolls(self, topic: str) -> bool:
        """Whether the broker rolls `topic` (its second topic of ROLLED exists), looked up again every
        ROLL_RECHECK_S."""
        from kafka import KafkaConsumer
        from kafka.errors import KafkaError

        # One look at a time, and senders wait for its answer: ingest sends every board's frames from its own
        # thread, and a sender that went on with the answer not yet in would send to xq.frames at the wrong time.
        with self._rolled_lock:
            now = time.monotonic()
            if self._rolled_checked_at is None or now - self._rolled_checked_at >= ROLL_RECHECK_S:
                try:
                    if self._topics_probe is None:
                        self._topics_probe = KafkaConsumer(
                            bootstrap_servers=_servers(self._bootstrap), client_id="xqarb-frames-probe",
                            enable_auto_commit=False, allow_auto_create_topics=False,
                        )  # fmt: skip
                    topics = self._topics_probe.topics()
                    if topic in topics:  # else the answer is not complete: look again at the next send
                        self._rolling = frozenset(base for base, second in ROLLED.items() if second in topics)
                        self._rolled_checked_at = now
                except (KafkaError, OSError) as exc:  # keep the last answer; the send reports a dead broker
                    log.warning("could not look up whether the broker rolls frames: %s", exc)
                    self._rolled_checked_at = now
            return topic in self._rolling

    def _route(self, topic: str) -> str:
        """A rolled topic (xq.frames, xq.observations) goes to the topic of the current period where the broker
        rolls it."""
        if topic in ROLLED and self.rolls(topic):
            return rolled_topics_at(topic, time.time())[0]
        return topic

    def _submit(self, topic: str, key: str | None, value: bytes, headers: Mapping[str, bytes] | None) -> Any:
        from kafka.errors import KafkaError

        try:
            return self._producer.send(
                self._route(topic),
                value=value,
                key=None if key is None else key.encode("utf-8"),
                headers=list((headers or {}).items()),
            )
        except KafkaError as exc:
            raise PublishError(f"{topic}: the message (key {key!r}, {len(value)} bytes) was not sent: {exc}") from exc

    def _wait(self, future: Any, topic: str, key: str | None) -> Delivery:
        from kafka.errors import KafkaError

        try:
            meta = future.get(timeout=self.timeout_s)
        except KafkaError as exc:
            raise PublishError(f"{topic}: the broker did not acknowledge the message (key {key!r}): {exc}") from exc
        return Delivery(meta.topic, meta.partition, meta.offset)

    def send(self, topic: str, event: Event, *, headers: Mapping[str, bytes] | None = None) -> Delivery:
        """Encode and send one event keyed by its board; returns where it was stored once acknowledged."""
        value = codec.encode(event, self.registry)
        return self._wait(self._submit(topic, event.board_id, value, headers), topic, event.board_id)

    def send_many(self, topic: str, events: Iterable[Event]) -> list[Delivery]:
        """Send a batch and wait for all acknowledgements; raises `PublishError` if any was not acknowledged
        (the others may have been stored: the consumers' dedupe by event id makes resending the batch safe)."""
        from kafka.errors import KafkaError

        pending = self.send_soon(topic, events)
        try:
            self._producer.flush(timeout=self.timeout_s)
        except KafkaError as exc:
            raise PublishError(
                f"{topic}: {len(pending)} messages not acknowledged within {self.timeout_s} s: {exc}"
            ) from exc
        return self.acknowledged(pending)

    def send_soon(self, topic: str, events: Iterable[Event]) -> list[Pending]:
        """Hand events to the sender at once, without waiting for the broker (they go out within `linger_ms`, while
        the caller works on): pass what this returns to `acknowledged` before anything relies on them being kept."""
        return [Pending(self._submit(topic, e.board_id, codec.encode(e, self.registry), None), topic, e.board_id)
                for e in events]

    def acknowledged(self, pending: Sequence[Pending]) -> list[Delivery]:
        """Wait for the broker to take what `send_soon` handed over; raises `PublishError` if any was not taken
        (the others may have been stored: as for `send_many`, sending them again is safe)."""
        return [self._wait(p.future, p.topic, p.key) for p in pending]

    def send_raw(
        self, topic: str, key: str | None, value: bytes, headers: Mapping[str, bytes] | None = None
    ) -> Delivery:
        """Send bytes as they are (dead letters; tests writing messages from elsewhere)."""
        return self._wait(self._submit(topic, key, value, headers), topic, key)

    def send_raw_batch(self, messages: Sequence[tuple[str, str | None, bytes]]) -> list[Delivery | PublishError]:
        """Send (topic, key, bytes) messages in order and wait for all; each gets its Delivery or its PublishError
        (ingest's outbox removes what was acknowledged and sends the rest again)."""
        futures: list[Any] = []
        for topic, key, value in messages:
            try:
                futures.append(self._submit(topic, key, value, None))
            except PublishError as exc:
                futures.append(exc)
        out: list[Delivery | PublishError] = []
        for (topic, key, _), future in zip(messages, futures, strict=True):
            if isinstance(future, PublishError):
                out.append(future)
                continue
            try:
                out.append(self._wait(future, topic, key))
            except PublishError as exc:
                out.append(exc)
        return out

    def flush(self) -> None:
        self._producer.flush(timeout=self.timeout_s)

    def close(self, timeout_s: float | None = None) -> None:
        """Wait up to the timeout (`timeout_s`, else the producer's) for outstanding sends, then close (dropping what
        the broker never took; 0: at once, each send not yet acknowledged reported as a PublishError)."""
        from kafka.errors import KafkaError

        if self._topics_probe is not None:
            self._topics_probe.close()
        try:
            self._producer.close(timeout=self.timeout_s if timeout_s is None else timeout_s)
        except KafkaError as exc:
            # kafka-python 2.x raises from close() when a flush times out and leaves the producer half open
            # (its finaliser then blocks again): force the sender down. Unacknowledged sends were already
            # reported to their callers as PublishError.
            log.warning("producer closed with unacknowledged messages dropped: %s", exc)
            sender = getattr(self._producer, "_sender", None)
            if sender is not None:
                sender.force_close()
            self._producer._closed = True

    def __enter__(self) -> Producer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


@dataclass(frozen=True)
class DeadLetter:
    """A message in `xq.dlq`: the original bytes and why they were rejected."""

    reason: str
    value: bytes
    key: str | None
    topic: str | None  # where it was consumed from; None when rejected at ingest before any topic
    partition: int | None
    offset: int | None
    source: str | None

    @classmethod
    def from_record(cls, record: Record) -> DeadLetter:
        h = record.headers

        def text(name: str) -> str | None:
            return h[name].decode("utf-8") if name in h else None

        partition, offset = text(DLQ_PARTITION), text(DLQ_OFFSET)
        return cls(
            reason=text(DLQ_REASON) or "",
            value=record.value,
            key=record.key,
            topic=text(DLQ_TOPIC),
            partition=None if partition is None else int(partition),
            offset=None if offset is None else int(offset),
            source=text(DLQ_SOURCE),
        )


def dead_letter(
    producer: Producer,
    topic: str | None,
    partition: int | None,
    offset: int | None,
    raw_bytes: bytes,
    reason: str,
    *,
    key: str | None = None,
    source: str | None = None,
) -> Delivery:
    """Keep rejected bytes in `xq.dlq` with the reason (headers), keyed like the original (its board)."""
    headers = {DLQ_REASON: reason.encode("utf-8")}
    if topic is not None:
        headers[DLQ_TOPIC] = topic.encode("utf-8")
    if partition is not None:
        headers[DLQ_PARTITION] = str(partition).encode("ascii")
    if offset is not None:
        headers[DLQ_OFFSET] = str(offset).encode("ascii")
    if source is not None:
        headers[DLQ_SOURCE] = source.encode("utf-8")
    return producer.send_raw(DLQ, key, raw_bytes, headers)


# --------------------------------------------------------------------------------------------- consuming

PartitionsCallback = Callable[[list[TopicPartition]], None]


@dataclass
class _Listener:
    on_assigned: PartitionsCallback | None
    on_revoked: PartitionsCallback | None
    failure: BaseException | None = None
    assigned: set[TopicPartition] = field(default_factory=set)
    # monotonic time since which this member's rejoin has not ended with an assignment (None: it has one, perhaps
    # empty): from its first join, and from each revocation kafka-python makes at the start of a rejoin
    rejoining_since: float | None = field(default_factory=time.monotonic)
    assignments: int = 0  # assignments so far: one in a poll resets the positions kafka-python holds

    def as_kafka_listener(self) -> Any:
        from kafka import ConsumerRebalanceListener

        outer = self

        class Listener(ConsumerRebalanceListener):
            # kafka-python logs and swallows exceptions raised here; keep the first so poll() can raise it:
            # a service whose state failed to load must not go on consuming.
            def on_partitions_revoked(self, revoked: Iterable[Any]) -> None:
                parts = sorted(TopicPartition(tp.topic, tp.partition) for tp in revoked)
                outer.assigned.difference_update(parts)
                outer.rejoining_since = outer.rejoining_since or time.monotonic()
                if outer.on_revoked is not None and parts:
                    try:
                        outer.on_revoked(parts)
                    except Exception as exc:  # re-raised from poll()
                        outer.failure = outer.failure or exc

            def on_partitions_assigned(self, assigned: Iterable[Any]) -> None:
                parts = sorted(TopicPartition(tp.topic, tp.partition) for tp in assigned)
                outer.assigned.update(parts)
                outer.rejoining_since = None
                outer.assignments += 1
                if outer.on_assigned is not None and parts:
                    try:
                        outer.on_assigned(parts)
                    except Exception as exc:  # re-raised from poll()
                        outer.failure = outer.failure or exc

        return Listener()


class Consumer:
    """A member of a consumer group: explicit commits, rebalance callbacks, undecodable messages to `xq.dlq`.

    `on_assigned(partitions)` runs inside `poll()` before any record of a newly assigned partition is returned
    (rebuild its games' state there); `on_revoked(partitions)` runs before they go to another member (commit and
    release there). `commit()` without arguments commits everything returned by `poll()` so far.
    `fresh_back_s` (topic -> seconds): a partition of those topics assigned with no offset to resume from starts that
    far back from now instead of at `auto_offset_reset` (xqarb.fresh_start: vision's frames).
    """

    def __init__(
        self,
        bootstrap: str | Sequence[str],
        group_id: str,
        topics: Sequence[str],
        *,
        on_assigned: PartitionsCallback | None = None,
        on_revoked: PartitionsCallback | None = None,
        dlq_producer: Producer | None = None,
        decode: bool = True,
        registry: codec.SchemaRegistry | None = None,
        client_id: str | None = None,
        auto_offset_reset: str = "earliest",
        session_timeout_ms: int = SESSION_TIMEOUT_MS,
        heartbeat_interval_ms: int = 1_000,
        max_poll_interval_ms: int = 300_000,
        wall_clock: Callable[[], float] = time.time,
        fresh_back_s: Mapping[str, float] | None = None,
        renew_after_s: float | None = None,
        request_timeout_s: float | None = None,
        **config: Any,
    ) -> None:
        """`renew_after_s`: a member whose rejoin has not ended with an assignment for this long is made anew (a new
        kafka-python consumer, a new member of the group): see `poll`. None: never. `request_timeout_s`: how long it
        waits for any answer of the broker, GROUP_REQUEST_TIMEOUT_MS for a group that must not stall (None:
        kafka-python's 305 s)."""
        from kafka.coordinator.assignors.range import RangePartitionAssignor

        self.group_id = group_id
        self.topics = tuple(topics)
        self.decode = decode
        self.registry = registry
        self.dead_lettered = 0
        self.not_held = 0  # records polled for partitions this member no longer held, dropped (`poll`)
        self._bootstrap = bootstrap
        self._dlq = dlq_producer
        self._own_dlq = False
        # topic (its rolled second too) -> how far back from now a partition without an offset to resume from
        # starts (xqarb.fresh_start); the other topics start at `auto_offset_reset`
        self._fresh_back_s = dict(fresh_back_s or {})
        # kafka-python's partitions started afresh in the last assignment -> that start, committed at the next poll
        # (`_commit_fresh_starts`)
        self._fresh_starts: dict[Any, int] = {}
        self._listener = _Listener(self._hold_current_frames(on_assigned), on_revoked)
        settings: dict[str, Any] = {
            "bootstrap_servers": _servers(bootstrap),
            "group_id": group_id,
            "client_id": client_id or f"xqarb-{group_id}",
            "enable_auto_commit": False,  # DESIGN: offsets are committed only after the ledger append
            "auto_offset_reset": auto_offset_reset,
            "session_timeout_ms": session_timeout_ms,
            "heartbeat_interval_ms": heartbeat_interval_ms,
            "max_poll_interval_ms": max_poll_interval_ms,
            # Range assignment gives partition p of every subscribed topic to the same member. With the same
            # partition count everywhere (ensure_topics) and key = board, all of a board's inputs (observations,
            # clock, arbiter) then reach one referee process.
            "partition_assignment_strategy": (RangePartitionAssignor,),
            "allow_auto_create_topics": False,  # ensure_topics makes them (see Producer)
            # The embedded broker answers a fetch with all it has (FETCH_RESPONSE_MAX_BYTES).
            "receive_message_max_bytes": FETCH_RESPONSE_MAX_BYTES,
            "fetch_max_wait_ms": FETCH_MAX_WAIT_MS,  # a move's latency (FETCH_MAX_WAIT_MS)
            "metrics_enabled": CLIENT_METRICS,
            "metadata_max_age_ms": GROUP_METADATA_MAX_AGE_MS,  # partitions made again reach the group
        }
        if request_timeout_s is not None:  # (kafka-python wants it above the session timeout)
            settings["request_timeout_ms"] = max(int(request_timeout_s * 1000), session_timeout_ms + 1_000)
        settings.update(config)
        self._settings = settings
        self.renew_after_s = renew_after_s
        self.renewed = 0  # times this member was made anew (`poll`)
        self._next_roll_check = 0.0
        self._wall_clock = wall_clock  # rolled frames: which topic takes new frames now (frames_topics_at)
        self._seen_ends: dict[Any, int] = {}  # rolled frames: each partition's end offset at the last look
        # rolled frames: a partition waiting, the hold over, only for the same partition of the other topic to be
        # read up to the end seen at the last look (what either takes after that is newer)
        self._behind: dict[Any, tuple[Any, int]] = {}
        self._heads: Heads = {}  # rolled pairs: the generation of a partition's next record, where one was held back
        self._position_unknown: set[Any] = set()  # rolled pairs: partitions whose position was not told (said once)
        self._last_poll_full = False  # the last poll returned as many records as it may (`behind`)
        self.holes = OffsetHoles()  # records missing from a partition's offsets, waited for (`poll`)
        self._join()

    def _join(self) -> None:
        """A kafka-python consumer subscribed to this member's topics (and their second topics where rolled)."""
        from kafka import KafkaConsumer
        from kafka.errors import KafkaError

        try:
            self._consumer = KafkaConsumer(**self._settings)
            # A rolling broker's frames (observations) are on two topics; range assignment gives partition p of both
            # to one member. Rolled topic -> its second topic, for those of this consumer the broker rolls.
            existing = self._consumer.topics()
            self._pairs = {base: second for base, second in ROLLED.items() if base in self.topics
                           and second in existing}  # fmt: skip
            self._rolled = bool(self._pairs)
            subscribed = list(self.topics) + [second for second in self._pairs.values() if second not in self.topics]
            self._consumer.subscribe(subscribed, listener=self._listener.as_kafka_listener())
        except (KafkaError, OSError) as exc:
            raise BusError(f"cannot join group {self.group_id!r} on Kafka at {self._bootstrap}: {exc}") from exc

    def _renew_if_stuck(self) -> None:
        """Make this member anew where its rejoin has not ended with an assignment for `renew_after_s`.

        The embedded broker restarted empty was seen to leave a rejoining member for good with neither an answer
        to its SyncGroup nor a timeout from kafka-python 2.3 (it had logged itself the group's leader, and polled
        on with no partitions: 55 s and more, to the end of the run), while the other member was given its half.
        A new consumer joins as a new member (the old one is dropped by the broker after its session timeout), and
        reads from the group's committed offsets: nothing is skipped."""
        if self._consumer is None:  # a renewal that could not join yet (the broker away): once more
            self._listener.rejoining_since = time.monotonic()
            self._join()
            return
        since = self._listener.rejoining_since
        if self.renew_after_s is None or since is None or time.monotonic() - since < self.renew_after_s:
            return
        from kafka.errors import KafkaError

        log.warning("group %r: no partitions given to this member %.0f s after it began to rejoin; joining again as "
                    "a new member", self.group_id, time.monotonic() - since)
        old, self._consumer = self._consumer, None  # (None until joined again: `_join` may fail)
        try:
            old.close(autocommit=False, timeout_ms=1_000)  # (a LeaveGroup at best: the broker may not answer)
        except (KafkaError, OSError) as exc:
            log.warning("group %r: closing the stuck member said %s", self.group_id, exc)
        self._listener.assigned.clear()
        self._listener.rejoining_since = time.monotonic()
        self._seen_ends, self._behind, self._heads, self._next_roll_check = {}, {}, {}, 0.0
        self.renewed += 1
        self._join()

    def _finish_answered_join(self) -> None:
        """Make kafka-python finish a rejoin whose JoinGroup and SyncGroup were answered while nothing asked it to.

        kafka-python 2.3 hands the assignment over (and calls `on_assigned`) only in its join loop, which a poll
        enters while `need_rejoin()`. A rejoin begun because the leader's metadata changed (a broker restarted empty:
        its topics gone) is answered during the poll's other waits; assigning, the leader takes the metadata of that
        moment as its own, so once the topics are there again `need_rejoin()` is false and the loop is never entered:
        the member holds nothing, for good. Asking for the rejoin again makes the next poll take the answer already
        received (no new round with the broker: the join under way is the one it waits for)."""
        coordinator = getattr(self._consumer, "_coordinator", None)
        if coordinator is None or not getattr(coordinator, "rejoining", False):
            return
        if not coordinator.need_rejoin():
            coordinator.request_rejoin()

    def assignment(self) -> set[TopicPartition]:
        """The partitions this member holds (as of the last rebalance callback)."""
        return set(self._listener.assigned)

    def rebalance_due(self) -> bool:
        """Whether the group has begun a rebalance that this member has not rejoined yet (its heartbeat, about once a
        second, was told so). A caller working through a batch should give the rest back (`give_back`) and poll,
        which rejoins: the embedded broker ends a join round about 5 s after it began, with the members that joined
        by then, and a member that comes later is left out and starts another round. Under load a batch of frames
        takes longer than that, and such a group was seen to go round for a minute, its partitions unread."""
        coordinator = getattr(self._consumer, "_coordinator", None)
        need_rejoin = getattr(coordinator, "need_rejoin", None)
        return bool(need_rejoin()) if need_rejoin is not None else False

    def give_back(self, records: Sequence[Record]) -> None:
        """Records `poll()` returned that the caller leaves unhandled: each of their partitions is read again from the
        first of them (by this member, or from the committed offset by the member the group gives it to), so that
        `commit()` skips none."""
        from kafka import TopicPartition as KafkaTopicPartition

        first: dict[KafkaTopicPartition, int] = {}
        for record in records:
            tp = KafkaTopicPartition(record.topic, record.partition)
            first[tp] = min(first.get(tp, record.offset), record.offset)
        self._seek_back(first)

    def _seek_back(self, first: Mapping[Any, int]) -> None:
        """Each held partition of `first` read again from its offset there."""
        held = self._consumer.assignment() if self._consumer is not None else set()
        for tp, offset in first.items():
            if tp in held:  # (a partition no longer held restarts from its committed offset anyway)
                self._consumer.seek(tp, offset)

    def poll(self, timeout_s: float = 1.0, max_records: int | None = None) -> list[Record]:
        """The next records (possibly none), in offset order per partition; undecodable ones are dead-lettered."""
        from kafka.errors import KafkaError

        self._renew_if_stuck()
        self._finish_answered_join()
        try:
            if self._rolled:
                self._follow_roll()
                # back by the next look at the roll: a board's frames held after a switch are read as soon as the hold
                # ends, not after a whole poll spent waiting on paused partitions
                # (none planned where no frames partition is held: then the poll is as asked; a look already due, the
                # process having been off the CPU since it was planned, makes the poll a short one, not a whole one)
                due = self._next_roll_check - time.monotonic()
                if self._next_roll_check > 0.0:
                    timeout_s = min(timeout_s, max(due, FETCH_MIN_WAIT_MS / 1000))
                self._bound_fetch_wait(due)
            starts, assignments = positions_known(self._consumer), self._listener.assignments
            batches = self._consumer.poll(timeout_ms=int(timeout_s * 1000), max_records=max_records)
        except KafkaError as exc:
            raise BusError(f"group {self.group_id!r}: poll failed: {exc}") from exc
        self._commit_fresh_starts()
        limit = max_records or int(self._settings.get("max_poll_records", KAFKA_MAX_POLL_RECORDS))
        self._last_poll_full = sum(len(m) for m in batches.values()) >= limit
        if self._listener.assignments != assignments:
            # Assigned in this poll: the positions kafka-python set then are not known here, and a hole waited on
            # before (a partition given away and back, minutes later) is waited on afresh, not passed over at once.
            starts = {}
            for tp in self.holes.waiting():
                self.holes.forget(tp)
        batches = up_to_holes(self._consumer, batches, starts, self.holes, f"group {self.group_id!r}")
        if self._listener.failure is not None:
            # The service could not load or release its state: return nothing of this batch (rewound, so a
            # later commit skips nothing) and let the service stop (close this consumer).
            failure, self._listener.failure = self._listener.failure, None
            self._rewind(batches)
            raise failure
        runs = self._in_generation_order(batches) if self._rolled else list(batches.items())
        records: list[Record] = []
        held = self._listener.assigned
        for tp, messages in runs:
            if TopicPartition(tp.topic, tp.partition) not in held:
                # Revoked at the start of a rejoin that is still under way: kafka-python 2.3 goes on returning the
                # records it fetched for them while its JoinGroup and SyncGroup wait (seen after a broker restart:
                # a referee folding partitions the group had given to another, two writers on one board). Not
                # returned, never committed: whoever the group gives them to reads them from the committed offset.
                self.not_held += len(messages)
                continue
            for m in messages:
                record = _record(m)
                if self.decode:
                    try:
                        record = replace(record, event=codec.decode(m.value, self.registry))
                    except codec.CodecError as exc:
                        try:
                            self._dead_letter(record, exc.reason)
                        except PublishError:
                            # Not kept anywhere yet, and nothing of this batch was returned: rewind every
                            # partition of the batch to its first record so that a later commit skips nothing
                            # (dead letters already sent may be sent twice); the caller may poll again.
                            self._rewind(batches)
                            raise
                        continue
                records.append(record)
        return records

    def behind(self, topics: Iterable[str]) -> frozenset[int]:
        """The numbers of the held partitions of `topics` (and of their rolled seconds) that may hold records this
        member has not been given yet: read short of the end that the broker last reported with a fetch, that end
        not known yet (no fetch answered since the assignment), or paused (fetched no more, so its end is not
        followed). After a poll that returned as many records as it may, the client may still buffer answers it
        has not looked at: every held partition of `topics` is then behind."""
        wanted = set(with_rolled(topics, ROLLED.values()))
        consumer = self._consumer
        if consumer is None:
            return frozenset()
        held = [tp for tp in consumer.assignment() if tp.topic in wanted]
        if self._last_poll_full:
            return frozenset(tp.partition for tp in held)
        paused = consumer.paused()
        out = set()
        for tp in held:
            position = consumer.position(tp, timeout_ms=0)  # (0: the position known, no request to the broker)
            end = consumer.highwater(tp)
            if tp in paused or position is None or end is None or position < end:
                out.add(tp.partition)
        return frozenset(out)

    def _in_generation_order(self, batches: Mapping[Any, list[Any]]) -> list[tuple[Any, list[Any]]]:
        """Rolled pairs: this poll's records in the order of their generations (`order_rolled`: a reader more than a
        period behind finds the older records at the head of the topic that takes new ones); those held back are
        fetched again once the other topic is read up to them, decided at a look at the roll made at once."""
        from kafka.errors import KafkaError

        if not batches:
            return []
        try:
            runs, held_back = order_rolled(self._consumer, batches, self._seen_ends, self._heads, self._wall_clock())
        except KafkaError as exc:  # (a position asked of the broker): nothing returned, nothing skipped
            self._rewind(batches)
            raise BusError(f"group {self.group_id!r}: ordering a rolled pair's records failed: {exc}") from exc
        if held_back:
            self._next_roll_check = 0.0
        return runs

    def _bound_fetch_wait(self, due_s: float) -> None:
        """A fetch sent in this poll waits at the broker no longer than until the next look at the roll (`due_s`
        from now), where partitions held after a switch may be resumed: with one broker, all partitions share one
        fetch, and a resumed partition is fetched only once the fetch in flight (of the others, idle after a switch)
        came back, up to FETCH_MAX_WAIT_MS later. kafka-python reads its fetcher's setting for every fetch it
        sends; without that attribute (another client version) the fetch waits FETCH_MAX_WAIT_MS."""
        config = getattr(getattr(self._consumer, "_fetcher", None), "config", None)
        if isinstance(config, dict):
            config["fetch_max_wait_ms"] = int(min(FETCH_MAX_WAIT_MS, max(FETCH_MIN_WAIT_MS, 1000 * due_s)))

    def _hold_current_frames(self, on_assigned: PartitionsCallback | None) -> PartitionsCallback:
        """Newly assigned partitions of `fresh_back_s`'s topics without an offset to resume from start near now
        (`_start_fresh`); rolled frames (observations): newly assigned partitions of both topics of a pair wait
        until `_follow_roll` has looked at them, at the next poll (the same poll would otherwise fetch both, or the
        resting one, whose records may be newer than those at the head of the other: a board's frames out of
        order)."""

        def assigned(parts: list[TopicPartition]) -> None:
            self._start_fresh(parts)
            if self._rolled:
                from kafka import TopicPartition as KafkaTopicPartition

                names = {topic for pair in self._pairs.items() for topic in pair}
                held = [KafkaTopicPartition(tp.topic, tp.partition) for tp in parts if tp.topic in names]
                for tp in held:  # (offsets of a topic made again since it was last held mean other records)
                    self._heads.pop(tp, None)
                if held:
                    self._consumer.pause(*held)
                    self._next_roll_check = 0.0
            if on_assigned is not None:
                on_assigned(parts)

        return assigned

    def _start_fresh(self, parts: list[TopicPartition]) -> None:
        """Partitions just assigned of `fresh_back_s`'s topics with no offset to resume from (`lacks_offset`) start
        at the first record the broker took no earlier than their time back from now (xqarb.fresh_start), before
        anything of them is fetched; the end where none came since. Where the committed offsets cannot be read,
        kafka-python's own start is kept (the committed offset, most likely); where they lack one and the search by
        time fails, the end (reading a retention's worth of frames is what this avoids). The starts chosen are
        committed at the next poll (`_commit_fresh_starts`)."""
        from kafka import TopicPartition as KafkaTopicPartition
        from kafka.errors import KafkaError

        self._fresh_starts = {}
        asked = {tp: KafkaTopicPartition(tp.topic, tp.partition) for tp in parts
                 if base_topic(tp.topic) in self._fresh_back_s}  # fmt: skip
        if not asked:
            return
        try:
            starts = self._consumer.beginning_offsets(list(asked.values()))
            committed = committed_offsets(self._consumer, list(asked.values()))
            lacking = [tp for tp, ktp in asked.items() if lacks_offset(committed[ktp], starts.get(ktp))]
        except (KafkaError, KeyError, OSError) as exc:  # KeyError: kafka-python 2.3 on a partition not known yet
            log.warning("group %r: the committed offsets of %d partition(s) not read (%s: %s): they start where "
                        "the consumer's defaults say", self.group_id, len(asked), type(exc).__name__, exc)
            return
        chosen: dict[Any, int | None] = {asked[tp]: None for tp in lacking}  # (None: a start not known by number)
        lacking = self._from_start_in_pair(lacking, asked, committed)
        chosen.update({ktp: starts.get(ktp) for ktp in chosen if ktp not in {asked[tp] for tp in lacking}})
        self._start_near_now(lacking, asked, starts, chosen)
        if all(offset is not None for offset in chosen.values()):  # (a pair's starts committed both, or neither)
            self._fresh_starts = {ktp: int(offset) for ktp, offset in chosen.items() if offset is not None}

    def _start_near_now(self, lacking: list[TopicPartition], asked: Mapping[TopicPartition, Any],
                        starts: Mapping[Any, int], chosen: dict[Any, int | None]) -> None:
        """`_start_fresh`'s partitions that start near now, by the broker's search by time; `chosen` gets each
        one's start where it is known by number."""
        from kafka.errors import KafkaError

        if not lacking:
            return
        wall = self._wall_clock()
        targets = {asked[tp]: fresh_target_ms(wall, self._fresh_back_s[base_topic(tp.topic)]) for tp in lacking}
        try:
            answers = self._consumer.offsets_for_times(dict(targets))
        except (KafkaError, KeyError, OSError) as exc:
            log.warning("group %r: %d partition(s) without a committed offset, whose search by time failed (%s: %s):"
                        " they start at their ends", self.group_id, len(lacking), type(exc).__name__, exc)
            self._consumer.seek_to_end(*(asked[tp] for tp in lacking))
            return
        found = {asked[tp]: fresh_start(targets[asked[tp]], _answer(answers.get(asked[tp]))) for tp in lacking}
        # (RESET: where auto_offset_reset says; an empty partition, on the embedded broker, answers so)
        from_start = self._settings.get("auto_offset_reset") == "earliest"
        chosen.update({ktp: starts.get(ktp) for ktp, start in found.items()
                       if start is FreshStart.RESET and from_start})
        ends = [ktp for ktp, start in found.items() if start is FreshStart.END or (
            start is FreshStart.RESET and not from_start)]
        with contextlib.suppress(KafkaError, KeyError, OSError):  # (then none committed: the next owner decides)
            chosen.update(self._consumer.end_offsets(ends) if ends else {})
        for tp in lacking:
            ktp = asked[tp]
            start = found[ktp]
            back = self._fresh_back_s[base_topic(tp.topic)]
            if start is FreshStart.RESET:
                log.info("%s[%d]: no offset in group %r, and the broker does not search by time: from where "
                         "auto_offset_reset says", tp.topic, tp.partition, self.group_id)
            elif start is FreshStart.END:
                log.info("%s[%d]: no offset in group %r, nothing since %.0f s ago: from its end", tp.topic,
                         tp.partition, self.group_id, back)
                self._consumer.seek_to_end(ktp)
            else:
                log.info("%s[%d]: no offset in group %r: from offset %d, the first record since %.0f s ago (%d "
                         "before it left unread)", tp.topic, tp.partition, self.group_id, start, back,
                         start - starts.get(ktp, start))
                self._consumer.seek(ktp, start)
                chosen[ktp] = start

    def _commit_fresh_starts(self) -> None:
        """Commit the starts `_start_fresh` chose in the last assignment, for the partitions still held: a member
        that stops before its own first commit (killed, or paused past its session timeout, seconds after the
        assignment while it reads its boards' history and first frames) hands its next owner that start, not a
        fresh one decided later, which would skip the frames between the two (a move). Committed here, after the
        poll that assigned them, not in the assignment itself, where kafka-python's group is still joining. A
        commit that fails is said; the next owner then decides afresh, as before."""
        from kafka.errors import KafkaError
        from kafka.structs import OffsetAndMetadata

        if not self._fresh_starts:
            return
        held = self._consumer.assignment()
        starts, self._fresh_starts = self._fresh_starts, {}
        offsets = {ktp: OffsetAndMetadata(offset, "", -1) for ktp, offset in starts.items() if ktp in held}
        try:
            if offsets:
                self._consumer.commit(offsets)
        except KafkaError as exc:
            log.warning("group %r: the starts of %d partition(s) without an offset not committed (%s: %s)",
                        self.group_id, len(offsets), type(exc).__name__, exc)

    def _from_start_in_pair(self, lacking: list[TopicPartition], asked: Mapping[TopicPartition, Any],
                            committed: Mapping[Any, int | None]) -> list[TopicPartition]:
        """Of `lacking` (partitions without an offset to resume from), those of a rolled pair whose other topic the
        group has committed on the same partition start at their beginning (xqarb.fresh_start.read_on_in_pair).
        Returns the others."""
        pair_of = {**self._pairs, **{second: base for base, second in self._pairs.items()}}
        done = {(tp.topic, tp.partition) for tp, ktp in asked.items() if committed.get(ktp) is not None}
        others = []
        for tp in lacking:
            other = read_on_in_pair(tp.topic, pair_of, {t for t, p in done if p == tp.partition})
            if other is None:
                others.append(tp)
                continue
            log.info("%s[%d]: no offset in group %r, which read %s[%d]: from its start", tp.topic, tp.partition,
                     self.group_id, other, tp.partition)
            self._consumer.seek_to_beginning(asked[tp])
        return others

    def _follow_roll(self) -> None:
        """Rolled frames (observations): read a topic of a rolled pair that was emptied and made again from its
        start, and read a board's frames in the order they were taken: a partition waits while the same partition
        of the other topic still has older frames (the resting topic's, unless the topic taking new frames still
        holds older ones: a group more than a period behind; xqarb.roll_order), and the current topic's for
        ROLL_HOLD_S after each switch (late acknowledgements)."""
        from kafka.errors import KafkaError

        names = {topic for pair in self._pairs.items() for topic in pair}
        held = [tp for tp in self._consumer.assignment() if tp.topic in names]
        now = time.monotonic()
        if not held:
            self._next_roll_check = 0.0  # nothing to look at: polls as long as asked, and a look at once when held
        # A partition just assigned is looked at at once: its end then is what tells a later emptying.
        if not held or (now < self._next_roll_check and all(tp in self._seen_ends for tp in held)):
            self._release_caught_up()
            return
        wall = self._wall_clock()
        # Look again at the next switch (from when the new topic's frames wait) and at the end of the hold (from
        # when they may be read), not up to ROLL_CHECK_S after either: frames held longer than the hold are a
        # move's latency.
        bases = sorted({base_topic(tp.topic) for tp in held})
        due = ROLL_CHECK_S
        for base in bases:
            since, hold = since_switch_s(wall, base), _hold_s(base)
            due = min(due, ROLL_PERIODS_S[base] - since)
            if since < hold:
                due = min(due, hold - since)
        self._next_roll_check = now + due
        self._behind = {}
        try:
            ends = self._consumer.end_offsets(held)
        except (KeyError, KafkaError) as exc:
            # A broker restarted empty answers for no partition of a topic `up` has not made again yet, and
            # kafka-python 2.3 then raises KeyError: nothing is decided on that; looked at again at the next check.
            log.warning("group %r: the ends of %d partition(s) not known (%s: %s); looking again",
                        self.group_id, len(held), type(exc).__name__, exc)
            return
        self._heads = {tp: head for tp, head in self._heads.items() if tp in held}
        wait: list[Any] = []
        go: list[Any] = []
        for base in bases:
            pair = [tp for tp in held if base_topic(tp.topic) == base]
            self._follow_pair(base, pair, ends, wall, wait, go)
        if wait:
            self._consumer.pause(*wait)
        if go:
            self._consumer.resume(*go)

    def _follow_pair(self, base: str, held: list[Any], ends: Mapping[Any, int], wall: float, wait: list[Any],
                     go: list[Any]) -> None:
        """`_follow_roll` for the held partitions of one rolled pair: those to pause go to `wait`, the others to
        `go` (xqarb.roll_order.roll_plan: in the order of the generations they hold, as far as known)."""
        current, previous = rolled_topics_at(base, wall)
        since = since_switch_s(wall, base)
        settled = since >= ROLL_SETTLE_S  # (the roller may have emptied the other topic since)
        holding = since < _hold_s(base)
        positions = self._positions_told(held)
        unknown = {tp.partition for tp in held if tp not in positions}
        if unknown:  # (both topics of such a partition number wait: which holds the older records is not known)
            wait.extend(tp for tp in held if tp.partition in unknown)
            held = [tp for tp in held if tp.partition not in unknown]
            self._next_roll_check = min(self._next_roll_check, time.monotonic() + ROLL_CHECK_S)
        for tp in held:
            end, seen = ends.get(tp), self._seen_ends.get(tp)
            if tp.topic == previous and settled and end == 0 and seen and positions[tp]:
                # The resting topic was deleted and made again, empty (the roller): its offsets start again from
                # 0. Only then: this broker reports the last batch's base offset + 1 as the end, so `position >
                # end` also happens while nothing was emptied.
                log.info("%s[%d] was emptied (end 0, was %d): reading it from its start", tp.topic, tp.partition,
                         seen)
                self._consumer.seek_to_beginning(tp)
                positions[tp] = 0
                self._heads.pop(tp, None)
            if end is not None:
                self._seen_ends[tp] = end
        sides = roll_sides(held, positions, ends, self._heads)
        waiting, going, behind = roll_plan(held, current, previous, sides, holding)
        wait.extend(waiting)
        go.extend(going)
        self._behind.update({tp: (other, ends.get(other, 0)) for tp, other in behind.items()})

    def _positions_told(self, held: list[Any]) -> dict[Any, int]:
        """The positions of `held` that kafka-python tells within POSITION_READ_S each (it asks the broker for the
        committed offset or the reset one, and without a deadline asks again for ever while the answer is a
        retriable error); one not told is left out, looked at again at the next check, and said once."""
        told: dict[Any, int] = {}
        for tp in held:
            position = self._consumer.position(tp, timeout_ms=int(POSITION_READ_S * 1000))
            if position is not None:
                told[tp] = position
                self._position_unknown.discard(tp)
            elif tp not in self._position_unknown:  # (said once, not at every look)
                self._position_unknown.add(tp)
                log.warning("group %r: the position of %s[%d] not known after %.0f s; looked at again",
                            self.group_id, tp.topic, tp.partition, POSITION_READ_S)
        return told

    def _release_caught_up(self) -> None:
        """Between two looks at the roll: resume each waiting partition whose partition of the other topic has been
        read up to the end seen (`_behind`), at once and without asking the broker, rather than at
        the next look, up to ROLL_CHECK_S later: a move's latency."""
        if not self._behind:
            return
        assigned = self._consumer.assignment()
        ready = [tp for tp, (other, end) in self._behind.items()
                 if tp not in assigned or other not in assigned or (self._consumer.position(other) or 0) >= end]
        for tp in ready:
            del self._behind[tp]
        ready = [tp for tp in ready if tp in assigned]
        if ready:
            self._consumer.resume(*ready)

    def _rewind(self, batches: Mapping[Any, list[Any]]) -> None:
        self._seek_back({tp: messages[0].offset for tp, messages in batches.items() if messages})

    def _dead_letter(self, record: Record, reason: str) -> None:
        if self._dlq is None:
            self._dlq = Producer(self._bootstrap, client_id=f"xqarb-{self.group_id}-dlq")
            self._own_dlq = True
        # Sent and acknowledged before poll() returns, so committing past this offset loses nothing.
        dead_letter(
            self._dlq, record.topic, record.partition, record.offset, record.value, reason,
            key=record.key, source=f"consumer:{self.group_id}",
        )  # fmt: skip
        self.dead_lettered += 1
        log.warning("dead-lettered %s[%d]@%d: %s", record.topic, record.partition, record.offset, reason)

    def commit(self, offsets: Mapping[TopicPartition, int] | None = None, *,
               held: Mapping[TopicPartition, int] | None = None) -> None:
        """Commit `offsets` (partition -> the next offset to read, i.e. last processed + 1), or, without
        arguments, the position after everything `poll()` returned (and dead-lettered). `held` (without `offsets`):
        partitions whose commit stops at that offset at most, records this member has read but whose outcome it
        has not given yet (vision's moves in progress): a next owner reads them again.

        `CommitFailed` where the group no longer knows this member (kafka-python's CommitFailedError: a broker
        restarted empty, or this process paused past its session timeout) is not the end of the consumer: the
        next `poll()` rejoins, calling `on_revoked` and then `on_assigned`, and each partition assigned goes on
        from the group's committed offset (none: `auto_offset_reset`). Callers say so and poll on."""
        from kafka import TopicPartition as KafkaTopicPartition
        from kafka.errors import KafkaError
        from kafka.structs import OffsetAndMetadata

        kafka_offsets = None
        if offsets is not None:
            if not offsets:
                return
            kafka_offsets = {
                KafkaTopicPartition(tp.topic, tp.partition): OffsetAndMetadata(offset, "", -1)
                for tp, offset in offsets.items()
            }
        elif held:
            kafka_offsets = self._consumed_at_most(held)
        try:
            self._consumer.commit(kafka_offsets)
        except KafkaError as exc:
            raise CommitFailed(
                f"group {self.group_id!r}: committing {offsets or 'the consumed positions'} failed: {exc}"
            ) from exc

    def _consumed_at_most(self, held: Mapping[TopicPartition, int]) -> dict[Any, Any] | None:
        """What `commit()` without offsets commits (kafka-python's consumed positions), each partition of `held` no
        further than its offset there; None where the client does not tell its positions (commit them all)."""
        from kafka.structs import OffsetAndMetadata

        subscription = getattr(self._consumer, "_subscription", None)
        consumed = getattr(subscription, "all_consumed_offsets", None)
        if consumed is None:
            return None
        out = {}
        for tp, at in consumed().items():
            stop = held.get(TopicPartition(tp.topic, tp.partition))
            out[tp] = at if stop is None or stop >= at.offset else OffsetAndMetadata(stop, at.metadata, -1)
        return out

    def committed(self, tp: TopicPartition) -> int | None:
        """The group's committed offset for a partition (None if nothing was committed)."""
        from kafka import TopicPartition as KafkaTopicPartition

        return self._consumer.committed(KafkaTopicPartition(tp.topic, tp.partition))

    def close(self) -> None:
        """Release the partitions (`on_revoked` is called for them, as before a rebalance), then leave the group
        (its partitions go to the other members at once) without committing."""
        held = sorted(self._listener.assigned)
        self._listener.assigned.clear()
        try:
            if held and self._listener.on_revoked is not None:
                self._listener.on_revoked(held)
        finally:
            self._close_client()

    def _close_client(self) -> None:
        try:
            if self._consumer is not None:
                self._consumer.close(autocommit=False)
        finally:
            if self._own_dlq and self._dlq is not None:
                self._dlq.close()

    def __enter__(self) -> Consumer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _hold_s(base: str) -> float:
    """How long after a switch a consumer holds the new topic of a rolled pair: ROLL_HOLD_S for frames (vision
    skips a late one), ROLL_SETTLE_S for the others (nothing downstream skips them)."""
    return ROLL_HOLD_S if base == FRAMES else ROLL_SETTLE_S


# A partition of a rolled pair -> (the offset of its next record to read, that record's generation): learned from a
# record held back (`order_rolled`), and true while the partition's position is that offset.
Heads = dict[Any, tuple[int, float]]


def roll_sides(parts: Iterable[Any], positions: Mapping[Any, int], ends: Mapping[Any, int], heads: Heads,
               busy: Iterable[Any] = ()) -> dict[Any, RollSide]:
    """What a reader knows of each of `parts` (xqarb.roll_order.RollSide): unread where its position is before its
    end seen (or it is `busy`: it returned records, and may hold more already fetched), and its head where the
    record at its position was held back."""
    marked = set(busy)
    sides: dict[Any, RollSide] = {}
    for tp in parts:
        head = heads.get(tp)
        sides[tp] = RollSide(positions[tp] < ends.get(tp, 0) or tp in marked,
                             head[1] if head is not None and head[0] == positions[tp] else None)
    return sides


def order_rolled(consumer: Any, batches: Mapping[Any, list[Any]], ends: Mapping[Any, int], heads: Heads,
                 wall: float) -> tuple[list[tuple[Any, list[Any]]], bool]:
    """A poll's records (kafka-python's `batches`, of `consumer`) as (partition, records) runs in reading order:
    those of each rolled pair's partition in the order of their generations (xqarb.roll_order.roll_merge), whatever
    the wall clock (`wall`) says rests. A record that must wait for records of the other topic not fetched yet is
    held back with those after it: its partition is sought back to it and paused, and its generation kept in
    `heads`. `ends`: each partition's end at the last look. Also (True) where some were held back: the caller looks
    at the pair again at once, to fetch the other topic."""
    assigned = {(tp.topic, tp.partition): tp for tp in consumer.assignment()}
    out: list[tuple[Any, list[Any]]] = []
    done: set[tuple[str, int]] = set()
    held_back = False
    for tp, records in batches.items():
        base = base_topic(tp.topic)
        if base not in ROLLED or not records or (tp.topic, tp.partition) not in assigned:
            out.append((tp, records))
            continue
        if (base, tp.partition) in done:
            continue
        done.add((base, tp.partition))
        current, previous = rolled_topics_at(base, wall)
        holding = since_switch_s(wall, base) < _hold_s(base)
        pair = [assigned.get((name, tp.partition)) for name in (previous, current)]
        got = [batches.get(p, []) if p is not None else [] for p in pair]
        gens = [[record_generation(m.topic, m.timestamp) for m in ms] for ms in got]
        # (the resting topic, read up to its end, may still take records sent before the switch while holding)
        afters = [_after(consumer, pair[side], got[side], ends, heads, side == 0 and holding) for side in (0, 1)]
        taken = [0, 0]
        for side, start, stop in roll_merge(gens[0], gens[1], afters[0], afters[1]):
            out.append((pair[side], got[side][start:stop]))
            taken[side] = stop
        for side, ms in enumerate(got):
            if taken[side] < len(ms):
                first = ms[taken[side]]
                heads[pair[side]] = (first.offset, gens[side][taken[side]])
                consumer.seek(pair[side], first.offset)
                consumer.pause(pair[side])
                held_back = True
    return out, held_back


def _after(consumer: Any, tp: Any, records: list[Any], ends: Mapping[Any, int], heads: Heads,
           holding: bool) -> float | None:
    """The generation of the next record partition `tp` of a rolled pair can deliver after `records` (this poll's):
    its head where known; None where it has unread records of a generation not known, or while `holding` (records
    may still come that were sent before the switch); NOTHING_OLDER where it has none unread."""
    if tp is None:
        return NOTHING_OLDER
    if tp not in ends:  # not looked at yet: it may hold anything
        return None
    position = records[-1].offset + 1 if records else (consumer.position(tp) or 0)
    if position < ends[tp]:
        head = heads.get(tp)
        return head[1] if head is not None and head[0] == position else None
    return None if holding else NOTHING_OLDER


def positions_known(consumer: Any) -> dict[Any, int]:
    """Each assigned partition's position as known now (none asked of the broker)."""
    known = {}
    for tp in consumer.assignment():
        position = consumer.position(tp, timeout_ms=0)
        if position is not None:
            known[tp] = position
    return known


def up_to_holes(consumer: Any, batches: Mapping[Any, list[Any]], starts: Mapping[Any, int], holes: OffsetHoles,
                 who: str) -> dict[Any, list[Any]]:
    """kafka-python's `batches`, each partition's records cut at its first hole (xqarb.offset_holes: a record
    acknowledged but not readable yet when they were fetched), and such a partition read again from the missing
    offset. `starts`: the partitions' positions when the poll began, where they still held at its end."""
    from xqarb.metrics import OFFSET_HOLES

    now = time.monotonic()
    out: dict[Any, list[Any]] = {}
    for tp, messages in batches.items():
        waited, passed = holes.waited, holes.passed
        n, again = holes.readable(tp, starts.get(tp), [m.offset for m in messages], now)
        if again is not None:
            consumer.seek(tp, again)
        if n:
            out[tp] = messages if n == len(messages) else messages[:n]
        if holes.waited > waited:
            OFFSET_HOLES.labels("filled").inc(holes.waited - waited)
        if holes.passed > passed:
            OFFSET_HOLES.labels("passed").inc(holes.passed - passed)
            log.warning("%s: %s[%d]: %d offset(s) still missing after %.0f s, passed over", who, tp.topic,
                        tp.partition, holes.passed - passed, holes.wait_s)
    return out


def _answer(found: Any) -> tuple[int, int] | None:
    """kafka-python's answer of a search by time (offsets_for_times) as xqarb.fresh_start takes it."""
    return None if found is None else (found.offset, found.timestamp)


def _record(m: Any) -> Record:
    """Our Record from a kafka-python ConsumerRecord."""
    return Record(
        topic=m.topic,
        partition=m.partition,
        offset=m.offset,
        key=None if m.key is None else m.key.decode("utf-8", errors="replace"),
        value=m.value,
        headers={k: (v or b"") for k, v in (m.headers or [])},
        timestamp_ms=m.timestamp,
        event=None,
    )


class Reader:
    """Reads whole topics without a consumer group (no commits, no rebalancing, no dead-lettering): for tools,
    live streams and tests. Undecodable records are returned with `event=None` and the reason in `error`."""

    def __init__(
        self,
        bootstrap: str | Sequence[str],
        topics: Sequence[str],
        *,
        from_beginning: bool = True,
        decode: bool = True,
        registry: codec.SchemaRegistry | None = None,
        client_id: str = "xqarb-reader",
        timeout_s: float = 30.0,
        partitions: Sequence[int] | None = None,
        rolled: bool = False,
        **config: Any,
    ) -> None:
        """`partitions`: only these partition numbers of each topic (None: all of them). `rolled`: the second topics
        of those of `topics` the broker rolls too (`with_rolled`), so that every record is read."""
        from kafka import KafkaConsumer
        from kafka import TopicPartition as KafkaTopicPartition
        from kafka.errors import KafkaError

        self.decode = decode
        self.registry = registry
        self.partition_counts: dict[str, int] = {}  # topic -> how many partitions it has
        settings: dict[str, Any] = {
            "bootstrap_servers": _servers(bootstrap),
            "group_id": None,
            "client_id": client_id,
            "enable_auto_commit": False,
            "allow_auto_create_topics": False,  # ensure_topics makes them (see Producer)
            "receive_message_max_bytes": FETCH_RESPONSE_MAX_BYTES,
            "fetch_max_wait_ms": FETCH_MAX_WAIT_MS,  # live streams read through a Reader too
            "metrics_enabled": CLIENT_METRICS,
        }
        settings.update(config)
        try:
            self._consumer = KafkaConsumer(**settings)
            assigned: list[Any] = []
            deadline = time.monotonic() + timeout_s
            if rolled:
                topics = with_rolled(topics, self._consumer.topics())
            for topic in topics:
                ids = self._consumer.partitions_for_topic(topic)
                while not ids and time.monotonic() < deadline:
                    self._consumer.topics()  # refresh metadata: the topic may have just been created
                    ids = self._consumer.partitions_for_topic(topic)
                if not ids:
                    raise BusError(f"topic {topic!r} does not exist on {bootstrap}")
                self.partition_counts[topic] = len(ids)
                assigned += [KafkaTopicPartition(topic, p) for p in sorted(ids)
                             if partitions is None or p in partitions]
            self._consumer.assign(assigned)
            if assigned and from_beginning:
                self._consumer.seek_to_beginning(*assigned)
            elif assigned:
                self._consumer.seek_to_end(*assigned)
        except KafkaError as exc:
            raise BusError(f"cannot read {list(topics)} on Kafka at {bootstrap}: {exc}") from exc
        self.holes = OffsetHoles()  # records missing from a partition's offsets, waited for (`poll`)

    def seek(self, tp: TopicPartition, offset: int) -> None:
        """Continue a partition from an offset (e.g. resuming a stream after its last seen event)."""
        from kafka import TopicPartition as KafkaTopicPartition

        self._consumer.seek(KafkaTopicPartition(tp.topic, tp.partition), offset)

    def end_offsets(self) -> dict[TopicPartition, int]:
        """The offset the next record of each partition read will have (what is there now ends before it)."""
        from kafka.errors import KafkaError

        try:
            ends = self._consumer.end_offsets(list(self._consumer.assignment()))
        except KafkaError as exc:
            raise BusError(f"reading the end offsets failed: {exc}") from exc
        return {TopicPartition(tp.topic, tp.partition): int(end) for tp, end in ends.items()}

    def position(self, tp: TopicPartition) -> int:
        """The offset of the next record this reader will return from a partition it reads."""
        from kafka import TopicPartition as KafkaTopicPartition
        from kafka.errors import KafkaError

        try:
            return int(self._consumer.position(KafkaTopicPartition(tp.topic, tp.partition)))
        except KafkaError as exc:
            raise BusError(f"reading the position on {tp.topic}[{tp.partition}] failed: {exc}") from exc

    def poll(self, timeout_s: float = 1.0, max_records: int | None = None) -> list[Record]:
        from kafka.errors import KafkaError

        try:
            starts = positions_known(self._consumer)
            batches = self._consumer.poll(timeout_ms=int(timeout_s * 1000), max_records=max_records)
        except KafkaError as exc:
            raise BusError(f"reading failed: {exc}") from exc
        batches = up_to_holes(self._consumer, batches, starts, self.holes, "reader")
        records = []
        for messages in batches.values():
            for m in messages:
                record = _record(m)
                if self.decode:
                    try:
                        record = replace(record, event=codec.decode(m.value, self.registry))
                    except codec.CodecError as exc:
                        record = replace(record, error=exc.reason)
                records.append(record)
        return records

    def close(self) -> None:
        self._consumer.close(autocommit=False)

    def __enter__(self) -> Reader:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
