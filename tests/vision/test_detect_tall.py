"""Tall pieces seen at a steep angle: their top faces stand further off their points than detect's disc search
reaches, and the board's common shift is found first (detect.coarse_shift)."""

from __future__ import annotations

import numpy as np
import pytest

from xqarb.vision.board import fit_from_corners
from xqarb.vision.detect import PX, REACH, SHIFT_MIN, TOP_MARGIN, away_from_camera, coarse_shift, read_board
from xqarb.vision.grid import POINTS_UV
from xqarb.vision.pieces import PieceClassifier
from xqarb.vision.render import random_scene, render_position, squares_from_fen
from xqarb.vision.render_hard import HardOptions, harden

START = squares_from_fen("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1")


def _score_with_discs(at: np.ndarray) -> np.ndarray:
    """A disc-score map (top view) with a peak of 1 at each of `at` (spacings) and -0.2 elsewhere (printed lines)."""
    n = round((9 + 2 * TOP_MARGIN) * PX), round((8 + 2 * TOP_MARGIN) * PX)
    score = np.full((n[0] + 1, n[1] + 1), -0.2, np.float32)
    for u, v in at:
        x, y = round((u + TOP_MARGIN) * PX), round((v + TOP_MARGIN) * PX)
        score[y - 2:y + 3, x - 2:x + 3] = 1.0
    return score


def test_coarse_shift_finds_the_tops_common_shift_away_from_the_camera():
    pieces = POINTS_UV[[i for i, ch in enumerate(START) if ch != "."]]
    down = np.array([0.0, 1.0])
    shift = coarse_shift(_score_with_discs(pieces + np.array([0.0, 0.55])), down)
    assert shift == pytest.approx([0.0, 0.56], abs=0.05)  # within a step of the true 0.55 spacing
    # not looked for across the camera's direction (the cells' centres, half a spacing both ways, are the print's)
    assert np.array_equal(coarse_shift(_score_with_discs(pieces + np.array([0.5, 0.5])), down)[0], 0.0)
    small = coarse_shift(_score_with_discs(pieces + np.array([0.0, 0.08])), down)
    assert np.array_equal(small, [0.0, 0.0])  # under SHIFT_MIN: found about the points as before
    assert np.array_equal(coarse_shift(_score_with_discs(pieces + np.array([0.0, 0.55])), None), [0.0, 0.0])


def test_away_from_camera_is_where_the_board_looks_smaller():
    from xqarb.vision.grid import board_to_image

    # Red's side (rank 0, v = 9) near the camera: the far rank 9 is drawn narrower at the top of the picture
    corners = np.array([[400.0, 100.0], [880.0, 100.0], [1000.0, 650.0], [280.0, 650.0]])
    away = away_from_camera(np.linalg.inv(board_to_image(corners)))
    assert away == pytest.approx([0.0, -1.0], abs=0.05)
    square = np.array([[400.0, 100.0], [880.0, 100.0], [880.0, 640.0], [400.0, 640.0]])  # straight above
    assert away_from_camera(np.linalg.inv(board_to_image(square))) is None


def test_tall_pieces_at_fifty_degrees_are_read_on_their_points():
    """Pieces 0.5 of their diameter high, 50 degrees from straight above: the tops stand ~0.5 spacing off."""
    scene = harden(random_scene(1001, difficulty="easy"),
                   HardOptions(piece_height=0.5, wall_shade=0.8, tilt_deg=50.0))
    shot = render_position(START, scene)
    fit = fit_from_corners(shot.corners, "given", 1.0)
    reading = read_board(shot.image, fit, PieceClassifier.load())
    off = np.hypot(*(reading.found - POINTS_UV)[[i for i, ch in enumerate(START) if ch != "."]].T)
    assert np.median(off) > REACH and np.median(off) > SHIFT_MIN  # the case the shift is for
    right = sum(a == b or (b in "Xx" and a.isupper() == (b == "X")) for a, b in zip(START, reading.squares,
                                                                                     strict=True))
    assert right >= 88, reading.squares
