"""Reading one photo of a board (`xqarb vision detect`): each of the 90 points as a FEN letter, X / x, '.' or '?'.

Pure core: an image, a `BoardFit` and a piece classifier in, a `DetectReading` out.

A piece is a disc standing on its point, and the camera sees its raised top face (ring and character) displaced
from the point, away from the camera's foot point, by more the further the point is from it: on the board plane
the top faces are the points mapped through one homothety (a scale about the camera's foot point, by
camera height / (camera height - piece height)), so `d = p + a * (p - centre) + b` with three numbers for the
whole board. So:
1. the board is warped to a top view (the board plane, `PX` pixels per spacing);
2. discs are found by their outline and ring: the gradient direction along a circle about a true centre is radial,
   so a circle score (the mean of cos 2(gradient angle - radial angle) over an annulus, weighted by a saturating
   edge strength, for radii of the top face and its ring) peaks at each top face's centre; it is near 0 on an empty
   point, whose printed lines run radially and score negative;
3. empty and piece are told apart by the board's own disc scores (two groups, an unsure band between them; a
   point in the band is empty where a printed line still runs out of it in view);
4. (tall pieces seen steeply stand further off than the search reaches: the board's common shift of the top faces
   is found first, along the direction away from the camera, `coarse_shift`) the homothety is fitted to the strong
   discs (robustly), which tells where every top face should be; a disc
   standing between two points (5.10) makes both '?';
5. each piece is cropped from the photo itself (not the small top view) centred on its top face, one spacing
   across at the classifier's scale, in six slightly different crops, and read (type probabilities as their
   geometric mean; P(red) from the classifier's colour and the ink's tone against the disc, which reads red or dark
   ink on a light disc and a light character on a red or dark disc alike); colours left unsure are settled by the
   board's two colour groups;
6. a full board's rules are applied: at most 1 king, 2 advisors, 2 elephants, 2 horses, 2 chariots, 2 cannons,
   5 soldiers per side; kings and advisors only in their palace, elephants on their 7 points, soldiers on their
   10 starting points or beyond the river. A type the placement or the count forbids becomes the next best
   allowed one (trusted less, step 7); sure pieces the rules reject in the colour read get their
   colour re-read from the inks; sure pieces showing Red at the other end turn a grid fit half a turn;
7. each point's best reading ('.', a red or a black piece, and the piece's type among those the rules allow there)
   with an estimated probability (`best_readings`: the disc score's place in the board's unsure band, P(red), the
   type's share; less trusted on boards whose types mostly do not read, and where the rules overruled the
   network); it is printed wherever it is likely enough (UNSURE_BELOW, TYPE_UNSURE_BELOW), else '?', or X / x (a
   red / black piece of unknown type) where only the type is not; a disc between two points neither of which scores
   as a piece (5.10), or that stands clearly off its point, is '?'.

Measured: bench/RESULTS.md "detect" (bench/detect_rendered.py). The tracker can read pieces the same way with
`read_pieces` (crops centred where `DetectReading.centres` puts the top faces) or the whole `read_board`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import cv2
import numpy as np

from .board import BoardFit, fit_from_h, rotate_half_turn
from .grid import POINTS_UV, apply_h, canonical_transform, point_name
from .pieces import TYPES, InkTone, colour_features, ink_tone, normalise_crop

LIMITS = {"K": 1, "A": 2, "B": 2, "N": 2, "R": 2, "C": 2, "P": 5}

PX = 40  # top view pixels per grid spacing: a piece's outline is ~17 px in radius, plenty for the circle score
# Detect's top view reaches this far beyond the outer lines (spacings): a top face of the outer ranks, seen from a
# steep angle, stands up to SHIFT_RANGE further out, and its disc must be in the view to be scored (0.75 lost the
# far rank of tall pieces at 50 degrees).
TOP_MARGIN = 1.1
# The margin `find_discs` assumes of a view unless told: the tracker's views (occupancy.MARGIN) reach 0.75.
MARGIN = 0.75
# Radii (spacings) of the circles looked for: a top face is 0.40-0.48 spacings in radius on real and rendered
# sets, its printed ring 0.8-0.9 of that; the score takes the best radius per pixel.
RADII = tuple(float(r) for r in np.arange(0.28, 0.50, 0.02))
REACH = 0.32  # a disc is looked for this far from where it should be (parallax unknown before the fit)
# Tall pieces seen at a steep angle stand further off their points than REACH: a top face h spacings up, seen
# t degrees from straight above, lies h * tan(t) off its point on the board plane (0.54 spacing high at 50 degrees:
# 0.64). Before the discs are looked for, the whole board's shift of its top faces is found by trying shifts up to
# SHIFT_RANGE (spacings, under one spacing so that no shift lands every piece on its neighbour's point) in steps
# of SHIFT_STEP, each scored by the disc scores at the shifted points; a best shift under SHIFT_MIN is left at 0,
# since REACH finds those discs about their points as before.
SHIFT_RANGE = 0.75
SHIFT_STEP = 0.04
SHIFT_MIN = 0.15
# ... and only when the discs at the shifted points score this many times those at the points themselves: pieces
# flat enough to be found about their points keep being found there (a flat board's best shift is a tie).
SHIFT_GAIN = 1.3
# The shift is looked for along the direction away from the camera (where the board looks smaller), up to
# SHIFT_ACROSS spacings either side of it (the camera's direction as told by the grid's foreshortening is a few
# degrees off); a board whose picture area per spacing changes by less than FLAT_GRADIENT (log units per spacing)
# is seen from nearly straight above, and no shift is looked for (about 8 degrees of tilt at a venue's distance).
SHIFT_ACROSS = 0.12
FLAT_GRADIENT = 0.01
# A picture may cut the board (board.py takes a lattice hanging out of it by up to two outer lines a side): a point
# is read only when at least MIN_IN_VIEW of its disc (the top face's area, SEEN_RADIUS spacings about where the
# fit puts it) lies inside the picture; less, and what the camera cannot see is '?' (DESIGN: '?' where unsure), never
# '.'. 0.85: the picture's edge at least 0.58 of a radius beyond the centre, the character and most of the ring in
# view. On 20 easy "cut picture" boards (58 points partly in view): 0.75 read one king cut to 79 % as empty, 0.8 two
# pieces; 0.85 none wrong (20 of the 58 '?'), 0.9 none (28 '?'). Pixels outside the picture are no evidence: the warps
# replicate the picture's edge there, and the disc and line scores are not read from them (`in_picture`).
SEEN_RADIUS = 0.45
MIN_IN_VIEW = 0.85
CROP_PX = 48  # the classifier's working size: one spacing across, as it was trained
CROP_SIDE = 1.0  # spacings; wider crops take in the neighbours' discs and read worse (1.25: -10 points)

# Disc score (0..1): on rendered boards of all difficulties (70 boards, game and random positions) pieces score
# 0.59-1.0 and empties 0.1-0.67, but within one board the two overlapped once, by 0.03 (pieces of a blurred board
# score low, empties of a busy one high). So the board's own scores are split in two (Otsu) and the unsure band lies
# about the split: BAND of the distance between the two groups' medians either side (boards with pieces: 0.35-0.8
# apart; empty boards: at most 0.09, so below GROUPS_APART the fixed bands EMPTY_BELOW / PIECE_ABOVE hold). A point
# at or above EMPTY_BELOW is never called empty by the split (at most '?': a board whose pieces score in two groups
# must not lose the weaker group); one below SURELY_EMPTY is empty whatever the split says.
EMPTY_BELOW = 0.55
PIECE_ABOVE = 0.75
SURELY_EMPTY = 0.45
GROUPS_APART = 0.2
BAND = 0.2
MAX_PIECES = 32
OFF_POINT = 0.2  # a disc this far (spacings) from where the fit puts it stands off its point: '?'
# A point whose disc score lies in the unsure band is empty when a printed line still runs out of it, in view, as
# far as a piece's body would hide it (0.12-0.24 spacing): its best arm's line contrast at least LINES_SEEN of the
# board's median segment. 36 hard boards: 24 of 41 such empties settled; no piece with a disc score under 0.8
# reached 1.15 (3.7% of all pieces do, strong discs that never fall in the band).
LINES_SEEN = 1.15
# A type read with less probability than this is '?'. On the real valid photos (1,548 crops, detect's six variants)
# types read with p >= 0.75 were 81.8% of the crops and 1.8% of them wrong (colour included); p >= 0.9: 80.0% and
# 0.73% wrong; p >= 0.95: 79.1% and 0.24% wrong, but then plain renders lose right pieces at the board's corners
# (crops with the frame in them read 0.9-0.93): 0.9 it is.
TYPE_SURE = 0.9
FORBIDDEN_SURE = 0.9  # a type the rules forbid, read this surely: the reading is not trusted at all ('?')
ALLOWED_SURE = 0.75  # the replacement for a forbidden type must hold this share of the allowed types' probability
# (and, to be printed, TYPE_SURE: the share is the replacement's probability)
COLOUR_SURE = 0.9  # P(red) or P(black) below this is '?'
INK_GAP = 0.8  # see ink_groups
# When fewer than this share of a board's pieces get a sure type, the board is too blurred or too small for the
# network, which is then sure of wrong types too (a small blurred hard render: 4 of its 5 sure types were wrong):
# every type on it is '?'.
READABLE_SHARE = 0.5
# Orientation: kings, advisors, elephants and soldiers read surely (ORIENT_SURE) where only the other orientation
# allows them; the board is turned when at least ORIENT_MIN of them say so and ORIENT_RATIO times more than say not.
ORIENT_SURE = 0.9
ORIENT_MIN = 3
ORIENT_RATIO = 3
# Colour: within one board red and black pieces' colour logits (the classifier's) fall into two groups even where
# light makes the classifier's own threshold wrong for the whole board (rendered boards: always separated); the
# board's split decides where the groups are clear, COLOUR_BAND of the distance between their medians around it.
COLOUR_BAND = 0.25
# logit units between the two groups' medians, else the board's split is not used (a hard board whose black pieces
# read P(red) 0.17-0.43 and red ones 0.61-0.95 is 2.4 apart)
COLOUR_GROUPS_APART = 1.5
# Colour from the ink against the disc (pieces.ink_tone): the darker of the face's two tones against the lighter,
# whichever way round they are (red or black ink on a light disc, a light character on a red or dark disc), by how
# far it leans to red (`redness`) plus RED_KEPT_WEIGHT times how much of the lighter tone's red light it keeps
# (`red_kept`: a dark brown disc or a brown-black ink leans to red too, but is dark in red as well). Real valid crops
# (../shared/data/piece_crops, read as detect reads them, six variants), 1st..99th percentile: black inks (black,
# dark green, blue-black) -1.84..-0.32, red to purple inks -0.33..1.47 (the best single split right on 99.0%); the
# same crops recoloured as light characters on dark discs at most -0.39, on red discs at least 0.71.
RED_KEPT_WEIGHT = 0.5
REDNESS_SPLIT = -0.3
# logit units per unit of that measure (from REDNESS_SPLIT) added to the classifier's colour logit. The classifier's
# colour is trained on light discs with dark ink: on a light character on a dark or red disc (`light_on_dark`) it
# adds only where it agrees; where it disagrees it only makes the tone's reading less sure (`colour_logit`).
TONE_WEIGHT = 8.0
# The classifier's colour logit is held within this many units: it is over-sure where its light-disc reference does
# not hold (rendered purple-black ink on an ivory disc: P(red) 0.98-1 from the classifier, where the tone reads
# black); on the real valid crops the two agree, and the cap changes none of their readings (bench/piece_colours.py).
CLASSIFIER_CAP = 4.0
# Grey levels between the two tones (`InkTone.contrast`) below which the tone's evidence is weighed down in
# proportion: on a blurred, dim or washed-out crop the darker tone is mostly the disc's own tint mixed into the
# strokes (a blurred hard render: black ink 18-43 grey levels from its disc and leaning to red like the red ink).
# Real crops: 115-200; light characters on dark discs: 40 and up.
TONE_CONTRAST = 60.0
# A light character on a dark or red disc: the darker tone is most of the face about the character in this share of
# a piece's crops. Rendered light-on-dark sets (easy scenes 1, 5, 28 below 200): 95 of 96 pieces so judged; real
# crops of light discs (valid, every 3rd, their boxes centred: these often take in the piece's side or the cloth,
# which detect's crops, centred on the top face, do not): 12.8% (a stricter test lost whole rendered sets).
LIGHT_ON_DARK_CROPS = 2 / 3
COLOUR_GAP_ALONE = 8.0  # logit units between the groups when the lower one also leans red (see board_colours)
# Test-time variants of each crop (side in spacings, shift in spacings): the network is sure of some wrong types on
# one exact crop; the geometric mean over these is not (rendered easy + hard pieces, 6 variants: wrong types among
# those read with p >= 0.75: 2 of 1,100 -> 0, and 1.3 points more read).
VARIANTS = ((1.0, 0.0, 0.0), (0.9, 0.0, 0.0), (1.1, 0.0, 0.0), (1.0, 0.03, 0.0), (1.0, 0.0, 0.03),
            (1.0, -0.03, -0.03))


@dataclass(frozen=True)
class DetectReading:
    """What one photo shows, per point (squares order: rank 9 first, files a..i)."""

    squares: str  # 90 characters: FEN letter, X / x (a red / black piece of unknown type), '.', or '?'
    disc: np.ndarray  # (90,) disc score 0..1 at the point (empty below EMPTY_BELOW, piece above PIECE_ABOVE)
    centres: np.ndarray  # (90, 2) where each point's top face is taken to be, board plane (spacings)
    found: np.ndarray  # (90, 2) where the disc search found the strongest circle near each point
    parallax: tuple[float, float, float]  # the homothety (a, bx, by): top face = p + a (p - (4, 4.5)) + b
    letters: tuple[str | None, ...]  # the classifier's letter after the rules (None: no piece read there)
    type_prob: np.ndarray  # (90,) probability of that letter's type (0 where no piece)
    red: np.ndarray  # (90,) P(red) (0.5 where no piece)
    reasons: tuple[str, ...]  # per point, why it is '?' or X / x ("" where it is neither)
    fit: BoardFit  # the fit read: the one given, or it turned by half a turn when the pieces said so
    turned: bool  # True when the pieces showed Red at the other end than the fit had it
    # what each point's reading rests on, and its best reading with estimated probabilities (`best_readings`);
    # None where built by hand
    evidence: PointEvidence | None = None
    best: BestReadings | None = None  # each point's best reading and its estimated probability
    in_view: np.ndarray | None = None  # (90,) share of each point's disc inside the picture (`disc_in_view`)


# ---------------------------------------------------------------------------------------------------------------
# Discs


def top_view(image: np.ndarray, homography: np.ndarray, px: int = PX) -> np.ndarray:
    """The board plane seen from above: point (u, v) at ((u + TOP_MARGIN) * px, (v + TOP_MARGIN) * px)."""
    h, size = canonical_transform(homography, px, TOP_MARGIN)
    return cv2.warpPerspective(image, h, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def in_picture(image_shape: tuple[int, ...], homography: np.ndarray, px: int = PX,
               margin: float = TOP_MARGIN) -> np.ndarray:
    """The top view's mask (bool, as `top_view` lays it out) of the pixels that come from inside the picture."""
    h, size = canonical_transform(homography, px, margin)
    ones = np.ones(image_shape[:2], np.uint8)
    return cv2.warpPerspective(ones, h, size, flags=cv2.INTER_NEAREST, borderMode=cv2.BORDER_CONSTANT,
                               borderValue=0) > 0


