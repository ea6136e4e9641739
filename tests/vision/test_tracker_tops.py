"""Tall pieces seen steeply: the tracker reads its view through the plane of the pieces' top faces (tops.py)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from xqarb.vision.board import fit_from_corners
from xqarb.vision.frames import _view_support
from xqarb.vision.occupancy import POINTS_PX, read_view, warp_board
from xqarb.vision.point_evidence import _line_contrast
from xqarb.vision.render import random_scene, render_position
from xqarb.vision.render_hard import draw_options, harden
from xqarb.vision.settings import TrackerConfig
from xqarb.vision.squares import START_SQUARES
from xqarb.vision.tops import marks_at, measure_tops, tops_h

EMPTY = "." * 90
OCCUPIED = np.array([c != "." for c in START_SQUARES])


def _tall_steep(seed: int, squares: str = START_SQUARES):
    scene = harden(random_scene(seed, difficulty="easy"), draw_options(["tall pieces", "steep camera"], seed))
    frame = render_position(squares, scene)
    return scene, frame, fit_from_corners(frame.corners, "given", 0.0)


@pytest.fixture(scope="module")
def tall_start():
    # (seed 5: tall pieces seen steeply, the camera at Red's end: the tops stand about 0.5 off their points)
    return _tall_steep(5)


def test_tall_pieces_seen_steeply_are_read_on_their_points(tall_start) -> None:
    _, frame, fit = tall_start
    board_view = warp_board(frame.image, fit.homography).bgr
    tops = measure_tops(board_view, fit.homography, TrackerConfig())
    assert tops is not None
    assert 0.3 < float(np.hypot(tops[1], tops[2])) < 0.6
    on_board = read_view(board_view)
    through_tops = read_view(warp_board(frame.image, tops_h(fit.homography, tops)).bgr, tops=tops)
    # (69 of the 90 points' occupancy right on the board's plane, the far ranks' tops off their points; 88 through
    # the tops' plane)
    assert int(((on_board.occupied > 0.5) == OCCUPIED).sum()) <= 75
    assert int(((through_tops.occupied > 0.5) == OCCUPIED).sum()) >= 88
    # the ink peaks: 0.44 off their points in the median on the board's plane, about their points through the tops'
    assert float(np.median(np.hypot(*on_board.offset[OCCUPIED].T))) > 0.35
    assert float(np.median(np.hypot(*through_tops.offset[OCCUPIED].T))) < 0.15


def test_flat_pieces_seen_from_above_keep_the_board_plane() -> None:
    scene = random_scene(3, difficulty="plain")
    frame = render_position(START_SQUARES, scene)
    fit = fit_from_corners(frame.corners, "given", 0.0)
    assert measure_tops(warp_board(frame.image, fit.homography).bgr, fit.homography, TrackerConfig()) is None


def test_too_few_pieces_keep_the_board_plane() -> None:
    _, frame, fit = _tall_steep(4, "....k...." + "." * 72 + "....K....")
    assert measure_tops(warp_board(frame.image, fit.homography).bgr, fit.homography, TrackerConfig()) is None


def test_printed_lines_are_looked_for_where_the_view_through_the_tops_shows_them(tall_start) -> None:
    _, start, fit = tall_start
    tops = measure_tops(warp_board(start.image, fit.homography).bgr, fit.homography, TrackerConfig())
    _, frame, _ = _tall_steep(5, EMPTY)
    board_view = warp_board(frame.image, fit.homography).bgr
    tops_view = warp_board(frame.image, tops_h(fit.homography, tops)).bgr
    plain = _view_support(board_view)
    assert _view_support(tops_view, tops) > 0.8 * plain
    # (looked for where the board's plane has them, the rank lines are missed)
    assert _view_support(tops_view) < 0.2 * plain
    grey = cv2.cvtColor(tops_view, cv2.COLOR_BGR2GRAY).astype(np.float32)
    at = marks_at(POINTS_PX, tops)
    moved = np.median([_line_contrast(grey, i, at=at[i]) for i in range(90)])
    assert moved > 2.0 * np.median([_line_contrast(grey, i) for i in range(90)])
