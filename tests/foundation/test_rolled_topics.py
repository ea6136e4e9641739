"""Observations roll like the frames (xq.observations / xq.observations.roll) on the embedded broker, which keeps every
record until its topic is deleted; unlike frames none is ever dropped: a resting topic is emptied only once every
group that reads it (the referee's) committed all of it, and the referee reads a topic made again from its start."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kafka import KafkaConsumer
from kafka import TopicPartition as KafkaTopicPartition

from tests.referee.test_service import MOVES, T0, _game_inputs
from xqarb import broker as broker_module
from xqarb import bus
from xqarb.broker import ROLL_LEAD_S, EmbeddedBroker, TopicRoller, topic_rollers
from xqarb.events import Event, make_event
from xqarb.referee.ledger import SqliteLedger
from xqarb.referee.service import RefereeService

PARTITIONS = 2
GROUP = "test-referee"
PERIOD = bus.OBSERVATIONS_ROLL_S
# A wall-clock time in an even period, 2 s after its switch: xq.observations takes them, xq.observations.roll rests.
RESTING_ROLL = 2.0


@pytest.fixture()
def fresh_broker() -> Iterator[EmbeddedBroker]:
    """A broker of the test's own: a rolled pair on the session's broker would roll every other test's topics."""
    with EmbeddedBroker() as b:
        yield b


def held(bootstrap: str, topic: str) -> int:
    """Records the topic holds, read (this broker's end offsets are not exact)."""
    reader = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False)
    try:
        parts = [KafkaTopicPartition(topic, p) for p in sorted(reader.partitions_for_topic(topic) or ())]
        reader.assign(parts)
        reader.seek_to_beginning(*parts)
        count, idle = 0, time.monotonic()
        while time.monotonic() - idle < 1.0:
            got = reader.poll(timeout_ms=200)
            if got:
                idle = time.monotonic()
            count += sum(len(records) for records in got.values())
        return count
    finally:
        reader.close()


def progress(board: str, seq: int) -> Event:
    return make_event("CameraProgress", board, source=f"vision-{board}", source_seq=seq, occurred_at=T0 + seq,
                      received_at=T0 + seq, game_id=None, frames=1)


def test_every_rolled_topic_pairs_with_its_second_and_switches_on_its_own_period() -> None:
    assert bus.rolled_topics_at(bus.OBSERVATIONS, 0.0) == (bus.OBSERVATIONS, bus.OBSERVATIONS_ROLLED)
    assert bus.rolled_topics_at(bus.OBSERVATIONS, PERIOD - 0.001) == (bus.OBSERVATIONS, bus.OBSERVATIONS_ROLLED)
    assert bus.rolled_topics_at(bus.OBSERVATIONS, PERIOD) == (bus.OBSERVATIONS_ROLLED, bus.OBSERVATIONS)
    # the frames keep their own minute whatever the observations do
    assert bus.rolled_topics_at(bus.FRAMES, bus.FRAMES_ROLL_S) == (bus.FRAMES_ROLLED, bus.FRAMES)
    assert bus.since_switch_s(PERIOD + 2.5, bus.OBSERVATIONS) == pytest.approx(2.5)
    assert bus.base_topic(bus.OBSERVATIONS_ROLLED) == bus.OBSERVATIONS
    assert bus.base_topic(bus.CLOCK) == bus.CLOCK
    rollers = topic_rollers("127.0.0.1:1", partitions=PARTITIONS)
    assert {r.topic: r.groups for r in rollers} == {
        bus.FRAMES: (bus.VISION_GROUP,), bus.OBSERVATIONS: (bus.REFEREE_GROUP,), bus.GAME_EVENTS: (bus.VISION_GROUP,),
        bus.CLOCK: (bus.REFEREE_GROUP,), bus.ARBITER: (bus.REFEREE_GROUP, bus.VISION_GROUP)}
    with pytest.raises(broker_module.BrokerError, match="not a rolled topic"):
        TopicRoller("127.0.0.1:1", partitions=PARTITIONS, topic=bus.DLQ)


