"""Piece classifier: from a crop of one piece disc, its colour (red / black) and type (K A B N R C P).

Pure core: arrays in, values out. The model is a small rotation-equivariant network in numpy (no deep-learning
framework): the crop's disc is found, its ink is unrolled into polar coordinates (angle x radius), and a 1-D
convolutional network runs *circularly along the angle*, ending in max/mean pooling over all angles. A rotation of
the piece is a circular shift of the angle axis, so the prediction does not depend on which way the character
faces (black's characters face Black, upside down from Red's side; cameras sit on any side of the board).
Colour is a separate, simpler decision from the ink's hue relative to the disc (white balance cancels out).

The weights are package data (`xqarb/data/vision/pieces.npz`, made by `python -m xqarb.vision.pieces_train`).
Training data: real photographs of pieces from the Roboflow Universe dataset "Chinese-chess-detect-for-yolo v8"
(CC BY 4.0), sprites drawn with every installed CJK font by `xqarb.vision.render_assets`, and pieces cropped from
whole rendered boards; see `xqarb/data/vision/README.md`. Accuracy: bench/RESULTS.md "## pieces".

Crops: BGR uint8, centred on the piece's top face (a few pixels off is fine), any size (resized to 48x48), seen
from above or rectified (the detector's canonical view), with the disc filling most of the crop: a square of side
about 1.0-1.3 x the disc diameter (on a board: about one grid spacing).
`classify` gives letters and confidences; `read` also gives the 7 type probabilities and P(red), for a caller that
weighs them against the known position. The network is a few float32 matrix products: run vision processes with
OPENBLAS_NUM_THREADS=1 (multi-threaded BLAS on small products is many times slower on a busy machine).
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import cv2
import numpy as np

TYPES = "KABNRCP"  # FEN letters of the piece types, the network's class order
# Every character a type may carry on a real set, simplified and traditional: 帅/帥 red king and 将/將 black king;
# 仕/士 advisors; 相/象 elephants; 马/馬/傌 horses; 车/車/俥 chariots; 炮/砲/包 cannons; 兵/卒 soldiers.
GLYPHS: dict[str, str] = {
    "K": "帅帥将將",
    "A": "仕士",
    "B": "相象",
    "N": "马馬傌",
    "R": "车車俥",
    "C": "炮砲包",
    "P": "兵卒",
}

SIZE = 48  # working size of a crop (pixels)
N_ANGLES = 64  # polar samples around the disc
N_RADII = 16  # polar samples from the centre to RADIUS_REACH x the disc radius
RADIUS_REACH = 0.92  # the glyph and the inner ring, not the disc's rim or what lies beyond it
_DEFAULT_RADIUS = 0.45 * SIZE  # when no disc is found: the crop is the disc with a small margin

_MODEL_FILE = "pieces.npz"


class ModelMissing(FileNotFoundError):
    """The classifier's weights are not where the package data should be."""


class ModelMismatch(ValueError):
    """Weights made for another input layout (crop size, polar sampling or classes) than this code's."""


class BadCrop(ValueError):
    """A crop that cannot be a piece image (wrong shape or type)."""


@dataclass(frozen=True)
class Disc:
    """Where the piece's top face lies in the 48x48 working image."""

    cx: float
    cy: float
    radius: float
    found: bool  # False: the default (centre of the crop) was used


_yy, _xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32)
_MORPH = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (3, 3))
_CENTRE_WINDOW = int(0.15 * SIZE)  # the disc's centre lies within this many pixels of the crop's


def normalise_crop(crop: np.ndarray) -> np.ndarray:
    """The crop as SIZE x SIZE BGR uint8 (area-averaged when shrinking)."""
    if not isinstance(crop, np.ndarray) or crop.ndim not in (2, 3) or min(crop.shape[:2]) < 4:
        got = getattr(crop, "shape", type(crop).__name__)
        raise BadCrop(f"a piece crop must be an HxW, HxWx3 or HxWx4 image of at least 4x4 pixels, got {got!r}")
    if crop.dtype != np.uint8:
        crop = np.clip(crop, 0, 255).astype(np.uint8)
    if crop.ndim == 2:
        crop = cv2.cvtColor(crop, cv2.COLOR_GRAY2BGR)
    elif crop.shape[2] == 4:
        crop = cv2.cvtColor(crop, cv2.COLOR_BGRA2BGR)
    h, w = crop.shape[:2]
    interp = cv2.INTER_AREA if min(h, w) > SIZE else cv2.INTER_LINEAR
    return cv2.resize(crop, (SIZE, SIZE), interpolation=interp)


