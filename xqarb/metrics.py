"""Prometheus metrics shared by every service (ingest, vision, referee, the API).

One definition per metric, here, so that the services agree on names and labels and `xqarb up` (all services in
one process) exposes them on one `/metrics`. A service running on its own machine exposes them with `serve(port)`
or through its Flask app (`metrics_response()`).

Names follow Prometheus conventions: `_total` for counters, `_seconds` for durations.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, Counter, Gauge, Histogram, generate_latest

# Latency buckets from 5 ms to 60 s: a move should reach the stream in well under a second; a backlog shows
# up in the upper buckets instead of disappearing into +Inf.
_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

FRAMES_IN = Counter("xq_frames_in_total", "camera frames accepted by ingest (acknowledged by the broker)")
FRAMES_REFUSED = Counter("xq_frames_refused_total", "camera frames refused by ingest", ["reason"])
INGEST_REQUESTS = Counter(
    "xq_ingest_requests_total", "ingest HTTP requests by endpoint and HTTP status", ["endpoint", "status"]
)
INGEST_IN_FLIGHT = Gauge("xq_ingest_in_flight", "ingest sends waiting for the broker's acknowledgement")
DEAD_LETTERS = Counter(
    "xq_dead_letters_total", "messages sent to xq.dlq, by the service that refused them", ["service"]
)
# A record a reader found missing from a partition's offsets (xqarb.offset_holes): read again once it came
# ("filled"), or passed over after waiting ("passed": offsets never read).
OFFSET_HOLES = Counter("xq_offset_holes_total", "holes in a partition's offsets met by a reader", ["outcome"])
CONSUMER_LAG = Gauge(
    "xq_consumer_lag", "messages not yet consumed (end offset - committed offset)", ["group", "topic", "partition"]
)
CAPTURE_TO_OBSERVATION = Histogram(
    "xq_capture_to_observation_seconds",
    "time from a frame's capture (occurred_at) to the observation made from it",
    buckets=_LATENCY_BUCKETS,
)
OBSERVATION_TO_RULING = Histogram(
    "xq_observation_to_ruling_seconds",
    "time from an observation's creation to the referee's output event (move or ruling) that it caused",
    buckets=_LATENCY_BUCKETS,
)
CAPTURE_TO_STREAM = Histogram(
    "xq_capture_to_stream_seconds",
    "time from a frame's capture to its move reaching the live stream",
    buckets=_LATENCY_BUCKETS,
)
FRAMES_OUT_OF_ORDER = Counter(
    "xq_vision_frames_out_of_order_total",
    "camera frames vision skipped as late or repeated: taken (by their camera's count, or else their capture "
    "time) not after a frame of the same board (and game) already read",
)
FRAMES_MISSED = Counter(
    "xq_vision_frames_missed_total",
    "camera frames never read by vision, whatever the cause (refused by ingest, lost by a broker restart, or "
    "dropped): numbers missing from a camera's count (X-Sequence, within one epoch) between two of its frames "
    "vision read; compare with xq_frames_dropped_total and xq_frames_refused_total, which count ingest's refusals",
)
CAMERA_CLOCK_STEPS = Counter(
    "xq_vision_camera_clock_steps_total",
    "new camera frames (a later sequence number or epoch) captured before the board's last frame read: a camera "
    "clock stepped back or a camera restarted; the board's time line goes on from its last frame",
)
RULINGS = Counter("xq_rulings_total", "rulings by article and kind", ["article", "kind"])
GAME_EVENTS = Counter("xq_game_events_total", "events seen on xq.game-events, by type", ["type"])
LEDGER_APPENDS = Counter("xq_ledger_appends_total", "entries appended to game ledgers")
STREAM_CLIENTS = Gauge("xq_stream_clients", "open server-sent-event connections on /api/stream")
# `xqarb up`'s supervision (xqarb/supervise.py): per part (broker, vision-N, referee).
RESTARTS = Counter("xq_restarts_total", "parts of `xqarb up` started again after they went down", ["part"])
PART_CRASHES = Counter("xq_part_crashes_total", "parts of `xqarb up` that went down (or failed to restart)", ["part"])
PART_UP = Gauge("xq_part_up", "1 while a part of `xqarb up` is up, 0 while it is down", ["part"])
PART_CRASH_LOOP = Gauge("xq_part_crash_loop", "1 while a part of `xqarb up` is in a crash loop", ["part"])
DEAD_LETTERS_DROPPED = Counter(
    "xq_dead_letters_dropped_total",
    "refused messages whose copy for xq.dlq the broker did not take in time",
    ["service"],
)


def observe_game_event(event_type: str, data: Mapping[str, Any]) -> None:
    """Count one event of xq.game-events; a ruling is counted by its article (the referee's output)."""
    GAME_EVENTS.labels(event_type).inc()
    if event_type == "Ruling":
        RULINGS.labels(str(data.get("article", "")), str(data.get("kind", ""))).inc()


def metrics_response() -> tuple[bytes, int, dict[str, str]]:
    """The body, status and headers of a `/metrics` answer (for a Flask view)."""
    return generate_latest(REGISTRY), 200, {"Content-Type": CONTENT_TYPE_LATEST}


def serve(port: int, addr: str = "0.0.0.0") -> None:
    """Expose `/metrics` on its own port (a service without an HTTP server of its own, e.g. vision)."""
    from prometheus_client import start_http_server

    start_http_server(port, addr=addr)


class LagSampler:
    """Samples consumer lag of the given groups every `interval` seconds into `xq_consumer_lag`.

    `read_lag()` returns ((group, topic, partition, lag), ...); it is a thin Kafka adapter (see `kafka_lag`)
    so that the sampler itself stays testable without a broker.
    """

    def __init__(self, read_lag: Callable[[], Iterable[tuple[str, str, int, int]]], interval: float = 5.0) -> None:
        self._read_lag = read_lag
        self._interval = interval
        self._stop = threading.Event()
        self._warned = False
        self._thread = threading.Thread(target=self._run, name="xq-lag-sampler", daemon=True)

    def sample_once(self) -> int:
        n = 0
        for group, topic, partition, lag in self._read_lag():
            CONSUMER_LAG.labels(group, topic, str(partition)).set(lag)
            n += 1
        return n

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self.sample_once()
            except Exception as exc:  # a broker hiccup must not kill the sampler: it tries again next interval
                if not self._warned:
                    self._warned = True
                    print(f"metrics: consumer lag sampling failed (said once): {type(exc).__name__}: {exc}", flush=True)

    def start(self) -> LagSampler:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()


def kafka_lag(
    bootstrap: str, groups: Iterable[str], topics: Iterable[str]
) -> Callable[[], list[tuple[str, str, int, int]]]:
    """A `read_lag` for LagSampler: each group's committed offsets against the partitions' end offsets.

    One group-named consumer per group that never joins (OffsetFetch only), rather than the admin client's
    ListConsumerGroupOffsets, which some Kafka-compatible brokers answer in a form kafka-python cannot decode.
    """
    from kafka import KafkaConsumer, TopicPartition

    from xqarb import bus

    topics = tuple(topics)
    probes = {
        g: KafkaConsumer(bootstrap_servers=bootstrap, group_id=g, client_id=f"xq-lag-{g}", enable_auto_commit=False)
        for g in groups
    }
    ends_probe = KafkaConsumer(bootstrap_servers=bootstrap, client_id="xq-lag-ends", enable_auto_commit=False)

    def read() -> list[tuple[str, str, int, int]]:
        tps = [TopicPartition(t, p) for t in topics for p in sorted(ends_probe.partitions_for_topic(t) or ())]
        ends = ends_probe.end_offsets(tps)
        out: list[tuple[str, str, int, int]] = []
        for group, probe in probes.items():
            offsets = bus.committed_offsets(probe, tps)
            for tp in tps:
                committed = offsets[tp]
                if committed is None:
                    continue
                out.append((group, tp.topic, tp.partition, max(0, ends.get(tp, committed) - committed)))
        return out

    return read
