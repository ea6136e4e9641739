"""The camera's noise measured where it is (hand.py's `noise_levels`, `noise_scale`; the still-board state machine's
noise measure): a grainy picture whose shaded part the noise alone pushes over the change level reads still, and a
hand over the same noise is still seen."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from synthetic import START_SQUARES, draw_board
from test_tracker import _moved, _with_hand
from trackerpatch import patch_tracker

from xqarb.vision.board import fit_from_corners
from xqarb.vision.frames import _norm, _norm_change
from xqarb.vision.grid import point_index
from xqarb.vision.hand import _hand_mask, noise_levels, noise_scale, seen_change
from xqarb.vision.occupancy import S
from xqarb.vision.settings import TrackerConfig
from xqarb.vision.tracker import Tracker

CFG = TrackerConfig()
H, W = 336, 304  # the tracker's canonical view of a board
STEP = 250_000  # 4 frames per second


def _grainy_view(rng: np.random.Generator, hand: tuple[int, int] | None = None) -> np.ndarray:
    """A board whose far half (the top 5 spacings) lies in shade (grey 60) and whose near half is sunlit (grey 180),
    from a small picture blown up twice to the view, with the camera's noise (8 grey levels a picture pixel) drawn
    afresh per frame; `hand` (column, over the near edge): a hand 2 spacings wide and 3 deep reaching in at that
    column over the top edge (grey 110 in the shade) or the bottom one (grey 110 in the sun)."""
    small = np.full((H // 2, W // 2), 180.0)
    small[:5 * S // 2] = 60.0
    if hand is not None:
        rows = slice(H // 2 - 3 * S // 2, None) if hand[1] else slice(None, 3 * S // 2)
        small[rows, hand[0] // 2:hand[0] // 2 + S] = 110.0
    small += rng.normal(0.0, 8.0, small.shape)
    grey = np.repeat(np.repeat(small, 2, axis=0), 2, axis=1)
    return np.repeat(np.clip(grey, 0, 255).astype(np.uint8)[:, :, None], 3, axis=2)


def _change(a: np.ndarray, b: np.ndarray, noise: np.ndarray | None = None) -> np.ndarray:
    return seen_change(_norm_change(_norm(a), _norm(b)), None, None, noise)


def test_the_noise_of_a_still_view_is_measured_where_it_reaches_the_level() -> None:
    rng = np.random.default_rng(7)
    frames = [_grainy_view(rng) for _ in range(4)]
    levels = tuple(noise_levels(_change(a, b), CFG) for a, b in itertools.pairwise(frames))
    assert levels[0].shape == (-(-H // S), -(-W // S))  # one a cell (a grid spacing square)
    scale = noise_scale(levels, (H, W), CFG)
    assert scale is not None and scale.shape == (H, W)
    # in the shade the noise alone reaches over the change level: a change counts only as far as it stands out
    assert float(scale[S:4 * S].max()) < 0.9
    # in the sunlit half it does not: a change there counts in full
    assert float(scale[7 * S:].min()) == pytest.approx(1.0)


def test_a_grainy_still_view_shows_no_hand_and_a_hand_over_its_noise_is_seen() -> None:
    rng = np.random.default_rng(8)
    frames = [_grainy_view(rng) for _ in range(4)]
    levels = tuple(noise_levels(_change(a, b), CFG) for a, b in itertools.pairwise(frames))
    scale = noise_scale(levels, (H, W), CFG)
    still, now = _grainy_view(rng), _grainy_view(rng)
    # (the noise alone: over the level in much of the shade, a "hand" that never leaves)
    raw = _change(still, now)
    assert float(np.mean(raw[:5 * S] > CFG.change_level)) > 0.05
    assert _hand_mask(raw, CFG).any()
    assert not _hand_mask(_change(still, now, scale), CFG).any()
    # a hand reaching in over the shade is a hand
    reach = _grainy_view(rng, hand=(120, 0))
    assert _hand_mask(_change(still, reach, scale), CFG)[:2 * S, 120:120 + 2 * S].mean() > 0.5
    # and one reaching in over the sunlit half is seen as it was, in full
    near = _grainy_view(rng, hand=(120, 1))
    assert _hand_mask(_change(still, near, scale), CFG)[H - 2 * S:, 120:120 + 2 * S].mean() > 0.5
    assert np.array_equal(_change(still, near, scale)[7 * S:], _change(still, near)[7 * S:])


def test_a_clear_views_noise_is_not_scaled() -> None:
    rng = np.random.default_rng(9)

    def clear() -> np.ndarray:
        grey = np.full((H, W), 170.0) + rng.normal(0.0, 2.0, (H, W))
        return np.repeat(np.clip(grey, 0, 255).astype(np.uint8)[:, :, None], 3, axis=2)

    frames = [clear() for _ in range(4)]
    levels = tuple(noise_levels(_change(a, b), CFG) for a, b in itertools.pairwise(frames))
    assert noise_scale(levels, (H, W), CFG) is None
    assert noise_scale((), (H, W), CFG) is None  # nothing measured yet


def _grainy_frames() -> tuple[list[np.ndarray], tuple[tuple[float, float], ...]]:
    """A small picture (480 x 360) of the start, its far half in shade (a third of the light) with the camera's noise
    (10 grey levels a pixel, afresh per frame): 14 still frames, the cannon h2-e2 by hand over 3 frames, 8 still."""
    kw = {"seed": 5, "tilt": 18.0, "rotate": 6.0, "line_colour": (30, 30, 150), "glare": False, "fill": 0.85,
          "size": (480, 360), "clutter": False}
    start, after = draw_board(START_SQUARES, **kw), draw_board(_moved(START_SQUARES, "h2", "e2"), **kw)
    rng = np.random.default_rng(1)

    def grainy(img: np.ndarray) -> np.ndarray:
        f = img.astype(np.float32)
        f[:180] *= 0.4
        f[:180] += rng.normal(0.0, 10.0, (180, f.shape[1], 1))
        return np.clip(f, 0, 255).astype(np.uint8)

    h2, e2 = start.points[point_index("h2")], after.points[point_index("e2")]
    frames = [grainy(start.image) for _ in range(14)]
    frames += [grainy(_with_hand(start.image, h2)), grainy(_with_hand(start.image, (h2 + e2) / 2)),
               grainy(_with_hand(after.image, e2))]
    frames += [grainy(after.image) for _ in range(8)]
    return frames, tuple((float(x), float(y)) for x, y in start.corners)


def _types(frames: list[np.ndarray], corners: tuple[tuple[float, float], ...]) -> list[str]:
    tracker = Tracker()
    state = tracker.initial(fit_from_corners(corners, "given", 0.0))
    seen: list[str] = []
    for k, img in enumerate(frames):
        state, obs = tracker.step(state, img, k * STEP)
        seen.extend(o.type for o in obs)
    return seen


def test_a_grainy_still_board_reads_still_and_the_hand_over_it_comes_and_goes(monkeypatch) -> None:
    # (hard games drawn small, dim and grainy: the noise alone changed much of the shaded part over the change
    # level from frame to frame, read as a hand that never left: no still board after the first move)
    frames, corners = _grainy_frames()
    seen = _types(frames, corners)
    assert seen.count("HandEntered") == 1 and seen.count("HandLeft") == 1
    assert seen.index("HandEntered") > seen.index("BoardStable")  # not before the hand came
    assert "BoardStable" in seen[seen.index("HandLeft"):]  # the board after the move is seen still
    # the change not scaled to the noise: the board after the move is never seen still
    patch_tracker(monkeypatch, "noise_scale", lambda *_: None)
    seen = _types(frames, corners)
    after = seen[seen.index("HandEntered"):] if "HandEntered" in seen else seen
    assert "BoardStable" not in after


def _first_still_board(monkeypatch, frames: list[np.ndarray], corners: tuple[tuple[float, float], ...],
                       mean: bool = True) -> np.ndarray:
    """The view the tracker keeps of the first still board (`TrackerState.ref_view`); `mean`: False, the grainy
    picture read from one frame as a clear one is (`hand.noisy` switched off)."""
    if not mean:
        patch_tracker(monkeypatch, "noisy", lambda *_: False)
    tracker = Tracker()
    state = tracker.initial(fit_from_corners(corners, "given", 0.0))
    for k, img in enumerate(frames):
        state, obs = tracker.step(state, img, k * STEP)
        if any(o.type == "BoardStable" for o in obs):
            assert state.ref_view is not None
            return state.ref_view
    raise AssertionError("no still board")


def test_a_grainy_still_board_is_read_from_its_still_frames_mean(monkeypatch) -> None:
    # (hard games drawn small, dim and grainy all over: the still board read from one frame misread pieces in
    # the noise; the noise is new in each frame, the board is not)
    from xqarb.vision.occupancy import warp_board

    kw = {"seed": 5, "tilt": 18.0, "rotate": 6.0, "line_colour": (30, 30, 150), "glare": False, "fill": 0.85,
          "size": (480, 360), "clutter": False}
    start = draw_board(START_SQUARES, **kw)
    rng = np.random.default_rng(2)
    dim = start.image.astype(np.float32) * 0.4  # (the whole board in shade)
    frames = [np.clip(dim + rng.normal(0.0, 10.0, (*dim.shape[:2], 1)), 0, 255).astype(np.uint8)
              for _ in range(8)]
    corners = tuple((float(x), float(y)) for x, y in start.corners)
    fit = fit_from_corners(corners, "given", 0.0)
    clean = warp_board(np.clip(dim, 0, 255).astype(np.uint8), fit.homography).bgr.astype(np.float32)

    def off(view: np.ndarray) -> float:
        return float(np.abs(view.astype(np.float32) - clean).mean())

    one = off(warp_board(frames[3], fit.homography).bgr)
    assert off(_first_still_board(monkeypatch, frames, corners)) < 0.75 * one
    # read from one frame, it keeps that frame's noise
    assert off(_first_still_board(monkeypatch, frames, corners, mean=False)) > 0.9 * one
