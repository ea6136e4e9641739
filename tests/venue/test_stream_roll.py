"""The live stream over game events that roll (xq.game-events / xq.game-events.roll on the embedded broker, which
keeps every record until its topic is deleted): ids name the generation, so a client resumes across a roll without
losing an event, also from an API process that restarted; a client whose events were emptied gets the reset."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kafka import KafkaConsumer, KafkaProducer
from kafka import TopicPartition as KafkaTopicPartition
from kafka.structs import OffsetAndMetadata

from tests.venue.test_stream_restart import api_client, attention, read_stream, reasons
from xqarb import bus, codec
from xqarb.broker import EmbeddedBroker, TopicRoller, _admin_request, _delete_topics_request
from xqarb.events import Event
from xqarb.referee.api import StreamHub, event_digest, kafka_game_events
from xqarb.referee.stream_roll import GENERATION_STRIDE, generation_of, stream_offset

PARTITIONS = 2
PERIOD = bus.GAME_EVENTS_ROLL_S
EVEN = 2 * int(1.8e9 / PERIOD / 2)  # an even period (xq.game-events takes its events), in 2027
T_EVEN = EVEN * PERIOD


@pytest.fixture()
def fresh_broker() -> Iterator[EmbeddedBroker]:
    """A broker of the test's own, with the rolled pair of game events."""
    with EmbeddedBroker() as b:
        TopicRoller(b.bootstrap, partitions=PARTITIONS, topic=bus.GAME_EVENTS).ensure_topics()
        yield b


def write(bootstrap: str, topic: str, at_s: float, events: list[Event]) -> None:
    """As the referee writes them in the period of `at_s` (the producers' stamp), alternating partitions."""
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    try:
        for n, event in enumerate(events):
            producer.send(topic, codec.encode(event), key=event.board_id.encode(), partition=n % PARTITIONS,
                          timestamp_ms=int((at_s + n * 0.001) * 1000))
        producer.flush()
    finally:
        producer.close()


def reading(bootstrap: str, now: list[float], count: int) -> StreamHub:
    """An API process's hub reading the pair at wall-clock `now[0]`, once it holds `count` events."""
    hub = StreamHub()
    hub.start(kafka_game_events(bootstrap, wall_clock=lambda: now[0]))
    deadline = time.monotonic() + 20
    while len(hub.items) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(hub.items) == count
    return hub


def test_stream_offsets_name_the_generation_of_the_topic_they_were_written_in() -> None:
    base = stream_offset(bus.GAME_EVENTS, 0, int(T_EVEN * 1000))
    assert base % GENERATION_STRIDE == 0 and base < 10**18  # 18 digits: a position's offsets (api.py)
    assert stream_offset(bus.GAME_EVENTS_ROLLED, 5, int((T_EVEN + PERIOD) * 1000)) == base + GENERATION_STRIDE + 5
    # sent before the switch, stamped just after it: still the even period's generation (its topic says so)
    assert stream_offset(bus.GAME_EVENTS, 7, int((T_EVEN + PERIOD + 0.01) * 1000)) == base + 7
    assert generation_of(base + GENERATION_STRIDE + 5) == generation_of(base) + 1


def test_a_stream_client_resumes_across_a_roll_of_game_events_without_losing_an_event(
    fresh_broker: EmbeddedBroker, tmp_path: Path
) -> None:
    bootstrap, ledger = fresh_broker.bootstrap, tmp_path / "ledger.sqlite"
    now = [T_EVEN + 100.0]
    write(bootstrap, bus.GAME_EVENTS, T_EVEN + 10, [attention(n, "even") for n in range(4)])
    hub = reading(bootstrap, now, 4)
    try:
        last = read_stream(api_client(hub, ledger), None)[-1][1]
        # The pair switches: new events go to xq.game-events.roll, the resting xq.game-events keeps its own.
        now[0] = T_EVEN + PERIOD + 100.0
        write(bootstrap, bus.GAME_EVENTS_ROLLED, T_EVEN + PERIOD + 10, [attention(n, "odd") for n in range(3)])
        deadline = time.monotonic() + 20
        while len(hub.items) < 7 and time.monotonic() < deadline:
            time.sleep(0.05)
        got = read_stream(api_client(hub, ledger), last)
        assert [kind for kind, _, _ in got] == ["AttentionNeeded"] * 3
        assert sorted(reasons(got)) == ["odd-0", "odd-1", "odd-2"]
        ids = [item.sse_id for item in hub.items]
    finally:
        hub.stop()
    # The API process restarts: it reads both topics again, gives every event the same id, and the client resumes.
    again = reading(bootstrap, now, 7)
    try:
        assert [item.sse_id for item in again.items] == ids
        got = read_stream(api_client(again, ledger), last)
        assert sorted(reasons(got)) == ["odd-0", "odd-1", "odd-2"] and got[0][0] != "reset"
    finally:
        again.stop()


