"""Supervision of `xqarb up`'s parts: the embedded broker, the vision processes and the referee.

Two halves, kept apart:
  * the policy (`Backoff`, `PartState`, `crashed`, `started`, `due`): pure values in, values out, no clock reads
    and no processes; it says when a part that went down is started again and when to give up;
  * the adapters (`BrokerPart`, `VisionProcess`, `RefereeThread`) and `Supervisor`, which reads the clock, looks
    at the parts, restarts them, logs every change, keeps the Prometheus gauges and answers `/api/venue/parts`.

`Supervisor.tick()` is called from `xqarb up`'s main loop (the main thread): a child started there gets the
parent-death signal (broker.py), so even a SIGKILLed `up` leaves no broker behind.

A part that keeps crashing is restarted after growing delays (initial, times factor, up to a cap); after
`crash_loop_after` crashes in a row it is reported as a crash loop (log line, `crash_loop` in the API and the
`xq_part_crash_loop` gauge), and after `give_up_after` the supervisor gives up: `up` then stops everything and
exits non-zero rather than staying half up.

A part that needs another (vision needs the broker) is not stopped when that one goes down: it reconnects by
itself to a broker restarted on the same address (a refused commit or heartbeat makes its consumer rejoin its
group: services/vision/service.py), so a vision process keeps its cameras' counts and counts the frames lost with
the broker, and nothing waits for a fresh process to start and rejoin. One that dies while the part it needs is
down is started again only once that part is back (a process started against a dead broker would only die again:
no restart storm), after its backoff as for any crash.
The referee thread rides through too: its consumer rejoins and reads the new topics from their start, and it sends
the outputs the dead broker did not acknowledge again until the new one does (services/referee/service.py). A part
added with `renew` is instead stopped while the part it needs is down and started afresh once it is back (`up` has
none since the referee keeps running). The 60-80 s a referee left running once took to consume again were the
restarted broker never answering its group's SyncGroup, which kafka-python waited 305 s for: the referee now gives
up on a request after `bus.GROUP_REQUEST_TIMEOUT_MS` and rejoins, and one whose rejoin never ends joins as a new
member (`REFEREE_REJOIN_S`, services/referee/service.py).
"""

from __future__ import annotations

import dataclasses
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

# --------------------------------------------------------------------------------------------- the policy


@dataclass(frozen=True)
class Backoff:
    """When a part that went down is started again."""

    # First restart after half a second: most crashes are one-off (a killed process, a lost connection), and a
    # venue wants its cameras read again at once; half a second still keeps a crashing part off a busy CPU.
    initial_s: float = 0.5
    # Each further crash in a row doubles the wait, so a part that cannot start stops taking turns for the CPU.
    factor: float = 2.0
    # Never wait longer than this between tries: a fault fixed outside (a disk freed) is noticed within it.
    cap_s: float = 30.0
    # A part that ran this long was healthy: its next crash is a new fault, waited for from `initial_s` again.
    stable_s: float = 30.0
    # This many crashes in a row (none of them after a stable run) is a crash loop: said loudly, not hidden.
    crash_loop_after: int = 3
    # After this many crashes in a row the part is given up on, and `up` stops everything (never half up).
    # With the defaults the tries span about 2 minutes (0.5 + 1 + 2 + ... capped at 30 s).
    give_up_after: int = 8


UP = "up"
DOWN = "down"  # waiting for its restart
FAILED = "failed"  # given up on
WAITING = "waiting"  # down (or stopped: `renew`) while a part it needs is down: started again once it is back
STARTING = "starting"


@dataclass(frozen=True)
class PartState:
    """What the supervisor knows of one part (a value: every change makes a new one)."""

    name: str
    status: str = STARTING
    restarts: int = 0  # starts after the first one
    crashes: int = 0  # crashes in a row, since the last stable run
    started_at: float | None = None  # monotonic seconds of the last start
    down_since: float | None = None
    restart_at: float | None = None  # when the next start is due (status DOWN)
    last_exit: str | None = None  # why it last went down
    crash_loop: bool = False


def delay_s(policy: Backoff, crashes: int) -> float:
    """The wait before the restart that follows the `crashes`-th crash in a row (1 = the first)."""
    return min(policy.cap_s, policy.initial_s * policy.factor ** max(0, crashes - 1))


