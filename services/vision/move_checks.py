"""Where a piece could go, and whether what a point shows now says that it took there: the pieces' geometry
(`reach`, no rules of check or repetition) against the known board, and the inks' colours against the last still
board. Pure."""

from __future__ import annotations

import numpy as np

from .grid import neighbours
from .occupancy import PointReading
from .point_evidence import _clearly_most, _disc_rise, _ink_letter, _sure_colour
from .reach import reach
from .settings import DEFAULTS, TrackerConfig
from .squares import _CASED


def _some_piece_may_take(known: str, src: int, dst: int) -> bool:
    """A piece of some kind, of the side other than `dst`'s, could take on `dst` from `src` (the piece there is not
    known: a '?' point)."""
    board = list(known)
    for letter in "RNBAKCP":
        board[src] = letter.lower() if known[dst].isupper() else letter
        if _may_take("".join(board), src, dst):
            return True
    return False


def _may_take(known: str, src: int, dst: int) -> bool:
    """A piece from `src` can take what stands on `dst`: a piece of the other side (or one not known), where its
    kind of move reaches (e.g. the black cannon g0 took the advisor d0 over the king; the advisor, whose
    outline fell most, cannot reach g0 and so did not take there)."""
    a, b = known[src], known[dst]
    return (a not in _CASED or b not in _CASED or a.isupper() != b.isupper()) and _reaches(known, src, dst)


def _changed_most(candidates: list[int], change: np.ndarray, lvl: float, reading: PointReading,
                  ref_reading: PointReading | None, cfg: TrackerConfig = DEFAULTS) -> int | None:
    """The one of `candidates` whose point changed clearly most (more than twice the next), by at least half the
    change level; or the only candidate, changed by a quarter of it, whose ink fell to under half (a point that
    read dimly already: a dark corner, or a piece whose ink does not read replacing one whose ink did)."""
    if not candidates:
        return None
    order = sorted(candidates, key=lambda k: -change[k])
    best = order[0]
    if len(order) > 1 and change[best] <= cfg.clear_margin * change[order[1]]:
        return None
    if change[best] > cfg.change_half * lvl:
        return best
    faded = ref_reading is not None and reading.density[best] < cfg.ink_lost * ref_reading.density[best]
    return best if len(order) == 1 and faded and change[best] > cfg.change_quarter * lvl else None


def _where_it_could_go(known: str, src: int, arrived: list[int], change: np.ndarray, lvl: float,
                       cfg: TrackerConfig = DEFAULTS) -> list[int]:
    """Of the points where a piece seems to have arrived, those where the one piece that left `src` could go, and
    their neighbours (the other point of a piece set down half-way); or, where it could go to none, those that
    changed over the level `lvl`. One piece moved: an arrival where it cannot go, beside one where it can, is the
    board's (e.g. the cannon b7-d7, while the edge point g0's double frame line read as a black piece); and
    a point whose ink rose but which changed under the level is no arrival where it cannot go (e.g. the
    rook h3 took g3 while the light changed the board; the edge points i1 and i2, where a rook from h3 cannot go,
    read the frame's ink as pieces; e.g. the cannon b7 took g7, the ink at g8 beside it rose)."""
    could = [i for i in arrived if _reaches(known, src, i)]
    if not could:
        # (but not where no piece on the board can go: no piece changed that point, the light did; e.g. the
        # cannon e7 took e4 while a patch of sun moved off the empty corner a8, which changed 0.26 and read 0.83
        # occupied, as it had before)
        anywhere = _reached_by_any(known)
        return [i for i in arrived if change[i] > lvl and i in anywhere]
    # (a neighbour whose ink rose but which changed under the level shows the ink leaning over: half a piece
    # changes a point over it; e.g. the rook a9-a8, b8 changed 0.12 at the level 0.15. Nor one the light changed:
    # `_lit_alike`)
    beside = [i for i in arrived if i not in could and change[i] > lvl and any(k in could for k in neighbours(i))]
    anywhere = _reached_by_any(known) if beside else set()  # (every piece's reach, once)
    return [i for i in arrived if i in could or (i in beside and not _lit_alike(known, i, change, anywhere, cfg))]


def _lit_alike(known: str, i: int, change: np.ndarray, anywhere: set[int], cfg: TrackerConfig = DEFAULTS) -> bool:
    """An empty point beside `i` where no piece on the known board can go (not in `anywhere`, `_reached_by_any`)
    changed at least `twin_change` as much as `i`: no piece changed it, so the light did (a sunlit patch or a shadow
    moving over the board changes neighbouring points alike, and a dark patch reads as ink), and `i`'s change is the
    same light's, no evidence of a piece (e.g. the pawn c3-c4 under a patch of sun moving off d3 and d4, both changed
    0.37 and d4 read 1.00 occupied: read as c3-d4)."""
    return any(known[k] == "." and k not in anywhere and change[k] >= cfg.twin_change * change[i]
               for k in neighbours(i))


