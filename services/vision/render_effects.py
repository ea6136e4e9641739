"""What real photos of boards show and the renderer's own draws did not: the light of a plastic sheet laid over the
board, and direct sun outdoors. Image-space maps, drawn once per scene and camera pose (`render.py` caches them).

Both are values (frozen dataclasses of numbers) so that a `Scene` holding them stays hashable; `render_hard.py`
draws them per seed. Pure: numbers in, arrays out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

# Glare and the sun's penumbra are smooth: computed on a grid this many times coarser than the picture, then
# scaled up (a 1706x1280 frame costs a few milliseconds, not a hundred).
COARSE = 4


@dataclass(frozen=True)
class PlasticSheet:
    """A clear plastic sheet laid over a paper board (venues protect paper boards so).

    It mirrors the room's lamps and windows as glare: spots and streaks, near white at their core, that wash out
    the print and the pieces' feet under them; its wrinkles catch the light as thin bright lines with a dark side;
    and it veils the whole board a little (the room reflected faintly everywhere), lowering the print's contrast.
    glare: (x, y, length, width, angle, strength): centre in image fractions, length and width in fractions of the
    picture's diagonal, angle of the long axis (rad), strength in grey levels added at the core (150..255 saturate).
    creases: (x0, y0, x1, y1, bow, strength): a wrinkle from one end to the other (image fractions), bowed sideways
    by `bow` (fraction of its length), as bright as `strength` grey levels.
    haze: grey levels added over the whole sheet.
    windows: (x, y, width, height, angle, strength): a window mirrored in the sheet, a soft-edged bright rectangle
    over a large part of the board (centre and size in image fractions, angle in rad, strength in grey levels)."""

    glare: tuple[tuple[float, float, float, float, float, float], ...]
    creases: tuple[tuple[float, float, float, float, float, float], ...]
    haze: float
    windows: tuple[tuple[float, float, float, float, float, float], ...] = ()


@dataclass(frozen=True)
class Sunlight:
    """Direct sun outdoors: a hard-edged shadow (a building, a parasol, a tree's leaves) over part of the picture.

    Sunlit parts are brighter and warm; shaded parts are lit by the blue sky alone, `shade` times as bright.
    edge: the shadow's boundary as (x, y, angle, wobble): a point on it (image fractions), the direction the shade
    lies in from it (rad, image frame), and how much the edge wanders (fraction of the picture: a tree's edge wobbles,
    a wall's does not); None: no large shadow. dapples: (x, y, radius) sunlit holes of a tree's shade, or shaded
    blobs of leaves where there is no edge (image fractions). penumbra: blur of the shadow's edge in pixels (the
    sun is half a degree across: a few pixels at a board's distance). sun_gain: brightness of the sunlit parts
    over the scene's exposure."""

    edge: tuple[float, float, float, float] | None
    dapples: tuple[tuple[float, float, float], ...]
    shade: float
    penumbra: float
    sun_gain: float
    seed: int


def _soft_spot(u: np.ndarray, v: np.ndarray, spot: tuple[float, float, float, float, float, float],
               diag: float, aspect: float) -> np.ndarray:
    """One glare spot or streak: a flat-topped core that saturates, and a dim halo around it."""
    x, y, length, width, ang, strength = spot
    du, dv = (u - x) * aspect, v - y  # in units of the picture's height, so that angles are true
    c, s = math.cos(ang), math.sin(ang)
    a = (du * c + dv * s) / max(1e-4, length * diag / 2)
    b = (-du * s + dv * c) / max(1e-4, width * diag / 2)
    r2 = a * a + b * b
    return strength * (np.exp(-(r2 ** 2)) + 0.18 * np.exp(-np.sqrt(r2) / 1.5))


def sheet_light(sheet: PlasticSheet, width: int, height: int, outline: np.ndarray) -> np.ndarray:
    """The light a plastic sheet adds to the picture (uint8 BGR, to be added), inside `outline` (the sheet's four
    corners in image pixels) and nowhere else."""
    gw, gh = max(2, width // COARSE), max(2, height // COARSE)
    v, u = np.mgrid[0:gh, 0:gw].astype(np.float32)
    u, v = u / (gw - 1), v / (gh - 1)
    aspect = width / height
    diag = math.hypot(aspect, 1.0)
    add = np.full((gh, gw), sheet.haze, np.float32)
    for spot in sheet.glare:
        add += _soft_spot(u, v, spot, diag, aspect)
    for x, y, w, h, ang, strength in sheet.windows:
        du, dv = (u - x) * aspect, v - y
        c, s_ = math.cos(ang), math.sin(ang)
        a = np.abs(du * c + dv * s_) / max(1e-4, w * aspect / 2)
        b = np.abs(-du * s_ + dv * c) / max(1e-4, h / 2)
        add += strength / (1 + np.exp(np.minimum((np.maximum(a, b) - 1) * 12, 60)))  # flat inside, soft frame
    add = cv2.resize(add, (width, height), interpolation=cv2.INTER_LINEAR)
    # Wrinkles: a thin bright ridge with a darker valley beside it, drawn at full resolution (they are thin).
    ridge = np.zeros((height, width), np.float32)
    valley = np.zeros((height, width), np.float32)
    size = np.array([width, height], float)
    for x0, y0, x1, y1, bow, strength in sheet.creases:
        p0, p1 = np.array([x0, y0]) * size, np.array([x1, y1]) * size
        d = p1 - p0
        n = np.array([-d[1], d[0]])
        t = np.linspace(0, 1, 24)[:, None]
        pts = p0 + d * t + n * bow * 4 * t * (1 - t)
        thick = max(1, round(min(width, height) / 400))
        cv2.polylines(ridge, [np.round(pts * 16).astype(np.int32)], False, strength, thick, cv2.LINE_AA, 4)
        side = n / (np.linalg.norm(n) + 1e-9) * (thick + 1.5)
        cv2.polylines(valley, [np.round((pts + side) * 16).astype(np.int32)], False, strength * 0.35, thick + 1,
                      cv2.LINE_AA, 4)
    add += cv2.GaussianBlur(ridge, (0, 0), 0.8)
    mask = np.zeros((height, width), np.uint8)
    cv2.fillConvexPoly(mask, np.round(np.asarray(outline, float) * 16).astype(np.int32), 255, cv2.LINE_AA, 4)
    m = mask.astype(np.float32) / 255
    # The valley darkens: returned as a negative part folded into a signed map, applied by the caller in two steps.
    out = np.clip(add * m, 0, 255).astype(np.uint8)
    dark = np.clip(cv2.GaussianBlur(valley, (0, 0), 1.0) * m, 0, 255).astype(np.uint8)
    return np.stack([out, dark], 0)


def apply_sheet(img: np.ndarray, light: np.ndarray) -> None:
    """Add a `sheet_light` map to img in place: the glare, haze and ridges added, the valleys subtracted."""
    add, dark = light[0], light[1]
    cv2.add(img, cv2.merge([add, add, add]), img)
    cv2.subtract(img, cv2.merge([dark, dark, dark]), img)


def sun_gain(sun: Sunlight, width: int, height: int) -> np.ndarray:
    """The sun's light over the picture as a per-channel gain (float32 H x W x 3, 1.0 = the scene's own light):
    sunlit parts `sun_gain` and warm, shaded parts `shade` and blue (sky light)."""
    gw, gh = max(2, width // COARSE), max(2, height // COARSE)
    v, u = np.mgrid[0:gh, 0:gw].astype(np.float32)
    u, v = u / (gw - 1), v / (gh - 1)
    aspect = width / height
    lit = np.ones((gh, gw), np.float32)
    rng = np.random.default_rng([sun.seed, 0x53554E])
    if sun.edge is not None:
        x, y, ang, wobble = sun.edge
        along = -(u - x) * aspect * math.sin(ang) + (v - y) * math.cos(ang)
        across = (u - x) * aspect * math.cos(ang) + (v - y) * math.sin(ang)
        phases = rng.uniform(0, 2 * math.pi, 3)
        wander = wobble * sum(np.sin(along * k * 9 + ph) / k for k, ph in zip((1, 2.3, 5.1), phases, strict=True))
        lit = (across + wander < 0).astype(np.float32)
    for dx, dy, rad in sun.dapples:
        blob = (((u - dx) * aspect) ** 2 + (v - dy) ** 2) < rad ** 2
        lit = np.where(blob, 1.0 - lit if sun.edge is not None else 0.0, lit).astype(np.float32)
    lit = cv2.resize(lit, (width, height), interpolation=cv2.INTER_LINEAR)
    if sun.penumbra > 0.3:
        lit = cv2.GaussianBlur(lit, (0, 0), sun.penumbra)
    warm = np.array([0.9, 1.0, 1.08], np.float32) * sun.sun_gain  # BGR: the sun is yellower than the sky
    sky = np.array([1.2, 1.02, 0.85], np.float32) * sun.shade
    return lit[..., None] * warm + (1 - lit[..., None]) * sky
