"""A camera that does not see every point: a piece read arriving on a point in view from nowhere in view is one of
the pieces that could have come there, from out of view or from a point in view left empty. Where its ink says a
side none of those pieces is on (a dark ink, a shadow over a red piece), the ink's colour is wrong: it is the one
piece that could have come (`move_checks.unseen_partners`)."""

from __future__ import annotations

import numpy as np
from readings import referee_sees, with_points

from xqarb.referee.rules import Position
from xqarb.vision.grid import point_index
from xqarb.vision.move_checks import unseen_partners
from xqarb.vision.occupancy import PointReading

START = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"
UNSEEN = frozenset({point_index("h0"), point_index("i0")})  # the picture cuts Red's right-hand corner


def _dark_at(squares: str, point: str) -> PointReading:
    """Each piece plainly of its colour, `point` plainly holding a piece read surely dark, empty points clear."""
    occ = np.array([0.99 if c not in ".?" else 0.01 for c in squares])
    red = np.array([0.99 if c.isupper() else 0.01 for c in squares])
    occ[point_index(point)], red[point_index(point)] = 0.95, 0.01
    return PointReading(occ, red, np.zeros((90, 2)), np.where(occ > 0.5, 0.3, 0.005), red - 0.5)


def test_an_arrival_read_dark_where_only_a_red_piece_could_come_is_that_piece() -> None:
    # The red horse h0-g2, h0 out of view: g2's ink read surely dark, as a black piece no black piece could bring
    # there; the snapshot fitted no move and every move after it was lost.
    known = Position.from_fen(START).squares()
    read = with_points(known, g2="n")
    squares, placed = unseen_partners(known, read, [point_index("g2")], UNSEEN, _dark_at(read, "g2"))
    assert squares == with_points(known, g2="N") and placed == []
    assert referee_sees(START, UNSEEN, known, squares) == "move h0g2"


def test_an_arrival_where_no_piece_could_come_is_unsure() -> None:
    # e5 read holding a dark piece: no piece out of view reaches it and no point in view was left empty
    known = Position.from_fen(START).squares()
    read = with_points(known, e5="n")
    squares, _ = unseen_partners(known, read, [point_index("e5")], UNSEEN, _dark_at(read, "e5"))
    assert squares == with_points(known, e5="?")


def test_an_arrival_of_the_side_that_could_come_keeps_its_ink() -> None:
    # the black horse h9 left (seen emptied) and a dark piece arrived on g7: both the ink and a mover agree, and
    # with h9 reaching no point out of view the move stands as read
    known = Position.from_fen(START).squares()
    read = with_points(known, h9=".", g7="n")
    placed = [point_index("g7")]
    assert unseen_partners(known, read, placed, UNSEEN, _dark_at(read, "g7")) == (read, placed)
