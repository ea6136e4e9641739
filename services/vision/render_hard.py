"""The renderer's hard options: what real photos of boards showed and vision failed on (issue 41), each a named
option with its physical meaning, drawn per seed over realistic ranges; the preset `hard` turns several on at once.

    scene = harden(random_scene(seed, difficulty="hard"), preset("hard", seed, crops=".../piece_crops/valid"))
    scene = harden(random_scene(seed, difficulty="easy"), draw_options(["tall pieces"], seed))  # one alone

The options (HARD_OPTIONS):
- "tall pieces": wooden pieces 0.35..0.6 of their diameter high (real sets: 3.5-4 cm across, 1.5-2.2 cm high);
  the camera model projects the top face at its height, so at an angle it stands off its point and covers the
  neighbour's point, and the side wall, shaded by the light's direction, shows below it.
- "plastic sheet": a clear sheet over the board: lamps mirrored as glare spots and streaks that wash out lines and
  pieces' feet, a window mirrored over a large part of the board (6 sheets in 10), wrinkles catching the light, a
  veil over the print.
- "outdoor sun": direct sun: a hard shadow edge or leaves' dapples over the board, warm sunlit parts, blue shade,
  long hard piece shadows from a low sun.
- "dark inks": Black's characters in dark green or blue-black ink instead of black.
- "light on dark": light characters on dark (black, green, navy) discs for Black, on red or light discs for Red.
- "steep camera": a phone held 35..50 degrees from straight above.
- "turned picture": the picture turned a quarter, a half or three quarters (a webcam on its side, a phone held
  either way, a board with Black at the bottom of the picture).
- "filling": the grid spanning 90..98 % of the picture's shorter side (the sheet's edges cut off).
- "small frame": a small picture (a web thumbnail, an old webcam: 320x240 .. 480x360).
- "busy background": a glass table mirroring windows and lamps, wood grain or checked or striped cloth, and many
  things lying about (score sheets, pens, phones, cups, clocks).
- "real tops": each piece's top face cut from a real photograph of a piece of its kind (../shared/data/piece_crops,
  CC BY 4.0), so ink, ring, wear, light and blur are real (needs `crops`, a split folder; skipped without it).
- "heavy glare": a plastic sheet mirroring several lamps over the board's middle at once, near white, with a window
  and many wrinkles: with the pieces standing on the lines, several inner lines show no print over half their length.
- "paper print": a real paper board's printing: thin lines (0.6..1.5 % of a spacing), the file numbers printed
  along both sides, a double outer border, position marks, many folds and creases, and the sheet curled (the
  printed lines bow by up to 0.05 spacing, so the grid is no longer one homography).
- "cut picture": the picture cut through the board: the grid spans 1.0..1.08 of the picture's tighter side and
  is pushed towards one or two edges, so part of an outer rank or file (and the pieces on it) is out of the picture.
- "cut margin": a venue camera framed tight on the board, off centre: the grid spans 0.76..0.82 of the picture's
  tighter side, pushed towards one or two edges by 0.2..0.4 of the room (in about 4 scenes in 10 the picture
  cuts the sheet's margin beyond the grid), every point's top face in view, tall pieces leaning out included.
  This, not "cut picture", is the preset's: a camera that misses points cannot follow a game there, and the
  tracker reports it at calibration (a CameraFault naming the points) instead of guessing; the preset measures
  what a venue would run, the points all in view, and "cut picture" is checked on its own.
- "tight crop": an app's screenshot or a thumbnail cut to the board: 200..300 pixels wide, seen straight from
  above, the grid spanning 88..96 % of the tighter side (its outer lines a third to half a spacing from the edges).
Pure: a seed and names in, values out; `harden` returns a new Scene.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, replace

import numpy as np

from xqarb.vision.render import RenderError, Scene, _tone
from xqarb.vision.render_assets import BoardLook
from xqarb.vision.render_effects import PlasticSheet, Sunlight

HARD_OPTIONS = ("tall pieces", "plastic sheet", "outdoor sun", "dark inks", "light on dark", "steep camera",
                "turned picture", "filling", "small frame", "busy background", "real tops",
                "heavy glare", "paper print", "cut picture", "tight crop", "cut margin")
# The preset's options in the order it draws them: "cut margin" where "cut picture" was (the same draws per seed
# for every other option), as the preset keeps every point in the picture (see "cut margin").
PRESET_OPTIONS = tuple("cut margin" if o == "cut picture" else o for o in HARD_OPTIONS[:15])

# The preset `hard`: how often each option is on (per seed), about how often real venue and phone photos show it.
HARD_SHARE = {"tall pieces": 0.7, "plastic sheet": 0.45, "outdoor sun": 0.25, "dark inks": 0.3,
              "light on dark": 0.15, "steep camera": 0.5, "turned picture": 0.35, "filling": 0.25,
              "small frame": 0.2, "busy background": 0.5, "real tops": 0.5,
              "heavy glare": 0.15, "paper print": 0.3, "cut margin": 0.1, "tight crop": 0.1}
PRESETS = ("hard",)


@dataclass(frozen=True)
class HardOptions:
    """The hard options of one scene (None / 0 / False: as the scene was drawn)."""

    piece_height: float | None = None  # a piece's height over its diameter
    wall_shade: float = 0.0  # side wall shading by the light's direction, 0..1
    sheet: PlasticSheet | None = None
    sun: Sunlight | None = None
    black_ink: tuple[int, int, int] | None = None  # BGR of Black's characters
    light_on_dark: tuple[tuple[int, int, int], tuple[int, int, int] | None, tuple[int, int, int]] | None = None
    tilt_deg: float | None = None  # the camera's axis from straight down
    turn: int = 0  # quarter turns of the picture, clockwise
    grid_span: float | None = None  # the grid over the picture's tighter side (filling the picture)
    frame: tuple[int, int] | None = None  # (width, height) of a small picture
    fill: float | None = None  # the sheet over the picture's tighter side, for a small picture
    background: tuple[str, tuple[int, int, int], int] | None = None  # table kind, its base colour, clutter count
    real_tops: str | None = None  # piece_crops split folder
    print_look: tuple[tuple[str, object], ...] | None = None  # BoardLook fields of a paper board's printing
    cut: tuple[float, float, float] | None = None  # grid span over the tighter side, shift x, y (cut picture)
    crop: tuple[int, int, float, float] | None = None  # width, height, grid span, tilt (tight crop)
    margin_shift: tuple[float, float] | None = None  # the grid (grid_span) pushed towards edges (cut margin)


def _rng(name: str, seed: int) -> np.random.Generator:
    # One stream per option, so that turning one option on does not change how another is drawn for a seed.
    return np.random.default_rng([seed, HARD_OPTIONS.index(name), 0x484152])


def _glare_spots(rng: np.random.Generator, count: tuple[int, int], centre: tuple[float, float],
                 length: tuple[float, float], width: tuple[float, float],
                 brightness: tuple[float, float]) -> tuple[tuple[float, ...], ...]:
    """Lamps mirrored in a sheet: (x, y, length, width, angle, brightness) each, positions in board fractions."""
    return tuple((float(rng.uniform(*centre)), float(rng.uniform(*centre)), float(rng.uniform(*length)),
                  float(rng.uniform(*width)), float(rng.uniform(0, math.pi)), float(rng.uniform(*brightness)))
                 for _ in range(int(rng.integers(*count))))


def _creases(rng: np.random.Generator, count: tuple[int, int], length: tuple[float, float],
             strength: tuple[float, float]) -> tuple[tuple[float, ...], ...]:
    """Wrinkles: (x0, y0, x1, y1, bend, strength) each, straight segments in board fractions."""
    creases = []
    for _ in range(int(rng.integers(*count))):
        x0, y0 = rng.uniform(0.15, 0.85, 2)
        ang, ln = rng.uniform(0, math.pi), rng.uniform(*length)
        creases.append((float(x0), float(y0), float(x0 + ln * math.cos(ang)), float(y0 + ln * math.sin(ang)),
                        float(rng.uniform(-0.12, 0.12)), float(rng.uniform(*strength))))
    return tuple(creases)


def _sheet(rng: np.random.Generator) -> PlasticSheet:
    glare = _glare_spots(rng, (1, 4), (0.25, 0.75), (0.06, 0.35), (0.02, 0.08), (110, 255))
    creases = _creases(rng, (2, 7), (0.1, 0.5), (40, 120))
    haze = float(rng.uniform(6, 30))
    # A separate stream: the window was added after the spots and wrinkles, whose draws stay as they were.
    wrng = np.random.default_rng([int(rng.integers(2**31)), 0x57494E])
    windows = tuple((float(wrng.uniform(0.3, 0.7)), float(wrng.uniform(0.3, 0.7)), float(wrng.uniform(0.2, 0.5)),
                     float(wrng.uniform(0.15, 0.4)), float(wrng.uniform(-0.4, 0.4)), float(wrng.uniform(70, 170)))
                    for _ in range(int(wrng.random() < 0.6)))
    return PlasticSheet(glare, creases, haze, windows)


def _heavy_glare(rng: np.random.Generator) -> PlasticSheet:
    """Several lamps mirrored over the board's middle, near white (the print under their cores gone), a window,
    many wrinkles and a strong veil: what a sheet under a room's ceiling lights shows from a phone's angle."""
    glare = _glare_spots(rng, (3, 7), (0.3, 0.7), (0.1, 0.32), (0.03, 0.08), (200, 255))
    creases = _creases(rng, (5, 10), (0.15, 0.6), (80, 160))
    window = ((float(rng.uniform(0.35, 0.65)), float(rng.uniform(0.35, 0.65)), float(rng.uniform(0.25, 0.5)),
               float(rng.uniform(0.2, 0.4)), float(rng.uniform(-0.4, 0.4)), float(rng.uniform(70, 140))),)
    return PlasticSheet(glare, creases, float(rng.uniform(15, 35)), window)


def _paper_print(rng: np.random.Generator) -> dict:
    """BoardLook fields of a printed paper board (a magazine's, a club's cheap sheet): see HARD_OPTIONS' notes."""
    amp = float(rng.uniform(0.02, 0.05))  # spacings: a curled sheet's lines bow by this much
    wave = tuple((amp * float(rng.uniform(0.4, 1)), amp * float(rng.uniform(0.4, 1)), float(rng.uniform(-0.9, 0.9)),
                  float(rng.uniform(-0.9, 0.9)), float(rng.uniform(0, 2 * math.pi))) for _ in range(2))
    return {"material": "paper", "base": _tone(rng, (235, 242, 245), (205, 228, 238), (220, 232, 236), lo=0.85,
                                               hi=1.04),
            "line_width": float(rng.uniform(0.006, 0.015)), "frame_gap": float(rng.uniform(0.15, 0.45)),
            "frame_width": float(rng.uniform(0.03, 0.07)), "double_frame": True, "numbers": True,
            "marks": str(rng.choice(["corners", "cross"])), "creases": int(rng.integers(4, 9)),
            "texture": float(rng.uniform(1.0, 1.6)), "wave": wave}


