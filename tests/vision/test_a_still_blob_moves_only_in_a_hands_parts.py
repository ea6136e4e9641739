"""A hand over the board moves: its fingers and outline change in parts of a fifth of a cell and more from frame to
frame, and a hand in motion slows in smaller parts as its fingers settle on a piece. The camera's noise leaves lone
specks at random, densest on a piece's high-contrast top: on a blob that stood still over the last frame (the board's
own change, a piece just set down at the view's edge with its shadow, once the hand has gone) they are no hand
moving again, and the board is read still; on a blob that moved over the last frame, small parts still count."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from gamecheck import check_hard_window

from xqarb.vision.hand import hand_moved
from xqarb.vision.occupancy import S
from xqarb.vision.still_board import TrackerState
from xqarb.vision.tracker import Tracker

T0 = 1_000_000
STEP = 250_000  # 4 frames a second


def _blob() -> np.ndarray:
    mask = np.zeros((11 * S, 10 * S), np.uint8)
    mask[266:336, 100:165] = 1  # about 4,500 pixels: a piece's two points and their shadows at the view's edge
    return mask


def _speck() -> np.ndarray:
    moved = np.zeros_like(_blob())
    moved[282:297, 146:155] = 1  # 135 pixels, 3 % of the blob: the camera's noise on a piece's top
    return moved


def _fingers() -> np.ndarray:
    moved = np.zeros_like(_blob())
    moved[280:300, 120:134] = 1  # 280 pixels in one part: a finger moved
    return moved


def _stays(stirred: bool, moved: np.ndarray) -> tuple[TrackerState, bool]:
    state = TrackerState(hand=True, hand_moved_at=T0, hand_stirred=stirred)
    nv = np.zeros(_blob().shape, np.float32)
    return Tracker(move_model=None)._hand_stays(state, _blob(), moved, nv, T0 + STEP, lambda _: None)


def test_a_lone_speck_counts_only_where_every_part_does() -> None:
    assert hand_moved(_speck(), _blob(), 0.0)
    assert not hand_moved(_speck(), _blob(), 0.18)


def test_a_part_a_fifth_of_a_cell_large_moves_the_blob_whatever_the_least_part() -> None:
    assert hand_moved(_fingers(), _blob(), 0.18)


def test_specks_outside_the_blob_do_not_move_it() -> None:
    moved = np.zeros_like(_blob())
    moved[10:40, 10:40] = 1
    assert not hand_moved(moved, _blob(), 0.0)


def test_noise_on_a_blob_that_stood_still_is_no_hand_moving_again() -> None:
    state, _ = _stays(False, _speck())
    assert state.hand_moved_at == T0 and not state.hand_stirred


def test_a_hand_in_motion_keeps_moving_on_small_parts() -> None:
    state, hand = _stays(True, _speck())
    assert hand and state.hand_moved_at == T0 + STEP and state.hand_stirred


def test_a_blob_that_stood_still_moves_again_with_a_hand_s_part() -> None:
    state, hand = _stays(False, _fingers())
    assert hand and state.hand_moved_at == T0 + STEP and state.hand_stirred


def test_a_blob_still_over_a_frame_stops_stirring() -> None:
    state, _ = _stays(True, np.zeros_like(_blob()))
    assert not state.hand_stirred and state.hand_moved_at == T0


def test_a_move_set_down_at_the_view_s_edge_under_grainy_jpeg_is_read_before_the_next(shared_data: Path) -> None:
    # a small picture (320 x 240, JPEG quality 58) in sunlight under a plastic sheet: the advisor d0-e1 left a blob
    # over the bottom edge, which stood still for three frames once the hand had gone; the noise on its top at e1
    # (specks of 100-140 pixels, 2-4 % of the blob) then read as a hand moving again for the 3 s the board stood
    # still: the pawn g6-g5 fell into the same still board, both lost
    r = check_hard_window(shared_data, 110, 9, 3)
    assert (r.inferred_ok, r.moves, r.wrong_inferred, r.false_touches, r.false_lifts) == (3, 3, 0, 0, 0), r.wrong
