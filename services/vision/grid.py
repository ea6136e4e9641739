"""Geometry of the Xiangqi board: the 9 x 10 lattice of points, the board plane and the line response.

The board plane is measured in grid spacings: point a9 (Black's left corner seen from Red) is (0, 0), i9 is (8, 0),
i0 is (8, 9) and a0 is (0, 9); so u = file index (a..i -> 0..8) and v = 9 - rank. Points are kept in the order of
`squares` (rank 9 first, files a..i within a rank): index = (9 - rank) * 9 + file = v * 9 + u.

Everything here is pure: arrays in, arrays out.
"""

from __future__ import annotations

import cv2
import numpy as np

FILES = "abcdefghi"
N_FILES = 9
N_RANKS = 10

# Corners in the board plane, order a9, i9, i0, a0 (DESIGN: the corners of `vision detect`).
CORNERS_UV = np.array([[0.0, 0.0], [8.0, 0.0], [8.0, 9.0], [0.0, 9.0]], dtype=np.float64)

# The 90 points in the board plane, squares order.
POINTS_UV = np.array([[i % 9, i // 9] for i in range(90)], dtype=np.float64)

# The river lies between rank 4 (v = 5) and rank 5 (v = 4): only the edge files a and i cross it.
RIVER_V = (4.0, 5.0)


def point_name(index: int) -> str:
    """`squares` index -> ICCS point name (0 -> "a9", 89 -> "i0")."""
    if not 0 <= index < 90:
        raise ValueError(f"point index {index} is outside 0..89")
    return f"{FILES[index % 9]}{9 - index // 9}"


def point_index(name: str) -> int:
    """ICCS point name -> `squares` index ("a9" -> 0, "i0" -> 89)."""
    if len(name) != 2 or name[0] not in FILES or not name[1].isdigit():
        raise ValueError(f"{name!r} is not an ICCS point (a0..i9)")
    return (9 - int(name[1])) * 9 + FILES.index(name[0])


def point_at(u: int, v: int) -> int | None:
    """The index of the point at file column u, rank row v (top-view coordinates); None off the board."""
    return v * 9 + u if 0 <= u < N_FILES and 0 <= v < N_RANKS else None


def neighbours(index: int) -> list[int]:
    """The orthogonally adjacent points of a point (2 to 4 of them)."""
    u, v = index % 9, index // 9
    near = (point_at(u + du, v + dv) for du, dv in ((1, 0), (-1, 0), (0, 1), (0, -1)))
    return [i for i in near if i is not None]


def apply_h(h: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Map Nx2 points through a 3x3 homography (no clipping: points must not lie on the vanishing line)."""
    pts = np.asarray(pts, dtype=np.float64).reshape(-1, 2)
    ones = np.ones((pts.shape[0], 1))
    q = np.hstack([pts, ones]) @ np.asarray(h, dtype=np.float64).T
    return q[:, :2] / q[:, 2:3]


def board_to_image(corners: np.ndarray) -> np.ndarray:
    """Homography board plane -> image from the four corners (a9, i9, i0, a0)."""
    return cv2.getPerspectiveTransform(CORNERS_UV.astype(np.float32), np.asarray(corners, dtype=np.float32))


def canonical_transform(h_img_to_board: np.ndarray, px_per_spacing: float,
                        margin: float) -> tuple[np.ndarray, tuple[int, int]]:
    """Homography image -> canonical top view (pixels), and the view's size (width, height).

    The canonical view shows the board plane from u = -margin .. 8 + margin, v = -margin .. 9 + margin at
    `px_per_spacing` pixels per grid spacing; point (u, v) lands at ((u + margin) * s, (v + margin) * s).
    """
    s = float(px_per_spacing)
    scale = np.array([[s, 0.0, margin * s], [0.0, s, margin * s], [0.0, 0.0, 1.0]])
    size = (round((8 + 2 * margin) * s), round((9 + 2 * margin) * s))
    return scale @ np.asarray(h_img_to_board, dtype=np.float64), size


def line_response(gray: np.ndarray, kernel: int) -> np.ndarray:
    """Dark thin structures (printed lines, ink strokes) brighter than their surroundings: a black-hat.

    Works for red and for dark lines alike when fed the green channel: red ink is dark in green.
    """
    k = cv2.getStructuringElement(cv2.MORPH_RECT, (kernel, kernel))
    return cv2.morphologyEx(gray, cv2.MORPH_BLACKHAT, k)


def _segments_uv() -> tuple[np.ndarray, np.ndarray]:
    """Sample points of the board plane that lie on printed lines and points that lie between them.

    On-line samples sit near the middle of each line segment between two points, where a piece on either point
    leaves the line visible; off-line samples sit in the cells, away from the lines and from the river's text.
    """
    on: list[tuple[float, float]] = []
    for v in range(10):  # horizontal lines (ranks)
        for u in range(8):
            for f in (0.5, 0.35, 0.65):
                on.append((u + f, v))
    for u in range(9):  # vertical lines (files); interior files stop at the river
        for v in range(9):
            if RIVER_V[0] <= v < RIVER_V[1] and 0 < u < 8:
                continue
            for f in (0.5, 0.35, 0.65):
                on.append((u, v + f))
    off: list[tuple[float, float]] = []
    for v in range(9):
        if v == 4:
            continue  # the river's text
        for u in range(8):
            for du, dv in ((0.5, 0.5), (0.25, 0.5), (0.75, 0.5), (0.5, 0.25), (0.5, 0.75)):
                off.append((u + du, v + dv))
    # The river between the interior files must be free of vertical lines (breaks the symmetry of the lattice:
    # a grid shifted by one rank or one file does not have its gap there).
    gap: list[tuple[float, float]] = []
    for u in range(1, 8):
        for f in (0.3, 0.5, 0.7):
            gap.append((u, 4 + f))
    return np.array(on), np.array(off), np.array(gap)


ON_UV, OFF_UV, GAP_UV = _segments_uv()


def support_score(resp: np.ndarray, h_board_to_img: np.ndarray) -> float:
    """How well a lattice hypothesis sits on the printed lines: mean response on lines minus between them.

    `resp` is a line-response map (float32, blurred a little so that one pixel of error does not matter).
    The river's gap in the interior files counts as an off-line sample. Returns a contrast in response units.
    Each mean is over the samples that fall inside the image: a board cut by the picture's edge is judged by what
    the picture shows of it (which lattices may hang out of the picture, and how far, the board finder decides).
    """
    return float(support_scores_batch(resp, np.asarray(h_board_to_img, dtype=np.float64)[None])[0])


def support_scores_batch(resp: np.ndarray, hs: np.ndarray) -> np.ndarray:
    """`support_score` for many homographies at once (N x 3 x 3, board -> image)."""
    hh, ww = resp.shape
    out = []
    for uv in (ON_UV, OFF_UV, GAP_UV):
        pts = np.hstack([uv, np.ones((len(uv), 1))])  # M x 3
        q = np.einsum("nij,mj->nmi", hs, pts)  # N x M x 3
        with np.errstate(divide="ignore", invalid="ignore"):
            x = q[..., 0] / q[..., 2]
            y = q[..., 1] / q[..., 2]
        bad = ~np.isfinite(x) | ~np.isfinite(y) | (q[..., 2] <= 0)
        x = np.where(bad, -1, x)
        y = np.where(bad, -1, y)
        xi = np.round(x).astype(np.int64)
        yi = np.round(y).astype(np.int64)
        ok = (xi >= 0) & (xi < ww) & (yi >= 0) & (yi < hh)
        v = np.zeros(xi.shape, dtype=np.float32)
        v[ok] = resp[yi[ok], xi[ok]]
        out.append(v.sum(axis=1) / np.maximum(ok.sum(axis=1), 1))
    on, off, gap = out
    return on - 0.5 * off - 0.5 * gap


def _line_groups() -> np.ndarray:
    """Per sample of ON_UV, which of the 19 printed lines it lies on (0..9 the ranks v, 10..18 the files u)."""
    grp = []
    for u, v in ON_UV:
        grp.append(int(np.rint(v)) if abs(v - np.rint(v)) < 1e-9 else 10 + int(np.rint(u)))
    return np.array(grp)


ON_LINE = _line_groups()


def _line_normals() -> np.ndarray:
    """Per sample of ON_UV, the unit step across its line in the board plane (along v for ranks, u for files)."""
    return np.array([(0.0, 1.0) if g < 10 else (1.0, 0.0) for g in ON_LINE])


ON_NORMAL = _line_normals()


def _sample(resp: np.ndarray, h_board_to_img: np.ndarray, uv: np.ndarray) -> np.ndarray:
    """The response at board points `uv` (0 outside the image)."""
    return _sample_inside(resp, h_board_to_img, uv)[0]


def _sample_inside(resp: np.ndarray, h_board_to_img: np.ndarray, uv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The response at board points `uv` (0 outside the image), and which of them lie inside it."""
    hh, ww = resp.shape
    p = apply_h(h_board_to_img, uv)
    with np.errstate(invalid="ignore"):
        x = np.round(p[:, 0])
        y = np.round(p[:, 1])
    ok = np.isfinite(x) & np.isfinite(y) & (x >= 0) & (x < ww) & (y >= 0) & (y < hh)
    v = np.zeros(len(uv), dtype=np.float64)
    v[ok] = resp[y[ok].astype(np.int64), x[ok].astype(np.int64)]
    return v, ok


def line_supports(resp: np.ndarray, h_board_to_img: np.ndarray) -> np.ndarray:
    """How much each of the 19 printed lines stands out (10 ranks, v = 0..9, then 9 files, u = 0..8).

    Per line: the mean line response along it, less the mean half a spacing beside it on its quieter side (the
    middle of the cells; the other side may be the river's text or a frame). A board shows every one of its lines
    somewhere between the pieces; a lattice that is shifted, stretched, of half the spacing or laid over a board
    cut by the frame's edge has lines with nothing printed under them, or with as much beside them as on them.
    Each mean is over the line's samples inside the picture (a line cut by its edge is judged by what shows); a
    line wholly outside the picture is NaN.
    """

    def per_line(uv: np.ndarray) -> np.ndarray:
        values, ok = _sample_inside(resp, h_board_to_img, uv)
        counts = np.bincount(ON_LINE, weights=ok.astype(np.float64), minlength=19)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(counts > 0, np.bincount(ON_LINE, weights=values, minlength=19) / counts, np.nan)

    on = per_line(ON_UV)
    before = per_line(ON_UV - 0.5 * ON_NORMAL)
    after = per_line(ON_UV + 0.5 * ON_NORMAL)
    # beside a line at the picture's edge may be outside it: the side inside is the quieter side then
    return on - np.fmin(before, after)
