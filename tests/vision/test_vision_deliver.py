"""Vision's wait for its observations to be acknowledged (services/vision/service.py, deliver): a broker away
longer than the producer's timeout does not end the process; the batch's observations are sent again, the same
ones in the same order, until the broker takes them; a stop said meanwhile ends the wait with the error."""

from __future__ import annotations

from typing import Any

import pytest

from xqarb import bus
from xqarb.vision import service


class AwayBroker:
    """A producer whose broker does not acknowledge the first `refusals` waits (each after its timeout)."""

    def __init__(self, refusals: int) -> None:
        self.refusals = refusals
        self.sends: list[list[Any]] = []  # each send_soon's events
        self.waits = 0

    def send_soon(self, topic: str, events: list[Any]) -> list[bus.Pending]:
        assert topic == bus.OBSERVATIONS
        self.sends.append(list(events))
        return [bus.Pending(None, topic, e) for e in events]

    def acknowledged(self, pending: list[bus.Pending]) -> list[bus.Delivery]:
        self.waits += 1
        if self.refusals:
            self.refusals -= 1
            raise bus.PublishError(f"{bus.OBSERVATIONS}: the broker did not acknowledge the message (timeout)")
        return [bus.Delivery(p.topic, 0, i) for i, p in enumerate(pending)]


@pytest.fixture(autouse=True)
def no_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(service, "RESEND_PAUSE_S", 0.0)


def test_observations_not_acknowledged_are_sent_again_until_they_are() -> None:
    producer = AwayBroker(refusals=4)  # a broker host rebooting: four producer timeouts (4 x 30 s)
    events = ["seen-1", "seen-2", "quiet-1"]
    first = producer.send_soon(bus.OBSERVATIONS, events)
    service.deliver(producer, first, events, stop=lambda: False)  # returns: no exception ends the process
    assert producer.waits == 5
    assert producer.sends == [events] * 5  # the same observations, in the same order, each time


def test_acknowledged_at_once_sends_nothing_more() -> None:
    producer = AwayBroker(refusals=0)
    events = ["seen-1"]
    service.deliver(producer, producer.send_soon(bus.OBSERVATIONS, events), events, stop=lambda: False)
    assert (producer.waits, len(producer.sends)) == (1, 1)


def test_a_stop_ends_the_wait_with_the_error() -> None:
    producer = AwayBroker(refusals=10)
    events = ["seen-1"]
    with pytest.raises(bus.PublishError):
        service.deliver(producer, producer.send_soon(bus.OBSERVATIONS, events), events, stop=lambda: True)
    assert producer.waits == 1 and len(producer.sends) == 1
