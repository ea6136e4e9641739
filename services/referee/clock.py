"""The clock model (计时, chapter 6): remaining time per side from presses, pauses and event times.

A pure value: every function takes the state and an event time (microseconds, the events' `occurred_at`) and
returns a new state; nothing reads a clock. Schemes (GameStarted.time_control):
- 6.1 `increment`: base_ms, plus increment_ms after each move;
- 6.2 `moves_in_time`: periods [{moves, ms, repeat?}]: when a side completes a period's moves it gets the next
  period's time on top of what is left; failing to complete them in time is a loss (4.1.6);
- 6.3 / 6.4 `sudden_death`: base_ms for all moves;
- 6.5 handicap: `black_base_ms` gives Black another base (or first-period) time;
- `late_forfeit_ms` (20.1, default 15 minutes); `drift_tolerance_ms` (how far the device may drift from the model
  before the referee warns, default 3 s); `press_grace_ms` (how long after a press the camera may first show
  the move it belongs to when no hand was seen before the press, default 3 s; see the fold's 8.1.7).
The device's own times (ClockPressed red_ms / black_ms) are kept beside the model, never replacing it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

SIDES = ("red", "black")


def other(side: str) -> str:
    return "black" if side == "red" else "red"


class TimeControlError(ValueError):
    """A time control that does not describe one of the schemes 6.1-6.5."""


@dataclass(frozen=True, slots=True)
class Period:
    moves: int | None  # None: all remaining moves (a final sudden-death period)
    ms: int
    repeat: bool = False


@dataclass(frozen=True, slots=True)
class TimeControl:
    scheme: str
    red_base_ms: int
    black_base_ms: int
    increment_ms: int = 0
    periods: tuple[Period, ...] = ()
    late_forfeit_ms: int = 900_000
    drift_tolerance_ms: int = 3_000
    # How long after a clock press the camera may first show the move that press belongs to when no hand was seen
    # on the board before the press: the tracker's stillness window after the hand left plus a margin. A move
    # first seen later than that, with no hand over the board before the press, was made after it (8.1.7).
    press_grace_ms: int = 3_000

    @classmethod
    def from_json(cls, tc: Mapping[str, Any]) -> TimeControl:
        def ms(key: str, default: int | None = None) -> int:
            value = tc.get(key, default)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise TimeControlError(f"time_control.{key} must be a non-negative integer of ms, got {value!r}")
            return value

        scheme = tc.get("scheme")
        late = ms("late_forfeit_ms", 900_000)
        drift = ms("drift_tolerance_ms", 3_000)
        grace = ms("press_grace_ms", 3_000)
        if scheme in ("increment", "sudden_death"):
            base = ms("base_ms")
            if base <= 0:
                raise TimeControlError("time_control.base_ms must be positive")
            inc = ms("increment_ms") if scheme == "increment" else 0
            black = ms("black_base_ms", base)  # 6.5 贴时
            return cls(scheme, base, black, inc, (), late, drift, grace)
        if scheme == "moves_in_time":
            raw = tc.get("periods")
            if not isinstance(raw, list | tuple) or not raw:
                raise TimeControlError("time_control.periods must be a non-empty list of {moves, ms, repeat?}")
            periods = []
            for i, p in enumerate(raw):
                if not isinstance(p, Mapping):
                    raise TimeControlError(f"time_control.periods[{i}] must be an object")
                moves = p.get("moves")
                if moves is not None and (not isinstance(moves, int) or moves <= 0):
                    raise TimeControlError(f"time_control.periods[{i}].moves must be a positive integer or null")
                pms = p.get("ms")
                if not isinstance(pms, int) or pms <= 0:
                    raise TimeControlError(f"time_control.periods[{i}].ms must be a positive integer")
                periods.append(Period(moves, pms, bool(p.get("repeat", False))))
            first = periods[0].ms
            black = ms("black_base_ms", first)
            return cls(scheme, first, black, 0, tuple(periods), late, drift, grace)
        raise TimeControlError(
            f"time_control.scheme must be increment (6.1), moves_in_time (6.2) or sudden_death (6.3/6.4), "
            f"got {scheme!r}"
        )

    def period(self, index: int) -> Period | None:
        if not self.periods:
            return None
        if index < len(self.periods):
            return self.periods[index]
        last = self.periods[-1]
        return last if last.repeat else None


@dataclass(frozen=True)
class ClockState:
    """Remaining time per side as of `since`; `running` is the side whose clock runs (None: stopped)."""

    tc: TimeControl
    red_ms: int
    black_ms: int
    running: str | None
    since: int  # µs
    paused: bool = False
    red_period: int = 0
    black_period: int = 0
    red_period_moves: int = 0
    black_period_moves: int = 0
    device_red_ms: int | None = None
    device_black_ms: int | None = None
    device_at: int | None = None
    drifting: bool = False

    def _with(self, **fields: Any) -> ClockState:
        """A changed copy (`dataclasses.replace` without its per-call cost: the fold calls this per event)."""
        new = object.__new__(ClockState)
        new.__dict__.update(self.__dict__)
        new.__dict__.update(fields)
        return new

    @classmethod
    def start(cls, tc: TimeControl, at: int) -> ClockState:
        # 20.1: the clocks start with the game; a late player's time runs from the start. Red moves first.
        return cls(tc, tc.red_base_ms, tc.black_base_ms, "red", at)

    def remaining(self, side: str, at: int) -> int:
        base = self.red_ms if side == "red" else self.black_ms
        if self.running == side and not self.paused and at > self.since:
            base -= (at - self.since) // 1000
        return base

    def remaining_both(self, at: int) -> tuple[int, int]:
        return self.remaining("red", at), self.remaining("black", at)

    def settle(self, at: int) -> ClockState:
        """Charge the running side for the time up to `at`."""
        if at <= self.since:
            return self
        red, black = self.remaining_both(at)
        return self._with(red_ms=red, black_ms=black, since=at)

    def flagged(self, at: int) -> str | None:
        """The side whose time has run out at `at` (4.1.6), if any."""
        if self.running is not None and not self.paused and self.remaining(self.running, at) <= 0:
            return self.running
        return None

    def period_index(self, side: str) -> int:
        return self.red_period if side == "red" else self.black_period

    def credit_move(self, side: str) -> ClockState:
        """What a completed move earns: the increment (6.1) or progress through the period (6.2)."""
        tc = self.tc
        if tc.scheme == "increment":
            return self.add(side, tc.increment_ms)
        if tc.scheme != "moves_in_time":
            return self
        idx = self.period_index(side)
        moves = (self.red_period_moves if side == "red" else self.black_period_moves) + 1
        period = tc.period(idx)
        state = self
        if period is not None and period.moves is not None and moves >= period.moves:
            nxt = tc.period(idx + 1)
            moves = 0
            idx += 1
            if nxt is not None:
                state = state.add(side, nxt.ms)  # 6.2: the next period's time on top of what is left
        if side == "red":
            return state._with(red_period=idx, red_period_moves=moves)
        return state._with(black_period=idx, black_period_moves=moves)

    def press(self, side: str, at: int) -> ClockState:
        """`side` pressed: its clock stops and the other side's starts (the device's behaviour)."""
        state = self.settle(at)
        return state._with(running=other(side), since=at)

    def pause(self, at: int) -> ClockState:
        return self.settle(at)._with(paused=True)

    def resume(self, at: int) -> ClockState:
        return self._with(paused=False, since=max(at, self.since))

    def stop(self, at: int) -> ClockState:
        return self.settle(at)._with(running=None)

    def add(self, side: str, delta_ms: int) -> ClockState:
        if side == "red":
            return self._with(red_ms=self.red_ms + delta_ms)
        return self._with(black_ms=self.black_ms + delta_ms)

    def with_device(self, red_ms: int | None, black_ms: int | None, at: int) -> ClockState:
        if red_ms is None and black_ms is None:
            return self
        return self._with(
            device_red_ms=self.device_red_ms if red_ms is None else red_ms,
            device_black_ms=self.device_black_ms if black_ms is None else black_ms,
            device_at=at,
        )

    def drift(self, at: int) -> int | None:
        """The largest difference between the device and the model at the device's last report (ms)."""
        if self.device_at is None:
            return None
        diffs = []
        for side, dev in (("red", self.device_red_ms), ("black", self.device_black_ms)):
            if dev is not None:
                diffs.append(abs(dev - self.remaining(side, self.device_at)))
        return max(diffs) if diffs else None

    def to_json(self, at: int) -> dict[str, Any]:
        red, black = self.remaining_both(at)
        out: dict[str, Any] = {
            "scheme": self.tc.scheme, "red_ms": red, "black_ms": black, "running": self.running,
            "paused": self.paused, "device_red_ms": self.device_red_ms, "device_black_ms": self.device_black_ms,
        }
        if self.tc.scheme == "moves_in_time":
            out["red_period"] = self.red_period
            out["black_period"] = self.black_period
            out["red_period_moves"] = self.red_period_moves
            out["black_period_moves"] = self.black_period_moves
        return out
