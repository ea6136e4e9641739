"""Synthetic camera video of Xiangqi boards, for tests, benchmarks and the demo.

A `Scene` (from `random_scene(seed)`) fixes everything about one camera and one board: the board sheet and table,
the piece set and its font, the camera pose, the light, the noise. `render_position` draws one frame of a position
with its exact truth (the image coordinates of the 90 points and the 4 corners); `render_game` plays a real game
on it as a video with hands, lifts, placements (some off the point, some half-way between two points, 5.10),
captured pieces put beside the board, nudges and still periods.

Hard scenes are meant to be at least as hard as real venue photos (data README): paper, cloth, vinyl and wood
boards with red or dark lines, creases and sheets that do not lie flat (the printed grid bows by a pixel or two,
and the truth follows the print), tables with checks and stripes, score sheets and clocks, the next table's
board in view, captured pieces beside the board, any side of the board towards the camera, up to ~35 degrees of
tilt, uneven and drifting light, glare, passing shadows, defocus, noise and JPEG compression. Harder still, as
named options (`render_hard.py`: tall pieces, a plastic sheet, outdoor sun, dark inks, light on dark discs, 35-50
degree cameras, turned pictures, filling and small frames, busy backgrounds, real pieces' tops; a preset `hard`):
the Scene fields they set default to drawing exactly what was drawn without them.

Truth: `Rendered.points` / `FrameTruth.points` are the 90 printed intersections (squares order: rank 9 first),
`corners` the outer four in the order a9, i9, i0, a0, both in image pixels (x, y), exact to the renderer's
drawing (tests measure the printed lines to within half a pixel). `game_truth` gives a video's truth without
drawing it.

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
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

import cv2
import numpy as np

from xqarb.vision import grid
from xqarb.vision.grid import FILES, point_name
from xqarb.vision.render_assets import (
    GLYPH_SETS,
    BoardLook,
    FontFace,
    PieceLook,
    blank_sprite,
    cjk_fonts,
    crop_files,
    crop_sprite,
    piece_sprite,
    sheet_displacement,
    sheet_plane,
    table_plane,
)
from xqarb.vision.render_cli import add_arguments, main_render
from xqarb.vision.render_effects import PlasticSheet, Sunlight, apply_sheet, sheet_light, sun_gain

DIFFICULTIES = ("plain", "easy", "hard")


class RenderError(ValueError):
    """A request the renderer cannot draw (bad squares string, unknown point, bad difficulty)."""


def point_index(name: str) -> int:
    """`grid.point_index`, its refusal a RenderError (a point the caller asked the renderer for)."""
    try:
        return grid.point_index(name)
    except ValueError as exc:
        raise RenderError(str(exc)) from exc


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
    # The hard options (render_hard.py); these defaults draw exactly what the renderer drew before them.
    wall_shade: float = 0.0  # a piece's side wall shaded by the light's direction (0: one flat tone, 1: strong)
    sheet: PlasticSheet | None = None  # a clear plastic sheet over the board: glare, wrinkles, veil
    sun: Sunlight | None = None  # direct sun outdoors: hard shadow edges, warm light, blue shade
    real_tops: str | None = None  # a piece_crops split folder: the pieces' top faces cut from real photos


# Share of scenes whose pieces are light characters on dark (and red) discs, by difficulty, where a caller asks for
# them (`random_scene(..., light_on_dark=True)`: detect's tests and bench/detect_rendered.py). Off by default: the
# tracker reads pieces its own way and does not read such sets yet, and its rendered games keep their scenes.
LIGHT_ON_DARK = {"plain": 0.0, "easy": 0.1, "hard": 0.2}


def _tone(rng: np.random.Generator, *choices: tuple[int, int, int], lo: float = 0.9, hi: float = 1.05,
          jitter: float = 6.0) -> tuple[int, int, int]:
    """One of the base colours (BGR), a little brighter or darker and off-tone, as real materials vary."""
    base = np.array(choices[int(rng.integers(len(choices)))], float)
    col = base * rng.uniform(lo, hi) + rng.normal(0, jitter, 3)
    return tuple(int(v) for v in np.clip(col, 0, 255))  # type: ignore[return-value]


def _random_camera(rng: np.random.Generator, hard: bool, plain: bool) -> Camera:
    """The camera of a random scene (draws from `rng` in a fixed order: seeds keep their scenes)."""
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
            width, height, tilt, side + float(rng.normal(0, 9 if hard else 3)),
            float(rng.normal(0, 3 if hard else 1)),
            float(rng.uniform(14, 40) if hard else rng.uniform(22, 40)),
            # Real photos show pieces from ~25 px across (data README: crops of about 30 px) up to ~80 px.
            float(rng.uniform(0.42, 0.95) if hard else rng.uniform(0.7, 0.92)),
            (float(rng.uniform(-1, 1)), float(rng.uniform(-1, 1))) if hard else (0.0, 0.0),
            (float(rng.normal(0, 0.4)), float(rng.normal(0, 0.4))),
        )
    return cam


def _random_board(rng: np.random.Generator, seed: int, hard: bool, plain: bool, river_font: FontFace) -> BoardLook:
    """The board sheet and the table under it of a random scene."""
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
    if hard and material != "wood" and rng.random() < 0.6:
        # Cloth, vinyl and paper boards do not lie flat: the printed lines bow by up to a few hundredths of a
        # spacing (one or two pixels), so the grid is not exactly a homography of the board.
        amp = float(rng.uniform(0.008, 0.03))
        board = replace(board, wave=tuple(
            (amp * float(rng.uniform(0.3, 1)), amp * float(rng.uniform(0.3, 1)), float(rng.uniform(-0.9, 0.9)),
             float(rng.uniform(-0.9, 0.9)), float(rng.uniform(0, 2 * math.pi))) for _ in range(2)))
    if hard:
        # A separate stream, so that adding this did not change the other draws of existing seeds.
        nrng = np.random.default_rng([seed, 3, 0x4E42])
        if nrng.random() < 0.2:
            m2 = 2 * board.sheet_margin + float(nrng.uniform(0.4, 3.0))
            where = int(nrng.integers(4))
            dx, dy = [(8 + m2, 0.0), (-8 - m2, 0.0), (0.0, 9 * board.aspect + m2), (0.0, -9 * board.aspect - m2)][where]
            board = replace(board, neighbour=(dx + float(nrng.normal(0, 0.5)), dy + float(nrng.normal(0, 0.5))))
    if table == "felt":
        board = replace(board, table_base=_tone(rng, (50, 110, 40), (90, 60, 30), (40, 40, 110), lo=0.7, hi=1.2))
    elif table == "wood":
        board = replace(board, table_base=_tone(rng, (40, 70, 110), (60, 100, 150), (30, 45, 70), lo=0.7, hi=1.2))
    return board


def _random_pieces(rng: np.random.Generator, seed: int, difficulty: str, font: FontFace,
                   light_on_dark: bool) -> PieceLook:
    """The pieces' discs and inks of a random scene."""
    hard, plain = difficulty == "hard", difficulty == "plain"
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
    if light_on_dark:
        # Light-on-dark sets (and printed diagrams): Black's discs dark (black, dark green, navy) with
        # light characters, Red's red discs with light characters or light discs with red ink. A separate stream, so
        # that the other draws of existing seeds stay as they were.
        lrng = np.random.default_rng([seed, 4, 0x4C4F44])
        if lrng.random() < LIGHT_ON_DARK[difficulty]:
            pieces = replace(
                pieces, black_face=_tone(lrng, (35, 35, 35), (40, 70, 35), (80, 40, 25), lo=0.7, hi=1.3),
                red_face=_tone(lrng, (40, 40, 175), (50, 45, 150)) if lrng.random() < 0.5 else None,
                light_ink=_tone(lrng, (215, 230, 238), (120, 200, 230), (240, 240, 240)))
    return pieces


