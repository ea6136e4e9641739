"""A hand over the board moves: its fingers and outline change in parts of a fifth of a cell and more from frame to
frame. The camera's noise leaves lone specks, densest on a piece's high-contrast top; specks inside a blob that is
the board's own change (a piece just set down on an edge point, with its shadow) are no hand moving, and the board
is read still once the hand has gone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from gamecheck import check_hard_window

from xqarb.vision.hand import hand_moved
from xqarb.vision.occupancy import S


def _blob() -> np.ndarray:
    mask = np.zeros((11 * S, 10 * S), np.uint8)
    mask[266:336, 100:165] = 1  # about 4,500 pixels: a piece's two points and their shadows at the view's edge
    return mask


def test_a_lone_speck_inside_a_still_blob_is_no_hand_moving() -> None:
    moved = np.zeros_like(_blob())
    moved[282:297, 146:155] = 1  # 135 pixels, 3 % of the blob: the camera's noise on a piece's top
    assert not hand_moved(moved, _blob())


def test_a_hand_s_fingers_moving_in_a_part_a_fifth_of_a_cell_large_move_it() -> None:
    moved = np.zeros_like(_blob())
    moved[280:300, 120:134] = 1  # 280 pixels in one part
    assert hand_moved(moved, _blob())


def test_specks_outside_the_blob_do_not_move_it() -> None:
    moved = np.zeros_like(_blob())
    moved[10:40, 10:40] = 1
    assert not hand_moved(moved, _blob())


def test_a_move_set_down_at_the_edge_under_grainy_jpeg_is_read_before_the_next(shared_data: Path) -> None:
    # a small picture (320 x 240, JPEG quality 58) in sunlight under a plastic sheet: the advisor d0-e1 left a blob
    # over the bottom edge, and the noise on its top at e1 (specks of 100-140 pixels, 2-3 % of the blob) read as a
    # hand moving for the 3 s the board stood still: the pawn g6-g5 fell into the same still board, both lost
    r = check_hard_window(shared_data, 110, 9, 3)
    assert (r.inferred_ok, r.moves, r.wrong_inferred, r.false_touches, r.false_lifts) == (3, 3, 0, 0, 0), r.wrong
