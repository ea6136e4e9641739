"""Synthetic camera video of Xiangqi boards, for tests, benchmarks and the demo.

A `Scene` (from `random_scene(seed)`) fixes everything about one camera and one board: the board sheet and table,
the piece set and its font, the camera pose, the light, the noise. `render_position` draws one frame of a position
with its exact truth (the image coordinates of the 90 points and the 4 corners); `render_game` plays a real game
on it as a video with hands, lifts, placements (some off the point, some half-way between two points, 5.10),
captured pieces put beside the board, nudges and still periods.

Geometry: the board plane is z = 0 with x along the files (a = 0 .. i = 8, unit = one file spacing) and y along
the ranks (rank r at y = r * aspect); pieces are cylinders standing on it. A pinhole camera projects the plane
with one homography per height, so the flat board is warped once per pose (cv2.warpPerspective) and each piece's
top face is warped from a cached sprite at its own height (raised, so it shows parallax like a real piece).
Pure: every function takes values and returns values; caches are keyed by those values.
"""

from __future__ import annotations

import functools
import math
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import cv2
import numpy as np

from xqarb.vision.render_assets import (
    GLYPH_SETS,
    BoardLook,
    PieceLook,
    blank_sprite,
    cjk_fonts,
    piece_sprite,
    sheet_plane,
    table_plane,
)

FILES = "abcdefghi"
DIFFICULTIES = ("plain", "easy", "hard")


class RenderError(ValueError):
    """A request the renderer cannot draw (bad squares string, unknown point, bad difficulty)."""


def point_name(index: int) -> str:
    """ICCS name of a squares index (rank 9 first, files a..i within a rank)."""
    return f"{FILES[index % 9]}{9 - index // 9}"


def point_index(name: str) -> int:
    if len(name) != 2 or name[0] not in FILES or not name[1].isdigit():
        raise RenderError(f"not an ICCS point: {name!r}")
    return (9 - int(name[1])) * 9 + FILES.index(name[0])


# ---------------------------------------------------------------------------------------------------------------
# The scene


@dataclass(frozen=True)
class Camera:
    width: int
    height: int
    tilt_deg: float  # angle of the optical axis from straight down
    azimuth_deg: float  # where the camera stands: 0 Red's side, 180 Black's side, 90 / 270 the short sides
    roll_deg: float
    distance: float  # from the look-at point, in file spacings (a real spacing is about 5 cm)
    fill: float  # fraction of the image the board sheet spans (the tighter dimension)
    shift: tuple[float, float]  # where in the free image space the board sits, -1..1 per axis
    look_offset: tuple[float, float]  # look-at point off the board centre, in file spacings


@dataclass(frozen=True)
class Lighting:
    gradient: tuple[float, float, float]  # direction (rad) and strength of a linear light falloff, vignette
    cast: tuple[float, float, float]  # per-channel gain (B, G, R): daylight blue, tungsten orange
    exposure: float
    glare: tuple[tuple[float, float, float, float, float], ...]  # (x, y, rx, ry in image fractions, strength)
    shadows: tuple[tuple[float, float, float, float, float], ...]  # large soft shadows (x, y, rx, ry, depth)
    light_azimuth: float  # direction the light comes from, for the pieces' shadows (rad, plane frame)
    light_elevation: float  # rad above the table
    shadow_strength: float


@dataclass(frozen=True)
class Scene:
    seed: int
    difficulty: str
    camera: Camera
    board: BoardLook
    pieces: PieceLook
    glyphs: str  # key of GLYPH_SETS
    piece_diameter: float  # in file spacings
    piece_height: float  # in file spacings
    orientation: str  # "owner": each side's characters face their player; "red": all face Red; "random"
    rotation_jitter_deg: float
    position_jitter: float  # how far pieces stand off their points when set down carefully (file spacings)
    light: Lighting
    noise: float  # sensor noise sigma (grey levels)
    blur: float  # defocus sigma (pixels)
    jpeg_quality: int
    skin: tuple[tuple[int, int, int], tuple[int, int, int]]  # Red's player's, Black's player's (BGR)
    sleeve: tuple[tuple[int, int, int], tuple[int, int, int]]
    drift: float  # how much the light drifts over a video
    face_down_rate: float  # share of captured pieces lying face down beside the board


def _tone(rng: np.random.Generator, *choices: tuple[int, int, int], lo: float = 0.9, hi: float = 1.05,
          jitter: float = 6.0) -> tuple[int, int, int]:
    """One of the base colours (BGR), a little brighter or darker and off-tone, as real materials vary."""
    base = np.array(choices[int(rng.integers(len(choices)))], float)
    col = base * rng.uniform(lo, hi) + rng.normal(0, jitter, 3)
    return tuple(int(v) for v in np.clip(col, 0, 255))  # type: ignore[return-value]


