"""Finding the board: markerless grid fits and ArUco fits on drawn boards, orientation, faults."""

from __future__ import annotations

import json
import subprocess
import sys

import cv2
import numpy as np
import pytest
from synthetic import START_SQUARES, draw_board

from xqarb.vision.board import NoBoardFound, find_board
from xqarb.vision.grid import point_index, point_name
from xqarb.vision.occupancy import read_points

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
