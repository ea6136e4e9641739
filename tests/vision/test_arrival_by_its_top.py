"""A tall piece set down shows its characters on its top face, centred on its point, while its side wall and
shadow reach over the neighbouring point and raise a round outline there: where the ink plainly stands on the point
the piece went to, the outline rising beside it does not move the arrival there."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gamecheck import check_hard_window
from readings import crafted_reading

from xqarb.vision.grid import point_index
from xqarb.vision.interpret import _inked_on

H5, H4 = point_index("h5"), point_index("h4")


def test_ink_centred_on_the_arrival_keeps_it_there() -> None:
    # the rook h9-h5: its characters read plainly on h5 (0.98, 0.09 off); h4, under its side wall, reads 0.62 with
    # the ink's peak 0.64 off towards h5
    reading = crafted_reading({"h5": 0.98, "h4": 0.62}, {"h5": (0.09, 0.0), "h4": (0.16, -0.62)})
    assert _inked_on(reading, np.zeros(2), H5, over=H4)


def test_ink_leaning_over_from_a_neighbour_moves_nothing() -> None:
    # the arrival's ink read on h5 lies well off it (a neighbour's edge read as ink): the outline decides
    reading = crafted_reading({"h5": 0.98, "h4": 0.3}, {"h5": (0.0, 0.45)})
    assert not _inked_on(reading, np.zeros(2), H5, over=H4)


def test_the_parallax_shared_by_all_pieces_is_no_lean() -> None:
    # every top face seen 0.3 up the picture (a steep camera, tall pieces): h5's ink 0.3 off is centred on its top
    reading = crafted_reading({"h5": 0.95}, {"h5": (0.0, -0.3)})
    assert _inked_on(reading, np.array([0.0, -0.3]), H5, over=H4)
    assert not _inked_on(reading, np.zeros(2), H5, over=H4)


def test_both_points_plainly_inked_tell_nothing() -> None:
    reading = crafted_reading({"h5": 0.95, "h4": 0.9}, {})
    assert not _inked_on(reading, np.zeros(2), H5, over=H4)


def test_a_faint_arrival_is_left_to_the_outlines() -> None:
    reading = crafted_reading({"h5": 0.6}, {})
    assert not _inked_on(reading, np.zeros(2), H5, over=H4)


@pytest.mark.parametrize(
    ("k", "from_ply", "plies"),
    [
        # outdoor sun over a board seen steeply with tall pieces: the rook h9-h5, whose side wall raised a round
        # outline on h4, was read as h9-h4 (a legal move, inferred wrongly) where the video starts two moves before it
        (120, 12, 2),
        # tall pieces seen steeply: the rook a0-a1, its outline rising more on a2, was read as a0-a2 (inferred
        # wrongly; over the whole game, 13 of 20 moves followed)
        (139, 11, 2),
    ],
)
def test_a_tall_rook_s_arrival_is_read_where_its_top_is(shared_data: Path, k: int, from_ply: int, plies: int) -> None:
    r = check_hard_window(shared_data, k, from_ply, plies)
    assert (r.inferred_ok, r.moves, r.wrong_inferred) == (plies, plies, 0), r.wrong
