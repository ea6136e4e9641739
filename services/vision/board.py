"""Finding the board in a camera frame: the 9 x 10 lattice of the printed grid and its homography.

Two ways, both pure (an image in, a `BoardFit` out, or `NoBoardFound` with the reason):
- ArUco markers (DICT_4X4_50, ids 0..3 centred one grid spacing diagonally outside a9, i9, i0, a0) when a venue
  fits them: the markers give the board and its orientation directly; the printed lines then refine the fit.
- The printed grid alone (red or dark lines on light paper, wood, cloth or vinyl): a black-hat line response;
  line segments found direction by direction (Hough per band of ridge direction, so that crossing lines do not cut
  each other up); the segments grouped by the connected net of lines they lie on (a board's grid is one net; a
  score sheet, a striped or checked cloth, wood grain and the next table's board are others), and per net: two
  line families, their vanishing points, an affine rectification about the net's middle in which each family is
  an evenly spaced lattice, 1-D lattice fits, and a 2-D check of every lattice hypothesis by the line support
  along the predicted segments (the river's gap between the interior files breaks the symmetries). The best
  lattices are refined onto the lines and polished: moved by whole lines and stretched by a few per cent to the
  best supported placement. Pieces may cover most intersections (the start position covers all of ranks 0 and 9):
  the lattice is extrapolated from the lines that show. Last, the exact fit (on the full-resolution frame): every
  line's position measured to a fraction of a pixel across it, and the homography fitted robustly to the lines
  (on rendered hard scenes the mean point error falls from about 0.012 to 0.006 spacing).
  A fit is only reported when it is sure: of a net's lattices (best supported first) the first that is a board
  seen whole is kept (or cut by the picture's edge through at most two outer lines a side: judged by what shows,
  the lines out of the picture counted with the hidden ones; a board wholly in view wins over cut ones).
  Glare, creases and pieces may hide a few inner lines, but a lattice with more lines bare, or with print beside
  its lines instead of under them, or with every other line bare (half the spacing), or bare from its outline
  inwards (laid half over the table), is no board; and two complete boards in view are refused (nothing in one
  picture says which one the camera watches).
  The lines alone cannot tell the board's lattice from one a rank or a file off, or turned a quarter over a
  near-square board: the board's landmarks (`landmarks`: the river, where the inner files are not printed, the
  palaces' diagonals, nothing printed a spacing beyond the outline) pick the best of the accepted lattice and its
  neighbours a line off, and a lattice they contradict is refused.
  A picture where no board is found is looked at again in a plain frame, scaled up when small (a board filling
  the picture to its edges, a screenshot). ArUco markers whose lattice has no board under them give way to the
  printed grid.
Which end is Red is decided from the pieces: the kings and advisors never leave their palaces, so red ink in one
palace and black ink in the other tells the ends apart (else the halves where most red and black pieces stand).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from .grid import (
    CORNERS_UV,
    POINTS_UV,
    apply_h,
    board_to_image,
    line_supports,
    support_score,
    support_scores_batch,
)
from .landmarks import beyond_print, landmark_score, palace_print, river_print

WORK_MAX_SIDE = 1024  # detection runs on a frame scaled to at most this many pixels on its longer side
MIN_SCORE = 6.0  # line-support contrast (black-hat units) below which a lattice is not accepted as a board
# A second lattice supported at least this share of the best one is a second board in view, not clutter: the
# next table's board scores 0.5..1.1 of the watched one; lattices on tables and sheets score below 0.35.
SECOND_BOARD = 0.4
# A line of a fitted lattice is missing when it stands out of its cells less than this share of the median line
# (grid.line_supports). The outer lines may: a full row of pieces covers a back rank (the start position), an
# edge file runs along the frame. Of the 15 inner lines (ranks 1..8, files b..h) a board seen whole misses at most
# one; on rendered boards the weakest inner line of the true lattice stands out 0.6 of the median or more.
MISSING_LINE = 0.35
MAX_MISSING_LINES = 1
# More inner lines may be hidden, up to this many of the 15, where nothing contradicts the lattice: glare from a
# plastic sheet, a crease's shadow or a row of tall pieces leaves a line with as little print beside it as on it
# (on rendered scenes with glare spots over the board, the true lattice's hidden lines stand out -0.05..+0.3 of
# the median line), whereas a lattice a fraction of a spacing off, of the wrong spacing or over clutter puts its
# lines where print stands beside them, not on them.
MAX_HIDDEN_LINES = 4
# A missing line is contradicted (the lattice is wrong there, not the line hidden) when it stands out of its cells
# less than this share of the median line, i.e. the print beside it is stronger than on it by that much.
CONTRADICTED_LINE = -0.2
# Every other line bare says a lattice of half the board's spacing only from this many bare inner lines: such a
# lattice leaves about half its lines in the cells; two bare lines a line apart are as often glare over the board.
MIN_ALTERNATING = 3
# A lattice whose outer line and the next one in are both bare, where lines are already hidden, reaches past the
# board's outline over the sheet's margin or the table (a lattice laid half over the board): a back rank covered by
# pieces leaves the next rank printed, and glare that washes out two lines at the board's edge is refused with it.
MAX_BARE_FROM_OUTLINE = 2
_INNER_LINES = np.array([v for v in range(1, 9)] + [10 + u for u in range(1, 8)])  # see grid.line_supports
# The orientation vote (occupancy.orientation_vote) is taken as telling which end is Red above this, either way.
# On rendered hard scenes (200..399, the exactly fitted lattice in its true orientation) 2 of 189 votes pointed
# the wrong way, by up to 0.057, and 6 right ones were below 0.06; a lighting cast can mislead it by far more
# (-0.26 on one scene), which no threshold catches.
ORIENTED_VOTE = 0.08
# A picture with no board found is looked at again in a plain frame this share of its longer side wide on every
# side (a board filling the picture to its edges then has room around it: the 226 x 252 screenshot of a board
# filling it was found with a frame of 40 px, 0.16 of its side) ...
RETRY_FRAME = 0.16
# ... and scaled up to this longer side when smaller (that screenshot was found at twice its size, 580 px with the
# frame, and not at its own): a small picture's lines, cut up by the pieces, are too short for the segment search.
RETRY_SIDE = 720
# ... and last with its lightness equalised over RETRY_CLAHE_TILES x RETRY_CLAHE_TILES tiles, contrast clipped at
# RETRY_CLAHE_CLIP (OpenCV's CLAHE): heavy glare and a sheet's veil leave the lines too faint for the segment
# search; on rendered heavy glare 8 of 15 boards not found were found so, all within 0.01 spacing.
RETRY_CLAHE_CLIP = 3.0
RETRY_CLAHE_TILES = 8
# A lattice is refused when the median of its inner files shows at least this share of the median line printed
# across its river: the river is never printed there (the board's own lattice shows -0.05..0.05, a lattice a rank
# off or turned a quarter under the board 0.6..1.4 on rendered boards; landmarks.river_print).
RIVER_CONTRADICTS = 0.5
# ... and when its palaces' diagonals show less than this share of the median line while a line is printed a
# whole spacing beyond it at least BEYOND_CONTRADICTS of the median: a lattice a file off (its palaces in plain
# cells, 0.0..0.1; the board's own 0.9..1.05 with a line beyond it of 0.0..0.1).
PALACE_ABSENT = 0.3
BEYOND_CONTRADICTS = 0.5
# The lattices a whole line off the accepted one (a rank or a file either way) are compared with it by their
# landmarks (landmarks.landmark_score): line fits meet a neighbouring placement as easily as the board's own.
_LINE_SHIFTS = np.array([[[1.0, 0.0, du], [0.0, 1.0, dv], [0.0, 0.0, 1.0]]
                         for du, dv in ((1, 0), (-1, 0), (0, 1), (0, -1))])
# ArUco marker centres in the board plane (u, v), by id: one spacing diagonally outside a9, i9, i0, a0.
MARKER_UV = np.array([[-1.0, -1.0], [9.0, -1.0], [9.0, 10.0], [-1.0, 10.0]])


class NoBoardFound(Exception):
    """No Xiangqi board could be found in the image; `reason` says why in words for an operator."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class BoardFit:
    corners: np.ndarray  # 4 x 2 image pixels: a9, i9, i0, a0
    homography: np.ndarray  # 3 x 3: image pixels -> board plane (grid spacings, a9 = (0, 0), a0 = (0, 9))
    points: np.ndarray  # 90 x 2 image pixels, squares order (rank 9 first)
    method: str  # "aruco" | "grid"
    score: float  # line-support contrast of the fit (higher is surer)
    oriented: bool = True  # False when nothing on the board told which end is Red (an empty board)

    @property
    def board_to_image(self) -> np.ndarray:
        return np.linalg.inv(self.homography)

    def spacing_px(self) -> float:
        """Mean grid spacing in image pixels (for sizing kernels and crops)."""
        p = self.points.reshape(10, 9, 2)
        along_ranks = np.linalg.norm(np.diff(p, axis=1), axis=2).mean()
        along_files = np.linalg.norm(np.diff(p, axis=0), axis=2).mean()
        return float((along_ranks + along_files) / 2)


