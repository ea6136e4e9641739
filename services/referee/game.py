"""The game as a decider: `decide(state, event)` turns an input into facts and outputs, `evolve(state, fact)`
applies one fact (game_evolve.py), and `apply(state, event)` is both: the next state and the outputs an input
causes.

`start(event)` turns a GameStarted into the first state (game_state.py: `GameState`, immutable, with one
`SideState` per side in `state.sides[side]`). The outputs (`Out`: MoveMade, Ruling, GameEnded, AttentionNeeded)
each name their article and rule set. Everything the rules say a machine can see is here; the articles and counts
come from the game's `RuleConfig` (rule set, rapid play-off, level), never from one edition. No I/O, no clock
reads, no randomness: the time is the events' `occurred_at`. Once a GameEnded stands nothing more is decided
(22.5): the dispatcher (`_decided`) is the one place that says so.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from xqarb.events import Event
from xqarb.referee import watch as watch_mod
from xqarb.referee.clock import ClockState, TimeControl, TimeControlError, other
from xqarb.referee.game_evolve import (
    EVOLVE,
    AdjustAnnounced,
    Arrived,
    BoardFollowed,
    BoardRestored,
    BoardSeen,
    BoardUnexplained,
    ClockChanged,
    DrawOffered,
    DrawRefused,
    Fact,
    FalseClaimMade,
    FoulGiven,
    FoulWaived,
    GameEnded,
    HandSeen,
    IllegalMoveCounted,
    InputTaken,
    LimitAlertClosed,
    LimitNoticed,
    LimitStretchBegun,
    MisalignmentDesignated,
    MisalignmentOpen,
    MisalignmentReported,
    MisalignmentsJudged,
    MovePlayed,
    MovesAmbiguous,
    MovesTakenBack,
    Nudged,
    NudgesJudged,
    OutputsNumbered,
    PointsSettled,
    PositionSet,
    PressAfterMove,
    PressAwaitingMove,
    PressDropped,
    RecordingChanged,
    RepetitionAlertChanged,
    RepetitionAlerted,
    RepetitionCounted,
    SideMoved,
    Touched,
    TouchesCleared,
    VaryOrdered,
    WatchChanged,
    evolve,
    input_taken,
)
from xqarb.referee.game_state import (
    SIDES,
    BoardView,
    Foul,
    GameSetup,
    GameState,
    Line,
    Misalignment,
    MoveRecord,
    RepetitionAlert,
    Result,
    Sides,
    SideState,
)
from xqarb.referee.inference import (
    SquaresError,
    changes_of,
    check_squares,
    fen_of,
    infer,
    moves_between,
    squares_after,
)
from xqarb.referee.outputs import Out, output_id
from xqarb.referee.recording import (
    add_entry,
    check_waiting,
    excuse,
    fouls_due,
    missing,
    with_fouls,
)
from xqarb.referee.rules import START_FEN, FenError, IllegalMove, Move, Position, wxf_and_chinese
from xqarb.referee.rules.limits import HistoryError, natural_limit_count
from xqarb.referee.rules.repetition import (
    RepetitionVerdict,
    alert_words,
    find_cycle,
    judge_repetition,
    pattern_of,
    repeated_after_order,
    ruling_article,
    ruling_for_terms,
)
from xqarb.referee.ruleset import RuleConfig, RuleConfigError
from xqarb.referee.touch import Touch, touch_foul, unmet_obligation
from xqarb.referee.watch import WATCH_INPUTS

__all__ = [  # the game's public names (the values live in game_state.py, the facts in game_evolve.py)
    "END_OF_INPUT", "NATURAL_LIMIT_NOTICE_ROUNDS", "RESULTS", "SIDES", "Fact", "Foul", "GameStartError", "GameState",
    "Misalignment", "MoveRecord", "RepetitionAlert", "Result", "SideState", "Sides", "apply", "decide", "evolve",
    "finish", "loss_result", "start",
]

RESULTS = ("1-0", "0-1", "1/2-1/2")
RESTORE_WINDOW_PLIES = 10  # 5.8.2 / 5.8.3: errors found within five rounds
# 23.3: the arbiter counts the rounds when the natural limit is claimed; told this many rounds before the limit
# falls due (and again when it has), the arbiter can be at the board to count (4.2.4, 自然限着).
NATURAL_LIMIT_NOTICE_ROUNDS = 5


class GameStartError(ValueError):
    """A GameStarted that cannot start a game (unknown rule set, bad time control or start position)."""


def loss_result(loser: str) -> str:
    return "0-1" if loser == "red" else "1-0"


# --------------------------------------------------------------------------------------------- starting


def start(event: Event) -> GameState:
    """The state a GameStarted begins; GameStartError for a configuration that cannot be played."""
    d = event.data
    try:
        cfg = RuleConfig.make(d.get("ruleset") or "cxa-2021", bool(d.get("rapid", False)), d.get("level") or "national",
                              d.get("natural_limit_rounds"))
    except RuleConfigError as exc:
        raise GameStartError(str(exc)) from None
    tc_raw = d.get("time_control")
    if isinstance(tc_raw, str):
        try:
            tc_raw = json.loads(tc_raw)
        except json.JSONDecodeError as exc:
            raise GameStartError(f"time_control is not JSON: {exc}") from None
    if not isinstance(tc_raw, Mapping):
        raise GameStartError("time_control must be an object (6.1-6.5)")
    try:
        tc = TimeControl.from_json(tc_raw)
    except TimeControlError as exc:
        raise GameStartError(str(exc)) from None
    fen = d.get("start_fen") or START_FEN
    try:
        position = Position.from_fen(fen)
    except FenError as exc:
        raise GameStartError(f"start_fen: {exc}") from None
    clock = ClockState.start(tc, event.occurred_at)
    if position.side == "black":
        clock = clock._with(running="black")
    setup = GameSetup(game_id=d["game_id"], board_id=event.board_id, cfg=cfg, red_player=d.get("red_player", ""),
                      black_player=d.get("black_player", ""),
                      recording_required=bool(d.get("recording_required", False)), started_at=event.occurred_at,
                      start_fen=position.fen())
    line = Line(position=position, squares=position.squares(), moves=(), hist_positions=(position,), hist_moves=())
    return GameState(setup=setup, line=line, clock=clock, last_at=event.occurred_at)


# --------------------------------------------------------------------------------------------- deciding


class _GameOver(Exception):
    """Raised once a decision has ended the game: the dispatcher stops deciding on this input (22.5)."""


class _Decision:
    """The decision on one input: the facts decided so far (and the state they give, which later decisions of the
    same input read) and the outputs. Local to one input; the state values themselves never change."""

    __slots__ = ("e", "facts", "fouled", "outs", "s", "t")

    def __init__(self, state: GameState, event: Event) -> None:
        self.s = state
        self.e = event
        self.t = event.occurred_at
        self.facts: list[Fact] = []
        self.outs: list[Out] = []
        self.fouled: str | None = None

    def record(self, fact: Fact) -> None:
        self.facts.append(fact)
        self.s = _EVOLVE[type(fact)](self.s, fact)  # evolve(self.s, fact), one call fewer (this runs per fact)

    def made(self, kind: type, *fields: Any) -> None:
        """`record(kind(*fields))`, every field given, for the facts of every move: the fact built as the tuple it
        is (a named tuple's class call runs its `__new__`, a Python function, first)."""
        fact = _new(kind, fields)
        self.facts.append(fact)
        self.s = _EVOLVE[kind](self.s, fact)

    # ---------------------------------------------------------------- outputs
    def emit(self, type_: str, **fields: Any) -> None:
        self.outs.append(Out.of(type_, game_id=self.s.setup.game_id, **fields))

    def evidence(self) -> list[str]:
        """The input's event id, and the camera frame it was seen on where there is one (for the review page)."""
        frame = self.e.data.get("frame_sha256")
        return [self.e.event_id, frame] if frame else [self.e.event_id]

    def ruling(self, kind: str, side: str | None, article: str, message: str, *, rapid_rule: bool = False,
               ply: int | None = None) -> None:
        self.emit("Ruling", kind=kind, side=side, article=article, message=message,
                  ruleset=self.s.setup.cfg.label(rapid_rule), ply=len(self.s.line.moves) if ply is None else ply,
                  evidence=self.evidence())

    def attention(self, reason: str, *, fen: str | None = None) -> None:
        """`fen`: where a board change could not be followed, the position held, for the camera to look again from."""
        if fen is None:
            self.emit("AttentionNeeded", reason=reason, evidence=self.evidence())
        else:
            self.emit("AttentionNeeded", reason=reason, evidence=self.evidence(), fen=fen)

    def art(self, concept: str) -> str:
        a = self.s.setup.cfg.article(concept)
        if a is None:
            # A concept the edition has no article for: a gap in ruleset.py. Say so in the ruling rather than stop
            # the fold (tests/referee/test_fold_never_breaks.py looks for such gaps).
            return f"(no {self.s.setup.cfg.ruleset} article: {concept})"
        return a

    def end(self, result: str, article: str, reason: str, *, rapid_rule: bool = False) -> None:
        """The game ends: the GameEnded fact and output, and no more decisions (`_GameOver` to the dispatcher)."""
        label = self.s.setup.cfg.label(rapid_rule)
        self.record(GameEnded(Result(result, article, label, reason), self.t))
        self.emit("GameEnded", result=result, article=article, reason=reason, ruleset=label)
        raise _GameOver

    def lose(self, loser: str, concept: str, reason: str, *, rapid_rule: bool = False) -> None:
        self.end(loss_result(loser), self.art(concept), reason, rapid_rule=rapid_rule)

    def foul(self, side: str, article: str, message: str, *, rapid_rule: bool = False) -> None:
        """A foul (犯规): announced at once (8.2); the rule set's count of fouls loses (4.1.10; rapid two)."""
        s = self.s
        label = s.cfg.label(rapid_rule)
        self.record(FoulGiven(Foul(side, article, label, s.ply, message, self.e.event_id)))
        self.ruling("foul", side, article, message, rapid_rule=rapid_rule)
        self.fouled = side
        n = len(self.s.active_fouls(side))
        if n >= s.cfg.fouls_to_lose:
            self.lose(side, "fouls_loss", f"{side} has {n} fouls" + (" (rapid play-off rules: two fouls lose)"
                                                                         if s.cfg.rapid else ""),
                      rapid_rule=s.cfg.rapid)

    def arrived(self, side: str) -> None:
        """20.1: the side has shown it is at the board."""
        if not self.s.sides[side].arrived:
            self.record(Arrived(side))


def _decided(state: GameState, event: Event) -> _Decision:
    """The decision on one input, the one place where a result ends deciding (22.5); its last fact, the input's
    bookkeeping (InputTaken), is left to the caller."""
    d = _Decision(state, event)
    if state[_RESULT] is not None:
        _after_result(d)
    else:
        try:
            _check_time(d)
            handler = _HANDLERS.get(event.type)
            if handler is None:
                d.attention(f"the referee takes no {event.type} as input; it was kept but changes nothing")
            elif event.type == "Resigned":
                _resigned(d, state.foul_just_given)
            else:
                handler(d)
        except _GameOver:
            pass  # 22.5: the result stands; whatever this input would still have caused is not decided
    return d


def decide(state: GameState, event: Event) -> tuple[tuple[Fact, ...], tuple[Out, ...]]:
    """The facts an input makes (for `evolve`, in order) and the outputs it causes; `state` is unchanged."""
    d = _decided(state, event)
    d.record(InputTaken(event.occurred_at, d.fouled if d.s[_RESULT] is None else None, len(d.outs)))
    return tuple(d.facts), tuple(d.outs)


def apply(state: GameState, event: Event) -> tuple[GameState, tuple[Out, ...]]:
    """The next state of a game (its facts evolved) and the outputs an input event causes: `decide` and `evolve`,
    with the last fact (InputTaken, every input's) applied by its evolve from its fields, unbuilt."""
    d = _decided(state, event)
    s = d.s
    return input_taken(s, event.occurred_at, d.fouled if s[_RESULT] is None else None, len(d.outs)), tuple(d.outs)


END_OF_INPUT = "EndOfInput"  # the type of the stand-in cause of what `finish` folds (never a real input)


def finish(state: GameState) -> tuple[GameState, tuple[Out, ...]]:
    """The end of the input (`xqarb referee run`, `xqarb replay`): no camera report will come any more.

    What waits for the camera's next still board is folded as that board would fold it, the board as last seen
    standing unchanged: a clock press not yet followed by a move is a press without a move (8.1.7; the second
    loses, 4.1.9), pieces nudged are touches (5.1-5.5), pieces reported between two points are judged (5.10).
    The outputs' cause is the pending press where there is one (the ruling's evidence); their time is the last
    input's (nothing later is known). A game with a result, or with nothing waiting, gives nothing.
    """
    if state.result is not None:
        return state, ()
    pending = state.press_pending
    event = Event(type=END_OF_INPUT, event_id=pending[1] if pending is not None else f"end-of-input:{state.game_id}",
                  board_id=state.board_id, source="referee", source_seq=0, occurred_at=state.last_at,
                  received_at=state.last_at, data={})
    d = _Decision(state, event)
    try:
        _press_without_move(d)  # (a press waiting for the opponent's designation, 5.10, still waits)
        _settle_nudges(d, moved=False)
        _settle_misaligned(d)
    except _GameOver:
        pass  # 22.5
    if d.outs:
        d.record(OutputsNumbered(len(d.outs)))
    return d.s, tuple(d.outs)


# --------------------------------------------------------------------------------------------- time


def _check_time(st: _Decision) -> None:
    """Flag (4.1.6) and late arrival (20.1, 4.1.7), before the event itself counts."""
    s = st.s
    t = st.t
    flagged = s.clock.flagged(t)
    if flagged is not None:
        period = ""
        if s.clock.tc.scheme == "moves_in_time":
            p = s.clock.tc.period(s.clock.period_index(flagged))
            if p is not None and p.moves is not None:
                done = s.clock.red_period_moves if flagged == "red" else s.clock.black_period_moves
                period = f": {done} of the {p.moves} moves of the time period made"
        st.lose(flagged, "flag", f"{flagged}'s time ran out{period} (timeouts, {st.art('timeout_rule')})")
        return
    clock = s.clock
    running = clock.running
    if (running is not None and not clock.paused and t - s.setup.started_at > clock.tc.late_forfeit_ms * 1000
            and not s.sides[running].arrived):
        st.lose(running, "late", f"{running} did not arrive within {s.clock.tc.late_forfeit_ms // 60000} "
                                 f"minutes of the start ({st.art('late_rule')})")


# --------------------------------------------------------------------------------------------- vision


def _board_stable(st: _Decision) -> None:
    squares = st.e.data["squares"]
    try:
        check_squares(squares)
    except SquaresError as exc:
        st.attention(f"BoardStable not understood: {exc}")
        return
    s = st.s
    view = s.view  # (the parts read directly, not through the state's forwarding names: this runs per input)
    if squares == view.last_seen:
        if not changes_of(s.line.squares, squares):
            _set_right(st, squares)
            if view.press_pending is not None:
                _press_without_move(st)
        _settle_nudges(st, moved=False)
        _settle_misaligned(st)
        return
    ply = len(s.line.moves)
    _judge_board(st, squares, seen=True)
    _settle_nudges(st, moved=len(st.s.line.moves) != ply)
    _settle_misaligned(st)


def _set_right(st: _Decision, squares: str) -> None:
    """5.10: the still board shows the piece the mover left between two points set right before the clock press."""
    mis = st.s.view.misaligned
    if mis is not None and mis.stage == "fix" and "?" not in squares:
        st.record(MisalignmentOpen(None))


def _judge_board(st: _Decision, squares: str, *, seen: bool = False) -> None:
    """What a still board shows against the accepted position. `seen`: it is a new board from the camera (kept as
    the board last seen; with a move, as part of the move's fact)."""
    s = st.s
    inf = infer(s.line.position, s.line.squares, squares)
    if inf.kind == "move":
        _accept_move(st, inf.moves[0], seen=squares if seen else None)
        return
    if seen:
        st.record(BoardSeen(squares))
    if inf.kind == "unchanged":
        _set_right(st, squares)
        asked = st.s.view
        if asked.attention is not None or asked.ambiguous:
            # The still board shows the accepted position: what was asked about the board is answered, whatever
            # the press below decides (a second press without a move ends the game: the questions end with it).
            st.record(BoardFollowed())
        if asked.press_pending is not None:
            _press_without_move(st, asked)
        return
    if inf.kind == "ambiguous":
        st.record(MovesAmbiguous(inf.moves))
        explained = any(all(m.to in pair for m in inf.moves) for pair in s.view.misaligned_seen)
        if s.view.misaligned is None and not explained:
            st.attention(f"board change is not one move: {inf.reason} ({'; '.join(inf.changes)}); an arbiter "
                         f"must say which (PointDesignated or PositionRestored)", fen=s.line.position.fen())
        return
    if inf.kind == "illegal":
        _illegal_move(st, inf.moves[0], inf.reason)
        return
    reason = f"{inf.reason}: {'; '.join(inf.changes)}"
    if s.view.attention != reason:
        st.record(BoardUnexplained(reason, s.line.position.side))
        st.attention(f"board change is no single legal move ({reason}); restore the position (5.8.2, 5.9) or "
                     f"send PositionRestored", fen=s.line.position.fen())


def _accept_move(st: _Decision, move: Move, *, designated: bool = False, seen: str | None = None) -> None:
    """`designated`: the move stands because the opponent designated its point (5.10): however long that took,
    the mover's press already made is this move's. `seen`: the camera's still board that shows the move."""
    s = st.s
    before = s.line.position
    side = before.side
    ob = unmet_obligation(before, s.sides[side].touches, move)
    if ob is not None:
        if seen is not None:
            st.record(BoardSeen(seen))
        # 5.1-5.5: the touch obliges; the move stands only if it honours the obligation, so it is taken back.
        st.ruling("correction", side, ob.article,
                  f"{move.iccs} does not honour touch-move: {ob.text}; the move is to be taken back and replayed")
        st.record(SideMoved(side, True))  # the press that follows is that attempt's, not a press without moving
        return
    try:
        after = before.play(move)
    except IllegalMove as exc:  # pragma: no cover - infer() only offers legal moves
        if seen is not None:
            st.record(BoardSeen(seen))
        st.attention(f"move {move.iccs} rejected by the rules core: {exc}")
        return
    ply = len(s.line.moves) + 1
    t = st.t
    clock = s.clock
    press_pending = s.view.press_pending
    moved = True
    if press_pending is not None and press_pending[0] == side:
        if not designated and not _press_was_for_this_move(s, press_pending[2], t):
            # 8.1.7: the press came before the move was under way; the move, made in the opponent's time, still
            # stands and counts for that press.
            if seen is not None:
                st.record(BoardSeen(seen))  # (apart from the move: the press is ruled on first)
                seen = None
            _press_without_move(st)
            s = st.s
        # The press came before the camera saw the board still: the move belongs to that press.
        clock = clock.credit_move(side)
        press_pending = None
        moved = False
    red_ms, black_ms = clock.remaining_both(t)
    capture = before.captured_by(move)
    after_squares = squares_after(s.line.squares, move)
    fen_after = fen_of(after_squares, after.side, after.plies_since_capture, after.fullmove)
    record = MoveRecord(ply, side, move, *wxf_and_chinese(before, move), fen_after, capture,
                        red_ms, black_ms, st.e.event_id)
    offer = s.claims.offer_pending
    last_offer = s.claims.last_offer
    if offer is not None and offer != side:
        offer, last_offer = None, (offer, True)  # 23.1: moving is refusing the offer
    settled = s.view.settled_points
    misaligned = s.view.misaligned
    if misaligned is not None and misaligned.mover != side:
        # The opponent moved on without designating (5.10): the question lapsed and the position stands.
        settled |= {frozenset(misaligned.points)}
        misaligned = None
    if settled:  # a piece (or point) between settled points is in play again: a new question
        settled = frozenset(pair for pair in settled if move.frm not in pair and move.to not in pair)
    st.made(MovePlayed, side, move, record, after, after_squares, clock, press_pending, moved, offer, last_offer,
            misaligned, settled, seen)
    st.emit("MoveMade", ply=ply, side=side, iccs=move.iccs, wxf=record.wxf, chinese=record.chinese,
            fen_after=record.fen_after, red_ms=red_ms, black_ms=black_ms)
    _recording_after_move(st, side, ply)
    # 4.1.1 / 4.1.2: no legal move for the side to move is a loss, checkmated or stalemated (困毙).
    if not after.has_legal_move():
        loser = after.side
        if after.in_check():
            st.lose(loser, "mate", f"{loser} is checkmated by {move.iccs} ({record.chinese})")
        else:
            st.lose(loser, "stalemate", f"{loser} has no legal move (困毙) after {move.iccs} ({record.chinese})")
        return
    _repetition(st)
    _natural_limit_notice(st)


def _press_was_for_this_move(s: GameState, pressed_at: int, seen_at: int) -> bool:
    """Whether a press made before the camera showed the mover's move was that move's press (6, 8.1.7).

    The camera shows a move only once the board has been still for a moment after the hand left, so a press
    normally comes first. It was the move's own press if a hand was over the board before it (the move was under
    way), or if the move was seen within the time control's `press_grace_ms` of it; a move first seen later, with
    no hand seen before the press, was made after pressing.
    """
    if s.view.hand_seen_at is not None and s.view.hand_seen_at <= pressed_at:
        return True
    return seen_at - pressed_at <= s.clock.tc.press_grace_ms * 1000


def _repetition_count(s: GameState) -> int:
    """How often the position now has stood on the board since the last capture (a capture ends every cycle)."""
    key = s.line.position.key
    count = 0
    for p in reversed(s.line.hist_positions):
        if p.key == key:
            count += 1
        if p.plies_since_capture == 0:
            break
    return count


def _repetition(st: _Decision) -> None:
    """After a move: a side told to vary (26.4) that completes the cycle once more loses (4.1.5 / 2011 4.1.7);
    a cycle not yet told to the arbiter is told (AttentionNeeded, `_alert_repetition`).

    A pending position (待判局面) is ruled on when asked (a player's claim, entered by the arbiter as ArbiterDecision
    with the pending-position article and no result, 23.1) or when the arbiter, told of the cycle, confirms the
    ruling it points to (23.2: the arbiter steps in unasked); real games run through threefold repetitions that
    nobody claims, so the referee tells and does not rule on its own.
    """
    s = st.s
    count = _repetition_count(s)
    if s.claims.repetition_pending != (count >= 3):
        st.record(RepetitionCounted(count >= 3))
    if count < 3:
        return
    verdict = None  # (a repeating cycle: rare; read through the state's names)
    if s.vary_order is not None:
        verdict = judge_repetition(s.hist_positions, s.hist_moves, s.cfg.ruleset, vary_order=s.vary_order)
        if verdict is not None and verdict.outcome == "loss" and verdict.side is not None:
            st.end(loss_result(verdict.side), verdict.article, f"pending position (待判局面): {verdict.reason}")
            return
        told, at = s.vary_order
        if s.vary_forced and verdict is not None and repeated_after_order(verdict.cycle, s.vary_order,
                                                                           len(s.hist_moves)):
            # 26.4 / 24.3: the arbiter ordered the vary; the cycle came round once more: the told side loses.
            st.end(loss_result(told), ruling_article("not_varied", s.cfg.ruleset),
                   f"pending position (待判局面): {told} was told by the arbiter to vary at ply {at} and repeated "
                   f"the cycle once more: {told} loses")
            return
    _alert_repetition(st, verdict)


def _alert_repetition(st: _Decision, verdict: RepetitionVerdict | None) -> None:
    """23.2: tell the arbiter of a repeating cycle, once per cycle: each side's moves named (25.2), the ruling
    the cycle points to and its articles. The game goes on until the arbiter confirms or overrules it."""
    s = st.s
    cycle = find_cycle(s.hist_positions)
    if cycle is None:
        return
    keys = frozenset(p.key for p in s.hist_positions[cycle.start: cycle.end + 1])
    if keys <= s.repetition_alerted:
        return  # this cycle going round again: already told
    if verdict is None:
        verdict = judge_repetition(s.hist_positions, s.hist_moves, s.cfg.ruleset, vary_order=s.vary_order)
    if verdict is None:
        return
    first_ply = len(s.moves) - len(s.hist_moves) + 1  # the game's ply of hist_moves[0] (a set position cuts it)
    alert = RepetitionAlert(
        output_id(st.e.event_id, len(st.outs)), len(s.hist_moves), verdict.outcome, verdict.side, verdict.result,
        verdict.article, tuple((side, verdict.patterns.get(side, "")) for side in ("red", "black")),
        verdict.reason, tuple((first_ply + m.ply, m.side, m.move, m.term) for m in verdict.moves))
    st.record(RepetitionAlerted(keys, alert))
    what = "confirm it or overrule it" if verdict.outcome != "judgment" else \
        "give a result, or order a side to vary (26.4)"
    st.emit("AttentionNeeded", reason=f"{alert_words(verdict)}. The arbiter may step in unasked "
                                      f"({st.art('pending_position')}): {what}",
            evidence=st.evidence(), kind="repetition", outcome=verdict.outcome, result=verdict.result or "",
            side=verdict.side, article=verdict.article, patterns=dict(verdict.patterns))


def _natural_limit_notice(st: _Decision) -> None:
    """23.3 / 4.2.4: tell the arbiter when the natural move limit (自然限着) is coming due and when it is reached,
    once each per stretch without a capture; the draw still waits for a claim or the arbiter's confirmation."""
    s = st.s
    cfg = s.setup.cfg
    limit = cfg.limit_rounds
    plies = s.line.position.plies_since_capture
    began, level = s.claims.limit_noticed
    stretch = len(s.line.hist_moves) - plies  # the same for every move of one stretch without a capture
    if began != stretch:  # a capture began a new stretch (or the game its first): an old notice is moot
        level = 0
        st.record(LimitStretchBegun(stretch))
    # Rounds counted never exceed the rounds played (23.3 only takes checks off): a cheap gate before counting.
    due_from = max(0, limit - NATURAL_LIMIT_NOTICE_ROUNDS)
    if level >= 2 or plies // 2 < (limit if level == 1 else due_from):
        return
    try:
        count = natural_limit_count(s.line.hist_positions, s.line.hist_moves, None, ruleset=cfg.ruleset,
                                    rapid=cfg.rapid, rounds=limit, checks_cap=cfg.checks_cap)
    except (HistoryError, ValueError):
        return  # a history an arbiter cut: a claim is still checked (and says why it cannot be) when made
    new_level = 2 if count.reached else (1 if count.counted_rounds >= due_from else 0)
    if new_level <= level:
        return
    alert_id = output_id(st.e.event_id, len(st.outs))
    st.record(LimitNoticed(stretch, new_level, alert_id))
    article = st.art("draw_natural")
    if new_level == 2:
        st.emit("AttentionNeeded", reason=f"natural move limit (自然限着) reached: {count.reason}. A draw "
                                          f"({article}) when claimed (23.3) or the arbiter confirms it",
                evidence=st.evidence(), kind="natural_limit", outcome="draw", result="1/2-1/2", article=article)
    else:
        st.emit("AttentionNeeded", reason=f"natural move limit (自然限着) coming due: {count.reason}; "
                                          f"{limit - count.counted_rounds} more rounds without a capture make it a "
                                          f"draw ({article})",
                evidence=st.evidence(), kind="natural_limit", article=article)


def _limit_action(st: _Decision, action: str, note: str) -> None:
    """An arbiter's answer to a natural-limit notice: confirm (the draw, 4.2.4, if the count reaches the limit)
    or overrule (play goes on)."""
    s = st.s
    if action == "overrule":
        st.record(LimitAlertClosed())
        st.ruling("correction", None, st.art("draw_natural"),
                  note or f"the arbiter overrules the natural-limit notice{_claimed(st)}: play goes on")
        return
    if action != "confirm":
        st.attention(f"ArbiterDecision {action} does not apply to a natural-limit notice (confirm or overrule)")
        return
    cfg = s.cfg
    try:
        count = natural_limit_count(s.hist_positions, s.hist_moves, st.e.data.get("claimed_by"),
                                    ruleset=cfg.ruleset, rapid=cfg.rapid, rounds=cfg.limit_rounds,
                                    checks_cap=cfg.checks_cap)
    except (HistoryError, ValueError) as exc:
        st.attention(f"the natural-limit count cannot be checked: {exc}")
        return
    if not count.reached:
        st.attention(f"the natural move limit is not reached: {count.reason}; nothing to confirm")
        return
    st.record(LimitAlertClosed())
    st.end("1/2-1/2", st.art("draw_natural"), f"natural move limit confirmed by the arbiter{_claimed(st)}: "
                                              f"{count.reason}")


def _claimed(st: _Decision) -> str:
    who = st.e.data.get("claimed_by")
    return f" (claimed by {who})" if who else ""


def _judge_pending(st: _Decision, asked: str) -> None:
    """A ruling on the pending position was asked for: judge it with the rules core's 棋例 (24-29)."""
    s = st.s
    try:
        verdict = judge_repetition(s.hist_positions, s.hist_moves, s.cfg.ruleset, vary_order=s.vary_order)
    except (HistoryError, ValueError) as exc:
        st.attention(f"pending position cannot be judged: {exc}")
        return
    if verdict is None:
        st.attention(f"a ruling on a pending position was asked ({asked}), but the position has not come round "
                     f"three times in a cycle: no pending position")
        return
    st.record(RepetitionAlertChanged(None))
    what = f"pending position (待判局面): {verdict.reason}; red {verdict.patterns.get('red')}, " \
           f"black {verdict.patterns.get('black')}{_claimed(st)}"
    if verdict.outcome == "draw":
        st.end("1/2-1/2", verdict.article, what)
    elif verdict.outcome == "loss" and verdict.side is not None:
        st.end(loss_result(verdict.side), verdict.article, what)
    elif verdict.outcome == "must_vary" and verdict.side is not None:
        st.record(VaryOrdered(verdict.side, len(st.s.hist_moves), False))
        st.ruling("obligation", verdict.side, verdict.article, f"{what}: {verdict.side} must vary its move")
    else:
        st.attention(f"{what} ({verdict.article}): the arbiter must judge")


REPETITION_ACTIONS = ("confirm", "overrule", "vary", "reclassify")
SIGN_OFF = "sign_off"  # 9: the arbiter signs the scoresheet of an ended game (services/referee/scoresheet.py)
# 18.1 (a warning, 警告) and 18.2 (disqualified from the game): penalties the standings weigh (18.5), which an arbiter
# may record after the game's result.
PENALTIES = frozenset({"18.1", "18.2"})
TERMS = ("将", "杀", "捉", "闲")  # 28: check, mate threat, chase, idle


def _repetition_action(st: _Decision, action: str, article: str, note: str) -> None:
    """An arbiter's answer to a repetition alert (23.2): confirm the ruling it points to, overrule it (play goes
    on), or order a side to vary (26.4, where the referee referred the cycle to the arbiter or the arbiter rules
    otherwise): that side then loses by 4.1.5 (2011: 4.1.7) if the cycle comes round once more."""
    s = st.s
    d = st.e.data
    alert = s.repetition_alert
    named = d.get("alert") or ""
    if named and (alert is None or named != alert.alert_id):
        open_words = f"the open one is {alert.alert_id}" if alert is not None else "no repetition alert is open"
        st.attention(f"ArbiterDecision {action} answers alert {named}, but {open_words}; not applied")
        return
    if action == "confirm":
        if alert is None:
            _judge_pending(st, article or st.art("pending_position"))  # no alert: as if asked (23.1)
            return
        _confirm_alert(st, alert, note)
        return
    if action == "reclassify":
        if alert is None:
            st.attention("ArbiterDecision reclassify: no repetition alert is open; not applied")
            return
        _reclassify(st, alert, note)
        return
    if alert is None and not s.repetition_pending:
        st.attention(f"ArbiterDecision {action}: there is no repeating cycle (no alert open, no pending position); "
                     f"not applied")
        return
    if action == "overrule":
        st.record(RepetitionAlertChanged(None))
        was = f" (it pointed to {alert.outcome}{' for ' + alert.side if alert.side else ''}, {alert.article})" \
            if alert is not None else ""
        st.ruling("correction", None, article or st.art("pending_position"),
                  note or f"the arbiter overrules the repetition alert{was}{_claimed(st)}: play goes on")
        return
    side = d.get("side")
    if side not in ("red", "black"):
        st.attention(f"ArbiterDecision vary needs the side that must vary (red or black), got {side!r}; not applied")
        return
    ruleset = s.cfg.ruleset
    st.record(VaryOrdered(side, len(s.hist_moves), True))
    st.record(RepetitionAlertChanged(None))
    # The obligation is 26.4's (2011 24.3), whatever article the decision cites.
    st.ruling("obligation", side, ruling_article("must_vary", ruleset),
              note or f"the arbiter orders {side} to vary its move{_claimed(st)}: repeating the cycle once more "
                      f"loses ({ruling_article('not_varied', ruleset)})")


def _reclassify(st: _Decision, alert: RepetitionAlert, note: str) -> None:
    """The arbiter names one move of the cycle otherwise (28; e.g. 27.3's key defensive point makes a chase idle):
    the alert then points to the ruling of 24 / 26 on the terms so named, for the arbiter to confirm."""
    d = st.e.data
    ply, term = d.get("ply"), d.get("term") or ""
    if term not in TERMS:
        st.attention(f"ArbiterDecision reclassify needs a term ({', '.join(TERMS)}), got {term!r}; not applied")
        return
    at = [i for i, (p, *_rest) in enumerate(alert.terms) if p == ply]
    if not at:
        plies = ", ".join(str(p) for p, *_rest in alert.terms)
        st.attention(f"ArbiterDecision reclassify: ply {ply} is not a move of the repeating cycle (plies {plies}); "
                     f"not applied")
        return
    terms = list(alert.terms)
    p, side, iccs, _old = terms[at[0]]
    terms[at[0]] = (p, side, iccs, term)
    by_side = {s_: [t for _p, who, _m, t in terms if who == s_] for s_ in ("red", "black")}
    outcome, loser, article, reason = ruling_for_terms(by_side, st.s.cfg.ruleset)
    result = loss_result(loser) if outcome == "loss" and loser else ("1/2-1/2" if outcome == "draw" else None)
    patterns = tuple((s_, pattern_of(by_side[s_])) for s_ in ("red", "black"))
    st.record(RepetitionAlertChanged(replace(alert, outcome=outcome, side=loser, result=result, article=article,
                                                patterns=patterns, reason=reason, terms=tuple(terms))))
    named = ", ".join(f"{s_} {pat}" for s_, pat in patterns)
    st.ruling("correction", side, article,
              note or f"the arbiter names ply {p} ({side} {iccs}) {term}{_claimed(st)}: {named}; the cycle now "
                      f"points to: {reason} ({article}); confirm or overrule")


def _confirm_alert(st: _Decision, alert: RepetitionAlert, note: str) -> None:
    if alert.outcome == "judgment":
        st.attention(f"the repetition alert {alert.alert_id} leaves the ruling to the arbiter ({alert.article}): "
                     f"there is nothing to confirm; give a result, or order a side to vary (action vary)")
        return
    st.record(RepetitionAlertChanged(None))
    what = f"pending position (待判局面), confirmed by the arbiter{_claimed(st)}: {alert.reason}; " + \
        ", ".join(f"{side} {pattern}" for side, pattern in alert.patterns) + (f"; {note}" if note else "")
    if alert.result is not None:
        st.end(alert.result, alert.article, what)  # 4.1.4 one-sided perpetual check; 4.2.3 a draw
    elif alert.outcome == "must_vary" and alert.side is not None:
        st.record(VaryOrdered(alert.side, len(st.s.hist_moves), False))
        st.ruling("obligation", alert.side, alert.article, f"{what}: {alert.side} must vary its move")


def _illegal_move(st: _Decision, move: Move, reason: str) -> None:
    s = st.s
    side = s.position.side
    letter = s.position.piece_at(move.frm) or "?"
    cfg = s.cfg
    if _is_suicide(s, move, side):
        # 3.4 / 4.1.3 (2011 4.1.2 for kings facing): a move that leaves one's own king to be taken.
        concept = "suicide" if cfg.ruleset == "cxa-2021" or "face" in reason else "illegal_loss"
        st.lose(side, concept, f"{side} {move.iccs}: {reason} (自杀)")
        return
    n = s.sides[side].illegal + 1
    st.record(IllegalMoveCounted(side))
    text = f"{side} {move.iccs}: {reason}"
    if n >= cfg.illegal_moves_to_lose:
        level = "" if cfg.ruleset == "cxa-2011" else f" ({cfg.level} event: {cfg.illegal_moves_to_lose} lose)"
        st.lose(side, "illegal_loss", f"illegal move number {n}: {text}{level}")
        return
    st.record(SideMoved(side, True))  # the press that follows belongs to this (illegal) move, not 8.1.7
    st.foul(side, st.art("foul_illegal"), f"illegal move (first in a {cfg.level} event): {text}")
    # 5.8.3: replay from that move; the piece already moved counts as touched (5.1).
    touch = Touch(move.frm, True, letter, st.t, st.e.event_id)
    if all(t.point != move.frm for t in st.s.touches(side)):
        st.record(Touched(side, touch, first=True))
    st.ruling("obligation", side, st.art("replay"),
              f"put the position back and replay ply {s.ply + 1}: the {letter} on {move.frm} counts as touched (5.1)")


def _is_suicide(s: GameState, move: Move, side: str) -> bool:
    after = squares_after(s.squares, move)
    if _kings_face(after):
        return True
    # The board after the move with the mover to move: is its own king attacked?
    try:
        return Position.from_squares(after, side).in_check()
    except FenError:
        return False  # not a position the rules core can hold (e.g. it also attacks the other king)


def _kings_face(squares: str) -> bool:
    """2.2: the two kings on one file with nothing between them."""
    red, black = squares.find("K"), squares.find("k")
    if red < 0 or black < 0 or red % 9 != black % 9:
        return False
    lo, hi = sorted((red, black))
    return all(squares[i] == "." for i in range(lo + 9, hi, 9))


def _recording_after_move(st: _Decision, side: str, ply: int) -> None:
    """7.1 / 7.2: settle advance entries; count the mover's unrecorded moves and give the fouls they are worth."""
    s = st.s
    rec = s.recording
    line = s.line
    if len(line.hist_moves) == len(line.moves):  # entries are read against the history (an arbiter's position cuts it)
        rec = check_waiting(rec, ply, s.line.hist_positions, s.line.hist_moves)
    if not s.setup.recording_required:
        if rec is not s.recording:
            st.record(RecordingChanged(rec))
        return
    cfg = s.setup.cfg
    period = s.clock.period_index(side)
    under = cfg.suspend_recording_under_ms
    if under is not None and s.clock.remaining(side, st.t) < under:
        # 2011 7.2: with under 3 minutes left recording may stop until the next time period.
        rec = excuse(excuse(rec, side, ply, period), side, ply - 1, period)
    missed = missing(rec, side, ply - 2, period)
    due = fouls_due(missed, consecutive_only=not cfg.recording_fouls_cap_at_eight)
    given = rec.fouls(side)
    st.record(RecordingChanged(with_fouls(rec, side, max(given, due))))
    for _ in range(due - given):
        st.foul(side, st.art("foul_recording"),
                f"{side}'s scoresheet misses {len(missed)} moves (plies {', '.join(map(str, missed[:12]))}"
                f"{' ...' if len(missed) > 12 else ''}): every 4 one foul ({st.art('recording')})")


def _touch(st: _Decision, side: str, point: str, source: str) -> None:
    s = st.s
    letter = s.line.position.piece_at(point)
    if letter is None:
        return  # nothing stands there in the accepted position: the camera's report explains nothing
    if point in s.sides[side].adjust or any(t.point == point for t in s.sides[side].touches):
        return  # 5.6: announced adjustment; or already touched this turn
    touch = Touch(point, letter.isupper() == (side == "red"), letter, st.t, st.e.event_id)
    st.made(Touched, side, touch, False)
    if side == s.line.position.side:
        position = s.line.position
    else:
        try:
            position = Position.from_squares(s.line.squares, side)
        except FenError:
            return  # no position with that side to move (its opponent is in check): 8.1.5 cannot be judged now
    why = touch_foul(position, touch)
    if why is not None:
        st.foul(side, st.art("foul_touch_own" if touch.own else "foul_touch_opponent"), f"{why} ({source})")


def _hand_side(s: GameState) -> str:
    # The camera cannot tell whose hand it was: it is the hand of the side whose time it is (its clock runs), the
    # side to move until it presses the clock after its move (5.1-5.5; 5.6 for touches in the other's time).
    return s.clock.running if s.clock.running is not None and s.view.press_pending is None else s.line.position.side


def _lifted(st: _Decision) -> None:
    _hand_seen(st)
    _touch(st, _hand_side(st.s), st.e.data["point"], "lifted, seen by the camera")


def _nudged(st: _Decision) -> None:
    """A piece pushed on its point. The camera reports it with the still board after the hand left, before the
    BoardStable of that moment: if that board shows a move, the contact was part of the move, which is complete
    (5.7); if it shows none, the nudge was a touch of the side whose time it is (5.1-5.5, 5.6 unless announced).
    So it waits for that BoardStable (`_settle_nudges`)."""
    point = st.e.data["point"]
    side = _hand_side(st.s)
    if point in st.s.adjust(side):
        return  # 5.6: an announced adjustment
    st.record(Nudged((side, point, st.t, st.e.event_id)))


def _settle_nudges(st: _Decision, moved: bool) -> None:
    nudges = st.s.view.nudges
    if not nudges:
        return
    st.record(NudgesJudged())
    if moved:
        return
    for side, point, _at, _eid in nudges:
        _touch(st, side, point, "nudged, seen by the camera")


def _touch_reported(st: _Decision) -> None:
    d = st.e.data
    side, point = d["side"], d["point"]
    st.arrived(side)
    if d.get("adjust"):
        if side == st.s.position.side:
            st.record(AdjustAnnounced(side, point))  # 5.6: announced, in own time: no touch
            return
        st.ruling("warning", side, st.art("adjust"),
                  f"{side} adjusted {point} in the opponent's time: that counts as touching (5.6)")
    _touch(st, side, point, "reported")


def _misaligned(st: _Decision) -> None:
    s = st.s
    points = tuple(st.e.data["points"])
    if frozenset(points) in s.settled_points:
        return  # already settled (designated, lapsed or told): the piece is where the game has it
    if s.moves and s.moves[-1].move.to in points:
        _misaligned_after(st, points)
        return
    # The camera reports it with the still board, before that board's BoardStable: the move it belongs to may be
    # the one that BoardStable shows. Judged there (`_settle_misaligned`); every piece so reported is kept.
    if points not in s.misaligned_seen:
        st.record(MisalignmentReported(points))


def _settle_misaligned(st: _Decision) -> None:
    reported = st.s.view.misaligned_seen
    if reported:
        st.record(MisalignmentsJudged())
    for points in reported:
        if frozenset(points) not in st.s.view.settled_points:  # (settled meanwhile by the still board's move)
            _settle_one_misaligned(st, points)


def _settle_one_misaligned(st: _Decision, points: tuple[str, ...]) -> None:
    if not st.s.ambiguous:
        half_way = _moves_left_half_way(st.s, points)
        if half_way:
            st.record(MovesAmbiguous(half_way))
    if st.s.ambiguous and all(m.to in points for m in st.s.ambiguous):
        # The piece just moved stands between two points and the camera cannot say which: 5.10.
        mover = st.s.position.side
        mis = Misalignment(points, mover, "fix" if st.s.clock.running == mover else "designate")
        if mis.stage == "designate":
            _to_designation(st, mis)
        else:
            st.record(MisalignmentOpen(mis))
        return
    _misaligned_after(st, points)


def _moves_left_half_way(s: GameState, points: tuple[str, ...]) -> tuple[Move, ...]:
    """The side to move's legal moves between the two points of a piece standing between them, where the still
    board allows them ('?' on both, as a camera reads such a piece): the move may have been made and the piece
    left half-way on its way (5.10), which the snapshot alone cannot show. The designation says which it was."""
    if len(points) != 2 or s.last_seen is None or (s.moves and s.moves[-1].move.to in points):
        return ()  # the piece just moved is _misaligned_after's question
    a, b = points
    return tuple(moves_between(s.position, s.squares, s.last_seen, a, b))


def _misaligned_after(st: _Decision, points: tuple[str, ...]) -> None:
    s = st.s
    if not s.moves:
        st.attention(f"a piece stands between {' and '.join(points)} before any move")
        return
    last = s.moves[-1]
    if last.move.to not in points:
        # 5.10 is about the piece just moved; another piece between two points was displaced (5.8.2, 5.9).
        st.attention(f"a piece stands between {' and '.join(points)}, but the last move ({last.move.iccs}) went to "
                     f"{last.move.to}: a displaced piece (5.8.2 / 5.9)")
        _settle(st, points)  # told once: the same piece seen there again is not a new alert
        return
    mover = last.side
    pressed = s.clock.running != mover
    if not pressed:
        st.record(MisalignmentOpen(Misalignment(points, mover, "fix")))
        return
    _to_designation(st, Misalignment(points, mover, "designate"))


def _to_designation(st: _Decision, mis: Misalignment) -> None:
    st.record(MisalignmentOpen(mis))
    opponent = other(mis.mover)
    st.ruling("obligation", opponent, st.art("designate"),
              f"a piece stands between {' and '.join(mis.points)} after {mis.mover}'s move and clock press: "
              f"{opponent} designates its point (5.10)")
    if st.s.cfg.misaligned_foul_for_mover:
        st.foul(mis.mover, "5.10", f"{mis.mover} pressed the clock before fixing the piece between "
                                   f"{' and '.join(mis.points)} (rapid play-off rules)", rapid_rule=True)


def _settle(st: _Decision, points: Sequence[str]) -> None:
    st.record(PointsSettled(frozenset(points)))


def _designated(st: _Decision) -> None:
    s = st.s
    point = st.e.data["point"]
    if s.ambiguous:
        chosen = [m for m in s.ambiguous if m.to == point]
        if len(chosen) == 1:
            points = s.misaligned.points if s.misaligned is not None else (chosen[0].frm, chosen[0].to)
            st.record(MisalignmentOpen(None))
            _accept_move(st, chosen[0], designated=True)
            _settle(st, points)
            return
    mis = s.misaligned
    if mis is None:
        st.attention(f"PointDesignated {point}, but no piece is waiting for a designation (5.10)")
        return
    if point not in mis.points:
        st.attention(f"PointDesignated {point} is not one of the candidate points {', '.join(mis.points)}")
        return
    last = s.moves[-1] if s.moves else None
    st.record(MisalignmentDesignated())
    _settle(st, mis.points)
    if last is None or last.side != mis.mover or last.move.to == point:
        return  # the camera's reading stands
    if last.move.to not in mis.points:
        st.attention(f"the piece between {' and '.join(mis.points)} is not the one {mis.mover} moved last")
        return
    alternative = Move(last.move.frm, point)
    before = s.hist_positions[-2] if len(s.hist_moves) else None
    if before is None or not before.is_legal(alternative):
        st.attention(f"designated point {point} would make {mis.mover}'s move {alternative.iccs} illegal")
        return
    # The move is replaced: a correction, then the MoveMade of the same ply again with the designated point.
    st.record(MovesTakenBack(st.s.ply - 1))
    st.ruling("correction", mis.mover, st.art("designate"),
              f"ply {last.ply} stands on {point} as designated: {last.move.iccs} becomes {alternative.iccs}")
    _accept_move(st, alternative, designated=True)
    _settle(st, mis.points)
    st.record(SideMoved(mis.mover, False))  # its clock press has been made already


# --------------------------------------------------------------------------------------------- clock


def _device(st: _Decision) -> None:
    d = st.e.data
    clock = st.s.clock
    read = clock.with_device(d.get("red_ms"), d.get("black_ms"), st.t)
    if read is not clock:
        st.record(ClockChanged(read))


def _check_drift(st: _Decision) -> None:
    clock = st.s.clock
    drift = clock.drift(st.t)
    if drift is None:
        return
    tol = clock.tc.drift_tolerance_ms
    if drift > tol and not clock.drifting:
        st.record(ClockChanged(clock._with(drifting=True)))
        red, black = clock.remaining_both(st.t)
        st.ruling("warning", None, st.art("clock"),
                  f"the clock device and the model differ by {drift} ms (device red {clock.device_red_ms}, black "
                  f"{clock.device_black_ms}; model red {red}, black {black}): check the clock")
    elif drift <= tol and clock.drifting:
        st.record(ClockChanged(clock._with(drifting=False)))


def _press_without_move(st: _Decision, asked: BoardView | None = None) -> None:
    """8.1.7: the clock pressed without a move (twice: 4.1.9; rapid play-off: at once; 2011: only a warning).
    `asked`: the board's questions as they stood when the press was made, where a still board has just answered
    them (the press is judged on what could be known of the board then)."""
    s = st.s
    w = s.view if asked is None else asked
    if w.press_pending is None:
        return
    side = w.press_pending[0]
    mis = w.misaligned
    if w.ambiguous and mis is not None and mis.stage == "designate" and mis.mover == side:
        return  # 5.10: whether the press followed a move waits for the opponent's designation of the point
    if w.attention is not None:
        # The board is in a state the referee could not follow (AttentionNeeded): whether that press followed a
        # move cannot be known until an arbiter restores the position, so it is not ruled.
        st.record(PressDropped(side, counted=False))
        return
    n = s.sides[side].presses + 1
    st.record(PressDropped(side, counted=True))
    cfg = s.setup.cfg
    limit = cfg.presses_to_lose
    if limit is None:
        st.ruling("warning", side, st.art("clock"), f"{side} pressed the clock without having moved (6: press "
                                                    "after moving)")
        return
    if n >= limit:
        st.lose(side, "press_loss", f"{side} pressed the clock without moving {n} time(s)", rapid_rule=cfg.rapid)
        return
    st.foul(side, st.art("foul_press"), f"{side} pressed the clock without having moved")


def _clock_pressed(st: _Decision) -> None:
    side = st.e.data["side"]
    st.arrived(side)
    _device(st)
    s = st.s
    if s.clock.paused or s.clock.running != side:
        return  # a stopped clock, or the side whose clock is not running: the device does nothing
    if s.setup.cfg.rapid and s.view.attention is not None and s.view.attention_side == side:
        # Rapid play-off rules: pressing the clock after knocking pieces over (碰乱棋子后按钟) loses.
        st.lose(side, "knocked_press_loss",
                f"{side} pressed the clock with the board disturbed ({s.view.attention})", rapid_rule=True)
        return
    if s.view.press_pending is not None:
        _press_without_move(st)  # the earlier press was never followed by a move
        s = st.s
    if s.sides[side].moved:
        st.made(PressAfterMove, side, s.clock.press(side, st.t).credit_move(side))
        _check_drift(st)
    else:
        st.record(PressAwaitingMove(s.clock.press(side, st.t), (side, st.e.event_id, st.t)))
    mis = st.s.view.misaligned
    if mis is not None and mis.stage == "fix" and mis.mover == side:
        _to_designation(st, replace(mis, stage="designate"))


def _clock_paused(st: _Decision) -> None:
    by = st.e.data["by"]
    _device(st)
    st.record(ClockChanged(st.s.clock.pause(st.t)))
    if by != "arbiter":
        st.foul(by, st.art("foul_clock"), f"{by} stopped the clock without the arbiter's permission")


def _clock_resumed(st: _Decision) -> None:
    by = st.e.data["by"]
    _device(st)
    if not st.s.clock.paused:
        return
    st.record(ClockChanged(st.s.clock.resume(st.t)))
    if by != "arbiter":
        st.foul(by, st.art("foul_clock"), f"{by} started the clock without the arbiter's permission")


# --------------------------------------------------------------------------------------------- people


def _scoresheet(st: _Decision) -> None:
    d = st.e.data
    s = st.s
    side, ply, text = d["side"], d["ply"], d["text"]
    st.arrived(side)
    if len(s.hist_moves) != len(s.moves):
        # A position set by an arbiter cut the history: entries are checked against the moves we still have.
        rec = replace(s.recording, entries=(*s.recording.entries, (side, ply, text)))
        st.record(RecordingChanged(rec))
        return
    rec, why = add_entry(s.recording, side, ply, text, s.hist_positions, s.hist_moves)
    st.record(RecordingChanged(rec))
    if why is not None and s.recording_required:
        st.ruling("warning", side, st.art("illegible"),
                  f"{side}'s scoresheet entry for ply {ply} ({text!r}) {why}: it counts as not recorded",
                  ply=ply)


def _draw_offered(st: _Decision) -> None:
    s = st.s
    side = st.e.data["side"]
    st.arrived(side)
    s = st.s
    opponent = other(side)
    if s.offer_pending == opponent:
        st.end("1/2-1/2", st.art("draw_agreement"), "both sides offered a draw: agreed")
        return
    if s.offer_pending == side:
        return  # the same offer again: it stands until answered (not withdrawn, 23.1)
    # 23.1 (2021: 22.1): offer after one's own move, before pressing the clock.
    just_moved = bool(s.moves) and s.moves[-1].side == side and s.sides[side].moved
    if not just_moved:
        st.ruling("warning", side, st.art("draw_offer_rule"),
                  f"{side} offered a draw out of order: an offer is made after one's own move and before pressing "
                  f"the clock")
    n = s.sides[side].offers + 1
    prev = s.last_offer
    st.record(DrawOffered(side))
    margin = s.cfg.draw_offer_foul_margin
    if margin is not None:
        against = s.sides[opponent].offers
        if n - against >= margin:
            st.foul(side, st.art("foul_draw_offers"), f"{side} has offered a draw {n} times against {against}")
    elif prev is not None and prev[0] == side and prev[1]:
        st.foul(side, st.art("foul_draw_offers"), f"{side} offered a draw again after it was refused")


def _draw_answered(st: _Decision) -> None:
    s = st.s
    side, accepted = st.e.data["side"], st.e.data["accepted"]
    if s.offer_pending != other(side):
        st.attention(f"{side} answered a draw offer, but no offer of {other(side)} is pending")
        return
    if accepted:
        st.end("1/2-1/2", st.art("draw_agreement"), f"{other(side)} offered a draw and {side} accepted")
    else:
        st.record(DrawRefused(other(side)))


def _natural_limit(st: _Decision) -> None:
    s = st.s
    side = st.e.data["side"]
    cfg = s.cfg
    try:
        count = natural_limit_count(s.hist_positions, s.hist_moves, side, ruleset=cfg.ruleset, rapid=cfg.rapid,
                                    rounds=cfg.limit_rounds, checks_cap=cfg.checks_cap)
    except (HistoryError, ValueError) as exc:
        st.attention(f"natural-limit claim by {side} cannot be checked: {exc}")
        return
    if count.reached:
        st.end("1/2-1/2", st.art("draw_natural"), f"{side}'s claim checked: {count.reason}")
        return
    # False claim (2021 8.1.4 / 4.1.11; 2011 9.1.4; rapid play-off: a loss).
    earlier = sum(1 for who, stage in s.false_claims if who == side and stage == count.stage_start)
    st.record(FalseClaimMade(side, count.stage_start))
    to_lose = cfg.false_claims_to_lose
    if to_lose is not None and earlier + 1 >= to_lose:
        st.lose(side, "false_claim_loss",
                f"false natural-limit claim number {earlier + 1} in this stage: {count.reason}", rapid_rule=cfg.rapid)
        return
    st.foul(side, st.art("foul_false_claim"), f"false natural-limit claim: {count.reason}")
    clock = st.s.clock.settle(st.t).add(side, -cfg.false_claim_penalty_ms)
    st.record(ClockChanged(clock))
    st.ruling("correction", side, st.art("claim_rule"), f"five minutes taken off {side}'s clock for the false claim")
    if clock.remaining(side, st.t) <= 0:
        st.lose(side, "flag", f"the five-minute penalty for the false claim used up {side}'s time")


def _resigned(st: _Decision, just_fouled: str | None) -> None:
    side = st.e.data["side"]
    s = st.s
    if just_fouled == side and s.cfg.ruleset == "cxa-2021":
        # 8.2: the offender resigned at once after the foul: the foul may be waived.
        fouls = s.fouls
        for i in range(len(fouls) - 1, -1, -1):
            if fouls[i].side == side and not fouls[i].waived:
                st.record(FoulWaived(i))
                st.ruling("correction", side, st.art("waiver"),
                          f"{side} resigned at once after the foul ({fouls[i].article}): the foul is waived")
                break
    st.lose(side, "resign", f"{side} resigned")


def _foul_reported(st: _Decision) -> None:
    d = st.e.data
    if not d["article"]:
        st.attention("FoulReported without an article")
        return
    st.foul(d["side"], d["article"], d.get("note") or f"foul reported by the arbiter ({d['article']})")


def _arbiter_decision(st: _Decision) -> None:
    d = st.e.data
    result, article, note = d["result"], d["article"], d.get("note") or ""
    action = d.get("action") or ""
    if action == SIGN_OFF:
        st.attention("ArbiterDecision sign_off before the game has ended: the scoresheet is signed once the result "
                     "stands (9); not applied")
        return
    if result in RESULTS:
        if st.s.repetition_alert is not None:
            st.record(RepetitionAlertChanged(None))
        if st.s.limit_alert is not None:
            st.record(LimitAlertClosed())
        st.end(result, article, note or f"arbiter's decision ({article}){_claimed(st)}")
        return
    if result:
        st.attention(f"ArbiterDecision result {result!r} is not one of {', '.join(RESULTS)}")
        return
    if action:
        if action not in REPETITION_ACTIONS:
            st.attention(f"ArbiterDecision action {action!r} is not one of {', '.join(REPETITION_ACTIONS)}")
            return
        named, s = d.get("alert") or "", st.s
        if named and watch_mod.holds(s.watch, named):
            _watch_answer(st, named, action)
            return
        if (named and named == s.limit_alert) or (not named and s.repetition_alert is None
                                                  and s.limit_alert is not None and action != "vary"):
            _limit_action(st, action, note)
            return
        _repetition_action(st, action, article, note)
        return
    pending_article = st.art("pending_position")
    if article == pending_article or article.startswith(pending_article + "."):
        _judge_pending(st, article)
        return
    if article.startswith("5.6"):
        # 5.6: obviously accidental contact is no touch: the arbiter clears the touches of the side to move.
        side = st.s.position.side
        st.record(TouchesCleared(side))
        st.ruling("correction", side, article, note or f"{side}'s touches were accidental contact: no obligation")
        if st.s.last_seen is not None:
            _judge_board(st, st.s.last_seen)  # the board may show a move that the touches had held back
        return
    st.ruling("warning", None, article, note or f"arbiter's note ({article})")


def _position_restored(st: _Decision) -> None:
    d = st.e.data
    s = st.s
    article = d["article"] or st.art("restore")
    try:
        target = Position.from_fen(d["fen"])
    except FenError as exc:
        st.attention(f"PositionRestored with a bad FEN: {exc}")
        return
    tsq, tside = target.squares(), target.side
    st.record(BoardRestored())
    if tsq == s.squares and tside == s.position.side:
        return  # the accepted position, confirmed
    # 5.8.2: back to a position before the error (within five rounds): the later moves are cancelled.
    for back in range(1, min(RESTORE_WINDOW_PLIES, len(s.hist_moves)) + 1):
        p = s.hist_positions[-1 - back]
        if p.squares() == tsq and p.side == tside:
            cancelled = [m.move.iccs for m in s.moves[-back:]]
            st.record(MovesTakenBack(s.ply - back))
            st.record(TouchesCleared(tside))  # 5.8.2: the side to move may choose any move
            # (the ply named is counted from the position restored to, as the ledger's rulings have it)
            st.ruling("correction", None, article,
                      f"position restored to before ply {st.s.ply - back + 1}; cancelled: {' '.join(cancelled)}")
            return
    for m in s.legal:  # the arbiter's position is one move on: that move was made
        if s.position.play(m).squares() == tsq and tside != s.position.side:
            _accept_move(st, m)
            return
    st.record(PositionSet(target))
    st.ruling("correction", None, article, f"position set by the arbiter: {target.fen()}")


def _camera_fault(st: _Decision) -> None:
    st.attention(f"camera fault: {st.e.data.get('reason', '')}: watch this board")


def _hand_entered(st: _Decision) -> None:
    # 20.1: a hand over the board in a side's own time shows that side is at the board.
    running = st.s.clock.running
    if running is not None:
        st.arrived(running)
    _hand_seen(st)


def _hand_seen(st: _Decision) -> None:
    """The first sign since the position last changed that a move may be under way (for 8.1.7's timing)."""
    if st.s.view.hand_seen_at is None:
        st.made(HandSeen, st.t)


def _ignore(st: _Decision) -> None:
    return


def _watch(st: _Decision) -> None:
    """A ClockCheck (the service's timer: a flag about to fall, 4.1.6) or a CameraQuiet: watch.py decides."""
    new, alert = watch_mod.on_input(st.s, st.e, output_id(st.e.event_id, len(st.outs)), st.art("flag"))
    if new != st.s.watch:
        st.record(WatchChanged(new))
    if alert is not None:
        st.emit("AttentionNeeded", evidence=st.evidence(), **alert)


def _watch_answer(st: _Decision, alert: str, action: str) -> None:
    new, problem = watch_mod.answer(st.s.watch, alert, action)
    if problem is not None:
        st.attention(problem)
        return
    st.record(WatchChanged(new))


_EVOLVE = EVOLVE  # (a module global of its own: read per fact)
_new = tuple.__new__
_RESULT = GameState._fields.index("result")  # (read per input: by position, not through the class's descriptor)

_HANDLERS: dict[str, Callable[[_Decision], None]] = {
    "BoardStable": _board_stable,
    "PieceLifted": _lifted,
    "PieceNudged": _nudged,
    "PiecePlaced": _hand_seen,
    "PieceMisaligned": _misaligned,
    "PointDesignated": _designated,
    "TouchReported": _touch_reported,
    "HandEntered": _hand_entered,
    "HandLeft": _ignore,
    "BoardCalibrated": _ignore,
    "FrameCaptured": _ignore,
    "CameraFault": _camera_fault,
    "ClockPressed": _clock_pressed,
    "ClockPaused": _clock_paused,
    "ClockResumed": _clock_resumed,
    "ScoresheetEntry": _scoresheet,
    "DrawOffered": _draw_offered,
    "DrawAnswered": _draw_answered,
    "NaturalLimitClaimed": _natural_limit,
    "Resigned": _ignore,  # dispatched in apply(): 8.2 needs to know whether a foul came just before
    "FoulReported": _foul_reported,
    "ArbiterDecision": _arbiter_decision,
    "PositionRestored": _position_restored,
    **dict.fromkeys(WATCH_INPUTS, _watch),
}

# Observations and device reports after the result are expected (pieces put away, the clock still ticking).
_QUIET_AFTER_RESULT = frozenset({
    "BoardStable", "PieceLifted", "PieceNudged", "PiecePlaced", "PieceMisaligned", "HandEntered", "HandLeft",
    "BoardCalibrated", "FrameCaptured", "CameraFault", "ClockPressed", "ClockPaused", "ClockResumed",
    "ScoresheetEntry", "TouchReported", *WATCH_INPUTS,
})


def _after_result(st: _Decision) -> None:
    """22.5: once a result stands nothing changes it: no flag, no foul; a contradicting action is for an arbiter."""
    e = st.e
    if e.type in ("ClockPressed", "ClockPaused", "ClockResumed"):
        _device(st)
        return
    if e.type == "ScoresheetEntry" and len(st.s.hist_moves) == len(st.s.moves):
        d = e.data
        rec, _ = add_entry(st.s.recording, d["side"], d["ply"], d["text"], st.s.hist_positions, st.s.hist_moves)
        st.record(RecordingChanged(rec))  # 7.3: filling in after the game is allowed
        return
    if e.type in _QUIET_AFTER_RESULT or (e.type == "ArbiterDecision" and e.data.get("action") == SIGN_OFF):
        return  # 9: the arbiter's sign-off of the scoresheet comes after the result and changes nothing
    r = st.s.result
    assert r is not None
    if e.type == "ArbiterDecision" and e.data.get("article") in PENALTIES and e.data.get("result") in (
            "", "continue", r.result):
        return  # 18.1, 18.2: a penalty given after the game is the tournament's (18.5), not the game's to change
    st.attention(f"{e.type} after the result already stands ({r.result}, {r.article}: {r.reason}); not applied")

