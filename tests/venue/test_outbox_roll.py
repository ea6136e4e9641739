"""Ingest's outbox over clock presses that roll (xq.clock / xq.clock.roll on the embedded broker): a resting log the
roller emptied once the referee group had read it is no loss; a broker that restarted empty still is."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

from kafka import KafkaConsumer, KafkaProducer
from kafka import TopicPartition as KafkaTopicPartition
from kafka.structs import OffsetAndMetadata

from tests.venue.conftest import now_us
from xqarb import bus
from xqarb.broker import EmbeddedBroker, TopicRoller, _admin_request, _delete_topics_request
from xqarb.bus import kafka_log_commits, kafka_log_ends
from xqarb.events import Event, make_event
from xqarb.ingest.outbox import CHECK_LOG_S, Outbox, OutboxPublisher

PARTITIONS = 2


def press(seq: int) -> Event:
    return make_event("ClockPressed", "7", source="clock-7", source_seq=seq, occurred_at=now_us(),
                      received_at=now_us(), side="red", red_ms=1000, black_ms=1000)


def wait_for(condition: Callable[[], bool], timeout_s: float) -> bool:
    """True once `condition` holds, False when `timeout_s` passed first."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


def test_the_outbox_tells_a_roll_of_the_clock_topic_from_a_broker_that_lost_it(tmp_path: Path) -> None:
    broker = EmbeddedBroker().start()
    port = broker.port
    roller = TopicRoller(broker.bootstrap, partitions=PARTITIONS, topic=bus.CLOCK)
    roller.ensure_topics()
    ends, close_ends = kafka_log_ends(broker.bootstrap)
    commits, close_commits = kafka_log_commits(broker.bootstrap)
    sender = bus.Producer(broker.bootstrap, timeout_s=3)
    ahead = [0.0]  # the outbox's wall clock runs this far ahead of the producers' (which put the press in a topic)
    publisher = OutboxPublisher(Outbox(tmp_path / "o.sqlite"), sender, None, confirm_wait_s=5, log_ends=ends,
                                log_commits=commits, keep_acked_s=3600,
                                wall_clock=lambda: time.time() + ahead[0]).start()
    try:
        stored = publisher.publish(bus.CLOCK, press(1), timeout=5)
        assert stored is not None
        partition, offset = stored[0], stored[1]
        [(topic, _)] = list(publisher._acked)  # the topic of the period the press went to
        assert getattr(stored, "topic", bus.CLOCK) == topic  # (the 202 names the topic where it is another)
        if bus.rolled_topics_at(bus.CLOCK, time.time())[0] == topic:
            ahead[0] = bus.CLOCK_ROLL_S  # the pair switched: that topic rests
        # The referee reads it and commits, the outbox sees it; then the roller empties and makes the topic again.
        group = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=bus.REFEREE_GROUP, enable_auto_commit=False)
        group.commit({KafkaTopicPartition(topic, partition): OffsetAndMetadata(offset + 1, "", -1)})
        group.close()
        # (the outbox looks every CHECK_LOG_S; a loaded machine may take longer: wait for what it has seen)
        key = (topic, partition)
        assert wait_for(lambda: key in publisher._consumed and key in publisher._ends, 20 * CHECK_LOG_S)
        _admin_request(broker.bootstrap, _delete_topics_request(topic))
        bus.ensure_topics(broker.bootstrap, [topic], partitions=PARTITIONS)
        assert wait_for(lambda: key not in publisher._acked, 20 * CHECK_LOG_S)  # it saw the log emptied
        assert publisher.resent == 0  # emptied after the referee read it: nothing to send again

        # A press nobody has read yet, then the broker dies and comes back empty: that one is sent again.
        assert publisher.publish(bus.CLOCK, press(2), timeout=5) is not None
        assert broker._process is not None
        os.kill(broker._process.pid, signal.SIGKILL)
        broker._process.wait(5)
        broker._process = None
        broker = EmbeddedBroker(port).start()
        roller.ensure_topics()
        deadline = time.monotonic() + 20
        while publisher.resent == 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert publisher.resent == 2  # both kept entries (the one read too: the outbox sends all it keeps)
    finally:
        publisher.close()
        sender.close()
        close_ends()
        close_commits()
        broker.stop()


def test_a_resting_clock_topic_is_emptied_only_a_while_after_the_referee_group_read_it() -> None:
    # (a loaded referee commits late; ingest's outbox, looking once a second, must see the commit before the emptying)
    with EmbeddedBroker() as broker:
        now = [bus.CLOCK_ROLL_S * 6_000_000 + bus.CLOCK_ROLL_S + 60.0]  # an odd period, 60 s on: xq.clock rests
        resting = bus.rolled_topics_at(bus.CLOCK, now[0])[1]
        roller = TopicRoller(broker.bootstrap, partitions=PARTITIONS, topic=bus.CLOCK, clock=lambda: now[0])
        roller.ensure_topics()
        producer = KafkaProducer(bootstrap_servers=broker.bootstrap)
        producer.send(resting, b"press", key=b"7", partition=0)
        producer.flush()
        producer.close()
        try:
            assert roller.tick() is False  # not read yet
            group = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=bus.REFEREE_GROUP,
                                  enable_auto_commit=False)
            group.commit({KafkaTopicPartition(resting, 0): OffsetAndMetadata(1, "", -1)})
            group.close()
            assert roller.tick() is False  # read just now
            now[0] += bus.ROLL_READ_KEEP_S[bus.CLOCK] - 0.5
            assert roller.tick() is False
            now[0] += 1.0
            assert roller.tick() is True and roller.rolls == 1 and roller.freed == 1
        finally:
            roller.stop()