def random_scene(seed: int, *, difficulty: str = "hard") -> Scene:
    """A scene drawn from the range of real venues for `difficulty` ("plain": overhead, even light, clean board;
    "easy": mild angles and light; "hard": everything real photos show, and a bit more)."""
    if difficulty not in DIFFICULTIES:
        raise RenderError(f"difficulty must be one of {DIFFICULTIES}, not {difficulty!r}")
    rng = np.random.default_rng([seed, DIFFICULTIES.index(difficulty), 0x58510])
    hard, plain = difficulty == "hard", difficulty == "plain"
    fonts = cjk_fonts()
    font = fonts[int(rng.integers(len(fonts)))]
    river_font = fonts[int(rng.integers(len(fonts)))]

    # Camera: phones and fixed cameras, 1280x720 to 1706x1280, up to ~35 degrees from straight above.
    if plain:
        width, height = 1280, 720
    else:
        width, height = [(1280, 720), (1280, 720), (1280, 720), (1706, 1280), (1280, 960), (1600, 1200)][
            int(rng.integers(6))] if hard else (1280, 720)
    if plain:
        cam = Camera(width, height, 0.0, 0.0, 0.0, 30.0, 0.86, (0.0, 0.0), (0.0, 0.0))
    else:
        side = float(rng.choice([0, 180, 90, 270], p=[0.4, 0.2, 0.2, 0.2]))
        tilt = float(rng.uniform(0, 36) if hard else rng.uniform(0, 18))
        cam = Camera(
            width, height, tilt, side + float(rng.normal(0, 6 if hard else 2)),
            float(rng.normal(0, 3 if hard else 1)),
            float(rng.uniform(14, 40) if hard else rng.uniform(22, 40)),
            float(rng.uniform(0.62, 0.95) if hard else rng.uniform(0.75, 0.92)),
            (float(rng.uniform(-1, 1)), float(rng.uniform(-1, 1))) if hard else (0.0, 0.0),
            (float(rng.normal(0, 0.4)), float(rng.normal(0, 0.4))),
        )

    # Board sheet: paper, cloth or vinyl as often as wood; red or dark lines.
    material = "paper" if plain else str(rng.choice(["wood", "paper", "cloth", "vinyl"]))
    base = {
        "wood": _tone(rng, (110, 170, 215), (90, 150, 200), (140, 195, 230), (70, 130, 190)),
        "paper": _tone(rng, (235, 242, 245), (200, 225, 235), (225, 238, 242), lo=0.88, hi=1.04),
        "cloth": _tone(rng, (215, 235, 245), (180, 220, 235), (235, 240, 240), lo=0.85),
        "vinyl": _tone(rng, (200, 235, 245), (225, 240, 245), (170, 215, 180), (230, 215, 190), (120, 220, 240)),
    }[material]
    line = (_tone(rng, (40, 40, 180), (50, 50, 150), (30, 30, 200), lo=0.7, hi=1.1) if rng.random() < 0.45
            else _tone(rng, (30, 30, 30), (50, 50, 50), (30, 60, 100), (60, 50, 30), lo=0.5, hi=1.2))
    if plain:
        line = (30, 30, 30)
    table = "plastic" if plain else str(rng.choice(["wood", "felt", "plastic", "cloth_checks", "cloth_stripes"],
                                                   p=[0.3, 0.15, 0.25, 0.15, 0.15]))
    board = BoardLook(
        material=material, base=base, line=line,
        line_width=float(rng.uniform(0.018, 0.045)), aspect=1.0 if plain else float(rng.uniform(0.98, 1.12)),
        frame_gap=float(rng.choice([0.0, 0.2, 0.3, 0.45])) if not plain else 0.3,
        frame_width=float(rng.uniform(0.04, 0.09)), double_frame=bool(rng.random() < 0.25),
        sheet_margin=float(rng.uniform(0.7, 1.4)), river_font=river_font,
        river_simplified=bool(rng.random() < 0.5), river_rotated=bool(rng.random() < 0.4),
        numbers=bool(rng.random() < (0.0 if plain else 0.35)),
        marks="corners" if plain else str(rng.choice(["corners", "corners", "cross", "none"])),
        creases=0 if plain else int(rng.integers(0, 6 if hard else 2)),
        texture=0.3 if plain else float(rng.uniform(0.5, 1.5 if hard else 1.0)),
        table=table,
        table_base=(128, 128, 128) if plain else _tone(
            rng, (120, 120, 120), (215, 215, 215), (35, 35, 40), (120, 70, 40), (40, 40, 150), (60, 90, 120),
            lo=0.6, hi=1.15),
        table_alt=_tone(rng, (230, 230, 230), (40, 40, 40), (60, 140, 60), (150, 150, 150)),
        clutter=0 if plain else int(rng.integers(0, 7 if hard else 3)),
        seed=int(rng.integers(2**31)),
    )
    if table == "felt":
        board = replace(board, table_base=_tone(rng, (50, 110, 40), (90, 60, 30), (40, 40, 110), lo=0.7, hi=1.2))
    elif table == "wood":
        board = replace(board, table_base=_tone(rng, (40, 70, 110), (60, 100, 150), (30, 45, 70), lo=0.7, hi=1.2))

    # Pieces: light wood or plastic discs; the only colour cue is the ink (and a ring).
    disc_kind = int(rng.integers(4))
    disc = [_tone(rng, (205, 230, 240)),  # ivory plastic
            _tone(rng, (140, 185, 220), (120, 170, 215)),  # light wood
            _tone(rng, (238, 240, 240), lo=0.92, hi=1.02, jitter=3),  # white plastic
            _tone(rng, (160, 215, 230))][disc_kind]  # yellowish
    red_ink = _tone(rng, (40, 35, 190), (50, 50, 160), (30, 20, 210), lo=0.8, hi=1.1)
    black_ink = [_tone(rng, (30, 30, 30), lo=0.5, hi=1.6), _tone(rng, (60, 80, 20)),
                 _tone(rng, (90, 45, 20))][int(rng.choice(3, p=[0.7, 0.2, 0.1]))]
    pieces = PieceLook(
        disc=disc, edge=tuple(int(v * rng.uniform(0.7, 0.88)) for v in disc),  # type: ignore[arg-type]
        red_ink=red_ink, black_ink=black_ink,
        ring_radius=float(rng.uniform(0.78, 0.9)), ring_width=float(rng.uniform(0.025, 0.06)),
        double_ring=bool(rng.random() < 0.2), font=font, glyph_scale=float(rng.uniform(0.5, 0.68)),
        stroke=int(rng.integers(0, 3)), grain=float(rng.uniform(0.3, 1.0)) if disc_kind == 1 else 0.0,
        ink_alpha=1.0 if plain else float(rng.uniform(0.7 if hard else 0.85, 1.0)),
        bevel=float(rng.uniform(0.1, 0.35)),
    )
    glyphs = "traditional" if plain else str(rng.choice(list(GLYPH_SETS)))

    # Light: indoor lamps give gradients and glare, daylight a blue cast, tungsten an orange one.
    if plain:
        light = Lighting((0.0, 0.0, 0.0), (1.0, 1.0, 1.0), 1.0, (), (), 0.8, 1.1, 0.3)
    else:
        k = 1.0 if hard else 0.4
        cast_kind = rng.choice(["neutral", "daylight", "tungsten", "fluorescent"])
        cast = {"neutral": (1.0, 1.0, 1.0), "daylight": (1.08, 1.0, 0.93), "tungsten": (0.8, 0.95, 1.1),
                "fluorescent": (1.0, 1.05, 0.95)}[str(cast_kind)]
        cast = tuple(float(c * rng.uniform(0.97, 1.03)) for c in cast)
        glare = tuple(
            (float(rng.uniform(0.1, 0.9)), float(rng.uniform(0.1, 0.9)), float(rng.uniform(0.03, 0.15)),
             float(rng.uniform(0.03, 0.12)), float(rng.uniform(40, 160) * k))
            for _ in range(int(rng.integers(0, 3 if hard else 2))))
        shadows = tuple(
            (float(rng.uniform(-0.2, 1.2)), float(rng.uniform(-0.2, 1.2)), float(rng.uniform(0.2, 0.6)),
             float(rng.uniform(0.2, 0.6)), float(rng.uniform(0.15, 0.5) * k))
            for _ in range(int(rng.integers(0, 3 if hard else 1))))
        light = Lighting(
            (float(rng.uniform(0, 2 * math.pi)), float(rng.uniform(0.0, 0.45) * k), float(rng.uniform(0, 0.35) * k)),
            cast, float(rng.uniform(0.7, 1.15) if hard else rng.uniform(0.85, 1.05)), glare, shadows,
            float(rng.uniform(0, 2 * math.pi)), float(rng.uniform(0.6, 1.4)), float(rng.uniform(0.25, 0.6)))
    skins = [(150, 180, 225), (120, 160, 210), (90, 130, 190), (60, 95, 150), (45, 70, 110), (170, 195, 235)]
    skin = (skins[int(rng.integers(len(skins)))], skins[int(rng.integers(len(skins)))])
    sleeves = ((30, 30, 30), (200, 200, 200), (120, 60, 30), (40, 40, 140), (90, 110, 60), (230, 230, 230))
    sleeve = (_tone(rng, *sleeves, lo=0.6, hi=1.1), _tone(rng, *sleeves, lo=0.6, hi=1.1))
    return Scene(
        seed=seed, difficulty=difficulty, camera=cam, board=board, pieces=pieces, glyphs=glyphs,
        piece_diameter=0.88 if plain else float(rng.uniform(0.8, 0.95)),
        piece_height=float(rng.uniform(0.16, 0.3)),
        orientation="owner" if plain else str(rng.choice(["owner", "owner", "owner", "red", "random"])),
        rotation_jitter_deg=0.0 if plain else float(rng.uniform(3, 25 if hard else 8)),
        position_jitter=0.0 if plain else float(rng.uniform(0.01, 0.07 if hard else 0.03)),
        light=light,
        noise=0.0 if plain else float(rng.uniform(1, 7 if hard else 3)),
        blur=0.0 if plain else float(rng.uniform(0, 1.6 if hard else 0.7)),
        jpeg_quality=95 if plain else int(rng.integers(45 if hard else 70, 93)),
        skin=skin, sleeve=sleeve,
        drift=0.0 if plain else float(rng.uniform(0.02, 0.12 if hard else 0.05)),
        face_down_rate=0.0 if plain else float(rng.uniform(0, 0.15)),
    )


