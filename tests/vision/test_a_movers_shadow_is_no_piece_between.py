"""A tall piece's side wall and shadow, cast on one side of where it stands (the light's), darken the empty neighbours
there; their ink peaks lean towards each other as a piece half-way's would. Two points that were both empty hold a
piece between them (5.10) only where the move brought it there, and one piece moves: no pair is reported where the
piece that moved cannot go to either point, stands whole on another point it could go to, or shows its whole look on
a point rather than half-way; those points keep what they were."""

from __future__ import annotations

from pathlib import Path

import pytest
from gamecheck import check_hard_window


@pytest.mark.parametrize(
    ("k", "from_ply", "plies"),
    [
        # low light from one side: the cannon h2-e2 shadows f3 and f2 (0.96 and 0.04 occupied, peaks 0.53 and 0.59
        # towards each other), read as a piece between f2 and f3; the horse h0-g2 shadows h3 and h2, which a horse
        # from h0 cannot reach (read as a piece between h2 and h3)
        (72, 0, 4),
        # the cannon a7-a8 stands whole on a8, its shadow over b8 and b7: read as a piece between them, and b7 as an
        # arrival once that pair was dropped (a7-b7 inferred)
        (62, 16, 2),
    ],
)
def test_a_movers_shadow_over_two_empty_points_is_no_piece_between(shared_data: Path, k: int, from_ply: int,
                                                                   plies: int) -> None:
    r = check_hard_window(shared_data, k, from_ply, plies)
    assert (r.inferred_ok, r.moves, r.wrong_inferred) == (plies, plies, 0), r.wrong
    assert r.misaligned_false_pairs == [], r.misaligned_false_pairs
