"""A piece's side read from its look (the hue of its face's middle) where the ink's colour fails on the camera:
`look_colour`, calibrated on the sides of the pieces the tracker holds."""

from __future__ import annotations

import cv2
import numpy as np

from xqarb.vision.grid import point_index
from xqarb.vision.look_colour import ink_colour_fails, look_colour
from xqarb.vision.occupancy import POINTS_PX, PointReading, S
from xqarb.vision.squares import START_SQUARES

_FACE = (150, 200, 225)  # BGR: a pale wooden face
_RED_MIDDLE = (90, 110, 200)  # a red character washed into the face: reddish
_DARK_MIDDLE = (110, 140, 110)  # a dark green one: greyish green


def _view(squares: str) -> np.ndarray:
    """A canonical view (the tracker's 32 px a spacing, 0.75 spacing margin) of pale faces whose middles are tinted
    by their characters' inks, as a blurred small picture shows them."""
    view = np.full((336, 304, 3), (205, 225, 235), np.uint8)
    for i, c in enumerate(squares):
        if c == ".":
            continue
        x, y = (int(v) for v in POINTS_PX[i])
        cv2.circle(view, (x, y), round(0.42 * S), _FACE, -1)
        cv2.circle(view, (x, y), round(0.2 * S), _RED_MIDDLE if c.isupper() else _DARK_MIDDLE, -1)
    return cv2.GaussianBlur(view, (0, 0), 2.0)


def _reading(squares: str, red_at: dict[int, float]) -> PointReading:
    """Every piece read occupied; the ink's P(red) given per point (0.5 elsewhere)."""
    occ = np.array([0.0 if c == "." else 0.9 for c in squares])
    red = np.full(90, 0.5)
    for i, v in red_at.items():
        red[i] = v
    return PointReading(occupied=occ, red=red, offset=np.zeros((90, 2)), density=occ * 0.1, redness=np.zeros(90))


def test_a_piece_is_read_on_its_side_by_its_look_where_the_ink_colour_fails() -> None:
    # A red cannon set down on d2 (the board after b2-d2 shown, the known board before it): the ink reads it dark,
    # and reads most of the known pieces on the wrong side (a blurred picture, characters washed into the faces).
    # The look, fitted on the known pieces' sides, reads it red surely.
    known = START_SQUARES
    now = known[:point_index("b2")] + "." + known[point_index("b2") + 1:]
    now = now[:point_index("d2")] + "C" + now[point_index("d2") + 1:]
    wrong = {i: (0.1 if c.isupper() else 0.9) for i, c in enumerate(known) if c != "." and i % 2 == 0}
    reading = _reading(now, {**wrong, point_index("d2"): 0.05})
    assert ink_colour_fails(reading, known)
    changed = np.zeros(90, bool)
    changed[[point_index("b2"), point_index("d2")]] = True
    out = look_colour(reading, known, _view(now), changed)
    assert out.red[point_index("d2")] > 0.8
    # the points that did not change keep the ink's colours (the rules weigh them against the last still board's),
    # and so does an empty point (its colour is no piece's)
    assert all(out.red[i] == reading.red[i] for i in range(90) if not changed[i])
    # every piece standing whose ink misread its side would read its own side, had its point changed
    everywhere = look_colour(reading, known, _view(now), np.ones(90, bool))
    assert all((everywhere.red[i] > 0.8) == known[i].isupper() for i in wrong if now[i] != ".")
    # with no still board before (no change measured) nothing is taken
    assert look_colour(reading, known, _view(now), None) is reading


def test_the_ink_colour_stands_where_it_reads_the_known_sides() -> None:
    # The ink misreads two pieces' sides (a capture turns one): it reads this camera, and its colours stand, even
    # the one the look would read otherwise.
    known = START_SQUARES
    red_at = {i: (0.95 if c.isupper() else 0.05) for i, c in enumerate(known) if c != "."}
    red_at[point_index("a0")] = 0.05
    red_at[point_index("a9")] = 0.95
    reading = _reading(known, red_at)
    assert not ink_colour_fails(reading, known)
    assert look_colour(reading, known, _view(known), np.ones(90, bool)) is reading


def test_the_look_is_weighed_where_the_ink_misreads_over_a_fifth() -> None:
    # The ink misreads 7 of the 32 known sides (22 %: a capture's taker read as its prey's side among them): past a
    # fifth it fails on this camera, and the look, which reads every side here, is taken on the changed point.
    # Six misread (19 %) is a faint ink that still reads the board: its colours stand.
    known = START_SQUARES
    pieces = [i for i, c in enumerate(known) if c != "."]
    now = known[:point_index("b2")] + "." + known[point_index("b2") + 1:]
    now = now[:point_index("d2")] + "C" + now[point_index("d2") + 1:]
    changed = np.zeros(90, bool)
    changed[[point_index("b2"), point_index("d2")]] = True
    for n, fails in ((7, True), (6, False)):
        red_at = {i: (0.95 if known[i].isupper() else 0.05) for i in pieces}
        red_at.update({i: (0.05 if known[i].isupper() else 0.95) for i in pieces[1:2 * n:2]})
        red_at[point_index("d2")] = 0.3  # (the ink leaning to the wrong side, not surely)
        reading = _reading(now, red_at)
        assert bool(ink_colour_fails(reading, known)) is fails
        out = look_colour(reading, known, _view(now), changed)
        assert bool(out.red[point_index("d2")] > 0.8) is fails
