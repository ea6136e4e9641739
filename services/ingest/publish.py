"""The ingest's Kafka side: a `Publisher` over `xqarb.bus.Producer` (acks=all; the answer waits for it)."""

from __future__ import annotations

import logging
import socket

from xqarb import bus
from xqarb.events import Event
from xqarb.ingest.app import BrokerUnavailable

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


class BusPublisher:
    """Sends events keyed by board and dead letters with their reason; a missing acknowledgement is an error."""

    def __init__(self, producer: bus.Producer, bootstrap: str | None = None) -> None:
        self.producer = producer
        self.bootstrap = bootstrap

    @classmethod
    def connect(cls, bootstrap: str, *, ack_timeout_s: float = 10.0, client_id: str = "xq-ingest") -> BusPublisher:
        return cls(bus.Producer(bootstrap, client_id=client_id, timeout_s=ack_timeout_s), bootstrap)

    def ready(self) -> bool:
        """Whether a bootstrap server accepts a connection now (for /readyz): what ingest can honestly tell of the
        broker without sending anything."""
        if not self.bootstrap:
            return True
        return broker_reachable(self.bootstrap)

    def publish(self, topic: str, event: Event, timeout: float) -> tuple[int, int]:
        try:
            delivery = self.producer.send(topic, event)
        except bus.PublishError as exc:
            raise BrokerUnavailable(f"the broker did not acknowledge the event: {exc}") from exc
        return delivery.partition, delivery.offset

    def dead_letter(self, reason: str, payload: bytes, *, board_id: str, source: str, topic: str) -> None:
        try:
            # Rejected at ingest: no topic/partition/offset of origin; the intended topic is part of the reason.
            bus.dead_letter(
                self.producer, None, None, None, payload, f"ingest ({topic}): {reason}", key=board_id, source=source
            )
        except bus.PublishError as exc:
            # The refusal itself is already answered to the device; losing its copy is logged, not fatal.
            log.warning("could not keep a refused message of %s in xq.dlq: %s", source, exc)

    def close(self) -> None:
        self.producer.close()
