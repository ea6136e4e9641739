"""The board's landmarks as evidence for a lattice: the river, the palaces' diagonals and the outline.

The 19 lines alone cannot tell a lattice from one laid a rank or a file off, or turned a quarter (a near-square
picture): most of their lines still fall on printed lines. A Xiangqi board prints three things a wrong lattice
puts in the wrong place:
- the river: between ranks 4 and 5 the seven inner files are not printed; a lattice whose river has printed lines
  across its inner files (a rank line of a board turned under it, or a board's ranks 3..4 or 5..6) is not the board;
- the palaces: the X of diagonals across files d..f on ranks 0..2 and 7..9, printed on every board;
- the outline: nothing is printed a whole spacing beyond the outer lines (a double border lies well within it), so
  a line printed there says the board goes on and the lattice is short of it.
Pure: a line-response map and a board -> image homography in, figures in units of the lattice's median line.
"""

from __future__ import annotations

import numpy as np

from .grid import _sample_inside, line_supports

# The river's inner files are sampled over its middle, clear of the pieces standing on ranks 4 and 5 (a disc
# reaches about 0.45 spacing from its point): 4.4 .. 4.6.
_RIVER_V = (4.4, 4.5, 4.6)
# Beside a line is half a spacing off it (the middle of the cells, or of the river's gap).
_BESIDE = 0.5
# Along each palace diagonal, the middles of its two halves (away from the palace's points, where pieces stand).
_DIAGONAL_T = (0.2, 0.25, 0.3, 0.7, 0.75, 0.8)
# Beside a diagonal is this far off it, square to it (spacings): clear of the diagonal's blur and of the nearest
# file and rank lines (0.3 spacing off at the samples).
_DIAGONAL_BESIDE = 0.3
_DIAGONALS = (((3.0, 0.0), (5.0, 2.0)), ((5.0, 0.0), (3.0, 2.0)), ((3.0, 7.0), (5.0, 9.0)), ((5.0, 7.0), (3.0, 9.0)))


def _mean_inside(resp: np.ndarray, h: np.ndarray, uv: np.ndarray) -> float:
    """Mean response over the samples inside the picture (NaN when none is: a board cut by the picture's edge)."""
    values, ok = _sample_inside(resp, h, uv)
    return float(values[ok].mean()) if ok.any() else float("nan")


def _standing_out(resp: np.ndarray, h: np.ndarray, on: np.ndarray, across: np.ndarray) -> float:
    """How much print lies on the samples `on` more than `across` beside them on the quieter side (mean, over the
    samples inside the picture; 0 where nothing of them is in it: no evidence either way)."""
    mid = _mean_inside(resp, h, on)
    beside = np.fmin(_mean_inside(resp, h, on - across), _mean_inside(resp, h, on + across))
    out = mid - beside
    return float(out) if np.isfinite(out) else 0.0


def river_print(resp: np.ndarray, h: np.ndarray) -> float:
    """Print across the river on the inner files, the median of the seven, as a share of the median line.

    About 0 on the board's own lattice (the river's text stands on a few files at most); about 1 where the
    lattice's river lies over printed lines."""
    median = float(np.nanmedian(line_supports(resp, h))) + 1e-9
    per_file = []
    for u in range(1, 8):
        on = np.array([(float(u), v) for v in _RIVER_V])
        per_file.append(_standing_out(resp, h, on, np.array([_BESIDE, 0.0])))
    return float(np.median(per_file)) / median


def palace_print(resp: np.ndarray, h: np.ndarray) -> float:
    """Print on the palaces' four diagonals (their mean) as a share of the median line: about 1 on the board's
    lattice (less where pieces or glare hide them), about 0 where the lattice's palaces lie in plain cells."""
    median = float(np.nanmedian(line_supports(resp, h))) + 1e-9
    out = []
    for a, b in _DIAGONALS:
        a_, b_ = np.array(a), np.array(b)
        on = np.array([a_ + t * (b_ - a_) for t in _DIAGONAL_T])
        d = (b_ - a_) / np.linalg.norm(b_ - a_)
        out.append(_standing_out(resp, h, on, _DIAGONAL_BESIDE * np.array([-d[1], d[0]])))
    return float(np.mean(out)) / median


def beyond_print(resp: np.ndarray, h: np.ndarray) -> float:
    """Print a whole spacing beyond the outer lines, the strongest of the four sides, as a share of the median line:
    about 0 on the board's lattice, about 1 on a lattice a rank or a file short of the board's."""
    median = float(np.nanmedian(line_supports(resp, h))) + 1e-9
    ts = np.linspace(0.1, 0.9, 9)
    sides = [
        (np.array([(u * 8, -1.0) for u in ts]), np.array([0.0, _BESIDE])),
        (np.array([(u * 8, 10.0) for u in ts]), np.array([0.0, _BESIDE])),
        (np.array([(-1.0, v * 9) for v in ts]), np.array([_BESIDE, 0.0])),
        (np.array([(9.0, v * 9) for v in ts]), np.array([_BESIDE, 0.0])),
    ]
    return max(_standing_out(resp, h, on, across) for on, across in sides) / median


# Weights of the landmarks against the lines in `landmark_score` (units of the median line): the river's print
# and a line beyond the outline each cost about as much as a line of the 19 missing would (1 / 19 of the lines'
# contrast per line, ~0.05 of it) several times over, since each says the lattice is a whole line off; the palaces
# count as much as the river, positively.
RIVER_WEIGHT = 0.5
PALACE_WEIGHT = 0.5
BEYOND_WEIGHT = 0.3


def landmark_score(resp: np.ndarray, h: np.ndarray, support: float) -> float:
    """A lattice's line support (`grid.support_score`) corrected by the landmarks, in the same units: the board's
    own lattice scores above the same lattice moved or stretched by a rank or a file."""
    median = float(np.nanmedian(line_supports(resp, h)))
    evidence = (PALACE_WEIGHT * palace_print(resp, h) - RIVER_WEIGHT * max(0.0, river_print(resp, h))
                - BEYOND_WEIGHT * max(0.0, beyond_print(resp, h)))
    return support + evidence * max(median, 0.0)
