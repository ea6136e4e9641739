"""The ingest's Kafka side: a `Publisher` over `xqarb.bus.Producer` (acks=all; the answer waits for it)."""

from __future__ import annotations

import logging

from xqarb import bus
from xqarb.events import Event
from xqarb.ingest.app import BrokerUnavailable

log = logging.getLogger(__name__)


class BusPublisher:
    """Sends events keyed by board and dead letters with their reason; a missing acknowledgement is an error."""

    def __init__(self, producer: bus.Producer) -> None:
        self.producer = producer

    @classmethod
    def connect(cls, bootstrap: str, *, ack_timeout_s: float = 10.0, client_id: str = "xq-ingest") -> BusPublisher:
        return cls(bus.Producer(bootstrap, client_id=client_id, timeout_s=ack_timeout_s))

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
