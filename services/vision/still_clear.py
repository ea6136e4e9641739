"""Whether a still board read before the full still time may be taken: only where its evidence is clear.

A move is complete when the hand leaves the piece (5.7); the tracker waits `stable_us` of stillness after the hand's
last motion before it reads the board, so that a hand resting a moment, a shadow leaving or a piece still settling
are not read as the position. Where the board has been seen unchanged over two frames or more with the hand gone
(`quick_stable_us`), and what it shows is one move and nothing else, waiting longer tells nothing new: the board
is taken then. Anything less clear (a point unsure, a piece touched or between two points, a change that is no
single move's, a point read faintly, a change away from the move's two points: fingers, a shadow, a hand resting
on a piece at the view's edge) waits for the full still time, and the reading is made again then.

Pure: the readings and the change map in, the reason why not out (None where the board is clear).
"""

from __future__ import annotations

import cv2
import numpy as np

from .frames import _pt
from .hand import _changed_mask
from .movefit import single_move
from .occupancy import PointReading, S
from .point_evidence import _sure_colour
from .settings import DEFAULTS, TrackerConfig


def unclear(known: str, squares: str, placed: list[int], touched: bool, reading: PointReading,
            ref_reading: PointReading, changed: np.ndarray, cfg: TrackerConfig = DEFAULTS) -> str | None:
    """Why the still board read as `squares` (against the last still board `known`) is not clear enough to be
    taken before `stable_us`; None where it is. `placed`: the points the reading says pieces were set down on;
    `touched`: a piece was reported nudged or between two points; `reading`, `ref_reading`: this still board's ink
    per point and the last one's; `changed`: how its view differs from the last still board's
    (`frames._norm_change`)."""
    if "?" in squares:
        return "a point unsure"
    if touched:
        return "a piece touched or between two points"
    move = single_move(known, squares)
    if move is None:
        return "no single move"
    src, dst = move
    if {i for i in range(90) if squares[i] != known[i]} != {src, dst} or placed != [dst]:
        return "more changed than one move"
    # (the point left reads plainly empty, or as no piece with most of its ink lost: a board's printed marks at the
    # cannons' and soldiers' points read as some ink once the piece is gone)
    if reading.occupied[src] >= cfg.ink_none and (
            reading.occupied[src] >= cfg.ink_piece
            or reading.density[src] >= cfg.ink_lost * max(float(ref_reading.density[src]), cfg.density_floor)):
        return "the point left still shows ink"
    if reading.occupied[dst] <= cfg.ink_plain:
        return "the piece set down reads faintly"
    if _sure_colour(reading, dst, cfg) != squares[dst].isupper():
        return "the piece set down is of no sure colour"
    away = int(_away_from(_changed_mask(changed, cfg), (src, dst), cfg).sum())
    if away > cfg.quick_stray_cells * S * S:
        return f"the view changed away from the move ({away} px)"
    return None


def _away_from(mask: np.ndarray, points: tuple[int, ...], cfg: TrackerConfig) -> np.ndarray:
    """`mask` (0/1) with the discs of `quick_reach` around `points` taken out: what changed elsewhere."""
    near = np.zeros(mask.shape, np.uint8)
    for p in points:
        cv2.circle(near, _pt(p), round(cfg.quick_reach * S), 1, thickness=-1)
    return mask & (1 - near)