def fit_from_corners(corners: np.ndarray, method: str, score: float, oriented: bool = True) -> BoardFit:
    corners = np.asarray(corners, dtype=np.float64).reshape(4, 2)
    hb = board_to_image(corners)
    return BoardFit(corners, np.linalg.inv(hb), apply_h(hb, POINTS_UV), method, score, oriented)


def fit_from_h(h_board_to_img: np.ndarray, method: str, score: float, oriented: bool = True) -> BoardFit:
    hb = np.asarray(h_board_to_img, dtype=np.float64)
    hb = hb / hb[2, 2]
    return BoardFit(apply_h(hb, CORNERS_UV), np.linalg.inv(hb), apply_h(hb, POINTS_UV), method, score, oriented)


# ---------------------------------------------------------------------------------------------------------------
# line response and segments


def _work_image(image: np.ndarray) -> tuple[np.ndarray, float]:
    h, w = image.shape[:2]
    scale = min(1.0, WORK_MAX_SIDE / max(h, w))
    if scale < 1.0:
        image = cv2.resize(image, (round(w * scale), round(h * scale)), interpolation=cv2.INTER_AREA)
    return image, scale


def response_map(work_bgr: np.ndarray) -> np.ndarray:
    """Line response on the work image: black-hat of the green channel (red and dark ink both show), blurred."""
    green = work_bgr[:, :, 1]
    resp = cv2.morphologyEx(green, cv2.MORPH_BLACKHAT, cv2.getStructuringElement(cv2.MORPH_RECT, (9, 9)))
    return cv2.GaussianBlur(resp.astype(np.float32), (3, 3), 0)


@dataclass
class _Line:
    p: np.ndarray  # a point on the line
    d: np.ndarray  # unit direction
    support: float  # total length of its segments
    pts: list  # segment endpoints

    def dist(self, q: np.ndarray) -> np.ndarray:
        r = q - self.p
        return np.abs(r[..., 0] * self.d[1] - r[..., 1] * self.d[0])

    def homog(self) -> np.ndarray:
        a = np.array([self.p[0], self.p[1], 1.0])
        b = np.array([self.p[0] + self.d[0], self.p[1] + self.d[1], 1.0])
        ln = np.cross(a, b)
        return ln / np.linalg.norm(ln[:2])


def _merge(segs: np.ndarray, tol: float = 2.5, ang_tol: float = np.deg2rad(3.0)) -> list[_Line]:
    """Greedy grouping of collinear segments into lines (longest first); each line refitted to its endpoints."""
    lengths = np.hypot(segs[:, 2] - segs[:, 0], segs[:, 3] - segs[:, 1])
    order = np.argsort(-lengths)
    lines: list[_Line] = []
    for k in order:
        x1, y1, x2, y2 = segs[k]
        a, b = np.array([x1, y1]), np.array([x2, y2])
        d = (b - a) / lengths[k]
        for ln in lines:
            cosang = abs(float(np.dot(ln.d, d)))
            if cosang > np.cos(ang_tol) and ln.dist(a) < tol and ln.dist(b) < tol:
                ln.pts.extend([a, b])
                ln.support += lengths[k]
                pts = np.array(ln.pts)
                vx, vy, x0, y0 = cv2.fitLine(pts.astype(np.float32), cv2.DIST_L2, 0, 0.01, 0.01).ravel()
                ln.p, ln.d = np.array([x0, y0], dtype=np.float64), np.array([vx, vy], dtype=np.float64)
                break
        else:
            lines.append(_Line(a, d, float(lengths[k]), [a, b]))
    return lines


def _families(lines: list[_Line]) -> tuple[list[_Line], list[_Line]]:
    """Split lines into the two directions of the grid by a length-weighted histogram of angles (mod 180)."""
    ang = np.array([np.degrees(np.arctan2(ln.d[1], ln.d[0])) % 180.0 for ln in lines])
    wts = np.array([ln.support for ln in lines])
    hist = np.zeros(180)
    np.add.at(hist, np.round(ang).astype(int) % 180, wts)
    kern = np.exp(-0.5 * (np.arange(-8, 9) / 3.0) ** 2)
    sm = np.convolve(np.concatenate([hist[-8:], hist, hist[:8]]), kern, mode="same")[8:-8]
    p1 = int(np.argmax(sm))
    dist1 = np.minimum(np.abs(np.arange(180) - p1), 180 - np.abs(np.arange(180) - p1))
    sm2 = np.where(dist1 >= 35, sm, 0.0)
    p2 = int(np.argmax(sm2))
    if sm2[p2] <= 0:
        return [], []
    fam1, fam2 = [], []
    for ln, a in zip(lines, ang, strict=True):
        d1 = min(abs(a - p1), 180 - abs(a - p1))
        d2 = min(abs(a - p2), 180 - abs(a - p2))
        if d1 < 22 and d1 <= d2:
            fam1.append(ln)
        elif d2 < 22:
            fam2.append(ln)
    return fam1, fam2


def _vanishing_point(fam: list[_Line]) -> np.ndarray:
    """Homogeneous vanishing point of a family (RANSAC over pairs of the strongest lines, then least squares)."""
    fam = sorted(fam, key=lambda ln: -ln.support)[:40]
    hs = np.array([ln.homog() for ln in fam])
    wts = np.array([ln.support for ln in fam])
    mids = np.array([np.mean(ln.pts, axis=0) for ln in fam])
    dirs = np.array([ln.d for ln in fam])

    def inliers(vp: np.ndarray) -> np.ndarray:
        # angle between the line's direction and the direction from its middle to the vanishing point
        to = vp[:2][None, :] - mids * vp[2]
        n = np.linalg.norm(to, axis=1) + 1e-12
        cos = np.abs((to * dirs).sum(1)) / n
        return cos > np.cos(np.deg2rad(1.5))

    best, best_w = None, -1.0
    n = min(len(fam), 12)
    for i in range(n):
        for j in range(i + 1, n):
            vp = np.cross(hs[i], hs[j])
            if np.linalg.norm(vp) < 1e-12:
                continue
            vp = vp / np.linalg.norm(vp)
            w = float(wts[inliers(vp)].sum())
            if w > best_w:
                best, best_w = vp, w
    if best is None:
        return np.array([dirs[0][0], dirs[0][1], 0.0])
    m = inliers(best)
    a = hs[m] * wts[m][:, None]
    _, _, vt = np.linalg.svd(a)
    vp = vt[-1]
    return vp / np.linalg.norm(vp)


