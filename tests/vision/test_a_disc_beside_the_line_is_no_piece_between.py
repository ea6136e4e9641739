"""A piece left between two points (5.10) stands on the line joining them, its top face's round outline centred
half-way along it: seen from each point, that outline lies half-way towards the other and within a few hundredths of
the line. A disc seen a quarter spacing or more to the side of the line (a piece set down near one point, its
shadow, the board's print) is no piece between the two."""

from __future__ import annotations

from pathlib import Path

import pytest
from gamecheck import check_hard_window


@pytest.mark.parametrize(
    ("k", "from_ply", "plies"),
    [
        # a taker on h7, a disc seen from g7 0.35 along and 0.29 across the line g7-h7 (from h7 0.58 along, 0.23
        # across): read as the taker left between g7 and h7
        (168, 15, 2),
    ],
)
def test_a_disc_seen_to_the_side_of_the_line_is_no_piece_between(shared_data: Path, k: int, from_ply: int,
                                                                 plies: int) -> None:
    r = check_hard_window(shared_data, k, from_ply, plies)
    assert (r.inferred_ok, r.moves, r.wrong_inferred) == (plies, plies, 0), r.wrong
    assert r.misaligned_false_pairs == [], r.misaligned_false_pairs
    assert (r.false_touches, r.false_lifts) == (0, 0)