def crashed(state: PartState, now: float, reason: str, policy: Backoff) -> PartState:
    """The part went down at `now` (it exited, or its start failed)."""
    ran_s = now - state.started_at if state.status == UP and state.started_at is not None else 0.0
    crashes = 1 if ran_s >= policy.stable_s else state.crashes + 1
    failed = crashes >= policy.give_up_after
    return dataclasses.replace(
        state,
        status=FAILED if failed else DOWN,
        crashes=crashes,
        down_since=now if state.status != DOWN else state.down_since,
        restart_at=None if failed else now + delay_s(policy, crashes),
        last_exit=reason,
        crash_loop=crashes >= policy.crash_loop_after,
    )


def started(state: PartState, now: float) -> PartState:
    """The part was started (again) at `now` and answers."""
    again = state.status != STARTING
    return dataclasses.replace(
        state,
        status=UP,
        restarts=state.restarts + (1 if again else 0),
        started_at=now,
        down_since=None,
        restart_at=None,
    )


def due(state: PartState, now: float) -> bool:
    """True when a part that is down should be started now."""
    return state.status == DOWN and state.restart_at is not None and now >= state.restart_at


def held(state: PartState, now: float, reason: str) -> PartState:
    """The part was stopped at `now` because a part it needs went down (a part renewed with it): not a crash."""
    return dataclasses.replace(
        state, status=WAITING, down_since=now if state.down_since is None else state.down_since,
        restart_at=None, last_exit=reason,
    )  # fmt: skip


def released(state: PartState, now: float) -> PartState:
    """The part it needs is back: a part held for it is started now."""
    return dataclasses.replace(state, status=DOWN, restart_at=now) if state.status == WAITING else state


def startable(state: PartState, now: float, need: PartState | None) -> bool:
    """True when a part that is down should be started now: its backoff is over, and the part it needs (if any)
    is up. While that one is down, a part that died waits for it (WAITING), however long its own backoff."""
    return due(state, now) and (need is None or need.status == UP)


def shown_status(state: PartState, need: PartState | None) -> str:
    """The status said on `/api/venue/parts`: a part down whose restart waits for the part it needs is WAITING."""
    if state.status == DOWN and need is not None and need.status != UP:
        return WAITING
    return state.status


def settled(state: PartState, now: float, policy: Backoff) -> PartState:
    """A part up for `stable_s` is healthy again: its crash count (and crash loop) are cleared."""
    stable = state.status == UP and state.started_at is not None and now - state.started_at >= policy.stable_s
    if stable and (state.crashes or state.crash_loop):
        return dataclasses.replace(state, crashes=0, crash_loop=False)
    return state


# --------------------------------------------------------------------------------------------- the parts


class Part(Protocol):
    """One supervised thing. `start` returns once it works (or raises); `alive` must be cheap."""

    name: str

    def start(self) -> None: ...

    def alive(self) -> bool: ...

    def exit_reason(self) -> str: ...

    def pid(self) -> int | None: ...

    def begin_stop(self) -> None:
        """Ask it to stop (no waiting), so that several parts stop at the same time."""
        ...

    def finish_stop(self) -> None:
        """Wait for it to have stopped, forcing it after a while."""
        ...

    def halt(self) -> None:
        """Stop it at once: a part it needs went down, and what it held is gone with that part anyway."""
        ...


def describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with code {code}"


class BrokerPart:
    """The embedded broker, restarted on the same port (clients keep their bootstrap address), with the topics
    created again: its storage is in memory, so a restarted broker starts empty."""

    name = "broker"

    def __init__(self, broker: Any, ensure_topics: Callable[[str], None]) -> None:
        self.broker = broker
        self._ensure_topics = ensure_topics

    def start(self) -> None:
        self.broker.stop()  # the old process, if any, is reaped (and its port freed)
        self.broker.start()
        self._ensure_topics(self.broker.bootstrap)

    def alive(self) -> bool:
        return bool(self.broker.running)

    def exit_reason(self) -> str:
        process = getattr(self.broker, "_process", None)
        code = process.poll() if process is not None else None
        return "stopped" if code is None else describe_exit(code)

    def pid(self) -> int | None:
        process = getattr(self.broker, "_process", None)
        return None if process is None else int(process.pid)

    def begin_stop(self) -> None:
        return  # the broker stops last, once everything that talks to it has stopped

    def finish_stop(self) -> None:
        self.broker.stop()

    def halt(self) -> None:
        self.broker.stop()