def find_disc(img: np.ndarray) -> Disc:
    """The piece's top face: the largest circle inside the pale, bright region about the crop's centre.

    Pieces are light discs; their ring and character are holes in the pale region, filled before measuring.
    The distance transform's peak near the centre is the inscribed circle, so a pale background touching the
    disc (white table, paper board) does not inflate it the way a fitted outline would.
    """
    hsv = cv2.cvtColor(img, cv2.COLOR_BGR2HSV)
    pale = cv2.subtract(hsv[:, :, 2], hsv[:, :, 1])
    _, mask = cv2.threshold(pale, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, _MORPH)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    filled = np.zeros((SIZE + 2, SIZE + 2), np.uint8)  # a zero border: the crop's edge bounds the disc
    cv2.drawContours(filled[1:-1, 1:-1], contours, -1, 255, -1)
    dist = cv2.distanceTransform(filled, cv2.DIST_L2, 3)[1:-1, 1:-1]
    q, c0 = _CENTRE_WINDOW, SIZE // 2
    win = dist[c0 - q:c0 + q, c0 - q:c0 + q]
    j = int(win.argmax())
    r = float(win.flat[j])
    if r < 0.25 * SIZE:  # no pale disc about the centre: take the crop itself as the disc
        return Disc((SIZE - 1) / 2, (SIZE - 1) / 2, _DEFAULT_RADIUS, False)
    y, x = divmod(j, win.shape[1])
    return Disc(float(x + c0 - q), float(y + c0 - q), min(r + 0.5, 0.5 * SIZE), True)


def _inside(disc: Disc) -> np.ndarray:
    """The top face inside the ring's outer edge (boolean SIZE x SIZE)."""
    return (_xx - disc.cx) ** 2 + (_yy - disc.cy) ** 2 < (0.85 * disc.radius) ** 2


def ink_map(img: np.ndarray, disc: Disc, inside: np.ndarray | None = None) -> np.ndarray:
    """Ink darkness 0..1 relative to the disc: red and black ink are both dark in the smallest channel."""
    # cv2.min is ~10x faster than numpy's reduction over a 3-long last axis
    m = cv2.min(cv2.min(img[:, :, 0], img[:, :, 1]), img[:, :, 2]).astype(np.float32)
    vals = m[_inside(disc) if inside is None else inside]
    if vals.size < 16:
        vals = m.ravel()
    k_hi, k_lo = int(0.85 * (vals.size - 1)), int(0.02 * (vals.size - 1))
    part = np.partition(vals, (k_lo, k_hi))
    hi, lo = float(part[k_hi]), float(part[k_lo])
    # A floor on the contrast: a faint crop (blank disc, blur) must not be stretched into strong ink.
    return np.clip((hi - m) / max(hi - lo, 30.0), 0.0, 1.0)


def _polar(ink: np.ndarray, disc: Disc) -> np.ndarray:
    return cv2.warpPolar(ink, (N_RADII, N_ANGLES), (disc.cx, disc.cy), RADIUS_REACH * disc.radius,
                         cv2.INTER_LINEAR + cv2.WARP_POLAR_LINEAR + cv2.WARP_FILL_OUTLIERS)


