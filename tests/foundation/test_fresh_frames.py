"""Where a consumer starts a partition of frames it has no offset to resume from (xqarb.fresh_start): near now, not
at a retention's worth of frames back; a committed offset is resumed; other topics start at their beginning.

The embedded broker (Tansu 0.6) does not search by time: ListOffsets with a timestamp answers the log's first
record whatever the time (offset 0, its own timestamp; on an empty partition offset 0, timestamp -1). The tests over
it that show the fresh start answer that one call as Apache Kafka documents it (the first record stamped at or
after the time, None where there is none), from the records' timestamps; everything else is the real broker."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from xqarb import bus
from xqarb.bus import Consumer, TopicPartition
from xqarb.fresh_start import FreshStart, fresh_start, fresh_target_ms, lacks_offset, read_on_in_pair

TIMEOUT_S = 30.0
FAST = {"session_timeout_ms": 6_000}
HOUR_MS = 3_600_000
BACK_S = 30.0


# ------------------------------------------------------------------------------------------ the choice, pure


def test_the_start_is_the_first_record_at_or_after_the_target() -> None:
    target = fresh_target_ms(1_000.0, 30.0)
    assert target == 970_000
    assert fresh_start(target, (7, 970_000)) == 7
    assert fresh_start(target, (7, 975_250)) == 7


def test_no_record_since_the_target_starts_at_the_end() -> None:
    # Apache Kafka answers offset -1 where no record is stamped at or after the time; kafka-python gives None.
    assert fresh_start(970_000, None) is FreshStart.END


def test_an_answer_stamped_before_the_target_is_no_search_by_time() -> None:
    # Tansu 0.6: the log's first record an hour old for a time 30 s ago, and timestamp -1 on an empty partition.
    assert fresh_start(970_000, (0, 970_000 - HOUR_MS)) is FreshStart.RESET
    assert fresh_start(970_000, (0, -1)) is FreshStart.RESET
    assert fresh_start(970_000, (0, 969_999)) is FreshStart.RESET


def test_the_target_is_never_negative() -> None:
    assert fresh_target_ms(10.0, 30.0) == 0


def test_only_a_missing_or_expired_commit_lacks_an_offset() -> None:
    assert lacks_offset(None, 0) and lacks_offset(None, None)
    assert lacks_offset(99, 100)  # the frames at 99 are gone with the retention: Kafka would reset it
    assert not lacks_offset(100, 100)
    assert not lacks_offset(0, 0)
    assert not lacks_offset(5, None)


def test_a_rolled_topic_the_group_read_on_from_starts_at_its_beginning() -> None:
    pair_of = {"xq.frames": "xq.frames.roll", "xq.frames.roll": "xq.frames"}
    # the member that read xq.frames[0] stopped before its first commit in xq.frames.roll[0], made at the switch
    assert read_on_in_pair("xq.frames.roll", pair_of, {"xq.frames"}) == "xq.frames"
    assert read_on_in_pair("xq.frames", pair_of, {"xq.frames.roll"}) == "xq.frames.roll"
    # a group that committed neither (a venue's first start), and a topic of no pair, start fresh
    assert read_on_in_pair("xq.frames.roll", pair_of, set()) is None
    assert read_on_in_pair("xq.frames-test", pair_of, {"xq.frames"}) is None


# ------------------------------------------------------------------------------------------ over the broker


def stamp(broker: str, topic: str, records: list[tuple[int, int]]) -> dict[int, list[tuple[int, int]]]:
    """Write `records` ((partition, timestamp ms)) in order; partition -> its (offset, timestamp) as stored."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=broker, acks="all")
    stored: dict[int, list[tuple[int, int]]] = {}
    try:
        for partition, ts in records:
            meta = producer.send(topic, f"{partition}@{ts}".encode(), partition=partition, timestamp_ms=ts).get(10)
            stored.setdefault(partition, []).append((meta.offset, ts))
    finally:
        producer.close()
    return stored