def _reached_by_any(known: str) -> set[int]:
    """The points some piece on the known board could go to or take on, by its kind of move (a piece whose type is
    not known, `?`, `X`, `x`, by any kind's move of its side or either)."""
    anywhere: set[int] = set()
    board = list(known)
    for s in range(90):
        c = known[s]
        if c == ".":
            continue
        kinds = c if c in _CASED else "RNBAKCP" if c == "X" else "rnbakcp" if c == "x" else "RNBAKCPrnbakcp"
        for k in kinds:
            board[s] = k
            anywhere |= reach("".join(board), s) or set()
        board[s] = c
    return anywhere


def _reaches(known: str, src: int, dst: int) -> bool:
    """The piece on `src` could go to `dst` by its kind of move on the known board (any point where its type is not
    known)."""
    where = reach(known, src)
    return where is None or dst in where


def _reaches_past(known: str, src: int, dst: int, other: int) -> bool:
    """The piece on `src` could go to the empty point `dst` with a piece of its own side on `other` (the other
    point of a piece left between the two, which it did not take)."""
    board = list(known)
    board[dst], board[other] = ".", ("P" if known[src].isupper() else "p")
    return _reaches("".join(board), src, dst)


def _takes(known: str, src: int, dst: int, reading: PointReading, cfg: TrackerConfig = DEFAULTS) -> bool:
    """The piece from `src` took on `dst`: the other side's piece stood there and `dst` now surely shows the mover's
    colour."""
    return (known[src] in _CASED and known[dst] in _CASED and known[src].isupper() != known[dst].isupper()
            and _sure_colour(reading, dst, cfg=cfg) == known[src].isupper())


def _turned(known: str, src: int, dst: int, reading: PointReading, ref_reading: PointReading | None,
            cfg: TrackerConfig = DEFAULTS) -> bool:
    """The piece from `src` may have taken on `dst`: the other side's piece stood there, read surely as its colour
    on the last still board, and `dst` now reads on the mover's side of even (not surely: weaker than `_takes`)."""
    if ref_reading is None or known[src] not in _CASED or known[dst] not in _CASED:
        return False
    mover_red = known[src].isupper()
    if mover_red == known[dst].isupper() or _sure_colour(ref_reading, dst, cfg=cfg) != (not mover_red):
        return False
    # (or its redness moved half-way over towards the mover's: the colour scale is this frame's, and one piece's
    # ink in another's place can read short of even on a board whose colours split poorly)
    rose = float(reading.red[dst] - ref_reading.red[dst])
    return bool(reading.red[dst] > cfg.red_even) == mover_red or (rose > cfg.red_swing if mover_red
                                                                  else rose < -cfg.red_swing)


def _taken_under_glare(known: str, reading: PointReading, ref_reading: PointReading, fell: np.ndarray,
                       change: np.ndarray, lvl: float, cfg: TrackerConfig = DEFAULTS) -> tuple[int, int] | None:
    """A capture under glare, where no point changed at the level `lvl`: (the taker's point, the taken one).

    The taken piece's point read no ink on the last still board (the glare over its disc) and now plainly shows a
    piece of the other side, the taker's ink; the one piece whose round outline fell clearly most (`fell`), and
    which could take there, is the taker, though its point changed under the level (e.g. the black
    rook c5 took the red rook on d5, which had read 0.05 occupied and now 1.00 and surely dark; c5 changed 0.099 at
    the level 0.109, its outline fell 0.26, no other piece's more than 0.09)."""
    shows = [j for j in range(90) if known[j] in _CASED and ref_reading.occupied[j] < cfg.ink_none
             and reading.occupied[j] > cfg.ink_plain and _sure_colour(reading, j, cfg=cfg) == (not known[j].isupper())]
    src = _clearly_most(fell, cfg.outline_fall_weak, cfg=cfg)
    if len(shows) == 1 and src is not None and change[src] > cfg.change_half * lvl and _may_take(known, src, shows[0]):
        return src, shows[0]
    return None