# A vision process stops on SIGINT after closing its consumer; this long is allowed before it is killed.
VISION_STOP_S = 10.0


class VisionProcess:
    """One `xqarb vision serve` child process (members of the consumer group xq-vision)."""

    def __init__(self, name: str, command: Sequence[str], log: Any) -> None:
        self.name = name
        self.command = list(command)
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        from xqarb.broker import dies_with_parent

        # SIGTERM should `up` die, even killed outright: a vision process left behind would go on as a member of
        # xq-vision, holding partitions whose frames the next `up`'s processes are to read (it commits and exits).
        self.process = subprocess.Popen(self.command, stdout=self.log, stderr=subprocess.STDOUT,
                                        preexec_fn=dies_with_parent(signal.SIGTERM))

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def exit_reason(self) -> str:
        code = None if self.process is None else self.process.poll()
        return "not started" if code is None else describe_exit(code)

    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    def begin_stop(self) -> None:
        if self.alive():
            assert self.process is not None
            self.process.send_signal(signal.SIGINT)  # the vision service stops cleanly on an interrupt

    def finish_stop(self) -> None:
        if self.process is None:
            return
        try:
            self.process.wait(VISION_STOP_S)
        except subprocess.TimeoutExpired:  # it did not stop in time
            self.process.kill()
            self.process.wait(5)

    def halt(self) -> None:
        # Killed, not interrupted: closing its consumer would wait for the broker that is gone; the frames it had
        # not finished went with the broker's memory.
        if self.alive():
            assert self.process is not None
            self.process.kill()
            self.process.wait(5)


# A referee thread stopping finishes its current batch (a poll of 0.5 s, an append, a publish): this long.
REFEREE_STOP_S = 10.0


