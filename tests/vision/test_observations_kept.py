"""Observations kept to be sent again after an embedded broker restarted empty (services/vision/observations_kept.py,
xqarb/kept.py): forgotten once the referee group committed them, sent again in order, before any new one, once the
ends of their partitions went back below them; nothing sent again while the broker keeps them."""

from __future__ import annotations

from typing import Any

import pytest

from xqarb import bus
from xqarb.kept import RecordKeep
from xqarb.vision import service
from xqarb.vision.observations_kept import ObservationReplay

T = bus.OBSERVATIONS


class Obs:
    def __init__(self, event_id: str) -> None:
        self.event_id = event_id
        self.board_id = "b1"


class Broker:
    """A fake broker: each partition's log (event ids), the referee group's commits, the producer's sends."""

    def __init__(self) -> None:
        self.logs: dict[tuple[str, int], list[str]] = {}
        self.commits: dict[tuple[str, int], int | None] = {}
        self.down = False
        self.asked: list[str] = []
        self.short_by = 0  # the embedded broker reports the last batch's first offset + 1 as a log's end

    def restart(self) -> None:  # comes back empty: records and commits gone
        self.logs, self.commits = {}, {}

    def store(self, events: list[Any], partition: int = 0, topic: str = T) -> list[bus.Delivery]:
        log = self.logs.setdefault((topic, partition), [])
        out = []
        for e in events:
            log.append(e.event_id)
            out.append(bus.Delivery(topic, partition, len(log) - 1))
        return out

    def ends(self, keys: Any) -> dict[tuple[str, int], int]:
        self.asked.append("ends")
        if self.down:
            raise bus.BusError("no broker")
        return {k: max(0, len(self.logs.get(k, [])) - self.short_by) if self.logs.get(k) else 0 for k in keys}

    def committed(self, keys: Any) -> dict[tuple[str, int], int | None]:
        self.asked.append("commits")
        return {k: self.commits.get(k) for k in keys}

    def send_many(self, topic: str, events: list[Any]) -> list[bus.Delivery]:
        assert topic == T
        return self.store(list(events))


def replay_over(broker: Broker, clock: list[float]) -> ObservationReplay:
    # (wall clock 0: an even period, xq.observations takes new records and xq.observations.roll rests)
    return ObservationReplay(broker.ends, broker.committed, keep=RecordKeep(60.0, 100), clock=lambda: clock[0],
                             wall_clock=lambda: 0.0)


def test_the_referees_commits_forget_and_a_restart_sends_the_rest_again_in_order() -> None:
    broker, clock = Broker(), [100.0]
    replay = replay_over(broker, clock)
    obs = [Obs(f"o{k}") for k in range(5)]
    replay.kept(obs, broker.store(obs))  # offsets 0..4
    broker.commits[(T, 0)] = 2  # the referee read o0, o1
    assert replay.check(broker) == 0 and replay.read == 2 and len(replay.keep) == 3
    clock[0] += 0.5
    broker.asked.clear()
    assert replay.check(broker) == 0 and broker.asked == []  # asked about once a second only
    broker.restart()  # o2..o4 lost unread; the group's commits gone too
    clock[0] += 1.0
    assert replay.check(broker) == 3
    assert broker.logs[(T, 0)] == ["o2", "o3", "o4"] and replay.replayed == 3
    # Still kept, where the new broker stores them: its commits forget them; nothing is sent twice.
    clock[0] += 1.0
    assert replay.check(broker) == 0
    broker.commits[(T, 0)] = 3
    clock[0] += 1.0
    assert replay.check(broker) == 0 and len(replay.keep) == 0 and broker.logs[(T, 0)] == ["o2", "o3", "o4"]


def test_a_commit_on_the_restarted_broker_forgets_nothing_it_lost() -> None:
    broker, clock = Broker(), [0.0]
    replay = replay_over(broker, clock)
    broker.store([Obs(f"x{k}") for k in range(10)])  # observations of before
    obs = [Obs("a"), Obs("b")]
    replay.kept(obs, broker.store(obs))  # offsets 10, 11
    assert replay.check(broker, now=True) == 0  # the end seen: 12
    broker.restart()
    broker.store([Obs("new")])  # one record on the new broker, read by the referee: commit 1
    broker.commits[(T, 0)] = 1
    assert replay.check(broker, now=True) == 2  # the ends (1) went back below 10, 11: lost, not read
    assert broker.logs[(T, 0)] == ["new", "a", "b"]