def test_a_producer_sends_observations_to_the_topic_of_the_period(fresh_broker: EmbeddedBroker) -> None:
    bootstrap = fresh_broker.bootstrap
    TopicRoller(bootstrap, partitions=PARTITIONS, topic=bus.OBSERVATIONS).ensure_topics()
    bus.ensure_topics(bootstrap, [bus.DLQ], partitions=PARTITIONS)
    with bus.Producer(bootstrap) as producer:
        before = bus.rolled_topics_at(bus.OBSERVATIONS, time.time())[0]
        sent = producer.send(bus.OBSERVATIONS, progress("2", 1)).topic
        assert sent in {before, bus.rolled_topics_at(bus.OBSERVATIONS, time.time())[0]}
        assert producer.send_raw(bus.DLQ, "2", b"x").topic == bus.DLQ  # other topics are never rerouted
        assert producer.frames_rolled() is False  # each pair is looked up on its own


def test_observations_nobody_committed_are_kept_and_emptied_once_committed(fresh_broker: EmbeddedBroker) -> None:
    bootstrap = fresh_broker.bootstrap
    now = [RESTING_ROLL]
    roller = TopicRoller(bootstrap, partitions=PARTITIONS, topic=bus.OBSERVATIONS, groups=(GROUP,),
                         clock=lambda: now[0])
    roller.ensure_topics()
    bus.ensure_topics(bootstrap, [bus.DLQ], partitions=PARTITIONS)
    with bus.Producer(bootstrap) as producer:
        for seq in range(1, 6):
            producer.send_raw(bus.OBSERVATIONS_ROLLED, "1", b"observation-%d" % seq)
    try:
        assert roller.tick() is False
        # Where frames would be dropped (the lead before producers come back), observations are kept.
        now[0] = PERIOD - ROLL_LEAD_S + 0.5
        assert roller.tick() is False
        assert (roller.rolls, roller.expired) == (0, 0)
        assert held(bootstrap, bus.OBSERVATIONS_ROLLED) == 5
        # Two periods on, resting again: the group reads and commits them, and only then are they emptied.
        now[0] = 2 * 2 * PERIOD + RESTING_ROLL
        consumer = bus.Consumer(bootstrap, GROUP, [bus.OBSERVATIONS], decode=False, wall_clock=lambda: now[0])
        try:
            got: list[bus.Record] = []
            deadline = time.monotonic() + 20
            while len(got) < 5 and time.monotonic() < deadline:
                got += [r for r in consumer.poll(0.2) if r.topic == bus.OBSERVATIONS_ROLLED]
            assert [r.value for r in got] == [b"observation-%d" % seq for seq in range(1, 6)]
            assert roller.tick() is False  # read, not committed yet
            consumer.commit()
        finally:
            consumer.close()
        assert roller.tick() is True
        assert (roller.rolls, roller.freed, roller.expired) == (1, 5, 0)
        assert held(bootstrap, bus.OBSERVATIONS_ROLLED) == 0
    finally:
        roller.stop()


