"""The one move that best explains a still board, where the tracker's rules read it in no single move's shape.

The tracker's rules (`tracker.interpret`) read each point against the last still board and put a move together
from what changed. Where they end on something no move of one piece gives (a piece gone and nothing arrived, two
pieces arrived, a piece come from nowhere), the referee could only call an arbiter; where they see nothing, a move
made is lost. This weighs every move instead: each point's evidence (how much it changed, its ink and outline now
and then, its colour, how unlike its patch is to the last still board's) is turned by a small trained model into
how likely each point is to have been left, taken on, or arrived at, and each move a piece's geometry allows
(`reach`: the lines, the leg, the eye, the palace, the cannon's screen; no check, no turn: those are the
referee's) is scored by its two points: log P(left) + log P(arrived / taken), against "unchanged" at both.
The best is taken only where it clearly beats every other move and "nothing moved"; else the rules' reading stands.
Two moves in one still board (the board never still between them) are weighed the same way where one move is not
enough (`two_moves`). Where the referee could not follow a still board, the still boards since the last one it
followed are weighed again from the position it holds, over the rules' legal moves only, each against the one
before it (`follow_step`, `follow`).

Pure: arrays in, a move out. The model (`xqarb/data/vision/movefit.npz`) is made by
`python -m xqarb.vision.movefit_train` from rendered games held apart from the games the figures are measured on.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from importlib import resources
from itertools import pairwise
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from .grid import neighbours
from .occupancy import POINTS_PX, PointReading, S
from .reach import reach

_CASED = "KABNRCPXkabnrcpx"
_MODEL_FILE = "movefit.npz"  # package data: xqarb/data/vision/
# unlike_then's patch: a piece's face and rim (its radius is ~0.45 spacing), looked for up to _SLACK pixels off (a
# piece set down a little off where the last one stood, the camera's parallax the same in both views)
_PATCH = round(0.42 * S)
_SLACK = 4

# What a point shows, against the last still board (one row per point). The colour features are turned to the
# known piece's side for a piece's point ("own": its own side's colour), and left as red for an empty one.
FEATURES = (
    "bias",
    "log change / level",  # a move changes its two points far over the board's level of change
    "change / level (to 6)",
    "occupied now",
    "occupied then",
    "log ink now / then",  # a piece leaving takes its ink; one arriving brings it
    "colour now",  # own side's (piece) or red (empty)
    "colour then",
    "colour now x occupied now",
    "outline now / pieces' median",  # a piece's round outline stands where a piece stands, whatever its ink
    "outline rise / pieces' median",
    "on the board's edge",  # an edge point keeps the frame's ink when emptied
    "unlike then (1 - best correlation)",  # the same piece (or bare point) looks the same in any light; another not
    "log unlike then / board's median",  # ... against the view's own noise (blur, JPEG, a camera's grain)
    # (a linear model cannot tell a point unlike and still occupied, another piece there, from one unlike and bare)
    "unlike x occupied now",
    "unlike x not occupied now",
    "log unlike / median x occupied now",
)
N_FEATURES = len(FEATURES)
# classes: a piece's point: stayed, left (empty now), taken (the other side's piece on it now);
# an empty point: stayed empty, a red piece arrived, a black piece arrived
PIECE_CLASSES = ("stayed", "left", "taken")
EMPTY_CLASSES = ("stayed", "red arrived", "black arrived")


class MoveModelError(ValueError):
    """The move model's file is missing or not of this module's shape."""


@dataclass(frozen=True)
class MoveModel:
    """Two softmax regressions over `FEATURES` (standardised by `mean`, `scale`) and the bar a move must clear."""

    piece_w: np.ndarray  # (N_FEATURES, 3) for PIECE_CLASSES
    empty_w: np.ndarray  # (N_FEATURES, 3) for EMPTY_CLASSES
    mean: np.ndarray  # (N_FEATURES,)
    scale: np.ndarray
    min_score: float  # log-odds a move must reach over "nothing moved"
    min_margin: float  # ... and over the next best move
    # Each of its two points must show its own change more likely than not (log-odds over staying as it was), and no
    # other point may show a change as likely as `max_other`: a move that leaves a plain change unexplained is not
    # what happened (a piece set down half-way between two points shows on both; e.g. the cannon h2 left
    # between g2 and g1: h2-i2 scored best by h2's emptying alone, i2 -1.6, g1 5.8 unexplained). (2, not 1: a piece's
    # shadow or the hand's changes a neighbour up to 1.6; on the training snapshots the true move left
    # another point at 1 or more 2 times in 1728, a piece between two points its other point at 2 or more 7 in 38,
    # and none between 1 and 2)
    min_end: float = 0.0
    max_other: float = 2.0

    @classmethod
    def load(cls, path: Path | None = None) -> MoveModel:
        try:
            if path is None:
                ref = resources.files("xqarb") / "data" / "vision" / _MODEL_FILE
                path = Path(str(ref))
                z = np.load(io.BytesIO(ref.read_bytes()))
            else:
                z = np.load(path)
            model = cls(piece_w=z["piece_w"], empty_w=z["empty_w"], mean=z["mean"], scale=z["scale"],
                        min_score=float(z["min_score"]), min_margin=float(z["min_margin"]),
                        min_end=float(z["min_end"]), max_other=float(z["max_other"]))
        except (OSError, KeyError, ValueError) as e:
            raise MoveModelError(f"{path}: not a move model ({e})") from e
        if model.piece_w.shape != (N_FEATURES, 3) or model.empty_w.shape != (N_FEATURES, 3):
            raise MoveModelError(f"{path}: weights for {model.piece_w.shape[0]} features, this code has {N_FEATURES}")
        return model

    def save(self, path: Path) -> None:
        np.savez(path, piece_w=self.piece_w, empty_w=self.empty_w, mean=self.mean, scale=self.scale,
                 min_score=self.min_score, min_margin=self.min_margin, min_end=self.min_end,
                 max_other=self.max_other, features=np.array(FEATURES))


def unlike_then(ref_view: np.ndarray, view: np.ndarray) -> np.ndarray:
    """(90,): how unlike each point's patch (a piece's face and rim) is to what stood there on the last still board:
    1 - the best normalised correlation of the old patch within a few pixels of the point now (0 the same, 1 nothing
    alike). A change of light scales and shifts a patch's grey and leaves this near 0; a piece replaced by another
    (a capture whose taker's ink reads in the taken piece's colour) gives another character there, a piece gone or
    come the bare point against a face (e.g. the black cannon b7-b8 that the inks and changes did not
    show, 0.74 and 0.81 where the board's median is 0.004). A patch of nearly one grey (glare, a plain disc) tells
    nothing: 0 there."""
    a, b = (cv2.cvtColor(v, cv2.COLOR_BGR2GRAY).astype(np.float32) for v in (ref_view, view))
    h, w = a.shape
    out = np.zeros(90)
    for i in range(90):
        x, y = POINTS_PX[i]
        x0, x1, y0, y1 = max(x - _PATCH, 0), min(x + _PATCH + 1, w), max(y - _PATCH, 0), min(y + _PATCH + 1, h)
        tpl = a[y0:y1, x0:x1]
        if float(tpl.std()) < 2.0:
            continue
        win = b[max(y0 - _SLACK, 0):min(y1 + _SLACK, h), max(x0 - _SLACK, 0):min(x1 + _SLACK, w)]
        out[i] = 1.0 - float(cv2.matchTemplate(win, tpl, cv2.TM_CCOEFF_NORMED).max())
    return np.clip(out, 0.0, 2.0)


def point_features(known: str, change: np.ndarray, level: float, reading: PointReading, ref_reading: PointReading,
                   discs: np.ndarray, ref_discs: np.ndarray, unlike: np.ndarray) -> np.ndarray:
    """(90, N_FEATURES): each point's evidence against the last still board (`known` its letters; `discs`, the
    strongest round outline within 0.3 of each point now and then; `unlike`, `unlike_then` of the two views)."""
    red_side = np.array([c.isupper() for c in known])
    pieces = np.array([c in _CASED for c in known])
    median = float(np.median(discs[pieces])) if pieces.sum() >= 5 else float(np.median(discs))
    median = max(median, 0.05)
    rel = change / max(level, 1e-6)
    colour_now = np.where(pieces & ~red_side, 1.0 - reading.red, reading.red)
    colour_then = np.where(pieces & ~red_side, 1.0 - ref_reading.red, ref_reading.red)
    u, v = np.arange(90) % 9, np.arange(90) // 9
    edge = ((u == 0) | (u == 8) | (v == 0) | (v == 9)).astype(float)
    occ = np.clip(reading.occupied, 0, 1)
    rel_unlike = np.log((unlike + 0.01) / (float(np.median(unlike)) + 0.01))
    return np.stack([
        np.ones(90),
        np.log(rel + 0.05),
        np.minimum(rel, 6.0),
        occ,
        np.clip(ref_reading.occupied, 0, 1),
        np.log((reading.density + 0.02) / (ref_reading.density + 0.02)),
        colour_now,
        colour_then,
        colour_now * occ,
        discs / median,
        (discs - ref_discs) / median,
        edge,
        unlike,
        rel_unlike,
        unlike * occ,
        unlike * (1.0 - occ),
        rel_unlike * occ,
    ], axis=1)


def _log_softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


def _standardised(model: MoveModel, features: np.ndarray) -> np.ndarray:
    x = (features - model.mean) / model.scale
    x[:, 0] = 1.0  # (the bias)
    return x


def class_log_probs(model: MoveModel, known: str, features: np.ndarray) -> np.ndarray:
    """(90, 3): each point's log-probabilities over its classes (PIECE_CLASSES where `known` has a piece,
    EMPTY_CLASSES where it is empty; rows of unsure points are zeros)."""
    x = _standardised(model, features)
    out = np.zeros((90, 3))
    pieces = np.array([c in _CASED for c in known])
    empty = np.array([c == "." for c in known])
    if pieces.any():
        out[pieces] = _log_softmax(x[pieces] @ model.piece_w)
    if empty.any():
        out[empty] = _log_softmax(x[empty] @ model.empty_w)
    return out


@dataclass(frozen=True)
class MoveFit:
    src: int
    dst: int
    score: float  # log-odds over "nothing moved"
    margin: float  # over the next best move (or over nothing moved, where that is next)


def point_odds(model: MoveModel, known: str, features: np.ndarray) -> np.ndarray:
    """(90, 2): each point's log-odds of a change over staying as it was: a piece's point (left, taken by the other
    side), an empty one (a red piece arrived, a black one); zeros at unsure points."""
    lp = class_log_probs(model, known, features)
    return lp[:, 1:] - lp[:, :1]


def ranked_moves(model: MoveModel, known: str, features: np.ndarray,
                 odds: np.ndarray | None = None) -> list[tuple[float, int, int]]:
    """Every move a known piece's geometry allows, best first: (log-odds over nothing moved, src, dst)."""
    odds = point_odds(model, known, features) if odds is None else odds
    out: list[tuple[float, int, int]] = []
    for src in range(90):
        if known[src] not in _CASED:
            continue
        for dst in _destinations(known, src):
            out.append((float(odds[src, 0] + _arrival(known, src, dst, odds)), src, dst))
    out = [t for t in out if np.isfinite(t[0])]
    out.sort(key=lambda t: (-t[0], t[1], t[2]))
    return out


