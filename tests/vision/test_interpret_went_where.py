"""`interpret` where a piece left and no ink reads where it arrived: the point that changed most is where it went
only where it changed clearly more than every other point the piece could have gone to, over the change level or
just under it (crafted views, as in test_tracker_interpret)."""

from __future__ import annotations

from test_tracker_interpret import _interpret, _moved, _reading

from xqarb.vision.grid import point_index
from xqarb.vision.tracker import START_SQUARES


def test_a_piece_gone_where_no_ink_reads_beside_a_point_it_could_reach_changed_alike_is_no_definite_move() -> None:
    # The cannon b2-e2 on a washed-out picture: no ink reads at e2, which changed 0.069 (under the level 0.09);
    # b3 beside b2 changed 0.096 (the piece lifted off). b3 alone over the level was taken as where it went:
    # b2-b3, a wrong move. Both are points it could reach, changed alike: unsure, b2 empty.
    known = START_SQUARES
    now = _reading(_moved(known, "b2", "e2"), e2={"occupied": 0.05, "density": 0.01})
    squares, placed, _, _ = _interpret(known, {"b2": 0.5, "b3": 0.17, "e2": 0.13}, _reading(known), now)
    assert squares[point_index("b2")] == "."
    assert squares[point_index("b3")] == "?" and squares[point_index("e2")] == "?"
    assert placed == []


def test_a_piece_gone_where_no_ink_reads_is_where_the_change_is_clearly_most() -> None:
    # The same with b3 changed 0.102, over 1.5 times e2's 0.063: the cannon went to b3.
    known = START_SQUARES
    now = _reading(_moved(known, "b2", "b3"), b3={"occupied": 0.05, "density": 0.01})
    squares, placed, _, _ = _interpret(known, {"b2": 0.5, "b3": 0.18, "e2": 0.12}, _reading(known), now)
    assert squares == _moved(known, "b2", "b3") and placed == [point_index("b3")]
