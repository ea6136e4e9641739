"""A small, independent board drawer for the detector's tests (the renderer proper is `xqarb.vision.render`).

Deliberately different from the renderer so that the detector is not tuned to one drawing: OpenCV lines,
PIL characters, a perspective camera from a tilt/rotation, clutter, captured pieces beside the board, glare.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from xqarb.vision.grid import CORNERS_UV, POINTS_UV, apply_h

GLYPHS = {
    "K": "帅", "A": "仕", "B": "相", "N": "马", "R": "车", "C": "炮", "P": "兵",
    "k": "将", "a": "士", "b": "象", "n": "马", "r": "车", "c": "炮", "p": "卒",
}
START_SQUARES = (
    "rnbakabnr" "........." ".c.....c." "p.p.p.p.p" "........." "........." "P.P.P.P.P" ".C.....C." "........."
    "RNBAKABNR"
)
FONT_PATHS = (
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
    "/usr/share/fonts/opentype/noto/NotoSerifCJK-Bold.ttc",
)


@dataclass(frozen=True)
class Drawn:
    image: np.ndarray
    corners: np.ndarray  # 4 x 2, a9 i9 i0 a0
    points: np.ndarray  # 90 x 2
    h_board_to_img: np.ndarray


def _font(size: int, i: int) -> ImageFont.FreeTypeFont:
    for k in range(len(FONT_PATHS)):
        p = FONT_PATHS[(i + k) % len(FONT_PATHS)]
        if Path(p).exists():
            return ImageFont.truetype(p, size)
    return ImageFont.load_default()


def camera(rng: np.random.Generator, size: tuple[int, int], tilt_deg: float, rotate_deg: float, fill: float,
           short_side: bool = False) -> np.ndarray:
    """Board plane -> image homography of a pinhole camera tilted by `tilt_deg` and rolled by `rotate_deg`."""
    w, h = size
    # 3D board points centred at the origin, in spacings; a camera on a short side sees the board turned by 90.
    f = 1.0
    t = np.deg2rad(tilt_deg)
    r = np.deg2rad(rotate_deg + (90.0 if short_side else 0.0))
    rz = np.array([[np.cos(r), -np.sin(r), 0], [np.sin(r), np.cos(r), 0], [0, 0, 1]])
    rx = np.array([[1, 0, 0], [0, np.cos(t), -np.sin(t)], [0, np.sin(t), np.cos(t)]])
    dist = 14.0
    rot = rx @ rz
    # board (u, v) -> world (u - 4, v - 4.5, 0) -> camera rot @ X + (0, 0, dist)
    m = np.array([[1, 0, -4.0], [0, 1, -4.5], [0, 0, 1]])
    p = np.column_stack([rot[:, 0], rot[:, 1], np.array([0, 0, dist])])
    hb = np.diag([f, f, 1.0]) @ p @ m
    corners = apply_h(hb, np.array([[-1.0, -1.0], [9.0, -1.0], [9.0, 10.0], [-1.0, 10.0]]))
    span = corners.max(0) - corners.min(0)
    s = fill * min(w / span[0], h / span[1])
    c = (corners.max(0) + corners.min(0)) / 2
    jitter = rng.uniform(-0.05, 0.05, 2) * np.array([w, h])
    k = np.array([[s, 0, w / 2 - s * c[0] + jitter[0]], [0, s, h / 2 - s * c[1] + jitter[1]], [0, 0, 1]])
    return k @ hb


def draw_board(squares: str, *, seed: int = 0, size: tuple[int, int] = (1280, 720), tilt: float = 20.0,
               rotate: float = 5.0, fill: float = 0.85, line_colour: tuple[int, int, int] = (40, 40, 40),
               board_colour: tuple[int, int, int] = (150, 200, 225), short_side: bool = False,
               offsets: dict[int, tuple[float, float]] | None = None, glare: bool = True, clutter: bool = True,
               markers: bool = False, h_board_to_img: np.ndarray | None = None) -> Drawn:
    rng = np.random.default_rng(seed)
    s = 64  # canonical pixels per spacing
    margin = 1.0
    cw, ch = round((8 + 2 * margin) * s), round((9 + 2 * margin) * s)
    board = np.zeros((ch, cw, 3), np.uint8)
    board[:] = board_colour
    noise = rng.normal(0, 6, (ch // 8 + 1, cw // 8 + 1, 1))
    board = np.clip(board + cv2.resize(noise, (cw, ch))[..., None], 0, 255).astype(np.uint8)

    def c(u: float, v: float) -> tuple[int, int]:
        return round((u + margin) * s), round((v + margin) * s)

    lw = 2
    for v in range(10):
        cv2.line(board, c(0, v), c(8, v), line_colour, lw, cv2.LINE_AA)
    for u in range(9):
        if u in (0, 8):
            cv2.line(board, c(u, 0), c(u, 9), line_colour, lw, cv2.LINE_AA)
        else:
            cv2.line(board, c(u, 0), c(u, 4), line_colour, lw, cv2.LINE_AA)
            cv2.line(board, c(u, 5), c(u, 9), line_colour, lw, cv2.LINE_AA)
    for v0 in (0, 7):
        cv2.line(board, c(3, v0), c(5, v0 + 2), line_colour, lw, cv2.LINE_AA)
        cv2.line(board, c(5, v0), c(3, v0 + 2), line_colour, lw, cv2.LINE_AA)
    # outer frame, as many boards have
    cv2.rectangle(board, c(-0.25, -0.25), c(8.25, 9.25), line_colour, 3, cv2.LINE_AA)
    pil = Image.fromarray(cv2.cvtColor(board, cv2.COLOR_BGR2RGB))
    draw = ImageDraw.Draw(pil)
    river_font = _font(int(0.55 * s), seed)
    rc = tuple(int(x) for x in line_colour[::-1])
    draw.text(c(2.0, 4.5), "楚 河", font=river_font, fill=rc, anchor="mm")
    draw.text(c(6.0, 4.5), "汉 界", font=river_font, fill=rc, anchor="mm")
    board = cv2.cvtColor(np.array(pil), cv2.COLOR_RGB2BGR)

    if h_board_to_img is None:
        h_board_to_img = camera(rng, size, tilt, rotate, fill, short_side)
    to_canon = np.array([[s, 0, margin * s], [0, s, margin * s], [0, 0, 1.0]])
    h_canon_to_img = h_board_to_img @ np.linalg.inv(to_canon)
    w, h = size
    bg = np.zeros((h, w, 3), np.uint8)
    bg[:] = rng.integers(40, 120, 3)
    bg = np.clip(bg + rng.normal(0, 8, bg.shape), 0, 255).astype(np.uint8)
    if clutter:
        for _ in range(12):
            col = tuple(int(x) for x in rng.integers(0, 255, 3))
            x, y = int(rng.integers(0, w)), int(rng.integers(0, h))
            if rng.random() < 0.5:
                cv2.rectangle(bg, (x, y), (x + int(rng.integers(20, 200)), y + int(rng.integers(5, 60))), col, -1)
            else:
                cv2.line(bg, (x, y), (x + int(rng.integers(-300, 300)), y + int(rng.integers(-300, 300))), col, 3)
    warped = cv2.warpPerspective(board, h_canon_to_img, (w, h), flags=cv2.INTER_LINEAR)
    mask = cv2.warpPerspective(np.full((ch, cw), 255, np.uint8), h_canon_to_img, (w, h))
    img = np.where(mask[..., None] > 127, warped, bg)

    # pieces, drawn in image space as ellipses at the projected points (flat discs)
    offsets = offsets or {}
    radius = 0.44
    pil = Image.fromarray(cv2.cvtColor(img, cv2.COLOR_BGR2RGB))
    draw = ImageDraw.Draw(pil)
    font_i = int(rng.integers(0, 3))
    face = tuple(int(x) for x in rng.integers(200, 240, 3))
    items = [(i, ch_) for i, ch_ in enumerate(squares) if ch_ != "."]
    for i, letter in items:
        du, dv = offsets.get(i, (0.0, 0.0))
        u, v = POINTS_UV[i] + (du, dv)
        ring = apply_h(h_board_to_img, np.array([[u + radius * np.cos(a), v + radius * np.sin(a)]
                                                 for a in np.linspace(0, 2 * np.pi, 40)]))
        centre = apply_h(h_board_to_img, np.array([[u, v]]))[0]
        draw.polygon([tuple(p) for p in ring], fill=(face[2], face[1], face[0]), outline=(90, 80, 60))
        ink = (200, 30, 30) if letter.isupper() else (25, 25, 25)
        inner = apply_h(h_board_to_img, np.array([[u + 0.36 * np.cos(a), v + 0.36 * np.sin(a)]
                                                  for a in np.linspace(0, 2 * np.pi, 40)]))
        draw.line([tuple(p) for p in inner] + [tuple(inner[0])], fill=ink, width=2)
        rad_px = float(np.linalg.norm(ring[0] - centre))
        font = _font(max(8, int(rad_px * 1.1)), font_i)
        draw.text(tuple(centre), GLYPHS.get(letter, "兵"), font=font, fill=ink, anchor="mm")
    # captured pieces beside the board
    for k in range(4):
        p = apply_h(h_board_to_img, np.array([[9.6 + 0.2 * k, 1.0 + 1.1 * k]]))[0]
        r = 0.4 * np.linalg.norm(apply_h(h_board_to_img, np.array([[1.0, 1.0]]))[0]
                                 - apply_h(h_board_to_img, np.array([[0.0, 1.0]]))[0])
        draw.ellipse([p[0] - r, p[1] - r, p[0] + r, p[1] + r], fill=(face[2], face[1], face[0]))
        draw.text(tuple(p), "卒", font=_font(max(8, int(r * 1.1)), 0), fill=(25, 25, 25), anchor="mm")
    img = cv2.cvtColor(np.array(pil), cv2.COLOR_RGB2BGR)
    if markers:
        img = _draw_markers(img, h_board_to_img)
    if glare:
        gx, gy = rng.integers(0, w), rng.integers(0, h)
        yy, xx = np.mgrid[0:h, 0:w]
        g = np.exp(-((xx - gx) ** 2 + (yy - gy) ** 2) / (2 * (0.12 * w) ** 2)) * 70
        shade = 0.75 + 0.35 * (xx / w)
        img = np.clip(img * shade[..., None] + g[..., None], 0, 255).astype(np.uint8)
    img = np.clip(img + rng.normal(0, 4, img.shape), 0, 255).astype(np.uint8)
    corners = apply_h(h_board_to_img, CORNERS_UV)
    points = apply_h(h_board_to_img, POINTS_UV)
    return Drawn(img, corners, points, h_board_to_img)


def _draw_markers(img: np.ndarray, hb: np.ndarray) -> np.ndarray:
    """ArUco DICT_4X4_50 ids 0..3 centred one spacing diagonally outside a9, i9, i0, a0."""
    d = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    out = img.copy()
    centres = [(-1.0, -1.0), (9.0, -1.0), (9.0, 10.0), (-1.0, 10.0)]
    for mid, (cu, cv_) in enumerate(centres):
        m = cv2.aruco.generateImageMarker(d, mid, 120, borderBits=1)
        m = cv2.copyMakeBorder(m, 20, 20, 20, 20, cv2.BORDER_CONSTANT, value=255)
        m = cv2.cvtColor(m, cv2.COLOR_GRAY2BGR)
        half = 0.4 * 160 / 120
        src = np.float32([[0, 0], [160, 0], [160, 160], [0, 160]])
        dst = apply_h(hb, np.array([[cu - half, cv_ - half], [cu + half, cv_ - half], [cu + half, cv_ + half],
                                    [cu - half, cv_ + half]])).astype(np.float32)
        hm = cv2.getPerspectiveTransform(src, dst)
        w = cv2.warpPerspective(m, hm, (out.shape[1], out.shape[0]))
        mask = cv2.warpPerspective(np.full((160, 160), 255, np.uint8), hm, (out.shape[1], out.shape[0]))
        out = np.where(mask[..., None] > 127, w, out)
    return out