def _destinations(squares: str, src: int) -> set[int]:
    """Where the piece on `src` may go by its geometry (`reach`); a piece of unknown type anywhere not its own
    side's. (A piece with no move has none: an empty reach is not "unknown".)"""
    dsts = reach(squares, src)
    if dsts is not None:
        return dsts
    red = squares[src].isupper()
    return {i for i in range(90) if i != src and (squares[i] == "." or
                                                 (squares[i] in _CASED and squares[i].isupper() != red))}


def _arrival(known: str, src: int, dst: int, odds: np.ndarray) -> float:
    """The log-odds of the mover from `src` being on `dst` now: a piece arrived there, of either colour (the mover's
    side is its point's: a colour read wrongly is no reason to doubt where it went; e.g. the black cannon
    b7-b8 read red at b8, -0.4 as black, 2.1 as red), or the other side's piece taken there."""
    d, red = known[dst], known[src].isupper()
    if d == ".":
        return float(np.logaddexp(odds[dst, 0], odds[dst, 1]))
    if d in _CASED and d.isupper() != red:
        return float(odds[dst, 1])
    return -np.inf  # an unsure point: the rules' pairs, not weighed here


def best_move(model: MoveModel, known: str, features: np.ndarray) -> MoveFit | None:
    """The move that clearly best explains the board, or None where none does: it must reach `min_score` over
    nothing moved and `min_margin` over the next move, each of its points must show its change (`min_end`), and no
    other point a change (`max_other`)."""
    odds = point_odds(model, known, features)
    return _best_of(model, known, odds, ranked_moves(model, known, features, odds))