class RefereeThread:
    """The referee service in a thread of `up` (its fold and ledger share the API's process). A crash is an
    exception out of its loop; a restart is a new service (new consumer and producer) over the same ledger, from
    which it rebuilds its boards by design."""

    name = "referee"

    def __init__(self, make_service: Callable[[], Any]) -> None:
        self._make_service = make_service
        self.service: Any = None
        self.thread: threading.Thread | None = None
        self.error: BaseException | None = None

    def start(self) -> None:
        self._close_old()
        self.error = None
        self.service = self._make_service()
        self.thread = threading.Thread(target=self._run, args=(self.service,), name="xq-referee", daemon=True)
        self.thread.start()

    def _run(self, service: Any) -> None:
        try:
            service.run()
        except Exception as exc:  # said by the supervisor, which restarts the service
            if service is self.service:  # (not a halted service's last words, after a new one started)
                self.error = exc

    def _close_old(self) -> None:
        if self.service is None:
            return
        self.service.stop()
        if self.thread is not None:
            self.thread.join(REFEREE_STOP_S)
        finish_joining(getattr(self.service, "consumer", None))
        close_quietly(self.service)

    def alive(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def exit_reason(self) -> str:
        if self.error is not None:
            return f"{type(self.error).__name__}: {self.error}"
        return "its loop returned"

    def pid(self) -> int | None:
        return None

    def begin_stop(self) -> None:
        if self.service is not None:
            self.service.stop()

    def finish_stop(self) -> None:
        if self.thread is not None:
            self.thread.join(REFEREE_STOP_S)
        if self.service is not None:
            close_quietly(self.service)
            self.service = None

    def halt(self) -> None:
        # The broker went down: the loop is told to stop, and joined and closed in the background, where closing
        # its producer may wait for the dead broker (up to 30 s) without holding up the supervisor, which restarts
        # the broker meanwhile (waiting here, the broker came back 40 s after its SIGKILL instead of 1 s:
        # bench/faults.py). The next start makes a new service over the same ledger, as after a crash.
        service, thread = self.service, self.thread
        self.begin_stop()
        self.service = self.thread = None
        if service is not None:
            threading.Thread(target=_finish_halt, args=(service, thread), name="xq-referee-halt", daemon=True).start()


def _finish_halt(service: Any, thread: threading.Thread | None) -> None:
    """A halted referee service joined and closed (RefereeThread.halt)."""
    if thread is not None:
        thread.join(REFEREE_STOP_S)
    close_quietly(service)


# A consumer that leaves its group while joining it was seen to leave the embedded broker's group stuck: the next
# member was never assigned anything (over 90 s, with a rebalance timeout of 15 s as well as 300 s), while one that
# finished joining first (about 5 s here) and then left made way at once. This long is given to finish joining.
REFEREE_JOIN_S = 15.0


def finish_joining(consumer: Any, timeout_s: float = REFEREE_JOIN_S) -> None:
    """Poll a group member that holds no partitions until it does, so that leaving does not wedge the group.
    What it reads is dropped uncommitted: the next member reads it again."""
    from kafka.errors import KafkaError

    from xqarb.bus import BusError

    if consumer is None or consumer.assignment():
        return
    deadline = time.monotonic() + timeout_s
    while not consumer.assignment() and time.monotonic() < deadline:
        try:
            consumer.poll(0.5)
        except (BusError, KafkaError, OSError):
            return


def close_quietly(service: Any) -> None:
    """Close a service whose broker may be gone: what it still held is said, not raised (the restart goes on)."""
    from kafka.errors import KafkaError

    try:
        service.close()
    except (KafkaError, OSError, RuntimeError) as exc:
        print(f"xqarb up: closing the old {type(service).__name__} said {type(exc).__name__}: {exc}", flush=True)


# --------------------------------------------------------------------------------------------- the supervisor


class Supervisor:
    """Watches the parts, restarts them by the policy, and says so (log, metrics, `parts()` for the API).

    `when_down[name]` runs when that part was seen down, `after_restart[name]` after it was started again (the
    broker: the live stream's reader waits, then starts over on the new, empty topics). `needs[name]` names the
    part that one needs: when it goes down, the parts needing it keep running (they reconnect by themselves; the
    log says which), and one of them that dies meanwhile is started again only after it is back (`startable`);
    those added with `renew` are stopped (WAITING) and started afresh once it is back.
    Stopping them instead (as this did first, when a member that kept its old group generation was seen polling
    nothing until it tried to commit; the consumers now rejoin on a refused commit) lost what a running process
    knew: a fresh vision process cannot count the frames the broker lost, and took 24.6 s to work again.
    """

    def __init__(
        self,
        parts: Sequence[Part],
        policy: Backoff | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        say: Callable[[str], None] | None = None,
        after_restart: dict[str, Callable[[], None]] | None = None,
        when_down: dict[str, Callable[[], None]] | None = None,
        needs: dict[str, str] | None = None,
    ) -> None:
        self.parts = list(parts)
        self.policy = policy or Backoff()
        self.clock = clock
        self.say = say or (lambda text: print(text, file=sys.stderr, flush=True))
        self.after_restart = dict(after_restart or {})
        self.when_down = dict(when_down or {})
        self.needs = dict(needs or {})
        self.renew: set[str] = set()  # parts stopped when the part they need goes down, started afresh after
        self.states = {p.name: PartState(p.name) for p in self.parts}
        self._lock = threading.Lock()  # tick() in the main thread, parts() in HTTP threads

    def add(self, part: Part, needs: str | None = None, *, renew: bool = False) -> None:
        """A part started outside (first start): supervised from now on; `needs`: the part it cannot do without;
        `renew`: stopped when that one goes down and started afresh once it is back, rather than left running."""
        self.parts.append(part)
        if needs is not None:
            self.needs[part.name] = needs
        if renew:
            self.renew.add(part.name)
        with self._lock:
            self.states[part.name] = started(PartState(part.name), self.clock())
        _gauges(part.name, self.states[part.name])

    def start_all(self) -> None:
        """First start of every part, in order; an error propagates (`up` could not start)."""
        for part in self.parts:
            part.start()
            with self._lock:
                self.states[part.name] = started(self.states[part.name], self.clock())
            _gauges(part.name, self.states[part.name])

    @property
    def failed(self) -> list[str]:
        with self._lock:
            return [name for name, s in self.states.items() if s.status == FAILED]

    def tick(self) -> None:
        """Look at every part once: note the ones gone, restart the ones due."""
        for part in self.parts:
            now = self.clock()
            with self._lock:
                state = settled(self.states[part.name], now, self.policy)
                self.states[part.name] = state
            if state.status == UP and not part.alive():
                self._went_down(part, now, part.exit_reason())
                hook = self.when_down.get(part.name)
                if hook is not None:
                    hook()
                self._needed_part_down(part.name)
            elif startable(state, now, self._need(part.name)):
                self._restart(part)

    def _need(self, name: str) -> PartState | None:
        """The state of the part that `name` needs (None: it needs none)."""
        need = self.needs.get(name)
        with self._lock:
            return None if need is None else self.states.get(need)

    def _dependents(self, name: str) -> list[Part]:
        return [p for p in self.parts if self.needs.get(p.name) == name]

    def _needed_part_down(self, name: str) -> None:
        """The parts that need `name`, which just went down: those renewed with it are stopped until it is back,
        the others keep running; said, so the log tells the story."""
        renewed = [p for p in self._dependents(name)
                   if p.name in self.renew and self.states[p.name].status in (UP, DOWN)]
        for part in renewed:
            part.halt()
            with self._lock:
                state = self.states[part.name] = held(self.states[part.name], self.clock(), f"{name} went down")
            _gauges(part.name, state)
        if renewed:
            self.say(f"xqarb up: {', '.join(p.name for p in renewed)} stopped until {name} is back")
        running = [p.name for p in self._dependents(name) if self.states[p.name].status == UP]
        if running:
            self.say(f"xqarb up: {', '.join(running)} keep running and reconnect once {name} is back")

    def _start_waiting_dependents(self, name: str) -> None:
        """`name` is back: the parts needing it that died meanwhile are started now if their backoff is over (the
        next ticks start the others when it is)."""
        now = self.clock()
        for part in self._dependents(name):
            with self._lock:
                state = self.states[part.name] = released(self.states[part.name], now)
            if startable(state, now, self._need(part.name)):
                self._restart(part)

    def _went_down(self, part: Part, now: float, reason: str) -> None:
        from xqarb import metrics

        with self._lock:
            state = self.states[part.name] = crashed(self.states[part.name], now, reason, self.policy)
        _gauges(part.name, state)
        metrics.PART_CRASHES.labels(part.name).inc()
        if state.status == FAILED:
            self.say(f"xqarb up: {part.name} went down ({reason}) {state.crashes} times in a row: giving up")
        else:
            loop = f"; crash loop ({state.crashes} in a row)" if state.crash_loop else ""
            wait = (state.restart_at or now) - now
            self.say(f"xqarb up: {part.name} went down ({reason}); restarting in {wait:.1f} s{loop}")

    def _restart(self, part: Part) -> None:
        from xqarb import metrics

        began = self.clock()
        try:
            part.start()
            hook = self.after_restart.get(part.name)
            if hook is not None:
                hook()
        except Exception as exc:  # a failed start counts as another crash, with its own backoff
            self._went_down(part, self.clock(), f"restart failed: {type(exc).__name__}: {exc}")
            return
        now = self.clock()
        with self._lock:
            state = self.states[part.name]
            down_s = now - (state.down_since or began)
            state = self.states[part.name] = started(state, now)
        _gauges(part.name, state)
        metrics.RESTARTS.labels(part.name).inc()
        pid = part.pid()
        self.say(
            f"xqarb up: {part.name} restarted{f' (pid {pid})' if pid else ''} after {down_s:.1f} s down "
            f"(restart {state.restarts})"
        )
        self._start_waiting_dependents(part.name)

    def parts_view(self) -> list[dict[str, Any]]:
        """Every part's state for `/api/venue/parts` (durations in seconds, relative to now)."""
        now = self.clock()
        with self._lock:
            states = [(p, self.states[p.name], self.states.get(self.needs.get(p.name, ""))) for p in self.parts]
        out = []
        for part, s, need in states:
            out.append({
                "part": s.name,
                "status": shown_status(s, need),
                "pid": part.pid() if s.status == UP else None,
                "restarts": s.restarts,
                "crashes_in_a_row": s.crashes,
                "crash_loop": s.crash_loop,
                "up_for_s": round(now - s.started_at, 1) if s.status == UP and s.started_at is not None else None,
                "down_for_s": round(now - s.down_since, 1) if s.down_since is not None else None,
                "restart_in_s": round(max(0.0, s.restart_at - now), 1) if s.restart_at is not None else None,
                "last_exit": s.last_exit,
            })  # fmt: skip
        return out

    def all_up(self) -> bool:
        with self._lock:
            return all(s.status == UP for s in self.states.values())

    def blueprint(self) -> Any:
        """`GET /api/venue/parts`, for the venue page and the operators (`/readyz` is the API's own)."""
        from flask import Blueprint, jsonify

        bp = Blueprint("xq_supervise", __name__)

        @bp.get("/api/venue/parts")
        def venue_parts() -> Any:
            return jsonify({"all_up": self.all_up(), "parts": self.parts_view()})

        return bp


def _gauges(name: str, state: PartState) -> None:
    from xqarb import metrics

    metrics.PART_UP.labels(name).set(1 if state.status == UP else 0)
    metrics.PART_CRASH_LOOP.labels(name).set(1 if state.crash_loop else 0)


def vision_command(bootstrap: str, evidence_dir: Path, config_path: Path, partitions: int) -> list[str]:
    """`xqarb vision serve` on this broker, keeping evidence here, calibrated by the venue's configuration."""
    return [
        sys.executable, "-m", "xqarb.cli", "vision", "serve",
        "--bootstrap-servers", bootstrap,
        "--evidence-dir", str(evidence_dir),
        "--config", str(config_path),  # boards whose corners the venue gives start from them
        # (a process that starts while the embedded broker restarts empty makes the topics before `up` does)
        "--partitions", str(partitions),
    ]  # fmt: skip


# While the broker is down the stream's reader sleeps this long per poll (its usual poll waits 0.2 s).
PAUSED_POLL_S = 0.2


class StreamReader:
    """The live stream's poll of xq.game-events, made anew after the broker restarted (`renew`).

    A restarted embedded broker numbers its topics' offsets from 0 again. The stream's ids are offsets, so
    the new reader's offsets are shifted past everything already streamed (per partition): ids keep growing,
    the hub takes the new events, and a client resuming with an id from before the restart misses nothing.
    A poll that was under way when the broker went away returns nothing (its offsets meant the old topics).
    While the broker is down (`pause`) it does not poll at all: a client asking a restarted broker for a topic
    before `up` created it would have it made with the broker's default partition count.
    """

    def __init__(self, make: Callable[[], Callable[[], Any]], position: Callable[[], dict[int, int]]) -> None:
        self._make = make
        self._position = position  # the hub's next offset per partition
        self._lock = threading.Lock()
        self._generation = 0
        self._poll: Callable[[], Any] | None = make()
        self._base: dict[int, int] = {}
        self._shift: dict[int, int] = {}  # partition -> what its offsets are moved on by since the renewal
        self._paused = False

    def pause(self) -> None:
        with self._lock:
            self._generation += 1
            self._poll = None
            self._paused = True

    def ready(self) -> bool:
        """For the stream hub's readiness (/readyz): not while the broker is down, nor before the reader made
        after its restart reads its partitions."""
        with self._lock:
            poll, paused = self._poll, self._paused
        probe = getattr(poll, "ready", None)
        return not paused and poll is not None and (probe is None or bool(probe()))

    def caught_up(self) -> bool:
        """For a resuming stream client (StreamHub.resume_index): whether the current reader reached the end."""
        with self._lock:
            poll = self._poll
        probe = getattr(poll, "caught_up", None)
        return poll is not None and (probe is None or bool(probe()))

    def renew(self) -> None:
        with self._lock:
            self._generation += 1
            self._poll = None
            self._paused = False

    def __call__(self) -> list[tuple[int, int, Any]]:
        from kafka.errors import KafkaError

        with self._lock:
            generation, poll, base, paused = self._generation, self._poll, self._base, self._paused
            shift = self._shift
        if paused:
            time.sleep(PAUSED_POLL_S)
            return []
        try:
            if poll is None:
                base = dict(self._position())
                poll = self._make()
                with self._lock:
                    if generation != self._generation:
                        return []
                    self._poll, self._base, self._shift = poll, base, {}
                    shift = self._shift
            items = poll()
        except (KafkaError, OSError) as exc:
            # The hub's thread must not die of it (the venue would serve stale boards): said, and tried again.
            print(f"xqarb up: the live stream's reader: {type(exc).__name__}: {exc}; trying again", flush=True)
            time.sleep(PAUSED_POLL_S)
            return []
        with self._lock:
            if generation != self._generation:
                return []
        out = []
        for p, offset, event in items:
            if p not in shift:
                # Past everything streamed: by the hub's position at the renewal less the first offset read after
                # it (0 on a topic that starts over; a rolled topic's stream offsets name their generation, so
                # only those of the same generation as before move on, stream_roll.py).
                shift[p] = max(0, base.get(p, 0) - offset)
            out.append((p, offset + shift[p], event))
        return out
