"""A group member that rejoins a broker restarted empty before its topics are made again is given no partitions (the
leader assigns from metadata that has no such topic). It must get them once the topics are there, in seconds: the
member reads the cluster's metadata again every GROUP_METADATA_MAX_AGE_MS, and its leader rebalances on the change
(kafka-python's default of five minutes left vision reading nothing after a broker restart on a loaded machine).
On a quiet machine the rejoin is answered only after the topics are back; the member must then take that answer
(Consumer._finish_answered_join) rather than wait, holding nothing, for a rejoin kafka-python no longer asks for."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from xqarb import bus

TOPIC = "xq.made-again"
REJOIN_WAIT_S = 60.0  # a rejoin after a broker restart takes two of the embedded broker's ~5 s join rounds
# The topics' partitions must reach the member within a few metadata reads and one rebalance (a join round), not
# kafka-python's five minutes.
READ_AGAIN_WITHIN_S = 40.0


def draw_offer(seq: int) -> Any:
    from xqarb.events import make_event

    return make_event("DrawOffered", "board-1", source="test", source_seq=seq, occurred_at=seq, received_at=seq,
                      side="red")


def kill(broker: Any) -> None:
    assert broker._process is not None
    os.kill(broker._process.pid, signal.SIGKILL)  # its in-memory topics and group offsets go with it
    broker._process.wait(10)


def poll_until(consumer: bus.Consumer, done: Any, timeout_s: float) -> list[bus.Record]:
    """Poll until `done(records so far)` or the time is up; the records read."""
    got: list[bus.Record] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and not done(got):
        got += consumer.poll(0.5)
    return got


def test_a_member_that_rejoined_before_its_topics_were_made_again_reads_them(tmp_path: Path) -> None:
    from xqarb.broker import BrokerError, EmbeddedBroker

    try:
        broker = EmbeddedBroker(log_path=tmp_path / "broker.log").start()
    except BrokerError as exc:
        pytest.skip(f"no embedded broker here: {exc}")
    assignments: list[list[bus.TopicPartition]] = []
    consumer: bus.Consumer | None = None
    try:
        bus.ensure_topics(broker.bootstrap, [TOPIC], partitions=2)
        consumer = bus.Consumer(broker.bootstrap, "made-again", [TOPIC], on_assigned=assignments.append)
        with bus.Producer(broker.bootstrap, client_id="made-again-test") as producer:
            producer.send(TOPIC, draw_offer(1))
        assert poll_until(consumer, bool, REJOIN_WAIT_S), "the first record was never read"

        kill(broker)
        broker = EmbeddedBroker(broker.port, log_path=tmp_path / "broker2.log").start()  # same address, empty
        # The member rejoins the empty broker: its group is settled with no partition for it.
        deadline = time.monotonic() + REJOIN_WAIT_S
        while time.monotonic() < deadline and consumer.assignment():
            consumer.poll(0.5)
        assert not consumer.assignment(), "the member kept partitions of topics the restarted broker does not have"
        poll_until(consumer, lambda _: False, 3.0)  # settled: no topic, no partition

        bus.ensure_topics(broker.bootstrap, [TOPIC], partitions=2)
        with bus.Producer(broker.bootstrap, client_id="made-again-test") as producer:
            producer.send(TOPIC, draw_offer(2))
        started = time.monotonic()
        got = poll_until(consumer, bool, READ_AGAIN_WITHIN_S)
        assert [r.event.source_seq for r in got if r.event is not None] == [2], (
            f"nothing read {READ_AGAIN_WITHIN_S:.0f} s after the topic was made again; "
            f"assignment {sorted(consumer.assignment())}")
        assert {tp.partition for tp in consumer.assignment()} == {0, 1}
        print(f"read again {time.monotonic() - started:.1f} s after the topic was made again")
    finally:
        if consumer is not None:
            consumer.close()
        broker.stop()