def _best_of(model: MoveModel, known: str, odds: np.ndarray,
             ranked: list[tuple[float, int, int]]) -> MoveFit | None:
    """best_move on the point odds and the moves ranked by them."""
    if not ranked:
        return None
    score, src, dst = ranked[0]
    runner_up = max(ranked[1][0] if len(ranked) > 1 else -np.inf, 0.0)
    margin = score - runner_up
    if score < model.min_score or margin < model.min_margin:
        return None
    if odds[src, 0] < model.min_end or _arrival(known, src, dst, odds) < model.min_end:
        return None
    others = [i for i in range(90) if i not in (src, dst) and known[i] != "?"]
    if others and float(odds[others].max()) >= model.max_other:
        return None
    return MoveFit(src, dst, score, margin)


def single_move(known: str, squares: str) -> tuple[int, int] | None:
    """Where `squares` show one known piece moved by its geometry (left its point, and its letter or its side's
    X / x on a point it reaches), its (src, dst); else None. Points gone unsure are left aside."""
    left = [i for i in range(90) if known[i] in _CASED and squares[i] == "."]
    came = [i for i in range(90) if squares[i] in _CASED
            and (known[i] == "." or (known[i] in _CASED and known[i].isupper() != squares[i].isupper()))]
    if len(left) != 1 or len(came) != 1:
        return None
    src, dst = left[0], came[0]
    mover, seen = known[src], squares[dst]
    if seen != mover and seen != ("X" if mover.isupper() else "x"):
        return None
    if known[dst] in _CASED and known[dst].isupper() == mover.isupper():
        return None
    r = reach(known, src)
    return (src, dst) if r is None or dst in r else None