# ---------------------------------------------------------------------------------------------------------------
# Camera geometry


@dataclass(frozen=True)
class _View:
    """The camera of a scene, fitted to its image: K, R, t and helpers (all numpy, derived once per scene)."""

    K: np.ndarray
    R: np.ndarray
    t: np.ndarray
    aspect: float

    def homography(self, z: float = 0.0) -> np.ndarray:
        """Plane z -> image."""
        return self.K @ np.column_stack([self.R[:, 0], self.R[:, 1], self.R[:, 2] * z + self.t])

    def project(self, pts: np.ndarray) -> np.ndarray:
        """Nx3 world points -> Nx2 pixels."""
        cam = pts @ self.R.T + self.t
        uvw = cam @ self.K.T
        return uvw[:, :2] / uvw[:, 2:3]

    def depth(self, pts: np.ndarray) -> np.ndarray:
        return (pts @ self.R.T + self.t)[:, 2]

    def shaken(self, dx: float, dy: float, droll: float) -> _View:
        """The same camera nudged by a bump: a few pixels and a fraction of a degree."""
        c, s = math.cos(droll), math.sin(droll)
        Rz = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
        K = self.K.copy()
        K[0, 2] += dx
        K[1, 2] += dy
        return _View(K, Rz @ self.R, Rz @ self.t, self.aspect)


