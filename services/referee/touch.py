"""摸子 (touch-move), articles 5.1-5.6, and the 8.1.5 fouls, as pure functions on a position and its touches.

A touch is a point a side touched in the current turn (a lift or nudge the camera saw, or a TouchReported). What
the touches oblige is decided at the move, from the first own piece and the first opponent piece touched and
their order:
- 5.1 own piece only: move it, unless it cannot move;
- 5.2 opponent piece only: capture it, unless no own piece can;
- 5.3 own first, then opponent: (1) the first captures the second, else (2) the first moves, else (3) another
  piece captures the second, else (4) free;
- 5.4 opponent first, then own (5.5 both at once likewise): (1) the own piece captures the first, else (2) another
  piece captures it, else (3) the own piece moves, else (4) free.
8.1.5 (2011: 9.1.5 / 9.1.6): touching an own piece that cannot move, or an opponent piece no own piece can capture.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xqarb.referee.rules import Move, Position


@dataclass(frozen=True, slots=True)
class Touch:
    point: str
    own: bool  # the toucher's own piece
    letter: str  # the piece touched (FEN letter)
    at: int  # occurred_at, µs
    event_id: str

    def to_json(self) -> dict[str, object]:
        return {"point": self.point, "own": self.own, "piece": self.letter}


@dataclass(frozen=True, slots=True)
class Obligation:
    """The moves the touches allow (`allowed`; None = any move) and the article and words for the arbiter."""

    article: str
    allowed: frozenset[Move] | None
    text: str

    def met_by(self, move: Move) -> bool:
        return self.allowed is None or move in self.allowed

    def to_json(self) -> dict[str, object]:
        return {
            "article": self.article,
            "text": self.text,
            "allowed": None if self.allowed is None else sorted(m.iccs for m in self.allowed),
        }


def moves_of(position: Position, point: str) -> frozenset[Move]:
    """The legal moves of the piece on `point` (a touched own piece's, 5.1)."""
    return frozenset(position.legal_moves_from(point))


def captures_of(position: Position, point: str) -> frozenset[Move]:
    """The side to move's legal moves that capture on `point` (a touched opponent piece's, 5.2)."""
    return frozenset(m for m in position.legal_moves() if m.to == point)


def touch_foul(position: Position, touch: Touch) -> str | None:
    """Why a touch is an 8.1.5 foul, or None: an own piece with no legal move, an opponent piece none can take."""
    if touch.own and not position.has_legal_move_from(touch.point):
        return f"touched own piece {touch.letter} on {touch.point}, which has no legal move"
    if not touch.own and not captures_of(position, touch.point):
        return f"touched opponent piece {touch.letter} on {touch.point}, which no own piece can capture"
    return None


def _first_touched(position: Position, touches: Sequence[Touch]) -> tuple[Touch | None, Touch | None]:
    """The first own and the first opponent piece touched that still stand where they were touched."""
    own = next((t for t in touches if t.own and position.piece_at(t.point) == t.letter), None)
    opp = next((t for t in touches if not t.own and position.piece_at(t.point) == t.letter), None)
    return own, opp


def unmet_obligation(position: Position, touches: Sequence[Touch], move: Move) -> Obligation | None:
    """The obligation of the touches (5.1-5.5) that the legal `move` does not honour, or None."""
    if not touches:
        return None
    own, opp = _first_touched(position, touches)
    if opp is None and own is not None and move.frm == own.point:
        return None  # 5.1: the touched piece moved (the most common touch: the camera saw the mover lift it)
    ob = _obligation_of(position, own, opp)
    return ob if ob is not None and not ob.met_by(move) else None


def obligation(position: Position, touches: Sequence[Touch]) -> Obligation | None:
    """What the side to move must do because of its touches (5.1-5.5), or None when it is free."""
    return _obligation_of(position, *_first_touched(position, touches))


def _obligation_of(position: Position, own: Touch | None, opp: Touch | None) -> Obligation | None:
    """The obligation of the first own and the first opponent piece touched (`_first_touched`)."""
    if own is None and opp is None:
        return None
    if opp is None:
        assert own is not None
        mv = moves_of(position, own.point)
        if mv:
            return Obligation("5.1", mv, f"must move the touched {own.letter} on {own.point}")
        return None  # 5.1: it cannot move, so another piece may (the touch itself is an 8.1.5 foul)
    if own is None:
        cap = captures_of(position, opp.point)
        if cap:
            return Obligation("5.2", cap, f"must capture the touched {opp.letter} on {opp.point}")
        return None
    own_moves = moves_of(position, own.point)
    caps = captures_of(position, opp.point)
    first_captures = own_moves & caps
    simultaneous = own.at == opp.at
    if own.at < opp.at:  # 5.3: own piece first, then the opponent's
        if first_captures:
            return Obligation("5.3.1", first_captures, f"the {own.letter} on {own.point} must capture {opp.point}")
        if own_moves:
            return Obligation("5.3.2", own_moves, f"the {own.letter} on {own.point} must move")
        if caps:
            return Obligation("5.3.3", caps, f"another piece must capture the {opp.letter} on {opp.point}")
        return None  # 5.3.4
    # 5.4: opponent's piece first; 5.5: both at once, handled as 5.4.
    def art(n: int) -> str:
        return "5.5" if simultaneous else f"5.4.{n}"

    if first_captures:
        return Obligation(art(1), first_captures, f"the {own.letter} on {own.point} must capture {opp.point}")
    if caps:
        return Obligation(art(2), caps, f"another piece must capture the {opp.letter} on {opp.point}")
    if own_moves:
        return Obligation(art(3), own_moves, f"the {own.letter} on {own.point} must move")
    return None  # 5.4.4