def _disc_came(score: np.ndarray, ref_score: np.ndarray, known: str, taken: set[int], src: int,
               change: np.ndarray, cfg: TrackerConfig = DEFAULTS) -> int | None:
    """The empty point near which a piece's round outline came since the last still board, looked for within 0.7 of
    each point (a disc set down half-way between two points lies 0.5 from each): the one whose strongest circle
    rose most among the points the piece from `src` could go to, by at least 0.2 and more than twice any other's of
    those, and more than any other's where it could not go; but for its neighbours' (the same disc, seen from
    beside it) and those of `src`, the point the piece left (where a disc left, the circle score around it changes
    its shape). (e.g. the cannon h2-e2 left between e2 and d2, which rose by 0.22 and 0.20, i2 beside h2
    by 0.18 and i1, where a cannon from h2 cannot go, by 0.11.) And the point changed (`change`, the views' change
    per point) at least twice as much as the board's typical point: a disc come alters the view there (e.g.
     d8 changed 0.034, the median 0.013); a blurred view shifts the circle scores where nothing came (e.g.
     the cannon e6 took a6, and e5's score rose by 0.2 on a blurred board where it changed 0.015, the median
    0.013)."""
    empty = [i for i in range(90) if known[i] in ".?" and i not in taken]
    could = [i for i in empty if _reaches(known, src, i)]
    if not could or len(empty) < 2:
        return None
    rise = dict(zip(empty, _disc_rise(score, ref_score, empty, cfg=cfg).tolist(), strict=True))
    best = max(could, key=lambda k: rise[k])
    near = {best, *neighbours(best), *neighbours(src)}
    if rise[best] < cfg.outline_rise or any((cfg.clear_margin * rise[k] if k in could else rise[k]) > rise[best]
                                            for k in empty if k not in near):
        return None
    if change[best] < cfg.came_change_typical * float(np.median(change)):
        return None
    return best


def _as_only_mover(known: str, squares: str, v: int, seen: str, unseen: frozenset[int]) -> str:
    """The letter of a piece read arriving on point v as `seen` (X / x, its ink's colour), where the camera misses
    the points `unseen`, against the pieces that could have come: those on points out of view, and those whose
    points in view read emptied, that reach v (or may take there). Where none of `seen`'s side could and pieces of
    the other side could, the ink's colour is wrong (a piece cannot come from nowhere; a dark ink or a shadow over
    a red piece): the one such piece's letter, or its side's X / x; where none at all could, '?'."""
    movers = {known[w] for w in range(90) if w != v and known[w] in _CASED
              and (w in unseen or squares[w] in ".?") and _may_take(known, w, v)}
    if any(m.isupper() == (seen == "X") for m in movers):
        return seen
    sides = {m.isupper() for m in movers}
    if len(sides) != 1:
        return "?"
    return next(iter(movers)) if len(movers) == 1 else ("X" if sides.pop() else "x")


def unseen_partners(known: str, squares: str, placed: list[int], unseen: frozenset[int], reading: PointReading,
                    cfg: TrackerConfig = DEFAULTS) -> tuple[str, list[int]]:
    """The reading `squares` of a still board against the known board, where the camera does not see the points
    `unseen`: (squares, placed) with every arrival on a point in view that nothing seen confirms as one move made
    undetermined. A point out of view gives no evidence, so it neither confirms nor rules out a move there: a piece
    read arriving whose letter is carried from a point out of view (its departure unseen), or one that left a
    point in view from which it could as well have gone out of view, is one move only where its own ink plainly
    shows a piece on its new point (`unseen_arrival_ink`); it then reads as its ink says (X / x, or its type where
    the classifier is sure; the referee finds the legal moves to it), else '?' (the referee takes no move from
    it, or calls an arbiter). An arrival whose source is in view and which could not have gone out of view stays
    as read."""
    if not unseen:
        return squares, placed
    out = list(squares)
    for v in range(90):
        letter = squares[v]
        if v in unseen or letter in ".?" or letter == known[v]:
            continue
        if known[v] in _CASED and letter in _CASED and known[v].isupper() == letter.isupper():
            continue  # the same side's piece read as another type: no arrival
        # the points in view this piece may have left: they held its letter and read emptied now
        sources = [w for w in range(90) if w not in unseen and w != v and squares[w] in ".?"
                   and known[w] in _CASED and (known[w] == letter if letter in _CASED
                                               else known[w].isupper() == (letter == "X"))]
        confirmed = bool(sources) and not any(_reaches(known, w, u) for w in sources for u in unseen)
        if confirmed:
            continue
        plain = float(reading.occupied[v]) > cfg.unseen_arrival_ink
        seen = _ink_letter(reading, v, cfg=cfg) if plain else "?"
        out[v] = _as_only_mover(known, squares, v, seen, unseen) if seen in "Xx" else seen
    fixed = "".join(out)
    return fixed, [p for p in placed if fixed[p] == squares[p]]
