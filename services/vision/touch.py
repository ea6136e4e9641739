"""Whether what changed on a point between two still boards is its own piece's doing (a touch, 5.1-5.6) or
something beside it: where the change is centred against where the piece's top face is seen. Pure."""

from __future__ import annotations

import numpy as np

from .detect import find_discs, fit_parallax, parallax_centres
from .grid import POINTS_UV
from .occupancy import MARGIN, S
from .settings import DEFAULTS, TrackerConfig


def top_seen(score: np.ndarray, i: int, pieces: list[int], cfg: TrackerConfig = DEFAULTS) -> np.ndarray:
    """Where the top face of a piece standing on point i is seen in the canonical view whose circle score is `score`
    (board-plane spacings): the point carried by the camera's parallax, fitted to the standing `pieces`' outlines."""
    found, _ = find_discs(score, POINTS_UV[pieces], reach=cfg.disc_reach_on, px=S)
    return parallax_centres(POINTS_UV[i:i + 1], fit_parallax(POINTS_UV[pieces], found))[0]


def change_off_centre(view: np.ndarray, ref_view: np.ndarray, centre: np.ndarray,
                      cfg: TrackerConfig = DEFAULTS) -> float:
    """How far (spacings) the centre of what changed between the still boards' views `ref_view` and `view`, within
    `touch_window` of `centre` (a piece's top face as seen), lies from it. The change is weighed by how much each
    pixel changed over the view's median change (the camera's noise and a drift of light change every pixel a
    little). 0.0 where nothing there changed over the median."""
    half = round(cfg.touch_window * S)
    cx, cy = (np.asarray(centre, float) + MARGIN) * S
    x0, y0 = max(0, round(cx) - half), max(0, round(cy) - half)
    x1, y1 = min(view.shape[1], round(cx) + half + 1), min(view.shape[0], round(cy) + half + 1)
    diff = np.abs(view.astype(np.float32) - ref_view.astype(np.float32))
    diff = diff.max(axis=2) if diff.ndim == 3 else diff
    win = diff[y0:y1, x0:x1]
    yy, xx = np.mgrid[y0:y1, x0:x1]
    inside = (xx - cx) ** 2 + (yy - cy) ** 2 <= half * half
    weight = np.clip(win - float(np.median(diff)), 0.0, None) * inside
    total = float(weight.sum())
    if total <= 0.0:
        return 0.0
    dx, dy = float((weight * xx).sum()) / total - cx, float((weight * yy).sum()) / total - cy
    return float(np.hypot(dx, dy)) / S


def changed_beside(view: np.ndarray, ref_view: np.ndarray, score: np.ndarray, i: int, pieces: list[int],
                   cfg: TrackerConfig = DEFAULTS) -> bool:
    """What changed on point i lies to one side of its piece's top face: not the piece moved on its point (a touch
    changes its whole top face where it stood and where it stands now, both sides alike), but something beside it:
    a moved neighbour's shadow, its tall body in front, its rim reaching over. `score`: the circle score of `view`;
    `pieces`: the standing pieces but i, to fit the parallax by."""
    centre = top_seen(score, i, pieces, cfg=cfg)
    return change_off_centre(view, ref_view, centre, cfg=cfg) >= cfg.touch_off_centre
