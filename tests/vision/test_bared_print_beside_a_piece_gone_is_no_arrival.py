"""A piece lifted off a point changes what the view shows about it: the board's printed lines its body hid are bared
beside it, and read as ink; the round outlines about it shift. Neither is a piece come to those points. A piece that
arrived shows its own round outline where its ink reads, and where an outline alone tells the arrival, it rose there
more than at any other point the piece could go to."""

from __future__ import annotations

from pathlib import Path

import pytest
from gamecheck import check_hard_window


@pytest.mark.parametrize(
    ("from_ply", "plies"),
    [
        # tall pieces seen from the side: the rook in the corner a0 took the black pawn on a5 (ply 16), whose point
        # still read black. The corner's double frame line, bared at a1, read 1.0 occupied (its ink 0.06 -> 0.31)
        # where no outline stood (0.15, the standing pieces' median 0.75): read as the rook gone to a1
        (11, 6),
        # the same capture, the tracker's history from five plies earlier: b0's printed marks' outline rose
        # 0.38 -> 0.43 (a2's, which the rook could also reach, by 0.06) and stood for the rook's arrival: a0-b0
        (10, 7),
    ],
)
def test_a_corner_piece_that_took_is_not_read_gone_beside_its_point(shared_data: Path, from_ply: int,
                                                                     plies: int) -> None:
    r = check_hard_window(shared_data, 235, from_ply, plies)
    assert r.wrong_inferred == 0, r.wrong
    assert (r.inferred_ok, r.moves, r.false_touches, r.false_lifts) == (plies, plies, 0, 0), r.wrong


def test_a_piece_set_down_beside_the_point_it_left_is_its_arrival(shared_data: Path) -> None:
    """The other side of the rule above: the black cannon e7 went to f7, set down off its point towards f6, under
    glare (its ink 0.01 -> 0.14, read 0.26 occupied). No round outline stands centred on f7 (0.40 against the
    standing pieces' 0.88), but the one about it rose: that is where it went. Asking for an outline centred on the
    point read it gone to d7 instead, a wrong move."""
    r = check_hard_window(shared_data, 318, 8, 11)  # (from ply 12 on, the tracker reads the move either way)
    assert r.wrong_inferred == 0, r.wrong
    assert (r.inferred_ok, r.moves, r.false_touches, r.false_lifts) == (11, 11, 0, 0), r.wrong
