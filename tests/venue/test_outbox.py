"""Ingest's durable outbox: what got a 202 is on disk first and reaches Kafka, in order, across crashes of ingest
and of the broker."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.venue.conftest import now_us, read_topic
from xqarb import bus
from xqarb.ingest.outbox import Outbox, OutboxPublisher, publish_once


class FakeSender:
    """Records what it was asked to send; fails the sends whose index (over its whole life) is in `fail`."""

    def __init__(self, fail: Sequence[int] = ()) -> None:
        self.sent: list[tuple[str, str | None, bytes]] = []
        self.fail = set(fail)
        self.calls = 0

    def send_raw_batch(self, messages: Sequence[tuple[str, str | None, bytes]]) -> list[Any]:
        out: list[Any] = []
        for message in messages:
            n = self.calls
            self.calls += 1
            if n in self.fail:
                out.append(bus.PublishError(f"send {n} not acknowledged"))
            else:
                self.sent.append(message)
                out.append(bus.Delivery(message[0], 0, len(self.sent) - 1))
        return out


def test_what_was_put_survives_a_crash_and_goes_out_in_order(tmp_path: Path) -> None:
    path = tmp_path / "outbox.sqlite"
    box = Outbox(path)
    puts = [("xq.clock", "1", b"a"), ("xq.arbiter", "2", b"b"), ("xq.clock", "1", b"c"), ("xq.clock", "2", b"d")]
    ids = [box.put(*p) for p in puts]
    assert ids == sorted(ids)
    box.close()  # the process dies here: nothing was published

    box = Outbox(path)
    assert box.count() == 4
    sender = FakeSender()
    done, failure = publish_once(box, sender)
    assert failure is None and [i for i, _ in done] == ids
    assert sender.sent == puts
    assert box.count() == 0
    assert publish_once(box, sender) == ([], None)
    box.close()


def test_a_failed_send_keeps_it_and_everything_after_it(tmp_path: Path) -> None:
    box = Outbox(tmp_path / "outbox.sqlite")
    for value in (b"1", b"2", b"3", b"4"):
        box.put("xq.clock", "7", value)
    sender = FakeSender(fail=[1])  # the second message is not acknowledged; the third and fourth are
    done, failure = publish_once(box, sender)
    assert failure is not None and "send 1" in failure
    assert len(done) == 1 and box.count() == 3
    done, failure = publish_once(box, sender)
    assert failure is None and len(done) == 3
    # The board's order holds from the failed one on (3 and 4 reach the topic again after 2: duplicates only).
    assert [v for _, _, v in sender.sent] == [b"1", b"3", b"4", b"2", b"3", b"4"]


def test_the_publisher_answers_queued_while_the_broker_is_away_then_delivers(tmp_path: Path) -> None:
    from xqarb.events import make_event

    class Direct:
        def publish(self, topic: str, event: Any, timeout: float) -> tuple[int, int]:
            raise AssertionError("events must go through the outbox")

    sender = FakeSender(fail=range(0, 3))  # the broker is away for the first three attempts
    publisher = OutboxPublisher(Outbox(tmp_path / "o.sqlite"), sender, Direct(), confirm_wait_s=5).start()
    try:
        event = make_event("ClockPressed", "7", source="clock-7", source_seq=1, occurred_at=now_us(),
                           received_at=now_us(), side="red", red_ms=1000, black_ms=1000)
        stored = publisher.publish("xq.clock", event, timeout=5)
        assert stored is None  # kept, not yet acknowledged: the 202 says "queued"
        assert publisher.flush(timeout_s=10)
        assert len(sender.sent) == 1 and sender.sent[0][:2] == ("xq.clock", "7")
        # The broker answers now: the next one is acknowledged within the wait and says where it was stored.
        assert publisher.publish("xq.clock", event, timeout=5) == (0, 1)
    finally:
        publisher.close()


def test_an_unforeseen_error_in_a_round_does_not_end_publishing(tmp_path: Path) -> None:
    """A client library raising what no round foresaw (once) must not end the publishing thread: what was answered
    202 would otherwise wait on disk for ever. The round is retried and the event delivered."""
    from xqarb.events import make_event

    class Direct:
        def publish(self, topic: str, event: Any, timeout: float) -> tuple[int, int]:
            raise AssertionError("events must go through the outbox")

    class OddOnce(FakeSender):
        def send_raw_batch(self, messages: Sequence[tuple[str, str | None, bytes]]) -> list[Any]:
            if not self.calls:
                self.calls += 1
                raise KeyError(("xq.clock", 1))  # as kafka-python once answered without a partition asked for
            return super().send_raw_batch(messages)

    sender = OddOnce()
    publisher = OutboxPublisher(Outbox(tmp_path / "o.sqlite"), sender, Direct(), confirm_wait_s=0.1).start()
    try:
        event = make_event("ClockPressed", "7", source="clock-7", source_seq=1, occurred_at=now_us(),
                           received_at=now_us(), side="red", red_ms=1000, black_ms=1000)
        publisher.publish("xq.clock", event, timeout=5)
        assert publisher.flush(timeout_s=10)
        assert [m[:2] for m in sender.sent] == [("xq.clock", "7")]
        assert publisher._thread is not None and publisher._thread.is_alive()
    finally:
        publisher.close()


def clock_press(seq: int) -> dict[str, Any]:
    return {"type": "ClockPressed", "side": "red", "red_ms": 3_590_000 - seq, "black_ms": 3_600_000,
            "source_seq": seq, "occurred_at": now_us()}


def test_a_202_survives_the_broker_dying_and_coming_back(tmp_path: Path, venue: dict[str, Any]) -> None:
    """A real broker: killed (SIGKILL) while ingest goes on answering; each 202 reaches the topic once the broker
    is back, in the order of the posts."""
    from xqarb.broker import EmbeddedBroker
    from xqarb.ingest.app import create_app

    b7 = venue["b7"]
    broker = EmbeddedBroker().start()
    port = broker.port
    publisher = None
    try:
        bus.ensure_topics(broker.bootstrap, [bus.CLOCK], partitions=2)
        publisher = OutboxPublisher.connect(broker.bootstrap, tmp_path / "outbox.sqlite", ack_timeout_s=3)
        client = create_app(venue["config"], publisher).test_client()
        auth = {"Authorization": f"Bearer tok-clock-{b7}"}
        r = client.post(f"/ingest/v1/boards/{b7}/clock", json=clock_press(1), headers=auth)
        assert r.status_code == 202 and r.get_json()["offset"] == 0, r.get_json()

        assert broker._process is not None
        os.kill(broker._process.pid, signal.SIGKILL)  # the broker dies, taking its in-memory topics along
        broker._process.wait(5)
        broker._process = None
        ids = []
        started = time.monotonic()
        for seq in (2, 3, 4):
            r = client.post(f"/ingest/v1/boards/{b7}/clock", json=clock_press(seq), headers=auth)
            assert r.status_code == 202, r.get_json()
            assert r.get_json().get("queued") is True
            ids.append(r.get_json()["event_id"])
        assert time.monotonic() - started < 10, "ingest must not wait on the dead broker for every post"
        assert publisher.outbox.count() == 3

        broker = EmbeddedBroker(port).start()  # back on the same address, empty
        bus.ensure_topics(broker.bootstrap, [bus.CLOCK], partitions=2)
        found = read_topic(broker.bootstrap, bus.CLOCK, lambda it: it[1].event_id in ids, count=3, timeout_s=30)
        assert publisher.flush(timeout_s=10)
        found = read_topic(broker.bootstrap, bus.CLOCK, lambda it: it[1].event_id in ids, count=len(found) + 9,
                           timeout_s=2)
        in_topic = [event.event_id for _, event in sorted(found, key=lambda it: it[0].offset)]
        # A send cut by the broker's death may have been stored and then retried: the same event twice is
        # harmless (the referee drops it by event id); what matters is that each is there, first in post order.
        assert list(dict.fromkeys(in_topic)) == ids, in_topic
    finally:
        if publisher is not None:
            publisher.close()
        broker.stop()


def test_ingest_restarted_publishes_what_an_earlier_run_left(tmp_path: Path, topics: str,
                                                             venue: dict[str, Any]) -> None:
    from xqarb import codec
    from xqarb.events import make_event

    box = Outbox(tmp_path / "outbox.sqlite")
    event = make_event("ClockPressed", venue["b7"], source="clock", source_seq=1, occurred_at=now_us(),
                       received_at=now_us(), side="red", red_ms=1000, black_ms=1000)
    box.put(bus.CLOCK, event.board_id, codec.encode(event))
    box.close()  # answered 202, then ingest died before publishing

    publisher = OutboxPublisher.connect(topics, tmp_path / "outbox.sqlite", ack_timeout_s=5)
    try:
        assert publisher.flush(timeout_s=15)
        [(rec, got)] = read_topic(topics, bus.CLOCK, lambda it: it[1].event_id == event.event_id)
        assert got == event and rec.key == event.board_id.encode()
    finally:
        publisher.close()


def test_a_full_outbox_answers_503(tmp_path: Path, venue: dict[str, Any]) -> None:
    from xqarb.ingest.app import create_app

    b7 = venue["b7"]
    sender = FakeSender(fail=range(10_000))  # the broker never answers
    publisher = OutboxPublisher(Outbox(tmp_path / "o.sqlite"), sender, None, confirm_wait_s=0.1, max_backlog=2)
    client = create_app(venue["config"], publisher).test_client()
    auth = {"Authorization": f"Bearer tok-clock-{b7}"}
    codes = [client.post(f"/ingest/v1/boards/{b7}/clock", json=clock_press(s), headers=auth).status_code
             for s in (1, 2, 3)]
    assert codes == [202, 202, 503]
    assert publisher.outbox.count() == 2
    publisher.close()


def test_what_a_dying_broker_acknowledged_is_sent_again(tmp_path: Path, venue: dict[str, Any]) -> None:
    """The embedded broker keeps its topics in memory: a 202 acknowledged by it, then the broker SIGKILLed and
    restarted empty, with nothing posted after: the event is on the new broker's topic all the same."""
    from xqarb.broker import EmbeddedBroker
    from xqarb.ingest.app import create_app

    b7 = venue["b7"]
    broker = EmbeddedBroker().start()
    port = broker.port
    publisher = None
    try:
        bus.ensure_topics(broker.bootstrap, [bus.CLOCK], partitions=2)
        publisher = OutboxPublisher.connect(broker.bootstrap, tmp_path / "outbox.sqlite", ack_timeout_s=3)
        client = create_app(venue["config"], publisher).test_client()
        auth = {"Authorization": f"Bearer tok-clock-{b7}"}
        ids = []
        for seq in (1, 2):
            r = client.post(f"/ingest/v1/boards/{b7}/clock", json=clock_press(seq), headers=auth)
            assert r.status_code == 202 and "offset" in r.get_json(), r.get_json()  # acknowledged by the broker
            ids.append(r.get_json()["event_id"])
        assert broker._process is not None
        os.kill(broker._process.pid, signal.SIGKILL)
        broker._process.wait(5)
        broker._process = None
        broker = EmbeddedBroker(port).start()
        bus.ensure_topics(broker.bootstrap, [bus.CLOCK], partitions=2)
        found = read_topic(broker.bootstrap, bus.CLOCK, lambda it: it[1].event_id in ids, count=2, timeout_s=30)
        in_topic = [event.event_id for _, event in sorted(found, key=lambda it: it[0].offset)]
        assert list(dict.fromkeys(in_topic)) == ids
        assert publisher.resent == 2
    finally:
        if publisher is not None:
            publisher.close()
        broker.stop()


