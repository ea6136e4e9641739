"""Reading the 90 points of a found board: empty, red piece or black piece (and the type where it can be told).

Pure: a frame and a `BoardFit` in, a `PointReading` out. The frame is warped once to a canonical top view
(`S` pixels per grid spacing). A piece is a light disc whose only colour cue is the ink of its character: so the
evidence for a piece is ink *off the printed lines* near the point (the printed lines, the palace diagonals and the
river text are masked out in the canonical view), gathered into an ink-density map whose peaks are the pieces'
centres; the colour is the chroma of that ink against the disc's face (red ink vs dark ink).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import cv2
import numpy as np

from .grid import POINTS_UV, canonical_transform

S = 32  # canonical pixels per grid spacing
MARGIN = 0.75  # canonical view extends this many spacings beyond the outer lines
POINTS_PX = np.round((POINTS_UV + MARGIN) * S).astype(int)  # (90, 2): each point's (x, y) in the canonical view

# Squares of the two palaces (files d..f), by rank: where the kings and advisors always stand.
RED_PALACE = [(9 - r) * 9 + f for r in (0, 1, 2) for f in (3, 4, 5)]
BLACK_PALACE = [(9 - r) * 9 + f for r in (7, 8, 9) for f in (3, 4, 5)]


def _line_mask(size: tuple[int, int]) -> np.ndarray:
    """1 where the canonical view shows printed board marks (lines, palace diagonals, river text), else 0."""
    w, h = size
    m = np.zeros((h, w), np.uint8)

    def c(u: float, v: float) -> tuple[int, int]:
        return round((u + MARGIN) * S), round((v + MARGIN) * S)

    t = max(3, round(0.16 * S))
    for v in range(10):
        cv2.line(m, c(-0.3, v), c(8.3, v), 1, t)
    for u in range(9):
        cv2.line(m, c(u, -0.3), c(u, 9.3), 1, t)
    for v0 in (0, 7):
        cv2.line(m, c(3, v0), c(5, v0 + 2), 1, t)
        cv2.line(m, c(5, v0), c(3, v0 + 2), 1, t)
    # star marks (little corner brackets) next to the cannon and pawn points
    for u, v in [(1, 2), (7, 2), (1, 7), (7, 7)] + [(u, v) for u in (0, 2, 4, 6, 8) for v in (3, 6)]:
        for du in (-1, 1):
            for dv in (-1, 1):
                if 0 <= u + 0.2 * du <= 8:
                    cv2.rectangle(m, c(u + 0.08 * du, v + 0.08 * dv), c(u + 0.22 * du, v + 0.22 * dv), 1, -1)
    # the river's text lies between ranks 4 and 5, away from the points (the ink a piece on rank 4/5 shows
    # within +-0.45 spacing is kept: only the band's middle is masked)
    cv2.rectangle(m, c(0.3, 4.27), c(7.7, 4.73), 1, -1)
    return m


@dataclass(frozen=True)
class CanonicalView:
    bgr: np.ndarray  # the board seen from above
    h_img_to_view: np.ndarray


def warp_board(image: np.ndarray, homography: np.ndarray) -> CanonicalView:
    """Warp a frame to the canonical top view (image -> board plane homography given)."""
    h, size = canonical_transform(homography, S, MARGIN)
    view = cv2.warpPerspective(image, h, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return CanonicalView(view, h)


_MASKS: dict[tuple[int, int], np.ndarray] = {}


def _mask_for(size: tuple[int, int]) -> np.ndarray:
    # Deterministic and read-only: a cache of a pure function's result, not state.
    if size not in _MASKS:
        _MASKS[size] = _line_mask(size)
    return _MASKS[size]


_VISIBLE: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}


def _visible_for(size: tuple[int, int],
                 tops: tuple[float, float, float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Where ink counts in a canonical view of `size` (1 off the printed marks and within the frame, else 0) and
    that weight blurred as the ink is (the density's denominator). A cache like _mask_for's (read-only). `tops`:
    the view is taken through the plane of the pieces' top faces (`tops.py`), where the printed marks are seen
    moved; the frame stays about the points, where the top faces are."""
    key = (size, tops)
    if key not in _VISIBLE:
        from .tops import warp_marks

        # ink fraction among the pixels not masked as printed marks (so that a point on the palace diagonals or at
        # the edge is not judged by less of its disc); outside the outer lines only board frames and clutter lie
        visible = (1.0 - warp_marks(_mask_for(size), tops)).astype(np.float32)
        lo, hi_u, hi_v = round((MARGIN - 0.15) * S), round((MARGIN + 8.15) * S), round((MARGIN + 9.15) * S)
        frame = np.zeros_like(visible)
        frame[lo:hi_v + 1, lo:hi_u + 1] = 1.0
        visible *= frame
        visible.setflags(write=False)
        den = np.maximum(cv2.GaussianBlur(visible, (0, 0), 0.2 * S), 0.05)
        den.setflags(write=False)
        _VISIBLE[key] = (visible, den)
    return _VISIBLE[key]