def _moved(squares: str, src: int, dst: int) -> str:
    out = list(squares)
    out[src], out[dst] = ".", squares[src]
    return "".join(out)


def _side(c: str) -> str:
    """'.' empty, 'r' / 'b' a red / black piece, '?' unsure."""
    return c if c in ".?" else "r" if c.isupper() else "b"


def two_moves(model: MoveModel, known: str, features: np.ndarray) -> str | None:
    """The board after two moves, one by each side, where they clearly best explain a still board that no one move
    does: the board was not still for long enough between them (a player who answers at once, a hand over the
    board). None where no pair of moves clearly does. Only the points that show some change are looked at (a move's
    points do), so the pairs weighed are few."""
    odds = point_odds(model, known, features)
    return _two_of(model, known, odds, ranked_moves(model, known, features, odds))


def _two_of(model: MoveModel, known: str, odds: np.ndarray, single: list[tuple[float, int, int]]) -> str | None:
    """two_moves on the point odds and the single moves ranked by them."""
    change = odds.max(axis=1)
    cand = sorted((i for i in range(90) if known[i] != "?" and change[i] >= model.min_end - 1.0),
                  key=lambda i: -change[i])[:8]
    if len(cand) < 3:
        return None
    allowed = set(cand)

    def score(board: str) -> float | None:
        total = 0.0
        for i in range(90):
            k, b = _side(known[i]), _side(board[i])
            if k == b:
                continue
            if i not in allowed or k == "?":
                return None
            o = float(odds[i, 0] if (k != "." and b == ".") or (k == "." and b == "r") else odds[i, 1])
            if o < model.min_end:
                return None
            total += o
        return total

    boards: dict[str, float] = {}
    for src in cand:
        if known[src] not in _CASED:
            continue
        for dst in sorted(_destinations(known, src) & allowed):
            if _side(known[dst]) in (_side(known[src]), "?"):
                continue
            after = _moved(known, src, dst)
            red_next = not known[src].isupper()
            for src2 in cand:
                if after[src2] not in _CASED or after[src2].isupper() != red_next:
                    continue
                for dst2 in sorted(_destinations(after, src2) & allowed):
                    if _side(after[dst2]) in (_side(after[src2]), "?"):
                        continue
                    board = _moved(after, src2, dst2)
                    if board not in boards and (sc := score(board)) is not None:
                        boards[board] = sc
    if not boards:
        return None
    ranked = sorted(boards.items(), key=lambda t: -t[1])
    board, best = ranked[0]
    rivals = [ranked[1][1] if len(ranked) > 1 else -np.inf, single[0][0] if single else -np.inf, 0.0]
    if best < 2 * model.min_score or best - max(rivals) < model.min_margin:
        return None
    changed = [i for i in range(90) if _side(known[i]) != _side(board[i])]
    others = [i for i in range(90) if i not in changed and known[i] != "?"]
    if others and float(change[others].max()) >= model.max_other:
        return None
    return board


