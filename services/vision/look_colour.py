"""A still board's piece colours from the pieces' look, calibrated on the position known to stand there.

The ink reading (`occupancy.read_view`) tells a piece's side by the colour of the ink it finds against the face. On a
small blurred picture, or under tall pieces seen steeply, the character's strokes are washed into the face and the
ink found is the face's own grain: on such a camera half the known red pieces read dark and the other way round,
and a capture (a piece taking another's place) or a piece set down reads as the wrong side. The middle of a piece's
top face still shows its character's hue (a red character keeps the face's middle reddish, a black or green one
greyer or greener) even where no stroke stands out. The position the tracker holds says which side each piece is
on: where the ink's colour misreads the known pieces' sides, the look's chroma (the mean a*, b* of the face's
middle, light-independent) is weighed by how well it separates the two sides there (a logistic fit over the known
pieces, as `joint_reading` fits occupancy), and the colours are read from it. A move changes the side of one point
at most; the fit over the other pieces is hardly moved by it. Pure: values in, values out."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np

from .joint_reading import fit_joint
from .occupancy import POINTS_PX, PointReading, S
from .settings import DEFAULTS, TrackerConfig
from .squares import _CASED


def look_chroma(view: np.ndarray, cfg: TrackerConfig = DEFAULTS) -> np.ndarray:
    """90 x 2: per point of the view (BGR, the tracker's canonical view through the plane its pieces' tops are
    read in), the mean CIELAB a* and b* over the disc of `hue_radius` spacings about the point: the hue of a
    piece's face middle, where its character stands."""
    lab = cv2.cvtColor(view, cv2.COLOR_BGR2LAB).astype(np.float32)
    r = max(1, round(cfg.hue_radius * S))
    yy, xx = np.mgrid[-r:r + 1, -r:r + 1]
    disc = (xx * xx + yy * yy <= r * r).astype(np.float32)
    disc /= float(disc.sum())
    h, w = lab.shape[:2]
    xs = np.clip(POINTS_PX[:, 0], 0, w - 1)
    ys = np.clip(POINTS_PX[:, 1], 0, h - 1)
    out = []
    for c in (1, 2):
        mean = cv2.filter2D(lab[:, :, c], -1, disc, borderType=cv2.BORDER_REPLICATE)
        out.append(mean[ys, xs])
    return np.stack(out, axis=1).astype(np.float64)


def _sides(known: str) -> tuple[np.ndarray, np.ndarray]:
    """Per point, whether `known` holds a piece there, and whether that piece is red."""
    return np.array([c in _CASED for c in known]), np.array([c in _CASED and c.isupper() for c in known])


def ink_colour_fails(reading: PointReading, known: str, cfg: TrackerConfig = DEFAULTS) -> bool:
    """The ink's colour misreads the side of more than a share `hue_from` of the pieces `known`, and
    each side has at least `hue_least` pieces to fit the look on."""
    piece, red = _sides(known)
    if int((piece & red).sum()) < cfg.hue_least or int((piece & ~red).sum()) < cfg.hue_least:
        return False
    misread = (reading.red > cfg.red_even) != red
    return int(misread[piece].sum()) > cfg.hue_from * int(piece.sum())


def look_colour(reading: PointReading, known: str, view: np.ndarray, changed: np.ndarray | None,
                cfg: TrackerConfig = DEFAULTS) -> PointReading:
    """`reading` with its pieces' colours read from their look (`look_chroma`), fitted on the sides of the pieces
    `known`, where the ink's colour fails there (`ink_colour_fails`) and the look misreads at least `hue_margin`
    fewer of those pieces' sides; else `reading` as it is. Only the points that hold a piece (known, or read by the
    occupancy) take the look's colour, and only where the look is sure of a side: an empty point's colour is no
    piece's, and stays as the ink read it. And only the points that `changed` since the last still board (None: no
    still board before, nothing is taken): a move is read from the points it changed, and elsewhere the rules weigh
    the ink's colours as they were read on the last still board, against which they were tuned."""
    if changed is None or not changed.any() or not ink_colour_fails(reading, known, cfg=cfg):
        return reading
    piece, red = _sides(known)
    # (the ink's own colour is one more cue: where it reads some of this board's pieces, the fit weighs it)
    red_ink = np.clip(reading.red, cfg.hue_red_floor, 1.0 - cfg.hue_red_floor)
    ink = np.log(red_ink / (1.0 - red_ink))
    x = np.c_[look_chroma(view, cfg=cfg), ink]
    prob = fit_joint(x[piece], red[piece], cfg=cfg)(x)
    ink_misread = int(((reading.red > cfg.red_even) != red)[piece].sum())
    look_misread = int(((prob > cfg.red_even) != red)[piece].sum())
    if look_misread + cfg.hue_margin > ink_misread:
        return reading
    # (the look is taken where it is sure of a side, `red_sure` / `dark_sure`; where it is not, the ink's colour,
    # which reads some pieces of such a board surely and rightly, stands)
    sure = (prob > cfg.red_sure) | (prob < cfg.dark_sure)
    held = (piece | (reading.occupied > cfg.ink_piece)) & sure & changed
    return replace(reading, red=np.where(held, prob, reading.red))
