"""The camera's noise in deep shade, and the view beyond a picture that cuts the board, are no hand (hand.py's
`dark_weight`, `seen_change`; tops.outside_picture)."""

from __future__ import annotations

import numpy as np

from xqarb.vision.frames import _norm, _norm_change
from xqarb.vision.hand import _hand_mask, dark_weight, seen_change
from xqarb.vision.occupancy import S
from xqarb.vision.settings import TrackerConfig
from xqarb.vision.tops import outside_picture

CFG = TrackerConfig()
H, W = 336, 304  # the tracker's canonical view of a board


def _view(rng: np.random.Generator, shade_rows: int, hand: bool = False) -> np.ndarray:
    """A light board whose top `shade_rows` lie in a sun's deep shadow (grey 25), with the camera's noise (3 grey
    levels) drawn afresh per frame; `hand`: a hand (grey 150) reaching in over the shaded edge."""
    grey = np.full((H, W), 170.0)
    grey[:shade_rows] = 25.0
    if hand:
        grey[:3 * S, 120:120 + 2 * S] = 150.0
    grey += rng.normal(0.0, 3.0, grey.shape)
    return np.repeat(np.clip(grey, 0, 255).astype(np.uint8)[:, :, None], 3, axis=2)


def test_the_cameras_noise_in_deep_shade_is_no_hand() -> None:
    rng = np.random.default_rng(3)
    still, now = _view(rng, 2 * S), _view(rng, 2 * S)
    raw = _norm_change(_norm(still), _norm(now))
    # (the normalised change of noise alone: about a tenth of the shade's local mean, over the change level)
    assert float(np.mean(raw[4:2 * S - 8] > CFG.change_level)) > 0.3
    assert _hand_mask(raw, CFG).any()
    weighed = seen_change(raw, dark_weight(now, CFG), None)
    assert not _hand_mask(weighed, CFG).any()
    # a hand reaching in over the shade is still a hand
    reach = _view(rng, 2 * S, hand=True)
    assert _hand_mask(seen_change(_norm_change(_norm(still), _norm(reach)), dark_weight(reach, CFG), None), CFG).any()


def test_a_light_view_is_not_weighed() -> None:
    rng = np.random.default_rng(4)
    assert dark_weight(_view(rng, 0), CFG) is None


def test_the_view_beyond_a_cut_picture_shows_no_change_and_its_edge_is_the_pictures() -> None:
    # A picture whose top edge runs through the board's first rank (the grid's corners a9, i9 above the picture):
    # the view's rows from beyond the picture repeat its edge; nothing is measured there, and the band just inside
    # the edge is where an arm reaching in enters the view.
    from xqarb.vision.board import fit_from_corners

    corners = ((100.0, -20.0), (500.0, -20.0), (500.0, 430.0), (100.0, 430.0))
    fit = fit_from_corners(corners, "given", 0.0)
    got = outside_picture((480, 640), fit.homography, None, CFG)
    assert got is not None
    outside, band = got
    assert outside.shape == (H, W) and band.shape == (H, W)
    rows = np.flatnonzero(outside.all(axis=1))
    # (the view's margin, 0.75 spacing, the 0.4 spacing of the grid above the picture, 20 of 50 pixels, and the
    # grown quarter: 1.4 spacings)
    assert rows.min() == 0 and 1.3 * S < rows.max() + 1 < 1.5 * S
    assert not outside[H // 2:].any()
    assert band.any() and not (band & outside).any()
    change = np.full((H, W), 0.5, np.float32)
    assert float(seen_change(change, None, outside)[outside].max()) == 0.0
    # (a board with its margin inside the picture: nothing to mask)
    inside = fit_from_corners(((150.0, 80.0), (450.0, 80.0), (450.0, 400.0), (150.0, 400.0)), "given", 0.0)
    assert outside_picture((480, 640), inside.homography, None, CFG) is None