def disc_in_view(image_shape: tuple[int, ...], homography: np.ndarray, centres_uv: np.ndarray,
                 radius: float = SEEN_RADIUS) -> np.ndarray:
    """Per centre (board plane, spacings), the share of its disc of `radius` spacings that lies inside the picture
    (sampled on a 15 x 15 grid over the disc, mapped to the picture)."""
    g = np.linspace(-radius, radius, 15)
    du, dv = np.meshgrid(g, g)
    keep = du ** 2 + dv ** 2 <= radius ** 2
    offsets = np.stack([du[keep], dv[keep]], axis=1)
    hb = np.linalg.inv(np.asarray(homography, float))
    c = np.asarray(centres_uv, float).reshape(-1, 2)
    q = apply_h(hb, (c[:, None, :] + offsets[None]).reshape(-1, 2)).reshape(len(c), len(offsets), 2)
    hh, ww = image_shape[:2]
    inside = (q[..., 0] >= 0) & (q[..., 0] <= ww - 1) & (q[..., 1] >= 0) & (q[..., 1] <= hh - 1)
    return inside.mean(axis=1)


def _annulus_kernels(px: int) -> list[tuple[np.ndarray, np.ndarray]]:
    out = []
    for r in RADII:
        rad = r * px
        n = int(np.ceil(rad + 3))
        yy, xx = np.mgrid[-n:n + 1, -n:n + 1].astype(np.float32)
        w = np.clip(1.0 - np.abs(np.hypot(xx, yy) - rad), 0.0, None)  # a ring two pixels wide
        w /= w.sum()
        th = np.arctan2(yy, xx)
        out.append(((w * np.cos(2 * th)).astype(np.float32), (w * np.sin(2 * th)).astype(np.float32)))
    return out


