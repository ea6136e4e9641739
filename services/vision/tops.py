"""Where the pieces' top faces stand in the tracker's view, and the view taken through their plane.

A piece's top face is a piece's height above the board: a camera at an angle sees it displaced from its point, away
from the camera, by more the further the point lies from the camera's foot (on the board plane the top faces are
the points mapped through one homothety, `detect.fit_parallax`: `seen = p + a (p - centre) + b`). Flat pieces seen
from nearly above stand within the tracker's reach about each point (0.3 spacing); tall wooden pieces seen steeply
stand up to two thirds of a spacing off, over the neighbour's point, and the far rank's tops beyond the outer line.
So the tracker measures the homothety on its calibration frame (the pieces' round outlines, as `detect` finds them)
and, where some top stands `tops_from` or more off its point, warps its view through the plane of the top faces
instead of the board's: every piece's top face is then centred on its point, and the printed marks (lines, frame),
which lie on the board plane, are seen moved by the inverse map (`marks_affine`, `marks_at`), where the readers of
printed lines look for them.

Pure: a view, a homography and settings in, values out.
"""

from __future__ import annotations

import cv2
import numpy as np

from .detect import (
    away_from_camera,
    circle_score,
    coarse_shift,
    disc_in_view,
    find_discs,
    fit_parallax,
    occupancy_bands,
    parallax_centres,
)
from .grid import POINTS_UV, canonical_transform, point_name
from .occupancy import MARGIN, S
from .settings import TrackerConfig

Tops = tuple[float, float, float]  # the homothety (a, bx, by) of `detect.fit_parallax`: point -> its top face seen
_CENTRE = np.array([4.0, 4.5])  # (the homothety's centre, as detect.fit_parallax fits it)


def measure_tops(view: np.ndarray, homography: np.ndarray, cfg: TrackerConfig) -> Tops | None:
    """The top faces' homothety on a board-plane canonical view (`occupancy.warp_board` of `homography`, image ->
    board plane), where at least `tops_least` pieces' outlines stand out and some top stands `tops_from` or more off
    its point; else None (the board's own plane serves)."""
    score = circle_score(view, px=S)
    shifted = POINTS_UV + coarse_shift(score, away_from_camera(homography), px=S, margin=MARGIN)
    found, disc = find_discs(score, shifted, px=S, margin=MARGIN)
    _, piece_above = occupancy_bands(disc)
    strong = disc >= piece_above
    if int(strong.sum()) < cfg.tops_least:
        return None
    tops = fit_parallax(POINTS_UV[strong], found[strong])
    off = np.hypot(*(parallax_centres(POINTS_UV, tops) - POINTS_UV).T)
    return tops if float(off.max()) >= cfg.tops_from else None


def unseen_points(image_shape: tuple[int, ...], homography: np.ndarray, tops: Tops | None,
                  cfg: TrackerConfig) -> frozenset[int]:
    """The points whose top faces the picture does not show (under `in_view_least` of the disc about where the top
    stands lies inside it): a picture that cuts the board. What stands there cannot be told."""
    centres = POINTS_UV if tops is None else parallax_centres(POINTS_UV, tops)
    share = disc_in_view(image_shape, homography, centres)
    return frozenset(int(i) for i in np.flatnonzero(share < cfg.in_view_least))


def outside_picture(image_shape: tuple[int, ...], homography: np.ndarray, tops: Tops | None,
                    cfg: TrackerConfig) -> tuple[np.ndarray, np.ndarray] | None:
    """Where the tracker's view (`warp_board` through `tops_h(homography, tops)`) shows no pixel of the picture, and
    the band just inside the picture's edge, as boolean masks of the view; None where the picture holds the whole
    view. The warp fills the view beyond a picture that cuts or fills the board with the picture's edge repeated, so
    a strip of a few noisy pixels at the edge (a dark shadow, the picture's own border) becomes a wide band whose
    change from frame to frame is noise: nothing seen there can be a hand or a piece. The mask is grown by
    `outside_grow` spacings, as the view's local mean (`frames._norm`, one spacing across) takes those pixels in."""
    h, size = canonical_transform(tops_h(homography, tops), S, MARGIN)
    whole = np.full(image_shape[:2], 255, np.uint8)
    inside = cv2.warpPerspective(whole, h, size, flags=cv2.INTER_NEAREST, borderMode=cv2.BORDER_CONSTANT,
                                 borderValue=0)
    if bool(inside.all()):
        return None
    k = 2 * round(cfg.outside_grow * S) + 1
    outside = cv2.dilate((inside == 0).astype(np.uint8), np.ones((k, k), np.uint8))
    band = cv2.dilate(outside, np.ones((3, 3), np.uint8)) > outside
    return outside > 0, band


def unseen_reason(unseen: frozenset[int]) -> str:
    """What an operator is told where the picture cuts the board: which points the camera does not see, and what
    to do. A venue camera that misses points cannot follow a game there (a move made wholly out of the picture is
    not seen, an arrival from there has no known type): the tracker reports '?' there and never reads a move from
    them, and the operator is asked to frame the whole board."""
    names = ", ".join(point_name(i) for i in sorted(unseen))
    return (f"the camera does not see {len(unseen)} of the 90 points ({names}): move or zoom out the camera so that "
            "the whole board is in the picture; nothing is read on those points")


def half_turned(tops: Tops | None) -> Tops | None:
    """The same top faces for the board's fit turned half a turn (u, v -> 8 - u, 9 - v about the same centre)."""
    return None if tops is None else (tops[0], -tops[1], -tops[2])


def _homothety(tops: Tops) -> np.ndarray:
    """3 x 3: a point of the top faces' plane (its foot's uv) -> where its top face is seen on the board plane."""
    a, bx, by = tops
    return np.array([[1.0 + a, 0.0, bx - a * _CENTRE[0]], [0.0, 1.0 + a, by - a * _CENTRE[1]], [0.0, 0.0, 1.0]])


def tops_h(homography: np.ndarray, tops: Tops | None) -> np.ndarray:
    """The homography image -> the top faces' plane (each top face at its point's uv); `homography` where None."""
    if tops is None:
        return homography
    return np.linalg.inv(_homothety(tops)) @ np.asarray(homography, float)


def marks_affine(tops: Tops) -> np.ndarray:
    """2 x 3: canonical pixels of the board-plane view -> the same mark's pixels in the top faces' view."""
    inv = np.linalg.inv(_homothety(tops))
    to_uv = np.array([[1.0 / S, 0.0, -MARGIN], [0.0, 1.0 / S, -MARGIN], [0.0, 0.0, 1.0]])
    to_px = np.array([[S, 0.0, MARGIN * S], [0.0, S, MARGIN * S], [0.0, 0.0, 1.0]])
    return (to_px @ inv @ to_uv)[:2]


def marks_at(px: np.ndarray, tops: Tops | None) -> np.ndarray:
    """Board-plane canonical pixels (N, 2) of printed marks -> where the view through the tops shows them (float)."""
    px = np.asarray(px, float)
    if tops is None:
        return px
    m = marks_affine(tops)
    return px @ m[:, :2].T + m[:, 2]


def warp_marks(mask: np.ndarray, tops: Tops | None) -> np.ndarray:
    """A board-plane canonical mask of printed marks as the view through the tops shows it."""
    if tops is None:
        return mask
    return cv2.warpAffine(mask, marks_affine(tops), mask.shape[1::-1], flags=cv2.INTER_NEAREST,
                          borderMode=cv2.BORDER_CONSTANT, borderValue=0)