def _random_light(rng: np.random.Generator, hard: bool, plain: bool) -> Lighting:
    """The light of a random scene."""
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
    return light


def random_scene(seed: int, *, difficulty: str = "hard", light_on_dark: bool = False) -> Scene:
    """A scene drawn from the range of real venues for `difficulty` ("plain": overhead, even light, clean board;
    "easy": mild angles and light; "hard": everything real photos show, and a bit more). light_on_dark: a share
    of the scenes (LIGHT_ON_DARK) draw light characters on dark discs; the other scenes are the same either way."""
    if difficulty not in DIFFICULTIES:
        raise RenderError(f"difficulty must be one of {DIFFICULTIES}, not {difficulty!r}")
    rng = np.random.default_rng([seed, DIFFICULTIES.index(difficulty), 0x58510])
    hard, plain = difficulty == "hard", difficulty == "plain"
    fonts = cjk_fonts()
    font = fonts[int(rng.integers(len(fonts)))]
    river_font = fonts[int(rng.integers(len(fonts)))]

    cam = _random_camera(rng, hard, plain)
    board = _random_board(rng, seed, hard, plain, river_font)
    pieces = _random_pieces(rng, seed, difficulty, font, light_on_dark)
    glyphs = "traditional" if plain else str(rng.choice(list(GLYPH_SETS)))

    light = _random_light(rng, hard, plain)
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
        position_jitter=0.0 if plain else float(rng.uniform(0.02, 0.09 if hard else 0.04)),
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
    """The 90 points in squares order as world points (x, y, 0) of a true, flat board."""
    idx = np.arange(90)
    return np.stack([idx % 9, (9 - idx // 9) * aspect, np.zeros(90)], 1).astype(float)


def printed_points(board: BoardLook) -> np.ndarray:
    """The 90 printed intersections in squares order as world points: the true grid moved by the sheet's waves."""
    pts = grid_world(board.aspect)
    dx, dy = sheet_displacement(board, pts[:, 0], pts[:, 1])
    pts[:, 0] += dx
    pts[:, 1] += dy
    return pts


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
        # A 509x509 tile (prime, so the repeats do not line up with anything) tiled over the frame.
        t = 509
        lum = rng.standard_normal((t, t, 1), dtype=np.float32) * scene.noise
        n = lum + rng.standard_normal((t, t, 3), dtype=np.float32) * (scene.noise * 0.35)
        reps = ((H + _NOISE_PAD) // t + 1, (W + _NOISE_PAD) // t + 1, 1)
        pos = np.tile(np.clip(n, 0, 255).astype(np.uint8), reps)[:H + _NOISE_PAD, :W + _NOISE_PAD]
        neg = np.tile(np.clip(-n, 0, 255).astype(np.uint8), reps)[:H + _NOISE_PAD, :W + _NOISE_PAD]
        noise = (np.ascontiguousarray(pos), np.ascontiguousarray(neg))
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
    rho = scene.piece_diameter / 2
    hgt = scene.piece_height
    ang = np.linspace(0, 2 * np.pi, 20, endpoint=False)
    circ = np.stack([np.cos(ang), np.sin(ang)], 1)
    if shadow_scale > 0:
        _piece_shadows(img, scene, view, pieces, shadow_scale)
    centres = np.array([[p.x, p.y, p.z + hgt / 2] for p in pieces])
    order = np.argsort(-view.depth(centres))
    look = scene.pieces
    edge = np.array(look.edge, float)
    for i in order:
        _draw_one_piece(img, scene, view, pieces[i], look, edge, circ, rho, hgt)


def _piece_shadows(img: np.ndarray, scene: Scene, view: _View, pieces: Sequence[_PieceDraw],
                   shadow_scale: float) -> None:
    """Shadows on the table, away from the light, longer for raised pieces; plus a dark contact ring."""
    H, W = img.shape[:2]
    rho = scene.piece_diameter / 2
    hgt = scene.piece_height
    li = scene.light
    n = 20
    ang = np.linspace(0, 2 * np.pi, n, endpoint=False)
    circ = np.stack([np.cos(ang), np.sin(ang)], 1)
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


def _draw_one_piece(img: np.ndarray, scene: Scene, view: _View, p: _PieceDraw, look: PieceLook, edge: np.ndarray,
                    circ: np.ndarray, rho: float, hgt: float) -> None:
    H, W = img.shape[:2]
    n = len(circ)
    base = np.column_stack([p.x + circ[:, 0] * rho, p.y + circ[:, 1] * rho, np.full(n, p.z)])
    top = base.copy()
    top[:, 2] += hgt
    side = view.project(np.vstack([base, top]))
    hull = cv2.convexHull(np.round(side * 16).astype(np.int32))
    # The side of the disc: darker than the top, lit from the light's side.
    cv2.fillConvexPoly(img, hull, tuple(float(c) for c in edge * 0.9), cv2.LINE_AA, 4)
    if scene.wall_shade > 0:
        _shade_wall(img, scene, view, side, edge, circ)
    topxy = view.project(top)
    tmin, tmax = np.floor(topxy.min(0)).astype(int) - 1, np.ceil(topxy.max(0)).astype(int) + 2
    x0, y0 = max(0, tmin[0]), max(0, tmin[1])
    x1, y1 = min(W, tmax[0]), min(H, tmax[1])
    if x1 <= x0 or y1 <= y0:
        return
    diam = int(max(tmax - tmin) // 4 * 4 + 4)  # a few sprite sizes per scene; the warp does the rest
    sprite = (blank_sprite(look, diam) if p.letter == "?" else _real_top(scene, p, diam) if scene.real_tops else
              None)
    if sprite is None:
        sprite = piece_sprite(look, _glyph(scene, p.letter), p.letter.isupper(), diam)
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
    # No two pieces of a set are quite alike (wear, dirt, the wood): a few per cent of brightness.
    tone = 0.95 + 0.08 * _unit_hash(scene.seed, p.letter, round(p.angle, 4))
    roi[:] = np.clip(roi * (1 - a_) + warped[..., :3] * tone, 0, 255).astype(np.uint8)


def _shade_wall(img: np.ndarray, scene: Scene, view: _View, side: np.ndarray, edge: np.ndarray,
                circ: np.ndarray) -> None:
    """A tall piece's side wall as facets, each as bright as it faces the light (lit side light, far side dark),
    far facets first so that the near ones cover them; over the flat-toned outline, so no seam shows."""
    n = len(circ)
    base, top = side[:n], side[n:]
    facing = circ @ np.array([math.cos(scene.light.light_azimuth), math.sin(scene.light.light_azimuth)])
    mid = (np.roll(circ, -1, 0) + circ) / 2
    depth = -(mid @ (view.R[2, :2]))  # facets on the far side of the piece from the camera first
    for k in np.argsort(depth):
        k2 = (k + 1) % n
        lit = (facing[k] + facing[k2]) / 2  # -1 away from the light .. 1 towards it
        tone = np.clip(edge * 0.9 * (1 + scene.wall_shade * 0.45 * lit), 0, 255)
        quad = np.array([base[k], base[k2], top[k2], top[k]])
        cv2.fillConvexPoly(img, np.round(quad * 16).astype(np.int32), tuple(float(c) for c in tone), cv2.LINE_8, 4)


def _real_top(scene: Scene, p: _PieceDraw, diam: int) -> np.ndarray | None:
    """The top face of a real piece of p's side and type (a crop from scene.real_tops), the same crop for the same
    piece of a scene; None where there is no crop of that kind."""
    files = crop_files(str(scene.real_tops)).get(p.letter, ())
    if not files:
        return None
    return crop_sprite(files[int(_unit_hash(scene.seed, p.letter, round(p.angle, 4), "crop") * len(files))], diam)


def _board_pieces(scene: Scene, squares: str, offsets: Mapping[str, tuple[float, float]],
                  skip: str | None) -> list[_PieceDraw]:
    a = scene.board.aspect
    printed = printed_points(scene.board)
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
        # Players set pieces on the printed points: the waves move them too.
        px, py = printed[i, 0] - f, printed[i, 1] - r * a
        out.append(_PieceDraw(ch, f + dx + px, (r + dy) * a + py, 0.0, _piece_angle(scene, ch, name)))
    return out


def _piece_angle(scene: Scene, letter: str, key: str) -> float:
    u = _unit_hash(scene.seed, key, letter, 3)
    jitter = math.radians(scene.rotation_jitter_deg) * (2 * u - 1)
    if scene.orientation == "random":
        return 2 * math.pi * u
    if scene.orientation == "owner" and letter.islower():
        return math.pi + jitter  # black's characters face Black, upside down from Red's side
    return jitter


@functools.lru_cache(maxsize=16)
def _neighbour_pieces(scene: Scene) -> tuple[_PieceDraw, ...]:
    """The pieces of the next table's game (a position part-way through a game), if that board is in view."""
    if scene.board.neighbour is None:
        return ()
    ox, oy = scene.board.neighbour
    rng = np.random.default_rng([scene.seed, 0x4E42])
    start = "rnbakabnr..........c.....c.p.p.p.p.p..................P.P.P.P.P.C.....C..........RNBAKABNR"
    occupied = [i for i, ch in enumerate(start) if ch != "."]
    keep = rng.choice(occupied, size=int(rng.integers(14, 30)), replace=False)
    empty = [i for i in range(90) if start[i] == "."]
    spots = rng.choice(empty, size=len(keep), replace=False)
    out = []
    a = scene.board.aspect
    for i, j in zip(keep, spots, strict=True):
        ch = start[i]
        k = int(j) if rng.random() < 0.5 else int(i)  # about half the pieces have moved
        f, r = k % 9, 9 - k // 9
        out.append(_PieceDraw(ch, ox + f + float(rng.normal(0, 0.05)), oy + r * a + float(rng.normal(0, 0.05)), 0.0,
                              (math.pi if ch.islower() else 0.0) + float(rng.normal(0, 0.2))))
    return tuple(out)


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
    reach: 0 = fingertips at the grid's edge on the player's side, 1 = at the target;
    holding: FEN letter of a piece held between the fingers (drawn in the hand), or None;
    height: fingertips' height above the board in file spacings; angle: sideways swing of the arm (rad);
    motion: how far the fingertips move while the shutter is open (world, file spacings): motion blur."""

    target: tuple[float, float]
    side: str = "red"
    reach: float = 1.0
    holding: str | None = None
    height: float = 0.6
    angle: float = 0.0
    motion: tuple[float, float, float] = (0.0, 0.0, 0.0)


def _hand_geometry(scene: Scene, hand: Hand) -> tuple[np.ndarray, np.ndarray]:
    """World position of the fingertips (3,) and the direction the arm reaches in, in the plane (2,)."""
    a = scene.board.aspect
    tx, ty = hand.target[0], hand.target[1] * a
    toward = np.array([0.0, 1.0]) if hand.side == "red" else np.array([0.0, -1.0])
    c, s = math.cos(hand.angle), math.sin(hand.angle)
    d = np.array([c * toward[0] - s * toward[1], s * toward[0] + c * toward[1]])
    # reach 0: fingertips just over the edge of the grid on the player's side (the hand is over the board as soon
    # as it is in the picture, so the truth's hand_present is what a camera sees).
    edge_y = -0.4 if hand.side == "red" else 9 * a + 0.4
    start = np.array([tx, edge_y]) - d * 0.3
    target = np.array([tx, ty])
    tip = start + (target - start) * float(np.clip(hand.reach, 0, 1))
    return np.array([tip[0], tip[1], hand.height]), d


def _hand_parts(scene: Scene, hand: Hand, frame_key: int) -> list[tuple[str, np.ndarray, np.ndarray, float, float]]:
    """The hand as tapered capsules in world coordinates: (material, end a, end b, radius a, radius b).

    An adult hand is about 18 cm from wrist to fingertip and 8-9 cm across the palm; a board's file spacing is
    about 5-6 cm, so the hand spans some 3 spacings and covers several points."""
    tip, d = _hand_geometry(scene, hand)
    perp = np.array([-d[1], d[0]])
    u = _unit_hash(scene.seed, frame_key // 3, hand.side, "hand")
    size = 1.05 + 0.25 * _unit_hash(scene.seed, hand.side, "size")
    z = tip[2]

    def P(along: float, across: float, dz: float) -> np.ndarray:
        xy = tip[:2] - d * along * size + perp * across * size
        return np.array([xy[0], xy[1], z + dz])

    parts: list[tuple[str, np.ndarray, np.ndarray, float, float]] = []
    spread = 0.27 + 0.08 * u
    for k, off in enumerate((-1.5, -0.5, 0.5, 1.5)):
        ln = [1.15, 1.4, 1.3, 1.05][k] * (0.9 + 0.15 * u)
        curl = 0.12 * abs(off)
        parts.append(("skin", P(curl, off * spread * 0.8, 0.0), P(curl + ln, off * spread * 1.05, 0.35),
                      0.14 * size, 0.17 * size))
    thumb = 1 if (hand.side == "red") == (hand.angle >= -0.5) else -1
    parts.append(("skin", P(0.35, thumb * 0.75, 0.05), P(1.6, thumb * 0.85, 0.4), 0.17 * size, 0.22 * size))
    parts.append(("skin", P(1.5, 0.0, 0.4), P(2.5, 0.05, 0.6), 0.78 * size, 0.7 * size))  # palm
    parts.append(("skin", P(2.7, 0.05, 0.7), P(3.6, 0.1, 1.1), 0.5 * size, 0.55 * size))  # wrist, forearm
    parts.append(("sleeve", P(3.5, 0.1, 1.1), P(12.0, 0.6 * (u - 0.5), 5.0), 0.72 * size, 0.9 * size))
    return parts


def _draw_hand(img: np.ndarray, scene: Scene, view: _View, hand: Hand, frame_key: int) -> None:
    """A skin-coloured hand and forearm in a sleeve, shaded, with a soft shadow, reaching from the player's side."""
    H, W = img.shape[:2]
    red = hand.side == "red"
    skin = np.array(scene.skin[0 if red else 1], float)
    sleeve = np.array(scene.sleeve[0 if red else 1], float)
    li = scene.light
    sdir = -np.array([math.cos(li.light_azimuth), math.sin(li.light_azimuth)])
    parts = _hand_parts(scene, hand, frame_key)
    tip, d = _hand_geometry(scene, hand)
    perp = np.array([-d[1], d[0], 0.0])
    drawn = []
    for kind, a_, b_, ra, rb in parts:
        pa, pb = view.project(np.array([a_, b_]))
        qa, qb = view.project(np.array([a_ + perp * ra, b_ + perp * rb]))
        drawn.append((kind, pa, pb, float(np.linalg.norm(qa - pa)), float(np.linalg.norm(qb - pb)), a_, b_))
    # Shadow on the board: each part's footprint moved away from the light by its height; quarter resolution,
    # applied only where it falls.
    shadow = np.zeros((H // 4 + 1, W // 4 + 1), np.uint8)
    feet = []
    for _, _, _, ra, rb, a_, b_ in drawn:
        sa = a_[:2] + sdir * a_[2] / math.tan(li.light_elevation)
        sb = b_[:2] + sdir * b_[2] / math.tan(li.light_elevation)
        qa, qb = view.project(np.array([[*sa, 0.0], [*sb, 0.0]])) / 4
        _capsule(shadow, qa, qb, ra / 4 * 1.1, rb / 4 * 1.1)
        feet += [qa - ra / 4 - 1, qa + ra / 4 + 1, qb - rb / 4 - 1, qb + rb / 4 + 1]
    sig = max(2.0, _context(scene).sprite_px / 5) / 4 * 4
    pad = int(3 * sig) + 2
    f = np.array(feet)
    sx0, sy0 = np.clip(np.floor(f.min(0)).astype(int) - pad, 0, [W // 4, H // 4])
    sx1, sy1 = np.clip(np.ceil(f.max(0)).astype(int) + pad, 0, [W // 4 + 1, H // 4 + 1])
    X0, Y0, X1, Y1 = sx0 * 4, sy0 * 4, min(W, sx1 * 4), min(H, sy1 * 4)
    if X1 > X0 and Y1 > Y0:  # (a shadow falling wholly past the picture's edge leaves nothing to darken)
        sh = cv2.GaussianBlur(shadow[sy0:sy1, sx0:sx1], (0, 0), sig)
        sh = cv2.resize(sh, ((sx1 - sx0) * 4, (sy1 - sy0) * 4), interpolation=cv2.INTER_LINEAR)[:Y1 - Y0, :X1 - X0]
        fac = cv2.subtract(np.full_like(sh, 255), cv2.multiply(sh, 1, scale=0.5 * (0.5 + li.shadow_strength)))
        roi = img[Y0:Y1, X0:X1]
        cv2.multiply(roi, cv2.merge([fac, fac, fac]), roi, scale=1 / 255)
    if hand.holding:
        # The held piece pinched under the fingertips, raised: partly hidden by the fingers.
        hx, hy = tip[0] + d[0] * 0.1, tip[1] + d[1] * 0.1
        _draw_pieces(img, scene, view, [_PieceDraw(hand.holding, hx, hy, max(0.0, tip[2] - 0.35), _piece_angle(
            scene, hand.holding, "held"))], shadow_scale=0.0)
    # The limbs, in a region of interest around them.
    pts = np.array([p for _, pa, pb, ra, rb, _, _ in drawn for p in (pa - ra, pa + ra, pb - rb, pb + rb)])
    t0, t1 = view.project(np.array([tip, tip + np.array(hand.motion)]))
    smear = t1 - t0  # pixels the hand moves while the shutter is open
    pad = int(np.abs(smear).max()) + 2
    x0, y0 = np.clip(np.floor(pts.min(0)).astype(int) - pad, 0, [W, H])
    x1, y1 = np.clip(np.ceil(pts.max(0)).astype(int) + pad, 0, [W, H])
    if x1 <= x0 or y1 <= y0:
        return
    # Drawn at half resolution (a moving hand is never sharp), then scaled up and blended.
    q = 2
    hw, hh = (x1 - x0 + q - 1) // q, (y1 - y0 + q - 1) // q
    ms = np.zeros((hh, hw), np.uint8)
    mv = np.zeros_like(ms)
    off = np.array([x0, y0], float)
    for kind, pa, pb, ra, rb, _, _ in drawn:
        _capsule(ms if kind == "skin" else mv, (pa - off) / q, (pb - off) / q, ra / q, rb / q)
    # Creases between the fingers and at the knuckles: each finger's outline, drawn thin and dark.
    crease = np.zeros_like(ms)
    for _, pa, pb, ra, rb, _, _ in drawn[:5]:
        _capsule(crease, (pa - off) / q, (pb - off) / q, ra / q, rb / q, outline=max(1, round(ra / q / 4)))
    msf = ms.astype(np.float32) / 255
    mvf = mv.astype(np.float32) / 255
    msf *= 1 - mvf
    alpha = np.maximum(msf, mvf)
    # Shading: rounded limbs darken towards their outline, and are lit from the light's side.
    sm = max(3, int(_context(scene).sprite_px / 3 / q)) | 1
    body = cv2.GaussianBlur(alpha, (sm, sm), 0) * (1 - 0.3 * crease.astype(np.float32) / 255)
    # Skin and cloth are not flat colour: a fine mottling.
    tex = np.random.default_rng([scene.seed, frame_key, 5]).standard_normal(body.shape, dtype=np.float32)
    body *= 1 + 0.03 * cv2.GaussianBlur(tex, (3, 3), 0)
    yy = np.arange(hh, dtype=np.float32)[:, None] * q + y0
    xx = np.arange(hw, dtype=np.float32)[None, :] * q + x0
    grad = 1 + 0.15 * ((xx - W / 2) / W * math.cos(li.light_azimuth) - (yy - H / 2) / H * math.sin(li.light_azimuth))
    shade = (0.5 + 0.5 * body) * grad
    # Lit like the rest of the frame (the layer under it already is), and as out of focus.
    lit = cv2.resize(_context(scene).gain[y0:y1, x0:x1], (hw, hh), interpolation=cv2.INTER_NEAREST)
    colour = (msf[..., None] * skin + mvf[..., None] * sleeve) * (shade[..., None] * lit.astype(np.float32) / 128)
    if scene.blur > 0.6:
        colour = cv2.GaussianBlur(colour, (0, 0), scene.blur / q)
        alpha = cv2.GaussianBlur(alpha, (0, 0), scene.blur / q)
    length = float(np.hypot(*smear)) / q
    if length > 1.0:
        # Motion blur: the hand smeared along its path during the exposure.
        k = math.ceil(length) * 2 + 1
        kernel = np.zeros((k, k), np.float32)
        c = k // 2
        d = smear / q / 2
        cv2.line(kernel, (round((c - d[0]) * 16), round((c - d[1]) * 16)), (round((c + d[0]) * 16),
                 round((c + d[1]) * 16)), 1.0, 1, cv2.LINE_AA, 4)
        kernel /= kernel.sum()
        colour = cv2.filter2D(colour, -1, kernel, borderType=cv2.BORDER_CONSTANT)
        alpha = cv2.filter2D(alpha, -1, kernel, borderType=cv2.BORDER_CONSTANT)
    colour = cv2.resize(colour, (hw * q, hh * q), interpolation=cv2.INTER_LINEAR)[:y1 - y0, :x1 - x0]
    alpha = cv2.resize(alpha, (hw * q, hh * q), interpolation=cv2.INTER_LINEAR)[:y1 - y0, :x1 - x0]
    roi = img[y0:y1, x0:x1]
    inv = 1 - alpha
    out = roi.astype(np.float32)
    out *= cv2.merge([inv, inv, inv])
    out += colour
    roi[:] = np.clip(out, 0, 255).astype(np.uint8)


def _capsule(mask: np.ndarray, pa: np.ndarray, pb: np.ndarray, ra: float, rb: float, outline: int = 0) -> None:
    """A tapered capsule from pa (radius ra) to pb (radius rb), antialiased, value 255 (filled, or its outline of
    the given thickness)."""
    d = pb - pa
    n = np.array([-d[1], d[0]]) / (np.linalg.norm(d) + 1e-9)
    if outline:
        for p1, p2 in ((pa + n * ra, pb + n * rb), (pa - n * ra, pb - n * rb)):
            cv2.line(mask, (round(p1[0] * 16), round(p1[1] * 16)), (round(p2[0] * 16), round(p2[1] * 16)), 255,
                     outline, cv2.LINE_AA, 4)
        cv2.circle(mask, (round(pb[0] * 16), round(pb[1] * 16)), round(rb * 16), 255, outline, cv2.LINE_AA, 4)
        return
    poly = np.array([pa + n * ra, pb + n * rb, pb - n * rb, pa - n * ra])
    cv2.fillConvexPoly(mask, np.round(poly * 16).astype(np.int32), 255, cv2.LINE_AA, 4)
    cv2.circle(mask, (round(pa[0] * 16), round(pa[1] * 16)), round(ra * 16), 255, -1, cv2.LINE_AA, 4)
    cv2.circle(mask, (round(pb[0] * 16), round(pb[1] * 16)), round(rb * 16), 255, -1, cv2.LINE_AA, 4)


# ---------------------------------------------------------------------------------------------------------------
# The camera's own degradations


def _light_and_optics(img: np.ndarray, scene: Scene) -> np.ndarray:
    """The scene's light (gradient, shadows, colour cast, glare) and defocus, on a whole frame."""
    ctx = _context(scene)
    cv2.multiply(img, ctx.gain, img, scale=1 / 128)
    if scene.sun is not None:
        cv2.multiply(img, _sun_map(scene), img, scale=1 / 128)
    if ctx.glare is not None:
        cv2.add(img, ctx.glare, img)
    if scene.blur > 0.3:
        img = cv2.GaussianBlur(img, (0, 0), scene.blur)
    return img


def _passing_shadow(img: np.ndarray, shade: tuple[float, float, float, float, float]) -> None:
    """A soft shadow (someone passing by or leaning over) at image fractions (x, y, rx, ry), darkening by depth."""
    H, W = img.shape[:2]
    gx, gy, rx, ry, depth = shade
    v, u = np.mgrid[0:36, 0:64].astype(np.float32)
    u, v = u / 63, v / 35
    m = 128 * (1 - depth * np.exp(-(((u - gx) / rx) ** 2 + ((v - gy) / ry) ** 2)))
    m = cv2.resize(m.astype(np.uint8), (W, H), interpolation=cv2.INTER_LINEAR)
    cv2.multiply(img, cv2.merge([m, m, m]), img, scale=1 / 128)


def _sensor(img: np.ndarray, scene: Scene, frame_key: int, exposure: float, jpeg_roundtrip: bool,
            shade: tuple[float, float, float, float, float] | None = None) -> np.ndarray:
    """Passing shadows, exposure drift, sensor noise and JPEG compression, per frame."""
    ctx = _context(scene)
    if shade is not None:
        _passing_shadow(img, shade)
    if abs(exposure - 1) > 1e-3:
        img = cv2.convertScaleAbs(img, alpha=exposure)
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


def _truth(view: _View, board: BoardLook) -> tuple[np.ndarray, np.ndarray]:
    points = view.project(printed_points(board))
    corners = points[[0, 8, 89, 81]]
    return corners, points


def render_position(squares: str, scene: Scene, *, offsets: Mapping[str, tuple[float, float]] | None = None,
                    hand: Hand | None = None, lifted: str | None = None, beside: Sequence[str] = ()) -> Rendered:
    """One camera frame of `squares` (90 chars, rank 9 first; X/x draw a random type of that colour).

    offsets: per point, a displacement (files, ranks) in grid units; without one a piece stands a little off its
    point as pieces do (scene.position_jitter). lifted: point whose piece is in the hand (not on the board; drawn
    between the fingers if a hand is given that holds nothing else). beside: FEN letters of captured pieces lying
    beside the board."""
    _check_squares(squares)
    if lifted is not None and hand is not None and hand.holding is None:
        held = _resolve_unknown(scene, squares)[point_index(lifted)]
        if held not in ".?":
            hand = replace(hand, holding=held)
    return _render(squares, scene, dict(offsets or {}), hand, lifted, tuple(beside), _context(scene).view, 0, 1.0,
                   True)


def _resolve_unknown(scene: Scene, squares: str) -> str:
    out = []
    for i, ch in enumerate(squares):
        if ch in "Xx":
            t = "KABNRCP"[int(_unit_hash(scene.seed, i, "X") * 7)]
            ch = t if ch == "X" else t.lower()
        out.append(ch)
    return "".join(out)


@functools.lru_cache(maxsize=4)
def _sheet_map(scene: Scene, view: _View) -> np.ndarray:
    """The plastic sheet's light for this pose, over the board sheet's outline (it covers the board, not the table)."""
    m, a = scene.board.sheet_margin, scene.board.aspect
    outline = view.project(np.array([[-m, -m, 0], [8 + m, -m, 0], [8 + m, 9 * a + m, 0], [-m, 9 * a + m, 0]], float))
    assert scene.sheet is not None
    return sheet_light(scene.sheet, scene.camera.width, scene.camera.height, outline)


@functools.lru_cache(maxsize=4)
def _sun_map(scene: Scene) -> np.ndarray:
    """The sun's gain over the frame, uint8 BGR with 128 = 1.0 (as the scene's own light map)."""
    assert scene.sun is not None
    return np.clip(sun_gain(scene.sun, scene.camera.width, scene.camera.height) * 128, 0, 255).astype(np.uint8)


def _layer(scene: Scene, view: _View, squares: str, offsets: tuple[tuple[str, tuple[float, float]], ...],
           lifted: str | None, beside: tuple[str, ...]) -> np.ndarray:
    img = _warped_plane(scene, view).copy()
    if scene.sheet is not None:  # the sheet lies on the board, under the pieces
        apply_sheet(img, _sheet_map(scene, view))
    pieces = (_board_pieces(scene, _resolve_unknown(scene, squares), dict(offsets), lifted)
              + _beside_pieces(scene, beside) + list(_neighbour_pieces(scene)))
    _draw_pieces(img, scene, view, pieces)
    return _light_and_optics(img, scene)


def _render(squares: str, scene: Scene, offsets: dict[str, tuple[float, float]], hand: Hand | None,
            lifted: str | None, beside: tuple[str, ...], view: _View, frame_key: int, exposure: float,
            jpeg_roundtrip: bool, layer_cache: dict | None = None,
            shade: tuple[float, float, float, float, float] | None = None) -> Rendered:
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
    img = _sensor(img, scene, frame_key, exposure, jpeg_roundtrip, shade)
    corners, points = _truth(view, scene.board)
    return Rendered(img, corners, points)




# ---------------------------------------------------------------------------------------------------------------
# Public: a game as video


@dataclass(frozen=True)
class FrameTruth:
    ply: int  # moves completed
    squares: str  # what stands on the board (a misplaced piece at its nominal point; a lifted one absent)
    hand_present: bool
    lifted: str | None  # point whose piece is in the hand
    misaligned: tuple[str, str] | None  # a piece left half-way: its nominal point and the other candidate (5.10)
    nudged: str | None
    stable: bool  # no hand, nothing moving
    event: str | None  # hand_enter | lift | capture_removed | place | nudge | hand_leave
    corners: tuple[tuple[float, float], ...] = ()  # a9, i9, i0, a0 in this frame (the camera may be bumped)
    points: tuple[tuple[float, float], ...] = ()  # the 90 points in squares order (a wavy sheet bows the grid)


@dataclass(frozen=True)
class VideoFrame:
    t_us: int
    image: np.ndarray
    truth: FrameTruth


def squares_from_fen(fen: str) -> str:
    """The 90-char squares string of a FEN's board field (rank 9 first)."""
    rows = fen.split()[0].split("/")
    if len(rows) != 10:
        raise RenderError(f"FEN board needs 10 ranks: {fen!r}")
    out = []
    for row in rows:
        line = "".join("." * int(ch) if ch.isdigit() else ch for ch in row)
        if len(line) != 9:
            raise RenderError(f"FEN rank {row!r} is not 9 points wide")
        out.append(line)
    squares = "".join(out)
    _check_squares(squares)
    return squares


def _neighbours(p: str) -> list[str]:
    f, r = FILES.index(p[0]), int(p[1])
    return [f"{FILES[f + df]}{r + dr}" for df, dr in ((1, 0), (-1, 0), (0, 1), (0, -1))
            if 0 <= f + df <= 8 and 0 <= r + dr <= 9]


@dataclass(frozen=True)
class _Spec:
    """What one frame shows (pure data; the renderer turns it into pixels)."""

    squares: str
    offsets: tuple[tuple[str, tuple[float, float]], ...]
    beside: tuple[str, ...]
    hand: Hand | None
    lifted: str | None
    truth: FrameTruth
    shake: tuple[float, float, float]


class _Timeline:
    """Builds the frame specs of a game: the state of the board and the hand, frame by frame."""

    def __init__(self, scene: Scene, squares: str, rng: np.random.Generator, fps: float) -> None:
        self.scene, self.rng, self.fps = scene, rng, fps
        self.board = list(squares)
        self.offsets: dict[str, tuple[float, float]] = {}
        self._last_items: tuple = ()
        self._last_sorted: tuple = ()
        self.beside: list[str] = []
        self.ply = 0
        self.misaligned: tuple[str, str] | None = None
        self.shake = (0.0, 0.0, 0.0)
        self.specs: list[_Spec] = []

    def _offsets_tuple(self) -> tuple[tuple[str, tuple[float, float]], ...]:
        # Sorted once per change of the offsets, not once per frame (long games have thousands of frames).
        items = tuple(self.offsets.items())
        if items != self._last_items:
            self._last_items, self._last_sorted = items, tuple(sorted(items))
        return self._last_sorted

    def n(self, seconds: float) -> int:
        return max(1, math.ceil(seconds * self.fps - 1e-9))

    def emit(self, hand: Hand | None, *, event: str | None = None, lifted: str | None = None,
             nudged: str | None = None) -> None:
        self.specs.append(_Spec(
            "".join(self.board), self._offsets_tuple(), tuple(self.beside), hand, lifted,
            FrameTruth(self.ply, "".join(self.board), hand is not None, lifted, self.misaligned, nudged,
                       hand is None, event),
            self.shake))

    def still(self, seconds: float) -> None:
        for _ in range(self.n(seconds)):
            self.emit(None)

    def settle(self, point: str) -> None:
        """A piece set down with ordinary care: a little off its point, as every real piece is."""
        j = self.scene.position_jitter
        self.offsets[point] = (float(self.rng.normal(0, j)), float(self.rng.normal(0, j)))

    def approach(self, side: str, target: tuple[float, float], angle: float, holding: str | None = None) -> None:
        """The hand comes in from the player's side towards target; the first frame is hand_enter."""
        k = self.n(float(self.rng.uniform(0.4, 0.9)))
        for i in range(k):
            reach = (i + 1) / (k + 1)
            self.emit(Hand(target, side, reach, holding, 1.2, angle), event="hand_enter" if i == 0 else None)

    def travel(self, side: str, a: tuple[float, float], b: tuple[float, float], angle: float, holding: str | None,
               lifted: str | None) -> None:
        dist = math.hypot(b[0] - a[0], b[1] - a[1])
        k = self.n(0.15 + 0.08 * dist) if dist > 0 else 0
        for i in range(k):
            u = (i + 1) / (k + 1)
            # the hand rises while carrying and comes down at the end
            self.emit(Hand((a[0] + (b[0] - a[0]) * u, a[1] + (b[1] - a[1]) * u), side, 1.0, holding,
                           0.9 + 0.8 * math.sin(math.pi * u), angle), lifted=lifted)

    def leave(self, side: str, target: tuple[float, float], angle: float) -> None:
        k = self.n(float(self.rng.uniform(0.3, 0.7)))
        for i in range(k):
            reach = 1 - (i + 1) / (k + 1)
            self.emit(Hand(target, side, reach, None, 1.3, angle))
        self.emit(None, event="hand_leave")

    def bump(self, chance: float) -> None:
        """A knock against the table moves the camera by a pixel or two (the detector must follow it)."""
        if self.rng.random() < chance:
            self.shake = (float(self.rng.normal(0, 1.2)), float(self.rng.normal(0, 1.2)),
                          float(self.rng.normal(0, 0.0015)))

    def nudge(self, side: str) -> None:
        """A piece touched and moved a little, no move (or a half-way piece pushed back onto its point)."""
        occupied = [point_name(i) for i, ch in enumerate(self.board) if ch != "."]
        if not occupied:
            return
        if self.misaligned is not None and self.rng.random() < 0.5:
            p = self.misaligned[0]
            new = (float(self.rng.normal(0, 0.03)), float(self.rng.normal(0, 0.03)))
        else:
            p = occupied[int(self.rng.integers(len(occupied)))]
            if self.misaligned is not None and p == self.misaligned[0]:
                return
            old = self.offsets.get(p, (0.0, 0.0))
            ang = self.rng.uniform(0, 2 * math.pi)
            step = self.rng.uniform(0.1, 0.22)
            new = (old[0] + step * math.cos(ang), old[1] + step * math.sin(ang))
            norm = math.hypot(*new)
            if norm > 0.3:  # still nominally on its point
                new = (new[0] * 0.3 / norm, new[1] * 0.3 / norm)
        target = (FILES.index(p[0]) + 0.0, float(p[1]))
        angle = float(self.rng.normal(0, 0.25))
        self.approach(side, target, angle)
        self.offsets[p] = new
        if self.misaligned is not None and p == self.misaligned[0]:
            self.misaligned = None
        self.emit(Hand(target, side, 1.0, None, 0.5, angle), event="nudge", nudged=p)
        self.leave(side, target, angle)

    def move(self, iccs: str, misplace_rate: float, half_way_share: float) -> None:
        src, dst = iccs[:2], iccs[2:4]
        si, di = point_index(src), point_index(dst)
        mover = self.board[si]
        if mover == ".":
            raise RenderError(f"move {iccs} (ply {self.ply + 1}): no piece on {src}")
        side = "red" if mover.isupper() else "black"
        a = (FILES.index(src[0]) + 0.0, float(src[1]))
        b = (FILES.index(dst[0]) + 0.0, float(dst[1]))
        angle = float(self.rng.normal(0, 0.3))
        self.approach(side, a, angle)
        # A half-way piece in the way is straightened by the mover's hand first (unseen under the hand).
        if self.misaligned is not None and (src in self.misaligned or dst in self.misaligned):
            self.settle(self.misaligned[0])
            self.misaligned = None
        self.board[si] = "."
        self.offsets.pop(src, None)
        self.emit(Hand(a, side, 1.0, mover, 1.0, angle), event="lift", lifted=src)
        self.travel(side, a, b, angle, mover, src)
        captured = self.board[di] if self.board[di] != "." else None
        if captured is not None:
            self.board[di] = "."
            self.offsets.pop(dst, None)
            self.emit(Hand(b, side, 1.0, mover, 0.8, angle), event="capture_removed", lifted=src)
        self.board[di] = mover
        self.ply += 1
        u = self.rng.random()
        if u < misplace_rate:
            empty = [q for q in _neighbours(dst) if self.board[point_index(q)] == "."]
            if self.misaligned is None and empty and self.rng.random() < half_way_share:
                # 5.10: left exactly between two points.
                q = empty[int(self.rng.integers(len(empty)))]
                df, dr = FILES.index(q[0]) - FILES.index(dst[0]), int(q[1]) - int(dst[1])
                self.offsets[dst] = (0.5 * df, 0.5 * dr)
                self.misaligned = (dst, q)
            else:
                ang = self.rng.uniform(0, 2 * math.pi)
                r = self.rng.uniform(0.14, 0.3)
                self.offsets[dst] = (r * math.cos(ang), r * math.sin(ang))
        else:
            self.settle(dst)
        self.bump(0.06 if self.scene.difficulty == "hard" else 0.0)
        self.emit(Hand(b, side, 1.0, captured, 0.6, angle), event="place")
        if captured is not None:
            # Put the taken piece beside the board, on the capturer's right.
            spot = (9.6, 1.0) if side == "red" else (-1.6, 8.0)
            self.travel(side, b, spot, angle, captured, None)
            self.beside.append(captured)
            self.emit(Hand(spot, side, 1.0, None, 0.8, angle))
            self.leave(side, spot, angle)
        else:
            self.leave(side, b, angle)


# A player thinks at most this long over one move in the videos (a standard game's longest thinks are minutes;
# longer still periods only add identical-looking frames).
MAX_THINK_S = 600.0


@dataclass(frozen=True)
class _Planned:
    spec: _Spec
    t_us: int
    exposure: float
    shade: tuple[float, float, float, float, float] | None


def _plan(start_fen: str, iccs_moves: Sequence[str], seed: int, scene: Scene, fps: float, misplace_rate: float,
          nudge_rate: float, half_way_share: float, think_s: float = 0.0) -> list[_Planned]:
    """Every frame of the video as data: what is on the board, where the hand is, the light, the time stamp."""
    if fps <= 0:
        raise RenderError(f"fps must be positive, not {fps}")
    if not 0 <= think_s <= MAX_THINK_S:
        raise RenderError(f"think_s must be within 0-{MAX_THINK_S:g} s, not {think_s}")
    rng = np.random.default_rng([seed, 0x6A4E])
    tl = _Timeline(scene, squares_from_fen(start_fen), rng, fps)
    for p in [point_name(i) for i, ch in enumerate(tl.board) if ch != "."]:
        tl.settle(p)
    tl.still(float(rng.uniform(1.0, 2.5)))
    for k, mv in enumerate(iccs_moves):
        if len(mv) != 4:
            raise RenderError(f"not an ICCS move: {mv!r} (ply {k + 1})")
        tl.move(mv.lower(), misplace_rate, half_way_share)
        tl.still(float(rng.uniform(1.0, 3.0)))
        if think_s:  # no random draw: a video without thinking stays byte for byte what it was
            tl.still(think_s)
        if rng.random() < nudge_rate:
            tl.nudge("red" if rng.random() < 0.5 else "black")
            tl.still(float(rng.uniform(1.0, 2.0)))
    # Light: a slow drift of exposure over the video (clouds, lamps warming up).
    n = len(tl.specs)
    t = np.arange(n) / fps
    phases = rng.uniform(0, 2 * math.pi, 3)
    periods = rng.uniform(20, 90, 3)
    drift = scene.drift * sum(np.sin(2 * math.pi * t / per + ph) for per, ph in zip(periods, phases, strict=True)) / 2
    exposure = 1 + drift
    shades: list[tuple[float, float, float, float, float] | None] = [None] * n
    jitter = np.zeros(n)
    if scene.difficulty == "hard":
        # The camera's auto-exposure reacts to a hand or a dark sleeve coming into the picture, a frame late.
        ae = float(rng.uniform(-0.05, 0.05))
        hand = np.array([spec.hand is not None for spec in tl.specs], float)
        exposure *= 1 + ae * (0.5 * hand + 0.5 * np.concatenate([[0.0], hand[:-1]]))
        # People pass by or lean over: a soft shadow crosses the picture in a few seconds, board untouched.
        for _ in range(int(rng.poisson(0.05 * len(iccs_moves) + 0.3))):
            start, dur = int(rng.integers(n)), max(2, round(float(rng.uniform(2, 5)) * fps))
            y0, y1 = rng.uniform(-0.2, 1.2, 2)
            rx, ry, depth = float(rng.uniform(0.2, 0.5)), float(rng.uniform(0.3, 0.7)), float(rng.uniform(0.1, 0.3))
            left = rng.random() < 0.5
            for k in range(dur):
                if start + k < n:
                    u = k / (dur - 1)
                    x = -0.4 + 1.8 * u if left else 1.4 - 1.8 * u
                    shades[start + k] = (x, float(y0 + (y1 - y0) * u), rx, ry, depth)
        # Frames are not captured on a perfect clock.
        jitter = rng.uniform(-1, 1, n) * min(6000.0, 2e5 / fps)
    return [_Planned(spec, round(i * 1e6 / fps + jitter[i]), float(exposure[i]), shades[i])
            for i, spec in enumerate(tl.specs)]


def _geometry(view: _View, board: BoardLook, memo: dict) -> tuple[tuple, tuple]:
    """(corners, points) as tuples, computed once per camera pose of a video."""
    key = _view_hash(view)
    if key not in memo:
        corners, points = _truth(view, board)
        memo[key] = (tuple((float(x), float(y)) for x, y in corners), tuple((float(x), float(y)) for x, y in points))
    return memo[key]


def render_game(start_fen: str, iccs_moves: Sequence[str], seed: int, *, fps: float = 4.0, difficulty: str = "hard",
                misplace_rate: float = 0.05, nudge_rate: float = 0.03, half_way_share: float = 0.35,
                scene: Scene | None = None, jpeg_roundtrip: bool = True, from_ply: int = 0,
                think_s: float = 0.0) -> Iterator[VideoFrame]:
    """A camera video of a game played on a rendered board, frame by frame, with the truth of each frame.

    Per move: the mover's hand enters (covering pieces), lifts the piece, carries it, removes a captured piece,
    places the piece (misplace_rate: off the point; of those, half_way_share exactly half-way to an empty
    neighbour and left there, 5.10), takes the captured piece beside the board, leaves; the board stays still
    1-3 s (enough for a stable snapshot at 4 fps), and think_s more while the next player thinks (a game's real
    pace: a rapid game's player thinks about 25 s a move). nudge_rate: a piece touched and moved a little, no move.
    The light drifts and the camera is sometimes bumped; in "hard" videos the auto-exposure also reacts to the
    hand, shadows of passers-by cross the picture while the board is still, and time stamps jitter by a few ms.
    Deterministic for (start_fen, moves, seed, options); `game_truth` gives the same truth without pixels.
    `from_ply`: the video from the first frame after the `from_ply`-th move with no hand in view (the board left
    still), its earlier frames planned but not drawn: every frame given is byte for byte the full video's (the
    whole video is planned as data first, and each frame is drawn from its plan and its index alone)."""
    scene = scene if scene is not None else random_scene(seed, difficulty=difficulty)
    plan = _plan(start_fen, iccs_moves, seed, scene, fps, misplace_rate, nudge_rate, half_way_share, think_s)
    if not 0 <= from_ply <= len(iccs_moves):
        raise RenderError(f"from_ply must be within the game's {len(iccs_moves)} moves, not {from_ply}")
    first = next(i for i, f in enumerate(plan) if f.spec.truth.ply >= from_ply and f.spec.hand is None)
    base_view = _context(scene).view
    cache: dict = {}
    memo: dict = {}
    # The shutter is open 1/30 to 1/100 s: a moving hand is smeared by that share of its speed.
    shutter = 0.0 if scene.difficulty == "plain" else 1 / (30 + 70 * _unit_hash(scene.seed, "shutter"))
    for i, f in enumerate(plan):
        if i < first:
            continue
        spec = f.spec
        view = base_view if spec.shake == (0.0, 0.0, 0.0) else base_view.shaken(*spec.shake)
        hand = spec.hand
        if hand is not None and shutter > 0 and i > 0 and plan[i - 1].spec.hand is not None:
            now, _ = _hand_geometry(scene, hand)
            before, _ = _hand_geometry(scene, plan[i - 1].spec.hand)
            hand = replace(hand, motion=tuple(float(v) for v in (now - before) * fps * shutter))
        r = _render(spec.squares, scene, dict(spec.offsets), hand, spec.lifted, spec.beside, view, i,
                    f.exposure, jpeg_roundtrip, cache, f.shade)
        corners, points = _geometry(view, scene.board, memo)
        yield VideoFrame(f.t_us, r.image, replace(spec.truth, corners=corners, points=points))


def game_truth(start_fen: str, iccs_moves: Sequence[str], seed: int, *, fps: float = 4.0, difficulty: str = "hard",
               misplace_rate: float = 0.05, nudge_rate: float = 0.03, half_way_share: float = 0.35,
               scene: Scene | None = None, think_s: float = 0.0) -> list[tuple[int, FrameTruth]]:
    """(t_us, truth) of every frame `render_game` would draw with the same arguments, without drawing it:
    for checking a tracker's events against long runs of games cheaply."""
    scene = scene if scene is not None else random_scene(seed, difficulty=difficulty)
    plan = _plan(start_fen, iccs_moves, seed, scene, fps, misplace_rate, nudge_rate, half_way_share, think_s)
    base_view = _fit_view(scene.camera, scene.board)
    out = []
    memo: dict = {}
    views: dict = {(0.0, 0.0, 0.0): base_view}
    for f in plan:
        if f.spec.shake not in views:
            views[f.spec.shake] = base_view.shaken(*f.spec.shake)
        corners, points = _geometry(views[f.spec.shake], scene.board, memo)
        out.append((f.t_us, replace(f.spec.truth, corners=corners, points=points)))
    return out


# Settings that make finding the board harder than a difficulty's own draw, for the board finder's tests and
# bench (bench/detect_rendered.py --settings): each one changes only what its name says about a scene.
FINDING_SETTINGS = ("as drawn", "turned", "filling", "small", "hidden lines", "clutter")


def finding_scene(scene: Scene, setting: str, seed: int) -> Scene:
    """`scene` changed for one board-finding difficulty of real pictures (FINDING_SETTINGS):
    - "turned": the camera on a short side, so that the grid's long side runs across the picture;
    - "filling": the board sheet cut by the picture's edges, the grid reaching close to them;
    - "small": a small picture (an app's screenshot, a thumbnail: 220..360 pixels) of a board filling it;
    - "hidden lines": bright glare spots (a plastic sheet over the board) washing out parts of several lines;
    - "clutter": a busy table (checks or stripes) with many things lying on it."""
    rng = np.random.default_rng([seed, FINDING_SETTINGS.index(setting), 0x46494E44])
    cam, board, light = scene.camera, scene.board, scene.light
    if setting == "turned":
        cam = replace(cam, azimuth_deg=float(rng.choice([90.0, 270.0]) + rng.normal(0, 6)))
    elif setting == "filling":
        # the sheet's margin spans about 1.3 of its 10.6 spacings: a fill of 1.08..1.2 leaves the grid's outer
        # lines a few per cent of the picture from its edges
        cam = replace(cam, fill=float(rng.uniform(1.08, 1.2)), shift=(0.0, 0.0))
    elif setting == "small":
        w = int(rng.integers(220, 361))
        cam = replace(cam, width=w, height=int(w * rng.uniform(0.95, 1.2)), fill=float(rng.uniform(1.0, 1.15)),
                      tilt_deg=float(rng.uniform(0, 8)), shift=(0.0, 0.0))
    elif setting == "hidden lines":
        # spots about the board's middle, a few spacings across, bright enough to wash out the print under them
        spots = tuple((float(rng.uniform(0.3, 0.7)), float(rng.uniform(0.3, 0.7)), float(rng.uniform(0.05, 0.12)),
                       float(rng.uniform(0.03, 0.1)), float(rng.uniform(220, 255)))
                      for _ in range(int(rng.integers(3, 6))))
        light = replace(light, glare=light.glare + spots)
        board = replace(board, creases=max(board.creases, 4))
    elif setting == "clutter":
        board = replace(board, clutter=8, table=str(rng.choice(["cloth_checks", "cloth_stripes", "wood"])))
    elif setting != "as drawn":
        raise RenderError(f"setting must be one of {FINDING_SETTINGS}, not {setting!r}")
    return replace(scene, camera=cam, board=board, light=light)


__all__ = ["FINDING_SETTINGS", "Camera", "FrameTruth", "Hand", "Lighting", "RenderError", "Rendered", "Scene",
           "VideoFrame", "add_arguments", "finding_scene", "game_truth", "jpeg", "main_render", "random_scene",
           "render_game", "render_position", "squares_from_fen"]