_KERNELS: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {}


def _kernels(px: int) -> list[tuple[np.ndarray, np.ndarray]]:
    # a cache of a pure function's constant result, not state
    if px not in _KERNELS:
        _KERNELS[px] = _annulus_kernels(px)
    return _KERNELS[px]


_SPECTRA: dict[tuple[int, tuple[int, int]], list[tuple[np.ndarray, np.ndarray]]] = {}


def _ring_spectra(px: int, shape: tuple[int, int]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The ring kernels' transforms (cv2.dft's packed form) for views padded to `shape`, each kernel's centre at the
    origin so that the product is the filter2D response (the kernels are point-symmetric: correlation and
    convolution agree). A cache of a pure function's constant result, as `_kernels`; a few shapes at most (the top
    views' sizes follow from px alone)."""
    key = (px, shape)
    if key not in _SPECTRA:
        if len(_SPECTRA) >= 8:
            _SPECTRA.clear()
        out = []
        for kc, ks in _kernels(px):
            n = kc.shape[0] // 2
            pair = []
            for k in (kc, ks):
                big = np.zeros(shape, np.float32)
                big[:k.shape[0], :k.shape[1]] = k
                pair.append(cv2.dft(np.roll(big, (-n, -n), axis=(0, 1))))
            out.append((pair[0], pair[1]))
        _SPECTRA[key] = out
    return _SPECTRA[key]


def circle_score(view: np.ndarray, px: int = PX) -> np.ndarray:
    """Per pixel of a top view, how much a circle of a piece's size is centred there (about -1..1).

    cos 2(phi - theta) is 1 where an edge runs along the circle (gradient radial), -1 where it crosses it, so the
    double-angle form is the same for a dark ring on a light face and a light face on a dark board. The gradient is
    the colour structure tensor (all three channels: a wooden disc on a greenish sheet differs in hue more than in
    brightness), and its strength saturates early (mag / (mag + 0.1 median + 1)): what counts is that edges run
    round, not how strong they are, so a blurred or faint outline counts nearly as much as a black stroke. Measured
    on 22 hard boards against the plain grey gradient with a median-strength knee: the margin between the weakest
    pieces and the strongest empty points of a board rose from -0.09..0.25 (min..median) to 0.07..0.37.
    """
    v = view.astype(np.float32)
    gxx = np.zeros(v.shape[:2], np.float32)
    gyy = np.zeros_like(gxx)
    gxy = np.zeros_like(gxx)
    for c in range(v.shape[2]):
        g = cv2.GaussianBlur(v[:, :, c], (0, 0), 0.7)
        gx = cv2.Sobel(g, cv2.CV_32F, 1, 0, ksize=3)
        gy = cv2.Sobel(g, cv2.CV_32F, 0, 1, ksize=3)
        gxx += gx * gx
        gyy += gy * gy
        gxy += gx * gy
    mag2 = gxx + gyy + 1e-6
    mag = np.sqrt(mag2)
    w = mag / (mag + 0.1 * float(np.median(mag)) + 1.0)
    c2 = (gxx - gyy) / mag2 * w
    s2 = 2.0 * gxy / mag2 * w
    # Each ring's response is c2 (*) kc + s2 (*) ks: in the frequency domain the two views are transformed once and
    # each ring costs one product and one inverse transform (filter2D transformed the view again for each of the 22
    # kernels: 3.6x the time, the same response within 3e-7). The views are padded by the widest ring with their
    # edge pixels, as filter2D's BORDER_REPLICATE reads them, so the transform's wrap-around stays in the padding.
    n = max(kc.shape[0] // 2 for kc, _ in _kernels(px))
    h, w_ = c2.shape
    ph, pw = cv2.getOptimalDFTSize(h + 2 * n), cv2.getOptimalDFTSize(w_ + 2 * n)
    c2f, s2f = (cv2.dft(cv2.copyMakeBorder(a, n, ph - h - n, n, pw - w_ - n, cv2.BORDER_REPLICATE)) for a in (c2, s2))
    best = None
    for kc, ks in _ring_spectra(px, (ph, pw)):
        spectrum = cv2.mulSpectrums(c2f, kc, 0) + cv2.mulSpectrums(s2f, ks, 0)
        resp = cv2.idft(spectrum, flags=cv2.DFT_REAL_OUTPUT | cv2.DFT_SCALE)[n:n + h, n:n + w_]
        best = resp if best is None else np.maximum(best, resp)
    assert best is not None
    return best


def find_discs(score: np.ndarray, expected_uv: np.ndarray, reach: float = REACH, px: int = PX,
               margin: float = MARGIN) -> tuple[np.ndarray, np.ndarray]:
    """The strongest circle within `reach` spacings of each expected centre: (centres (N, 2) in spacings, score);
    `score` is of a view reaching `margin` spacings beyond the outer lines."""
    r = round(reach * px)
    yy, xx = np.mgrid[-r:r + 1, -r:r + 1]
    inside = (xx ** 2 + yy ** 2) <= r * r
    pad = np.pad(score, r + 1, mode="constant", constant_values=-1.0)
    centres = np.round((np.asarray(expected_uv, float) + margin) * px).astype(int)
    ys = (centres[:, 1] + r + 1)[:, None, None] + yy[None]
    xs = (centres[:, 0] + r + 1)[:, None, None] + xx[None]
    ys = np.clip(ys, 0, pad.shape[0] - 1)
    xs = np.clip(xs, 0, pad.shape[1] - 1)
    win = np.where(inside[None], pad[ys, xs], -1.0).reshape(len(centres), -1)
    j = win.argmax(axis=1)
    val = win[np.arange(len(centres)), j]
    dy, dx = np.divmod(j, 2 * r + 1)
    found = (centres + np.stack([dx - r, dy - r], axis=1)) / px - margin
    return found.astype(float), val.astype(float)


def away_from_camera(homography: np.ndarray) -> np.ndarray | None:
    """The direction (unit (u, v), board plane) in which raised things are seen displaced: away from the camera,
    towards where the board looks smaller in the picture; None when it looks the same size all over (seen from
    straight above, where nothing raised is displaced far). `homography`: image -> board plane."""
    hb = np.linalg.inv(np.asarray(homography, float))
    u, v = np.meshgrid([0.0, 4.0, 8.0], [0.0, 4.5, 9.0])
    p = np.stack([u.ravel(), v.ravel()], 1)
    e = 0.5
    o, du, dv = apply_h(hb, p), apply_h(hb, p + np.array([e, 0.0])), apply_h(hb, p + np.array([0.0, e]))
    a, b = du - o, dv - o
    area = np.abs(a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]) / e ** 2
    g = np.linalg.lstsq(np.column_stack([np.ones(len(p)), p]), np.log(area + 1e-12), rcond=None)[0][1:]
    if np.hypot(*g) < FLAT_GRADIENT:
        return None
    return -g / np.hypot(*g)


def coarse_shift(score: np.ndarray, away: np.ndarray | None, points_uv: np.ndarray = POINTS_UV, px: int = PX,
                 margin: float = TOP_MARGIN) -> np.ndarray:
    """The shift (spacings, (2,)) of the top faces off their points that the disc scores favour most (the sum of the
    scores above EMPTY_BELOW at the shifted points, smoothed over a few pixels, for pieces stand a little off),
    looked for along `away` (away_from_camera) only: a shift across it, or onto the cells' centres, is the print's
    pattern, not the pieces. (0, 0) when `away` is None, the shift is under SHIFT_MIN or not SHIFT_GAIN times
    better than no shift."""
    if away is None:
        return np.zeros(2)
    # only disc-like scores count (an empty point's lines and print score up to about EMPTY_BELOW)
    near = cv2.GaussianBlur(np.clip(score - EMPTY_BELOW, 0, None).astype(np.float32), (0, 0), 2.0)
    t, w = np.meshgrid(np.arange(0.0, SHIFT_RANGE + 1e-9, SHIFT_STEP),
                       np.arange(-SHIFT_ACROSS, SHIFT_ACROSS + 1e-9, SHIFT_STEP))
    a = np.asarray(away, float)
    shifts = t.reshape(-1, 1) * a + w.reshape(-1, 1) * np.array([-a[1], a[0]])
    uv = (np.asarray(points_uv, float)[None] + shifts[:, None] + margin) * px
    xs = np.clip(np.round(uv[..., 0]).astype(int), 0, near.shape[1] - 1)
    ys = np.clip(np.round(uv[..., 1]).astype(int), 0, near.shape[0] - 1)
    total = near[ys, xs].sum(axis=1)
    k = int(np.argmax(total))
    at_points = float(total[int(np.argmin(np.hypot(*shifts.T)))])
    best = shifts[k]
    return best if np.hypot(*best) >= SHIFT_MIN and total[k] >= SHIFT_GAIN * at_points else np.zeros(2)