def _sun(rng: np.random.Generator, seed: int) -> Sunlight:
    edge = None
    if rng.random() < 0.7:
        edge = (float(rng.uniform(0.2, 0.8)), float(rng.uniform(0.2, 0.8)), float(rng.uniform(0, 2 * math.pi)),
                float(rng.choice([0.0, rng.uniform(0.005, 0.02)])))
    dapples = tuple((float(rng.uniform(0.1, 0.9)), float(rng.uniform(0.1, 0.9)), float(rng.uniform(0.02, 0.07)))
                    for _ in range(int(rng.integers(0 if edge else 3, 7))))
    return Sunlight(edge, dapples, float(rng.uniform(0.3, 0.55)), float(rng.uniform(0.8, 3.5)),
                    float(rng.uniform(1.05, 1.3)), seed)


def _draw_one(name: str, seed: int, crops: str | None) -> dict:
    """The fields of HardOptions that option `name` sets, drawn for `seed`."""
    if name not in HARD_OPTIONS:
        raise RenderError(f"hard option must be one of {HARD_OPTIONS}, not {name!r}")
    rng = _rng(name, seed)
    if name == "tall pieces":
        return {"piece_height": float(rng.uniform(0.35, 0.6)), "wall_shade": float(rng.uniform(0.6, 1.0))}
    if name == "plastic sheet":
        return {"sheet": _sheet(rng)}
    if name == "outdoor sun":
        return {"sun": _sun(rng, seed)}
    if name == "dark inks":
        green = rng.random() < 0.5
        ink = (_tone(rng, (45, 80, 15), (35, 65, 25), lo=0.75, hi=1.2) if green
               else _tone(rng, (80, 35, 20), (65, 30, 35), lo=0.75, hi=1.2))
        return {"black_ink": ink}
    if name == "light on dark":
        dark = _tone(rng, (35, 35, 35), (40, 70, 35), (80, 40, 25), lo=0.7, hi=1.3)
        red = _tone(rng, (40, 40, 175), (50, 45, 150)) if rng.random() < 0.5 else None
        return {"light_on_dark": (dark, red, _tone(rng, (215, 230, 238), (120, 200, 230), (240, 240, 240)))}
    if name == "steep camera":
        return {"tilt_deg": float(rng.uniform(35, 50))}
    if name == "turned picture":
        return {"turn": int(rng.integers(1, 4))}
    if name == "filling":
        return {"grid_span": float(rng.uniform(0.9, 0.98))}
    if name == "small frame":
        w, h = [(480, 360), (400, 300), (320, 240)][int(rng.integers(3))]
        return {"frame": (w, h), "fill": float(rng.uniform(0.75, 0.95))}
    if name == "busy background":
        kind = str(rng.choice(["glass", "glass", "wood", "cloth_checks", "cloth_stripes"]))
        base = {"glass": _tone(rng, (35, 40, 45), (50, 55, 50), (25, 30, 30), lo=0.7, hi=1.3),
                "wood": _tone(rng, (40, 70, 110), (60, 100, 150), (30, 45, 70), lo=0.7, hi=1.2)}.get(
            kind, _tone(rng, (120, 120, 120), (40, 40, 150), (60, 90, 120), lo=0.6, hi=1.15))
        return {"background": (kind, base, int(rng.integers(5, 10)))}
    if name == "real tops":
        return {"real_tops": crops} if crops else {}
    if name == "heavy glare":
        return {"sheet": _heavy_glare(rng)}
    if name == "paper print":
        return {"print_look": tuple(_paper_print(rng).items())}
    if name == "cut picture":
        # pushed towards a side (|shift| 0.6..1 of the room) on one axis or both
        sx, sy = (float(rng.choice([-1, 1]) * rng.uniform(0.6, 1.0)) * (rng.random() < p) for p in (0.7, 0.7))
        return {"cut": (float(rng.uniform(1.0, 1.08)), sx, sy if sx or sy else 1.0)}
    if name == "cut margin":
        # (measured on 24 scenes, half with tall pieces seen steeply: no top face out of the picture; pushed by
        # 0.3..0.5 of the room, 2 scenes lost points at the far rank, where tall tops lean out)
        sx, sy = (float(rng.choice([-1, 1]) * rng.uniform(0.2, 0.4)) * (rng.random() < p) for p in (0.7, 0.7))
        return {"grid_span": float(rng.uniform(0.76, 0.82)), "margin_shift": (sx, sy if sx or sy else 1.0)}
    if name == "tight crop":
        w = int(rng.integers(200, 301))
        return {"crop": (w, int(w * rng.uniform(0.85, 1.15)), float(rng.uniform(0.88, 0.96)),
                         float(rng.uniform(0.0, 3.0)))}
    raise AssertionError(name)  # every name of HARD_OPTIONS is drawn above


