"""Assets of the synthetic camera renderer: CJK fonts, piece sprites and the textures of the board plane.

Everything here is deterministic for the numbers it is given (a seed, a size, a style) and cached by them, so
that a video re-uses its board texture and piece sprites for every frame. Drawing is done in a *plane texture*:
the table, the board sheet, the clutter lying on the table, at `s` pixels per file spacing; the camera
(`render.py`) warps it once per pose.
"""

from __future__ import annotations

import functools
import math
import os
import subprocess
import zlib
from dataclasses import dataclass, replace

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

# Font files Debian's fonts-noto-cjk and fonts-wqy-microhei / fonts-wqy-zenhei install (scripts/setup.sh).
_KNOWN_FONT_FILES = (
    "/usr/share/fonts/opentype/noto/NotoSerifCJK-Regular.ttc",
    "/usr/share/fonts/opentype/noto/NotoSerifCJK-Bold.ttc",
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
)

# Every glyph a piece or the river may carry; a font is usable only if it has all of them.
_NEEDED = "帥帅將将仕士相象傌馬马俥車车炮砲包兵卒楚河漢汉界"


class FontsMissing(RuntimeError):
    """No CJK font is installed to draw the pieces' characters."""


@dataclass(frozen=True)
class FontFace:
    path: str
    index: int
    name: str


