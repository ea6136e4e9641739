"""The supervisor across a broker outage, with a real embedded broker and real child processes (xqarb/supervise.py):
a part that needs the broker and stays healthy is left running through the broker's death and restart (it
reconnects by itself); one that dies while the broker is down is started again only once the broker is back."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from xqarb.supervise import DOWN, UP, Backoff, BrokerPart, Supervisor, VisionProcess

POLICY = Backoff(initial_s=0.5, factor=2.0, cap_s=4.0, stable_s=30.0, crash_loop_after=3, give_up_after=6)
SLEEPER = [sys.executable, "-c", "import time; time.sleep(120)"]  # a dependent that stays healthy until killed


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def _kill(pid: int | None, alive: object) -> None:
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while alive() and time.monotonic() < deadline:  # type: ignore[operator]
        time.sleep(0.05)
    assert not alive()  # type: ignore[operator]


def test_a_healthy_dependent_runs_on_and_a_dead_one_waits_for_the_broker(tmp_path: Path) -> None:
    from xqarb.broker import BrokerError, EmbeddedBroker

    try:
        broker = EmbeddedBroker(log_path=tmp_path / "broker.log").start()
    except BrokerError as exc:
        pytest.skip(f"no embedded broker here: {exc}")
    refuse = [0]  # topics refused this many more times: the broker's restart fails, it stays down longer

    def ensure_topics(bootstrap: str) -> None:
        if refuse[0]:
            refuse[0] -= 1
            raise OSError("topics not made")

    clock, said = Clock(), []
    sup = Supervisor([], POLICY, clock=clock, say=said.append)
    part = BrokerPart(broker, ensure_topics)
    sup.add(part)
    with open(tmp_path / "children.log", "wb") as log:
        healthy, dying = VisionProcess("healthy-1", SLEEPER, log), VisionProcess("dying-1", SLEEPER, log)
        try:
            for child in (healthy, dying):
                child.start()
                sup.add(child, needs="broker")
            pid = healthy.pid()
            _kill(part.pid(), part.alive)
            refuse[0] = 1
            sup.tick()
            assert said[-1] == "xqarb up: healthy-1, dying-1 keep running and reconnect once broker is back"
            _kill(dying.pid(), dying.alive)
            clock.t += 0.1
            sup.tick()
            view = {p["part"]: p["status"] for p in sup.parts_view()}
            assert view == {"broker": DOWN, "healthy-1": UP, "dying-1": "waiting"}
            clock.t += 0.5  # the dead one's backoff is over, and the broker's restart fails: nothing is started
            sup.tick()
            assert not dying.alive() and part.alive()  # (a broker process runs; its topics were refused)
            assert {p["part"]: p["restarts"] for p in sup.parts_view()} == {"broker": 0, "healthy-1": 0, "dying-1": 0}
            clock.t += 1.0  # the broker's next start works: the dead one follows in the same tick
            sup.tick()
            assert part.alive() and dying.alive() and healthy.alive() and healthy.pid() == pid
            view = {p["part"]: (p["status"], p["restarts"]) for p in sup.parts_view()}
            assert view == {"broker": (UP, 1), "healthy-1": (UP, 0), "dying-1": (UP, 1)}
            assert said[-2].startswith("xqarb up: broker restarted")
            assert said[-1].startswith("xqarb up: dying-1 restarted")
        finally:
            for child in (healthy, dying):
                child.halt()
            broker.stop()


class EmptyBrokerConsumer:
    """kafka-python's consumer on a broker restarted empty, before `up` made its topics again: end_offsets raises
    KeyError for the partitions it does not know (kafka-python 2.3)."""

    def __init__(self, held: list[object]) -> None:
        self.held = held
        self.asked = 0

    def assignment(self) -> set[object]:
        return set(self.held)

    def end_offsets(self, partitions: list[object]) -> dict[object, int]:
        self.asked += 1
        raise KeyError(partitions[0])


def test_a_consumer_of_rolled_topics_lives_on_when_their_ends_are_not_known_yet() -> None:
    from kafka import TopicPartition

    from xqarb import bus

    consumer = bus.Consumer.__new__(bus.Consumer)  # its rolled-topic state only, without a broker
    kafka = EmptyBrokerConsumer([TopicPartition(bus.FRAMES, 1), TopicPartition(bus.ROLLED[bus.FRAMES], 1)])
    consumer._consumer, consumer.group_id = kafka, "xq-vision"
    consumer._pairs, consumer._seen_ends, consumer._behind = {bus.FRAMES: bus.ROLLED[bus.FRAMES]}, {}, {}
    consumer._next_roll_check, consumer._wall_clock = 0.0, time.time
    consumer._follow_roll()  # (it raised KeyError, which ended vision and the referee after a broker restart)
    assert kafka.asked == 1 and 0 < consumer._next_roll_check - time.monotonic() <= bus.ROLL_CHECK_S