def _fit_view(cam: Camera, board: BoardLook) -> _View:
    a = board.aspect
    target = np.array([4 + cam.look_offset[0], 4.5 * a + cam.look_offset[1], 0.0])
    th, ph = math.radians(cam.tilt_deg), math.radians(cam.azimuth_deg)
    back = np.array([math.sin(ph), -math.cos(ph), 0.0])
    centre = target + cam.distance * (math.sin(th) * back + math.cos(th) * np.array([0, 0, 1.0]))
    f = (target - centre) / np.linalg.norm(target - centre)
    r = np.cross(f, -back)
    r /= np.linalg.norm(r)
    y = np.cross(f, r)
    ro = math.radians(cam.roll_deg)
    r, y = math.cos(ro) * r + math.sin(ro) * y, -math.sin(ro) * r + math.cos(ro) * y
    R = np.stack([r, y, f])
    t = -R @ centre
    # Fit the focal length and principal point so that the sheet fills `fill` of the image.
    m = board.sheet_margin + 0.3
    outline = np.array([[-m, -m, 0], [8 + m, -m, 0], [8 + m, 9 * a + m, 0], [-m, 9 * a + m, 0]], float)
    unit = _View(np.eye(3), R, t, a).project(outline)
    (xmin, ymin), (xmax, ymax) = unit.min(0), unit.max(0)
    fpx = cam.fill * min(cam.width / (xmax - xmin), cam.height / (ymax - ymin))
    slack_x = (cam.width - fpx * (xmax - xmin)) / 2
    slack_y = (cam.height - fpx * (ymax - ymin)) / 2
    cx = cam.width / 2 - fpx * (xmin + xmax) / 2 + 0.9 * cam.shift[0] * slack_x
    cy = cam.height / 2 - fpx * (ymin + ymax) / 2 + 0.9 * cam.shift[1] * slack_y
    K = np.array([[fpx, 0, cx], [0, fpx, cy], [0, 0, 1.0]])
    return _View(K, R, t, a)