def _colour(img: np.ndarray, ink: np.ndarray, inside: np.ndarray) -> np.ndarray:
    idx = np.flatnonzero(inside.ravel())
    if idx.size < 16:
        idx = np.arange(SIZE * SIZE)
    v = ink.ravel()[idx]
    n = len(v)
    k_paper, k_ink = max(1, n // 2), max(1, n // 10)
    order = np.argpartition(v, (k_paper - 1, n - k_ink))
    # the palest half is the disc (the white reference), the inkiest tenth the character and ring; masked means in
    # OpenCV (fancy-indexed numpy means cost more than all the rest)
    paper_mask = np.zeros(SIZE * SIZE, np.uint8)
    paper_mask[idx[order[:k_paper]]] = 1
    ink_mask = np.zeros(SIZE * SIZE, np.uint8)
    ink_mask[idx[order[n - k_ink:]]] = 1
    paper_mask, ink_mask = paper_mask.reshape(SIZE, SIZE), ink_mask.reshape(SIZE, SIZE)
    paper = np.array(cv2.mean(img, paper_mask)[:3]) + 1.0
    dark = np.array(cv2.mean(img, ink_mask)[:3]) + 1.0
    strength = cv2.mean(ink, ink_mask)[0]
    b, g, r = np.log(dark / paper)
    return np.array([r - g, r - b, g - b, r, strength], np.float32)


def crop_features(img: np.ndarray, disc: Disc | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(polar ink image N_ANGLES x N_RADII, colour features (5,)) of a SIZE x SIZE crop."""
    disc = disc or find_disc(img)
    inside = _inside(disc)
    ink = ink_map(img, disc, inside)
    return _polar(ink, disc), _colour(img, ink, inside)


def polar_ink(img: np.ndarray, disc: Disc | None = None) -> np.ndarray:
    """The ink in polar coordinates: N_ANGLES x N_RADII float32 (rows: angle, columns: radius)."""
    disc = disc or find_disc(img)
    return _polar(ink_map(img, disc), disc)


def colour_features(img: np.ndarray, disc: Disc | None = None) -> np.ndarray:
    """Log-ratios of the ink's colour to the disc's (white-balanced), as the colour decision's input.

    Red ink: much less green and blue than the disc, red nearly as bright; black (or dark green/blue) ink: all
    channels low, red no higher than green.
    """
    disc = disc or find_disc(img)
    inside = _inside(disc)
    return _colour(img, ink_map(img, disc, inside), inside)


FACE_REACH = 0.75  # fraction of the disc's radius taken as its face: the character and the face about it, the ring
# (at 0.78-0.9 of the radius on real and rendered sets) and the disc's rim, shadow and background left out
GLARE_SHARE = 0.05  # the palest share of the face is clipped before the split: glare, not the face's own tone
FACE_UNFOUND = 0.2  # x SIZE: the face's radius where no pale disc was found (a dark or red disc, a small piece):
# the crop's centre only, well inside a disc of 0.6-0.9 of the crop's side, clear of the board around it
# Where the face shows between the character and the ring on a piece centred in a crop about one spacing across
# (the disc 0.75-0.9 of it, the character mostly within 0.6 of the disc's radius, the ring from 0.78 of it):
# fractions of SIZE from the crop's centre
FACE_RING = (0.22, 0.28)
TONE_CORE = 0.5  # of each tone, the share farthest from the split is averaged: stroke edges are mixtures of both


@dataclass(frozen=True)
class InkTone:
    """The two tones of a piece's face, one side of a split (Otsu) on the darkness of the smallest channel: the
    character (and ring) and the disc about it. Whichever way round they are, the darker tone carries the colour and
    the lighter one is the white reference: red or black ink on a light disc, or a light character on a red or dark
    disc. The lighter tone's colour divides out the light's and the disc's tint (white balance).

    redness: log(dark / light) in red minus the mean of green and blue (red ink and red discs keep red light and
    lose green and blue: about +0.5..+1.5; black, dark green and blue-black inks and dark discs lose red at least as
    much as the others: about -1..+0.2). red_kept: log(dark / light) in red alone (red keeps most of it, black,
    green and blue inks little). contrast: grey levels between the two tones' cores. ring_dark: the share of the
    face between the character and the ring (FACE_RING) in the darker tone (most of it on a light character on a
    dark or red disc); dark_share: the darker tone's share of the whole face."""

    redness: float
    red_kept: float
    contrast: float
    ring_dark: float
    dark_share: float


def ink_tone(img: np.ndarray, disc: Disc | None = None) -> InkTone:
    """The two tones of a SIZE x SIZE crop's face (see `InkTone`)."""
    disc = disc or find_disc(img)
    reach = FACE_REACH * disc.radius if disc.found else FACE_UNFOUND * SIZE
    face = (_xx - disc.cx) ** 2 + (_yy - disc.cy) ** 2 < reach ** 2
    low = cv2.min(cv2.min(img[:, :, 0], img[:, :, 1]), img[:, :, 2])
    vals = low[face]
    if vals.size < 16:
        face = np.ones((SIZE, SIZE), bool)
        vals = low.ravel()
    top = np.percentile(vals, 100 * (1 - GLARE_SHARE))
    clipped = np.minimum(vals, top).astype(np.uint8)
    t, _ = cv2.threshold(clipped.reshape(-1, 1), 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    dark, light = vals <= t, vals > t
    if not dark.any() or not light.any():
        return InkTone(0.0, 0.0, 0.0, 0.0, 0.0)
    pix = img[face].astype(np.float32)
    order = np.argsort(vals, kind="stable")
    n_dark = int(dark.sum())
    n_light = len(vals) - n_dark
    dark_core = order[:max(1, int(TONE_CORE * n_dark))]
    light_core = order[n_dark + int((1 - TONE_CORE) * n_light):]
    # the light core without the glare clipped above
    light_core = light_core[vals[light_core] <= top] if (vals[light_core] <= top).any() else light_core
    d = pix[dark_core].mean(axis=0) + 1.0
    lt = pix[light_core].mean(axis=0) + 1.0
    b, g, r = np.log(d / lt)
    contrast = float(vals[light_core].mean() - vals[dark_core].mean())
    rr = np.hypot(_xx - (SIZE - 1) / 2, _yy - (SIZE - 1) / 2) / SIZE
    ring = (rr >= FACE_RING[0]) & (rr < FACE_RING[1])
    return InkTone(float(r - (g + b) / 2), float(r), contrast, float(np.mean(low[ring] <= t)), n_dark / len(vals))


def _circular_conv(x: np.ndarray, w: np.ndarray, b: np.ndarray, k: int) -> np.ndarray:
    """x: (B, L, C); w: (k*C, C') -> (B, L, C'), wrapping around the angle axis."""
    h = k // 2
    cols = np.concatenate([np.roll(x, h - j, axis=1) for j in range(k)], axis=2)
    # One 2-D product: a stacked 3-D matmul is several times slower in OpenBLAS.
    return (cols.reshape(-1, cols.shape[2]) @ w + b).reshape(x.shape[0], x.shape[1], w.shape[1])


@dataclass(frozen=True)
class Weights:
    convs: tuple[tuple[np.ndarray, np.ndarray, int], ...]  # (W, b, kernel) per layer
    head: tuple[np.ndarray, np.ndarray]  # (W, b) on [max-pool, mean-pool]
    colour: tuple[np.ndarray, np.ndarray, np.ndarray, float]  # (mean, scale, w, b) of a logistic regression
    meta: dict


def type_logits(weights: Weights, polar: np.ndarray) -> np.ndarray:
    """polar: (B, N_ANGLES, N_RADII) -> (B, 7) logits in TYPES order."""
    a = polar.astype(np.float32)
    for w, b, k in weights.convs:
        a = np.maximum(_circular_conv(a, w, b, k), 0.0)
    feats = np.concatenate([a.max(axis=1), a.mean(axis=1)], axis=1)
    return feats @ weights.head[0] + weights.head[1]


def softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def red_probability(weights: Weights, feats: np.ndarray) -> np.ndarray:
    mean, scale, w, b = weights.colour
    z = ((feats - mean) / scale) @ w + b
    return 1.0 / (1.0 + np.exp(-np.clip(z, -40, 40)))


def save_weights(path: Path, weights: Weights) -> None:
    arrays: dict[str, np.ndarray] = {}
    for i, (w, b, _k) in enumerate(weights.convs):
        arrays[f"conv{i}_w"], arrays[f"conv{i}_b"] = w.astype(np.float16), b.astype(np.float32)
    arrays["head_w"], arrays["head_b"] = weights.head[0].astype(np.float16), weights.head[1].astype(np.float32)
    mean, scale, w, b = weights.colour
    arrays["colour_mean"], arrays["colour_scale"], arrays["colour_w"] = mean, scale, w
    arrays["colour_b"] = np.array([b], np.float32)
    meta = dict(weights.meta, kernels=[k for _w, _b, k in weights.convs], size=SIZE, n_angles=N_ANGLES,
                n_radii=N_RADII, radius_reach=RADIUS_REACH, types=TYPES)
    arrays["meta"] = np.frombuffer(json.dumps(meta, ensure_ascii=False).encode(), np.uint8)
    with open(path, "wb") as fh:
        np.savez_compressed(fh, **arrays)


def load_weights(source: Path | bytes | None = None) -> Weights:
    if source is None:
        ref = resources.files("xqarb") / "data" / "vision" / _MODEL_FILE
        if not ref.is_file():
            raise ModelMissing(f"the piece classifier's weights {ref} are missing; train them with "
                               "`python -m xqarb.vision.pieces_train` (needs ../shared/data/piece_crops)")
        source = ref.read_bytes()
    data = np.load(io.BytesIO(source)) if isinstance(source, bytes) else np.load(source)
    meta = json.loads(bytes(data["meta"]).decode())
    if (meta["size"], meta["n_angles"], meta["n_radii"], meta["types"]) != (SIZE, N_ANGLES, N_RADII, TYPES):
        raise ModelMismatch(f"the piece classifier's weights were made for another input layout: {meta}; retrain "
                            "with `python -m xqarb.vision.pieces_train`")
    convs = tuple((data[f"conv{i}_w"].astype(np.float32), data[f"conv{i}_b"].astype(np.float32), int(k))
                  for i, k in enumerate(meta["kernels"]))
    return Weights(convs=convs, head=(data["head_w"].astype(np.float32), data["head_b"].astype(np.float32)),
                   colour=(data["colour_mean"], data["colour_scale"], data["colour_w"], float(data["colour_b"][0])),
                   meta=meta)


@dataclass(frozen=True)
class Reading:
    """Everything the classifier says about one crop."""

    letter: str  # FEN letter: upper-case red, lower-case black
    confidence: float  # P(type) x P(colour)
    type_probs: np.ndarray  # (7,) in TYPES order
    red: float  # P(red)
    disc: Disc


class PieceClassifier:
    """`PieceClassifier.load().classify(crops) -> [(letter, confidence), ...]`."""

    def __init__(self, weights: Weights) -> None:
        self.weights = weights

    @classmethod
    def load(cls, path: Path | None = None) -> PieceClassifier:
        return cls(load_weights(path))

    def read(self, crops: Sequence[np.ndarray]) -> list[Reading]:
        if len(crops) == 0:
            return []
        imgs = [normalise_crop(c) for c in crops]
        discs = [find_disc(im) for im in imgs]
        feats = [crop_features(im, d) for im, d in zip(imgs, discs, strict=True)]
        probs = softmax(type_logits(self.weights, np.stack([f[0] for f in feats])))
        red = red_probability(self.weights, np.stack([f[1] for f in feats]))
        out = []
        for p, r, d in zip(probs, red, discs, strict=True):
            t = int(p.argmax())
            is_red = bool(r >= 0.5)
            letter = TYPES[t] if is_red else TYPES[t].lower()
            conf = float(p[t]) * float(r if is_red else 1.0 - r)
            out.append(Reading(letter, conf, p, float(r), d))
        return out

    def classify(self, crops: Sequence[np.ndarray]) -> list[tuple[str, float]]:
        """Per crop, the FEN letter and a confidence 0..1 (the product of the type's and the colour's)."""
        return [(r.letter, r.confidence) for r in self.read(crops)]

    def colour(self, crop: np.ndarray) -> tuple[str, float]:
        """("red" | "black", confidence 0.5..1) from the ink's hue alone."""
        img = normalise_crop(crop)
        p = float(red_probability(self.weights, colour_features(img)[None])[0])
        return ("red", p) if p >= 0.5 else ("black", 1.0 - p)