def as_kafka_answers(consumer: Consumer, stored: Mapping[str, Mapping[int, list[tuple[int, int]]]]) -> None:
    """ListOffsets by timestamp answered as Apache Kafka documents it, from the records written (`stored`: topic ->
    partition -> (offset, timestamp))."""
    from kafka.structs import OffsetAndTimestamp

    def offsets_for_times(timestamps: Mapping[Any, int]) -> dict[Any, Any]:
        answers: dict[Any, Any] = {}
        for tp, target in timestamps.items():
            later = [(o, ts) for o, ts in stored.get(tp.topic, {}).get(tp.partition, []) if ts >= target]
            answers[tp] = OffsetAndTimestamp(*min(later), -1) if later else None
        return answers

    consumer._consumer.offsets_for_times = offsets_for_times  # the one call the embedded broker answers otherwise


def read(consumer: Consumer, until: Callable[[set[tuple[str, int, int]]], bool]) -> set[tuple[str, int, int]]:
    got: set[tuple[str, int, int]] = set()
    deadline = time.monotonic() + TIMEOUT_S
    while not until(got) and time.monotonic() < deadline:
        got |= {(r.topic, r.partition, r.offset) for r in consumer.poll(0.2)}
    assert until(got), f"read {sorted(got)}"
    return got


def settle(consumer: Consumer, got: set[tuple[str, int, int]], polls: int = 5) -> set[tuple[str, int, int]]:
    """A few more polls: whatever else the consumer would read comes now."""
    for _ in range(polls):
        got |= {(r.topic, r.partition, r.offset) for r in consumer.poll(0.2)}
    return got


@pytest.fixture
def frames(broker: str, unique_topic: Callable[[str], str]) -> dict[str, Any]:
    """A frames topic (2 partitions) with frames stamped an hour ago and frames of the last seconds on partition 0,
    only hour-old ones on partition 1; and a topic of other inputs stamped an hour ago."""
    now_ms = int(time.time() * 1000)
    topic, other = unique_topic("frames"), unique_topic("events")
    bus.ensure_topics(broker, [topic, other], partitions=2)
    old = [(0, now_ms - HOUR_MS + i) for i in range(3)] + [(1, now_ms - HOUR_MS + i) for i in range(2)]
    recent = [(0, now_ms - 5_000 + i) for i in range(2)]
    stored = {topic: stamp(broker, topic, old + recent), other: stamp(broker, other, [(0, now_ms - HOUR_MS)] * 2)}
    return {"topic": topic, "other": other, "stored": stored}


def test_a_fresh_group_starts_the_frames_at_the_recent_ones_and_other_topics_at_their_start(
    broker: str, unique_topic: Callable[[str], str], frames: dict[str, Any]
) -> None:
    topic, other = frames["topic"], frames["other"]
    recent = {(topic, 0, 3), (topic, 0, 4)}
    inputs = {(other, 0, 0), (other, 0, 1)}
    with Consumer(broker, unique_topic("g"), [topic, other], decode=False, fresh_back_s={topic: BACK_S},
                  **FAST) as consumer:  # fmt: skip
        as_kafka_answers(consumer, frames["stored"])
        got = settle(consumer, read(consumer, lambda got: got >= recent | inputs))
        # partition 1 had nothing since: it starts at its end, and reads the next frame
        assert got == recent | inputs
        stamp(broker, topic, [(1, int(time.time() * 1000))])
        got = read(consumer, lambda got: (topic, 1, 2) in got)
        assert got == {(topic, 1, 2)}


def test_a_group_with_a_committed_offset_resumes_there_however_old(
    broker: str, unique_topic: Callable[[str], str], frames: dict[str, Any]
) -> None:
    topic, group = frames["topic"], unique_topic("g")
    with Consumer(broker, group, [topic], decode=False, fresh_back_s={topic: BACK_S}, **FAST) as first:
        as_kafka_answers(first, frames["stored"])
        read(first, lambda got: {(topic, 0, 3), (topic, 0, 4)} <= got)
        first.commit({TopicPartition(topic, 0): 1})  # as if it had handled one hour-old frame only
    with Consumer(broker, group, [topic], decode=False, fresh_back_s={topic: BACK_S}, **FAST) as second:
        as_kafka_answers(second, frames["stored"])
        got = settle(second, read(second, lambda got: (topic, 0, 4) in got))
    # partition 0 from its commit, the hour-old frames 1 and 2 included; partition 1, never committed, from its end
    assert got == {(topic, 0, 1), (topic, 0, 2), (topic, 0, 3), (topic, 0, 4)}


