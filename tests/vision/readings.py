"""Per-point readings crafted for the pure tests of the interpretation rules."""

from __future__ import annotations

import numpy as np

from xqarb.vision.grid import point_index
from xqarb.vision.occupancy import PointReading


def crafted_reading(occupied: dict[str, float], offset: dict[str, tuple[float, float]]) -> PointReading:
    """A reading with the given points' occupancy (ink density a fifth of it) and ink offsets, black everywhere."""
    occ, off = np.zeros(90), np.zeros((90, 2))
    for p, v in occupied.items():
        occ[point_index(p)] = v
    for p, v in offset.items():
        off[point_index(p)] = v
    return PointReading(occupied=occ, red=np.zeros(90), offset=off, density=occ * 0.2, redness=np.zeros(90))