def draw_options(names: Iterable[str], seed: int, *, crops: str | None = None) -> HardOptions:
    """The named options, each drawn for `seed` over its realistic range (the others off)."""
    fields: dict = {}
    for name in names:
        fields.update(_draw_one(name, seed, crops))
    return HardOptions(**fields)


def preset(name: str, seed: int, *, crops: str | None = None) -> HardOptions:
    """A preset's options for `seed`: "hard" turns each option on with its HARD_SHARE, at least one."""
    if name not in PRESETS:
        raise RenderError(f"preset must be one of {PRESETS}, not {name!r}")
    rng = np.random.default_rng([seed, 0x505245])
    on = [o for o in PRESET_OPTIONS if rng.random() < HARD_SHARE[o]]
    if not on:
        on = [PRESET_OPTIONS[int(rng.integers(len(PRESET_OPTIONS)))]]
    return draw_options(on, seed, crops=crops)


def parse(text: str, seed: int, *, crops: str | None = None) -> HardOptions:
    """`--hard` of the command line: a preset's name, or option names separated by commas."""
    text = text.strip()
    if text in PRESETS:
        return preset(text, seed, crops=crops)
    return draw_options([t.strip() for t in text.split(",") if t.strip()], seed, crops=crops)


def _grid_to_sheet(board: BoardLook) -> float:
    """A camera's fill for a grid spanning the whole tighter side: fill is of the sheet's outline (the grid plus its
    margin and 0.3 spacing more each side, render._fit_view)."""
    m, a = board.sheet_margin + 0.3, board.aspect
    return min((8 + 2 * m) / 8, (9 * a + 2 * m) / (9 * a))


