"""`interpret` where a piece left and no ink reads where it arrived: the point that changed most is where it went
only where it changed clearly more than every other point the piece could have gone to, over the change level or
just under it (crafted views, as in test_tracker_interpret)."""

from __future__ import annotations

import pytest
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


@pytest.mark.parametrize(
    ("frm", "to", "changed"),
    [
        # The cannon h2-e2, no ink read at e2: d2 beside it changed most (0.136 at the level 0.09), g2 beside the
        # point left next (0.123), e2 itself least (0.117); all three alike.
        ("h2", "e2", {"h2": 0.5, "d2": 0.26, "g2": 0.24, "e2": 0.22}),
        # The rook h0-h4, no ink read at h4: h5 beyond it changed most (0.297: the tall piece's body or the hand),
        # h1 beside the point left next (0.233), h4 itself least (0.127), over the level.
        ("h0", "h4", {"h0": 0.5, "h5": 0.5, "h1": 0.42, "h4": 0.24}),
    ],
)
def test_a_piece_gone_where_no_ink_reads_leaves_unsure_every_point_it_could_be_on_not_only_the_two_most_changed(
    frm: str, to: str, changed: dict[str, float]
) -> None:
    # Where no point clearly changed most, where the piece went is unsure; the point it went to need not be
    # among the two that changed most, so every point alike stays unsure (the rules choose among the moves).
    known = START_SQUARES
    now = _reading(_moved(known, frm, to), **{to: {"occupied": 0.05, "density": 0.01}})
    squares, placed, _, _ = _interpret(known, changed, _reading(known), now)
    assert squares[point_index(frm)] == "."
    assert all(squares[point_index(p)] == "?" for p in changed if p != frm), squares
    assert placed == []
