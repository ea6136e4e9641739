"""A still board's per-point occupancy from the joint of its cues, calibrated on the position known to stand there.

The ink reading (`occupancy.read_view`: a black-hat of the darkest channel) sets its scale by the strongest points of
the view. On a small blurred picture the red characters on pink faces, or washed-out ones, read a tenth of the black
side's ink, and the pieces read as empty points. The position the tracker holds (the referee's, adopted after each
move) says which points hold pieces: where the ink misreads them on this camera, each cue (the ink, the pieces' round
outlines, how bare the printed lines show) is weighed by how well it separates them there (a logistic fit over the
known points), and the occupancy is read from the cues together. A move changes two or three points of
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
    """The ink's occupancy misreads more of the points `known` to hold a piece or none than a move explains
    (`joint_from`): the ink alone does not separate the pieces from the empty points on this camera."""
    piece, known_at = _known(known)
    if not _enough(piece[known_at], cfg):
        return False
    misread = (reading.occupied > cfg.ink_piece) != piece
    return int(misread[known_at].sum()) > cfg.joint_from


def joint_reading(reading: PointReading, known: str, discs: Callable[[], np.ndarray],
                  lines: Callable[[], np.ndarray], cfg: TrackerConfig = DEFAULTS,
                  ink_weight: np.ndarray | None = None, changed: np.ndarray | None = None,
                  ref_density: np.ndarray | None = None, ref_occupied: np.ndarray | None = None) -> PointReading:
    """`reading` with its occupancy read from the joint of the ink, the round outlines (`discs`: per point, called
    only where needed) and the printed lines shown (`lines`, likewise), where the ink alone fails on the position
    `known` (`ink_fails`) and the joint, fitted on that position, misreads at least `joint_margin` fewer of its
    points; else `reading` as it is. The inks' own densities, offsets, colours and types are kept (a move is still
    told by how a point's ink changed). `ink_weight`: per point, how much of the ink about it counts
    (`occupancy.ink_weight_at_points`); where under `joint_ink_masked` of the board's median, the printed marks mask
    the point's middle and its ink is no cue: the outlines and lines alone read it, fitted on every known point.
    `changed`: per point, whether it changed since the last still board (None: none did); `ref_density`,
    `ref_occupied`: the ink densities and the occupancy read on that board (None: not known). Where the joint is
    taken, its own probabilities are kept beside (`PointReading.joint`)."""
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
    ink = reading.occupied
    # Against the known position the joint reads a piece come or gone (a move), never plainly so unless the ink does
    # too: the rules that correct the known position by what a point plainly shows weigh the ink and the round
    # outline as two cues agreeing, and the joint already holds the outline (a tall neighbour's body over an empty
    # point raises all three cues together)
    # (an unsure point, a piece left between two, is read as the ink reads it: the rules settling it weigh the ink
    # and the outline apart too)
    occupied = np.where(known_at & ~piece, np.minimum(prob, np.maximum(ink, cfg.ink_plain)),
                        np.where(known_at & piece, np.maximum(prob, np.minimum(ink, cfg.ink_none)), ink))
    # The outlines and lines are read centred on each point; a piece standing well off its point (set down half-way
    # between two, 5.10) shows its ink on both, its outline centred on neither and the lines about both: where a
    # point known empty changed and its ink's peak lies well off it, the joint only adds to what the ink reads
    if changed is not None:
        occupied = np.where(changed & ~piece & _ink_off_point(reading, cfg), np.maximum(occupied, ink), occupied)
    # Nor where a point known empty changed and its ink came with the change: it reads plainly and its density rose
    # `ink_rose` times over the last still board's. The fit, made on the position before the move, reads the point as
    # that position's empty points look, and a piece that just arrived there is what the ink saw arrive (printed
    # marks, a corner's shade or a neighbour's standing body read as ink on both boards, and do not rise)
    if changed is not None and ref_density is not None:
        came = (changed & known_at & ~piece & (ink > cfg.ink_plain)
                & (reading.density > cfg.ink_rose * ref_density + cfg.ink_rise_least))
        occupied = np.where(came, np.maximum(occupied, ink), occupied)
    # A piece known on a point that changed reads no more surely than on the last still board, unless its ink rose
    # with the change: a piece that stayed looks as it did, one that left or was taken leaves less. Cues that rose
    # there are another's: a tall piece set down beside it, seen steeply, hides the point's printed lines with its
    # body (e.g. the red pawn c3-c4 whose ink never read, the lines at c3 hidden 13 -> 2.5 and the joint 0.33 ->
    # 0.61: no point read emptied and the move went unseen)
    if changed is not None and ref_density is not None and ref_occupied is not None:
        rose = reading.density > cfg.ink_rose * ref_density + cfg.ink_rise_least
        held = changed & known_at & piece & ~rose
        occupied = np.where(held, np.minimum(occupied, np.maximum(ref_occupied, ink)), occupied)
    ink_misread = int(((ink > cfg.ink_piece) != piece)[known_at].sum())
    joint_misread = int(((occupied > cfg.ink_piece) != piece)[known_at].sum())
    if joint_misread + cfg.joint_margin > ink_misread:
        return reading
    return replace(reading, occupied=occupied, joint=prob)


def _ink_off_point(reading: PointReading, cfg: TrackerConfig) -> np.ndarray:
    """Per point, its ink's peak lies `misaligned_from` (less `between_short`: the peak followed from the point
    falls short of a piece half-way) or more off it, the camera's parallax (the pieces' median offset) removed."""
    on = reading.occupied > cfg.ink_piece
    parallax = np.median(reading.offset[on], axis=0) if on.sum() >= cfg.parallax_least else np.zeros(2)
    off = reading.offset - parallax
    return np.hypot(off[:, 0], off[:, 1]) >= cfg.misaligned_from - cfg.between_short


def _known(known: str) -> tuple[np.ndarray, np.ndarray]:
    """Per point, whether `known` holds a piece there, and whether it is known at all (not '?')."""
    return np.array([c in _CASED for c in known]), np.array([c != "?" for c in known])
