"""Finding the board: markerless grid fits and ArUco fits on drawn boards, orientation, faults."""

from __future__ import annotations

import json
import subprocess
import sys

import cv2
import numpy as np
import pytest
from synthetic import START_SQUARES, draw_board

from xqarb.vision.board import NoBoardFound, _lattice_1d, find_board
from xqarb.vision.grid import POINTS_UV, apply_h, board_to_image, line_supports, point_index, point_name
from xqarb.vision.occupancy import read_points
from xqarb.vision.render import random_scene, render_position, squares_from_fen

CASES = [
    # seed, tilt, roll, camera on a short side, line colour (BGR), fill
    (3, 8.0, 2.0, True, (30, 30, 150), 0.8),
    (5, 22.0, 10.0, False, (30, 30, 150), 0.8),
    (6, 28.0, 13.0, False, (40, 40, 200), 0.62),
    (9, 34.0, -5.0, True, (40, 40, 40), 0.6),
]


def test_point_names_round_trip() -> None:
    assert point_name(0) == "a9" and point_name(89) == "i0" and point_name(point_index("e0")) == "e0"
    with pytest.raises(ValueError):
        point_index("j0")


@pytest.mark.parametrize(("seed", "tilt", "roll", "short", "colour", "fill"), CASES)
def test_grid_found_without_markers(seed, tilt, roll, short, colour, fill) -> None:
    d = draw_board(START_SQUARES, seed=seed, tilt=tilt, rotate=roll, short_side=short, line_colour=colour, fill=fill)
    fit = find_board(d.image, markers=False)
    assert fit.method == "grid"
    # oriented by the palaces: a9 is a9, not i0
    err = np.abs(fit.points - d.points).max()
    assert err < 3.0, f"points off by up to {err:.1f} px"
    squares = read_points(d.image, fit).squares()
    want = "".join("." if c == "." else ("X" if c.isupper() else "x") for c in START_SQUARES)
    wrong = [point_name(i) for i in range(90) if squares[i] != want[i]]
    assert len(wrong) <= 2, f"points read wrong: {wrong}"


def test_markers_give_the_board_and_its_orientation() -> None:
    # a black piece in Red's palace and vice versa would fool the palace vote: the markers decide
    d = draw_board(START_SQUARES, seed=11, tilt=25, rotate=170, markers=True, fill=0.7)
    fit = find_board(d.image)
    assert fit.method == "aruco"
    assert np.abs(fit.points - d.points).max() < 3.0


def test_no_board_in_clutter_or_black() -> None:
    rng = np.random.default_rng(1)
    clutter = rng.integers(0, 255, (720, 1280, 3), dtype=np.uint8)
    clutter = cv2.GaussianBlur(clutter, (0, 0), 3)
    with pytest.raises(NoBoardFound):
        find_board(clutter)
    with pytest.raises(NoBoardFound) as info:
        find_board(np.zeros((720, 1280, 3), np.uint8))
    assert info.value.reason


