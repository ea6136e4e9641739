"""Where a piece went, by its look: a piece carries its whole look (top face, side wall, shadow) with it, so the
view about the point it went to shows the look its old point showed on the last still board, and a piece left half-way
shows it at the two points' middle. Where a board's inks wash out and its round outlines are no plainer than its
print (tall pieces seen from the side, their top faces further off their points than the outlines' parallax tells),
the look says what ink and outlines cannot: on which point a piece stands, rather than half-way, and where it went."""

from __future__ import annotations

from pathlib import Path

import pytest
from gamecheck import check_hard_window


@pytest.mark.parametrize(
    ("k", "from_ply", "plies"),
    [
        # tall pieces seen from the side, red ink washed out, outlines as faint as the board's print: the pawn c3-c4
        # (ply 11) reported between c4 and b4 (b4 and b3 changed alike by its look), and the pawn c4xc5 (ply 13),
        # both pawns' inks washed out, not seen at all (12 of 13)
        (38, 0, 13),
        # tall pieces in glare: the cannon b2-b3 (ply 13), its ink read nowhere after, b2 read as touched and then
        # between b2 and a2 (its shadow's leaving changed a2), inferred as b2-a2
        (42, 11, 2),
    ],
)
def test_a_piece_whose_look_is_found_on_a_point_stands_there(shared_data: Path, k: int, from_ply: int,
                                                             plies: int) -> None:
    r = check_hard_window(shared_data, k, from_ply, plies)
    assert (r.inferred_ok, r.moves, r.wrong_inferred) == (plies, plies, 0), r.wrong
    assert r.misaligned_false_pairs == [], r.misaligned_false_pairs
