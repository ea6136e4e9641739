"""A board whose four grid corners an operator gave (`vision detect --corners`, a venue's fixed camera).

DESIGN: the four corner points of the grid, a9 i9 i0 a0 "in any consistent turn": the operator goes round the
grid's outer corners in order, but may start at any of them and go either way round. What the four points alone
cannot say is told by the picture:
- the way round: a camera does not mirror the board, so the points are put in the order that runs a9 -> i9 -> i0
  clockwise in the image;
- which pair of opposite sides are the ranks (8 spacings) and which the files (9 spacings, broken by the river):
  the lattice laid the one way and the other is scored by the printed lines under it (grid.support_score), and
  the given way is kept unless the other is clearly better supported;
- which end is Red: the pieces (as for a board found alone), the given start kept where they do not say.
Then the lattice is pulled onto the printed lines when that is a small correction (hand-given corners are a few
pixels off), and kept as given otherwise.

Pure: values in, a BoardFit out, or BadCorners with the reason.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .board import (
    _CENTRAL_POINTS,
    MIN_POINTS_IN_VIEW,
    ORIENTED_VOTE,
    BoardFit,
    _exact_full,
    _in_view,
    _points_inside,
    _work_image,
    fit_from_h,
    refine,
    response_map,
    rotate_half_turn,
)
from .grid import POINTS_UV, apply_h, board_to_image, support_score

# The sides of the given quadrilateral must be at least this long (image pixels): a board of 8 x 9 spacings drawn
# smaller than this has spacings under 2 pixels, nothing on it can be read, and the points are surely a typo.
MIN_SIDE_PX = 16.0
# The lattice turned a quarter (ranks and files swapped) is taken over the given one only when its line support
# (grid.support_score, black-hat units) beats the given one's by this much and by this share of it: a picture
# with no print under either (a blank wall, corners far off) keeps the order it was given.
TURN_MARGIN = 1.0
TURN_SHARE = 0.15
# The lattice pulled onto the printed lines is kept when no point moves more than this (grid spacings): a hand
# placed corner is off by a few pixels, a tenth of a spacing or so; a longer pull went to another line.
MAX_PULL = 0.35
# A camera may cut the board (a phone held close, a venue camera framed tight): corners outside the picture are
# taken as long as the lattice they span could be the board in view, as the board finder requires of a lattice
# (board._in_view): its central points (files c..g, ranks 2..7) and at least MIN_POINTS_IN_VIEW of its 90 points
# inside the picture. Beyond that most of the board is out of sight and the corners are surely a typo (or another
# board).


class BadCorners(ValueError):
    """The corners given are not four points going round a board in view; `reason` says what is wrong."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def parse_corners(texts: Sequence[str]) -> np.ndarray:
    """`["X,Y", ...]` (four of them, as the command line gives them) -> 4 x 2 floats; BadCorners otherwise."""
    if len(texts) != 4:
        raise BadCorners(f"give exactly four corners X,Y (a9 i9 i0 a0 in turn), not {len(texts)}")
    out = []
    for text in texts:
        parts = text.replace(" ", "").split(",")
        try:
            if len(parts) != 2:
                raise ValueError
            x, y = float(parts[0]), float(parts[1])
        except ValueError:
            raise BadCorners(f"corner {text!r} is not X,Y (two numbers, image pixels)") from None
        if not (np.isfinite(x) and np.isfinite(y)):
            raise BadCorners(f"corner {text!r} is not X,Y with finite numbers")
        out.append((x, y))
    return np.array(out, dtype=np.float64)


def _turns(c: np.ndarray) -> np.ndarray:
    """The cross product of the two sides meeting at each corner (> 0: the path turns clockwise there, y down)."""
    a = np.roll(c, 1, axis=0)
    b = np.roll(c, -1, axis=0)
    d1, d2 = c - a, b - c
    return d1[:, 0] * d2[:, 1] - d1[:, 1] * d2[:, 0]