# Looking again (`follow`): what each point shows against the still board before it, whatever stands there
SIDES = ".rb"  # a point's side: empty, a red piece, a black one (the table's indices 0, 1, 2)
_COLOUR_COLS = (FEATURES.index("colour now"), FEATURES.index("colour then"))
_COLOUR_X_OCC = FEATURES.index("colour now x occupied now")
_OCC = FEATURES.index("occupied now")
BEAM = 24  # positions followed from still board to still board (the best by their paths' odds)
_TWO_FROM = 12  # first moves of a still board from which a second move in the same still board is weighed
_RECORDS = 2  # ways kept to each position: the best and the next best other record of moves
# Two moves between two still boards (a player who answers at once) are rarer than one: a record that puts two in
# one still board pays this (log-odds), so that a move is not added where the evidence of one alone is weak
_TWO_IN_ONE = 2.0
# A piece set down off its point towards a neighbour (or a tall piece seen steeply) shows on the neighbour's patch,
# its own point bare: a move onto an empty point may take a piece's arrival seen on an orthogonal neighbour, one
# that no move of the record changes and that stays empty on its boards, as its own, at this cost (log-odds). Twice
# the least margin (`MoveModel.min_margin`, 1.5): where a move onto the neighbour itself is legal and its source
# shows as plainly, that move wins by more than the margin
OFF_POINT = 3.0
SHOWS = 0.0  # a point shows a change where the model finds it more likely than not (log-odds over none)


def side_index(c: str) -> int:
    """A piece's or empty point's index in `SIDES` (`_side`; an unsure point has none)."""
    return SIDES.index(_side(c))


def change_table(model: MoveModel, known: str, features: np.ndarray) -> np.ndarray:
    """(90, 3, 3): each point's log-odds of having changed from one side (`SIDES`) to another over staying as it
    was, whatever stood there: a position the referee's moves lead to may hold a piece where the known board (the
    one the features were measured against) has none. Each point is weighed by the model as if its side were each
    of the three in turn (the colour features turned to that side, `point_features`). A piece arrived counts of
    either colour (`_arrival`: e.g. the black rook i9-h9 set down in glare, read red at h9, -3.5 as red,
    -5.8 as black); zeros at the points unsure on `known`."""
    black = np.array([c in _CASED and c.islower() for c in known])
    as_red = features.copy()
    for col in _COLOUR_COLS:  # (a black piece's point has its colours turned to its own side: turned back)
        as_red[black, col] = 1.0 - features[black, col]
    as_red[:, _COLOUR_X_OCC] = as_red[:, _COLOUR_COLS[0]] * features[:, _OCC]
    as_black = as_red.copy()
    for col in _COLOUR_COLS:
        as_black[:, col] = 1.0 - as_red[:, col]
    as_black[:, _COLOUR_X_OCC] = as_black[:, _COLOUR_COLS[0]] * features[:, _OCC]

    def odds(w: np.ndarray, f: np.ndarray) -> np.ndarray:
        lp = _log_softmax(_standardised(model, f) @ w)
        return lp[:, 1:] - lp[:, :1]

    t = np.zeros((90, 3, 3))
    e, r, b = odds(model.empty_w, as_red), odds(model.piece_w, as_red), odds(model.piece_w, as_black)
    t[:, 0, 1] = t[:, 0, 2] = np.logaddexp(e[:, 0], e[:, 1])
    t[:, 1, 0], t[:, 1, 2] = r[:, 0], r[:, 1]
    t[:, 2, 0], t[:, 2, 1] = b[:, 0], b[:, 1]
    t[np.array([c == "?" for c in known])] = 0.0
    return t


@dataclass(frozen=True)
class Record:
    """One way of moves from the referee's position: the board after each move, and the still board (its index
    since the anchor) each was made before; `odds`, summed over the still boards, over nothing moved."""

    odds: float
    boards: tuple[str, ...] = ()
    steps: tuple[int, ...] = ()


