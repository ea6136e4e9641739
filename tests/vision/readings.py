"""Per-point readings crafted for the pure tests of the interpretation rules."""

from __future__ import annotations

import numpy as np

from xqarb.referee.inference import infer
from xqarb.referee.rules import Position
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


def with_points(squares: str, **points: str) -> str:
    """`squares` with the named points holding the given letters."""
    cells = list(squares)
    for name, letter in points.items():
        cells[point_index(name)] = letter
    return "".join(cells)


def referee_sees(fen: str, unseen: frozenset[int], known: str, squares: str) -> str:
    """What the referee infers from the snapshot the tracker sends (its `unseen` points '?'), the game at `fen`."""
    sent = "".join("?" if i in unseen else c for i, c in enumerate(squares))
    inf = infer(Position.from_fen(fen), known, sent)
    return inf.kind + (" " + ",".join(m.iccs for m in inf.moves) if inf.moves else "")