_CENTRE = np.array([4.0, 4.5])


def fit_parallax(points_uv: np.ndarray, found_uv: np.ndarray) -> tuple[float, float, float]:
    """The homothety that maps points to their top faces, `found - p = a (p - centre) + b`, fitted robustly
    (least squares, dropping the discs that sit far from the model: pieces off their points, misfound discs).
    With fewer than 3 discs only a shift is fitted; with none, no parallax."""
    p = np.asarray(points_uv, float)
    d = np.asarray(found_uv, float) - p
    if len(p) == 0:
        return 0.0, 0.0, 0.0
    if len(p) < 3:
        b = np.median(d, axis=0)
        return 0.0, float(b[0]), float(b[1])
    q = p - _CENTRE
    x = np.zeros((2 * len(p), 3))
    x[0::2, 0], x[1::2, 0] = q[:, 0], q[:, 1]
    x[0::2, 1] = 1.0
    x[1::2, 2] = 1.0
    y = d.reshape(-1)
    keep = np.ones(len(p), bool)
    sol = np.zeros(3)
    for _ in range(5):
        k2 = np.repeat(keep, 2)
        sol, *_ = np.linalg.lstsq(x[k2], y[k2], rcond=None)
        res = np.hypot(*(x @ sol - y).reshape(-1, 2).T)
        new = res <= max(0.06, 2.5 * float(np.median(res)))
        if new.sum() < 3 or np.array_equal(new, keep):
            break
        keep = new
    return float(sol[0]), float(sol[1]), float(sol[2])


def parallax_centres(points_uv: np.ndarray, parallax: tuple[float, float, float]) -> np.ndarray:
    a, bx, by = parallax
    p = np.asarray(points_uv, float)
    return p + a * (p - _CENTRE) + np.array([bx, by])


def centred_crops(image: np.ndarray, homography: np.ndarray, centres_uv: np.ndarray, *, px: int = CROP_PX,
                  side: float = CROP_SIDE) -> list[np.ndarray]:
    """Crops of the photo itself, rectified to the board plane, `side` spacings across, centred on `centres_uv`
    (board plane, spacings), `px` pixels per spacing: what the piece classifier was trained on."""
    hb = np.linalg.inv(np.asarray(homography, float))
    n = max(8, round(px * side))
    c = (n - 1) / 2
    out = []
    for u, v in np.asarray(centres_uv, float):
        t = np.array([[1 / px, 0, u - c / px], [0, 1 / px, v - c / px], [0, 0, 1.0]])
        out.append(cv2.warpPerspective(image, hb @ t, (n, n), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                                       borderMode=cv2.BORDER_REPLICATE))
    return out


# ---------------------------------------------------------------------------------------------------------------
# The rules of a full board


def _red_points(letter: str) -> frozenset[int]:
    """Squares indices where a red piece of this type may stand (Red at ranks 0-4, as `squares` puts it)."""
    def idx(f: int, r: int) -> int:
        return (9 - r) * 9 + f

    if letter == "K":
        return frozenset(idx(f, r) for f in (3, 4, 5) for r in (0, 1, 2))
    if letter == "A":
        return frozenset(idx(f, r) for f, r in ((3, 0), (5, 0), (4, 1), (3, 2), (5, 2)))
    if letter == "B":
        return frozenset(idx(f, r) for f, r in ((2, 0), (6, 0), (0, 2), (4, 2), (8, 2), (2, 4), (6, 4)))
    if letter == "P":
        return frozenset([idx(f, r) for f in (0, 2, 4, 6, 8) for r in (3, 4)]
                         + [idx(f, r) for f in range(9) for r in range(5, 10)])
    return frozenset(range(90))