def test_acknowledged_entries_are_kept_a_while_then_removed(tmp_path: Path) -> None:
    box = Outbox(tmp_path / "o.sqlite")
    for value in (b"1", b"2"):
        box.put("xq.clock", "7", value)
    publish_once(box, FakeSender(), now=100.0)
    assert box.count() == 0 and box.prune(before=50.0) == 2  # acknowledged, still kept
    assert box.resend_kept() == 2 and [e.value for e in box.pending()] == [b"1", b"2"]
    publish_once(box, FakeSender(), now=100.0)
    assert box.prune(before=100.5) == 0 and box.pending() == []


def test_kept_entries_go_again_only_when_the_broker_lost_them(tmp_path: Path) -> None:
    from xqarb.events import make_event

    ends: dict[tuple[str, int], int] = {("xq.clock", 0): 1}  # the broker's log holds the entry acknowledged at 0
    sender = FakeSender()
    publisher = OutboxPublisher(Outbox(tmp_path / "o.sqlite"), sender, None, confirm_wait_s=5,
                                log_ends=lambda keys: dict(ends)).start()
    try:
        event = make_event("ClockPressed", "7", source="clock-7", source_seq=1, occurred_at=now_us(),
                           received_at=now_us(), side="red", red_ms=1000, black_ms=1000)
        assert publisher.publish("xq.clock", event, timeout=5) == (0, 0)
        time.sleep(2.5)  # two checks of the logs: the entry is still there
        assert len(sender.sent) == 1 and publisher.resent == 0
        ends[("xq.clock", 0)] = 0  # the log starts over, empty
        deadline = time.monotonic() + 10
        while len(sender.sent) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(sender.sent) == 2 and publisher.resent == 1 and sender.sent[1] == sender.sent[0]
    finally:
        publisher.close()