def harden(scene: Scene, opts: HardOptions) -> Scene:
    """`scene` with the hard options `opts` on; everything they do not touch as drawn."""
    cam, board, pieces, light = scene.camera, scene.board, scene.pieces, scene.light
    out: dict = {}
    if opts.piece_height is not None:
        out["piece_height"] = opts.piece_height * scene.piece_diameter
    if opts.wall_shade:
        out["wall_shade"] = opts.wall_shade
    if opts.sheet is not None:
        out["sheet"] = opts.sheet
    if opts.sun is not None:
        out["sun"] = opts.sun
        # A low sun: long, hard piece shadows, and daylight's colour.
        rng = np.random.default_rng([opts.sun.seed, 0x4C4F57])
        light = replace(light, light_elevation=float(rng.uniform(0.45, 0.9)),
                        shadow_strength=float(rng.uniform(0.6, 0.85)), cast=(1.04, 1.0, 0.96))
    if opts.black_ink is not None:
        pieces = replace(pieces, black_ink=opts.black_ink)
    if opts.light_on_dark is not None:
        dark, red, ink = opts.light_on_dark
        pieces = replace(pieces, black_face=dark, red_face=red, light_ink=ink)
    if opts.tilt_deg is not None:
        cam = replace(cam, tilt_deg=opts.tilt_deg)
    if opts.turn:
        # the camera rolled the other way turns the picture clockwise
        cam = replace(cam, roll_deg=cam.roll_deg - 90.0 * (opts.turn % 4))
    if opts.grid_span is not None:
        cam = replace(cam, fill=opts.grid_span * _grid_to_sheet(board), shift=opts.margin_shift or (0.0, 0.0))
    if opts.frame is not None:
        cam = replace(cam, width=opts.frame[0], height=opts.frame[1], fill=opts.fill or cam.fill, shift=(0.0, 0.0))
    if opts.background is not None:
        kind, base, clutter = opts.background
        board = replace(board, table=kind, table_base=base, clutter=clutter)
    if opts.real_tops is not None:
        out["real_tops"] = opts.real_tops
    if opts.print_look is not None:
        board = replace(board, **dict(opts.print_look))
    if opts.cut is not None:
        span, sx, sy = opts.cut
        cam = replace(cam, fill=span * _grid_to_sheet(board), shift=(sx, sy))
    if opts.crop is not None:
        w, h, span, tilt = opts.crop
        cam = replace(cam, width=w, height=h, fill=span * _grid_to_sheet(board), shift=(0.0, 0.0), tilt_deg=tilt)
    return replace(scene, camera=cam, board=board, pieces=pieces, light=light, **out)


__all__ = ["HARD_OPTIONS", "HARD_SHARE", "PRESETS", "PRESET_OPTIONS", "HardOptions", "draw_options", "harden", "parse",
           "preset"]