def allowed_points(letter: str) -> frozenset[int]:
    """Where a piece (FEN letter: upper-case red) may stand on a legal board; black mirrors red across the river."""
    red = _red_points(letter.upper())
    if letter.isupper():
        return red
    return frozenset((9 - i // 9) * 9 + i % 9 for i in red)


ALLOWED = {(t, red): allowed_points(t if red else t.lower()) for t in TYPES for red in (True, False)}


def assign_types(points: Sequence[int], probs: np.ndarray, red: Sequence[bool]) -> list[tuple[int | None, float]]:
    """Per piece, the type index the rules allow and its probability, or (None, p) where no allowed type is likely.

    Greedy on the whole board, surest first: each piece takes its most probable type if that is allowed on its
    point and still has room under its side's count. Otherwise (the network erred, or the piece is misplaced) the
    next best allowed type with room replaces it when the forbidden type was not read surely (< FORBIDDEN_SURE) and
    the replacement holds ALLOWED_SURE of the probability of the types still possible; its probability is then that
    share. A kept type's probability is likewise its share among the types the rules still allow there (rendered
    boards, 40 easy + 40 hard: '?' 0.67% -> 0.11% and 5.06% -> 3.80% of points, still no wrong point; the network's
    probabilities are the geometric mean over crop variants, which tempers its over-sure single readings).
    """
    probs = np.asarray(probs, float)
    room = {(t, s): LIMITS[t] for t in TYPES for s in (True, False)}
    order = sorted(range(len(points)), key=lambda k: -float(probs[k].max()))
    out: list[tuple[int | None, float]] = [(None, 0.0)] * len(points)
    for k in order:
        i, side = points[k], bool(red[k])
        ok = np.array([i in ALLOWED[(t, side)] and room[(t, side)] > 0 for t in TYPES])
        best = int(probs[k].argmax())
        if ok[best]:
            room[(TYPES[best], side)] -= 1
            # the rules rule out some types here: the kept type's probability among those still possible
            out[k] = (best, float(probs[k][best]) / max(float(probs[k][ok].sum()), 1e-12))
            continue
        p = np.where(ok, probs[k], 0.0)
        tot = float(p.sum())
        t = int(p.argmax())
        share = float(p[t]) / tot if tot > 0 else 0.0
        if tot <= 0 or probs[k][best] >= FORBIDDEN_SURE or share < ALLOWED_SURE:
            out[k] = (None, share)
            continue
        room[(TYPES[t], side)] -= 1
        out[k] = (t, share)
    return out


# ---------------------------------------------------------------------------------------------------------------
# Each point's best reading, and when it is printed

# Outside checks count '?' as wrong, and X / x as a wrong type: a point is given its best reading wherever that is
# likely enough, and '?' / X / x only where the evidence is split.
# A point is '?' only when its best reading of occupancy and colour ('.', a red piece or a black piece) has an
# estimated probability under UNSURE_BELOW (right at least 3 times in 5: a wrong '.' or colour misleads the tracker
# and the arbiter more than a '?'); a piece is X / x only when its best type (among those the rules allow on its
# point) has an estimated probability under TYPE_UNSURE_BELOW (more likely right than not). Rendered hard preset,
# 31 boards: UNSURE_BELOW 0.5 / 0.6 / 0.7 left 34 / 53 / 69 '?' with 64 / 54 / 50 wrong points.
UNSURE_BELOW = 0.6
TYPE_UNSURE_BELOW = 0.5
# P(piece) of a point whose disc score lies in the board's unsure band: a logistic in x = (disc score - the split
# between the board's two groups) / (the band's width), P = 1 / (1 + exp(-(BAND_SLOPE (x - BAND_CENTRE) + r))), r =
# TYPE_READ_LOGIT where the classifier reads the point's crops as one type at P >= TYPE_READ (an empty point's
# printed lines seldom read as a character that surely). Fitted (maximum likelihood) on the 164 band points of 116
# rendered boards (hard preset and easy preset, 40 each, hard as drawn, 36 read): pieces 46 %; 65 % of those with a
# type read at 0.99, 36 % of the rest; by x: under -0.4 0.12, -0.4..-0.2 0.25, -0.2..0.2 0.47, above 0.2 0.84.
BAND_CENTRE = 0.175
BAND_SLOPE = 3.75
TYPE_READ = 0.99
TYPE_READ_LOGIT = 1.5
# On a board whose types mostly do not read surely (READABLE_SHARE: small, blurred), the network is sure of wrong
# types too: a type's probability there is trusted only this much, so that no type is given on such a board. On
# rendered boards such boards' best types were a coin flip: hard preset 27 of 58 right, easy preset 17 of 27, hard
# as drawn 14 of 14, and the one such easy board as drawn (light characters on dark discs) 2 of 18.
UNREADABLE_TRUST = 0.4
# A piece whose surest type the rules forbid on its point (or whose count is full), or whose colour the board's
# groups left split and its own crops settle: its best allowed type's probability against the type it rules out
# (`best_allowed`) is trusted only this much (the network erred on this piece once already). 47 such pieces on the
# rendered boards of BAND_* (colour right): printed by their share among the allowed types, 24 printed and 12 right;
# by this contest, 7 printed and 5 right.
FORBIDDEN_TRUST = 0.75
# A piece whose colour the board's groups and its own evidence leave exactly split (P(red) 0.5: `contested`, a
# clash with the board's groups, or its classifier and ink's tone cancelling): how far the classifier's own colour
# is trusted (rendered boards: of 37 such pieces 32 were black, the colour the set-aside classifier mostly reads).
SPLIT_TRUST = 0.5

@dataclass(frozen=True)
class PointEvidence:
    """What `read_board` found at each of the 90 points, the input of `best_readings`."""

    disc: np.ndarray  # (90,) disc score
    bands: tuple[float, float, float]  # empty below, piece at or above, the split between the board's groups
    lines_seen: frozenset[int]  # points in the band whose printed lines show: empty
    off: np.ndarray  # (90,) spacings from the disc found to where the fit puts the top face
    between: dict[int, int]  # point -> neighbour, where a disc stands between them (`pieces_between`)
    letters: tuple[str | None, ...]  # the type the rules kept (`assign_types`), in the colour read; None: none
    type_prob: np.ndarray  # (90,) that type's share among the allowed types
    type_probs: np.ndarray  # (90, 7) the classifier's type probabilities (zeros where not read)
    red: np.ndarray  # (90,) P(red) after the board's colour groups (exactly 0.5 where they and the piece disagree)
    red_own: np.ndarray  # (90,) P(red) from the piece's own crops alone
    red_classifier: np.ndarray  # (90,) P(red) from the classifier's colour alone (PieceReads.clf_alone)
    unreadable: bool  # the board's types mostly do not read surely
    classified: bool  # a piece classifier read the pieces
    in_view: np.ndarray | None = None  # (90,) share of each point's disc inside the picture (None: all of it)


@dataclass(frozen=True)
class BestReadings:
    """Per point the best reading ('.', a FEN letter; '?' where nothing can be read), the estimated probability
    that its occupancy and colour are right, that its type is right (0 on '.'), and what makes it unsure."""

    guess: str
    p_point: np.ndarray
    p_type: np.ndarray
    causes: tuple[str, ...]


def band_piece(disc: float, bands: tuple[float, float, float], type_read: float = 0.0) -> float:
    """P(piece) of a disc score (1 at or above the piece band, 0 below the empty one, BAND_* between); type_read:
    the classifier's probability of its likeliest type on the point's crops."""
    empty_below, piece_above, split = bands
    if disc >= piece_above:
        return 1.0
    if disc < empty_below:
        return 0.0
    x = (disc - split) / max(piece_above - empty_below, 1e-6)
    z = BAND_SLOPE * (x - BAND_CENTRE) + (TYPE_READ_LOGIT if type_read >= TYPE_READ else 0.0)
    return float(1.0 / (1.0 + np.exp(-z)))


def best_allowed(point: int, probs: np.ndarray, red: bool, full: frozenset[str] = frozenset()) -> tuple[int, float]:
    """The most probable type the placement rules allow on `point` for that colour, among those not in `full` (the
    types whose count the board's other pieces of that colour already fill), and its probability against the most
    probable type it rules out (the network's own favourite, when that is ruled out): p / (p + that one's)."""
    probs = np.asarray(probs, float)
    ok = np.array([point in ALLOWED[(t, red)] and t not in full for t in TYPES])
    if not ok.any():
        ok = np.array([point in ALLOWED[(t, red)] for t in TYPES])
    p = np.where(ok, probs, 0.0)
    t = int(p.argmax()) if p.sum() > 0 else int(np.flatnonzero(ok)[0])
    rival = float(np.where(ok, 0.0, probs).max())
    return t, float(p[t]) / max(float(p[t]) + rival, 1e-12) if p[t] > 0 else 0.0


def best_readings(e: PointEvidence) -> BestReadings:
    """Each point's best reading from its evidence (see the settings above)."""
    empty_below, piece_above, split = e.bands
    kept = Counter(letter for letter in e.letters if letter is not None)
    full = {side: frozenset(t for t in TYPES if kept[t if side else t.lower()] >= LIMITS[t]) for side in (True, False)}
    guess, causes = [], []
    p_point, p_type = np.zeros(90), np.zeros(90)
    for i in range(90):
        if e.in_view is not None and e.in_view[i] < MIN_IN_VIEW:
            # the camera does not see the point: nothing to read (DESIGN: '?' where unsure), not an empty point
            guess.append("?")
            causes.append(f"out of the picture ({100 * float(e.in_view[i]):.0f} % of its disc in view)")
            continue
        d = float(e.disc[i])
        j = e.between.get(i)
        if j is not None and d < split and float(e.disc[j]) < split:
            # 5.10: a disc between two points, and neither scores as a piece of its own: nothing to read
            guess.append("?")
            causes.append(f"a piece stands between this point and {point_name(j)}")
            continue
        if d < empty_below or i in e.lines_seen:
            guess.append(".")
            causes.append("")
            p_point[i] = 1.0
            continue
        if e.off[i] > OFF_POINT and d >= split:
            guess.append("?")
            causes.append(f"disc {e.off[i]:.2f} spacing off its point")
            continue
        if not e.classified:
            guess.append("?")
            causes.append("no piece classifier")
            continue
        why = []
        p_piece = band_piece(d, e.bands, float(e.type_probs[i].max()))
        if d < piece_above:
            why.append(f"disc score {d:.2f} between empty (< {empty_below:.2f}) and piece (>= {piece_above:.2f})")
        red, clf = float(e.red[i]), float(e.red_classifier[i])
        if red == 0.5:
            # the board's colour groups and the piece's own evidence disagree, or its classifier and its ink's tone
            # cancel: the classifier's own colour leans (`colour_logit` sets it aside on pieces taken for light
            # characters on dark discs, and such pieces were mostly dark ink on light discs), trusted SPLIT_TRUST
            red = 0.5 + SPLIT_TRUST * (clf - 0.5)
        elif abs(red - 0.5) < COLOUR_SURE - 0.5 and (red - 0.5) * (clf - 0.5) < 0:
            # an unsure colour its own classifier leans against: no lean at all (a dim warm-lit board's black inks
            # look like light characters on dark discs, and their tone leans red: 0.78-0.84 red, all black)
            red = 0.5
        if max(red, 1 - red) < COLOUR_SURE:
            why.append(f"colour unsure (P(red) {red:.2f})")
        side = red >= 0.5
        p_colour = max(red, 1 - red)
        if 1 - p_piece >= p_piece * p_colour:
            guess.append(".")
            p_point[i] = 1 - p_piece
            causes.append("; ".join(why))
            continue
        p_point[i] = p_piece * p_colour
        letter = e.letters[i]
        if letter is not None and letter.isupper() == side:
            t, share = TYPES.index(letter.upper()), float(e.type_prob[i])
        else:
            t, share = best_allowed(i, e.type_probs[i], side, full[side])
            share *= FORBIDDEN_TRUST
            why.append("no type the rules allow here is likely" if letter is None else "colour re-read")
        if e.unreadable:
            share *= UNREADABLE_TRUST
            why.append("types unreadable on this board")
        elif share < TYPE_SURE:
            why.append(f"type unsure ({TYPES[t]} {share:.2f})")
        p_type[i] = share
        guess.append(TYPES[t] if side else TYPES[t].lower())
        causes.append("; ".join(why))
    return BestReadings("".join(guess), p_point, p_type, tuple(causes))


def printed(best: BestReadings) -> tuple[str, tuple[str, ...]]:
    """(the 90 characters detect prints, why each '?' or X / x is so): the best reading where it is likely enough
    (UNSURE_BELOW, TYPE_UNSURE_BELOW), else '?' or X / x."""
    out, reasons = [], []
    for g, pp, pt, why in zip(best.guess, best.p_point, best.p_type, best.causes, strict=True):
        if g == "?" or pp < UNSURE_BELOW:
            out.append("?")
            reasons.append(f"{why or 'unsure'} (best reading {g} at P {pp:.2f})" if g != "?" else why)
        elif g == ".":
            out.append(".")
            reasons.append("")
        elif pt < TYPE_UNSURE_BELOW:
            out.append("X" if g.isupper() else "x")
            reasons.append(f"{why} (best type {g} at P {pt:.2f})")
        else:
            out.append(g)
            reasons.append("")
    return "".join(out), tuple(reasons)


# ---------------------------------------------------------------------------------------------------------------
# The board's own statistics


def otsu_split(values: np.ndarray) -> float:
    """The threshold between two groups of values with the largest between-group variance."""
    v = np.sort(np.asarray(values, float))
    n = len(v)
    if n < 2:
        return float(v[0]) if n else 0.0
    k = np.arange(1, n)
    csum = np.cumsum(v)[:-1]
    between = k * (n - k) * (csum / k - (v.sum() - csum) / (n - k)) ** 2
    j = int(np.argmax(between))
    return float((v[j] + v[j + 1]) / 2)


def occupancy_bands(disc: np.ndarray) -> tuple[float, float]:
    """(empty below, piece at or above) for this board's disc scores; '?' between."""
    disc = np.asarray(disc, float)
    t = otsu_split(disc)
    lo, hi = disc[disc <= t], disc[disc > t]
    apart = float(np.median(hi) - np.median(lo)) if len(hi) and len(lo) else 0.0
    if apart < GROUPS_APART:  # one group only: an empty board (or nothing but noise)
        empty_below, piece_above = EMPTY_BELOW, PIECE_ABOVE
    else:
        m = BAND * apart
        empty_below, piece_above = max(SURELY_EMPTY, min(t - m, EMPTY_BELOW)), max(t + m, SURELY_EMPTY + 0.1)
    if len(disc) > MAX_PIECES:
        # a set has 32 pieces: the 33rd best score is an empty point's, and no better score can be called a piece
        # on its own strength
        piece_above = max(piece_above, float(np.sort(disc)[-MAX_PIECES - 1]) + 0.01)
    return min(empty_below, piece_above), piece_above


def board_colours(p_red: np.ndarray) -> np.ndarray:
    """P(red) per piece after weighing the whole board: where the classifier's colour logits fall into two clear
    groups, a piece clearly in a group takes that group's colour (0.995 / 0.005), one between them keeps the
    classifier's P(red) (often unsure); otherwise the classifier's own P(red) stands. The groups must not contradict
    a very sure reading of the classifier, and must lean their own ways unless far apart (a board of one colour
    split in two would not)."""
    p = np.clip(np.asarray(p_red, float), 1e-6, 1 - 1e-6)
    if len(p) < 4:
        return p
    z = np.clip(np.log(p / (1 - p)), -15, 15)
    # the split on logits clipped at +-6: a few saturated readings (p = 1 - 1e-6) must not pull the threshold
    # into the middle of the surer group
    zc = np.clip(z, -6, 6)
    t = otsu_split(zc)
    hi = zc > t
    if hi.all() or not hi.any():
        return p
    apart = float(np.median(zc[hi]) - np.median(zc[~hi]))
    if apart < COLOUR_GROUPS_APART or (p[~hi] > 0.99).any() or (p[hi] < 0.01).any():
        return p
    # The groups must not both lean one way (a board of one colour split in two would; light that makes black ink
    # look red as well): the lower group's median P(red) below 0.6 and the upper's above 0.4, or else a wide gap.
    leaning = float(np.median(p[~hi])) < 0.6 and float(np.median(p[hi])) > 0.4
    if not leaning and float(z[hi].min() - z[~hi].max()) < COLOUR_GAP_ALONE:
        return p
    m = COLOUR_BAND * apart
    board = np.where(zc >= t + m, 0.995, np.where(zc <= t - m, 0.005, np.nan))
    # between the groups the classifier's own reading stands; where the board and a sure classifier disagree,
    # neither is believed
    sure_red, sure_black = p >= COLOUR_SURE, p <= 1 - COLOUR_SURE
    clash = ((board > 0.5) & sure_black) | ((board < 0.5) & sure_red)
    return np.where(np.isnan(board), p, np.where(clash, 0.5, board))


# ---------------------------------------------------------------------------------------------------------------
# Pieces


@dataclass(frozen=True)
class PieceReads:
    """The classifier's view of pieces at given centres: type probabilities (N, 7), P(red) (N,: the classifier's
    colour and the ink's tone, `piece_colour`), and how much of the disc's red light the ink takes away (N,: log of
    ink / disc in the red channel; red ink keeps it, black ink does not)."""

    type_probs: np.ndarray
    red: np.ndarray
    ink_red: np.ndarray
    classifier_red: np.ndarray  # (N,) the classifier's own P(red), mean of the variants (nan: light-on-dark piece)
    # (N,) each source of the colour alone, for `contested`: the classifier's P(red) (light-on-dark pieces included)
    # and the ink's tone's (`tone_logit`), each from the mean of the variants' logits
    clf_alone: np.ndarray = field(default_factory=lambda: np.zeros(0))
    tone_alone: np.ndarray = field(default_factory=lambda: np.zeros(0))


def read_pieces(image: np.ndarray, homography: np.ndarray, centres_uv: np.ndarray, classifier) -> PieceReads:
    """Read pieces whose top faces are centred at `centres_uv` (board plane, spacings): crops of the photo at the
    classifier's scale, a few variants each (VARIANTS), type probabilities as their normalised geometric mean (also
    read on the crops' negatives where they show a light character on a dark disc, `light_on_dark`: the surer of the
    two readings), P(red) from the classifier's colour and the ink's tone (`colour_logit`, `piece_colour`). The
    tracker can call this with its own centres (e.g. `DetectReading.centres`)."""
    centres_uv = np.asarray(centres_uv, float).reshape(-1, 2)
    n = len(centres_uv)
    if n == 0:
        return PieceReads(np.zeros((0, len(TYPES))), np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0))
    crops, reads, tones = [], [], []
    for side, dx, dy in VARIANTS:
        cv = centred_crops(image, homography, centres_uv + np.array([dx, dy]), px=round(CROP_PX / side), side=side)
        rv = classifier.read(cv)
        crops.append(cv)
        reads.append(rv)
        tones.append([ink_tone(normalise_crop(c), r.disc) for c, r in zip(cv, rv, strict=True)])
    negative = np.array([light_on_dark([tv[k] for tv in tones]) for k in range(n)], bool)
    idx = np.flatnonzero(negative)
    logp = np.zeros((n, len(TYPES)))
    logp_neg = np.zeros((len(idx), len(TYPES)))
    z = np.zeros((len(VARIANTS), n))
    tz = np.array([[tone_logit(t) for t in tv] for tv in tones])
    for v in range(len(VARIANTS)):
        logp += np.log(np.stack([r.type_probs for r in reads[v]]) + 1e-9)
        if len(idx):  # read on the negative too: dark strokes on a light disc, as the network knows them
            logp_neg += np.log(np.stack([r.type_probs for r in classifier.read([255 - crops[v][k] for k in idx])])
                               + 1e-9)
        z[v] = [colour_logit(r.red, t, bool(neg)) for r, t, neg in zip(reads[v], tones[v], negative, strict=True)]
    probs = _normalised(logp / len(VARIANTS))
    if len(idx):
        # the reading the network is surer of stands: a light disc's dense character can look like a light character
        # on a dark disc to `light_on_dark`, and is then read surely as it is
        neg = _normalised(logp_neg / len(VARIANTS))
        better = neg.max(axis=1) > probs[idx].max(axis=1)
        probs[idx[better]] = neg[better]
    ink_red = np.array([colour_features(normalise_crop(c), r.disc)[3] for c, r in zip(crops[0], reads[0], strict=True)])
    red = np.array([piece_colour(z[:, k]) for k in range(n)])
    own = np.mean([[r.red for r in rv] for rv in reads], axis=0)
    clf_z = np.mean([[_logit(r.red) for r in rv] for rv in reads], axis=0)
    return PieceReads(probs, red, ink_red, np.where(negative, np.nan, own), _sigmoid(clf_z), _sigmoid(tz.mean(axis=0)))


def _logit(p: float) -> float:
    p = min(max(float(p), 1e-6), 1 - 1e-6)
    return float(np.log(p / (1 - p)))


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(np.asarray(z, float), -40.0, 40.0)))