def test_over_the_embedded_broker_the_start_is_what_its_answer_gives(
    broker: str, unique_topic: Callable[[str], str], frames: dict[str, Any]
) -> None:
    """No answer replaced: the start follows the broker's own answer to ListOffsets (Tansu 0.6: no search by time,
    so `earliest`, as before; Apache Kafka: the recent frames)."""
    from kafka import KafkaConsumer
    from kafka import TopicPartition as KafkaTopicPartition

    topic = frames["topic"]
    tp = KafkaTopicPartition(topic, 0)
    target = fresh_target_ms(time.time(), BACK_S)
    probe = KafkaConsumer(bootstrap_servers=broker)
    try:
        answer = probe.offsets_for_times({tp: target})[tp]
    finally:
        probe.close()
    start = fresh_start(target, None if answer is None else (answer.offset, answer.timestamp))
    first = 0 if start is FreshStart.RESET else start
    assert first in (0, 3)
    with Consumer(broker, unique_topic("g"), [topic], decode=False, fresh_back_s={topic: BACK_S},
                  **FAST) as consumer:  # fmt: skip
        got = settle(consumer, read(consumer, lambda got: (topic, 0, 4) in got))
    assert min(o for t, p, o in got if p == 0) == first


def test_the_start_decided_without_an_offset_is_committed_for_the_next_owner(
    broker: str, unique_topic: Callable[[str], str], frames: dict[str, Any]
) -> None:
    topic, group, stored = frames["topic"], unique_topic("g"), frames["stored"]
    with Consumer(broker, group, [topic], decode=False, fresh_back_s={topic: BACK_S}, **FAST) as first:
        as_kafka_answers(first, stored)
        read(first, lambda got: {(topic, 0, 3), (topic, 0, 4)} <= got)
        # committed at the poll that assigned them, before anything was handled: partition 0 at the recent frames,
        # 1 at its end
        assert (first.committed(TopicPartition(topic, 0)), first.committed(TopicPartition(topic, 1))) == (3, 2)
    # It stopped without a commit of its own; frames came meanwhile. The next owner, whose own fresh start would
    # now be later than all of them, goes on from the start the group decided.
    stored[topic][0] += stamp(broker, topic, [(0, int(time.time() * 1000))] * 2)[0]
    time.sleep(1.0)
    with Consumer(broker, group, [topic], decode=False, fresh_back_s={topic: 0.5}, **FAST) as second:
        as_kafka_answers(second, stored)
        got = settle(second, read(second, lambda got: (topic, 0, 6) in got))
    assert got == {(topic, 0, 3), (topic, 0, 4), (topic, 0, 5), (topic, 0, 6)}


def test_an_empty_partition_s_start_is_committed_for_the_next_owner(
    broker: str, unique_topic: Callable[[str], str]
) -> None:
    """A venue's first start: the frames partitions are empty (the embedded broker answers the search by time with
    timestamp -1: auto_offset_reset decides, the beginning). That start is committed too, so that a member stopped
    before its own first commit does not hand its next owner a fresh start past the frames that came meanwhile."""
    topic, group = unique_topic("frames"), unique_topic("g")
    bus.ensure_topics(broker, [topic], partitions=1)
    with Consumer(broker, group, [topic], decode=False, fresh_back_s={topic: BACK_S}, **FAST) as first:
        read(first, lambda got: first.committed(TopicPartition(topic, 0)) is not None)
        assert first.committed(TopicPartition(topic, 0)) == 0
    stored = {topic: stamp(broker, topic, [(0, int(time.time() * 1000))] * 3)}
    time.sleep(1.0)
    with Consumer(broker, group, [topic], decode=False, fresh_back_s={topic: 0.5}, **FAST) as second:
        as_kafka_answers(second, stored)  # (its own fresh start would be past all three)
        got = settle(second, read(second, lambda got: (topic, 0, 2) in got))
    assert got == {(topic, 0, 0), (topic, 0, 1), (topic, 0, 2)}
