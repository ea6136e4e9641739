"""Bounded memory of the embedded broker: camera frames roll between two topics, and the resting one is emptied
(deleted, made again) once consumed, which is what frees the broker's memory (it has no retention)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest
from kafka import KafkaConsumer, KafkaProducer
from kafka import TopicPartition as KafkaTopicPartition

from xqarb import broker as broker_module
from xqarb import bus
from xqarb.broker import ROLL_LEAD_S, EmbeddedBroker, FramesRoller

PARTITIONS = 2
GROUP = "test-vision"
# A wall-clock time in an even period, 2 s after its switch: xq.frames takes frames, xq.frames.roll rests.
RESTING_ROLL = 2.0


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def ends(bootstrap: str, topic: str) -> int:
    probe = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        parts = [KafkaTopicPartition(topic, p) for p in range(PARTITIONS)]
        return sum(probe.end_offsets(parts).values())
    finally:
        probe.close()


def produce(bootstrap: str, topic: str, count: int, size: int) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, max_request_size=bus.MAX_REQUEST_BYTES)
    payload = os.urandom(size)
    for i in range(count):
        producer.send(topic, key=str(i % 8).encode(), value=payload)
    producer.flush()
    producer.close()


def poll_until(consumer: bus.Consumer, count: int, timeout_s: float = 20.0) -> list[bus.Record]:
    got: list[bus.Record] = []
    deadline = time.monotonic() + timeout_s
    while len(got) < count and time.monotonic() < deadline:
        got += consumer.poll(0.2)
    return got


@pytest.fixture(scope="module")
def broker() -> Iterator[EmbeddedBroker]:
    with EmbeddedBroker() as b:
        yield b


def test_frames_alternate_between_two_topics_each_period() -> None:
    assert bus.frames_topics_at(0.0) == (bus.FRAMES, bus.FRAMES_ROLLED)
    assert bus.frames_topics_at(bus.FRAMES_ROLL_S - 0.001) == (bus.FRAMES, bus.FRAMES_ROLLED)
    assert bus.frames_topics_at(bus.FRAMES_ROLL_S) == (bus.FRAMES_ROLLED, bus.FRAMES)
    assert bus.frames_topics_at(2 * bus.FRAMES_ROLL_S + 1) == (bus.FRAMES, bus.FRAMES_ROLLED)
    assert bus.since_switch_s(3 * bus.FRAMES_ROLL_S + 2.5) == pytest.approx(2.5)


def test_consumed_frames_are_emptied_and_their_memory_freed(broker: EmbeddedBroker) -> None:
    assert broker._process is not None
    pid = broker._process.pid
    now = [RESTING_ROLL]
    roller = FramesRoller(broker.bootstrap, partitions=PARTITIONS, groups=(GROUP,), clock=lambda: now[0])
    roller.ensure_topics()
    before = rss_mb(pid)
    produce(broker.bootstrap, bus.FRAMES_ROLLED, 100, 100_000)  # 10 MB of frames in the resting topic
    grown = rss_mb(pid)
    assert grown > before + 8, (before, grown)
    # A consumer of xq.frames reads both topics where the broker rolls; until it committed, nothing is emptied.
    consumer = bus.Consumer(broker.bootstrap, GROUP, [bus.FRAMES], decode=False, wall_clock=lambda: now[0])
    try:
        assert roller.tick() is False
        got = poll_until(consumer, 100)
        assert len(got) == 100 and {r.topic for r in got} == {bus.FRAMES_ROLLED}
        consumer.commit()
        poll_until(consumer, 1, timeout_s=2 * bus.ROLL_CHECK_S)  # as a running consumer does, it saw the ends
        assert roller.tick() is True
        assert (roller.rolls, roller.freed, roller.expired) == (1, 100, 0)
        assert ends(broker.bootstrap, bus.FRAMES_ROLLED) == 0
        assert rss_mb(pid) < grown - (grown - before) / 2, (before, grown, rss_mb(pid))  # most of it freed
        assert roller.tick() is False  # once a period
        # The topic made again is read from its start by the consumer that held it (no frame of it is skipped)
        # once producers come back to it, a period later.
        poll_until(consumer, 1, timeout_s=2 * bus.ROLL_CHECK_S)
        now[0] += bus.FRAMES_ROLL_S
        produce(broker.bootstrap, bus.FRAMES_ROLLED, 3, 1000)
        again = poll_until(consumer, 3)
        assert len(again) == 3 and min(r.offset for r in again) == 0
    finally:
        consumer.close()
        roller.stop()


def test_the_roller_reads_a_resting_topics_last_batches_again_only_when_its_ends_moved(monkeypatch) -> None:
    now = [RESTING_ROLL + bus.FRAMES_ROLL_S * 2]
    reads: list[int] = []
    real = broker_module._read_last_offsets

    def counted(consumer, starts, timeout_s):  # type: ignore[no-untyped-def]
        reads.append(len(starts))
        return real(consumer, starts, timeout_s)

    monkeypatch.setattr(broker_module, "_read_last_offsets", counted)
    with EmbeddedBroker() as broker:
        roller = FramesRoller(broker.bootstrap, partitions=PARTITIONS, groups=("nobody",), clock=lambda: now[0])
        roller.ensure_topics()
        produce(broker.bootstrap, bus.FRAMES_ROLLED, 5, 1000)
        try:
            assert roller.tick() is False and roller.tick() is False  # kept: nobody read them yet
            assert len(reads) == 1  # the second look found the same ends: the batches were not read again
            produce(broker.bootstrap, bus.FRAMES_ROLLED, 3, 1000)  # (late acknowledgements)
            assert roller.tick() is False
            assert len(reads) == 2
            now[0] += bus.FRAMES_ROLL_S - ROLL_LEAD_S - RESTING_ROLL + 0.1
            assert roller.tick() is False and roller.kept_over == 8  # every frame counted, the late ones too
            now[0] += 2 * bus.FRAMES_ROLL_S  # (the end of its next turn: nobody came)
            assert roller.tick() is True
            assert (roller.expired, roller.freed) == (8, 8)
        finally:
            roller.stop()


def test_frames_nobody_reads_are_kept_one_turn_more_then_dropped_and_counted() -> None:
    now = [RESTING_ROLL + bus.FRAMES_ROLL_S * 2]
    with EmbeddedBroker() as broker:
        roller = FramesRoller(broker.bootstrap, partitions=PARTITIONS, groups=("nobody",), clock=lambda: now[0])
        roller.ensure_topics()
        produce(broker.bootstrap, bus.FRAMES_ROLLED, 5, 1000)
        try:
            assert roller.tick() is False  # kept while there is time for a consumer to come
            now[0] += bus.FRAMES_ROLL_S - ROLL_LEAD_S - RESTING_ROLL + 0.1
            # Unread as producers are about to come back to it: kept, their frames go after these.
            assert roller.tick() is False and roller.tick() is False
            assert (roller.kept_over, roller.expired, roller.rolls) == (5, 0, 0)  # counted once
            now[0] += bus.FRAMES_ROLL_S
            produce(broker.bootstrap, bus.FRAMES_ROLLED, 3, 1000)  # its next turn
            now[0] += bus.FRAMES_ROLL_S  # the end of its next rest: still nobody read them
            assert roller.tick() is True
            assert (roller.kept_over, roller.expired, roller.freed) == (5, 8, 8)
            assert ends(broker.bootstrap, bus.FRAMES_ROLLED) == 0
        finally:
            roller.stop()


def test_frames_kept_over_for_a_group_behind_are_read_and_then_emptied() -> None:
    now = [RESTING_ROLL + bus.FRAMES_ROLL_S * 2]
    with EmbeddedBroker() as broker:
        roller = FramesRoller(broker.bootstrap, partitions=PARTITIONS, groups=(GROUP,), clock=lambda: now[0])
        roller.ensure_topics()
        produce(broker.bootstrap, bus.FRAMES_ROLLED, 5, 1000)
        consumer = bus.Consumer(broker.bootstrap, GROUP, [bus.FRAMES], decode=False, wall_clock=lambda: now[0])
        try:
            now[0] += bus.FRAMES_ROLL_S - ROLL_LEAD_S - RESTING_ROLL + 0.1
            assert roller.tick() is False and roller.kept_over == 5  # the group has not come yet
            now[0] += bus.FRAMES_ROLL_S
            produce(broker.bootstrap, bus.FRAMES_ROLLED, 3, 1000)  # its next turn, after the unread ones
            now[0] += bus.FRAMES_ROLL_S
            got = poll_until(consumer, 8)
            assert len({(r.partition, r.offset) for r in got}) == 8  # the group behind read every frame
            consumer.commit()
            assert roller.tick() is True
            assert (roller.expired, roller.freed) == (0, 8)
        finally:
            consumer.close()
            roller.stop()


def test_a_producer_sends_frames_to_the_topic_of_the_period(broker: EmbeddedBroker) -> None:
    FramesRoller(broker.bootstrap, partitions=PARTITIONS).ensure_topics()
    bus.ensure_topics(broker.bootstrap, [bus.DLQ], partitions=PARTITIONS)
    with bus.Producer(broker.bootstrap) as producer:
        before = bus.frames_topics_at(time.time())[0]
        delivery = producer.send_raw(bus.FRAMES, "1", b"frame")
        after = bus.frames_topics_at(time.time())[0]
        assert delivery.topic in {before, after}
        # Other topics are never rerouted.
        assert producer.send_raw(bus.DLQ, "1", b"x").topic == bus.DLQ


def test_without_the_second_topic_frames_stay_on_xq_frames() -> None:
    with EmbeddedBroker() as b:
        bus.ensure_topics(b.bootstrap, [bus.FRAMES], partitions=PARTITIONS)
        with bus.Producer(b.bootstrap) as producer:
            assert producer.send_raw(bus.FRAMES, "1", b"frame").topic == bus.FRAMES


def stamp(period: int, seq: int) -> int:
    """A frame's time (ms) as its producer stamps it in `period` of the frames' roll (the test's wall clock): what
    tells a reader its generation (bus.generation)."""
    return int((period * bus.FRAMES_ROLL_S + 1) * 1000) + seq


def test_a_boards_frames_of_the_other_topic_are_read_before_those_of_the_current_one() -> None:
    # An odd period, 2 s after its switch: new frames go to xq.frames.roll while xq.frames still holds a backlog.
    now = [bus.FRAMES_ROLL_S + RESTING_ROLL]
    with EmbeddedBroker() as broker:
        FramesRoller(broker.bootstrap, partitions=PARTITIONS).ensure_topics()
        producer = KafkaProducer(bootstrap_servers=broker.bootstrap)
        for seq in range(30):  # one board (one key: the same partition of both topics)
            producer.send(bus.FRAMES, key=b"b1", value=b"old-%d" % seq, timestamp_ms=stamp(0, seq))
        for seq in range(30, 35):
            producer.send(bus.FRAMES_ROLLED, key=b"b1", value=b"new-%d" % seq, timestamp_ms=stamp(1, seq))
        producer.flush()
        producer.close()
        consumer = bus.Consumer(broker.bootstrap, GROUP, [bus.FRAMES], decode=False, wall_clock=lambda: now[0],
                                max_partition_fetch_bytes=64)  # small fetches: the backlog takes several polls
        try:
            got: list[bus.Record] = []
            deadline = time.monotonic() + 20
            while len(got) < 35 and time.monotonic() < deadline:
                got += consumer.poll(0.2, max_records=4)
        finally:
            consumer.close()
        assert [int(r.value.split(b"-")[1]) for r in got] == list(range(35))


def test_frames_held_after_a_switch_are_read_as_soon_as_the_hold_ends() -> None:
    now = [2 * bus.FRAMES_ROLL_S + bus.ROLL_HOLD_S / 5]  # just after a switch: xq.frames takes the frames
    with EmbeddedBroker() as broker:
        FramesRoller(broker.bootstrap, partitions=PARTITIONS).ensure_topics()
        consumer = bus.Consumer(broker.bootstrap, "test-settle", [bus.FRAMES], decode=False,
                                wall_clock=lambda: now[0], session_timeout_ms=6_000)
        try:
            deadline = time.monotonic() + 20
            while not consumer.assignment() and time.monotonic() < deadline:
                consumer.poll(0.2)
            assert consumer.assignment()
            produce(broker.bootstrap, bus.FRAMES, 3, 1000)
            # held: frames sent just before the switch may still be acknowledged into the other topic
            assert poll_until(consumer, 1, timeout_s=1.0) == []
            now[0] += bus.ROLL_HOLD_S
            started = time.monotonic()
            got: list[bus.Record] = []
            while len(got) < 3 and time.monotonic() - started < 20:
                got += consumer.poll(10.0)  # a consumer's long poll does not keep them waiting
            assert len(got) == 3
            assert time.monotonic() - started < 5.0
        finally:
            consumer.close()


def test_a_fetch_waits_at_the_broker_no_longer_than_until_the_next_look_at_the_roll() -> None:
    # One fetch carries every partition: a partition resumed at the next look would wait for the fetch in flight.
    fetcher = type("Fetcher", (), {})()
    fetcher.config = {"fetch_max_wait_ms": bus.FETCH_MAX_WAIT_MS}
    consumer = object.__new__(bus.Consumer)
    consumer._consumer = type("KafkaConsumer", (), {"_fetcher": fetcher})()
    waits = []
    for due_s in (0.12, 0.0, -0.3, 2 * bus.FETCH_MAX_WAIT_MS / 1000):
        consumer._bound_fetch_wait(due_s)
        waits.append(fetcher.config["fetch_max_wait_ms"])
    assert waits == [120, bus.FETCH_MIN_WAIT_MS, bus.FETCH_MIN_WAIT_MS, bus.FETCH_MAX_WAIT_MS]
    consumer._consumer = object()  # another client without that attribute: nothing to bound, no error
    consumer._bound_fetch_wait(0.1)


def test_a_boards_frames_wait_for_the_other_topics_backlog_only_until_it_is_read(monkeypatch) -> None:
    # The hold over, a board's frames of the current topic wait only while its partition of the other topic has
    # frames to read; once they are read they come at the next poll, not at the next look at the roll.
    monkeypatch.setattr(bus, "ROLL_CHECK_S", 60.0)
    now = [bus.FRAMES_ROLL_S + RESTING_ROLL]  # an odd period: xq.frames.roll takes the frames, xq.frames rests
    with EmbeddedBroker() as broker:
        FramesRoller(broker.bootstrap, partitions=PARTITIONS).ensure_topics()
        producer = KafkaProducer(bootstrap_servers=broker.bootstrap)
        for seq in range(30):  # one batch each, as frames sent one by one are: the broker's end is the true end
            producer.send(bus.FRAMES, key=b"b1", value=b"old-%d" % seq, timestamp_ms=stamp(0, seq))
            producer.flush()
        for seq in range(30, 35):
            producer.send(bus.FRAMES_ROLLED, key=b"b1", value=b"new-%d" % seq, timestamp_ms=stamp(1, seq))
        producer.flush()
        producer.close()
        consumer = bus.Consumer(broker.bootstrap, GROUP, [bus.FRAMES], decode=False, wall_clock=lambda: now[0])
        try:
            got: list[bus.Record] = []
            started = time.monotonic()
            while len(got) < 35 and time.monotonic() - started < 30:
                got += consumer.poll(0.2, max_records=4)
            assert [int(r.value.split(b"-")[1]) for r in got] == list(range(35))
            assert time.monotonic() - started < 20  # (the next look is a minute away)
        finally:
            consumer.close()


def test_a_resting_topic_is_not_deleted_once_producers_are_about_to_come_back() -> None:
    # The look at a resting topic (its last batches read, the groups' commits asked) takes seconds on a loaded
    # machine: by the clock read again before the deletion, within ROLL_DELETE_S of the switch it is kept.
    from xqarb.broker import ROLL_DELETE_S

    base = RESTING_ROLL + bus.FRAMES_ROLL_S * 2
    late = bus.FRAMES_ROLL_S - ROLL_LEAD_S - RESTING_ROLL + 0.5  # read by every group, in the last seconds
    readings = [base + late, base + bus.FRAMES_ROLL_S - RESTING_ROLL - ROLL_DELETE_S + 0.5]
    with EmbeddedBroker() as broker:
        roller = FramesRoller(broker.bootstrap, partitions=PARTITIONS, groups=(), clock=lambda: readings[0])
        roller.ensure_topics()
        produce(broker.bootstrap, bus.FRAMES_ROLLED, 5, 1000)
        try:
            roller.clock = iter(readings).__next__  # (the look, then the clock read again before deleting)
            assert roller.tick() is False and ends(broker.bootstrap, bus.FRAMES_ROLLED) > 0  # kept
            roller.clock = lambda: base + late  # a quick look: emptied
            assert roller.tick() is True and ends(broker.bootstrap, bus.FRAMES_ROLLED) == 0
        finally:
            roller.stop()
