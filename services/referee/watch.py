"""Alerts before anything is ruled: a flag about to fall (4.1.6) and a board whose camera went quiet.

Pure, like the fold it serves: values in, values out, the time is the inputs' `occurred_at`. Two inputs feed it:
- `ClockCheck`: the referee service's own timer. The service reads from the fold's clock when the running side's
  remaining time reaches the flag-warning setting (`flag_check_due`) and, at that moment, records a ClockCheck
  with that time in the ledger like any input; the fold decides here (`on_input`): the same side still running
  and at or below the setting, not told yet in this time period -> AttentionNeeded `kind: flag`; anything else
  (a move came first, a pause, the flag already fell) -> nothing. One check per warning, never a periodic tick,
  and a replay folds the same check to the same output.
- `CameraQuiet`: vision's report that a board's camera has sent no frame for a while (`back` false) or that
  frames come again (`back` true) -> AttentionNeeded `kind: camera_quiet` once per silence, and a notice
  `kind: camera_back` when it ends (only where the silence was told).
The arbiter acknowledges an open alert with ArbiterDecision `action: overrule` naming it (`answer`): it leaves the
pending list; nothing is ruled, play goes on.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Protocol

from xqarb.events import Event
from xqarb.referee.clock import ClockState, TimeControl

# 4.1.6 / chapter 6: the running side's remaining time (ms) at or below which the arbiter is told that its flag is
# about to fall: a minute is time enough to walk to the board and watch the flag (21 / 22: the arbiter, not the
# players, calls it). The service's setting; each ClockCheck carries the value it was scheduled for (`warn_ms`),
# so a replay judges against the same one.
FLAG_WARNING_MS = 60_000
ACKNOWLEDGE = "overrule"  # ArbiterDecision.action that acknowledges a watch alert: play goes on, nothing is ruled


@dataclass(frozen=True, slots=True)
class FlagWarning:
    """A side told that its flag is about to fall, in one time period (6.2; one period in the other schemes)."""

    alert_id: str  # the AttentionNeeded's event id (an ArbiterDecision names it in `alert`)
    side: str
    period: int
    remaining_ms: int
    warn_ms: int
    article: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": "flag", "alert": self.alert_id, "side": self.side, "period": self.period,
                "remaining_ms": self.remaining_ms, "warn_ms": self.warn_ms, "article": self.article,
                "reason": self.reason}


@dataclass(frozen=True, slots=True)
class QuietSpell:
    """A silence of the board's camera that the arbiter was told of."""

    alert_id: str
    since: int  # µs: capture time of the last frame before it
    quiet_ms: int
    reason: str
    open: bool = True  # not yet acknowledged

    def to_json(self) -> dict[str, Any]:
        return {"kind": "camera_quiet", "alert": self.alert_id, "since": self.since, "quiet_ms": self.quiet_ms,
                "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Watch:
    """What the watches remember of one game."""

    warned: frozenset[tuple[str, int]] = frozenset()  # (side, period) already told: once each
    flags: tuple[FlagWarning, ...] = ()  # the flag warnings not yet acknowledged
    quiet: QuietSpell | None = None  # the camera's silence told and not yet ended


NO_WATCH = Watch()


class Game(Protocol):
    """What the watches read of a game's state (game.GameState)."""

    board_id: str
    clock: ClockState
    watch: Watch


# --------------------------------------------------------------------------------------------- the flag


def period_of(clock: ClockState, side: str) -> int:
    """The side's time period (6.2); 0 in the schemes with one period (6.1, 6.3, 6.4)."""
    return clock.period_index(side) if clock.tc.scheme == "moves_in_time" else 0


def flag_check_due(clock: ClockState, watch: Watch, last_at: int, warn_ms: int) -> tuple[int, str] | None:
    """When (µs, in the events' time) and for which side the next ClockCheck is due: the moment the running side's
    remaining time reaches `warn_ms`, or `last_at` where it already has. None while no clock runs, the clock is
    paused, the side was told in this period, or its time has run out (the fold rules the flag, 4.1.6)."""
    side = clock.running
    if side is None or clock.paused or (side, period_of(clock, side)) in watch.warned:
        return None
    left = clock.remaining(side, clock.since)
    if left <= 0:
        return None
    return max(clock.since + max(0, left - warn_ms) * 1000, last_at), side


def _clock_words(ms: int) -> str:
    s = max(0, ms) // 1000
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def time_control_words(tc: TimeControl, clock: ClockState, side: str) -> str:
    """The time control as an arbiter reads it, with the side's progress through a period of moves (6.2)."""
    base = tc.red_base_ms if side == "red" else tc.black_base_ms
    if tc.scheme == "increment":
        return f"{_clock_words(base)} + {tc.increment_ms // 1000} s a move (6.1)"
    if tc.scheme == "sudden_death":
        return f"{_clock_words(base)} for all moves (6.3)"
    index = clock.period_index(side)
    period = tc.period(index)
    if period is None or period.moves is None:
        return f"period {index + 1}: the rest of the game (6.2)"
    done = clock.red_period_moves if side == "red" else clock.black_period_moves
    return f"period {index + 1}: {period.moves} moves in {_clock_words(period.ms)}, {done} made (6.2)"


def _flag(game: Game, event: Event, alert_id: str, article: str) -> tuple[Watch, dict[str, Any] | None]:
    clock, watch, t = game.clock, game.watch, event.occurred_at
    side, warn_ms = event.data["side"], int(event.data["warn_ms"])
    if clock.running != side or clock.paused:
        return watch, None  # the side moved (or the arbiter paused the clock) before the check came due
    period = period_of(clock, side)
    left = clock.remaining(side, t)
    if (side, period) in watch.warned or not 0 < left <= warn_ms:
        return watch, None
    expiry = "before the period's moves are made" if clock.tc.scheme == "moves_in_time" else "before it moves"
    reason = (f"{side}'s flag is about to fall: {_clock_words(left)} left ({time_control_words(clock.tc, clock, side)}"
              f"); if its time runs out {expiry}, {side} loses on time ({article}). Watch the clock")
    warning = FlagWarning(alert_id, side, period, left, warn_ms, article, reason)
    flags = (*(f for f in watch.flags if f.side != side), warning)
    new = replace(watch, warned=watch.warned | {(side, period)}, flags=flags)
    return new, {"kind": "flag", "reason": reason, "side": side, "article": article}


# --------------------------------------------------------------------------------------------- the camera


def _at(us: int) -> str:
    return datetime.fromtimestamp(us / 1e6, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _camera(game: Game, event: Event, alert_id: str) -> tuple[Watch, dict[str, Any] | None]:
    watch, d = game.watch, event.data
    since, quiet_ms = int(d["since"]), int(d["quiet_ms"])
    if not d.get("back"):
        if watch.quiet is not None:
            return watch, None  # the silence already told
        reason = (f"board {game.board_id}: the camera has sent no frame since {_at(since)} (more than "
                  f"{quiet_ms / 1000:g} s): the referee sees no move there until frames come back; watch the board")
        return replace(watch, quiet=QuietSpell(alert_id, since, quiet_ms, reason)), {
            "kind": "camera_quiet", "reason": reason}
    spell = watch.quiet
    if spell is None:
        return watch, None  # frames back after a silence nobody was told of
    gap = max(0, event.occurred_at - spell.since) / 1e6
    reason = (f"board {game.board_id}: frames come again from {_at(event.occurred_at)} after {gap:.0f} s without "
              f"one (since {_at(spell.since)}): a move made meanwhile is read from the next still board")
    return replace(watch, quiet=None), {"kind": "camera_back", "reason": reason}


# --------------------------------------------------------------------------------------------- the fold's entry


WATCH_INPUTS = frozenset({"ClockCheck", "CameraQuiet"})


def on_input(game: Game, event: Event, alert_id: str, flag_article: str) -> tuple[Watch, dict[str, Any] | None]:
    """The watch after a ClockCheck or CameraQuiet, and the fields of the AttentionNeeded it raises (None: none).
    `alert_id`: the event id that AttentionNeeded will have; `flag_article`: the rule set's article for a flag."""
    if event.type == "ClockCheck":
        return _flag(game, event, alert_id, flag_article)
    return _camera(game, event, alert_id)


def holds(watch: Watch, alert_id: str) -> bool:
    """Whether `alert_id` is one of the watch's open alerts (an ArbiterDecision naming it answers it here)."""
    return any(f.alert_id == alert_id for f in watch.flags) or (
        watch.quiet is not None and watch.quiet.open and watch.quiet.alert_id == alert_id)


def answer(watch: Watch, alert_id: str, action: str) -> tuple[Watch, str | None]:
    """An arbiter's answer to an open watch alert: `overrule` acknowledges it (it leaves the pending list; a
    silence still gets its notice when frames come back). Another action: the watch unchanged and why."""
    if action != ACKNOWLEDGE:
        return watch, (f"ArbiterDecision {action} does not apply to alert {alert_id} (a flag or camera warning "
                       f"points to no ruling): {ACKNOWLEDGE} acknowledges it; not applied")
    flags = tuple(f for f in watch.flags if f.alert_id != alert_id)
    quiet = watch.quiet
    if quiet is not None and quiet.alert_id == alert_id:
        quiet = replace(quiet, open=False)
    return replace(watch, flags=flags, quiet=quiet), None


def pending(watch: Watch) -> list[dict[str, Any]]:
    """The open alerts as the game state's `pending` entries (the API, the review page's alert cards)."""
    out = [f.to_json() for f in watch.flags]
    if watch.quiet is not None and watch.quiet.open:
        out.append(watch.quiet.to_json())
    return out