@dataclass(frozen=True)
class Followed:
    """A position the moves may have reached, with the best records of moves to it (best first, each another
    sequence of boards: a record that made the same moves before other still boards is the same record)."""

    position: Any  # a rules Position
    records: tuple[Record, ...]


def start_following(position: Any) -> tuple[Followed, ...]:
    """The positions followed before any still board: the referee's, reached by no move."""
    return (Followed(position, (Record(0.0),)),)


def _net_odds(table: np.ndarray, before: str, after: str, points: set[int], come: tuple[int, ...] = (),
              direct: frozenset[int] = frozenset(range(90))) -> float:
    """The log-odds of the changes from `before` to `after` at `points` over nothing changed there: each point's own,
    an arrival on an empty point at least its neighbour's less `OFF_POINT` (`_off_point`; `come`, the points whose
    arrival `table` shows, `_come`; `direct`, where the movers could have gone themselves)."""
    total = 0.0
    for i in points:
        a, b = side_index(before[i]), side_index(after[i])
        if a == b:
            continue
        odds = float(table[i, a, b])
        if a == 0:
            odds = max(odds, _off_point(table, before, after, points, come, direct, i, b))
        total += odds
    return total


def _come(table: np.ndarray) -> tuple[int, ...]:
    """The points whose change from empty to a piece `table` shows (`SHOWS`)."""
    return tuple(int(j) for j in np.flatnonzero(table[:, 0, 1:].max(axis=1) >= SHOWS))


def _off_point(table: np.ndarray, before: str, after: str, points: set[int], come: tuple[int, ...],
               direct: frozenset[int], i: int, side: int) -> float:
    """The log-odds of a piece of `side` arrived on the empty point `i` seen on a neighbour instead (`OFF_POINT`):
    one empty before and after, not among the changed `points`, beside no other point that shows a change of its
    own (a change beside a piece come or gone there is that piece's: its body seen steeply, its shadow), the
    only point the moves leave showing a piece come (`come`; where another shows one, that one may be the mover's
    own point and this its body: which the mover's is, is not told), and not one the mover could have gone to
    itself (`direct`: that move is weighed by the point's own odds; taken as set down beside it, a move one point
    off would come within the margin of it, and a later still board, its view unchanged, read as the piece
    moving on to where it was seen all along)."""
    left = [j for j in come if j not in points and before[j] == "." and after[j] == "."]
    if len(left) != 1 or left[0] not in neighbours(i) or left[0] in direct:
        return -np.inf
    j = left[0]
    for k in neighbours(j):
        if k == i or before[k] == "?":
            continue
        a = side_index(before[k])
        if max(float(table[k, a, b]) for b in range(3) if b != a) >= SHOWS:
            return -np.inf
    return float(table[j, 0, side]) - OFF_POINT


def _reach_of(moves: list[Any]) -> dict[Any, frozenset[int]]:
    """Where each piece (by the point it moves from) may go among `moves`."""
    out: dict[Any, set[int]] = {}
    for m in moves:
        out.setdefault(m.frm, set()).update(_squares_of(m))
    return {k: frozenset(v) for k, v in out.items()}


def _squares_of(move: Any) -> set[int]:
    from .grid import point_index

    return {point_index(move.frm), point_index(move.to)}