def check_corners(corners: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The corners as 4 x 2 floats when they go round a convex quadrilateral whose lattice is in view (its central
    points and MIN_POINTS_IN_VIEW of its points inside the picture: some corners may lie outside); BadCorners if
    not."""
    c = np.asarray(corners, dtype=np.float64)
    if c.shape != (4, 2) or not np.isfinite(c).all():
        raise BadCorners(f"give four corners as [x, y] numbers, not {np.asarray(corners).tolist()!r}")
    sides = np.linalg.norm(np.roll(c, -1, axis=0) - c, axis=1)
    if sides.min() < MIN_SIDE_PX:
        raise BadCorners(f"two corners lie {sides.min():.1f} pixels apart: a board's corners are at least "
                         f"{MIN_SIDE_PX:g} apart")
    turns = _turns(c)
    # going round the board, every corner turns the same way: a crossed (bow-tie) or folded path is a typo
    if not ((turns > 0).all() or (turns < 0).all()):
        raise BadCorners("the corners cross or fold: give them going round the grid in turn (a9 i9 i0 a0)")
    _check_in_view(c, shape)
    return c


def _check_in_view(c: np.ndarray, shape: tuple[int, ...]) -> None:
    """BadCorners unless the lattice the corners span (either way round: ranks and files are not known yet) may be
    the board in view as the board finder takes one (board._in_view): its central points and MIN_POINTS_IN_VIEW of
    its 90 points inside the picture."""
    h, w = shape[:2]
    outside = [k for k in range(4) if not (0 <= c[k, 0] <= w and 0 <= c[k, 1] <= h)]
    if not outside:
        return
    hs = np.stack([board_to_image(c), board_to_image(np.roll(c, -1, axis=0))])
    if _in_view(hs, shape).any():
        return
    central = _points_inside(hs, shape, pts_uv=_CENTRAL_POINTS).all(axis=1)
    seen = _points_inside(hs, shape).sum(axis=1)
    where = ", ".join(f"({c[k, 0]:g}, {c[k, 1]:g})" for k in outside)
    why = (f"only {int(seen[central].max())} of its 90 points would be in it, a board cut by the picture's edge "
           f"needs {MIN_POINTS_IN_VIEW}" if central.any() else
           "the board's central points (files c..g, ranks 2..7) would be out of it; a board cut by the picture's "
           "edge needs them in")
    raise BadCorners(f"corner {where} lies outside the picture ({w} x {h} pixels) too far: {why}")


def _clockwise(c: np.ndarray) -> np.ndarray:
    """The same corners, the first kept, in the order that turns clockwise in the image (a camera does not mirror)."""
    return c if _turns(c)[0] > 0 else c[[0, 3, 2, 1]]


def _pulled(image: np.ndarray, resp: np.ndarray, scale: float, hb: np.ndarray) -> np.ndarray:
    """The given lattice (board -> full image) pulled onto the printed lines when that is a small move; else hb."""
    down = np.diag([scale, scale, 1.0])
    h_work = down @ hb
    h_ref = refine(resp, h_work)
    if support_score(resp, h_ref) < support_score(resp, h_work):
        h_ref = h_work
    h_full = _exact_full(image, resp, h_ref, scale)
    if support_score(resp, down @ h_full) < support_score(resp, h_work):
        return hb
    before = apply_h(hb, POINTS_UV)
    p = before.reshape(10, 9, 2)
    spacing = float((np.linalg.norm(np.diff(p, axis=1), axis=2).mean()
                     + np.linalg.norm(np.diff(p, axis=0), axis=2).mean()) / 2)
    move = np.linalg.norm(apply_h(h_full, POINTS_UV) - before, axis=1).max()
    return h_full if np.isfinite(move) and move <= MAX_PULL * spacing else hb


def fit_given_corners(image: np.ndarray, corners: np.ndarray, *, orient: bool = True) -> BoardFit:
    """The board's fit from four given corners (any start, either way round); BadCorners when they cannot be it."""
    if image is None or image.ndim != 3 or image.shape[2] != 3:
        raise BadCorners("not a colour image")
    c = _clockwise(check_corners(corners, image.shape))
    work, scale = _work_image(image)
    resp = response_map(work)
    down = np.diag([scale, scale, 1.0])
    as_given, turned = board_to_image(c), board_to_image(np.roll(c, -1, axis=0))
    s_given, s_turned = support_score(resp, down @ as_given), support_score(resp, down @ turned)
    better = s_turned - s_given >= max(TURN_MARGIN, TURN_SHARE * abs(s_given))
    hb = _pulled(image, resp, scale, turned if better else as_given)
    score = support_score(resp, down @ hb)
    if not orient:
        return fit_from_h(hb, "given", score, oriented=False)
    from .occupancy import orientation_vote, read_points  # occupancy needs a fit; no import cycle at load

    vote = orientation_vote(read_points(image, fit_from_h(hb, "given", score)))
    # a clear vote says where Red sits; a faint one is the colour reading's noise: the given start is kept
    if abs(vote) <= ORIENTED_VOTE:
        return fit_from_h(hb, "given", score, oriented=False)
    return fit_from_h(rotate_half_turn(hb) if vote < 0 else hb, "given", score, oriented=True)