def test_a_client_behind_an_emptied_generation_gets_the_reset_then_the_events_held(
    fresh_broker: EmbeddedBroker, tmp_path: Path
) -> None:
    bootstrap, ledger = fresh_broker.bootstrap, tmp_path / "ledger.sqlite"
    now = [T_EVEN + PERIOD + 100.0]
    write(bootstrap, bus.GAME_EVENTS, T_EVEN + 10, [attention(n, "even") for n in range(4)])
    write(bootstrap, bus.GAME_EVENTS_ROLLED, T_EVEN + PERIOD + 10, [attention(n, "odd") for n in range(3)])
    hub = reading(bootstrap, now, 7)
    try:
        seen = read_stream(api_client(hub, ledger), None)
    finally:
        hub.stop()
    behind, recent = seen[1][1], seen[-1][1]  # an id of the even generation, one of the odd
    # The roller empties xq.game-events as its rest ends; the next even period writes it again.
    _admin_request(bootstrap, _delete_topics_request(bus.GAME_EVENTS))
    bus.ensure_topics(bootstrap, [bus.GAME_EVENTS], partitions=PARTITIONS)
    now[0] = T_EVEN + 2 * PERIOD + 100.0
    write(bootstrap, bus.GAME_EVENTS, T_EVEN + 2 * PERIOD + 10, [attention(n, "next") for n in range(2)])
    fresh = reading(bootstrap, now, 5)  # an API process started since: the even generation is gone
    try:
        client = api_client(fresh, ledger)
        got = read_stream(client, behind)
        assert got[0][0] == "reset"
        assert sorted(reasons(got)) == sorted([f"odd-{n}" for n in range(3)] + ["next-0", "next-1"])
        assert sorted(reasons(read_stream(client, recent))) == ["next-0", "next-1"]  # no reset: its events held
        # An id given before game events rolled (plain offsets): a reset, never an error.
        old_id = f"0:2,1:2@0.{event_digest(attention(2, 'even').event_id)}"
        got = read_stream(client, old_id)
        assert got[0][0] == "reset" and len(reasons(got)) == 5
    finally:
        fresh.stop()


def test_a_resting_topic_of_game_events_is_kept_for_resumes_and_while_the_vision_group_lags(
    fresh_broker: EmbeddedBroker,
) -> None:
    bootstrap = fresh_broker.bootstrap
    write(bootstrap, bus.GAME_EVENTS, T_EVEN + 10, [attention(n, "even") for n in range(4)])  # 2 a partition
    last_minute = T_EVEN + 2 * PERIOD - bus.GAME_EVENTS_LAST_S / 2  # of the odd period, while xq.game-events rests
    now = [last_minute]
    roller = TopicRoller(bootstrap, partitions=PARTITIONS, topic=bus.GAME_EVENTS, clock=lambda: now[0])
    try:
        assert roller.tick() is False  # the vision group has not read it yet
        group = KafkaConsumer(bootstrap_servers=bootstrap, group_id=bus.VISION_GROUP, enable_auto_commit=False)
        group.commit({KafkaTopicPartition(bus.GAME_EVENTS, p): OffsetAndMetadata(2, "", -1)
                      for p in range(PARTITIONS)})
        group.close()
        now[0] = T_EVEN + PERIOD + 100.0  # read, but early in its rest: kept for stream clients (bus.ROLL_KEEP_S)
        assert roller.tick() is False
        now[0] = last_minute
        assert roller.tick() is True and roller.freed == 4 and roller.expired == 0
    finally:
        roller.stop()


def test_an_event_acknowledged_late_into_the_resting_topic_is_streamed_not_dropped() -> None:
    hub = StreamHub()
    even = stream_offset(bus.GAME_EVENTS, 0, int(T_EVEN * 1000))
    for n in range(2):
        hub.add(0, even + n, attention(n, "even"))
    hub.add(0, even + GENERATION_STRIDE, attention(0, "odd"))  # the next generation read already
    late = hub.add(0, even + 2, attention(2, "even"))  # sent before the switch, read after
    assert late is not None and [i.event.data["reason"] for i in hub.items] == ["even-0", "even-1", "odd-0", "even-2"]
    assert hub.position() == {0: even + GENERATION_STRIDE + 1}  # the position does not go back
    assert hub.add(0, even + 1, attention(1, "even")) is None  # one read twice is still no new event


def test_a_reader_more_than_a_period_behind_streams_the_generations_in_the_order_written(
    fresh_broker: EmbeddedBroker,
) -> None:
    # The vision group lagged: xq.game-events was not emptied in its rest, and took the next generation after the
    # one before; xq.game-events.roll, which rests now, holds the generation between them.
    bootstrap = fresh_broker.bootstrap
    write(bootstrap, bus.GAME_EVENTS, T_EVEN + 10, [attention(n, "even") for n in range(4)])
    write(bootstrap, bus.GAME_EVENTS_ROLLED, T_EVEN + PERIOD + 10, [attention(n, "odd") for n in range(4)])
    write(bootstrap, bus.GAME_EVENTS, T_EVEN + 2 * PERIOD + 10, [attention(n, "next") for n in range(4)])
    hub = reading(bootstrap, [T_EVEN + 2 * PERIOD + 100.0], 12)
    try:
        for partition in range(PARTITIONS):
            items = [item for item in hub.items if item.partition == partition]
            assert [item.event.data["reason"] for item in items] == [
                f"{run}-{n}" for run in ("even", "odd", "next") for n in range(partition, 4, PARTITIONS)]
            assert [item.offset for item in items] == sorted(item.offset for item in items)  # none streamed late
    finally:
        hub.stop()
