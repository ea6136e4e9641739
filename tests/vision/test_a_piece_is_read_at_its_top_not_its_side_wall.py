"""A tall piece seen steeply: through the plane of the top faces (tops.py) its top face stands on its point, and its
side wall and the shadow at its foot reach from there towards the camera, as far again as the top leans. Under glare
its top face reads faintly and the side wall's dark band, over the neighbour on the camera's side, reads as its ink:
a piece standing on a point whose top leans over the neighbour's beyond is read on its own point, and a piece that
left is read gone from its own point, not from the neighbour its side wall covered."""

from __future__ import annotations

from pathlib import Path

import pytest
from gamecheck import check_hard_window

from xqarb.vision.grid import point_index
from xqarb.vision.interpret import _along_the_lean
from xqarb.vision.settings import TrackerConfig


def test_the_side_wall_lies_on_the_camera_side_of_the_top() -> None:
    # tops leaning 0.45 of a spacing towards file a (the camera beyond file i): f2's top leans over e2, its side
    # wall over g2
    beyond, near = _along_the_lean(point_index("f2"), (0.0, -0.45, 0.04), TrackerConfig())
    assert (beyond, near) == (point_index("e2"), point_index("g2"))
    # at the board's edge there is no neighbour beyond
    assert _along_the_lean(point_index("a2"), (0.0, -0.45, 0.04), TrackerConfig())[0] is None


def test_a_top_leaning_little_puts_no_side_wall_on_a_neighbour() -> None:
    assert _along_the_lean(point_index("f2"), (0.0, -0.1, 0.05), TrackerConfig()) == (None, None)


@pytest.mark.parametrize(
    ("k", "from_ply", "plies"),
    [
        # the cannon h2-e2 under glare: e2's red characters read 0.24 occupied, f2 (its side wall and foot's shadow)
        # 0.98 and changed the most; g2 beyond did not change: read h2-f2, a wrong move
        (243, 0, 1),
        # the elephant g9-e7, its top face washed out: e7 changed 0.5 of the level, f7 1.45, g7 0.13; read at f7
        # (3/20 of the game followed; the window from the move before, whose still board the elephant is read against)
        (212, 2, 2),
    ],
)
def test_a_piece_whose_top_leans_over_the_neighbour_is_read_on_its_own_point(shared_data: Path, k: int,
                                                                           from_ply: int, plies: int) -> None:
    r = check_hard_window(shared_data, k, from_ply, plies)
    assert (r.inferred_ok, r.moves, r.wrong_inferred) == (plies, plies, 0), r.wrong