def test_cli_detect_json_and_no_board(tmp_path) -> None:
    d = draw_board(START_SQUARES, seed=5, tilt=22, rotate=10, line_colour=(30, 30, 150))
    img = tmp_path / "board.jpg"
    cv2.imwrite(str(img), d.image, [cv2.IMWRITE_JPEG_QUALITY, 90])
    out = subprocess.run([sys.executable, "-m", "xqarb.cli", "vision", "detect", str(img), "--json"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert len(got["squares"]) == 90 and len(got["corners"]) == 4
    assert np.abs(np.array(got["corners"]) - d.corners).max() < 3.0
    assert sum(c != "." for c in got["squares"]) >= 30
    out = subprocess.run([sys.executable, "-m", "xqarb.cli", "vision", "detect", str(img)],
                         capture_output=True, text=True, timeout=120)
    lines = out.stdout.splitlines()
    assert out.returncode == 0 and all(len(row) == 9 for row in lines[:10]) and lines[10].startswith("corners:")
    blank = tmp_path / "blank.png"
    cv2.imwrite(str(blank), np.full((480, 640, 3), 200, np.uint8))
    out = subprocess.run([sys.executable, "-m", "xqarb.cli", "vision", "detect", str(blank)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "no board" in out.stderr


# ---------------------------------------------------------------------------------------------------------------
# Scenes of the project's renderer (the scenes of gamecheck's first frames) that the markerless fit got wrong or
# missed before it fitted net by net, direction by direction, and polished and checked its lattices

RENDER_START = squares_from_fen("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1")
RENDER_SPARSE = squares_from_fen("3k5/4a4/4b4/9/2p6/9/6P2/4B4/4A4/2R1K4 w - - 0 1")


def _local_spacing(points: np.ndarray) -> np.ndarray:
    """Per point, the distance to its nearest orthogonal neighbour in the image."""
    p = points.reshape(10, 9, 2)
    sp = np.full((10, 9), np.inf)
    dx = np.linalg.norm(np.diff(p, axis=1), axis=2)
    dy = np.linalg.norm(np.diff(p, axis=0), axis=2)
    sp[:, :-1] = np.minimum(sp[:, :-1], dx)
    sp[:, 1:] = np.minimum(sp[:, 1:], dx)
    sp[:-1, :] = np.minimum(sp[:-1, :], dy)
    sp[1:, :] = np.minimum(sp[1:, :], dy)
    return sp.reshape(90)


RENDERED_CASES = [
    # difficulty, seed, position, what made it hard (and what the old fit did)
    ("hard", 1003, RENDER_START, "a ruled score sheet beside a small board (its lines were taken for the grid)"),
    ("hard", 1044, RENDER_START, "a striped tablecloth, tilt 32 (the stripes swamped the line families)"),
    ("hard", 1055, RENDER_START, "a checked tablecloth, tilt 25 (no lattice found)"),
    ("hard", 1168, RENDER_START, "a small board on wood grain (the fit was a line off and stretched)"),
    ("hard", 1022, RENDER_START, "the next board cut by the frame's edge, tilt 28 (no lattice found)"),
    ("easy", 1031, RENDER_START, "seen from a short side, pieces along both edge files (no lattice found)"),
    # a sparse board (few pieces, long bare lines): found before too; kept because `vision detect` once missed it
    ("plain", 3, RENDER_SPARSE, "a sparse board"),
]


@pytest.mark.parametrize(("difficulty", "seed", "squares", "what"), RENDERED_CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in RENDERED_CASES])
def test_rendered_hard_scenes_fit_every_point(difficulty, seed, squares, what) -> None:
    shot = render_position(squares, random_scene(seed, difficulty=difficulty))
    fit = find_board(shot.image)
    # every point within a quarter of the spacing where it stands, a9 where a9 is (Red's side told by the pieces)
    err = np.linalg.norm(fit.points - shot.points, axis=1) / _local_spacing(shot.points)
    assert err.max() < 0.25, f"{what}: worst point {point_name(int(err.argmax()))} off by {err.max():.2f} spacing"


def test_two_complete_boards_in_view_are_refused_with_the_reason() -> None:
    # The next table's board entirely in view beside this one (hard seed 1008): nothing in the picture tells
    # which of the two the camera watches, and the nearer to the middle is here the neighbour's.
    scene = random_scene(1008, difficulty="hard")
    assert scene.board.neighbour is not None
    with pytest.raises(NoBoardFound) as info:
        find_board(render_position(RENDER_START, scene).image)
    assert "2 boards in view" in info.value.reason


def test_lattice_search_takes_a_span_wider_than_the_board() -> None:
    # nine files 37.5 apart, a frame line half a spacing outside each edge file and a stray line a spacing beyond
    files = 389.0 + 37.5 * np.arange(9)
    pos = np.concatenate([files, [files[0] - 19.0, files[-1] + 18.0, files[-1] + 37.0]])
    wts = np.concatenate([np.full(9, 300.0), [800.0, 800.0, 150.0]])
    best, _ = _lattice_1d(pos, wts, 9, 5.0, 170.0)[0]
    assert sorted(best.items()) == [(k, k) for k in range(9)]


def test_line_supports_see_a_lattice_shifted_by_a_line() -> None:
    # a response map with the 19 printed lines of a board; the lattice shifted by one file leaves one line bare
    hb = board_to_image(np.array([[100.0, 80.0], [500.0, 80.0], [500.0, 530.0], [100.0, 530.0]]))
    resp = np.zeros((640, 640), np.float32)
    corners = apply_h(hb, POINTS_UV)
    pts = corners.reshape(10, 9, 2)
    for v in range(10):
        cv2.line(resp, tuple(np.int32(pts[v, 0])), tuple(np.int32(pts[v, 8])), 50.0, 2)
    for u in range(9):
        cv2.line(resp, tuple(np.int32(pts[0, u])), tuple(np.int32(pts[9, u])), 50.0, 2)
    on = line_supports(resp, hb)
    assert on.shape == (19,) and on.min() > 40
    shifted = line_supports(resp, hb @ np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]))
    assert (shifted[10:] < 5).sum() == 1 and (shifted[:10] > 40).all()