def _rectifier(vp1: np.ndarray, vp2: np.ndarray, centre: np.ndarray) -> np.ndarray:
    """Homography sending both vanishing points to infinity (affine rectification), near-identity at `centre`."""
    lv = np.cross(vp1, vp2)
    c = np.array([centre[0], centre[1], 1.0])
    if abs(float(lv @ c)) < 1e-12:
        return np.eye(3)
    lv = lv / float(lv @ c)  # the vanishing line scaled to 1 at the centre
    h = np.eye(3)
    h[2] = lv
    # keep the scale near the centre: compose with the inverse local scale
    if lv[2] < 0:
        h = -h
    return h


def _lattice_1d(pos: np.ndarray, wts: np.ndarray, n_lines: int, min_sp: float,
                max_sp: float) -> list[tuple[dict[int, int], float]]:
    """Evenly spaced lattices through 1-D line positions: ({line number: lattice index 0..n-1}, score), best first.

    Candidate spacings come from differences of line positions; a lattice is scored by the weight of the lines
    within 12 % of a spacing of its nodes, and windows of `n_lines` consecutive nodes are taken so that they
    cover the supported nodes best (missing outer lines are extrapolated).
    """
    order = np.argsort(pos)
    order = order[wts[order] > 0]
    pos, wts = pos[order], wts[order]
    cands: list[float] = []
    for i in range(len(pos)):
        for j in range(i + 1, min(len(pos), i + 4)):
            d = pos[j] - pos[i]
            for k in (1, 2):
                if min_sp <= d / k <= max_sp:
                    cands.append(d / k)
    # one candidate per 3 % band of spacing: finer differences are taken up by the least-squares refit below
    cands = sorted({float(np.exp(np.round(np.log(c) / 0.03) * 0.03)) for c in cands})
    out: list[tuple[dict[int, int], float]] = []
    seen: set[tuple[tuple[int, int], ...]] = set()
    total = float(wts.sum()) + 1e-9
    for sp in cands:
        for anchor in pos[np.argsort(-wts)[:6]]:
            rel = (pos - anchor) / sp
            k = np.round(rel)
            ok = np.abs(rel - k) < 0.12
            if ok.sum() < 3:
                continue
            # refine spacing and phase by least squares on the matched lines
            a = np.vstack([np.ones(ok.sum()), k[ok]]).T
            (p0, sp2), *_ = np.linalg.lstsq(a, pos[ok], rcond=None)
            if not min_sp <= sp2 <= max_sp:
                continue
            rel = (pos - p0) / sp2
            k = np.round(rel).astype(int)
            ok = np.abs(rel - k) < 0.12
            node_w: dict[int, float] = {}
            for kk, ww in zip(k[ok], wts[ok], strict=True):
                node_w[int(kk)] = node_w.get(int(kk), 0.0) + float(ww)
            if not node_w:
                continue
            lo, hi = min(node_w), max(node_w)
            # every window of n_lines nodes that lies within the supported span, or that holds all of it: a frame
            # line or the next board's line a spacing beyond the board widens the span past n_lines
            for start in range(min(lo, hi - n_lines + 1), max(lo, hi - n_lines + 1) + 1):
                weight = sum(w for kk, w in node_w.items() if start <= kk < start + n_lines)
                covered = sum(1 for kk in node_w if start <= kk < start + n_lines)
                if covered < max(3, n_lines - 5):
                    continue
                # Coverage first (a lattice of half or double the spacing leaves nodes without a line), then
                # the weight of the lines on it.
                score = covered + weight / total
                assign = {int(order[i]): int(k[i]) - start for i in np.flatnonzero(ok)
                          if start <= k[i] < start + n_lines}
                key = tuple(sorted(assign.items()))
                if key in seen:
                    continue
                seen.add(key)
                out.append((assign, score))
    out.sort(key=lambda t: -t[1])
    return out


# ---------------------------------------------------------------------------------------------------------------
# lattice hypotheses


