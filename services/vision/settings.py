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
    hand_still_us: int = 1_200_000  # even reaching in over the edge, a blob still this long is the board's: longer
    # than a player's pause between moves (1-3 s) holds a shadow over the board as an "arm" until the next move's
    # hand comes, and two moves fall into one snapshot; shorter loses hands resting on a piece. 1.2 s is five frames
    # at 4 a second, which at 1.25 s stood on either side of the limit by the jitter of the frames' times.
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
    # -- the hand and what moved between frames (hand.py); areas in cells (one spacing squared), lengths in spacings
    moved_share: float = 0.002  # the share of the view that must change (over `change_level`) for the view to have
    # changed since the last frame
    hand_join: float = 0.2  # a hand's fingers, knuckles and arm show as separate outlines: joined within this
    edge_hand_cells: float = 1.1  # a changed blob touching the view's edge and this large may be a hand reaching in
    # (a piece on an edge point with its shadow is about one cell)
    tip_depth: float = 0.4  # the fingertips: the part of the hand's blob within this of its farthest reach
    reach_in_step: float = 0.3  # reaching in, each frame's fingertips lie at least this much deeper than the last
    draw_back: float = 0.15  # the hand drew back where its fingertips came this much nearer its edge again
    solid_across: float = 1 / 6  # a change since the last frame counts for stillness only this wide (the camera's
    # noise leaves specks of a few pixels, densest along the pieces' edges)
    moved_part_cells: float = 0.1  # ... and only in parts this large in area (a hand or a piece moving changes far
    # more; on a board in shadow specks survived the opening and added up to 0.66 % of the view)
    creep_cells: float = 0.2  # a change at the edge this large, still changing from frame to frame, is fingertips
    # reaching in over an edge piece (smaller than a hand's blob)
    creep_step_cells: float = 0.1  # ... by at least this much area from one frame to the next
    creep_near_px: int = 9  # ... within this many top-view pixels of the blob (a 9 x 9 dilation)
    light_share: float = 0.8  # a changed blob over this share of the view is the light (a lamp, the sun, a shadow
    # over the board), not an arm: a hand does not change the view everywhere
    # -- a frame (still_board.py)
    washed_level: float = 245.0  # mean grey (of 255) over which, with ...
    washed_spread: float = 6.0  # ... a standard deviation under this, the frame is washed out (glare, overexposed)
    bump_response: float = 0.2  # phase correlation's response over which a shift of the whole view since the last
    # frame is the camera bumped (a frame whose lines all moved)
    shift_least_px: float = 1.0  # ... a shift over this many top-view pixels, and
    shift_most: float = 0.4  # ... under this much of a spacing (more is the board found again)
    realign_response: float = 0.1  # the response over which the view lines up with the last still board again
    hand_moving_share: float = 0.02  # a hand moves where this share of its blob changed since the last frame
    resting_shift_px: float = 0.3  # a resting hand's view lined up with the last still board where it is shifted
    # by more than this (top-view pixels): a camera shifted by under a pixel joins every line's change to the hand's
    stable_shift_px: float = 0.7  # the still board lined up with the last one where shifted by more than this
    clear_of_hand: float = 0.7  # a point this near the hand's hull (spacings) is partly hidden by it: not judged
    lift_ink_gone: float = 0.2  # a piece lifted: its point reads under this occupancy now, ...
    lift_ink_was: float = 0.5  # ... read over this on the last still board, ...
    lift_ink_left: float = 0.4  # ... keeps under this share of its own ink, ...
    lift_ink_typical: float = 0.5  # ... and its ink was at least this share of the pieces' median (a faint
    # piece's reading is mostly noise)
