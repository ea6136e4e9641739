"""A move whose piece washes out where it stands (glare over a pale top face) changes its point no more than the light
does: no ink and no change tell where it went. What still tells: the piece's round outline come where it could go
(flat pieces), and, for tall pieces seen steeply (through the plane of the top faces, tops.py), its side wall, which
reaches over the neighbour on the camera's side of where its top face stands and so changes that neighbour as the
piece comes or goes. Lost, such a move leaves every later still board fitting no move."""

from __future__ import annotations

from pathlib import Path

import pytest
from gamecheck import check_hard_window


@pytest.mark.parametrize(
    ("k", "from_ply", "plies"),
    [
        # flat pieces under full glare: the knight h9-g7, g7 changed 0.009 under the board's median 0.016, its outline
        # rose 0.25 -> 0.49 (most on the board) while h9's fell 0.84 -> 0.38; the edge point h9 was read pushed and
        # kept its knight (3/20 of the game followed)
        (589, 3, 1),
        # tall pieces seen steeply: the knight b0-a2, its top face pale; b0 still read a piece (the rook a0's side
        # wall over it), a2 no ink, and the cannon b2 beside a2 changed under the knight's side wall: no move read
        # (10/20 of the game followed)
        (243, 0, 9),
        # the rook h6-g6 into glare, away from the camera: its side wall now over h6, the pawn i6 beside h6 changed
        # as the wall over it left, read as the rook taking it (h6xi6, a wrong move)
        (243, 15, 2),
    ],
)
def test_a_washed_out_move_is_read_by_its_outline_or_its_side_wall(shared_data: Path, k: int, from_ply: int,
                                                                  plies: int) -> None:
    r = check_hard_window(shared_data, k, from_ply, plies)
    assert (r.inferred_ok, r.moves, r.wrong_inferred) == (plies, plies, 0), r.wrong
