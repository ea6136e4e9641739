"""Whole-frame measures on the canonical top view: the 1/8-scale picture, normalisation, sharpness, the printed
lines' support, the shifts of a bumped camera, and the fit after such a shift. Pure: arrays in, values out."""

from __future__ import annotations

import cv2
import numpy as np

from .board import BoardFit, fit_from_h
from .occupancy import MARGIN, POINTS_PX, S
from .settings import DEFAULTS, TrackerConfig
from .tops import Tops, marks_at


def eighth(image: np.ndarray) -> np.ndarray:
    """The frame at 1/8 scale in grey (what a reduced JPEG decode gives): the "unchanged" test's picture."""
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    h, w = gray.shape
    return cv2.resize(gray, (max(8, (w + 7) // 8), max(8, (h + 7) // 8)), interpolation=cv2.INTER_AREA)


def _pt(i: int) -> tuple[int, int]:
    x, y = POINTS_PX[i]
    return int(x), int(y)


def _half_scale_shift(ref: np.ndarray, view: np.ndarray, windowed: bool = False) -> tuple[float, float, float]:
    """The shift (dx, dy) of normalised `view` against `ref` in view pixels, and the phase correlation's response,
    measured at half scale (a bump of the camera is a shift of whole pixels there too, for a quarter of the cost);
    `windowed` with a Hann window, so that the view's edges, where the warp ends, do not outweigh the lines."""
    a, b = cv2.pyrDown(ref), cv2.pyrDown(view)
    window = cv2.createHanningWindow((a.shape[1], a.shape[0]), cv2.CV_32F) if windowed else None
    (dx, dy), resp = cv2.phaseCorrelate(a, b, window)
    return 2 * dx, 2 * dy, resp


def _still_shift(ref: np.ndarray, view: np.ndarray, least: float,
                 cfg: TrackerConfig = DEFAULTS) -> tuple[float, float] | None:
    """The sub-pixel shift (dx, dy) of normalised `view` against the last still board's `ref`, where the two line up
    surely (phase correlation's response over `realign_response`) and it is over `least` view pixels but under
    `shift_most` of a spacing;
    else None. Not windowed, unlike `_realigned`'s search for a larger shift: windowed, the sub-pixel shifts found
    here moved enough to lose a piece left half-way (a pawn left between c4 and d4 was lost so)."""
    (dx, dy), resp = cv2.phaseCorrelate(ref, view)
    return (dx, dy) if resp > cfg.realign_response and least < np.hypot(dx, dy) < cfg.shift_most * S else None


def _shifted(view: np.ndarray, dx: float, dy: float) -> np.ndarray:
    """`view` moved back by (dx, dy) pixels (as `_still_shift` measured it), the edges filled from the nearest pixel."""
    m = np.array([[1.0, 0.0, -dx], [0.0, 1.0, -dy]])
    return cv2.warpAffine(view, m, view.shape[1::-1], borderMode=cv2.BORDER_REPLICATE)


def _norm(view: np.ndarray) -> np.ndarray:
    """Grey view divided by its local mean: lighting drift and shadows cancel, marks and pieces stay."""
    g = cv2.cvtColor(view, cv2.COLOR_BGR2GRAY).astype(np.float32) + 1.0
    return g / cv2.blur(g, (S + 1, S + 1))


def _sharpness(view: np.ndarray) -> float:
    """Variance of the Laplacian of the grey view (cv2.meanStdDev: numpy's var costs several times more)."""
    g = cv2.cvtColor(view, cv2.COLOR_BGR2GRAY)
    _, sd = cv2.meanStdDev(cv2.Laplacian(g, cv2.CV_32F))
    return float(sd[0, 0]) ** 2


# Where _view_support looks: the middles of the rank lines' segments (x, y), and half a spacing below them (between
# two rank lines, away from the river), in canonical pixels.
_ON_X = np.array([round((u + 0.5 + MARGIN) * S) for v in range(10) for u in range(8)])


_ON_Y = np.array([round((v + MARGIN) * S) for v in range(10) for u in range(8)])


_OFF = np.array([k for k, v in enumerate(np.repeat(np.arange(10), 8)) if v < 9 and v != 4])


def _view_support(view: np.ndarray, tops: Tops | None = None) -> float:
    """Printed-line contrast at the known line positions of the canonical view (the cheap per-frame re-check).
    `tops`: the view is taken through the plane of the pieces' top faces (`tops.py`), where the lines are seen
    moved."""
    g = view[:, :, 1]
    bh = cv2.morphologyEx(g, cv2.MORPH_BLACKHAT, cv2.getStructuringElement(cv2.MORPH_RECT, (7, 7)))
    on_x, on_y, off_x, off_y = _ON_X, _ON_Y, _ON_X[_OFF], _ON_Y[_OFF] + S // 2
    if tops is not None:
        hi = np.array(g.shape[::-1]) - 2
        on = np.clip(np.rint(marks_at(np.stack([on_x, on_y], 1), tops)).astype(int), 1, hi)
        off = np.clip(np.rint(marks_at(np.stack([off_x, off_y], 1), tops)).astype(int), 1, hi)
        on_x, on_y, off_x, off_y = on[:, 0], on[:, 1], off[:, 0], off[:, 1]
    # one array lookup instead of 144 small ones: the line's peak within a pixel of where it is printed
    on = np.maximum(np.maximum(bh[on_y - 1, on_x], bh[on_y, on_x]), bh[on_y + 1, on_x])
    off = bh[off_y, off_x]
    return float(on.mean(dtype=np.float64) - off.mean(dtype=np.float64))


def _norm_change(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """How two normalised views (`_norm`) differ, pixel by pixel, smoothed over a couple of pixels."""
    return cv2.GaussianBlur(np.abs(a - b), (0, 0), 2.0)


def _change_map(ref: np.ndarray, view: np.ndarray) -> np.ndarray:
    return _norm_change(_norm(ref), _norm(view))


def _shift_fit(fit: BoardFit, dx: float, dy: float) -> BoardFit:
    """The fit after the whole canonical view moved by (dx, dy) view pixels (a bumped camera, a small shift)."""
    t = np.array([[1.0, 0, -dx / S], [0, 1.0, -dy / S], [0, 0, 1.0]])
    h = t @ fit.homography
    return fit_from_h(np.linalg.inv(h), fit.method, fit.score, fit.oriented)


def _keep_orientation(old: BoardFit, new: BoardFit) -> BoardFit:
    """After a re-find, keep the end the tracker knew as Red's: the nearer of the two half-turns to the old fit."""
    from .board import rotate_half_turn

    flipped = fit_from_h(rotate_half_turn(new.board_to_image), new.method, new.score, new.oriented)
    if np.abs(flipped.corners - old.corners).sum() < np.abs(new.corners - old.corners).sum():
        return flipped
    return new