def ink_weight_at_points(size: tuple[int, int], tops: tuple[float, float, float] | None = None) -> np.ndarray:
    """Per point, how much of the ink about it counts (the density's denominator at the point, `_visible_for`):
    small where the printed marks, as the view shows them, mask the middle of the point (through the tops' plane,
    the river's band is seen over the points of one bank), where a piece's character cannot be read."""
    den = _visible_for(size, tops)[1]
    return den[POINTS_PX[:, 1], POINTS_PX[:, 0]].astype(np.float64)


@dataclass(frozen=True)
class PointReading:
    """Per point (squares order): the ink evidence of a piece, its colour and the piece centre's offset.

    occupied: 0..1 (1 = a piece stands on the point); red: 0..1 (1 = red ink, 0 = dark ink; only meaningful where
    occupied); offset: 90 x 2, where the ink peak lies relative to the point, in grid spacings; density: the raw
    ink density at the point; types: FEN letters from a classifier (None where not asked or not sure); joint: where
    the ink alone does not tell this board's pieces from its empty points, the probability of a piece that the
    joint of the cues reads (`joint_reading`: ink, round outline, printed lines bared, fitted on the known position),
    before `occupied` takes it only as far as the ink agrees; None where the ink reads the board.
    """

    occupied: np.ndarray
    red: np.ndarray
    offset: np.ndarray
    density: np.ndarray
    redness: np.ndarray
    types: tuple[str | None, ...] = field(default=(None,) * 90)
    type_conf: np.ndarray = field(default_factory=lambda: np.zeros(90))
    joint: np.ndarray | None = None

    def probabilities(self) -> np.ndarray:
        """90 x 3: P(empty), P(red piece), P(black piece)."""
        occ = np.clip(self.occupied, 0, 1)
        red = np.clip(self.red, 0, 1)
        return np.stack([1 - occ, occ * red, occ * (1 - red)], axis=1)

    def squares(self, sure: float = 0.75) -> str:
        """The 90 characters of BoardStable: FEN letter / X / x / . / ? (unsure below `sure`)."""
        out = []
        p = self.probabilities()
        for i in range(90):
            k = int(np.argmax(p[i]))
            if p[i, k] < sure:
                out.append("?")
            elif k == 0:
                out.append(".")
            else:
                t = self.types[i]
                is_red = k == 1
                if t is not None and t.isupper() == is_red:
                    out.append(t)
                else:
                    out.append("X" if is_red else "x")
        return "".join(out)


def _ink(view: np.ndarray) -> tuple[np.ndarray, tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
    """The ink map of `ink_maps`, with the view's channels and the face's (closed view) channels it came from."""
    k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (round(0.3 * S) | 1, round(0.3 * S) | 1))
    # (per-channel min / max and arithmetic with OpenCV: numpy's reductions over the channel axis cost ~10x more)
    b, g, r = cv2.split(view)
    low = cv2.min(cv2.min(b, g), r)
    bh = cv2.morphologyEx(low, cv2.MORPH_BLACKHAT, k).astype(np.float32)
    fb, fg, fr = cv2.split(cv2.morphologyEx(view, cv2.MORPH_CLOSE, k))
    face_max = cv2.max(cv2.max(fb, fg), fr).astype(np.float32)
    ink = np.clip((bh / (face_max + 1.0) - 0.08) * 5.0, 0, 1)
    return ink, (b, g, r), (fb, fg, fr)


