"""Facts and `evolve(state, fact) -> state`: the only way a game's state changes.

The decider (game.py) turns an input into facts (what happened, in the rules' terms) and outputs; `evolve` applies
one fact to the state and returns the next state, never changing the one it was given. A fact carries what was
decided (a foul with its article, a move with the clocks after it); `evolve` only puts it in its place, so
folding the facts of an input over the state before it gives the state after it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from xqarb.referee.clock import ClockState
from xqarb.referee.game_state import (
    Foul,
    GameState,
    Line,
    Misalignment,
    MoveRecord,
    RepetitionAlert,
    Result,
    Sides,
    SideState,
    Watch,
    but,
)
from xqarb.referee.recording import RecordingState
from xqarb.referee.rules import Move, Position
from xqarb.referee.touch import Touch

# --------------------------------------------------------------------------------------------- facts


@dataclass(frozen=True, slots=True)
class InputTaken:
    """The bookkeeping of one input: its time, the side fouled by it (for 8.2's waiver at the next input), the
    outputs it caused (they are numbered in the game)."""

    at: int
    fouled: str | None
    outputs: int


@dataclass(frozen=True, slots=True)
class OutputsNumbered:
    """Outputs about the game that took its output numbers without an input of its own fold."""

    outputs: int


@dataclass(frozen=True, slots=True)
class GameEnded:
    result: Result
    at: int  # the clock stops then


@dataclass(frozen=True, slots=True)
class FoulGiven:
    foul: Foul


@dataclass(frozen=True, slots=True)
class FoulWaived:
    index: int  # in `fouls`


@dataclass(frozen=True, slots=True)
class MovePlayed:
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


@dataclass(frozen=True, slots=True)
class MovesTakenBack:
    keep: int  # the plies that stand (5.8.2 / 5.8.3 / 5.10 corrections)


@dataclass(frozen=True, slots=True)
class PositionSet:
    """An arbiter's position that no move leads to: a new history starts."""

    position: Position


@dataclass(frozen=True, slots=True)
class Touched:
    side: str
    touch: Touch
    first: bool = False  # listed before the earlier touches (5.8.3: the piece of an illegal move)


@dataclass(frozen=True, slots=True)
class TouchesCleared:
    side: str


@dataclass(frozen=True, slots=True)
class AdjustAnnounced:
    side: str
    point: str


@dataclass(frozen=True, slots=True)
class Arrived:
    side: str


@dataclass(frozen=True, slots=True)
class SideMoved:
    """Whether the side's next press follows a move of its own (8.1.7)."""

    side: str
    moved: bool


@dataclass(frozen=True, slots=True)
class IllegalMoveCounted:
    side: str


@dataclass(frozen=True, slots=True)
class PressAfterMove:
    side: str
    clock: ClockState


@dataclass(frozen=True, slots=True)
class PressAwaitingMove:
    clock: ClockState
    pending: tuple[str, str, int]


@dataclass(frozen=True, slots=True)
class PressDropped:
    """A press never followed by a move, ruled on (`counted`, 8.1.7) or not (the board could not be followed)."""

    side: str
    counted: bool


@dataclass(frozen=True, slots=True)
class ClockChanged:
    clock: ClockState


@dataclass(frozen=True, slots=True)
class DrawOffered:
    side: str


@dataclass(frozen=True, slots=True)
class DrawRefused:
    offered_by: str


@dataclass(frozen=True, slots=True)
class FalseClaimMade:
    side: str
    stage: int


@dataclass(frozen=True, slots=True)
class RecordingChanged:
    recording: RecordingState


@dataclass(frozen=True, slots=True)
class BoardSeen:
    squares: str


@dataclass(frozen=True, slots=True)
class HandSeen:
    at: int


@dataclass(frozen=True, slots=True)
class BoardFollowed:
    """The still board shows the accepted position: no question about it is open."""


@dataclass(frozen=True, slots=True)
class BoardRestored:
    """An arbiter restored the board: no question about it is open, and the camera's last board is forgotten."""


@dataclass(frozen=True, slots=True)
class BoardUnexplained:
    reason: str
    side: str  # whose time it was


@dataclass(frozen=True, slots=True)
class MovesAmbiguous:
    moves: tuple[Move, ...]


@dataclass(frozen=True, slots=True)
class MisalignmentOpen:
    """A 5.10 question opened or moved on a stage (None: answered)."""

    misalignment: Misalignment | None


@dataclass(frozen=True, slots=True)
class MisalignmentDesignated:
    """The opponent designated the point (5.10): the question and the moves it left open are answered."""


@dataclass(frozen=True, slots=True)
class MisalignmentReported:
    points: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class MisalignmentsJudged:
    """The reports kept for the still board were judged."""


@dataclass(frozen=True, slots=True)
class PointsSettled:
    points: frozenset[str]


@dataclass(frozen=True, slots=True)
class Nudged:
    nudge: tuple[str, str, int, str]  # (side, point, at, event id)


@dataclass(frozen=True, slots=True)
class NudgesJudged:
    pass


@dataclass(frozen=True, slots=True)
class RepetitionCounted:
    pending: bool  # the position stands for the third time (待判局面)


@dataclass(frozen=True, slots=True)
class RepetitionAlerted:
    keys: frozenset[int]
    alert: RepetitionAlert


@dataclass(frozen=True, slots=True)
class RepetitionAlertChanged:
    alert: RepetitionAlert | None  # None: closed


@dataclass(frozen=True, slots=True)
class VaryOrdered:
    side: str
    at: int  # hist_moves' length when ordered
    forced: bool  # by the arbiter (26.4)


@dataclass(frozen=True, slots=True)
class LimitStretchBegun:
    stretch: int


@dataclass(frozen=True, slots=True)
class LimitNoticed:
    stretch: int
    level: int
    alert: str


@dataclass(frozen=True, slots=True)
class LimitAlertClosed:
    pass


Fact = Any  # one of the classes above


# --------------------------------------------------------------------------------------------- evolve


def _sides(s: GameState, side: str, **changes: Any) -> Sides:
    return s.sides.with_side(side, but(s.sides[side], **changes))


def _side(s: GameState, side: str, **changes: Any) -> GameState:
    return but(s, sides=_sides(s, side, **changes))


def _watch(s: GameState, **changes: Any) -> GameState:
    return but(s, watch=but(s.watch, **changes))


def _claims(s: GameState, **changes: Any) -> GameState:
    return but(s, claims=but(s.claims, **changes))


def _input_taken(s: GameState, f: InputTaken) -> GameState:
    # (every input ends with this: built field by field, without `but`'s copy of the fields into a dict)
    return GameState(s.setup, s.line, s.clock, s.sides, s.recording, s.fouls, s.watch, s.claims, s.result,
                     f.fouled, s.out_count + f.outputs, f.at if f.at > s.last_at else s.last_at)


def _outputs_numbered(s: GameState, f: OutputsNumbered) -> GameState:
    return but(s, out_count=s.out_count + f.outputs)


def _game_ended(s: GameState, f: GameEnded) -> GameState:
    claims = s.claims if s.claims.offer_pending is None else but(s.claims, offer_pending=None)
    return but(s, result=f.result, clock=s.clock.stop(f.at), claims=claims)


def _foul_given(s: GameState, f: FoulGiven) -> GameState:
    return but(s, fouls=(*s.fouls, f.foul))


def _foul_waived(s: GameState, f: FoulWaived) -> GameState:
    fouls = list(s.fouls)
    fouls[f.index] = replace(fouls[f.index], waived=True)
    return but(s, fouls=tuple(fouls))


def _new_position(s: GameState, line: Line, **changes: Any) -> GameState:
    """A new position on the board (a hand seen before it no longer counts), with any other `changes`."""
    return but(s, line=line, watch=but(s.watch, hand_seen_at=None), **changes)


def _move_played(s: GameState, f: MovePlayed) -> GameState:
    # Everything a move changes, in one copy of each part (this runs for every move of every game). The side's
    # touches and announced adjustments (5.1-5.6) end with its move.
    line = s.line
    line = Line(f.position, f.squares, (*line.moves, f.record), (*line.hist_positions, f.position),
                (*line.hist_moves, f.move))
    mover = s.sides[f.side]
    sides = s.sides.with_side(f.side, SideState((), frozenset(), mover.illegal, mover.presses, f.moved, True,
                                                mover.offers))
    claims = s.claims
    if claims.offer_pending != f.offer_pending or claims.last_offer != f.last_offer:
        claims = but(claims, offer_pending=f.offer_pending, last_offer=f.last_offer)
    w = s.watch
    watch = Watch(w.last_seen if f.seen is None else f.seen, None, None, w.attention_side, (), f.misaligned,
                  w.misaligned_seen, f.settled_points, w.nudges, f.press_pending)
    return but(s, line=line, clock=f.clock, sides=sides, claims=claims, watch=watch)


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
    touches = s.sides[f.side].touches
    return _side(s, f.side, touches=(f.touch, *touches) if f.first else (*touches, f.touch))


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
    return but(s, sides=_sides(s, f.side, moved=False), clock=f.clock)


def _press_awaiting_move(s: GameState, f: PressAwaitingMove) -> GameState:
    return but(s, clock=f.clock, watch=but(s.watch, press_pending=f.pending))


def _press_dropped(s: GameState, f: PressDropped) -> GameState:
    sides = _sides(s, f.side, presses=s.sides[f.side].presses + 1) if f.counted else s.sides
    return but(s, sides=sides, watch=but(s.watch, press_pending=None))


def _clock_changed(s: GameState, f: ClockChanged) -> GameState:
    return but(s, clock=f.clock)


def _draw_offered(s: GameState, f: DrawOffered) -> GameState:
    return but(s, sides=_sides(s, f.side, offers=s.sides[f.side].offers + 1),
               claims=but(s.claims, offer_pending=f.side, last_offer=(f.side, False)))


def _draw_refused(s: GameState, f: DrawRefused) -> GameState:
    return _claims(s, offer_pending=None, last_offer=(f.offered_by, True))


def _false_claim(s: GameState, f: FalseClaimMade) -> GameState:
    return _claims(s, false_claims=(*s.claims.false_claims, (f.side, f.stage)))


def _recording_changed(s: GameState, f: RecordingChanged) -> GameState:
    return but(s, recording=f.recording)


def _board_seen(s: GameState, f: BoardSeen) -> GameState:
    return _watch(s, last_seen=f.squares)


def _hand_seen(s: GameState, f: HandSeen) -> GameState:
    return _watch(s, hand_seen_at=f.at)


def _board_followed(s: GameState, f: BoardFollowed) -> GameState:
    return _watch(s, attention=None, ambiguous=())


def _board_restored(s: GameState, f: BoardRestored) -> GameState:
    return _watch(s, attention=None, ambiguous=(), last_seen=None)


def _board_unexplained(s: GameState, f: BoardUnexplained) -> GameState:
    return _watch(s, attention=f.reason, attention_side=f.side)


def _moves_ambiguous(s: GameState, f: MovesAmbiguous) -> GameState:
    return _watch(s, ambiguous=f.moves)


def _misalignment_open(s: GameState, f: MisalignmentOpen) -> GameState:
    return _watch(s, misaligned=f.misalignment)


def _misalignment_designated(s: GameState, f: MisalignmentDesignated) -> GameState:
    return _watch(s, misaligned=None, ambiguous=())


def _misalignment_reported(s: GameState, f: MisalignmentReported) -> GameState:
    return _watch(s, misaligned_seen=(*s.watch.misaligned_seen, f.points))


def _misalignments_judged(s: GameState, f: MisalignmentsJudged) -> GameState:
    return _watch(s, misaligned_seen=())


def _points_settled(s: GameState, f: PointsSettled) -> GameState:
    return _watch(s, settled_points=s.watch.settled_points | {f.points})


def _nudged(s: GameState, f: Nudged) -> GameState:
    return _watch(s, nudges=(*s.watch.nudges, f.nudge))


def _nudges_judged(s: GameState, f: NudgesJudged) -> GameState:
    return _watch(s, nudges=())


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


def _limit_closed(s: GameState, f: LimitAlertClosed) -> GameState:
    return _claims(s, limit_alert=None)


_EVOLVE: dict[type, Callable[[GameState, Any], GameState]] = {
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
}


def evolve(state: GameState, fact: Fact) -> GameState:
    """The state after one fact (a new value; `state` is unchanged)."""
    return _EVOLVE[type(fact)](state, fact)
