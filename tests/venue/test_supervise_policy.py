"""The supervision policy of `xqarb up` (xqarb/supervise.py) on hand-worked timelines, and the Supervisor with
fake parts and a fake clock (no processes, no broker)."""

from __future__ import annotations

import pytest

from xqarb import metrics
from xqarb.supervise import (
    DOWN,
    FAILED,
    UP,
    Backoff,
    PartState,
    StreamReader,
    Supervisor,
    crashed,
    delay_s,
    due,
    settled,
    started,
)

POLICY = Backoff(initial_s=0.5, factor=2.0, cap_s=4.0, stable_s=30.0, crash_loop_after=3, give_up_after=6)


def test_delays_grow_by_the_factor_up_to_the_cap() -> None:
    assert [delay_s(POLICY, n) for n in range(1, 7)] == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]


def test_a_crash_is_restarted_after_the_initial_delay() -> None:
    s = started(PartState("vision-1"), now=100.0)
    assert s.status == UP and s.restarts == 0  # the first start is not a restart
    s = crashed(s, now=110.0, reason="killed by SIGKILL", policy=POLICY)
    assert (s.status, s.crashes, s.restart_at, s.down_since, s.crash_loop) == (DOWN, 1, 110.5, 110.0, False)
    assert not due(s, 110.4)
    assert due(s, 110.5)
    s = started(s, now=110.6)
    assert (s.status, s.restarts, s.down_since, s.restart_at) == (UP, 1, None, None)


def test_crashes_in_a_row_back_off_then_report_a_crash_loop_then_give_up() -> None:
    s = started(PartState("broker"), now=0.0)
    now = 1.0
    waits = []
    for n in range(1, 7):
        s = crashed(s, now=now, reason="exited with code 1", policy=POLICY)
        assert s.crashes == n
        assert s.crash_loop == (n >= 3)
        if n < 6:
            waits.append(s.restart_at - now)
            now = s.restart_at
            s = started(s, now=now)
            now += 0.2  # dies again at once
    assert waits == pytest.approx([0.5, 1.0, 2.0, 4.0, 4.0])
    assert s.status == FAILED and s.restart_at is None and not due(s, now + 100)
    assert s.restarts == 5


def test_a_failed_restart_counts_as_a_crash_without_moving_down_since() -> None:
    s = crashed(started(PartState("broker"), 0.0), now=10.0, reason="killed by SIGKILL", policy=POLICY)
    s = crashed(s, now=10.5, reason="restart failed: BrokerError: port in use", policy=POLICY)
    assert (s.status, s.crashes, s.down_since, s.restart_at) == (DOWN, 2, 10.0, 11.5)
    assert s.last_exit.startswith("restart failed")


def test_a_stable_run_starts_the_backoff_afresh() -> None:
    s = started(PartState("referee"), 0.0)
    for t in (1.0, 2.0, 4.0):
        s = started(crashed(s, t, "x", POLICY), t + 0.5)
    assert s.crashes == 3 and s.crash_loop
    # Up for stable_s: the next crash waits initial_s again, and the crash loop is over.
    s = crashed(s, now=4.5 + 30.0, reason="x", policy=POLICY)
    assert (s.crashes, s.restart_at - (4.5 + 30.0), s.crash_loop) == (1, 0.5, False)


def test_settled_clears_the_crash_loop_of_a_part_that_stays_up() -> None:
    s = started(PartState("referee"), 0.0)
    for t in (1.0, 2.0, 4.0):
        s = started(crashed(s, t, "x", POLICY), t + 0.5)
    assert settled(s, 4.5 + 29.0, POLICY).crash_loop
    calm = settled(s, 4.5 + 30.0, POLICY)
    assert (calm.crashes, calm.crash_loop, calm.restarts) == (0, False, 3)


# --------------------------------------------------------------------------------------------- Supervisor


class FakePart:
    def __init__(self, name: str, fail_starts: int = 0) -> None:
        self.name = name
        self.running = False
        self.starts = 0
        self.fail_starts = fail_starts
        self.halts = 0

    def start(self) -> None:
        self.starts += 1
        if self.fail_starts:
            self.fail_starts -= 1
            raise RuntimeError("cannot start")
        self.running = True

    def alive(self) -> bool:
        return self.running

    def exit_reason(self) -> str:
        return "killed by SIGKILL"

    def pid(self) -> int | None:
        return 4242

    def begin_stop(self) -> None:
        self.running = False

    def finish_stop(self) -> None:
        return

    def halt(self) -> None:
        self.running = False
        self.halts += 1


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def _sample(name: str, part: str) -> float:
    from prometheus_client import REGISTRY

    value = REGISTRY.get_sample_value(name, {"part": part})
    return 0.0 if value is None else value