def ink_maps(view: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ink (dark thin strokes of any colour: characters, rings, printed marks) and how red each pixel's ink is.

    Ink is a black-hat of the darkest channel (red, green and black ink are all dark in some channel), relative to
    the local face so that shadow and glare do not change what counts as ink. Redness compares what the ink takes
    away from the face in green and in red: red ink absorbs green but not red (+1), black ink both (0), green or
    blue ink red more than green and blue (< 0); a ratio, so faint or blurred strokes keep their colour. The third
    map is how much light a pixel's ink takes away from the face in all (darkness against the local face).
    """
    ink, (b, g, r), (fb, fg, fr) = _ink(view)
    # light taken away from the face, per channel (face - view, in float: the view may be brighter than the face)
    a_b = cv2.subtract(fb, b, dtype=cv2.CV_32F)
    a_g = cv2.subtract(fg, g, dtype=cv2.CV_32F)
    d_r = cv2.subtract(fr, r, dtype=cv2.CV_32F)
    d_gb = (a_b + a_g) * 0.5
    redness = (d_gb - d_r) / (np.abs(d_gb) + np.abs(d_r) + 8.0)
    return ink, redness, d_gb + d_r


def read_points(image: np.ndarray, fit, classifier=None, *, view: CanonicalView | None = None) -> PointReading:
    """Read the 90 points of `image` given a `BoardFit` (or anything with `.homography`)."""
    if view is None:
        view = warp_board(image, fit.homography)
    return read_view(view.bgr, classifier)


_DENSITY_SIGMA = 0.2 * S  # how widely a point's ink density is gathered (a Gaussian, in view pixels)


def _blur_at_points(img: np.ndarray, sigma: float) -> np.ndarray:
    """`cv2.GaussianBlur(img, (0, 0), sigma)` (float32: the kernel 8 sigma wide, the edges reflected as its
    default does) at the 90 points alone, (90,) float64. The points stand on 9 columns and 10 rows of the view, so
    the blur is taken down the columns at those 10 rows, then along those rows at the 9 columns."""
    k = cv2.getGaussianKernel(round(sigma * 8 + 1) | 1, sigma, cv2.CV_64F)[:, 0]
    r = len(k) // 2
    pad = cv2.copyMakeBorder(img, r, r, r, r, cv2.BORDER_REFLECT_101)
    xs, ys = POINTS_PX[:9, 0], POINTS_PX[::9, 1]
    down = np.einsum("rkw,k->rw", pad[ys[:, None] + np.arange(2 * r + 1)], k)  # (10, width + 2r): at the 10 rows
    return (down[:, xs[:, None] + np.arange(2 * r + 1)] @ k).reshape(90)  # (10, 9): and the 9 columns


def read_view(bgr: np.ndarray, classifier=None, *, quick: bool = False,
              tops: tuple[float, float, float] | None = None) -> PointReading:
    """Read the 90 points of a canonical view. `quick`: occupancy only (no piece centres, colours or types), for
    the frames with a hand over the board, where only a lifted piece is looked for. `tops`: the view is taken
    through the plane of the pieces' top faces (`tops.py`): the printed marks masked where it shows them."""
    if quick:  # occupancy only: the ink, not its colour
        ink, redness, absorbed_total = _ink(bgr)[0], None, None
    else:
        ink, redness, absorbed_total = ink_maps(bgr)
    h, w = ink.shape
    # ink fraction among the pixels that are no printed mark and lie within the frame (_visible_for)
    visible, den = _visible_for((w, h), tops)
    pts = POINTS_PX
    if quick:
        # (only the 90 points' densities are asked: the blur is taken at them alone, 0.1 ms instead of 1.2)
        d_at = _blur_at_points(ink * visible, _DENSITY_SIGMA) / den[pts[:, 1], pts[:, 0]].astype(np.float64)
        ref = max(float(np.percentile(d_at, 90)), 0.02)
        occ = 1.0 / (1.0 + np.exp(-(d_at / ref - 0.35) * 14.0))
        occ = np.where(d_at < 0.012, np.minimum(occ, 0.1), occ)
        return PointReading(occ, np.full(90, 0.5), np.zeros((90, 2)), d_at, np.zeros(90))
    dens = cv2.GaussianBlur(ink * visible, (0, 0), _DENSITY_SIGMA) / den
    # the density a piece produces: normalise by the 90th percentile of the point values so lighting and ink
    # weight do not matter
    d_at = dens[pts[:, 1], pts[:, 0]].astype(np.float64)
    # the piece's centre: mean shift of the ink around the point (the ink's centroid in a disc, re-centred a few
    # times), so that a piece half-way to the next point is followed to where it stands; the printed marks are
    # masked symmetrically about each point, so they do not pull the centroid of a piece that sits on it
    r = round(0.45 * S)
    yy, xx = np.mgrid[-r:r + 1, -r:r + 1]
    disc_r = ((xx ** 2 + yy ** 2) <= r * r).astype(np.float32)
    centres = pts.copy()
    wmap = ink * visible
    for _ in range(4):
        wts = windows(wmap, centres, r) * disc_r
        tot = wts.reshape(90, -1).sum(axis=1)
        cx = (wts * xx).reshape(90, -1).sum(axis=1) / np.maximum(tot, 1e-6)
        cy = (wts * yy).reshape(90, -1).sum(axis=1) / np.maximum(tot, 1e-6)
        step = np.stack([cx, cy], axis=1)
        step[tot < 1e-3] = 0
        centres = centres + np.round(step).astype(int)
        # never further than one spacing from its own point
        centres = pts + np.clip(centres - pts, -S, S)
    offset = (centres - pts) / S
    # occupancy: the density at the point against a scale set by the strongest points (pieces) of this frame
    ref = max(float(np.percentile(d_at, 90)), 0.02)
    occ = 1.0 / (1.0 + np.exp(-(d_at / ref - 0.35) * 14.0))
    # An absolute floor: an empty board has no ink at all
    occ = np.where(d_at < 0.012, np.minimum(occ, 0.1), occ)
    # colour: ink-weighted redness of the character (inside the ring: rings are often the same colour on both
    # sides), and nothing outside the outer lines (board frames would otherwise colour the edge points)
    rr = round(0.22 * S)
    yy, xx = np.mgrid[-rr:rr + 1, -rr:rr + 1]
    disc = ((xx ** 2 + yy ** 2) <= rr * rr).reshape(-1)
    # pieces have height: their top face is seen shifted from the point by the camera's angle, the same way for
    # all of them nearby; the median ink offset of the pieces is that shift
    on = occ > 0.5
    shift = np.median(offset[on], axis=0) if on.sum() >= 3 else np.zeros(2)
    if float(np.hypot(*shift)) > 0.2:  # more than a piece's height can show: the peaks are rims or shadows
        shift = np.zeros(2)
    centres = pts + np.round(shift * S).astype(int)
    absorb = windows(absorbed_total, centres, rr).reshape(90, -1)[:, disc]
    rw = windows(redness, centres, rr).reshape(90, -1)[:, disc]
    # the strokes: the pixels that take the most light from the face (the darkest fifth of the character)
    cut = np.percentile(absorb, 80, axis=1)
    wts = np.where(absorb >= cut[:, None], np.maximum(absorb, 0.0), 0.0)
    tot = wts.sum(axis=1)
    red_frac = np.where(tot > 1e-3, (wts * rw).sum(axis=1) / np.maximum(tot, 1e-3), 0.0)
    red = 1.0 / (1.0 + np.exp(-(red_frac - _colour_threshold(red_frac[occ > 0.5])) * 40.0))
    types: tuple[str | None, ...] = (None,) * 90
    conf = np.zeros(90)
    if classifier is not None:
        types, conf = _classify(bgr, classifier, occ, offset)
    return PointReading(occ, red, offset, d_at, red_frac, types, conf)


def windows(img: np.ndarray, centres: np.ndarray, r: int) -> np.ndarray:
    """(N, 2r+1, 2r+1) windows of a 2-D image around integer centres (x, y); outside the image reads 0."""
    pad = np.pad(img, r + 1)
    off = np.arange(-r, r + 1)
    ys = (centres[:, 1] + r + 1)[:, None, None] + off[None, :, None]
    xs = (centres[:, 0] + r + 1)[:, None, None] + off[None, None, :]
    ys = np.clip(ys, 0, pad.shape[0] - 1)
    xs = np.clip(xs, 0, pad.shape[1] - 1)
    return pad[ys, xs]


def _colour_threshold(values: np.ndarray, default: float = 0.05) -> float:
    """Red vs dark ink: the gap between the two clusters of ink redness in this frame (lighting shifts both),
    or a fixed threshold when the frame shows only one colour clearly."""
    v = np.sort(values)
    if len(v) < 4:
        return default
    # Otsu on the sorted values: the split with the largest between-class variance (cumulative sums)
    n = len(v)
    k = np.arange(1, n)
    csum = np.cumsum(v)[:-1]
    mean_a = csum / k
    mean_b = (v.sum() - csum) / (n - k)
    between = k * (n - k) * (mean_a - mean_b) ** 2
    j = int(np.argmax(between))
    best_t = float((v[j] + v[j + 1]) / 2)
    lo, hi = v[v <= best_t], v[v > best_t]
    if len(lo) and len(hi) and hi.mean() - lo.mean() > 0.06 and -0.1 < best_t < 0.5:
        # Otsu leans into the wider cluster: red inks spread more than dark ones (glare, shadow, a faded piece),
        # and a red piece or two at the low end of the spread fell on the dark side (a red ink at 0.16 with the
        # dark inks at most 0.03 was split off at 0.195). Between the two clusters' means the
        # widest gap between neighbouring values is where the colours part.
        inner = v[(v >= lo.mean()) & (v <= hi.mean())]
        if len(inner) >= 2:
            j = int(np.argmax(np.diff(inner)))
            return float((inner[j] + inner[j + 1]) / 2)
        return float(best_t)
    return default


def _classify(bgr: np.ndarray, classifier, occ: np.ndarray,
              offset: np.ndarray) -> tuple[tuple[str | None, ...], np.ndarray]:
    """Type of each occupied point from the piece classifier (crops centred on the ink peak)."""
    idx = [i for i in range(90) if occ[i] > 0.5]
    crops: list[np.ndarray] = []
    half = round(0.5 * S)
    padded = cv2.copyMakeBorder(bgr, half, half, half, half, cv2.BORDER_REPLICATE)
    for i in idx:
        x = round((POINTS_UV[i, 0] + MARGIN + offset[i, 0]) * S) + half
        y = round((POINTS_UV[i, 1] + MARGIN + offset[i, 1]) * S) + half
        crops.append(padded[y - half:y + half, x - half:x + half])
    types: list[str | None] = [None] * 90
    conf = np.zeros(90)
    if crops:
        for i, (letter, c) in zip(idx, classifier.classify(crops), strict=True):
            types[i] = letter
            conf[i] = c
    return tuple(types), conf


def orientation_vote(reading: PointReading) -> float:
    """> 0 when Red sits at rank 0 as fitted, < 0 when at rank 9, 0 when nothing tells.

    Compares how red the ink is, on average, on the two halves and in the two palaces: the kings and advisors never
    leave their palaces, and at the start and for most of a game most red pieces stand on Red's half. Averages of
    the continuous ink redness compare groups of pieces, which holds where single pieces' colours are unsure.
    """
    occ = reading.occupied > 0.5

    def mean_red(points: Sequence[int]) -> float | None:
        sel = [i for i in points if occ[i]]
        return float(np.mean(reading.redness[sel])) if sel else None

    vote = 0.0
    for bottom, top in ((range(45, 90), range(0, 45)), (RED_PALACE, BLACK_PALACE)):
        b, t = mean_red(bottom), mean_red(top)
        if b is not None and t is not None:
            vote += b - t
    return vote