def _faces_from_fc_list() -> list[FontFace]:
    try:
        out = subprocess.run(
            ["fc-list", ":lang=zh", "--format", "%{file}|%{index}|%{family[0]}|%{style[0]}\n"],
            capture_output=True, text=True, timeout=20, check=False,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    faces = []
    for line in out.splitlines():
        parts = line.split("|")
        if len(parts) >= 3 and parts[1].isdigit() and "Mono" not in parts[2]:
            faces.append(FontFace(parts[0], int(parts[1]), f"{parts[2]} {parts[3] if len(parts) > 3 else ''}".strip()))
    return faces


def _covers(face: FontFace) -> bool:
    try:
        font = ImageFont.truetype(face.path, 32, index=face.index)
    except OSError:
        return False
    # A missing glyph renders as the same .notdef box for every character: compare masks of two rare glyphs.
    boxes = {bytes(font.getmask(ch)) for ch in "傌俥"}
    return len(boxes) == 2 and all(font.getbbox(ch) != (0, 0, 0, 0) for ch in _NEEDED)


@functools.lru_cache(maxsize=1)
def cjk_fonts() -> tuple[FontFace, ...]:
    """The installed CJK font faces that can draw every piece character, in a stable order."""
    faces = _faces_from_fc_list()
    if not faces:
        faces = [FontFace(p, i, f"{os.path.basename(p)}#{i}") for p in _KNOWN_FONT_FILES if os.path.exists(p)
                 for i in range(5 if "Noto" in p else 1)]
    # One face per (file, script family) is enough variety; JP/KR faces draw some hanzi in other forms, keep them.
    usable = sorted({f for f in faces if _covers(f)}, key=lambda f: (f.path, f.index))
    if not usable:
        raise FontsMissing(
            "no CJK font found to draw the pieces' characters (looked with fc-list and in "
            f"{', '.join(_KNOWN_FONT_FILES)}); install one with `bash scripts/setup.sh` "
            "(Debian packages fonts-noto-cjk and fonts-wqy-microhei)"
        )
    return tuple(usable)


@functools.lru_cache(maxsize=64)
def _font(path: str, index: int, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(path, size, index=index)


# ---------------------------------------------------------------------------------------------------------------
# Piece sprites


# The characters by FEN letter for each glyph set. Red uses 帥仕相傌俥炮兵 on traditional sets, black 將士象馬車砲卒;
# many modern sets print the simplified forms (帅 将 马 车) and some use 馬/車 for both sides or 包 for black's cannon.
GLYPH_SETS: dict[str, dict[str, str]] = {
    "traditional": {"K": "帥", "A": "仕", "B": "相", "N": "傌", "R": "俥", "C": "炮", "P": "兵",
                    "k": "將", "a": "士", "b": "象", "n": "馬", "r": "車", "c": "砲", "p": "卒"},
    "traditional2": {"K": "帥", "A": "仕", "B": "相", "N": "馬", "R": "車", "C": "炮", "P": "兵",
                     "k": "將", "a": "士", "b": "象", "n": "馬", "r": "車", "c": "包", "p": "卒"},
    "simplified": {"K": "帅", "A": "仕", "B": "相", "N": "马", "R": "车", "C": "炮", "P": "兵",
                   "k": "将", "a": "士", "b": "象", "n": "马", "r": "车", "c": "炮", "p": "卒"},
    "simplified2": {"K": "帅", "A": "仕", "B": "相", "N": "马", "R": "车", "C": "炮", "P": "兵",
                    "k": "将", "a": "士", "b": "象", "n": "马", "r": "车", "c": "砲", "p": "卒"},
}


@dataclass(frozen=True)
class PieceLook:
    """How one set of pieces looks (colours are BGR)."""

    disc: tuple[int, int, int]
    edge: tuple[int, int, int]
    red_ink: tuple[int, int, int]
    black_ink: tuple[int, int, int]
    ring_radius: float  # fraction of the disc radius
    ring_width: float  # fraction of the diameter
    double_ring: bool
    font: FontFace
    glyph_scale: float  # character height / diameter
    stroke: int  # extra ink thickness at 128 px diameter (worn or bold printing)
    grain: float  # wood grain or plastic mottling strength
    ink_alpha: float  # worn ink
    bevel: float  # darkening at the rim of the top face
    # Light-on-dark sets and diagrams: a side's disc in a dark (black, dark green, navy) or red tone with its
    # character and ring in `light_ink` (None: the light `disc` with that side's ink, as most sets are).
    red_face: tuple[int, int, int] | None = None
    black_face: tuple[int, int, int] | None = None
    light_ink: tuple[int, int, int] = (215, 230, 238)


@functools.lru_cache(maxsize=512)
def piece_sprite(look: PieceLook, glyph: str, red: bool, diameter: int) -> np.ndarray:
    """The top face of a piece, upright, as premultiplied BGRA float32 (diameter x diameter), alpha in 0..1.

    Drawn at 4x and reduced, so the edges and strokes are antialiased as a camera would blur them.
    """
    ss = 4
    d = max(8, diameter) * ss
    ink = look.red_ink if red else look.black_ink
    face = look.red_face if red else look.black_face
    if face is not None:  # a light character on a dark or red disc
        ink = look.light_ink
    rng = np.random.default_rng(zlib.crc32(f"{look.disc}{glyph}{red}".encode()))
    yy, xx = np.mgrid[0:d, 0:d].astype(np.float32)
    c = (d - 1) / 2
    r = np.hypot(xx - c, yy - c) / (d / 2)
    base = np.empty((d, d, 3), np.float32)
    base[:] = look.disc if face is None else face
    if look.grain > 0:
        # Wood: fine rings along one axis; plastic: soft mottling. Low resolution noise, upsampled.
        g = rng.normal(0, 1, (d // 16 + 2, 4)).astype(np.float32)
        g = cv2.resize(g, (d, d), interpolation=cv2.INTER_CUBIC)
        rings = np.sin(yy / d * 40 + g * 2.5)
        base *= (1 + look.grain * 0.06 * rings)[..., None]
    # Bevel: the top face curves down at its rim.
    shade = 1 - look.bevel * np.clip((r - 0.78) / 0.22, 0, 1) ** 2
    base *= shade[..., None]
    # Ink layer: ring(s) and the character, drawn with Pillow.
    ink_img = Image.new("L", (d, d), 0)
    draw = ImageDraw.Draw(ink_img)
    rr = look.ring_radius * d / 2
    w = max(1, round(look.ring_width * d))
    draw.ellipse((c - rr, c - rr, c + rr, c + rr), outline=255, width=w)
    if look.double_ring:
        rr2 = rr - 2.5 * w
        draw.ellipse((c - rr2, c - rr2, c + rr2, c + rr2), outline=255, width=max(1, w // 2))
    size = max(8, round(look.glyph_scale * d))
    font = _font(look.font.path, look.font.index, size)
    draw.text((c, c), glyph, font=font, fill=255, anchor="mm")
    mask = np.asarray(ink_img, np.float32) / 255
    if look.stroke > 0:
        k = look.stroke * 2 * ss // 4 + 1
        mask = cv2.dilate(mask, np.ones((k, k), np.uint8))
    mask *= look.ink_alpha
    col = base * (1 - mask[..., None]) + np.array(ink, np.float32) * mask[..., None]
    alpha = np.clip((1 - r) * d / 2, 0, 1)  # antialiased disc outline
    out = np.dstack([col * alpha[..., None], alpha])
    small = cv2.resize(out, (max(8, diameter), max(8, diameter)), interpolation=cv2.INTER_AREA)
    return small


@functools.lru_cache(maxsize=32)
def blank_sprite(look: PieceLook, diameter: int) -> np.ndarray:
    """The underside of a piece (a captured piece lying face down): no ink. Premultiplied BGRA float32."""
    d = max(8, diameter)
    yy, xx = np.mgrid[0:d, 0:d].astype(np.float32)
    c = (d - 1) / 2
    r = np.hypot(xx - c, yy - c) / (d / 2)
    col = np.empty((d, d, 3), np.float32)
    col[:] = look.disc
    col *= (1 - look.bevel * np.clip((r - 0.78) / 0.22, 0, 1) ** 2)[..., None]
    alpha = np.clip((1 - r) * d / 2, 0, 1)
    return np.dstack([col * alpha[..., None], alpha])


# ---------------------------------------------------------------------------------------------------------------
# The board plane: table, board sheet, clutter


@dataclass(frozen=True)
class BoardLook:
    """How the board sheet and the table look (colours BGR). Grid geometry in file spacings."""

    material: str  # wood | paper | cloth | vinyl
    base: tuple[int, int, int]
    line: tuple[int, int, int]
    line_width: float  # in file spacings
    aspect: float  # rank spacing / file spacing
    frame_gap: float  # outer frame distance from the grid, 0 = none
    frame_width: float
    double_frame: bool
    sheet_margin: float  # how far the sheet extends beyond the grid
    river_font: FontFace
    river_simplified: bool
    river_rotated: bool  # 汉界 upside down (facing Black)
    numbers: bool  # file numbers printed along both sides
    marks: str  # "corners" | "cross" | "none"
    creases: int
    texture: float
    table: str  # wood | felt | plastic | cloth_checks | cloth_stripes | glass
    table_base: tuple[int, int, int]
    table_alt: tuple[int, int, int]
    clutter: int
    seed: int
    # A sheet that does not lie flat or a print that is not true: the printed grid is displaced by a smooth field,
    # sum of (amplitude_x, amplitude_y, kx, ky, phase) waves, in file spacings. Empty for a true, flat board.
    wave: tuple[tuple[float, float, float, float, float], ...] = ()
    # In a venue the next table's board is often in the picture too: the world position of its grid's a0 point
    # (same style of board, another position), or None.
    neighbour: tuple[float, float] | None = None


# The points that carry position marks (cannon and pawn points).
MARK_POINTS = ((1, 2), (7, 2), (1, 7), (7, 7), *((f, 3) for f in (0, 2, 4, 6, 8)), *((f, 6) for f in (0, 2, 4, 6, 8)))


def sheet_displacement(look: BoardLook, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where the print of plane point (x, y) actually lies, minus (x, y): the sheet's waviness (file spacings)."""
    dx = np.zeros_like(x, dtype=np.float64)
    dy = np.zeros_like(y, dtype=np.float64)
    for ax, ay, kx, ky, ph in look.wave:
        arg = kx * x + ky * y + ph
        dx = dx + ax * np.sin(arg)
        dy = dy + ay * np.sin(arg + 1.1)
    return dx, dy


def _smooth_noise(rng: np.random.Generator, shape: tuple[int, int], cells: tuple[int, int]) -> np.ndarray:
    small = rng.normal(0, 1, (max(2, cells[0]), max(2, cells[1]))).astype(np.float32)
    return cv2.resize(small, (shape[1], shape[0]), interpolation=cv2.INTER_CUBIC)


def _material(rng: np.random.Generator, kind: str, shape: tuple[int, int], base: tuple[int, int, int],
              alt: tuple[int, int, int], strength: float, s: float) -> np.ndarray:
    h, w = shape
    img = np.empty((h, w, 3), np.float32)
    img[:] = base
    if kind == "wood":
        yy = np.arange(h, dtype=np.float32)[:, None]
        warp = _smooth_noise(rng, shape, (h // 40 + 2, w // 200 + 2)) * 6
        freq = rng.uniform(0.6, 1.6)
        grain = np.sin(yy / s * freq * 6 + warp) * 0.5 + 0.5
        fine = _smooth_noise(rng, shape, (h // 3 + 2, w // 60 + 2))
        img *= (1 - strength * (0.10 * grain + 0.03 * fine))[..., None]
        # Planks: a few slightly different tones.
        img *= (1 + strength * 0.05 * _smooth_noise(rng, shape, (3, 2)))[..., None]
    elif kind == "paper":
        img *= (1 + strength * 0.025 * _smooth_noise(rng, shape, (h // 6 + 2, w // 6 + 2)))[..., None]
        img *= (1 + strength * 0.04 * _smooth_noise(rng, shape, (5, 5)))[..., None]
    elif kind == "cloth":
        yy, xx = np.arange(h, dtype=np.float32)[:, None], np.arange(w, dtype=np.float32)[None, :]
        period = max(2.0, s / rng.uniform(14, 30))
        weave = np.sin(xx / period * math.pi) * np.sin(yy / period * math.pi)
        img *= (1 + strength * 0.04 * weave)[..., None]
        img *= (1 + strength * 0.05 * _smooth_noise(rng, shape, (8, 8)))[..., None]
    elif kind == "vinyl":
        img *= (1 + strength * 0.015 * _smooth_noise(rng, shape, (h // 4 + 2, w // 4 + 2)))[..., None]
        img *= (1 + strength * 0.03 * _smooth_noise(rng, shape, (4, 4)))[..., None]
    elif kind == "felt":
        img *= (1 + strength * 0.05 * rng.standard_normal((h, w), dtype=np.float32))[..., None]
    elif kind in ("cloth_checks", "cloth_stripes"):
        yy, xx = np.arange(h, dtype=np.float32)[:, None], np.arange(w, dtype=np.float32)[None, :]
        period = s * rng.uniform(0.7, 2.5)
        ang = rng.uniform(0, math.pi)
        u = xx * math.cos(ang) + yy * math.sin(ang)
        v = -xx * math.sin(ang) + yy * math.cos(ang)
        m = (np.floor(u / period) % 2).astype(np.float32)
        if kind == "cloth_checks":
            m = 0.5 * (m + (np.floor(v / period) % 2))
        img = img * (1 - m[..., None]) + np.array(alt, np.float32) * m[..., None]
        img *= (1 + strength * 0.04 * _smooth_noise(rng, shape, (h // 8 + 2, w // 8 + 2)))[..., None]
    elif kind == "glass":
        img = _glass(rng, shape, base, strength, s)
    else:  # plastic table
        img *= (1 + strength * 0.02 * _smooth_noise(rng, shape, (6, 6)))[..., None]
    return img


def _glass(rng: np.random.Generator, shape: tuple[int, int], base: tuple[int, int, int], strength: float,
           s: float) -> np.ndarray:
    """A glass table top: dark (the floor seen through it) with the room mirrored in it: soft bright bands of
    windows, small hard lamp spots and the straight edges of furniture, all line and edge confusers near the board."""
    h, w = shape
    img = np.empty((h, w, 3), np.float32)
    img[:] = base
    img *= (1 + strength * 0.15 * _smooth_noise(rng, shape, (4, 4)))[..., None]
    refl = np.zeros((h, w), np.float32)
    for _ in range(int(rng.integers(2, 5))):  # windows: long soft bands with straight frames across them
        c = (float(rng.uniform(0, w)), float(rng.uniform(0, h)))
        box = cv2.boxPoints((c, (float(s * rng.uniform(2, 6)), float(s * rng.uniform(6, 14))),
                             float(rng.uniform(0, 180)))).astype(np.float32)
        band = np.zeros((h, w), np.float32)
        cv2.fillConvexPoly(band, np.round(box).astype(np.int32), float(rng.uniform(50, 120)), cv2.LINE_AA)
        for k in range(1, 3):  # mullions
            p = box[0] + (box[1] - box[0]) * k / 3
            q = box[3] + (box[2] - box[3]) * k / 3
            cv2.line(band, tuple(np.int32(p)), tuple(np.int32(q)), 0.0, max(1, int(s // 12)), cv2.LINE_AA)
        refl += cv2.GaussianBlur(band, (0, 0), max(0.5, s / 20))
    for _ in range(int(rng.integers(1, 4))):  # lamps
        cv2.circle(refl, (int(rng.uniform(0, w)), int(rng.uniform(0, h))), max(2, int(s * rng.uniform(0.2, 0.5))),
                   float(rng.uniform(150, 230)), -1, cv2.LINE_AA)
    return img + (refl * strength)[..., None]


# ---------------------------------------------------------------------------------------------------------------
# Real pieces' tops, cut from photographs (../shared/data/piece_crops: CC BY 4.0, see its README)


# The piece's disc over its crop's longer side: the crops are boxes about a piece seen at an angle (side wall and
# some board in them); the median circle found in them is 0.68 of the box (bench/real_pieces_boards.py), and a
# little more keeps the ring.
CROP_DISC = 0.74
_CROP_CLASS = {"K": "king", "A": "advisor", "B": "elephant", "N": "horse", "R": "rook", "C": "cannon", "P": "pawn"}


@functools.lru_cache(maxsize=4)
def crop_files(root: str) -> dict[str, tuple[str, ...]]:
    """FEN letter -> the crop files of that side and type under `root` (a piece_crops split), sorted."""
    out: dict[str, tuple[str, ...]] = {}
    for letter, name in _CROP_CLASS.items():
        for side, key in (("red", letter), ("black", letter.lower())):
            folder = os.path.join(root, f"{side}_{name}")
            files = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
            out[key] = tuple(os.path.join(folder, f) for f in files if f.lower().endswith((".jpg", ".jpeg", ".png")))
    if not any(out.values()):
        raise FileNotFoundError(f"no piece crops under {root} (expected <colour>_<type>/ folders of images)")
    return out


@functools.lru_cache(maxsize=1024)
def crop_sprite(path: str, diameter: int) -> np.ndarray:
    """A real piece's top face cut from its photo: the disc about the crop's centre, premultiplied BGRA float32
    (diameter x diameter), upright as photographed."""
    im = cv2.imread(path, cv2.IMREAD_COLOR)
    if im is None:
        raise FileNotFoundError(f"cannot read piece crop {path}")
    h, w = im.shape[:2]
    side = CROP_DISC * max(h, w)
    d = max(8, diameter)
    k = side / d
    M = np.array([[k, 0, (w - 1) / 2 - k * (d - 1) / 2], [0, k, (h - 1) / 2 - k * (d - 1) / 2]], np.float32)
    col = cv2.warpAffine(im, M, (d, d), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                         borderMode=cv2.BORDER_REPLICATE).astype(np.float32)
    yy, xx = np.mgrid[0:d, 0:d].astype(np.float32)
    r = np.hypot(xx - (d - 1) / 2, yy - (d - 1) / 2) / (d / 2)
    alpha = np.clip((1 - r) * d / 2, 0, 1)
    return np.dstack([col * alpha[..., None], alpha])


def _text_patch(text: str, face: FontFace, px: int, color: tuple[int, int, int], rotate180: bool) -> np.ndarray:
    """BGRA float patch of a short text (alpha 0..1, not premultiplied)."""
    font = _font(face.path, face.index, max(6, px))
    x0, y0, x1, y1 = font.getbbox(text)
    im = Image.new("L", (x1 - x0 + 4, y1 - y0 + 4), 0)
    ImageDraw.Draw(im).text((2 - x0, 2 - y0), text, font=font, fill=255)
    a = np.asarray(im, np.float32) / 255
    if rotate180:
        a = a[::-1, ::-1]
    out = np.empty((*a.shape, 4), np.float32)
    out[..., :3] = color
    out[..., 3] = a
    return out


def table_plane(look: BoardLook, st: float, extent: tuple[float, float, float, float]) -> np.ndarray:
    """The table under and around the board (uint8 BGR) with the clutter on it and the sheet's drop shadow.

    `extent` (x0, y0, x1, y1) in file spacings; pixel (u, v) is at x = x0 + u / st, y = y1 - v / st."""
    return _table_plane(look, float(st), tuple(float(v) for v in extent))


@functools.lru_cache(maxsize=8)
def _table_plane(look: BoardLook, st: float, extent: tuple[float, float, float, float]) -> np.ndarray:
    rng = np.random.default_rng([look.seed, 1])
    x0, y0, x1, y1 = extent
    w, h = max(2, round((x1 - x0) * st)), max(2, round((y1 - y0) * st))
    s = st

    def px(x: float, y: float) -> tuple[float, float]:
        return ((x - x0) * st, (y1 - y) * st)

    # 8-bit while the clutter is drawn: OpenCV antialiases only 8-bit images.
    img = np.clip(_material(rng, look.table, (h, w), look.table_base, look.table_alt, 1.0, st), 0, 255).astype(np.uint8)
    a = look.aspect
    # Clutter lying on the table beside the board: score sheets (ruled, a strong line confuser), pens, a phone,
    # a cup seen from above, the clock. Kept off the sheet so the printed grid stays the grid.
    sx0, sy0 = px(-look.sheet_margin, 9 * a + look.sheet_margin)
    sx1, sy1 = px(8 + look.sheet_margin, -look.sheet_margin)
    nx0, ny0 = px(-7, 9 * a + 7)
    nx1, ny1 = px(15, -7)
    for _ in range(look.clutter):
        kind = rng.choice(["sheet", "pen", "phone", "cup", "clock", "sheet"])
        for _try in range(12):
            cx, cy = rng.uniform(nx0, nx1), rng.uniform(ny0, ny1)
            if not (sx0 - s * 1.2 < cx < sx1 + s * 1.2 and sy0 - s * 1.2 < cy < sy1 + s * 1.2):
                break
        else:
            continue
        ang = rng.uniform(0, 180)
        if kind == "sheet":
            sw, sh = s * rng.uniform(2.5, 4.0), s * rng.uniform(3.5, 5.5)
            box = cv2.boxPoints(((cx, cy), (sw, sh), ang)).astype(np.int32)
            cv2.fillConvexPoly(img, box, (238, 242, 244), cv2.LINE_AA)
            # ruled lines
            M = cv2.getRotationMatrix2D((0, 0), -ang, 1)[:, :2]
            for k in range(int(sh / (s * 0.35))):
                yk = -sh / 2 + (k + 1) * s * 0.35
                p1 = M @ np.array([-sw / 2 + 4, yk]) + (cx, cy)
                p2 = M @ np.array([sw / 2 - 4, yk]) + (cx, cy)
                cv2.line(img, tuple(np.int32(p1)), tuple(np.int32(p2)), (150, 120, 110), max(1, s // 40), cv2.LINE_AA)
        elif kind == "pen":
            box = cv2.boxPoints(((cx, cy), (s * 2.2, s * 0.15), ang)).astype(np.int32)
            cv2.fillConvexPoly(img, box, tuple(float(v) for v in rng.integers(0, 200, 3)), cv2.LINE_AA)
        elif kind == "phone":
            box = cv2.boxPoints(((cx, cy), (s * 1.4, s * 2.9), ang)).astype(np.int32)
            cv2.fillConvexPoly(img, box, (25, 25, 28), cv2.LINE_AA)
        elif kind == "cup":
            rad = int(s * rng.uniform(0.6, 0.9))
            cv2.circle(img, (int(cx), int(cy)), rad, tuple(float(v) for v in rng.integers(60, 250, 3)), -1,
                       cv2.LINE_AA)
            cv2.circle(img, (int(cx), int(cy)), int(rad * 0.82), (40, 60, 90), -1, cv2.LINE_AA)
        else:  # the clock
            box = cv2.boxPoints(((cx, cy), (s * 3.2, s * 1.6), ang)).astype(np.int32)
            cv2.fillConvexPoly(img, box, (40, 40, 45), cv2.LINE_AA)
            M = cv2.getRotationMatrix2D((0, 0), -ang, 1)[:, :2]
            for dx in (-0.8, 0.8):
                p = M @ np.array([dx * s, 0]) + (cx, cy)
                cv2.rectangle(img, tuple(np.int32(p - s * 0.35)), tuple(np.int32(p + s * 0.3)), (70, 160, 80), -1)
    img = img.astype(np.float32)
    # The sheet's drop shadow on the table (and the neighbouring board's, with the board itself).
    X0, Y0, X1, Y1 = round(sx0), round(sy0), round(sx1), round(sy1)
    sh = np.zeros((h, w), np.float32)
    off = max(1, round(s / 12))
    cv2.rectangle(sh, (X0 + off, Y0 + off), (X1 + off, Y1 + off), 1.0, -1)
    if look.neighbour is not None:
        ox, oy = look.neighbour
        m = look.sheet_margin
        nb = replace(look, seed=look.seed + 7919, wave=(), neighbour=None, creases=min(look.creases, 1))
        tex = _sheet_plane(nb, max(8, round(st)))
        tex = cv2.resize(tex, (max(1, round((8 + 2 * m) * st)), max(1, round((9 * a + 2 * m) * st))),
                         interpolation=cv2.INTER_AREA)
        tx, ty = (round(v) for v in px(ox - m, oy + 9 * a + m))
        th, tw = tex.shape[:2]
        a0, b0 = max(0, tx), max(0, ty)
        a1, b1 = min(w, tx + tw), min(h, ty + th)
        if a1 > a0 and b1 > b0:
            img[b0:b1, a0:a1] = tex[b0 - ty:b1 - ty, a0 - tx:a1 - tx]
            cv2.rectangle(sh, (tx + off, ty + off), (tx + tw + off, ty + th + off), 1.0, -1)
            cv2.rectangle(sh, (tx, ty), (tx + tw, ty + th), 0.0, -1)
    sh = cv2.GaussianBlur(sh, (0, 0), max(0.5, s / 10))
    img *= (1 - 0.35 * sh)[..., None]
    return np.clip(img, 0, 255).astype(np.uint8)


def sheet_plane(look: BoardLook, s: int) -> np.ndarray:
    """The board sheet (uint8 BGR) with its printed grid: x from -m to 8 + m, y from -m to 9 * aspect + m
    (m = look.sheet_margin); pixel (u, v) is at x = -m + u / s, y = 9 * aspect + m - v / s."""
    return _sheet_plane(look, int(s))


@functools.lru_cache(maxsize=8)
def _sheet_plane(look: BoardLook, s: int) -> np.ndarray:
    rng = np.random.default_rng([look.seed, 2])
    a = look.aspect
    m = look.sheet_margin
    x0, y1 = -m, 9 * a + m
    w, h = round((8 + 2 * m) * s), round((9 * a + 2 * m) * s)

    def px(x: float, y: float) -> tuple[float, float]:
        return ((x - x0) * s, (y1 - y) * s)

    img = _material(rng, look.material, (h, w), look.base, look.base, look.texture, s)
    X0, Y0, X1, Y1 = 0, 0, w, h
    # Creases: folds of paper, cloth and vinyl sheets; a bright ridge next to a dark valley, smoothly varying.
    for k in range(look.creases):
        if k < 2 and rng.random() < 0.7:
            # folded in half or in quarters: along the river or the middle file
            if k == 0:
                p1, p2 = px(-look.sheet_margin, 4.5 * a), px(8 + look.sheet_margin, 4.5 * a)
            else:
                p1, p2 = px(4, -look.sheet_margin), px(4, 9 * a + look.sheet_margin)
            p1 = (p1[0] + rng.normal(0, s * 0.05), p1[1] + rng.normal(0, s * 0.05))
            p2 = (p2[0] + rng.normal(0, s * 0.05), p2[1] + rng.normal(0, s * 0.05))
        else:
            p1 = (rng.uniform(X0, X1), rng.uniform(Y0, Y1))
            ang = rng.uniform(0, math.pi)
            ln = s * rng.uniform(1.5, 6)
            p2 = (p1[0] + ln * math.cos(ang), p1[1] + ln * math.sin(ang))
        cm = np.zeros((Y1 - Y0, X1 - X0), np.float32)
        q1 = (int(p1[0] - X0), int(p1[1] - Y0))
        q2 = (int(p2[0] - X0), int(p2[1] - Y0))
        cv2.line(cm, q1, q2, 1.0, max(1, s // 25), cv2.LINE_AA)
        dark = cv2.GaussianBlur(cm, (0, 0), s / 30)
        n = np.array([q2[1] - q1[1], q1[0] - q2[0]], np.float32)
        n = n / (np.linalg.norm(n) + 1e-6) * max(1.0, s / 25)
        bright = cv2.warpAffine(dark, np.float32([[1, 0, n[0]], [0, 1, n[1]]]), (X1 - X0, Y1 - Y0))
        depth = rng.uniform(0.08, 0.22) * look.texture
        img[Y0:Y1, X0:X1] *= (1 - depth * dark + 0.6 * depth * bright)[..., None]
    # The printed grid.
    lw = max(1.2, look.line_width * s)
    col = tuple(float(v) for v in look.line)
    # Drawn as a mask, then inked with a slightly uneven print. 8-bit, because OpenCV antialiases (and so places
    # lines to a fraction of a pixel) only in 8-bit images.
    ink8 = np.zeros((h, w), np.uint8)

    def line(p: tuple[float, float], q: tuple[float, float], width: float = lw) -> None:
        # A filled rectangle with square caps, centred exactly on the segment (cv2.line of an even thickness is
        # half a pixel off, and the truth must be exact).
        pa, pb = np.array(p, float), np.array(q, float)
        d = pb - pa
        d /= np.linalg.norm(d) + 1e-12
        n = np.array([-d[1], d[0]]) * width / 2
        e = d * width / 2
        poly = np.array([pa - e + n, pb + e + n, pb + e - n, pa - e - n])
        cv2.fillConvexPoly(ink8, np.round(poly * 16).astype(np.int32), 255, cv2.LINE_AA, 4)

    for r in range(10):
        line(px(0, r * a), px(8, r * a))
    for f in range(9):
        if f in (0, 8):
            line(px(f, 0), px(f, 9 * a))
        else:
            line(px(f, 0), px(f, 4 * a))
            line(px(f, 5 * a), px(f, 9 * a))
    for r0 in (0, 7):  # the palaces' diagonals
        line(px(3, r0 * a), px(5, (r0 + 2) * a))
        line(px(5, r0 * a), px(3, (r0 + 2) * a))
    if look.frame_gap > 0:
        g = look.frame_gap
        fw = max(lw + 1, look.frame_width * s)
        corners = [px(-g, -g), px(8 + g, -g), px(8 + g, 9 * a + g), px(-g, 9 * a + g)]
        for i in range(4):
            line(corners[i], corners[(i + 1) % 4], fw)
        if look.double_frame:
            g2 = g + look.frame_width * 2.5
            corners = [px(-g2, -g2), px(8 + g2, -g2), px(8 + g2, 9 * a + g2), px(-g2, 9 * a + g2)]
            for i in range(4):
                line(corners[i], corners[(i + 1) % 4], lw)
    if look.marks != "none":
        gap, arm = 0.09, 0.2
        for f, r in MARK_POINTS:
            for dx in (-1, 1):
                if not 0 <= f + dx * 0.5 <= 8:
                    continue
                for dy in (-1, 1):
                    cx, cy = f + dx * gap, r * a + dy * gap
                    if look.marks == "corners":
                        line(px(cx, cy), px(cx + dx * arm, cy))
                        line(px(cx, cy), px(cx, cy + dy * arm))
                    else:  # small crosses in the four quadrants
                        mx, my = f + dx * (gap + arm / 2), r * a + dy * (gap + arm / 2)
                        line(px(mx - arm / 3, my), px(mx + arm / 3, my))
                        line(px(mx, my - arm / 3), px(mx, my + arm / 3))
    ink = ink8.astype(np.float32) / 255
    # River text 楚河 汉界 (traditional 漢界), read by Red; on many boards 汉界 faces Black.
    th = round(0.62 * s * min(a, 1.1))
    left = _text_patch("楚 河", look.river_font, th, col, False)
    right = _text_patch("汉 界" if look.river_simplified else "漢 界", look.river_font, th, col, look.river_rotated)
    for patch, fx in ((left, 2.0), (right, 6.0)):
        cx, cy = px(fx, 4.5 * a)
        hh, ww = patch.shape[:2]
        xa, ya = round(cx - ww / 2), round(cy - hh / 2)
        ink[ya:ya + hh, xa:xa + ww] = np.maximum(ink[ya:ya + hh, xa:xa + ww], patch[..., 3])
    if look.numbers:
        nh = round(0.32 * s)
        chinese = "九八七六五四三二一"
        for f in range(9):
            for patch, y in ((_text_patch(chinese[f], look.river_font, nh, col, False), -0.45 - look.frame_gap),
                             (_text_patch(str(f + 1), look.river_font, nh, col, True), 9 * a + 0.45 + look.frame_gap)):
                cx, cy = px(f, y)
                hh, ww = patch.shape[:2]
                xa, ya = round(cx - ww / 2), round(cy - hh / 2)
                if xa >= 0 and ya >= 0 and xa + ww <= w and ya + hh <= h:
                    ink[ya:ya + hh, xa:xa + ww] = np.maximum(ink[ya:ya + hh, xa:xa + ww], patch[..., 3])
    # Uneven print: ink density varies a little over the sheet.
    ink *= np.clip(1 - 0.15 * look.texture * np.abs(_smooth_noise(rng, (h, w), (6, 6))), 0.6, 1)[:, :]
    img = img * (1 - ink[..., None]) + np.array(col, np.float32) * ink[..., None]
    if look.wave:
        # Move the print by the displacement field: the texture at p shows what was drawn at p - D(p) (D is
        # small and smooth, so this inverts it to well under a hundredth of a spacing).
        u = np.arange(w, dtype=np.float64)[None, :]
        v = np.arange(h, dtype=np.float64)[:, None]
        x, y = x0 + u / s + 0 * v, y1 - v / s + 0 * u
        dx, dy = sheet_displacement(look, x, y)
        dx2, dy2 = sheet_displacement(look, x - dx, y - dy)
        mapx = ((x - dx2 - x0) * s).astype(np.float32)
        mapy = ((y1 - (y - dy2)) * s).astype(np.float32)
        img = cv2.remap(img, mapx, mapy, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    return np.clip(img, 0, 255).astype(np.uint8)
