"""The tracker's thresholds: every one a named field with its meaning (spacings are grid spacings of the board; the
canonical top view draws one spacing as `occupancy.S` pixels)."""

from __future__ import annotations

from dataclasses import dataclass

from .squares import START_SQUARES


@dataclass(frozen=True)
class TrackerConfig:
    stable_us: int = 750_000  # still this long after the hand left before BoardStable (5.7)
    hand_cells: float = 2.4  # a changed blob this many grid cells large is a hand (a piece moved to a neighbour
    # point changes two discs side by side: about 1.3 cells)
    hand_rest_us: int = 500_000  # a hand blob still this long (not reaching in over the edge) has left
    hand_still_us: int = 1_200_000  # even reaching in over the edge, a blob still this long is the board's
    # (2 s held a shadow over part of the board as an "arm" for longer than players pause between moves, 1-3 s in
    # the rendered games: two moves fell in one snapshot; 1.25 s gave hard 80-119 1467 -> 1509 and held-out
    # 160-199 1353 -> 1377, 200-239 1164 -> 1175 moves, at a cost on hard 0-39 1460 -> 1439: game 30, 40 -> 4.
    # 1.2 s: the same five frames at 4 a second, whose times jitter by a few ms: at 1.25 a blob still for five
    # frames was the board's or an arm by the jitter's sign; hard game 835, ply 33: the advisor d9-e8's change at
    # the edge held as an arm 1.247 s, until the next move's hand came, both moves in one snapshot; and liu game
    # 314, ply 18, the same; both 38/40 -> 40/40, hard game 30 still 40/40)
    lift_outline_fall: float = 0.25  # a piece lifted: its round outline fell at least this much (circle score)
    lift_lines: float = 0.35  # ... and its point shows the printed lines at least this share as plainly as the
    # board's empty points do (rendered games: points lifted from 0.65, a palm over a point 0.00)
    touch_moved: float = 0.09  # a piece touched: its round outline moved this far (spacings), at least
    arm_cells: float = 4.0  # a blob at the edge of the view this many cells large is an arm reaching in (a hand
    # with its forearm is at least two spacings by two; two pieces side by side on edge points with their shadows
    # are about 2.5 cells)
    change_level: float = 0.09  # normalised appearance change that counts at a point
    unchanged_level: float = 2.5  # mean grey change (1/8 scale) below which a frame may be the same as the last
    unchanged_peak: float = 7.0  # ... if no 3 x 3 patch (1/8 scale) changed more: a hand reaching in over a corner
    # changes a small part of the picture a lot (rendered games: still frames up to 4.7, hands from 9.8; the mean
    # change of a frame with a hand in it can be as low as 0.23)
    black_level: float = 14.0  # mean grey below which the frame is black
    blur_ratio: float = 0.2  # sharpness below this share of the calibration frame's: blurred
    support_ratio: float = 0.45  # line support below this share of the calibration's (no hand): board moved
    # ... and below this share in a frame that stands still, even where the whole changed view reads as a hand: a
    # hand over the board leaves most of its lines in view (a camera moved for good keeps about 1 % of them)
    lost_ratio: float = 0.15
    misaligned_from: float = 0.4  # a piece this far (spacings) from its point along a line stands between two
    # (a piece set down carelessly stands up to about 0.3 off its point and is still on it)
    nudge_from: float = 0.08  # a piece moved this far on its point (spacings) was nudged
    evidence_keep: int = 4  # evidence frames named per observation (the frame itself and those before it)
    find_every_us: int = 2_000_000  # while no board is found, look for one this often
    max_changed: int = 8  # more changed points than this at once is no move (light, camera, board disturbed)
    start_squares: str | None = START_SQUARES  # the position assumed when the first board has its occupancy
    start_tolerance: int = 6  # points whose occupancy may read otherwise on that first board
    start_order: float = 0.9  # ... or the share of (start point, other point) pairs whose inks are in the start's order
