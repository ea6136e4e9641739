"""The game's state as values: `GameState` and its parts, each immutable.

The state is grouped by what changes together, so that applying a fact (game_evolve.py) copies only the part it
changes and the few references of the whole (`_replace`): `setup` (fixed when the game starts), `line` (the
position and the moves that led to it), `clock`, `sides` (one `SideState` per side: `sides["red"]`),
`recording`, `fouls`, `view` (what the camera showed that still waits for a ruling), `claims` (draw offers,
repetition and natural-limit questions) and the result. The names the state had before it was grouped
(`state.position`, `state.moves`, `state.offer_pending`, ...) still read the same values.

The state and the parts that change during play are named tuples, the values fixed once made (the setup, the
records of moves, fouls and results) frozen dataclasses: both refuse assignment. A new state is made for every
input, and a frozen dataclass's `__init__` sets each field through `object.__setattr__`, several times the cost of
building a tuple (measured: bench/referee_throughput.py, bench/RESULTS.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter
from typing import Any, NamedTuple

from xqarb.referee.clock import ClockState, other
from xqarb.referee.recording import RecordingState
from xqarb.referee.rules import Move, Position
from xqarb.referee.rules.limits import insufficient_material
from xqarb.referee.ruleset import RuleConfig
from xqarb.referee.touch import Obligation, Touch, obligation
from xqarb.referee.watch import NO_WATCH, Watch
from xqarb.referee.watch import pending as watch_pending

SIDES = ("red", "black")

# --------------------------------------------------------------------------------------------- records


@dataclass(frozen=True, slots=True)
class MoveRecord:
    ply: int
    side: str
    move: Move
    wxf: str
    chinese: str
    fen_after: str
    capture: str | None
    red_ms: int
    black_ms: int
    event_id: str

    def to_json(self) -> dict[str, Any]:
        return {
            "ply": self.ply, "side": self.side, "iccs": self.move.iccs, "wxf": self.wxf, "chinese": self.chinese,
            "fen_after": self.fen_after, "capture": self.capture,
            "red_ms": self.red_ms, "black_ms": self.black_ms,
        }


@dataclass(frozen=True, slots=True)
class Foul:
    side: str
    article: str
    ruleset: str
    ply: int
    message: str
    event_id: str
    waived: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"article": self.article, "ruleset": self.ruleset, "ply": self.ply, "message": self.message,
                "waived": self.waived}


@dataclass(frozen=True, slots=True)
class Result:
    result: str
    article: str
    ruleset: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"result": self.result, "article": self.article, "ruleset": self.ruleset, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Misalignment:
    """5.10: a piece standing between two points after a move."""

    points: tuple[str, ...]
    mover: str
    stage: str  # "fix": the mover may still fix it (before the clock press); "designate": the opponent designates

    def to_json(self) -> dict[str, Any]:
        who = self.mover if self.stage == "fix" else other(self.mover)
        return {"article": "5.10", "points": list(self.points), "stage": self.stage, "side": who}


@dataclass(frozen=True, slots=True)
class RepetitionAlert:
    """A repeating cycle found live and told to the arbiter (23.2), waiting for the arbiter to confirm or overrule
    the ruling it points to (`outcome`: loss, draw, must_vary or judgment, as the rules core's 棋例 rules it)."""

    alert_id: str  # the AttentionNeeded's event id (an ArbiterDecision names it in `alert`)
    ply: int
    outcome: str
    side: str | None
    result: str | None
    article: str
    patterns: tuple[tuple[str, str], ...]
    reason: str
    # The cycle's moves as named (28): (ply as in MoveMade, side, ICCS, term); the arbiter may rename one.
    terms: tuple[tuple[int, str, str, str], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"alert": self.alert_id, "ply": self.ply, "outcome": self.outcome, "side": self.side,
                "result": self.result, "article": self.article, "patterns": dict(self.patterns),
                "reason": self.reason,
                "moves": [{"ply": p, "side": side, "iccs": m, "term": t} for p, side, m, t in self.terms]}


# --------------------------------------------------------------------------------------------- sides


class SideState(NamedTuple):
    """What the rules count or remember of one side (its clock is in `ClockState`, its fouls in `fouls`)."""

    touches: tuple[Touch, ...] = ()  # touched this turn (5.1-5.5; 5.6 in the opponent's time)
    adjust: frozenset[str] = frozenset()  # points announced for adjusting this turn (5.6)
    illegal: int = 0  # illegal moves made (4.1.8, 8.1.8)
    presses: int = 0  # clock presses without a move (8.1.7)
    moved: bool = False  # moved (or tried to) since its last press
    arrived: bool = False  # shown to be at the board (20.1)
    offers: int = 0  # draw offers made (23.1, 8.1.9)


_NO_SIDE = SideState()


class Sides(NamedTuple):
    """One `SideState` per side, read as `sides["red"]` / `sides["black"]` (or `sides.red`).

    A named tuple, as the other parts that change in play: a side's change makes a new pair at tuple cost (a
    frozen dataclass's `__init__` costs several times more, and a move or a press changes a side)."""

    red: SideState = _NO_SIDE
    black: SideState = _NO_SIDE

    def __getitem__(self, side: str) -> SideState:  # type: ignore[override]  # by side's name, not by position
        return self.red if side == "red" else self.black

    def with_side(self, side: str, value: SideState) -> Sides:
        return Sides(value, self.black) if side == "red" else Sides(self.red, value)


# --------------------------------------------------------------------------------------------- the parts


@dataclass(frozen=True)
class GameSetup:
    """What the GameStarted fixed: never changes during the game."""

    game_id: str
    board_id: str
    cfg: RuleConfig
    red_player: str
    black_player: str
    recording_required: bool
    started_at: int
    start_fen: str


class Line(NamedTuple):
    """The accepted position and the moves that led to it."""

    position: Position
    squares: str
    moves: tuple[MoveRecord, ...]
    # History for 棋例 and the natural limit: hist_positions[i] is the position before hist_moves[i] (an arbiter
    # setting a position that no move leads to starts a new history).
    hist_positions: tuple[Position, ...]
    hist_moves: tuple[Move, ...]


class BoardView(NamedTuple):
    """What the camera showed that the referee has not yet settled."""

    last_seen: str | None = None
    hand_seen_at: int | None = None  # first hand, lift or placing seen since the position last changed
    attention: str | None = None
    attention_side: str | None = None  # whose time it was when the board changed unexplained
    ambiguous: tuple[Move, ...] = ()
    misaligned: Misalignment | None = None
    # Pieces reported between two points with the still board (one pair each), judged at its BoardStable.
    misaligned_seen: tuple[tuple[str, ...], ...] = ()
    # Pairs of points between which a piece may stand off-centre without a new question: its point was designated
    # (5.10), the opponent moved on without designating (the accepted position stands), or an arbiter was told
    # once of a displaced piece there. The camera keeps reporting such a piece; each pair is settled until a move
    # leaves or reaches one of its points.
    settled_points: frozenset[frozenset[str]] = frozenset()
    nudges: tuple[tuple[str, str, int, str], ...] = ()  # (side, point, at, event id), judged at the BoardStable
    press_pending: tuple[str, str, int] | None = None  # (side, event id, time) of a press not yet matched


class Claims(NamedTuple):
    """Draw offers and claims, and the repetition and natural-limit questions told to the arbiter."""

    offer_pending: str | None = None
    last_offer: tuple[str, bool] | None = None  # (side, refused)
    false_claims: tuple[tuple[str, int], ...] = ()  # (side, stage start) of false natural-limit claims
    vary_order: tuple[str, int] | None = None
    vary_forced: bool = False  # the arbiter ordered the vary (26.4): the next repetition loses whatever its moves
    repetition_pending: bool = False
    # Position keys of the cycles already told to the arbiter (each cycle once, 23.2), and the alert still open.
    repetition_alerted: frozenset[int] = frozenset()
    repetition_alert: RepetitionAlert | None = None
    # The natural-limit notices given in the current stretch without a capture: (the ply the stretch began at,
    # 0 none, 1 coming due, 2 reached), and the notice still open (its AttentionNeeded's event id).
    limit_noticed: tuple[int, int] = (0, 0)
    limit_alert: str | None = None


_NO_VIEW = BoardView()
_NO_CLAIMS = Claims()
_NO_SIDES = Sides()


def _pair(red: Any, black: Any) -> dict[str, Any]:
    return {"red": red, "black": black}


def _forward(path: str) -> Any:
    """A read-only name for a value inside one of the parts (`state.position` is `state.line.position`)."""
    return property(attrgetter(path))


_NO_RECORDING = RecordingState()


class GameState(NamedTuple):
    """A game's state: immutable (a tuple of immutable parts; `_replace` makes a changed copy)."""

    setup: GameSetup
    line: Line
    clock: ClockState
    sides: Sides = _NO_SIDES
    recording: RecordingState = _NO_RECORDING
    fouls: tuple[Foul, ...] = ()
    view: BoardView = _NO_VIEW
    claims: Claims = _NO_CLAIMS
    watch: Watch = NO_WATCH  # a flag about to fall, a camera gone quiet (watch.py)
    result: Result | None = None
    foul_just_given: str | None = None
    out_count: int = 0
    last_at: int = 0

    game_id = _forward("setup.game_id")
    board_id = _forward("setup.board_id")
    cfg = _forward("setup.cfg")
    red_player = _forward("setup.red_player")
    black_player = _forward("setup.black_player")
    recording_required = _forward("setup.recording_required")
    started_at = _forward("setup.started_at")
    start_fen = _forward("setup.start_fen")
    position = _forward("line.position")
    squares = _forward("line.squares")
    moves = _forward("line.moves")
    hist_positions = _forward("line.hist_positions")
    hist_moves = _forward("line.hist_moves")
    last_seen = _forward("view.last_seen")
    hand_seen_at = _forward("view.hand_seen_at")
    attention = _forward("view.attention")
    attention_side = _forward("view.attention_side")
    ambiguous = _forward("view.ambiguous")
    misaligned = _forward("view.misaligned")
    misaligned_seen = _forward("view.misaligned_seen")
    settled_points = _forward("view.settled_points")
    nudges = _forward("view.nudges")
    press_pending = _forward("view.press_pending")
    offer_pending = _forward("claims.offer_pending")
    last_offer = _forward("claims.last_offer")
    false_claims = _forward("claims.false_claims")
    vary_order = _forward("claims.vary_order")
    vary_forced = _forward("claims.vary_forced")
    repetition_pending = _forward("claims.repetition_pending")
    repetition_alerted = _forward("claims.repetition_alerted")
    repetition_alert = _forward("claims.repetition_alert")
    limit_noticed = _forward("claims.limit_noticed")
    limit_alert = _forward("claims.limit_alert")

    # ---------------------------------------------------------------- reading
    def touches(self, side: str) -> tuple[Touch, ...]:
        return self.sides[side].touches

    def adjust(self, side: str) -> frozenset[str]:
        return self.sides[side].adjust

    def active_fouls(self, side: str) -> list[Foul]:
        return [f for f in self.fouls if f.side == side and not f.waived]

    @property
    def legal(self) -> tuple[Move, ...]:
        """The side to move's legal moves, listed when asked (the position keeps them once listed)."""
        return tuple(self.line.position.legal_moves())

    def obligation(self) -> Obligation | None:
        return obligation(self.line.position, self.touches(self.line.position.side))

    @property
    def ply(self) -> int:
        return len(self.line.moves)

    def deadline(self) -> int | None:
        """When (µs) the running side's time runs out (4.1.6) or its late-arrival limit passes (4.1.7), if nothing
        happens before: the fold rules on a flag at the first input after it, so a service that wants the flag
        ruled on time feeds an input at that moment. None when no clock runs or a result stands."""
        c = self.clock
        if self.result is not None or c.running is None or c.paused:
            return None
        flag = c.since + max(0, c.remaining(c.running, c.since)) * 1000
        if not self.sides[c.running].arrived:
            flag = min(flag, self.setup.started_at + c.tc.late_forfeit_ms * 1000 + 1)
        return flag

    def _pending_json(self) -> list[dict[str, Any]]:
        """What waits for a player or the arbiter, for `to_json`."""
        side = self.position.side
        pending: list[dict[str, Any]] = []
        ob = self.obligation()
        if ob is not None:
            pending.append({"kind": "touch", "side": side, **ob.to_json()})
        other_side = other(side)
        if self.touches(other_side):
            pending.append({"kind": "touch", "side": other_side, "article": "5.6",
                            "text": "touched in the opponent's time: applies at its next move",
                            "points": [t.point for t in self.touches(other_side)]})
        w, c = self.view, self.claims
        if w.misaligned is not None:
            pending.append({"kind": "designation", **w.misaligned.to_json()})
        if w.ambiguous:
            pending.append({"kind": "ambiguous", "moves": [m.iccs for m in w.ambiguous]})
        if w.attention is not None:
            pending.append({"kind": "attention", "reason": w.attention})
        if insufficient_material(self.position):
            pending.append({"kind": "material", "article": self.cfg.article("draw_material"),
                            "text": "neither side has a piece that can attack: a draw for the arbiter to confirm"})
        if c.repetition_pending or c.repetition_alert is not None:
            rep: dict[str, Any] = {"kind": "repetition", "text": "the position has come round three times (待判局面): "
                                                                 "a ruling may be asked"}
            if c.repetition_alert is not None:
                rep["alert"] = c.repetition_alert.to_json()
            pending.append(rep)
        if c.limit_alert is not None:
            pending.append({"kind": "natural_limit", "alert": c.limit_alert, "reached": c.limit_noticed[1] >= 2,
                            "article": self.cfg.article("draw_natural")})
        if c.offer_pending is not None:
            pending.append({"kind": "draw_offer", "side": c.offer_pending})
        if self.press_pending is not None:
            pending.append({"kind": "press_without_move", "side": self.press_pending[0], "article": "8.1.7"})
        if self.result is None:
            pending.extend(watch_pending(self.watch))
        return pending

    def to_json(self) -> dict[str, Any]:
        """The state for the API and the web pages (also GET /api/games/<id>/state?seq=N)."""
        at = self.last_at
        setup, red, black = self.setup, self.sides.red, self.sides.black
        return {
            "game_id": setup.game_id,
            "board_id": setup.board_id,
            "red_player": setup.red_player,
            "black_player": setup.black_player,
            "rules": setup.cfg.to_json(),
            "recording_required": setup.recording_required,
            "start_fen": setup.start_fen,
            "fen": self.position.fen(),
            "side_to_move": self.position.side,
            "ply": self.ply,
            "moves": [m.to_json() for m in self.moves],
            "clock": self.clock.to_json(at),
            "red_ms": self.clock.remaining("red", at),
            "black_ms": self.clock.remaining("black", at),
            "fouls": _pair([f.to_json() for f in self.fouls if f.side == "red"],
                           [f.to_json() for f in self.fouls if f.side == "black"]),
            "illegal_moves": _pair(red.illegal, black.illegal),
            "presses_without_move": _pair(red.presses, black.presses),
            "draw_offers": _pair(red.offers, black.offers),
            "recording": self.recording.to_json(),
            "pending": self._pending_json(),
            "result": None if self.result is None else self.result.to_json(),
            "at": at,
        }