def test_nothing_is_sent_again_while_the_broker_keeps_them_or_does_not_answer() -> None:
    broker, clock = Broker(), [0.0]
    replay = replay_over(broker, clock)
    obs = [Obs("a"), Obs("b")]
    replay.kept(obs, broker.store(obs))
    broker.short_by = 1  # a log's end reported short of b's offset: b is there all the same
    assert replay.check(broker, now=True) == 0 and broker.logs[(T, 0)] == ["a", "b"]
    broker.down = True
    assert replay.check(broker, now=True) == 0 and len(replay.keep) == 2  # unknown: kept, looked at again
    clock[0] += 61.0
    broker.down = False
    assert replay.check(broker, now=True) == 0 and len(replay.keep) == 0  # past OBSERVATION_REPLAY_S: forgotten


def test_a_batch_sent_again_after_a_restart_goes_after_the_kept_observations(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(service, "RESEND_PAUSE_S", 0.0)
    broker, clock = Broker(), [0.0]
    replay = replay_over(broker, clock)
    old = [Obs("old1"), Obs("old2")]
    replay.kept(old, broker.store(old))
    broker.restart()

    class Producer:  # the in-flight batch was not acknowledged by the broker that died
        tries = 0

        def send_soon(self, topic: str, events: list[Any]) -> list[Any]:
            return list(events)

        def acknowledged(self, pending: list[Any]) -> list[bus.Delivery]:
            self.tries += 1
            if self.tries == 1:
                raise bus.PublishError("the broker died")
            return broker.store(pending)

        def send_many(self, topic: str, events: list[Any]) -> list[bus.Delivery]:
            return broker.send_many(topic, events)

    producer = Producer()
    new = [Obs("new1")]
    where = service.deliver(producer, producer.send_soon(T, new), new, stop=lambda: False,
                            before_resend=lambda: replay.check(producer, now=True))
    assert broker.logs[(T, 0)] == ["old1", "old2", "new1"] and where == [bus.Delivery(T, 0, 2)]


def test_over_the_bound_the_oldest_are_forgotten_and_said() -> None:
    broker, clock = Broker(), [0.0]
    replay = ObservationReplay(broker.ends, broker.committed, keep=RecordKeep(60.0, 3), clock=lambda: clock[0])
    obs = [Obs(f"o{k}") for k in range(5)]
    replay.kept(obs, broker.store(obs))
    assert replay.forgotten == 2 and [e.event_id for e in replay.keep.events(0.0)] == ["o2", "o3", "o4"]


def test_an_offset_given_again_has_the_kept_ones_sent_again_at_once() -> None:
    broker, clock = Broker(), [0.0]
    replay = replay_over(broker, clock)
    old = [Obs("o1"), Obs("o2")]
    replay.kept(old, broker.store(old))  # offsets 0, 1; no look at the ends before the broker died
    broker.restart()
    new = [Obs("n1")]
    replay.kept(new, broker.store(new))  # offset 0 again: the log starts over
    assert replay.check(broker) == 3  # at once, not a second later; n1 again too (the referee takes it once)
    assert broker.logs[(T, 0)] == ["n1", "o1", "o2", "n1"]


def test_a_restart_with_nothing_kept_sends_nothing() -> None:
    broker, clock = Broker(), [0.0]
    replay = replay_over(broker, clock)
    obs = [Obs("a")]
    replay.kept(obs, broker.store(obs))
    broker.commits[(T, 0)] = 1
    assert replay.check(broker, now=True) == 0 and len(replay.keep) == 0
    assert replay.check(broker, now=True) == 0  # nothing kept: what was acknowledged is forgotten
    broker.restart()
    new = [Obs("n1")]
    replay.kept(new, broker.store(new))  # offset 0 again, but nothing of ours was lost
    assert replay.check(broker, now=True) == 0 and broker.logs[(T, 0)] == ["n1"]


def test_a_resting_topic_the_roller_emptied_after_the_referee_read_it_is_not_a_restart() -> None:
    rest = bus.ROLLED[T]
    broker, clock = Broker(), [0.0]
    replay = replay_over(broker, clock)
    old, new = [Obs("r1"), Obs("r2")], [Obs("c1")]
    replay.kept(old, broker.store(old, topic=rest))
    replay.kept(new, broker.store(new))
    assert replay.check(broker, now=True) == 0
    broker.commits[(rest, 0)] = 2  # the referee read the resting topic, and the roller emptied it at once
    broker.logs[(rest, 0)] = []
    assert replay.check(broker, now=True) == 0 and replay.read == 2
    assert [e.event_id for e in replay.keep.events(0.0)] == ["c1"] and broker.logs[(T, 0)] == ["c1"]
    del broker.commits[(rest, 0)]  # (the topic made again: its group offsets start afresh)
    # A restart that lost the group's commits with the records: sent again, the resting topic's too.
    replay.kept(old, broker.store(old, topic=rest))
    assert replay.check(broker, now=True) == 0
    broker.restart()
    assert replay.check(broker, now=True) == 3 and broker.logs[(T, 0)] == ["c1", "r1", "r2"]