def _normalised(logp: np.ndarray) -> np.ndarray:
    """Probabilities from mean log-probabilities (rows)."""
    p = np.exp(logp - logp.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True)


def light_on_dark(tones: Sequence[InkTone]) -> bool:
    """Whether a piece (its crops' tones) shows a light character on a dark or red disc: the darker tone is most of
    the face between the character and the ring in at least LIGHT_ON_DARK_CROPS of its crops. The classifier knows
    dark strokes on a light disc: such a piece's type is also read on the crop's negative, and its colour is the
    tone's (`colour_logit`)."""
    return sum(t.ring_dark > 0.5 for t in tones) >= LIGHT_ON_DARK_CROPS * len(tones)


def colour_logit(p_red: float, tone: InkTone, negative: bool) -> float:
    """log(P(red) / P(black)) of one crop from the ink's tone against the disc (TONE_WEIGHT logit units per unit of
    `pieces.InkTone.redness` + RED_KEPT_WEIGHT `red_kept`, from REDNESS_SPLIT; less below TONE_CONTRAST) and the
    classifier's colour (held within CLASSIFIER_CAP). The classifier was trained on dark ink on light discs: where
    the piece shows a light character on a dark or red disc (`negative`) its colour adds only where it agrees with
    the tone's; where it disagrees it pulls the tone's reading toward unsure, never past it."""
    tone_z = tone_logit(tone)
    clf_z = float(np.clip(_logit(p_red), -CLASSIFIER_CAP, CLASSIFIER_CAP))
    if negative and clf_z * tone_z < 0:
        # a light-on-dark piece's disagreeing classifier counts as doubt only: it pulls the tone's reading toward
        # unsure, never past it (`light_on_dark` also takes some light discs' dense characters for light-on-dark)
        return float(np.sign(tone_z) * max(abs(tone_z) - abs(clf_z), 0.0))
    return float(tone_z + clf_z)