def test_supervisor_restarts_a_dead_part_after_its_delay_and_says_so() -> None:
    clock, said = Clock(), []
    part = FakePart("vision-test-a")
    hooked = []
    hooks = {"vision-test-a": lambda: hooked.append(1)}
    sup = Supervisor([], POLICY, clock=clock, say=said.append, after_restart=hooks)
    sup.add(part)
    restarts_before = _sample("xq_restarts_total", "vision-test-a")
    assert _sample("xq_part_up", "vision-test-a") == 1.0
    part.running = False  # killed
    sup.tick()
    assert sup.parts_view()[0]["status"] == DOWN
    assert _sample("xq_part_up", "vision-test-a") == 0.0
    assert "vision-test-a went down (killed by SIGKILL); restarting in 0.5 s" in said[-1]
    assert not sup.all_up()
    clock.t += 0.4
    sup.tick()
    assert part.starts == 0  # not yet due
    clock.t += 0.1
    sup.tick()
    assert part.starts == 1 and part.running and hooked == [1]
    view = sup.parts_view()[0]
    assert (view["status"], view["restarts"], view["pid"]) == (UP, 1, 4242)
    assert "vision-test-a restarted (pid 4242) after 0.5 s down (restart 1)" in said[-1]
    assert _sample("xq_restarts_total", "vision-test-a") == restarts_before + 1
    assert _sample("xq_part_up", "vision-test-a") == 1.0
    assert sup.all_up() and not sup.failed


def test_supervisor_reports_a_crash_loop_and_gives_up() -> None:
    clock, said = Clock(), []
    part = FakePart("broker-test-b")
    sup = Supervisor([], POLICY, clock=clock, say=said.append)
    sup.add(part)
    part.running = False
    part.fail_starts = 100  # it never comes back
    for _ in range(40):
        sup.tick()
        clock.t += 0.5
    assert part.starts == 5  # six crashes: the first exit and five failed restarts
    assert sup.failed == ["broker-test-b"]
    assert any("crash loop (3 in a row)" in line for line in said)
    assert "giving up" in said[-1]
    assert _sample("xq_part_crash_loop", "broker-test-b") == 1.0
    assert sup.parts_view()[0]["status"] == FAILED


def test_stream_reader_shifts_offsets_past_what_was_streamed_after_a_renewal() -> None:
    batches = [[(0, 5, "a"), (1, 2, "b")], [(0, 0, "c")]]
    made = []

    def make():
        made.append(1)
        queue = list(batches.pop(0)) if batches else []
        return lambda: [queue.pop(0)] if queue else []

    position = {0: 6, 1: 3}
    reader = StreamReader(make, lambda: dict(position))
    assert reader() == [(0, 5, "a")]
    assert reader() == [(1, 2, "b")]
    reader.renew()  # the broker came back empty: offsets start from 0 again
    assert reader() == [(0, 6, "c")]  # after the 6 already streamed on partition 0
    assert len(made) == 2


@pytest.mark.parametrize("name", ["xq_restarts_total", "xq_part_up", "xq_part_crash_loop", "xq_part_crashes_total"])
def test_supervision_metrics_are_registered(name: str) -> None:
    text = metrics.metrics_response()[0].decode()
    assert f"# HELP {name}" in text