@pytest.mark.parametrize("late", [False, True], ids=["from-the-start", "periods-late"])
def test_the_referee_follows_a_game_whose_observations_roll_and_are_emptied_under_it(
    fresh_broker: EmbeddedBroker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, late: bool
) -> None:
    # Short periods (the real ones are minutes): 4 s each, emptied from 1 s after a switch to 1 s before the next.
    monkeypatch.setitem(bus.ROLL_PERIODS_S, bus.OBSERVATIONS, 4.0)
    monkeypatch.setattr(broker_module, "ROLL_LEAD_S", 1.0)
    bootstrap = fresh_broker.bootstrap
    bus.ensure_topics(bootstrap, partitions=PARTITIONS)
    roller = TopicRoller(bootstrap, partitions=PARTITIONS, topic=bus.OBSERVATIONS).start()
    started, observations = _game_inputs("7", "g-roll")
    stop = threading.Event()

    def camera() -> None:  # a move every 0.8 s: the game spans two switches and an emptying or more
        with bus.Producer(bootstrap) as producer:
            producer.send(bus.ARBITER, started)
            for event in observations:
                if stop.wait(0.8):
                    return
                producer.send(bus.OBSERVATIONS, event)

    sender = threading.Thread(target=camera, daemon=True)
    with SqliteLedger(tmp_path / "ledger.sqlite") as ledger:
        try:
            if late:
                # The referee down while the first plies are sent: it joins more than a period behind (this
                # broker's join takes some 5 s more), and the roller empties nothing it has not read, so the topic
                # taking new records again holds the oldest observations before newer ones.
                sender.start()
                time.sleep(5.0)
            service = RefereeService(bootstrap, ledger, poll_timeout_s=0.2, hold_s=1.0)
            try:
                if not late:  # it holds its partitions before the game starts
                    deadline = time.monotonic() + 30
                    while not service.consumer.assignment() and time.monotonic() < deadline:
                        service.run_once()
                    assert service.consumer.assignment(), "the referee was given no partitions in 30 s"
                    sender.start()
                deadline = time.monotonic() + 45
                while (service.processed < 1 + len(MOVES) or roller.rolls < 2) and time.monotonic() < deadline:
                    service.run_once()
            finally:
                service.close()
        finally:
            stop.set()
            roller.stop()
        moves = [e.event.data["iccs"] for e in ledger.entries("g-roll") if e.event.type == "MoveMade"]
        topics = {e.origin.topic for e in ledger.entries("g-roll") if e.kind == "input" and e.origin is not None}
    assert moves == MOVES
    assert {bus.OBSERVATIONS, bus.OBSERVATIONS_ROLLED} <= topics  # it read both topics of the pair
    assert roller.rolls >= 2 and roller.expired == 0


class _Batches:
    """A referee's consumer that hands out given batches and keeps what is committed (as bus.Consumer does: an
    empty map commits nothing)."""

    def __init__(self, batches: list[list[bus.Record]]) -> None:
        self.batches = batches
        self.commits: list[dict[bus.TopicPartition, int]] = []

    def poll(self, timeout_s: float = 1.0, max_records: int | None = None) -> list[bus.Record]:
        return self.batches.pop(0) if self.batches else []

    def commit(self, offsets: dict[bus.TopicPartition, int] | None = None) -> None:
        if offsets:
            self.commits.append(dict(offsets))

    def behind(self, topics: object) -> frozenset[int]:
        return frozenset()  # every batch is all there is

    def close(self) -> None:
        pass


def _record(topic: str, offset: int, event: Event) -> bus.Record:
    return bus.Record(topic, 0, offset, event.board_id, b"", {}, 0, event)


def test_the_referee_commits_what_moved_on_and_a_remade_topic_from_its_start(
    fresh_broker: EmbeddedBroker, tmp_path: Path
) -> None:
    # Its observations on the second topic are the camera's (a press the camera has seen is not held), a partition
    # committed before is not committed again (the roller may have emptied and made it again since: its old offset
    # would tell the roller that records not read yet were), and a topic made again counts from its start.
    rolled = bus.TopicPartition(bus.OBSERVATIONS_ROLLED, 0)
    press = make_event("ClockPressed", "7", source="clock-7", source_seq=1, occurred_at=T0 + 2, received_at=T0 + 2,
                       side="red", red_ms=600_000, black_ms=600_000)
    batches = _Batches([
        [_record(rolled.topic, offset, progress("7", offset + 1)) for offset in range(3)],
        [_record(bus.CLOCK, 0, press)],
        [_record(rolled.topic, 0, progress("7", 4))],
    ])
    bus.ensure_topics(fresh_broker.bootstrap, partitions=PARTITIONS)
    with SqliteLedger(tmp_path / "ledger.sqlite") as ledger:
        service = RefereeService(fresh_broker.bootstrap, ledger, poll_timeout_s=0.1, hold_s=10.0,
                                 camera_boards={"7"})
        service.consumer.close()
        service.consumer = batches  # type: ignore[assignment]
        try:
            for _ in range(3):
                service.run_once()
        finally:
            service.close()
    assert batches.commits == [{rolled: 3}, {bus.TopicPartition(bus.CLOCK, 0): 1}, {rolled: 1}]