def tone_logit(tone: InkTone) -> float:
    """The ink's tone's part of `colour_logit` (log(P(red) / P(black)) from the tone alone)."""
    weight = TONE_WEIGHT * min(1.0, tone.contrast / TONE_CONTRAST)
    return float(weight * (tone.redness + RED_KEPT_WEIGHT * tone.red_kept - REDNESS_SPLIT))


def contested(p_red: np.ndarray, clf_alone: np.ndarray, tone_alone: np.ndarray) -> np.ndarray:
    """Pieces whose colour `p_red` (after the board's groups and the rules) is sure, but one of the piece's own
    sources of colour alone (the classifier's P(red), the tone's) is sure of the other colour while the other source
    is not sure of this one. The board's grouping settles pieces its own evidence leaves unsure; it must not overrule
    a sure reading of the piece's own that nothing of the piece's own backs: such a piece is '?', never a confident
    wrong colour (a light disc's dense character taken for a light character on a dark disc has the classifier's
    sure colour set aside, `colour_logit`, and the weak tone then left the board's split to pick its colour)."""
    p, c, t = (np.asarray(a, float) for a in (p_red, clf_alone, tone_alone))
    lo = 1 - COLOUR_SURE
    red, black = p >= COLOUR_SURE, p <= lo
    against_red = ((c <= lo) & (t < COLOUR_SURE)) | ((t <= lo) & (c < COLOUR_SURE))
    against_black = ((c >= COLOUR_SURE) & (t > lo)) | ((t >= COLOUR_SURE) & (c > lo))
    return (red & against_red) | (black & against_black)


def piece_colour(logits: Sequence[float]) -> float:
    """P(red) of a piece from its crops' colour logits (`colour_logit`): their mean, as one reading."""
    z = float(np.clip(np.mean(logits), -40.0, 40.0))
    return 1.0 / (1.0 + float(np.exp(-z)))


def ink_groups(p_red: np.ndarray, ink_red: np.ndarray) -> np.ndarray:
    """P(red) after checking each colour's pieces for two inks: where the pieces called one colour fall into two
    groups INK_GAP apart in how much red light their ink takes away (log ratio), the group that keeps less of it is
    black and the other red. On rendered boards the spread within one colour was at most 0.54, and a plain board's
    purple-black and red inks (both read 'red' at P 0.98-1 by the classifier, whose colour weighs the ink's
    red-green contrast most) lay 1.4-1.8 apart. But one real photo's pieces of one colour spread up to 3.9 (glare,
    shade): on the real crops this alone broke 27 right colours of 1,548. So `rules_and_ink` uses it only where the
    board's rules say the colours are wrong."""
    p = np.asarray(p_red, float).copy()
    f = np.asarray(ink_red, float)
    for called_red in (True, False):
        members = np.flatnonzero((p >= 0.5) == called_red)
        if len(members) < 4:
            continue
        t = otsu_split(f[members])
        lo, hi = members[f[members] <= t], members[f[members] > t]
        if len(lo) >= 2 and len(hi) >= 2 and float(f[hi].min() - f[lo].max()) >= INK_GAP:
            if called_red:
                p[lo] = 0.02
            else:
                p[hi] = 0.98
    return p


def colour_clashes(points: Sequence[int], probs: np.ndarray, p_red: np.ndarray) -> list[int]:
    """Pieces whose sure type (K, A, B, P) the rules forbid on their point in the colour read, but allow in the
    other colour: the colour, not the type, is what is wrong there."""
    out = []
    for k, (i, pr) in enumerate(zip(points, np.asarray(probs, float), strict=True)):
        t = int(pr.argmax())
        if pr[t] < ORIENT_SURE or TYPES[t] not in "KABP":
            continue
        side = bool(p_red[k] >= 0.5)
        if i not in ALLOWED[(TYPES[t], side)] and i in ALLOWED[(TYPES[t], not side)]:
            out.append(k)
    return out


def rules_and_ink(points: Sequence[int], probs: np.ndarray, p_red: np.ndarray, ink_red: np.ndarray) -> np.ndarray:
    """P(red) re-read from the inks (`ink_groups`) when at least two sure pieces clash with the rules in the colour
    read, and only if the inks' grouping puts every one of them right and makes no new clash; else as given."""
    p_red = np.asarray(p_red, float)
    clashes = colour_clashes(points, probs, p_red)
    if len(clashes) < 2:
        return p_red
    q = ink_groups(p_red, ink_red)
    flipped = (q >= 0.5) != (p_red >= 0.5)
    if flipped[clashes].all() and not colour_clashes(points, probs, q):
        return q
    return p_red


def _adjacent_pairs() -> np.ndarray:
    pairs = [(v * 9 + u, v * 9 + u + 1) for v in range(10) for u in range(8)]
    # files b..h have no printed line across the river: a disc there cannot be told from the river's text
    pairs += [(v * 9 + u, (v + 1) * 9 + u) for v in range(9) for u in range(9) if v != 4 or u in (0, 8)]
    return np.array(pairs)


ADJACENT = _adjacent_pairs()  # neighbouring points joined by a printed line
_NEIGHBOURS: dict[int, list[int]] = {
    i: [int(b) for a, b in ADJACENT if a == i] + [int(a) for a, b in ADJACENT if b == i] for i in range(90)}


def line_contrast(view: np.ndarray, pairs: np.ndarray, px: int = PX, seen: np.ndarray | None = None) -> np.ndarray:
    """How visible the printed line is at the middle of each segment (pairs of point indices): darkness on the line
    against beside it (0.15 spacing either side), over the middle tenth of the segment, in grey levels; nan where
    a sample lies outside the picture (`seen`: `in_picture`'s mask; None: all of the view is the picture)."""
    low = _masked(view, seen)
    a, b = POINTS_UV[pairs[:, 0]], POINTS_UV[pairs[:, 1]]
    along = b - a
    across = np.stack([-along[:, 1], along[:, 0]], axis=1)
    out = np.zeros(len(pairs))
    for t in np.linspace(0.45, 0.55, 5):
        p = a + t * along
        on = _sample(low, p, px)
        beside = (_sample(low, p + 0.15 * across, px) + _sample(low, p - 0.15 * across, px)) / 2
        out += (beside - on) / 5
    return out


def arm_contrast(view: np.ndarray, points: Sequence[int], px: int = PX, seen: np.ndarray | None = None) -> np.ndarray:
    """Per point, the best line contrast among the printed lines running out of it, 0.12-0.24 spacing from it
    (where a piece standing on it hides them), in grey levels; an arm reaching outside the picture (`seen`, as in
    `line_contrast`) does not count (-inf where none is in view)."""
    low = _masked(view, seen)
    out = np.full(len(points), -np.inf)
    for k, i in enumerate(points):
        for j in _NEIGHBOURS[i]:
            a = POINTS_UV[i]
            along = POINTS_UV[j] - a
            across = np.array([-along[1], along[0]])
            p = a + np.array([0.12, 0.16, 0.2, 0.24])[:, None] * along
            beside = (_sample(low, p + 0.15 * across, px) + _sample(low, p - 0.15 * across, px)) / 2
            c = float(np.mean(beside - _sample(low, p, px)))
            if np.isfinite(c):
                out[k] = max(out[k], c)
    return out


def _masked(view: np.ndarray, seen: np.ndarray | None) -> np.ndarray:
    """The view's darkest channel, nan outside the picture (the warp's replicated edge is no evidence)."""
    low = view.min(axis=2).astype(np.float32)
    return low if seen is None else np.where(seen, low, np.nan).astype(np.float32)


def _sample(img: np.ndarray, uv: np.ndarray, px: int) -> np.ndarray:
    xy = np.round((uv + TOP_MARGIN) * px).astype(int)
    x = np.clip(xy[:, 0], 0, img.shape[1] - 1)
    y = np.clip(xy[:, 1], 0, img.shape[0] - 1)
    return img[y, x]


