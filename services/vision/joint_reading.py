"""A still board's per-point occupancy from the joint of its cues, calibrated on the position known to stand there.

The ink reading (`occupancy.read_view`: a black-hat of the darkest channel) sets its scale by the strongest points of
the view. On a small blurred picture the red characters on pink faces, or washed-out ones, read a tenth of the black
side's ink, and the pieces read as empty points. The position the tracker holds (the referee's, adopted after each
move) says which points hold pieces: where the ink misses them on this camera, each cue (the ink, the pieces' round
outlines, how bare the printed lines show) is weighed by how well it separates them there (a logistic fit over the
known points), and the pieces the ink misses are read from the cues together. A move changes two or three points of
the known position; the fit over the other eighty-odd is hardly moved by them, and reads the moved points by the
cues as it reads the others. Pure: values in, values out."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from .occupancy import PointReading
from .settings import DEFAULTS, TrackerConfig
from .squares import _CASED


def joint_features(density: np.ndarray, discs: np.ndarray, lines: np.ndarray, cfg: TrackerConfig = DEFAULTS
                   ) -> np.ndarray:
    """90 x 3: per point, the cues a piece raises: its ink (log, so that a black piece's strong ink and a red one's
    faint ink weigh alike against the empty points' none), its round outline, and the printed lines it hides
    (negated: a piece covers them)."""
    return np.stack([np.log(density + cfg.joint_ink_floor), discs, -lines], axis=1)


def fit_joint(x: np.ndarray, piece: np.ndarray, cfg: TrackerConfig = DEFAULTS) -> Callable[[np.ndarray], np.ndarray]:
    """A logistic fit of `piece` (bool per row) on the cues `x` (rows of features), each cue standardised and
    weighed by a ridge of `joint_ridge` (a cue that separates the known points perfectly would otherwise grow
    without bound, and a cue that does not is weighed near 0): the probability that each row of new cues holds a
    piece. Newton's steps, a fixed number (the problem is convex and small: 90 points, 3 cues)."""
    mu, sd = x.mean(axis=0), x.std(axis=0) + 1e-9
    z = np.c_[(x - mu) / sd, np.ones(len(x))]
    y = piece.astype(np.float64)
    ridge = cfg.joint_ridge * np.eye(z.shape[1])
    ridge[-1, -1] = 0.0  # (the bias is not held back: the share of pieces on the board sets it)
    w = np.zeros(z.shape[1])
    for _ in range(cfg.joint_steps):
        p = 1.0 / (1.0 + np.exp(-z @ w))
        grad = z.T @ (p - y) + ridge @ w
        hess = (z * (p * (1.0 - p))[:, None]).T @ z + ridge
        w = w - np.linalg.solve(hess, grad)

    def prob(xn: np.ndarray) -> np.ndarray:
        zn = np.c_[(xn - mu) / sd, np.ones(len(xn))]
        return 1.0 / (1.0 + np.exp(-np.clip(zn @ w, -30.0, 30.0)))

    return prob


def _enough(piece: np.ndarray, cfg: TrackerConfig) -> bool:
    """At least `joint_least` pieces and as many empty points among `piece` to fit the cues on."""
    return int(piece.sum()) >= cfg.joint_least and int((~piece).sum()) >= cfg.joint_least


def ink_fails(reading: PointReading, known: str, cfg: TrackerConfig = DEFAULTS) -> bool:
    """The ink's occupancy reads more of the points `known` to hold a piece as empty than a move explains
    (`joint_from`): the ink alone misses the pieces on this camera (their characters wash out)."""
    piece, known_at = _known(known)
    if not _enough(piece[known_at], cfg):
        return False
    missed = piece & (reading.occupied <= cfg.ink_piece)
    return int(missed[known_at].sum()) > cfg.joint_from


def joint_reading(reading: PointReading, known: str, discs: Callable[[], np.ndarray],
                  lines: Callable[[], np.ndarray], cfg: TrackerConfig = DEFAULTS,
                  ink_weight: np.ndarray | None = None) -> PointReading:
    """`reading` with the pieces its ink misses read from the joint of the ink, the round outlines (`discs`: per
    point, called only where needed) and the printed lines shown (`lines`, likewise), where the ink misses the
    pieces of the position `known` (`ink_fails`) and the joint, fitted on that position, misreads at least
    `joint_margin` fewer of its points; else `reading` as it is. The joint only raises a point's occupancy: what the
    ink reads as a piece stays so (a piece standing half-way between two points shows its ink on both, while its
    outline is centred on neither and the lines show about both), and the inks' own densities, offsets, colours and
    types are kept (a move is still told by how a point's ink changed). `ink_weight`: per point, how much of the
    ink about it counts (`occupancy.ink_weight_at_points`); where under `joint_ink_masked` of the board's median,
    the printed marks mask the point's middle and its ink is no cue: the outlines and lines alone read it, fitted
    on every known point."""
    if not ink_fails(reading, known, cfg=cfg):
        return reading
    piece, known_at = _known(known)
    x = joint_features(reading.density, discs(), lines(), cfg=cfg)
    inked = (np.ones(90, bool) if ink_weight is None
             else ink_weight >= cfg.joint_ink_masked * float(np.median(ink_weight)))
    fit_at = known_at & inked
    prob = (fit_joint(x[fit_at], piece[fit_at], cfg=cfg)(x) if _enough(piece[fit_at], cfg)
            else np.full(90, 0.5))
    if not inked.all():
        prob = np.where(inked, prob, fit_joint(x[known_at][:, 1:], piece[known_at], cfg=cfg)(x[:, 1:]))
    # A piece come where the position has none is read, never plainly so unless the ink reads it so too: the rules
    # that correct the known position by what a point plainly shows weigh the ink and the round outline as two cues
    # agreeing, and the joint already holds the outline (a tall neighbour's body over an empty point raises all
    # three cues together)
    ink = reading.occupied
    occupied = np.maximum(ink, np.where(known_at & ~piece, np.minimum(prob, cfg.ink_plain), prob))
    ink_misread = int(((ink > cfg.ink_piece) != piece)[known_at].sum())
    joint_misread = int(((occupied > cfg.ink_piece) != piece)[known_at].sum())
    if joint_misread + cfg.joint_margin > ink_misread:
        return reading
    return replace(reading, occupied=occupied)


def _known(known: str) -> tuple[np.ndarray, np.ndarray]:
    """Per point, whether `known` holds a piece there, and whether it is known at all (not '?')."""
    return np.array([c in _CASED for c in known]), np.array([c != "?" for c in known])
