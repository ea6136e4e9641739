"""A touch (5.1-5.6) is reported only where what changed on a piece's point is its own top face moved, not a moved
neighbour's shadow or tall body reaching over it: hand-drawn views for the measure, and short rendered videos of
the hard preset where a piece set down or taken up beside another was reported as touching it."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from gamecheck import check_hard_window

from xqarb.vision.occupancy import MARGIN, S
from xqarb.vision.touch import change_off_centre

SIZE = (round((8 + 2 * MARGIN) * S), round((9 + 2 * MARGIN) * S))  # canonical view (width, height)
TOP = 0.45  # a piece's top face's radius, spacings


def _board(seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    w, h = SIZE
    return np.clip(190 + rng.normal(0, 2, (h, w, 3)), 0, 255).astype(np.uint8)


def _disc(view: np.ndarray, uv: tuple[float, float], shade: int, radius: float = TOP) -> None:
    centre = (round((uv[0] + MARGIN) * S), round((uv[1] + MARGIN) * S))
    cv2.circle(view, centre, round(radius * S), (shade, shade, shade), -1)


def test_a_piece_moved_on_its_point_changes_it_about_its_top() -> None:
    # a top face on c3 pushed 0.15 of a spacing across: its change (the crescents it left and covered) is centred
    # half that off where it stood
    ref, view = _board(), _board()
    _disc(ref, (2.0, 3.0), 60)
    _disc(view, (2.15, 3.0), 60)
    off = change_off_centre(view, ref, np.array([2.0, 3.0]))
    assert 0.05 <= off <= 0.1, off
    assert off < 0.25


def test_a_neighbour_s_shadow_changes_one_side_of_a_piece() -> None:
    # the same top face unmoved, and a tall neighbour set down on d3 whose shadow falls over c3's right half
    ref, view = _board(), _board()
    _disc(ref, (2.0, 3.0), 60)
    _disc(view, (2.0, 3.0), 60)
    shadow = view.copy()
    _disc(shadow, (2.75, 3.0), 30, radius=0.5)
    view = cv2.addWeighted(view, 0.5, shadow, 0.5, 0)
    _disc(view, (3.0, 3.0), 90)
    assert change_off_centre(view, ref, np.array([2.0, 3.0])) >= 0.25


def test_nothing_changed_is_centred() -> None:
    ref = _board()
    assert change_off_centre(ref.copy(), ref, np.array([4.0, 4.0])) == 0.0


@pytest.mark.parametrize(("k", "from_ply", "plies"), [
    # Tall pieces under a low sun, seen steeply: the cannon h2-e2 set down in front of the pawn e3 (its outline had
    # been found 0.47 off, on a shadow's rim, on the last still board)
    (36, 0, 2),
    # the black rook a8-d8 taken up beside the cannon b7; the cannon's outline found 0.13 towards a8 after
    (110, 9, 1),
    # the horse b0-c2 taken up beside the rook a0, whose top the horse's shadow had darkened on its right
    (137, 10, 1),
])
def test_a_piece_set_down_or_taken_up_beside_another_is_no_touch(shared_data: Path, k: int, from_ply: int,
                                                                  plies: int) -> None:
    r = check_hard_window(shared_data, k, from_ply, plies)
    assert (r.inferred_ok, r.moves, r.false_touches, r.false_lifts) == (plies, plies, 0, 0), r.false_touched