def follow_step(followed: tuple[Followed, ...], table: np.ndarray, step: int,
                unsure: frozenset[int] = frozenset()) -> tuple[Followed, ...]:
    """The positions followed after one more still board, whose points changed against the one before as `table`
    says (`change_table`): each position followed as it was (no move in between: a piece lifted and put back, a
    hand), after each legal move, and after two (the side to move's and the answer, the board not still between
    them) where the first is among the best; the best `BEAM` positions are kept, each with its best records. A
    move between two points left `unsure` (a piece between them set onto one: 5.10's designation) shows nothing
    either way and is not weighed: it would tie with every record without it (e.g. the rook left between
    h0 and h1)."""
    offers: dict[str, list[tuple[Record, Any]]] = {}

    def offer(board: str, position: Any, record: Record) -> None:
        offers.setdefault(board, []).append((record, position))

    firsts: list[tuple[float, Followed, Any, str, set[int], frozenset[int]]] = []
    come = _come(table)
    for f in followed:
        before = f.position.squares()
        for rec in f.records:
            offer(before, f.position, rec)
        moves = f.position.legal_moves()
        reach_of = _reach_of(moves)
        for move in moves:
            points = _squares_of(move)
            if points <= unsure:
                continue
            after_pos = f.position.play(move)
            after = after_pos.squares()
            direct = reach_of[move.frm]
            odds = _net_odds(table, before, after, points, come, direct)
            for rec in f.records:
                offer(after, after_pos, Record(rec.odds + odds, (*rec.boards, after), (*rec.steps, step)))
            firsts.append((f.records[0].odds + odds, f, after_pos, after, points, direct))
    firsts.sort(key=lambda t: -t[0])
    for _, f, first_pos, first, points, direct in firsts[:_TWO_FROM]:
        before = f.position.squares()
        moves = first_pos.legal_moves()
        reach_of = _reach_of(moves)
        for move in moves:
            if _squares_of(move) <= unsure:
                continue
            two_pos = first_pos.play(move)
            two = two_pos.squares()
            odds = _net_odds(table, before, two, points | _squares_of(move), come,
                             direct | reach_of[move.frm]) - _TWO_IN_ONE
            for rec in f.records:
                offer(two, two_pos, Record(rec.odds + odds, (*rec.boards, first, two), (*rec.steps, step, step)))
    out = []
    for records in offers.values():
        records.sort(key=lambda t: -t[0].odds)
        kept: list[Record] = []
        for rec, _ in records:
            if all(rec.boards != k.boards for k in kept):
                kept.append(rec)
            if len(kept) == _RECORDS:
                break
        out.append(Followed(records[0][1], tuple(kept)))
    out.sort(key=lambda f: -f.records[0].odds)
    return tuple(out[:BEAM])


def follow(model: MoveModel, start: str, followed: tuple[Followed, ...], tables: list[np.ndarray],
           unsure: list[frozenset[int]]) -> list[str] | None:
    """Where the referee could not follow a still board: the legal moves from the position it holds (its squares
    `start`) that clearly best explain the still boards since the last one it followed (`followed` after each
    of them, `tables` their changes, `unsure` the points left unsure on each: a piece between two points).
    Returns the board after each move, or None where no record clearly does. Each still board is weighed against
    the one before it, so a move that barely shows where it went (a capture in glare, a piece set down off its
    point) can be told by what the later boards allow and show: the rules' legal moves from each position followed
    (e.g. the black cannon b7-d7, nothing at d7, then moved on from d7), and the order of moves made
    between the still boards is each board's own.

    The bar: the best record's odds must clear the next best record (to the same board or another) and nothing
    moved by the model's margin (`min_margin`), and half its `min_score`; every point it empties must show its
    piece gone at its still board (`min_end`, `gone_odds`); and it leaves no plain change that another move would
    explain (`_left_unexplained`). An unsure point counts for nothing either way: a move off it is told by its other
    point (and by the boards after)."""
    if not followed:
        return None
    ranked = sorted(((r.odds, r) for f in followed for r in f.records), key=lambda t: -t[0])
    best, rec = ranked[0]
    if not rec.boards or best < max(0.5 * model.min_score, model.min_margin):
        return None
    # Against each other record, the margin once for the first still board whose changes it reads otherwise, and
    # twice for each further one: the odds of a record are summed over all its still boards, so two faint
    # misreadings on two boards could add up to one clear margin (e.g. the red rook g6-i6 faint at i6,
    # later the black rook g8-g4 set down towards g5; read as g6-g5 and g8 taking on g5, 0.7 and 2.8 over the
    # game's moves), where a move told later is told plainly (its piece moving on from where only it could be)
    boards = _boards_at(rec, start, len(tables))
    changes = _changes(boards)
    for odds, other in ranked[1:]:
        if best - odds >= model.min_margin * (2 * len(tables) - 1):
            break  # (no record further down can come within its margin)
        others = _changes(_boards_at(other, start, len(tables)))
        differ = sum(a != b for a, b in zip(changes, others, strict=True))
        if best - odds < model.min_margin * max(2 * differ - 1, 1):
            return None
    for k, table in enumerate(tables):
        before, after = boards[k], boards[k + 1]
        changed = {i for i, _, _ in changes[k]}
        if any(gone_odds(table, i, side_index(before[i])) < model.min_end for i in changed if after[i] == "."):
            return None
        if _left_unexplained(model, before, changed, table, unsure[k]):
            return None
    return list(rec.boards)


