"""`vision detect --corners`: a board whose four grid corners are given, in any consistent turn, is read in the
standard order; corners that cannot be a board's are refused with the reason (exit 2)."""

from __future__ import annotations

import json
import subprocess
import sys

import cv2
import numpy as np
import pytest

from xqarb.vision.given import BadCorners, check_corners, fit_given_corners, parse_corners
from xqarb.vision.render import random_scene, render_position

# a middle game: pieces on both halves, Red's and Black's palaces occupied (the pieces tell which end is Red)
MIDDLE = "...akabr.......c..c.....n..p...pn..p..b.........R.N...P...P...P..C.C..............NBAKAB.."


@pytest.fixture(scope="module")
def photo(tmp_path_factory):
    shot = render_position(MIDDLE, random_scene(7, difficulty="easy"))
    path = tmp_path_factory.mktemp("given") / "board.jpg"
    cv2.imwrite(str(path), shot.image, [cv2.IMWRITE_JPEG_QUALITY, 90])
    return path, shot


def _detect(path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "xqarb.cli", "vision", "detect", str(path), *extra],
                          capture_output=True, text=True, timeout=120)


def _args(corners: np.ndarray) -> list[str]:
    return [f"{x:.1f},{y:.1f}" for x, y in corners]


@pytest.mark.parametrize("order", [(0, 1, 2, 3), (3, 0, 1, 2), (2, 1, 0, 3)],
                         ids=["a9-first", "a0-first", "i0-first-other-way-round"])
def test_cli_reads_a_board_from_given_corners_in_any_turn(photo, order) -> None:
    path, shot = photo
    # corners as an operator clicks them: a few pixels off
    given = shot.corners[list(order)] + np.array([[2.0, -1.5], [-1.0, 2.5], [1.5, 1.0], [-2.0, -2.0]])
    out = _detect(path, "--corners", *_args(given), "--json")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["squares"] == MIDDLE
    # the corners come out as a9 i9 i0 a0 whatever order they went in, pulled onto the printed lines
    assert np.abs(np.array(got["corners"]) - shot.corners).max() < 1.0


def test_given_corners_turned_a_quarter_are_put_right_by_the_printed_lines(photo) -> None:
    # Starting at i9 with the board's a9 -> i9 side given as the first side makes ranks of the files; the lattice
    # laid that way has no print under it, and the other way is taken (the pieces then tell which end is Red).
    _, shot = photo
    image = cv2.imread(str(photo[0]))
    fit = fit_given_corners(image, shot.corners[[1, 2, 3, 0]])
    assert fit.method == "given" and fit.oriented
    assert np.abs(fit.points - shot.points).max() < 1.0


@pytest.mark.parametrize(("args", "reason"), [
    (["10,10", "200,10", "200,200"], "expected 4 arguments"),
    (["10,10", "200,10", "200,x", "10,200"], "'200,x' is not X,Y"),
    (["10,10", "200,10", "10,200", "200,200"], "cross or fold"),
    (["10,10", "2000,10", "2000,200", "10,200"], "outside the picture"),
])
def test_cli_refuses_corners_that_cannot_be_a_board(photo, args, reason) -> None:
    out = _detect(photo[0], "--corners", *args)
    assert out.returncode == 2 and reason in out.stderr, out.stderr
    assert out.stdout == ""


def _cut_shot(seed: int):
    from xqarb.vision.render_hard import draw_options, harden

    shot = render_position(MIDDLE, harden(random_scene(seed, difficulty="easy"), draw_options(["cut picture"], seed)))
    return cv2.imdecode(cv2.imencode(".jpg", shot.image, [cv2.IMWRITE_JPEG_QUALITY, 90])[1], cv2.IMREAD_COLOR), shot


@pytest.mark.parametrize("seed", [1001, 1038])
def test_corners_outside_a_picture_that_cuts_the_board_are_taken_and_fitted(seed) -> None:
    # a camera framed tight: one or two corners lie outside the picture, the operator gives them where they would be
    image, shot = _cut_shot(seed)
    h, w = image.shape[:2]
    assert ((shot.corners < 0) | (shot.corners > [w, h])).any()
    fit = fit_given_corners(image, shot.corners + np.array([[2.0, -1.5], [-1.0, 2.5], [1.5, 1.0], [-2.0, -2.0]]))
    assert fit.method == "given"
    assert np.abs(fit.points - shot.points).max() < 1.5


def test_corners_that_put_most_of_the_board_outside_the_picture_are_refused() -> None:
    image, shot = _cut_shot(1001)
    h, w = image.shape[:2]
    # the same board moved half a picture to the right: its central files leave the picture
    with pytest.raises(BadCorners, match=r"outside the picture .* central points .* out of it"):
        fit_given_corners(image, shot.corners + np.array([w / 2, 0.0]))
    # two ranks and a file out (the central points in) leave fewer than 70 points in view
    grow = shot.corners + np.array([[-0.2 * w, -0.3 * h], [0.0, -0.3 * h], [0.0, 0.0], [-0.2 * w, 0.0]])
    with pytest.raises(BadCorners, match=r"only \d+ of its 90 points .* needs 70"):
        fit_given_corners(image, grow)


def test_corner_checks_say_what_is_wrong() -> None:
    assert parse_corners(["1,2", " 3.5, 4", "5,6", "7,8e0"]).tolist() == [[1, 2], [3.5, 4], [5, 6], [7, 8]]
    for bad, why in ((["1,2"] * 5, "exactly four"), (["1,2,3", "1,2", "1,2", "1,2"], "not X,Y"),
                     (["nan,2", "1,2", "1,2", "1,2"], "finite")):
        with pytest.raises(BadCorners, match=why):
            parse_corners(bad)
    square = np.array([[10.0, 10.0], [100.0, 10.0], [100.0, 100.0], [10.0, 100.0]])
    assert check_corners(square[::-1], (120, 120, 3)).shape == (4, 2)  # the other way round is fine
    with pytest.raises(BadCorners, match="apart"):
        check_corners(np.array([[10.0, 10.0], [12.0, 10.0], [100.0, 100.0], [10.0, 100.0]]), (120, 120, 3))
    # a board cut by the picture's edge: a corner 11 pixels out (a ninth of the board) is taken, one reaching past
    # the central points is not
    assert check_corners(square - 11.0, (120, 120, 3)).shape == (4, 2)
    with pytest.raises(BadCorners, match=r"outside the picture .* central points .* out of it"):
        check_corners(square - 60.0, (120, 120, 3))
    with pytest.raises(BadCorners, match="cross"):
        check_corners(square[[0, 2, 1, 3]], (120, 120, 3))