def pieces_between(score: np.ndarray, view: np.ndarray, expected: np.ndarray, piece_above: float,
                   seen: np.ndarray | None = None) -> dict[int, int]:
    """Points next to a disc that stands between them and a neighbour: point -> the other point. Such a piece (5.10)
    scores as a disc at neither point, so without this both would read empty.

    A disc counts when it scores as a piece, lies more than OFF_POINT from both points' places, and hides the
    printed line between them (the line's contrast at the segment's middle under 0.4 of the board's median segment:
    busy cells, palace crossings and clutter also score as circles, but leave the line in view)."""
    mids = (expected[ADJACENT[:, 0]] + expected[ADJACENT[:, 1]]) / 2
    found, val = find_discs(score, mids, reach=0.5 - OFF_POINT, margin=TOP_MARGIN)
    contrast = line_contrast(view, ADJACENT, seen=seen)
    # a segment out of the picture (nan) is not visible: its middle's disc score is 0 there (`read_board`)
    visible = contrast >= 0.4 * _median_seen(contrast)
    out: dict[int, int] = {}
    for (a, b), f, v, seen in zip(ADJACENT, found, val, visible, strict=True):
        if seen or v < piece_above:
            continue
        if min(np.hypot(*(f - expected[a])), np.hypot(*(f - expected[b]))) > OFF_POINT:
            out.setdefault(int(a), int(b))
            out.setdefault(int(b), int(a))
    return out


def _median_seen(contrast: np.ndarray) -> float:
    """The board's median segment contrast over the segments in the picture (at least 1 grey level)."""
    c = contrast[np.isfinite(contrast)]
    return max(float(np.median(c)), 1.0) if len(c) else 1.0


def orientation_votes(points: Sequence[int], probs: np.ndarray, red: Sequence[bool]) -> tuple[int, int]:
    """(for, against) the fit's orientation: pieces read surely whose type only this orientation allows on their
    point, and those only the half-turned one allows (point i is point 89 - i seen from the other end)."""
    votes_for = votes_against = 0
    for i, pr, side in zip(points, np.asarray(probs, float), red, strict=True):
        t = int(pr.argmax())
        if pr[t] < ORIENT_SURE or TYPES[t] not in "KABP":
            continue
        here, turned = i in ALLOWED[(TYPES[t], bool(side))], (89 - i) in ALLOWED[(TYPES[t], bool(side))]
        votes_for += here and not turned
        votes_against += turned and not here
    return votes_for, votes_against


# ---------------------------------------------------------------------------------------------------------------
# The reading


def read_board(image: np.ndarray, fit, classifier, *, turn: bool = True) -> DetectReading:
    """Read the 90 points of `image` given a `BoardFit` (`.homography`, image -> board plane) and a
    `PieceClassifier` (or None: then pieces are '?', since detect prints only FEN letters, '.' and '?').

    turn: when the fit's orientation came from the printed grid (not ArUco markers, which fix it) and the pieces
    read surely say Red sits at the other end, read again with the fit turned half a turn (`DetectReading.fit`)."""
    h = np.asarray(fit.homography, float)
    view = top_view(image, h)
    in_pic = in_picture(image.shape, h)
    # no disc is scored about a centre outside the picture (the warp replicates its edge there)
    score = np.where(in_pic, circle_score(view), 0.0).astype(np.float32)
    shifted = POINTS_UV + coarse_shift(score, away_from_camera(h))
    found, disc = find_discs(score, shifted, margin=TOP_MARGIN)
    seen = disc_in_view(image.shape, h, shifted) >= MIN_IN_VIEW
    empty_below, piece_above = occupancy_bands(disc[seen])
    strong = (disc >= piece_above) & seen
    parallax = fit_parallax(POINTS_UV[strong], found[strong])
    expected = parallax_centres(POINTS_UV, parallax)
    # the disc again, now looked for near where the fit puts it (a neighbour's disc no longer competes)
    found, disc = find_discs(score, expected, reach=OFF_POINT + 0.05, margin=TOP_MARGIN)
    in_view = disc_in_view(image.shape, h, expected)
    seen = in_view >= MIN_IN_VIEW
    empty_below, piece_above = occupancy_bands(disc[seen])
    off = np.hypot(*(found - expected).T)
    # crop on the disc found when it is close to the model's place (pieces stand a little off their points),
    # else on the model's place
    centres = np.where((off <= OFF_POINT)[:, None], found, expected)
    between = pieces_between(score, view, expected, piece_above, in_pic)
    band = [i for i in range(90) if seen[i] and empty_below <= disc[i] < piece_above]
    lines_seen = set()
    if band:
        ref = _median_seen(line_contrast(view, ADJACENT, seen=in_pic))
        lines_seen = {i for i, c in zip(band, arm_contrast(view, band, seen=in_pic), strict=True)
                      if c >= LINES_SEEN * ref}
    letters: list[str | None] = [None] * 90
    type_prob = np.zeros(90)
    raw_probs = np.zeros((90, len(TYPES)))
    red_p = np.full(90, 0.5)
    red_own = np.full(90, 0.5)
    red_clf = np.full(90, 0.5)
    candidates = [i for i in range(90) if seen[i] and disc[i] >= empty_below and i not in lines_seen]
    if classifier is not None and candidates:
        reads = read_pieces(image, h, centres[candidates], classifier)
        sure = [k for k, i in enumerate(candidates) if disc[i] >= piece_above]
        reds = reads.red.copy()
        if sure:  # the board's colour groups from the pieces surely there
            ruled = rules_and_ink([candidates[k] for k in sure], reads.type_probs[sure], reds[sure],
                                  reads.ink_red[sure])
            by_rules = (ruled >= 0.5) != (reds[sure] >= 0.5)
            reds[sure] = board_colours(ruled)
            # the board's split of the colour logits never overrules a piece's own sure colour alone (`contested`);
            # a colour the rules re-read from the inks is the rules' evidence, not the split's
            reds[sure] = np.where(contested(reds[sure], reads.clf_alone[sure], reads.tone_alone[sure]) & ~by_rules,
                                  0.5, reds[sure])
            # where the classifier's own colours settle a piece on this board (as detect read colours before the
            # ink's tone was weighed), they stand: the tone settles the rest and light characters on dark discs
            own = reads.classifier_red[sure]
            if not np.isnan(own).any():
                own = board_colours(rules_and_ink([candidates[k] for k in sure], reads.type_probs[sure], own,
                                                  reads.ink_red[sure]))
                settled = np.abs(own - 0.5) >= COLOUR_SURE - 0.5
                reds[np.asarray(sure)[settled]] = own[settled]
        if turn and getattr(fit, "method", "grid") != "aruco":
            sure_colour = [k for k in sure if abs(reds[k] - 0.5) >= COLOUR_SURE - 0.5]
            votes_for, votes_against = orientation_votes([candidates[k] for k in sure_colour],
                                                         reads.type_probs[sure_colour], reds[sure_colour] >= 0.5)
            if votes_against >= ORIENT_MIN and votes_against >= ORIENT_RATIO * votes_for:
                turned = fit_from_h(rotate_half_turn(np.linalg.inv(h)), getattr(fit, "method", "grid"),
                                    float(getattr(fit, "score", 0.0)), oriented=True)
                again = read_board(image, turned, classifier, turn=False)
                return replace(again, fit=turned, turned=True)
        assigned = assign_types(candidates, reads.type_probs, reds >= 0.5)
        for k, i in enumerate(candidates):
            red_p[i] = reds[k]
            red_own[i] = reads.red[k]
            red_clf[i] = reads.clf_alone[k]
            raw_probs[i] = reads.type_probs[k]
            t, p = assigned[k]
            if t is not None:
                letters[i] = TYPES[t] if reds[k] >= 0.5 else TYPES[t].lower()
                type_prob[i] = p
    pieces = [i for i in candidates if disc[i] >= piece_above and off[i] <= OFF_POINT]
    n_sure = sum(1 for i in pieces if letters[i] is not None and type_prob[i] >= TYPE_SURE)
    unreadable = classifier is not None and len(pieces) >= 4 and n_sure < READABLE_SHARE * len(pieces)
    split = otsu_split(disc[seen])
    evidence = PointEvidence(disc, (empty_below, piece_above, split), frozenset(lines_seen), off, between,
                             tuple(letters), type_prob, raw_probs, red_p, red_own, red_clf, unreadable,
                             classifier is not None, in_view)
    best = best_readings(evidence)
    out, reasons = printed(best)
    return DetectReading(out, disc, centres, found, parallax, tuple(letters), type_prob, red_p, reasons, fit, False,
                         evidence, best, in_view)