def gone_odds(table: np.ndarray, i: int, side: int) -> float:
    """The log-odds of the piece of `side` (1 red, 2 black) on point `i` gone from it, over staying: left it bare, or
    another read in its place (the mover set down beside it or seen steeply over it, its shadow: whether the point
    is bare now is the other records' question, each of which puts a piece there)."""
    return float(np.logaddexp(table[i, side, 0], table[i, side, 3 - side]))


def _boards_at(rec: Record, start: str, steps: int) -> list[str]:
    """The board a record starts from (`start`), then the board it leaves after each of `steps` still boards."""
    out, board, j = [start], start, 0
    for k in range(steps):
        while j < len(rec.steps) and rec.steps[j] <= k:
            board, j = rec.boards[j], j + 1
        out.append(board)
    return out


def _changes(boards: list[str]) -> list[frozenset[tuple[int, int, int]]]:
    """What changed between each board and the next: (point, side before, side after)."""
    return [frozenset((i, side_index(a[i]), side_index(b[i])) for i in range(90)
                      if side_index(a[i]) != side_index(b[i])) for a, b in pairwise(boards)]


def _left_unexplained(model: MoveModel, before: str, changed: set[int], table: np.ndarray,
                      unsure: frozenset[int]) -> bool:
    """Whether a point a still board's moves leave as it was shows a plain change (`max_other`) that some move of a
    piece's geometry would explain better than nothing: another move was made (e.g. the black cannon
    b7-d7, faint at d7, then b0-c2 and c6-c5; the best two, c6-c5 and b0-c2, left b7's leaving, 6.5, unexplained,
    where b7-d7 scored 3.0). A change no move explains (e.g. the elephant g9 under a glare, 4.4, its eyes'
    points showing nothing) is the light's."""
    sides = [side_index(c) for c in before]
    # A point next to one the moves changed changes with them: the piece set down or taken up there stands over
    # it in the view (a tall piece seen steeply, one set down off its point towards it) or its shadow falls on it
    # (e.g. a tall rook set down on h0: h1 changed 9.3). Another move there is told apart by the margin over the
    # records that make it
    beside = {k for i in changed for k in neighbours(i)}

    def move_odds(src: int, dst: int) -> float:
        return float(table[src, sides[src], 0] + table[dst, sides[dst], sides[src]])

    for i in range(90):
        if i in changed or i in unsure or i in beside or float(table[i, sides[i]].max()) < model.max_other:
            continue
        if before[i] in _CASED:
            best = max((move_odds(i, d) for d in _destinations(before, i) - changed), default=-np.inf)
        else:
            best = max((move_odds(src, i) for src in range(90)
                        if before[src] in _CASED and src not in changed and i in _destinations(before, src)),
                       default=-np.inf)
        if best > 0.0:
            return True
    return False


def in_doubt(known: str, squares: str) -> bool:
    """Whether the fit is asked about the rules' reading `squares` at all: it is no single move, and moves no piece
    left between two points (a point unsure on the known board, now read otherwise: the rules follow those)."""
    return single_move(known, squares) is None and not any(
        k == "?" and s != "?" for k, s in zip(known, squares, strict=True))


def refit(model: MoveModel, known: str, squares: str, features: np.ndarray) -> tuple[str, list[int]] | None:
    """The rules' reading `squares` of a still board, where it is in no single move's shape, replaced by the move
    that clearly best explains the board (the known board with that one piece moved), or else by the two moves that
    do (`two_moves`): (squares, the points pieces were set down on). The rules may also have seen nothing where a
    move plainly shows. None where the reading stands: it is one move, or it moves a piece left between two points
    (the rules follow those), or nothing clearly explains the board (the referee then calls an arbiter on the
    rules' reading, or the board is as it was)."""
    # (where the rules saw nothing at all, the fit may still see a move plainly: e.g. the black rook
    # h9-h8, both points changed by less than the rules' level; score 5.3 where still boards score -2.7 at most)
    if not in_doubt(known, squares):
        return None
    odds = point_odds(model, known, features)
    ranked = ranked_moves(model, known, features, odds)
    fit = _best_of(model, known, odds, ranked)
    if fit is not None:
        return _moved(known, fit.src, fit.dst), [fit.dst]
    board = _two_of(model, known, odds, ranked)
    if board is None:
        return None
    return board, [i for i in range(90) if board[i] in _CASED and board[i] != known[i]]
