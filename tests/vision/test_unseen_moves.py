"""A camera that does not see every point: a move with an end out of view is no definite move unless what is seen
shows it plainly (`move_checks.unseen_partners`), judged as the referee judges the snapshot (unseen points '?').

A point out of view gives no evidence: it can neither confirm a move there nor rule one out. Black to move, the
horse h9 gone, so the rook i9 may go to h9 (out of view), i8 or i7; the camera misses h9 and i9.
"""

from __future__ import annotations

import numpy as np
from readings import referee_sees, with_points

from xqarb.referee.rules import Position
from xqarb.vision.grid import point_index
from xqarb.vision.move_checks import unseen_partners
from xqarb.vision.occupancy import PointReading
from xqarb.vision.settings import TrackerConfig

FEN = "rnbakab1r/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR b - - 0 1"
UNSEEN = frozenset({point_index("h9"), point_index("i9")})


def _read(squares: str, **occupied: float) -> PointReading:
    """A clear piece of its colour where `squares` has one, clearly empty elsewhere; `occupied` per point."""
    occ = np.array([0.99 if c not in ".?" else 0.01 for c in squares])
    for name, value in occupied.items():
        occ[point_index(name)] = value
    red = np.array([0.99 if c.isupper() else 0.01 for c in squares])
    return PointReading(occ, red, np.zeros((90, 2)), np.where(occ > 0.5, 0.3, 0.005), red - 0.5)


def test_a_piece_gone_from_an_unseen_point_to_a_dim_point_is_no_definite_move() -> None:
    # The rook i9-h9, wholly out of view; the hand's shade left i8 reading 0.6 occupied, and the reading carried
    # the rook's letter there (i9 read emptied though it is not seen): the referee took i9-i8, a wrong move.
    known = Position.from_fen(FEN).squares()
    read = with_points(known, i9=".", i8="r")
    assert referee_sees(FEN, UNSEEN, known, read) == "move i9i8"  # what the snapshot said before
    squares, placed = unseen_partners(known, read, [point_index("i8")], UNSEEN, _read(read, i8=0.6))
    assert squares == with_points(known, i9=".", i8="?") and placed == []
    assert referee_sees(FEN, UNSEEN, known, squares) == "unchanged"  # no move taken from it: i9-h9 is as likely


def test_a_piece_that_could_have_gone_out_of_view_is_no_definite_move() -> None:
    # The cannon h7 left (seen), and may have gone to h8 (in view, read dimly) or h9 (out of view): not h7-h8.
    known = Position.from_fen(FEN).squares()
    read = with_points(known, h7=".", h8="c")
    squares, placed = unseen_partners(known, read, [point_index("h8")], UNSEEN, _read(read, h8=0.6))
    assert squares == with_points(known, h7=".", h8="?") and placed == []
    assert referee_sees(FEN, UNSEEN, known, squares) == "ambiguous h7h8,h7h9"


def test_an_arrival_from_out_of_view_plainly_seen_reads_as_its_ink() -> None:
    # The rook i9-i8 with i8 plainly holding a dark piece: its type is not carried from the unseen point (x), and
    # the referee finds the one legal move to it.
    known = Position.from_fen(FEN).squares()
    read = with_points(known, i9=".", i8="r")
    squares, _ = unseen_partners(known, read, [point_index("i8")], UNSEEN, _read(read, i8=0.95))
    assert squares == with_points(known, i9=".", i8="x")
    assert referee_sees(FEN, UNSEEN, known, squares) == "move i9i8"


def test_a_move_wholly_in_view_that_cannot_reach_out_of_view_stays_definite() -> None:
    # The cannon b7-e7: both points in view, and from b7 no unseen point is reachable: kept as read, dim or not.
    known = Position.from_fen(FEN).squares()
    read = with_points(known, b7=".", e7="c")
    placed = [point_index("e7")]
    assert unseen_partners(known, read, placed, UNSEEN, _read(read, e7=0.6)) == (read, placed)
    assert referee_sees(FEN, UNSEEN, known, read) == "move b7e7"


def test_with_every_point_in_view_nothing_changes() -> None:
    known = Position.from_fen(FEN).squares()
    read = with_points(known, i9=".", i8="r")
    placed = [point_index("i8")]
    assert unseen_partners(known, read, placed, frozenset(), _read(read, i8=0.6), TrackerConfig()) == (read, placed)
