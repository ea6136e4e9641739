"""The ingest's Kafka side: a `Publisher` over `xqarb.bus.Producer` (acks=all; the answer waits for it)."""

from __future__ import annotations

import concurrent.futures
import logging
import socket
import threading

from xqarb import bus, metrics
from xqarb.events import Event
from xqarb.ingest.app import BrokerUnavailable, Stored

log = logging.getLogger(__name__)

# How long a readiness probe waits for the broker to accept a connection: a broker on the venue's network answers
# in milliseconds; a probe must never hold the load balancer's check for long.
PROBE_TIMEOUT_S = 0.5


def broker_reachable(bootstrap: str, timeout_s: float = PROBE_TIMEOUT_S) -> bool:
    """Whether any of the bootstrap servers (HOST:PORT[,...]) accepts a TCP connection within `timeout_s`."""
    for server in bootstrap.split(","):
        host, _, port = server.strip().rpartition(":")
        if not host or not port.isdigit():
            continue
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s):
                return True
        except OSError:
            continue
    return False


# A refusal is answered after at most this long waiting for its copy to reach xq.dlq: the copy is for whoever
# investigates a device later, and a broker that is down must not make every refusal wait the full ack timeout.
DLQ_WAIT_S = 0.5
# Copies still waiting for the broker beyond this many are dropped (counted): a dead broker and a misbehaving
# device together must not grow memory without bound.
DLQ_MAX_PENDING = 256


class BusPublisher:
    """Sends events keyed by board and dead letters with their reason; a missing acknowledgement is an error."""

    def __init__(self, producer: bus.Producer, bootstrap: str | None = None) -> None:
        self.producer = producer
        self.bootstrap = bootstrap
        # Dead letters are sent by one worker; the refusal waits for its copy at most DLQ_WAIT_S.
        self._dlq_worker = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="xq-ingest-dlq")
        self._dlq_lock = threading.Lock()
        self._dlq_pending = 0

    @classmethod
    def connect(cls, bootstrap: str, *, ack_timeout_s: float = 10.0, client_id: str = "xq-ingest") -> BusPublisher:
        return cls(bus.Producer(bootstrap, client_id=client_id, timeout_s=ack_timeout_s), bootstrap)

    def ready(self) -> bool:
        """Whether a bootstrap server accepts a connection now (for /readyz): what ingest can honestly tell of the
        broker without sending anything."""
        if not self.bootstrap:
            return True
        return broker_reachable(self.bootstrap)

    def publish(self, topic: str, event: Event, timeout: float) -> Stored:
        try:
            delivery = self.producer.send(topic, event)
        except bus.PublishError as exc:
            raise BrokerUnavailable(f"the broker did not acknowledge the event: {exc}") from exc
        return Stored(delivery.partition, delivery.offset, delivery.topic)  # (a frame's topic may be rolled)

    def dead_letter(self, reason: str, payload: bytes, *, board_id: str, source: str, topic: str) -> None:
        with self._dlq_lock:
            if self._dlq_pending >= DLQ_MAX_PENDING:
                metrics.DEAD_LETTERS_DROPPED.labels("ingest").inc()
                log.warning("xq.dlq copy of a refused message of %s dropped: %d copies wait for the broker",
                            source, self._dlq_pending)
                return
            self._dlq_pending += 1
        try:
            future = self._dlq_worker.submit(self._send_dead_letter, reason, payload, board_id, source, topic)
        except RuntimeError:  # closing: the worker takes no more
            with self._dlq_lock:
                self._dlq_pending -= 1
            metrics.DEAD_LETTERS_DROPPED.labels("ingest").inc()
            return
        try:
            future.result(timeout=DLQ_WAIT_S)
        except concurrent.futures.TimeoutError:
            pass  # still on its way: the worker counts it if the broker never takes it
        except concurrent.futures.CancelledError:  # closing: never sent
            metrics.DEAD_LETTERS_DROPPED.labels("ingest").inc()

    def _send_dead_letter(self, reason: str, payload: bytes, board_id: str, source: str, topic: str) -> None:
        try:
            # Rejected at ingest: no topic/partition/offset of origin; the intended topic is part of the reason.
            bus.dead_letter(
                self.producer, None, None, None, payload, f"ingest ({topic}): {reason}", key=board_id, source=source
            )
        except bus.PublishError as exc:
            # The refusal itself is already answered to the device; losing its copy is counted and logged.
            metrics.DEAD_LETTERS_DROPPED.labels("ingest").inc()
            log.warning("could not keep a refused message of %s in xq.dlq: %s", source, exc)
        finally:
            with self._dlq_lock:
                self._dlq_pending -= 1

    def close(self) -> None:
        self._dlq_worker.shutdown(wait=False, cancel_futures=True)
        self.producer.close()
