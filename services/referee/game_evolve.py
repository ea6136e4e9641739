"""Facts and `evolve(state, fact) -> state`: the only way a game's state changes.

The decider (game.py) turns an input into facts (what happened, in the rules' terms) and outputs; `evolve` applies
one fact to the state and returns the next state, never changing the one it was given. A fact carries what was
decided (a foul with its article, a move with the clocks after it); `evolve` only puts it in its place, so
folding the facts of an input over the state before it gives the state after it.

Facts are named tuples: immutable, and cheap to make (every input makes at least one; a frozen dataclass costs
several times more to build). A fact is told by its class (`evolve` dispatches on it), never by comparing it with
a fact of another class.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, NamedTuple

from xqarb.referee.clock import ClockState
from xqarb.referee.game_state import (
    BoardView,
    Claims,
    Foul,
    GameState,
    Line,
    Misalignment,
    MoveRecord,
    RepetitionAlert,
    Result,
    Sides,
    SideState,
)
from xqarb.referee.recording import RecordingState
from xqarb.referee.rules import Move, Position
from xqarb.referee.touch import Touch
from xqarb.referee.watch import Watch

_NOTHING: frozenset[str] = frozenset()

# --------------------------------------------------------------------------------------------- facts


class InputTaken(NamedTuple):
    """The bookkeeping of one input: its time, the side fouled by it (for 8.2's waiver at the next input), the
    outputs it caused (they are numbered in the game)."""

    at: int
    fouled: str | None
    outputs: int


class OutputsNumbered(NamedTuple):
    """Outputs about the game that took its output numbers without an input of its own fold."""

    outputs: int


class GameEnded(NamedTuple):
    result: Result
    at: int  # the clock stops then


class FoulGiven(NamedTuple):
    foul: Foul


class FoulWaived(NamedTuple):
    index: int  # in `fouls`


class MovePlayed(NamedTuple):
    """A move accepted: the position after it, its record, and what it settles (an offer refused, a question of
    5.10 lapsed, a press matched)."""

    side: str
    move: Move
    record: MoveRecord
    position: Position
    squares: str
    clock: ClockState
    press_pending: tuple[str, str, int] | None
    moved: bool  # False: the mover's press was made already (before the camera saw the move)
    offer_pending: str | None
    last_offer: tuple[str, bool] | None
    misaligned: Misalignment | None
    settled_points: frozenset[frozenset[str]]
    seen: str | None = None  # the camera's still board that showed the move (None: not from a still board)


class MovesTakenBack(NamedTuple):
    keep: int  # the plies that stand (5.8.2 / 5.8.3 / 5.10 corrections)


class PositionSet(NamedTuple):
    """An arbiter's position that no move leads to: a new history starts."""

    position: Position


class Touched(NamedTuple):
    side: str
    touch: Touch
    first: bool = False  # listed before the earlier touches (5.8.3: the piece of an illegal move)


class TouchesCleared(NamedTuple):
    side: str


class AdjustAnnounced(NamedTuple):
    side: str
    point: str


class Arrived(NamedTuple):
    side: str


class SideMoved(NamedTuple):
    """Whether the side's next press follows a move of its own (8.1.7)."""

    side: str
    moved: bool


class IllegalMoveCounted(NamedTuple):
    side: str


class PressAfterMove(NamedTuple):
    side: str
    clock: ClockState


class PressAwaitingMove(NamedTuple):
    clock: ClockState
    pending: tuple[str, str, int]


class PressDropped(NamedTuple):
    """A press never followed by a move, ruled on (`counted`, 8.1.7) or not (the board could not be followed)."""

    side: str
    counted: bool


class ClockChanged(NamedTuple):
    clock: ClockState


class DrawOffered(NamedTuple):
    side: str


class DrawRefused(NamedTuple):
    offered_by: str


class FalseClaimMade(NamedTuple):
    side: str
    stage: int


class RecordingChanged(NamedTuple):
    recording: RecordingState


class BoardSeen(NamedTuple):
    squares: str


class HandSeen(NamedTuple):
    at: int


class BoardFollowed(NamedTuple):
    """The still board shows the accepted position: no question about it is open."""


class BoardRestored(NamedTuple):
    """An arbiter restored the board: no question about it is open, and the camera's last board is forgotten."""


class BoardUnexplained(NamedTuple):
    reason: str
    side: str  # whose time it was


class MovesAmbiguous(NamedTuple):
    moves: tuple[Move, ...]


class MisalignmentOpen(NamedTuple):
    """A 5.10 question opened or moved on a stage (None: answered)."""

    misalignment: Misalignment | None


class MisalignmentDesignated(NamedTuple):
    """The opponent designated the point (5.10): the question and the moves it left open are answered."""


class MisalignmentReported(NamedTuple):
    points: tuple[str, ...]


class MisalignmentsJudged(NamedTuple):
    """The reports kept for the still board were judged."""


class PointsSettled(NamedTuple):
    points: frozenset[str]


class Nudged(NamedTuple):
    nudge: tuple[str, str, int, str]  # (side, point, at, event id)


class NudgesJudged(NamedTuple):
    """The nudges kept for the still board were judged."""


class RepetitionCounted(NamedTuple):
    pending: bool  # the position stands for the third time (待判局面)


class RepetitionAlerted(NamedTuple):
    keys: frozenset[int]
    alert: RepetitionAlert


class RepetitionAlertChanged(NamedTuple):
    alert: RepetitionAlert | None  # None: closed


class VaryOrdered(NamedTuple):
    side: str
    at: int  # hist_moves' length when ordered
    forced: bool  # by the arbiter (26.4)


class LimitStretchBegun(NamedTuple):
    stretch: int


class LimitNoticed(NamedTuple):
    stretch: int
    level: int
    alert: str


class WatchChanged(NamedTuple):
    """The watches' state changed (a flag about to fall, a camera gone quiet: watch.py decides)."""

    watch: Watch


class LimitAlertClosed(NamedTuple):
    """The natural-limit notice was answered."""


Fact = Any  # one of the classes above


# --------------------------------------------------------------------------------------------- evolve


# The state's and its parts' copies on the paths every input takes are built positionally from the tuple they
# copy, by `tuple.__new__` itself: a named tuple's class call runs its `__new__` (a Python function) first, and
# `_replace` a pass over every field by name, each several times the cost of the copy (bench/RESULTS.md). The
# positions are GameState's fields in order: setup 0, line 1, clock 2, sides 3, recording 4, fouls 5, view 6,
# claims 7, watch 8, result 9, foul_just_given 10, out_count 11, last_at 12.
_new = tuple.__new__
_POSITIONS = {  # the fields those copies read or write by position (a field added or moved must be placed there)
    GameState: ("setup", "line", "clock", "sides", "recording", "fouls", "view", "claims", "watch", "result",
                "foul_just_given", "out_count", "last_at"),
    Line: ("position", "squares", "moves", "hist_positions", "hist_moves"),
    SideState: ("touches", "adjust", "illegal", "presses", "moved", "arrived", "offers"),
    BoardView: ("last_seen", "hand_seen_at", "attention", "attention_side", "ambiguous", "misaligned",
                "misaligned_seen", "settled_points", "nudges", "press_pending"),
    Sides: ("red", "black"),
    Claims: ("offer_pending", "last_offer", "false_claims", "vary_order", "vary_forced", "repetition_pending",
             "repetition_alerted", "repetition_alert", "limit_noticed", "limit_alert"),
}
for _kind, _fields in _POSITIONS.items():
    if _kind._fields != _fields:
        raise TypeError(f"{_kind.__name__}'s fields are {_kind._fields}; game_evolve.py copies it positionally as "
                        f"{_fields}: update those copies")


def _parts(s: GameState, *, line: Line | None = None, clock: ClockState | None = None, sides: Sides | None = None,
           view: BoardView | None = None, claims: Claims | None = None) -> GameState:
    """The state with some of the parts that change in play replaced (None: kept; none of them is ever None)."""
    return _new(GameState, (s[0], s[1] if line is None else line, s[2] if clock is None else clock,
                            s[3] if sides is None else sides, s[4], s[5], s[6] if view is None else view,
                            s[7] if claims is None else claims, *s[8:]))


def _with_side(sides: Sides, side: str, value: SideState) -> Sides:
    red, black = sides  # (a Sides is read by side's name: `sides[0]` is not red)
    return _new(Sides, (value, black) if side == "red" else (red, value))


def _with_view(s: GameState, view: BoardView) -> GameState:
    return _new(GameState, (*s[:6], view, *s[7:]))


def _sides(s: GameState, side: str, **changes: Any) -> Sides:
    return _with_side(s.sides, side, s.sides[side]._replace(**changes))


def _side(s: GameState, side: str, **changes: Any) -> GameState:
    return _parts(s, sides=_sides(s, side, **changes))


def _view(s: GameState, **changes: Any) -> GameState:
    return _with_view(s, s.view._replace(**changes))


def _claims(s: GameState, **changes: Any) -> GameState:
    return _parts(s, claims=s.claims._replace(**changes))


def input_taken(s: GameState, at: int, fouled: str | None, outputs: int) -> GameState:
    """InputTaken's change, from its fields (every input ends with it: the decider's `apply` calls this without
    building the fact, which only `decide` returns)."""
    last_at = s[12]
    return _new(GameState, (*s[:10], fouled, s[11] + outputs, at if at > last_at else last_at))


def _input_taken(s: GameState, f: InputTaken) -> GameState:
    return input_taken(s, f[0], f[1], f[2])


def _outputs_numbered(s: GameState, f: OutputsNumbered) -> GameState:
    return s._replace(out_count=s.out_count + f.outputs)


def _game_ended(s: GameState, f: GameEnded) -> GameState:
    claims = s.claims if s.claims.offer_pending is None else s.claims._replace(offer_pending=None)
    return s._replace(result=f.result, clock=s.clock.stop(f.at), claims=claims)


def _foul_given(s: GameState, f: FoulGiven) -> GameState:
    return s._replace(fouls=(*s.fouls, f.foul))


def _foul_waived(s: GameState, f: FoulWaived) -> GameState:
    fouls = list(s.fouls)
    fouls[f.index] = replace(fouls[f.index], waived=True)
    return s._replace(fouls=tuple(fouls))


def _new_position(s: GameState, line: Line, **changes: Any) -> GameState:
    """A new position on the board (a hand seen before it no longer counts), with any other `changes`."""
    return s._replace(line=line, view=s.view._replace(hand_seen_at=None), **changes)


def _move_played(s: GameState, f: MovePlayed) -> GameState:
    # Everything a move changes, in one copy of each part (this runs for every move of every game). The side's
    # touches and announced adjustments (5.1-5.6) end with its move.
    line = s[1]
    position = f.position
    line = _new(Line, (position, f.squares, (*line[2], f.record), (*line[3], position), (*line[4], f.move)))
    sides = s[3]
    m = sides[f.side]
    sides = _with_side(sides, f.side, _new(SideState, ((), _NOTHING, m[2], m[3], f.moved, True, m[6])))
    claims = s[7]
    if claims[0] != f.offer_pending or claims[1] != f.last_offer:
        claims = claims._replace(offer_pending=f.offer_pending, last_offer=f.last_offer)
    w = s[6]
    view = _new(BoardView, (w[0] if f.seen is None else f.seen, None, None, w[3], (), f.misaligned, w[6],
                            f.settled_points, w[8], f.press_pending))
    return _new(GameState, (s[0], line, f.clock, sides, s[4], s[5], view, claims, *s[8:]))


def _moves_taken_back(s: GameState, f: MovesTakenBack) -> GameState:
    n = f.keep
    line = s.line
    cut = len(line.moves) - n
    hist_keep = max(0, len(line.hist_moves) - cut)
    rec = s.recording
    rec = replace(rec, red_valid=frozenset(p for p in rec.red_valid if p <= n),
                  black_valid=frozenset(p for p in rec.black_valid if p <= n))
    positions = line.hist_positions[: hist_keep + 1]
    position = positions[-1]
    new_line = Line(position, position.squares(), line.moves[:n], positions, line.hist_moves[:hist_keep])
    return _new_position(s, new_line, recording=rec)


def _position_set(s: GameState, f: PositionSet) -> GameState:
    p = f.position
    return _new_position(s, Line(p, p.squares(), s.line.moves, (p,), ()))


def _touched(s: GameState, f: Touched) -> GameState:
    sides = s[3]
    m = sides[f.side]
    touches = (f.touch, *m[0]) if f.first else (*m[0], f.touch)
    return _new(GameState, (*s[:3], _with_side(sides, f.side, _new(SideState, (touches, *m[1:]))), *s[4:]))


def _touches_cleared(s: GameState, f: TouchesCleared) -> GameState:
    return _side(s, f.side, touches=())


def _adjust_announced(s: GameState, f: AdjustAnnounced) -> GameState:
    return _side(s, f.side, adjust=s.sides[f.side].adjust | {f.point})


def _arrived(s: GameState, f: Arrived) -> GameState:
    return _side(s, f.side, arrived=True)


def _side_moved(s: GameState, f: SideMoved) -> GameState:
    return _side(s, f.side, moved=f.moved)


def _illegal_counted(s: GameState, f: IllegalMoveCounted) -> GameState:
    return _side(s, f.side, illegal=s.sides[f.side].illegal + 1)


def _press_after_move(s: GameState, f: PressAfterMove) -> GameState:
    sides = s[3]  # (one press per move)
    m = sides[f.side]
    mover = m if not m[4] else _new(SideState, (*m[:4], False, *m[5:]))
    return _new(GameState, (s[0], s[1], f.clock, _with_side(sides, f.side, mover), *s[4:]))


def _press_awaiting_move(s: GameState, f: PressAwaitingMove) -> GameState:
    return _parts(s, clock=f.clock, view=s.view._replace(press_pending=f.pending))


def _press_dropped(s: GameState, f: PressDropped) -> GameState:
    sides = _sides(s, f.side, presses=s.sides[f.side].presses + 1) if f.counted else s.sides
    return s._replace(sides=sides, view=s.view._replace(press_pending=None))


def _clock_changed(s: GameState, f: ClockChanged) -> GameState:
    return _parts(s, clock=f.clock)


def _draw_offered(s: GameState, f: DrawOffered) -> GameState:
    return s._replace(sides=_sides(s, f.side, offers=s.sides[f.side].offers + 1),
                      claims=s.claims._replace(offer_pending=f.side, last_offer=(f.side, False)))


def _draw_refused(s: GameState, f: DrawRefused) -> GameState:
    return _claims(s, offer_pending=None, last_offer=(f.offered_by, True))


def _false_claim(s: GameState, f: FalseClaimMade) -> GameState:
    return _claims(s, false_claims=(*s.claims.false_claims, (f.side, f.stage)))


def _recording_changed(s: GameState, f: RecordingChanged) -> GameState:
    return s._replace(recording=f.recording)


def _board_seen(s: GameState, f: BoardSeen) -> GameState:
    return _view(s, last_seen=f.squares)


def _hand_seen(s: GameState, f: HandSeen) -> GameState:
    v = s[6]  # (one per move)
    return _with_view(s, _new(BoardView, (v[0], f.at, *v[2:])))


def _board_followed(s: GameState, f: BoardFollowed) -> GameState:
    return _view(s, attention=None, ambiguous=())


def _board_restored(s: GameState, f: BoardRestored) -> GameState:
    return _view(s, attention=None, ambiguous=(), last_seen=None)


def _board_unexplained(s: GameState, f: BoardUnexplained) -> GameState:
    return _view(s, attention=f.reason, attention_side=f.side)


def _moves_ambiguous(s: GameState, f: MovesAmbiguous) -> GameState:
    return _view(s, ambiguous=f.moves)


def _misalignment_open(s: GameState, f: MisalignmentOpen) -> GameState:
    return _view(s, misaligned=f.misalignment)


def _misalignment_designated(s: GameState, f: MisalignmentDesignated) -> GameState:
    return _view(s, misaligned=None, ambiguous=())


def _misalignment_reported(s: GameState, f: MisalignmentReported) -> GameState:
    return _view(s, misaligned_seen=(*s.view.misaligned_seen, f.points))


def _misalignments_judged(s: GameState, f: MisalignmentsJudged) -> GameState:
    return _view(s, misaligned_seen=())


def _points_settled(s: GameState, f: PointsSettled) -> GameState:
    return _view(s, settled_points=s.view.settled_points | {f.points})


def _nudged(s: GameState, f: Nudged) -> GameState:
    return _view(s, nudges=(*s.view.nudges, f.nudge))


def _nudges_judged(s: GameState, f: NudgesJudged) -> GameState:
    return _view(s, nudges=())


def _repetition_counted(s: GameState, f: RepetitionCounted) -> GameState:
    return _claims(s, repetition_pending=f.pending)


def _repetition_alerted(s: GameState, f: RepetitionAlerted) -> GameState:
    return _claims(s, repetition_alerted=s.claims.repetition_alerted | f.keys, repetition_alert=f.alert)


def _repetition_alert_changed(s: GameState, f: RepetitionAlertChanged) -> GameState:
    return _claims(s, repetition_alert=f.alert)


def _vary_ordered(s: GameState, f: VaryOrdered) -> GameState:
    return _claims(s, vary_order=(f.side, f.at), vary_forced=f.forced)


def _limit_stretch(s: GameState, f: LimitStretchBegun) -> GameState:
    return _claims(s, limit_noticed=(f.stretch, 0), limit_alert=None)


def _limit_noticed(s: GameState, f: LimitNoticed) -> GameState:
    return _claims(s, limit_noticed=(f.stretch, f.level), limit_alert=f.alert)


def _watch_changed(s: GameState, f: WatchChanged) -> GameState:
    return s._replace(watch=f.watch)


def _limit_closed(s: GameState, f: LimitAlertClosed) -> GameState:
    return _claims(s, limit_alert=None)


# How each kind of fact changes the state (`evolve`; the decider reads it directly in its loop).
EVOLVE: dict[type, Callable[[GameState, Any], GameState]] = {
    InputTaken: _input_taken,
    OutputsNumbered: _outputs_numbered,
    GameEnded: _game_ended,
    FoulGiven: _foul_given,
    FoulWaived: _foul_waived,
    MovePlayed: _move_played,
    MovesTakenBack: _moves_taken_back,
    PositionSet: _position_set,
    Touched: _touched,
    TouchesCleared: _touches_cleared,
    AdjustAnnounced: _adjust_announced,
    Arrived: _arrived,
    SideMoved: _side_moved,
    IllegalMoveCounted: _illegal_counted,
    PressAfterMove: _press_after_move,
    PressAwaitingMove: _press_awaiting_move,
    PressDropped: _press_dropped,
    ClockChanged: _clock_changed,
    DrawOffered: _draw_offered,
    DrawRefused: _draw_refused,
    FalseClaimMade: _false_claim,
    RecordingChanged: _recording_changed,
    BoardSeen: _board_seen,
    HandSeen: _hand_seen,
    BoardFollowed: _board_followed,
    BoardRestored: _board_restored,
    BoardUnexplained: _board_unexplained,
    MovesAmbiguous: _moves_ambiguous,
    MisalignmentOpen: _misalignment_open,
    MisalignmentDesignated: _misalignment_designated,
    MisalignmentReported: _misalignment_reported,
    MisalignmentsJudged: _misalignments_judged,
    PointsSettled: _points_settled,
    Nudged: _nudged,
    NudgesJudged: _nudges_judged,
    RepetitionCounted: _repetition_counted,
    RepetitionAlerted: _repetition_alerted,
    RepetitionAlertChanged: _repetition_alert_changed,
    VaryOrdered: _vary_ordered,
    LimitStretchBegun: _limit_stretch,
    LimitNoticed: _limit_noticed,
    LimitAlertClosed: _limit_closed,
    WatchChanged: _watch_changed,
}


def evolve(state: GameState, fact: Fact) -> GameState:
    """The state after one fact (a new value; `state` is unchanged)."""
    return EVOLVE[type(fact)](state, fact)