def test_parts_that_need_the_broker_keep_running_while_it_is_down_and_after() -> None:
    clock, said = Clock(), []
    broker, referee, vision = FakePart("broker-test-c"), FakePart("referee-test-c"), FakePart("vision-test-c")
    sup = Supervisor([], POLICY, clock=clock, say=said.append)
    sup.add(broker)
    sup.add(referee, needs="broker-test-c", renew=True)
    sup.add(vision, needs="broker-test-c")
    referee.running = vision.running = True  # started outside (`add`)
    broker.running = False  # killed
    broker.fail_starts = 1  # and its first restart fails
    sup.tick()
    # vision is not stopped: it reconnects by itself (a stopped vision process forgets its cameras' counts); the
    # referee, renewed with the broker, is stopped and not counted as a crash of its own
    assert (referee.halts, vision.halts) == (1, 0) and vision.running and not referee.running
    view = {p["part"]: p for p in sup.parts_view()}
    assert [view[n]["status"] for n in ("broker-test-c", "referee-test-c", "vision-test-c")] == [DOWN, "waiting", UP]
    assert view["referee-test-c"]["last_exit"] == "broker-test-c went down"
    assert view["referee-test-c"]["crashes_in_a_row"] == 0
    assert said[-2:] == ["xqarb up: referee-test-c stopped until broker-test-c is back",
                         "xqarb up: vision-test-c keep running and reconnect once broker-test-c is back"]
    clock.t += 0.5
    sup.tick()
    assert broker.starts == 1 and referee.starts == 0  # never before the broker
    clock.t += 1.0
    sup.tick()
    assert broker.running and broker.starts == 2 and referee.running and referee.starts == 1
    assert [p["restarts"] for p in sup.parts_view()] == [1, 1, 0]
    assert vision.starts == 0
    assert said[-2:] == ["xqarb up: broker-test-c restarted (pid 4242) after 1.5 s down (restart 1)",
                         "xqarb up: referee-test-c restarted (pid 4242) after 1.5 s down (restart 1)"]


def test_a_part_that_dies_while_the_broker_is_down_waits_for_it_then_starts() -> None:
    clock, said = Clock(), []
    broker, vision = FakePart("broker-test-d"), FakePart("vision-test-d")
    sup = Supervisor([], POLICY, clock=clock, say=said.append)
    sup.add(broker)
    sup.add(vision, needs="broker-test-d")
    vision.running = True  # started outside (`add`)
    broker.running = False
    broker.fail_starts = 2  # the broker stays down a while (two failed restarts, then a wait of 2 s)
    sup.tick()
    clock.t += 0.2
    vision.running = False  # died while the broker is away
    sup.tick()
    view = {p["part"]: p for p in sup.parts_view()}
    assert view["vision-test-d"]["status"] == "waiting" and view["vision-test-d"]["crashes_in_a_row"] == 1
    for _ in range(30):  # its own backoff (0.5 s) is long over: still no start while the broker is down
        clock.t += 0.1
        sup.tick()
    assert vision.starts == 0 and broker.starts == 2 and not broker.running
    clock.t += 1.0  # the broker's third start works: vision follows at once
    sup.tick()
    assert broker.running and vision.running and vision.starts == 1
    assert said[-2:] == [
        "xqarb up: broker-test-d restarted (pid 4242) after 4.2 s down (restart 1)",
        "xqarb up: vision-test-d restarted (pid 4242) after 4.0 s down (restart 1)",
    ]
    assert {p["part"]: p["status"] for p in sup.parts_view()} == {"broker-test-d": UP, "vision-test-d": UP}


def test_a_referee_thread_that_raises_is_restarted_with_a_new_service() -> None:
    import threading

    from xqarb.supervise import RefereeThread

    made: list[object] = []
    release = threading.Event()

    class Service:
        def __init__(self) -> None:
            self.closed = False
            self.stopped = threading.Event()

        def run(self) -> None:
            if len(made) == 1:
                raise RuntimeError("ledger locked")
            self.stopped.wait(5)
            release.set()

        def stop(self) -> None:
            self.stopped.set()

        def close(self) -> None:
            self.closed = True

    def make() -> Service:
        made.append(Service())
        return made[-1]  # type: ignore[return-value]

    part = RefereeThread(make)
    clock, said = Clock(), []
    sup = Supervisor([], POLICY, clock=clock, say=said.append)
    part.start()
    sup.add(part)
    assert part.thread is not None
    part.thread.join(2)
    sup.tick()
    assert "referee went down (RuntimeError: ledger locked); restarting in 0.5 s" in said[-1]
    clock.t += 0.5
    sup.tick()
    assert len(made) == 2 and made[0].closed and part.alive()  # type: ignore[attr-defined]
    part.begin_stop()
    part.finish_stop()
    assert release.is_set() and made[1].closed and not part.alive()  # type: ignore[attr-defined]


def test_stream_reader_survives_a_reader_that_cannot_be_made_yet() -> None:
    from kafka.errors import NoBrokersAvailable

    tries = []

    def make():
        tries.append(1)
        if len(tries) == 2:
            raise NoBrokersAvailable()
        return lambda: [(0, 0, "x")]

    reader = StreamReader(make, lambda: {0: 3})
    reader.renew()
    assert reader() == []  # the broker is not answering yet: nothing, and no exception into the hub's thread
    assert reader() == [(0, 3, "x")]
    assert len(tries) == 3