def _hypotheses(fam_a: list[_Line], fam_b: list[_Line], shape: tuple[int, int],
                centre: np.ndarray) -> list[np.ndarray]:
    """Board -> work-image homographies for lattices with family A as the 9 files and B as the 10 ranks."""
    h_img, w_img = shape
    vpa, vpb = _vanishing_point(fam_a), _vanishing_point(fam_b)
    r = _rectifier(vpa, vpb, centre)

    def family_positions(fam: list[_Line]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        pts = [apply_h(r, np.array(ln.pts)) for ln in fam]
        dirs = []
        for p in pts:
            d = p[-1] - p[0]
            for q in p[1:]:
                if np.linalg.norm(q - p[0]) > np.linalg.norm(d):
                    d = q - p[0]
            dirs.append(d / (np.linalg.norm(d) + 1e-12))
        dirs = np.array(dirs)
        ref = dirs[np.argmax([ln.support for ln in fam])]
        dirs = dirs * np.sign(dirs @ ref)[:, None]
        dmean = dirs.mean(0)
        dmean /= np.linalg.norm(dmean)
        normal = np.array([-dmean[1], dmean[0]])
        pos = np.array([float(np.mean(p @ normal)) for p in pts])
        # after the rectification a family is parallel: a line that is not (clutter, a stroke) gets no say
        parallel = np.abs(dirs @ normal) < np.sin(np.deg2rad(4.0))
        return pos, parallel, normal

    fam_a = sorted(fam_a, key=lambda ln: -ln.support)[:30]
    fam_b = sorted(fam_b, key=lambda ln: -ln.support)[:30]
    pos_a, par_a, _ = family_positions(fam_a)
    pos_b, par_b, _ = family_positions(fam_b)
    wa = np.array([ln.support for ln in fam_a]) * par_a
    wb = np.array([ln.support for ln in fam_b]) * par_b
    diag = float(np.hypot(h_img, w_img))
    # a board fills at least ~15 % of the frame's smaller side and fits in it; the affine rectification keeps the
    # scale at the net's middle only on average: one direction may come out squeezed to half of it
    min_sp, max_sp = 0.5 * 0.15 * min(h_img, w_img) / 9, diag / 7
    lat_a = _lattice_1d(pos_a, wa, 9, min_sp, max_sp)[:8]
    lat_b = _lattice_1d(pos_b, wb, 10, min_sp, max_sp)[:8]
    out: list[np.ndarray] = []
    ha = np.array([ln.homog() for ln in fam_a])
    hb_ = np.array([ln.homog() for ln in fam_b])
    xs = np.cross(ha[:, None, :], hb_[None, :, :])  # every file line x every rank line
    with np.errstate(divide="ignore", invalid="ignore"):
        inter = xs[..., :2] / xs[..., 2:3]
    finite = np.isfinite(inter).all(axis=2)
    for assign_a, _ in lat_a:
        for assign_b, _ in lat_b:
            ia = np.array(list(assign_a.keys()))
            ib = np.array(list(assign_b.keys()))
            uu = np.array(list(assign_a.values()), np.float64)
            vv = np.array(list(assign_b.values()), np.float64)
            sel = finite[np.ix_(ia, ib)]
            if sel.sum() < 6:
                continue
            src = np.stack(np.broadcast_arrays(uu[:, None], vv[None, :]), axis=2)[sel]
            dst = inter[np.ix_(ia, ib)][sel]
            hm, _ = cv2.findHomography(src, dst, 0)
            if hm is None:
                continue
            # one round of outlier rejection: a stray line (clutter, a stroke) makes wrong intersections
            res = np.linalg.norm(apply_h(hm, src) - dst, axis=1)
            keep = res < max(3.0, 2.0 * float(np.median(res)))
            if 6 <= keep.sum() < len(keep):
                hm2, _ = cv2.findHomography(src[keep], dst[keep], 0)
                hm = hm if hm2 is None else hm2
            c = apply_h(hm, CORNERS_UV)
            out.append(c)
            out.append(c[[1, 0, 3, 2]])  # the mirrored assignment of files; fixed later by winding
    return out


def _batch_h(corner_sets: list[np.ndarray]) -> np.ndarray:
    """Board -> image homographies from corner quadruples (vectorised 8x8 solves)."""
    n = len(corner_sets)
    a = np.zeros((n, 8, 8))
    b = np.zeros((n, 8))
    for k, (u, v) in enumerate(CORNERS_UV):
        x = np.array([c[k, 0] for c in corner_sets])
        y = np.array([c[k, 1] for c in corner_sets])
        a[:, 2 * k, 0], a[:, 2 * k, 1], a[:, 2 * k, 2] = u, v, 1
        a[:, 2 * k, 6], a[:, 2 * k, 7] = -u * x, -v * x
        a[:, 2 * k + 1, 3], a[:, 2 * k + 1, 4], a[:, 2 * k + 1, 5] = u, v, 1
        a[:, 2 * k + 1, 6], a[:, 2 * k + 1, 7] = -u * y, -v * y
        b[:, 2 * k], b[:, 2 * k + 1] = x, y
    ok = np.abs(np.linalg.det(a)) > 1e-9
    sol = np.zeros((n, 8))
    sol[ok] = np.linalg.solve(a[ok], b[ok][..., None])[..., 0]
    hs = np.concatenate([sol, np.ones((n, 1))], axis=1).reshape(n, 3, 3)
    hs[~ok] = np.nan
    return hs


def _refine_profiles() -> tuple[np.ndarray, np.ndarray]:
    """Board-plane sample profiles across every half-segment of the 19 printed lines (+-0.2 spacing)."""
    offs = np.linspace(-0.2, 0.2, 17)
    base, prof = [], []
    for line in range(10):  # ranks: horizontal lines, profiles along v
        for seg in range(8):
            for f in (0.3, 0.5, 0.7):
                base.append((seg + f, line))
                prof.append([(seg + f, line + o) for o in offs])
    for line in range(9):  # files: vertical lines, profiles along u; interior files stop at the river
        for seg in range(9):
            for f in (0.3, 0.5, 0.7):
                if 0 < line < 8 and seg == 4:
                    continue
                base.append((line, seg + f))
                prof.append([(line + o, seg + f) for o in offs])
    return np.array(base, dtype=np.float64), np.array(prof, dtype=np.float64)


_REFINE_BASE, _REFINE_PROF = _refine_profiles()


def refine(resp: np.ndarray, hb: np.ndarray, iterations: int = 3) -> np.ndarray:
    """Pull a lattice onto the printed lines: per line segment, the local peak of the line response across it.

    For every half-segment of the 19 lines the response is sampled on a short profile across the line
    (+-0.2 spacing); a clear peak says where the line really is there, and a homography is refitted (RANSAC,
    so that character strokes under a piece do not pull it) mapping the model's point to that image position.
    """
    m, k = _REFINE_PROF.shape[:2]
    flat = _REFINE_PROF.reshape(-1, 2)
    for _ in range(iterations):
        p = apply_h(hb, flat).reshape(m, k, 2)
        x = np.round(p[..., 0]).astype(np.int64)
        y = np.round(p[..., 1]).astype(np.int64)
        inside = ((x >= 0) & (y >= 0) & (x < resp.shape[1]) & (y < resp.shape[0])).all(axis=1)
        xs = np.where(inside[:, None], x, 0)
        ys = np.where(inside[:, None], y, 0)
        vals = resp[ys, xs]
        best = np.argmax(vals, axis=1)
        peak = vals[np.arange(m), best]
        med = np.median(vals, axis=1)
        ok = inside & (peak >= 12) & (peak >= 2.0 * med) & (best > 0) & (best < k - 1)
        if ok.sum() < 12:
            return hb
        src = _REFINE_BASE[ok]
        dst = p[np.arange(m), best][ok]
        h2, _ = cv2.findHomography(src, dst, cv2.RANSAC, 2.0)
        if h2 is None:
            return hb
        hb = h2 / h2[2, 2]
    return hb


def _line_samples() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Board-plane samples for the exact fit: (uv on a printed line, the unit step across it, which coordinate).

    Along every segment between two points, away from both points (a piece there hides the line and its rim
    and strokes lie near it): 0.25..0.75 of the segment. `which` is 1 for a rank line (its v is known), 0 for
    a file line (its u); the interior files stop at the river.
    """
    uv, across, which = [], [], []
    fracs = (0.25, 0.375, 0.5, 0.625, 0.75)
    for v in range(10):
        for seg in range(8):
            for f in fracs:
                uv.append((seg + f, v))
                across.append((0.0, 1.0))
                which.append(1)
    for u in range(9):
        for seg in range(9):
            if 0 < u < 8 and seg == 4:
                continue
            for f in fracs:
                uv.append((u, seg + f))
                across.append((1.0, 0.0))
                which.append(0)
    return np.array(uv, np.float64), np.array(across, np.float64), np.array(which, np.int64)


_EXACT_UV, _EXACT_ACROSS, _EXACT_WHICH = _line_samples()
_EXACT_OFFS = np.linspace(-0.25, 0.25, 41)  # across the line, in spacings: a step of 1/80 spacing
# The robust scale of the line fit is at least this (spacings): a sheet that does not lie flat bows its lines by up
# to a few hundredths of a spacing, and the corners, where it bends most, must keep their say; a stroke or rim of a
# piece beside a line lies further off (about 0.2 spacing) and still gets no weight.
MIN_SCALE = 0.03
EXACT_MAX_MOVE = 0.2  # spacings: the exact fit corrects a found lattice; a larger move is a wrong pull, not kept


def _line_peaks(resp: np.ndarray, hb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each sample's line really is: (image point on the line, usable) per sample of _line_samples.

    The response is sampled (bilinear) on a profile across the line at the sample and the peak is located to a
    fraction of a step by a parabola through the top three values. A peak is usable when it stands clearly out of
    its profile (twice the profile's median, 12 response units) and does not lie at the profile's ends.
    """
    m, k = len(_EXACT_UV), len(_EXACT_OFFS)
    prof_uv = _EXACT_UV[:, None, :] + _EXACT_OFFS[None, :, None] * _EXACT_ACROSS[:, None, :]
    p = apply_h(hb, prof_uv.reshape(-1, 2)).reshape(m, k, 2)
    hh, ww = resp.shape
    inside = ((p[..., 0] >= 0) & (p[..., 1] >= 0) & (p[..., 0] <= ww - 1) & (p[..., 1] <= hh - 1)).all(axis=1)
    vals = cv2.remap(resp, p[..., 0].astype(np.float32), p[..., 1].astype(np.float32), cv2.INTER_LINEAR,
                     borderMode=cv2.BORDER_CONSTANT, borderValue=0.0).astype(np.float64)
    best = np.argmax(vals, axis=1)
    rows = np.arange(m)
    peak = vals[rows, best]
    med = np.median(vals, axis=1)
    ok = inside & (peak >= 12) & (peak >= 2.0 * med) & (best > 0) & (best < k - 1)
    b = np.clip(best, 1, k - 2)
    y0, y1, y2 = vals[rows, b - 1], vals[rows, b], vals[rows, b + 1]
    den = y0 - 2 * y1 + y2
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(den < 0, 0.5 * (y0 - y2) / den, 0.0)
    off = _EXACT_OFFS[b] + np.clip(frac, -0.5, 0.5) * (_EXACT_OFFS[1] - _EXACT_OFFS[0])
    q = apply_h(hb, _EXACT_UV + off[:, None] * _EXACT_ACROSS)
    return q, ok


def _fit_lines(q: np.ndarray, which: np.ndarray, value: np.ndarray, g0: np.ndarray,
               iterations: int = 6) -> np.ndarray | None:
    """Image -> board homography whose images of the printed lines pass through the points q (robustly).

    A point q on rank line v0 says (G q)_v = v0, on file line u0 (G q)_u = u0: linear in G, one row per point.
    Iteratively reweighted: each row is scaled by 1 / (G q)_w of the last estimate, so that residuals are board
    distances in spacings, and Tukey-weighted against a robust scale (strokes and rims of pieces beside a line
    make peaks that are not the line). `g0` is the estimate the points were found with.
    """
    # Hartley normalisation of the image points keeps the linear system well conditioned
    c = q.mean(axis=0)
    sc = np.sqrt(2.0) / (np.linalg.norm(q - c, axis=1).mean() + 1e-12)
    t = np.array([[sc, 0.0, -sc * c[0]], [0.0, sc, -sc * c[1]], [0.0, 0.0, 1.0]])
    qn = np.hstack([q, np.ones((len(q), 1))]) @ t.T
    qh = np.hstack([q, np.ones((len(q), 1))])
    g = g0 / np.linalg.norm(g0)
    for _ in range(iterations):
        bq = qh @ g.T
        res = bq[np.arange(len(q)), which] / bq[:, 2] - value
        scale = max(MIN_SCALE, 1.4826 * float(np.median(np.abs(res))))
        r = res / (4.685 * scale)
        w = np.where(np.abs(r) < 1, (1 - r ** 2) ** 2, 0.0) / np.abs(bq[:, 2])
        if (w > 0).sum() < 16:
            return None
        a = np.zeros((len(q), 9))
        for row, coord in ((0, 0), (1, 1)):
            sel = which == coord
            a[sel, 3 * row:3 * row + 3] = qn[sel]
        a[:, 6:9] = -value[:, None] * qn
        _, _, vt = np.linalg.svd(a * w[:, None], full_matrices=False)
        gn = vt[-1].reshape(3, 3)
        g = gn @ t
        g = g / np.linalg.norm(g)
    return g


def exact_fit(resp: np.ndarray, hb: np.ndarray, rounds: int = 2) -> np.ndarray:
    """Pull a found lattice (board -> image on `resp`) exactly onto the printed lines; sub-pixel.

    `refine` moves a lattice by whole profile steps onto point correspondences whose position along the line is
    the one the lattice started from; here each line position is found to a fraction of a pixel and the
    homography is fitted to the lines themselves (a point on a line may lie anywhere along it). A correction
    that would move a point by more than EXACT_MAX_MOVE spacings, or that rests on too few lines, is not taken.
    """
    value = np.where(_EXACT_WHICH == 1, _EXACT_UV[:, 1], _EXACT_UV[:, 0])
    h = hb / hb[2, 2]
    for _ in range(rounds):
        q, ok = _line_peaks(resp, h)
        # both families must be seen well (12 samples of 5 per segment: a few lines' worth each) to pin the fit
        if (ok & (_EXACT_WHICH == 1)).sum() < 12 or (ok & (_EXACT_WHICH == 0)).sum() < 12:
            break
        g = _fit_lines(q[ok], _EXACT_WHICH[ok], value[ok], np.linalg.inv(h))
        if g is None or not np.isfinite(g).all() or abs(np.linalg.det(g)) < 1e-300:
            break
        h_new = np.linalg.inv(g)
        h_new = h_new / h_new[2, 2]
        before, after = apply_h(h, POINTS_UV), apply_h(h_new, POINTS_UV)
        sp = float(np.linalg.norm(np.diff(before.reshape(10, 9, 2), axis=1), axis=2).mean())
        if not np.isfinite(after).all() or np.linalg.norm(after - apply_h(hb, POINTS_UV), axis=1).max() > (
                EXACT_MAX_MOVE * sp):
            break
        h = h_new
    return h


def _wind_clockwise(hb: np.ndarray) -> np.ndarray:
    """Make a9 -> i9 -> i0 run clockwise in the image (a camera does not mirror the board)."""
    c = apply_h(hb, CORNERS_UV)
    cross = (c[1, 0] - c[0, 0]) * (c[2, 1] - c[1, 1]) - (c[1, 1] - c[0, 1]) * (c[2, 0] - c[1, 0])
    if cross < 0:
        flip = np.array([[-1.0, 0, 8.0], [0, 1.0, 0], [0, 0, 1.0]])  # u -> 8 - u
        hb = hb @ flip
    return hb


def rotate_half_turn(hb: np.ndarray) -> np.ndarray:
    """The same lattice seen from the other end (a9 <-> i0): used when Red turns out to sit at the top."""
    rot = np.array([[-1.0, 0, 8.0], [0, -1.0, 9.0], [0, 0, 1.0]])
    return hb @ rot


# A picture may cut through the board (a phone held close, a crop): up to two of its outer ranks or files on a side
# out of view, the rest of the lattice saying where the cut points are. A lattice is taken as the board in view when
# its central points (files c..g, ranks 2..7) and at least MIN_POINTS_IN_VIEW of its 90 points lie in the picture;
# one mostly out of view (a neighbour's board at the frame's edge) is not the board watched.
_CENTRAL_POINTS = np.array([(u, v) for v in range(2, 8) for u in range(2, 7)], dtype=np.float64)
MIN_POINTS_IN_VIEW = 70  # of 90: two files (20 points) or two ranks (18) cut off, not more


def _points_inside(hs: np.ndarray, shape: tuple[int, ...], margin: float = 0.02,
                   pts_uv: np.ndarray = POINTS_UV) -> np.ndarray:
    """Per homography (board -> image) and point of `pts_uv`: does it lie in the image (within a small margin)?"""
    h, w = shape[:2]
    pts = np.hstack([pts_uv, np.ones((len(pts_uv), 1))])
    q = np.einsum("nij,mj->nmi", hs, pts)
    with np.errstate(divide="ignore", invalid="ignore"):
        x, y = q[..., 0] / q[..., 2], q[..., 1] / q[..., 2]
    return (q[..., 2] > 0) & (x > -margin * w) & (x < (1 + margin) * w) & (y > -margin * h) & (y < (1 + margin) * h)


def _inside(hs: np.ndarray, shape: tuple[int, ...], margin: float = 0.02) -> np.ndarray:
    """Per homography (board -> image): do all 90 points lie in the image (within a small margin)?"""
    return _points_inside(hs, shape, margin).all(axis=1)


def _in_view(hs: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Per homography: may it be the board in view, cut by the picture's edge or not (see _CENTRAL_POINTS)?"""
    return (_points_inside(hs, shape, pts_uv=_CENTRAL_POINTS).all(axis=1)
            & (_points_inside(hs, shape).sum(axis=1) >= MIN_POINTS_IN_VIEW))


def _segments_and_mask(resp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Hough segments of the line response and the binary line mask they were found in."""
    thr = max(14.0, float(np.percentile(resp, 90)))
    bw = (resp > thr).astype(np.uint8) * 255
    side = max(resp.shape)
    # Hough on the whole mask finds the lines of one direction and leaves the crossing direction in short bits
    # (each found line takes the pixels where the other lines cross it): split the mask by the direction of the
    # ridge at each pixel (the Hessian's flatter axis) and look for segments direction by direction.
    r = cv2.GaussianBlur(resp, (0, 0), 1.5)
    dxx = cv2.Sobel(r, cv2.CV_32F, 2, 0, ksize=5)
    dyy = cv2.Sobel(r, cv2.CV_32F, 0, 2, ksize=5)
    dxy = cv2.Sobel(r, cv2.CV_32F, 1, 1, ksize=5)
    along = (0.5 * np.degrees(np.arctan2(2 * dxy, dxx - dyy)) + 90.0) % 180.0
    out = []
    for c in range(0, 180, 30):
        off = np.abs((along - c + 90.0) % 180.0 - 90.0)
        mask = np.where(off < 25.0, bw, 0).astype(np.uint8)
        segs = cv2.HoughLinesP(mask, 1, np.pi / 360, threshold=25, minLineLength=max(20, side // 40), maxLineGap=3)
        if segs is not None:
            out.append(segs.reshape(-1, 4))
    if not out:
        return np.zeros((0, 4)), bw
    return np.concatenate(out).astype(np.float64), bw


def _regions(bw: np.ndarray, segs: np.ndarray, max_regions: int = 4) -> list[np.ndarray]:
    """Groups of segments that belong to one connected net of printed lines, biggest first (indices into segs).

    A printed grid is one connected net in the line mask (the lines cross, the pieces' rims touch them), while a
    score sheet's rules, a table's stripes or wood grain, and the next table's board (a sheet margin away) are
    other nets. Fitting the lattice net by net keeps their lines out of the board's families and vanishing points.
    """
    # a small dilation bridges the breaks that blur, JPEG and faint ink leave in a line
    grown = cv2.dilate(bw, np.ones((3, 3), np.uint8))
    n, lab, stats, _ = cv2.connectedComponentsWithStats(grown, connectivity=8)
    mid = np.round((segs[:, :2] + segs[:, 2:]) / 2).astype(np.int64)
    mid[:, 0] = np.clip(mid[:, 0], 0, bw.shape[1] - 1)
    mid[:, 1] = np.clip(mid[:, 1], 0, bw.shape[0] - 1)
    seg_lab = lab[mid[:, 1], mid[:, 0]]
    length = np.hypot(segs[:, 2] - segs[:, 0], segs[:, 3] - segs[:, 1])
    total = np.bincount(seg_lab, weights=length, minlength=n)
    total[0] = 0.0
    count = np.bincount(seg_lab, minlength=n)
    min_side = 0.15 * min(bw.shape)  # as the lattice search: a board spans at least this much of the frame
    out = []
    for c in np.argsort(-total, kind="stable"):
        if total[c] <= 0 or len(out) >= max_regions:
            break
        if count[c] < 12 or max(stats[c, cv2.CC_STAT_WIDTH], stats[c, cv2.CC_STAT_HEIGHT]) < min_side:
            continue
        out.append(np.flatnonzero(seg_lab == c))
    return out


def _fit_net(resp: np.ndarray, segs: np.ndarray) -> tuple[list[tuple[np.ndarray, float]], str]:
    """Lattice fits (board -> work image, support) of one net of segments, best first; or [] and why not."""
    lines = _merge(segs)
    fam1, fam2 = _families(lines)
    if len(fam1) < 3 or len(fam2) < 3:
        return [], f"no two families of grid lines ({len(fam1)} and {len(fam2)} lines)"
    corner_sets: list[np.ndarray] = []
    # the rectification keeps the scale of the net's middle, where the spacing limits of the lattice search hold
    centre = (segs[:, :2] + segs[:, 2:]).mean(axis=0) / 2
    for fa, fb in ((fam1, fam2), (fam2, fam1)):
        corner_sets.extend(_hypotheses(fa, fb, resp.shape, centre))
    if not corner_sets:
        return [], "the grid lines do not form a 9 x 10 lattice"
    hs = _batch_h(corner_sets)
    hs = hs[np.isfinite(hs).all(axis=(1, 2))]
    if len(hs) == 0:
        return [], "the grid lines do not form a 9 x 10 lattice"
    scores = support_scores_batch(resp, hs)
    # the board is in view: a lattice whose points leave the frame is something else (a neighbour's board cut
    # by the frame's edge, a tablecloth's checks)
    scores = np.where(_in_view(hs, resp.shape), scores, -np.inf)
    order = [i for i in np.argsort(-scores, kind="stable")[:6] if np.isfinite(scores[i])]
    refined = [refine(resp, hs[i]) for i in order]
    refined.sort(key=lambda h: -support_score(resp, h))
    found: list[tuple[np.ndarray, float]] = []
    for h in refined[:3]:  # the search around a fit costs more than the fit: only around the three best
        h = _polish(resp, h)
        if _in_view(h[None], resp.shape)[0]:
            found.append((h, support_score(resp, h)))
    if not found:
        return [], "no 9 x 10 lattice of the grid lines lies in the frame"
    found.sort(key=lambda t: -t[1])
    return found, ""


def _local_moves() -> np.ndarray:
    """Board-plane moves tried around a fit: whole-line shifts by up to two lines, and stretches of the spacing
    by 5 % along either axis (about the board's centre)."""
    out = []
    for du in range(-2, 3):
        for dv in range(-2, 3):
            for su in (0.95, 1.0, 1.05):
                for sv in (0.95, 1.0, 1.05):
                    # u' = su * (u - 4) + 4 + du: the stretch keeps the centre, the shift moves whole lines
                    out.append([[su, 0.0, 4.0 * (1 - su) + du], [0.0, sv, 4.5 * (1 - sv) + dv], [0.0, 0.0, 1.0]])
    return np.array(out)


_MOVES = _local_moves()
_IDENTITY_MOVE = int(np.flatnonzero((np.abs(_MOVES - np.eye(3)) < 1e-12).all(axis=(1, 2)))[0])


def _polish(resp: np.ndarray, h: np.ndarray, rounds: int = 2) -> np.ndarray:
    """Move a lattice to the best supported of its shifted and stretched variants, and refine it there.

    Line fits meet the true lattice's neighbours as easily as the lattice itself where pieces cover the outer
    lines, and a spacing a few per cent off puts the far lines between the printed ones, which the refinement's
    short profiles cannot see; the river's gap and the board's edges make the true placement the best supported.
    """
    for _ in range(rounds):
        hs = h[None] @ _MOVES
        scores = np.where(_in_view(hs, resp.shape), support_scores_batch(resp, hs), -np.inf)
        k = int(np.argmax(scores))
        if k == _IDENTITY_MOVE or not np.isfinite(scores[k]):
            break
        h = refine(resp, hs[k])
    return h


def _framed(image: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The picture in a plain frame and scaled up when small: (the copy, picture -> copy pixels homography).

    The frame has the colour of the picture's edge (its median), so that nothing there makes lines; the grid's
    outer lines and the board's outline then lie inside the picture with room around them, as the lattice search
    expects, and a small picture's lines become long enough for the segment search.
    """
    h, w = image.shape[:2]
    pad = round(RETRY_FRAME * max(h, w))
    scale = max(1.0, RETRY_SIDE / (max(h, w) + 2 * pad))
    edge = np.concatenate([image[0], image[-1], image[:, 0], image[:, -1]]).reshape(-1, 3)
    colour = [int(v) for v in np.median(edge, axis=0)]
    framed = cv2.copyMakeBorder(image, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=colour)
    if scale > 1.0:
        framed = cv2.resize(framed, None, fx=scale, fy=scale, interpolation=cv2.INTER_CUBIC)
    # pixel centres: x -> (x + pad + 0.5) * scale - 0.5
    t = np.array([[scale, 0.0, (pad + 0.5) * scale - 0.5], [0.0, scale, (pad + 0.5) * scale - 0.5], [0, 0, 1.0]])
    return framed, t


def _equalised(image: np.ndarray) -> np.ndarray:
    """The picture with its lightness equalised tile by tile (CLAHE): where glare or a sheet's veil has flattened the
    print, the lines stand out again for the segment search (lines under the glare's white core stay lost)."""
    lab = cv2.cvtColor(image, cv2.COLOR_BGR2LAB)
    clahe = cv2.createCLAHE(clipLimit=RETRY_CLAHE_CLIP, tileGridSize=(RETRY_CLAHE_TILES, RETRY_CLAHE_TILES))
    lab[..., 0] = clahe.apply(lab[..., 0])
    return cv2.cvtColor(lab, cv2.COLOR_LAB2BGR)


def find_grid(image: np.ndarray, *, equalise: bool = True) -> tuple[np.ndarray, float]:
    """Markerless lattice fit: (board -> image homography in full-image pixels, support score). Not oriented.

    When the picture as it is shows no board, it is looked at again framed and, when small, scaled up (`_framed`):
    a board filling the picture to its edges, or a small picture's (a screenshot's, a thumbnail's), is found there;
    and last both ways again with its lightness equalised (`_equalised`: heavy glare, a sheet's veil).
    """
    try:
        return _find_grid_in(image)
    except NoBoardFound as first:
        if "boards in view" in first.reason:
            raise  # two boards seen: a frame around them does not make one
        framed, t = _framed(image)
        try:
            hb, score = _find_grid_in(framed)
        except NoBoardFound:
            if not equalise:
                raise first from None
            try:  # the print's contrast restored locally (same pixels, so the same geometry)
                return find_grid(_equalised(image), equalise=False)
            except NoBoardFound:
                raise first from None
        hb = np.linalg.inv(t) @ hb
        if not _in_view(hb[None], image.shape)[0]:
            raise first from None  # a lattice in the frame's colour is not the picture's board
        return hb / hb[2, 2], score


def _find_grid_in(image: np.ndarray) -> tuple[np.ndarray, float]:
    """find_grid on the picture as it is."""
    work, scale = _work_image(image)
    resp = response_map(work)
    segs, bw = _segments_and_mask(resp)
    if len(segs) < 12:
        raise NoBoardFound(f"no grid lines found ({len(segs)} line segments)")
    regions = _regions(bw, segs)
    if not regions:
        raise NoBoardFound("no net of crossing lines as large as a board")
    boards: list[tuple[np.ndarray, float]] = []  # the best lattice of each net
    reasons: list[str] = []
    for idx in regions:
        fits, why = _fit_net(resp, segs[idx])
        if not fits:
            reasons.append(why)
            continue
        # The best supported lattice of the net, if it is a board seen whole. A lattice of half the board's spacing
        # may outscore the board's own where pieces' strokes fill its extra lines: past such ones only, the next
        # best is looked at (past a lattice refused for anything else, the next ones are its shifted and stretched
        # variants, and one of those that passes is as often wrong as right).
        why = ""
        for h, sc in fits:
            why = _lines_missing(resp, h, sc)
            if not why:
                h, sc = _best_by_landmarks(resp, h, sc)
                why = _landmarks_contradict(resp, h, sc)
            if not why:
                boards.append((h, sc))
            if not why.endswith(HALF_SPACING):
                break
        if why:
            reasons.append(why)
    best_s = max((sc for _, sc in boards), default=-np.inf)
    if not boards:
        raise NoBoardFound("; ".join(dict.fromkeys(reasons)))
    if best_s < MIN_SCORE:
        raise NoBoardFound(f"no lattice of 9 x 10 printed lines is supported (best line contrast {best_s:.1f})")
    # A second complete lattice (a net of its own, well supported) is the next table's board. Nothing in one
    # picture says which of two boards a camera watches: the nearer to the middle of the view is as often the
    # neighbour's (cameras are aimed, frames are cropped). Guessing would make the tracker watch another game,
    # so say so instead (markers settle it).
    complete: list[tuple[np.ndarray, float, np.ndarray, float]] = []
    for h, sc in sorted(boards, key=lambda t: -t[1]):
        if sc < max(MIN_SCORE, SECOND_BOARD * best_s):
            continue
        c = apply_h(h, np.array([[4.0, 4.5]]))[0]
        sp = float(np.linalg.norm(apply_h(h, np.array([[5.0, 4.5]]))[0] - c))
        if all(np.linalg.norm(c - b[2]) > 4 * max(sp, b[3]) for b in complete):  # the same board twice is one
            complete.append((h, sc, c, sp))
    # A board wholly in the picture is the watched one over a lattice the picture's edge cuts (the next table's
    # board at the frame's edge); only where no board is wholly in view is a cut one taken.
    whole = [b for b in complete if _inside(b[0][None], resp.shape)[0]]
    complete = whole or complete
    if len(complete) > 1:
        where = " and ".join(f"({b[2][0] / scale:.0f}, {b[2][1] / scale:.0f})" for b in complete)
        raise NoBoardFound(f"{len(complete)} boards in view, centred at {where}: cannot tell which one this camera "
                           "watches (frame one board, fit the ArUco markers, or give the board's corners in the "
                           "venue configuration: boards.<id>.corners)")
    best_h, best_s = complete[0][0], complete[0][1]
    best_h = _wind_clockwise(best_h)
    return _exact_full(image, resp, best_h, scale), float(best_s)


HALF_SPACING = "(a lattice of half the board's spacing)"


def _lines_missing(resp: np.ndarray, h: np.ndarray, score: float) -> str:
    """Why a fitted lattice is not a board seen whole, from the print under its 15 inner lines; "" when it is.

    A line may be missing where something hides it (MAX_MISSING_LINES always, up to MAX_HIDDEN_LINES where no
    missing line has print beside it instead of on it); a lattice over clutter or stretched has more lines without
    print, or lines with print beside them. A line out of the picture (a board cut by its edge, _in_view) is unseen:
    it counts against MAX_HIDDEN_LINES with the hidden ones, so that a lattice is never taken on little evidence.
    """
    lines = line_supports(resp, h)
    median = float(np.nanmedian(lines))
    unseen = int(np.isnan(lines).sum())
    inner = lines[_INNER_LINES]
    missing = int((inner < MISSING_LINE * median).sum())
    if missing <= MAX_MISSING_LINES and unseen == 0:
        return ""
    contradicted = int((inner < CONTRADICTED_LINE * median).sum())
    # Glare, a shadow or a row of pieces hides neighbouring lines; every other line bare is a lattice of half the
    # board's spacing (its extra lines in the cells), whatever hides what. Two bare lines a line apart are as
    # often glare over a board's own lines: the pattern counts from MIN_ALTERNATING bare lines.
    bare = lines < MISSING_LINE * median
    alternating = missing >= MIN_ALTERNATING and any(
        bare[k] and not bare[k + 1] and bare[k + 2] for first, last in ((0, 9), (10, 18))
        for k in range(first, last - 1))
    out = (f" and {unseen} out of the picture" if unseen else "")
    if alternating:
        return (f"the best lattice ({score:.1f}) has {missing} of its 15 inner lines without print under them{out}, "
                f"every other one {HALF_SPACING}")
    if contradicted:
        return (f"the best lattice ({score:.1f}) has {missing} of its 15 inner lines without print under them{out}, "
                f"{contradicted} with print beside them")
    overshoot = _bare_from_outline(bare, lines)
    if overshoot >= MAX_BARE_FROM_OUTLINE:
        return (f"the best lattice ({score:.1f}) has {missing} of its 15 inner lines without print under them{out}, "
                f"{overshoot} side by side from its outline: it reaches beyond the board")
    if missing + unseen <= MAX_HIDDEN_LINES:
        return ""
    return f"the best lattice ({score:.1f}) has {missing} of its 15 inner lines without print under them{out}"


def _bare_from_outline(bare: np.ndarray, lines: np.ndarray) -> int:
    """The longest run of bare lines from one of the four sides inwards (lines out of the picture skipped)."""
    longest = 0
    for run in (range(0, 10), range(9, -1, -1), range(10, 19), range(18, 9, -1)):
        seen = [k for k in run if np.isfinite(lines[k])]
        n = 0
        while n < len(seen) and bare[seen[n]]:
            n += 1
        longest = max(longest, n)
    return longest


def _best_by_landmarks(resp: np.ndarray, h: np.ndarray, score: float) -> tuple[np.ndarray, float]:
    """The accepted lattice or one of its neighbours a whole rank or file off, whichever the landmarks (river,
    palaces, outline) and the lines together support best, among those that are boards seen whole."""
    best, best_s, best_total = h, score, landmark_score(resp, h, score)
    for move in _LINE_SHIFTS:
        moved = refine(resp, h @ move)
        if not _in_view(moved[None], resp.shape)[0]:
            continue
        sc = support_score(resp, moved)
        total = landmark_score(resp, moved, sc)
        if total > best_total and not _lines_missing(resp, moved, sc):
            best, best_s, best_total = moved, sc, total
    return best, best_s


def _landmarks_contradict(resp: np.ndarray, h: np.ndarray, score: float) -> str:
    """Why a lattice's river or palaces say it is not the board (a rank or a file off, turned a quarter under the
    board); "" when nothing contradicts it."""
    river = river_print(resp, h)
    if river >= RIVER_CONTRADICTS:
        return (f"the best lattice ({score:.1f}) has lines printed across its river ({river:.2f} of a line): "
                "it is not laid on the board's ranks")
    palace, beyond = palace_print(resp, h), beyond_print(resp, h)
    if palace < PALACE_ABSENT and beyond >= BEYOND_CONTRADICTS:
        return (f"the best lattice ({score:.1f}) has no palace diagonals ({palace:.2f} of a line) and a line "
                f"printed beyond its outline ({beyond:.2f}): it is not laid on the board's files")
    return ""


def _work_to_full(scale: float) -> np.ndarray:
    """Work-image pixels -> full-image pixels (pixel centres: a resize by `scale` maps x to (x + 0.5) s - 0.5)."""
    a = 1.0 / scale
    return np.array([[a, 0.0, 0.5 * a - 0.5], [0.0, a, 0.5 * a - 0.5], [0.0, 0.0, 1.0]])


def _exact_full(image: np.ndarray, resp: np.ndarray, hb_work: np.ndarray, scale: float) -> np.ndarray:
    """The exact fit of a lattice found on the work image, in full-image pixels.

    On the full image when the work image was scaled down: the lines' positions are measured where the camera
    resolved them (on rendered hard scenes the mean point error falls from about 0.010 to 0.006 spacing).
    """
    if scale >= 1.0:
        return exact_fit(resp, hb_work)
    return exact_fit(response_map(image), _work_to_full(scale) @ hb_work)


def refit(image: np.ndarray, fit: BoardFit) -> BoardFit:
    """A known board's lattice pulled exactly onto its printed lines in a new frame (after a camera bump).

    For a fit that is already within a few hundredths of a spacing of where the board now is (a bump followed by
    a shift of the view leaves the small turn of the camera uncorrected): the exact fit alone, about 20 ms on a
    1280 x 720 frame, against a whole new calibration's 0.5 s. Orientation, method and score are kept; where the
    lines cannot say more, the fit comes back as it was.
    """
    h = exact_fit(response_map(image), fit.board_to_image)
    return fit_from_h(h, fit.method, fit.score, fit.oriented)


def find_markers(image: np.ndarray) -> np.ndarray | None:
    """Board -> image homography from ArUco ids 0..3 (DICT_4X4_50), or None when fewer than 4 are seen."""
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    det = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50),
                                  cv2.aruco.DetectorParameters())
    corners, ids, _ = det.detectMarkers(gray)
    if ids is None:
        return None
    found: dict[int, np.ndarray] = {}
    for c, i in zip(corners, ids.ravel(), strict=True):
        if 0 <= int(i) <= 3:
            found[int(i)] = c.reshape(4, 2).mean(axis=0)
    if len(found) < 4:
        return None
    src = MARKER_UV.astype(np.float32)
    dst = np.array([found[i] for i in range(4)], np.float32)
    return cv2.getPerspectiveTransform(src, dst).astype(np.float64)


def grid_support(image: np.ndarray, hb: np.ndarray) -> float:
    """Line-support score of a known lattice on a frame (the cheap per-frame re-check)."""
    work, scale = _work_image(image)
    resp = response_map(work)
    down = np.diag([scale, scale, 1.0])
    return support_score(resp, down @ hb)


def find_board(image: np.ndarray, *, markers: bool = True, orient: bool = True) -> BoardFit:
    """Find the board in a BGR image; raises NoBoardFound(reason). Orientation: Red's side is rank 0."""
    if image is None or image.ndim != 3 or image.shape[2] != 3 or min(image.shape[:2]) < 64:
        raise NoBoardFound("not a colour image of at least 64 x 64 pixels")
    hb_m = find_markers(image) if markers else None
    if hb_m is not None:
        work, scale = _work_image(image)
        resp = response_map(work)
        down = np.diag([scale, scale, 1.0])
        h_ref = refine(resp, down @ hb_m)
        s_ref = support_score(resp, h_ref)
        s_m = support_score(resp, down @ hb_m)
        h_best, s_best = (h_ref, s_ref) if s_ref >= s_m else (down @ hb_m, s_m)
        marked = fit_from_h(_exact_full(image, resp, h_best, scale), "aruco", s_best)
        if s_best >= MIN_SCORE and not _lines_missing(resp, h_best, s_best):
            return marked
        # Markers with ids 0..3 whose lattice has no board printed under it are someone else's (a robot rig's, a
        # calibration sheet's): the printed grid is looked for instead, and the markers kept where it is not found.
        try:
            hb, score = find_grid(image)
        except NoBoardFound:
            return marked
    else:
        hb, score = find_grid(image)
    if not orient:
        return fit_from_h(hb, "grid", score, oriented=False)
    from .occupancy import orientation_vote, read_points  # occupancy needs a fit; no import cycle at load

    fit = fit_from_h(hb, "grid", score)
    vote = orientation_vote(read_points(image, fit))
    # the vote says which end is Red only when it is clear, whichever way it points (a faint vote either way is
    # the colour reading's noise: said as not oriented, and the tracker asks the start position)
    oriented = abs(vote) > ORIENTED_VOTE
    return fit_from_h(rotate_half_turn(hb) if vote < 0 else hb, "grid", score, oriented=oriented)