def grid_world(aspect: float) -> np.ndarray:
    """The 90 points in squares order as world points (x, y, 0)."""
    idx = np.arange(90)
    return np.stack([idx % 9, (9 - idx // 9) * aspect, np.zeros(90)], 1).astype(float)


# ---------------------------------------------------------------------------------------------------------------
# Per-scene context: plane texture, light maps, noise (cached)

@dataclass(frozen=True)
class _Context:
    view: _View
    sheet: np.ndarray
    sheet_to_world: np.ndarray
    table: np.ndarray
    table_to_world: np.ndarray
    gain: np.ndarray  # uint8 BGR, 128 = 1.0
    glare: np.ndarray | None  # uint8 BGR additive
    noise: tuple[np.ndarray, np.ndarray] | None  # (pos, neg) uint8, larger than the image; cropped per frame
    sprite_px: float  # projected diameter of a piece at the board centre


_NOISE_PAD = 32


@functools.lru_cache(maxsize=6)
def _context(scene: Scene) -> _Context:
    cam, board = scene.camera, scene.board
    view = _fit_view(cam, board)
    a = board.aspect
    W, H = cam.width, cam.height
    # Texture resolution: about the largest projected spacing, so the warp neither blurs nor aliases much.
    img_pts = view.project(grid_world(a)).reshape(10, 9, 2)
    spacing = max(np.linalg.norm(np.diff(img_pts, axis=1), axis=2).max(),
                  np.linalg.norm(np.diff(img_pts, axis=0), axis=2).max() / a)
    s = int(np.clip(round(spacing * 1.1), 24, 180))
    sheet = sheet_plane(board, s)
    m = board.sheet_margin
    sheet_to_world = np.array([[1 / s, 0, -m], [0, -1 / s, 9 * a + m], [0, 0, 1.0]])
    # The table: as far as the camera sees (image corners back-projected), at a lower resolution.
    inv = np.linalg.inv(view.homography(0.0))
    corners = np.array([[0, 0, 1], [W, 0, 1], [W, H, 1], [0, H, 1]], float) @ inv.T
    corners = corners[:, :2] / corners[:, 2:3]
    x0, y0 = np.clip(corners.min(0) - 1, -40, -8)
    x1, y1 = np.clip(corners.max(0) + 1, [16, 9 * a + 8], [48, 9 * a + 40])
    area = (x1 - x0) * (y1 - y0)
    st = float(min(s / 2, math.sqrt(2.5e6 / area)))
    # Quantise so that the cached texture is shared by frames of the same scene.
    extent = (math.floor(x0), math.floor(y0), math.ceil(x1), math.ceil(y1))
    table = table_plane(board, round(st, 1), extent)
    st = round(st, 1)
    table_to_world = np.array([[1 / st, 0, extent[0]], [0, -1 / st, extent[3]], [0, 0, 1.0]])
    rng = np.random.default_rng([scene.seed, 77])
    li = scene.light
    # Light: a linear falloff, a vignette, large soft shadows, colour cast; computed small, then upsampled.
    gh, gw = 36, 64
    v, u = np.mgrid[0:gh, 0:gw].astype(np.float32)
    u, v = u / (gw - 1), v / (gh - 1)
    g = np.ones((gh, gw), np.float32) * li.exposure
    ang, strength, vig = li.gradient
    g *= 1 + strength * ((u - 0.5) * math.cos(ang) + (v - 0.5) * math.sin(ang))
    g *= 1 - vig * ((u - 0.5) ** 2 + (v - 0.5) ** 2) * 2
    for sx, sy, rx, ry, depth in li.shadows:
        g *= 1 - depth * np.exp(-(((u - sx) / rx) ** 2 + ((v - sy) / ry) ** 2))
    gain = np.clip(np.dstack([g * c for c in li.cast]) * 128, 0, 255)
    gain = cv2.resize(gain, (W, H), interpolation=cv2.INTER_LINEAR).astype(np.uint8)
    glare = None
    if li.glare:
        v4, u4 = np.mgrid[0:gh * 4, 0:gw * 4].astype(np.float32)
        u4, v4 = u4 / (gw * 4 - 1), v4 / (gh * 4 - 1)
        gl = np.zeros((gh * 4, gw * 4), np.float32)
        for gx, gy, rx, ry, st_ in li.glare:
            gl += st_ * np.exp(-((((u4 - gx) / rx) ** 2 + ((v4 - gy) / ry) ** 2) ** 1.5))
        glare = cv2.resize(np.clip(gl, 0, 255), (W, H), interpolation=cv2.INTER_LINEAR).astype(np.uint8)
        glare = cv2.merge([glare, glare, glare])
    noise = None
    if scene.noise > 0:
        shape = (H + _NOISE_PAD, W + _NOISE_PAD)
        n = rng.standard_normal(shape, dtype=np.float32) * scene.noise
        n = cv2.merge([n, n, n]) + rng.standard_normal((*shape, 3), dtype=np.float32) * (scene.noise * 0.35)
        noise = (np.clip(n, 0, 255).astype(np.uint8), np.clip(-n, 0, 255).astype(np.uint8))
    centre = np.array([[4, 4.5 * a, scene.piece_height], [4 + scene.piece_diameter, 4.5 * a, scene.piece_height]])
    c2 = view.project(centre)
    return _Context(view, sheet, sheet_to_world, table, table_to_world, gain, glare, noise,
                    float(np.linalg.norm(c2[1] - c2[0])))


@functools.lru_cache(maxsize=12)
def _warped_plane(scene: Scene, view: _View) -> np.ndarray:
    ctx = _context(scene)
    size = (scene.camera.width, scene.camera.height)
    H0 = view.homography(0.0)
    out = cv2.warpPerspective(ctx.table, H0 @ ctx.table_to_world, size, flags=cv2.INTER_LINEAR,
                              borderMode=cv2.BORDER_REPLICATE)
    # The sheet over it, at full resolution; pixels outside the sheet keep the table.
    cv2.warpPerspective(ctx.sheet, H0 @ ctx.sheet_to_world, size, dst=out, flags=cv2.INTER_LINEAR,
                        borderMode=cv2.BORDER_TRANSPARENT)
    return out


# _View holds numpy arrays; hash it by value so the warp cache works.
def _view_hash(self: _View) -> int:
    return hash((self.K.tobytes(), self.R.tobytes(), self.t.tobytes()))


def _view_eq(self: _View, other: object) -> bool:
    return isinstance(other, _View) and all(np.array_equal(x, y) for x, y in
                                            ((self.K, other.K), (self.R, other.R), (self.t, other.t)))


_View.__hash__ = _view_hash  # type: ignore[method-assign]
_View.__eq__ = _view_eq  # type: ignore[method-assign]


# ---------------------------------------------------------------------------------------------------------------
# Pieces


def _unit_hash(*key: object) -> float:
    return zlib.crc32(repr(key).encode()) / 2**32


@dataclass(frozen=True)
class _PieceDraw:
    letter: str  # FEN letter, or "?" for a piece lying face down
    x: float  # world
    y: float
    z: float  # height of the base (0 on the board, above it when held)
    angle: float  # rad; direction the character's top points to, in the plane (0 = towards +y, Black)


def _glyph(scene: Scene, letter: str) -> str:
    return GLYPH_SETS[scene.glyphs][letter]


def _draw_pieces(img: np.ndarray, scene: Scene, view: _View, pieces: Sequence[_PieceDraw], *,
                 shadow_scale: float = 1.0) -> None:
    """Draw pieces (cylinders with a sprite top face) into img, far ones first, with their shadows."""
    if not pieces:
        return
    H, W = img.shape[:2]
    rho = scene.piece_diameter / 2
    hgt = scene.piece_height
    li = scene.light
    n = 20
    ang = np.linspace(0, 2 * np.pi, n, endpoint=False)
    circ = np.stack([np.cos(ang), np.sin(ang)], 1)
    # Shadows: on the table, away from the light, longer for raised pieces; plus a dark contact ring.
    half = 2
    mask = np.zeros((H // half, W // half), np.uint8)
    sdir = -np.array([math.cos(li.light_azimuth), math.sin(li.light_azimuth)])
    for p in pieces:
        length = (p.z + hgt) / math.tan(li.light_elevation)
        cxy = np.array([p.x, p.y]) + sdir * length
        ring = np.column_stack([cxy + circ * rho * 1.02, np.zeros(n)])
        poly = view.project(ring) / half
        cv2.fillConvexPoly(mask, np.round(poly * 16).astype(np.int32), int(255 * li.shadow_strength * shadow_scale),
                           cv2.LINE_AA, 4)
        if p.z == 0:
            ring = np.column_stack([np.array([p.x, p.y]) + circ * rho * 1.06, np.zeros(n)])
            poly = view.project(ring) / half
            cv2.fillConvexPoly(mask, np.round(poly * 16).astype(np.int32), 110, cv2.LINE_AA, 4)
    spx = max(1.0, _context(scene).sprite_px * 0.06 / half)
    mask = cv2.GaussianBlur(mask, (0, 0), spx)
    mask = cv2.resize(mask, (W, H), interpolation=cv2.INTER_LINEAR)
    fac = cv2.subtract(np.full_like(mask, 255), mask)
    cv2.multiply(img, cv2.merge([fac, fac, fac]), img, scale=1 / 255)

    centres = np.array([[p.x, p.y, p.z + hgt / 2] for p in pieces])
    order = np.argsort(-view.depth(centres))
    look = scene.pieces
    edge = np.array(look.edge, float)
    for i in order:
        p = pieces[i]
        base = np.column_stack([p.x + circ[:, 0] * rho, p.y + circ[:, 1] * rho, np.full(n, p.z)])
        top = base.copy()
        top[:, 2] += hgt
        side = view.project(np.vstack([base, top]))
        hull = cv2.convexHull(np.round(side * 16).astype(np.int32))
        # The side of the disc: darker than the top, lit from the light's side.
        cv2.fillConvexPoly(img, hull, tuple(float(c) for c in edge * 0.9), cv2.LINE_AA, 4)
        topxy = view.project(top)
        tmin, tmax = np.floor(topxy.min(0)).astype(int) - 1, np.ceil(topxy.max(0)).astype(int) + 2
        x0, y0 = max(0, tmin[0]), max(0, tmin[1])
        x1, y1 = min(W, tmax[0]), min(H, tmax[1])
        if x1 <= x0 or y1 <= y0:
            continue
        diam = int(max(tmax - tmin) // 2 * 2 + 2)
        sprite = (blank_sprite(look, diam) if p.letter == "?" else
                  piece_sprite(look, _glyph(scene, p.letter), p.letter.isupper(), diam))
        d = sprite.shape[0]
        k = 2 * rho / d
        c, s_ = math.cos(p.angle), math.sin(p.angle)
        # sprite pixel (u, v) -> world: the character's top (-v) points along (−sin a, cos a)
        S = np.array([[k * c, k * s_, p.x - k * (d - 1) / 2 * (c + s_)],
                      [k * s_, -k * c, p.y - k * (d - 1) / 2 * (s_ - c)],
                      [0, 0, 1.0]])
        M = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1.0]]) @ view.homography(p.z + hgt) @ S
        warped = cv2.warpPerspective(sprite, M, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR,
                                     borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0, 0))
        roi = img[y0:y1, x0:x1]
        a_ = warped[..., 3:4]
        roi[:] = np.clip(roi * (1 - a_) + warped[..., :3], 0, 255).astype(np.uint8)


def _board_pieces(scene: Scene, squares: str, offsets: Mapping[str, tuple[float, float]],
                  skip: str | None) -> list[_PieceDraw]:
    a = scene.board.aspect
    out = []
    for i, ch in enumerate(squares):
        if ch in ".?" or ch.lower() not in "kabnrcp":
            continue
        name = point_name(i)
        if name == skip:
            continue
        f, r = i % 9, 9 - i // 9
        if name in offsets:
            dx, dy = offsets[name]
        else:
            j = scene.position_jitter
            dx = j * (2 * _unit_hash(scene.seed, name, ch, 1) - 1)
            dy = j * (2 * _unit_hash(scene.seed, name, ch, 2) - 1)
        out.append(_PieceDraw(ch, f + dx, (r + dy) * a, 0.0, _piece_angle(scene, ch, name)))
    return out


def _piece_angle(scene: Scene, letter: str, key: str) -> float:
    u = _unit_hash(scene.seed, key, letter, 3)
    jitter = math.radians(scene.rotation_jitter_deg) * (2 * u - 1)
    if scene.orientation == "random":
        return 2 * math.pi * u
    if scene.orientation == "owner" and letter.islower():
        return math.pi + jitter  # black's characters face Black, upside down from Red's side
    return jitter


def _beside_pieces(scene: Scene, beside: Sequence[str]) -> list[_PieceDraw]:
    """Captured pieces lying beside the board: black ones (taken by Red) on Red's right, red ones on Black's right,
    in loose rows, some face down."""
    a = scene.board.aspect
    out = []
    counts = {True: 0, False: 0}
    gap = scene.board.sheet_margin + 0.4 + scene.piece_diameter / 2
    for k, ch in enumerate(beside):
        red = ch.isupper()
        n = counts[red]
        counts[red] += 1
        col, row = n // 5, n % 5
        u1, u2, u3 = (_unit_hash(scene.seed, "beside", k, j) for j in range(3))
        if not red:  # taken by Red: beside the board on file i's side, near Red
            x = 8 + gap + col * 1.05 + 0.15 * (u1 - 0.5)
            y = (0.5 + row * 1.0) * a + 0.15 * (u2 - 0.5)
        else:
            x = -gap - col * 1.05 + 0.15 * (u1 - 0.5)
            y = (8.5 - row * 1.0) * a + 0.15 * (u2 - 0.5)
        letter = "?" if u3 < scene.face_down_rate else ch
        out.append(_PieceDraw(letter, x, y, 0.0, 2 * math.pi * u3))
    return out


# ---------------------------------------------------------------------------------------------------------------
# Hands


@dataclass(frozen=True)
class Hand:
    """A player's hand over the board.

    target: (file, rank) in grid units where the fingertips are (may be between points or off the board);
    side: "red" or "black", the player whose arm it is (the arm comes from that side of the board);
    reach: 0 = fingertips at the board's edge on the player's side, 1 = at the target;
    holding: FEN letter of a piece held between the fingers (drawn in the hand), or None;
    height: fingertips' height above the board in file spacings; angle: sideways swing of the arm (rad)."""

    target: tuple[float, float]
    side: str = "red"
    reach: float = 1.0
    holding: str | None = None
    height: float = 0.6
    angle: float = 0.0


def _hand_geometry(scene: Scene, hand: Hand) -> tuple[np.ndarray, np.ndarray, float, float]:
    """World positions: fingertips (3,), direction of the arm in the plane (2,), palm length, width."""
    a = scene.board.aspect
    tx, ty = hand.target[0], hand.target[1] * a
    toward = np.array([0.0, 1.0]) if hand.side == "red" else np.array([0.0, -1.0])
    c, s = math.cos(hand.angle), math.sin(hand.angle)
    d = np.array([c * toward[0] - s * toward[1], s * toward[0] + c * toward[1]])
    edge_y = -scene.board.sheet_margin - 1.5 if hand.side == "red" else 9 * a + scene.board.sheet_margin + 1.5
    start = np.array([tx, edge_y]) - d * 1.0
    target = np.array([tx, ty])
    tip = start + (target - start) * float(np.clip(hand.reach, 0, 1))
    return np.array([tip[0], tip[1], hand.height]), d, 2.0, 1.9


def _draw_hand(img: np.ndarray, scene: Scene, view: _View, hand: Hand, frame_key: int) -> None:
    """A skin-coloured hand and forearm in a sleeve, shaded, with a soft shadow, reaching from the player's side."""
    H, W = img.shape[:2]
    red = hand.side == "red"
    skin = np.array(scene.skin[0 if red else 1], float)
    sleeve = np.array(scene.sleeve[0 if red else 1], float)
    tip, d, _, pwid = _hand_geometry(scene, hand)
    perp = np.array([-d[1], d[0]])
    u = _unit_hash(scene.seed, frame_key, "hand")
    # Shape in the plane frame (along d, across perp), at the hand's height; the arm rises towards the player.
    def P(along: float, across: float, z: float) -> np.ndarray:
        xy = tip[:2] - d * along + perp * across
        return np.array([xy[0], xy[1], z])

    z = tip[2]
    parts: list[tuple[str, list[np.ndarray], float]] = []  # (kind, world polyline, radius)
    # Fingers: four, slightly spread and curled, thumb to one side.
    spread = 0.18 + 0.05 * u
    for k, off in enumerate((-1.5, -0.5, 0.5, 1.5)):
        ln = [0.95, 1.05, 1.0, 0.8][k] * (0.9 + 0.2 * u)
        parts.append(("skin", [P(0.0 + 0.1 * abs(off), off * spread, z), P(ln, off * spread * 1.2, z + 0.25)], 0.11))
    thumb_side = 1 if red else -1
    parts.append(("skin", [P(0.25, thumb_side * 0.75, z + 0.05), P(0.95, thumb_side * 0.55, z + 0.3)], 0.13))
    # Palm and wrist.
    parts.append(("skin", [P(0.9, 0, z + 0.35), P(1.5, 0, z + 0.5)], pwid / 2.6))
    # Forearm: to beyond the board's edge, rising.
    parts.append(("skin", [P(1.6, 0, z + 0.5), P(2.6, 0.0, z + 0.9)], 0.42))
    parts.append(("sleeve", [P(2.6, 0, z + 0.9), P(9.0, 0.3 * (u - 0.5), z + 4.0)], 0.6))

    # Draw into a mask per material at quarter resolution for the shadow and shading, full res for the colour.
    mask_skin = np.zeros((H, W), np.uint8)
    mask_sleeve = np.zeros((H, W), np.uint8)
    shadow = np.zeros((H // 4, W // 4), np.uint8)
    li = scene.light
    sdir = -np.array([math.cos(li.light_azimuth), math.sin(li.light_azimuth)])
    for kind, line, radius in parts:
        m = mask_skin if kind == "skin" else mask_sleeve
        a_, b_ = line
        pa, pb = view.project(np.array([a_, b_]))
        # pixel radius from the projected size of the radius at that point
        ra = np.linalg.norm(view.project(np.array([a_ + np.r_[perp * radius, 0]]))[0] - pa)
        rb = np.linalg.norm(view.project(np.array([b_ + np.r_[perp * radius, 0]]))[0] - pb)
        _capsule(m, pa, pb, ra, rb)
        # shadow on the board: the part's foot point moved away from the light by its height
        sa = a_[:2] + sdir * a_[2] / math.tan(li.light_elevation)
        sb = b_[:2] + sdir * b_[2] / math.tan(li.light_elevation)
        qa, qb = view.project(np.array([[*sa, 0.0], [*sb, 0.0]])) / 4
        _capsule(shadow, qa, qb, ra / 4 * 1.1, rb / 4 * 1.1)
    shadow = cv2.GaussianBlur(shadow, (0, 0), max(2.0, _context(scene).sprite_px / 6))
    shadow = cv2.resize(shadow, (W, H), interpolation=cv2.INTER_LINEAR)
    fac = cv2.subtract(np.full_like(shadow, 255), cv2.multiply(shadow, np.full_like(shadow, 1), scale=0.55))
    cv2.multiply(img, cv2.merge([fac, fac, fac]), img, scale=1 / 255)
    if hand.holding:
        # The held piece between thumb and fingers, lifted.
        hx, hy = tip[0] - d[0] * 0.35, tip[1] - d[1] * 0.35
        _draw_pieces(img, scene, view, [_PieceDraw(hand.holding, hx, hy, z - 0.05, _piece_angle(
            scene, hand.holding, "held"))], shadow_scale=0.0)
    ys, xs = np.nonzero(mask_skin | mask_sleeve)
    if len(xs) == 0:
        return
    x0, x1, y0, y1 = xs.min(), xs.max() + 1, ys.min(), ys.max() + 1
    ms = mask_skin[y0:y1, x0:x1].astype(np.float32) / 255
    mv = mask_sleeve[y0:y1, x0:x1].astype(np.float32) / 255
    ms = ms * (1 - mv)
    # Shading: rounded limbs darken towards their outline; light from one side.
    sm = max(3, int(_context(scene).sprite_px / 5)) | 1
    body = cv2.GaussianBlur(np.maximum(ms, mv), (sm, sm), 0)
    yy, xx = np.mgrid[y0:y1, x0:x1].astype(np.float32)
    grad = 1 + 0.12 * ((xx - W / 2) / W * math.cos(li.light_azimuth) - (yy - H / 2) / H * math.sin(li.light_azimuth))
    shade = (0.55 + 0.45 * body) * grad
    colour = (ms[..., None] * skin + mv[..., None] * sleeve) * shade[..., None]
    alpha = np.maximum(ms, mv)[..., None]
    roi = img[y0:y1, x0:x1]
    roi[:] = np.clip(roi * (1 - alpha) + colour * alpha, 0, 255).astype(np.uint8)


def _capsule(mask: np.ndarray, pa: np.ndarray, pb: np.ndarray, ra: float, rb: float) -> None:
    """A tapered capsule from pa (radius ra) to pb (radius rb), antialiased, value 255."""
    d = pb - pa
    n = np.array([-d[1], d[0]]) / (np.linalg.norm(d) + 1e-9)
    poly = np.array([pa + n * ra, pb + n * rb, pb - n * rb, pa - n * ra])
    cv2.fillConvexPoly(mask, np.round(poly * 16).astype(np.int32), 255, cv2.LINE_AA, 4)
    cv2.circle(mask, (round(pa[0] * 16), round(pa[1] * 16)), round(ra * 16), 255, -1, cv2.LINE_AA, 4)
    cv2.circle(mask, (round(pb[0] * 16), round(pb[1] * 16)), round(rb * 16), 255, -1, cv2.LINE_AA, 4)


# ---------------------------------------------------------------------------------------------------------------
# The camera's own degradations


def _camera_effects(img: np.ndarray, scene: Scene, frame_key: int, exposure: float, jpeg_roundtrip: bool,
                    cast: tuple[float, float, float] = (1.0, 1.0, 1.0)) -> np.ndarray:
    ctx = _context(scene)
    if cast == (1.0, 1.0, 1.0):
        cv2.multiply(img, ctx.gain, img, scale=exposure / 128)
    else:
        gain = cv2.multiply(ctx.gain, (*cast, 0.0))
        cv2.multiply(img, gain, img, scale=exposure / 128)
    if ctx.glare is not None:
        cv2.add(img, ctx.glare, img)
    if scene.blur > 0.3:
        img = cv2.GaussianBlur(img, (0, 0), scene.blur)
    if ctx.noise is not None:
        # A different crop of the noise field each frame, so that the noise is not frozen.
        h, w = img.shape[:2]
        ox, oy = (frame_key * 7) % _NOISE_PAD, (frame_key * 13) % _NOISE_PAD
        cv2.add(img, ctx.noise[0][oy:oy + h, ox:ox + w], img)
        cv2.subtract(img, ctx.noise[1][_NOISE_PAD - oy - 1:_NOISE_PAD - oy - 1 + h, ox:ox + w], img)
    if jpeg_roundtrip:
        img = cv2.imdecode(np.frombuffer(jpeg(img, scene.jpeg_quality), np.uint8), cv2.IMREAD_COLOR)
    return img


def jpeg(image: np.ndarray, quality: int = 90) -> bytes:
    """The image as JPEG bytes (what a camera sends)."""
    ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise RenderError("JPEG encoding failed")
    return buf.tobytes()


# ---------------------------------------------------------------------------------------------------------------
# Public: one frame


@dataclass(frozen=True)
class Rendered:
    image: np.ndarray  # BGR uint8
    corners: np.ndarray  # 4x2 float: a9, i9, i0, a0
    points: np.ndarray  # 90x2 float, squares order


def _check_squares(squares: str) -> None:
    if len(squares) != 90 or any(ch not in ".?XxKABNRCPkabnrcp" for ch in squares):
        raise RenderError(f"squares must be 90 characters of FEN letters, X/x, '.' or '?': {squares!r}")


def _truth(view: _View, aspect: float) -> tuple[np.ndarray, np.ndarray]:
    points = view.project(grid_world(aspect))
    corners = points[[0, 8, 89, 81]]
    return corners, points


def render_position(squares: str, scene: Scene, *, offsets: Mapping[str, tuple[float, float]] | None = None,
                    hand: Hand | None = None, lifted: str | None = None, beside: Sequence[str] = ()) -> Rendered:
    """One camera frame of `squares` (90 chars, rank 9 first; X/x draw a random type of that colour).

    offsets: per point, a displacement (files, ranks) in grid units; without one a piece stands a little off its
    point as pieces do (scene.position_jitter). lifted: point whose piece is in the hand (not on the board).
    beside: FEN letters of captured pieces lying beside the board."""
    _check_squares(squares)
    return _render(squares, scene, dict(offsets or {}), hand, lifted, tuple(beside), _context(scene).view, 0, 1.0,
                   (1.0, 1.0, 1.0), True)


def _resolve_unknown(scene: Scene, squares: str) -> str:
    out = []
    for i, ch in enumerate(squares):
        if ch in "Xx":
            t = "KABNRCP"[int(_unit_hash(scene.seed, i, "X") * 7)]
            ch = t if ch == "X" else t.lower()
        out.append(ch)
    return "".join(out)


def _layer(scene: Scene, view: _View, squares: str, offsets: tuple[tuple[str, tuple[float, float]], ...],
           lifted: str | None, beside: tuple[str, ...]) -> np.ndarray:
    img = _warped_plane(scene, view).copy()
    pieces = _board_pieces(scene, _resolve_unknown(scene, squares), dict(offsets), lifted) + _beside_pieces(
        scene, beside)
    _draw_pieces(img, scene, view, pieces)
    return img


def _render(squares: str, scene: Scene, offsets: dict[str, tuple[float, float]], hand: Hand | None,
            lifted: str | None, beside: tuple[str, ...], view: _View, frame_key: int, exposure: float,
            cast: tuple[float, float, float], jpeg_roundtrip: bool,
            layer_cache: dict | None = None) -> Rendered:
    if lifted is not None:
        point_index(lifted)
    key = (squares, tuple(sorted(offsets.items())), lifted, beside, _view_hash(view))
    if layer_cache is not None and key in layer_cache:
        img = layer_cache[key].copy()
    else:
        base = _layer(scene, view, squares, key[1], lifted, beside)
        if layer_cache is not None:
            layer_cache.clear()
            layer_cache[key] = base
        img = base.copy()
    if hand is not None:
        _draw_hand(img, scene, view, hand, frame_key)
    img = _camera_effects(img, scene, frame_key, exposure, jpeg_roundtrip, cast)
    corners, points = _truth(view, scene.board.aspect)
    return Rendered(img, corners, points)


__all__ = ["Camera", "Hand", "Lighting", "RenderError", "Rendered", "Scene", "jpeg", "random_scene",
           "render_position"]
