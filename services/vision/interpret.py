"""Interpretation of a still board against the last one: what changed (the squares, the pieces placed, nudged and
left between two points), and the passes that correct it where the board plainly shows otherwise. Pure."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from .detect import find_discs, parallax_centres
from .frames import _change_map, _norm, _pt
from .grid import POINTS_UV, neighbours, point_at
from .move_checks import (
    _changed_most,
    _disc_came,
    _may_take,
    _reaches,
    _reaches_past,
    _some_piece_may_take,
    _taken_under_glare,
    _takes,
    _turned,
    _where_it_could_go,
)
from .occupancy import PointReading, S, windows
from .point_evidence import (
    Outlines,
    _between,
    _change_disc,
    _change_level,
    _clearly_most,
    _colour_turned,
    _disc_offset,
    _disc_rise,
    _half_way_between,
    _half_way_towards,
    _ink_letter,
    _left_by_a_piece,
    _on_edge,
    _outline_came,
    _outline_gone,
    _outline_left,
    _outline_moved,
    _pair_emptied,
    _pair_left,
    _plain_disc_near,
    _point_change,
    _stands_on,
    _sure_colour,
    _towards,
)
from .settings import DEFAULTS, TrackerConfig
from .squares import _CASED
from .touch import changed_beside


def interpret(known: str, ref_view: np.ndarray | None, ref_reading: PointReading | None, view: np.ndarray,
              reading: PointReading, cfg: TrackerConfig, outlines: Outlines | None = None,
              change: np.ndarray | None = None, set_down: np.ndarray | None = None,
              tops: tuple[float, float, float] | None = None
              ) -> tuple[str, list[int], list[int], list[tuple[int, int]]]:
    """What changed between the last stable board and this one: (squares, placed, nudged, misaligned pairs).

    A point counts as changed when its disc looks different from the last still board. Among the changed points
    that held a piece, the one that now looks least like a piece is where a piece left (a move always empties
    its point); a changed point that was empty and now shows a piece is where one arrived; with no arrival, the
    changed occupied point with the largest change is a capture. Smaller changes on occupied points whose ink
    peak moved are nudges. The moved piece keeps its letter (one source, one destination); anything else the
    tracker cannot explain gets X / x by its ink, or `?`. `outlines`: the two views' circle scores, shared with the
    caller (made here if not given); `change`: `_point_change(ref_view, view)`, where the caller has it;
    `set_down`: how far (in spacings, across and down the view) the hand's fingertips went from where it took a
    piece up to where it set one down (`_set_down_shift`), where the hand's visit showed it; `tops`: the top faces'
    homothety where the view is taken through their plane (`tops.py`), else None.
    """
    w = _Work(known=known, ref_view=ref_view, ref_reading=ref_reading, view=view, reading=reading,
              cfg=cfg, outlines=outlines, change=change, set_down=set_down, tops=tops)
    _measure(w)
    _changed_points(w)
    if (done := _not_a_move(w)) is not None:
        return done
    for step in _PASSES:
        step(w)
    return _squares(w)


class _Work:
    """One interpretation's working state, shared by its steps: the inputs (`interpret`'s arguments), what the
    first step measures (levels, inks, parallax), and the points found so far (was occupied, arrived, vacated,
    taken, between two points, ...). Each step loads the fields it uses and stores back the ones it binds.
    The methods answer the questions the steps share."""

    arrived: Any = None
    captured: Any = None
    cfg: Any = None
    change: Any = None
    cmap: Any = None  # the change map since the last still board (`_change_map`), made where first asked
    dens: Any = None
    emptied_too: Any = None
    fresh: Any = None
    is_piece: Any = None
    known: Any = None
    leaning: Any = None
    levels: Any = None
    looks: Any = None  # point left -> each point's change where its look would stand (`change_at_looks`), once
    lvl: Any = None
    misaligned: Any = None
    norms: Any = None  # the last still board's view and this one, normalised (`_norm`), made where first asked
    nudged: Any = None
    occ: Any = None
    outline_delta: Any = None
    outlines: Any = None
    parallax: Any = None
    reading: Any = None
    ref_circles: Any = None
    ref_dens: Any = None
    ref_occ: Any = None
    ref_reading: Any = None
    ref_view: Any = None
    set_down: Any = None
    sq: Any = None
    straightened: Any = None
    taken: Any = None
    tops: Any = None  # the top faces' homothety where the view is taken through their plane (`tops.py`), else None
    unexplained: Any = None
    unsure_before: Any = None
    vacated: Any = None
    view: Any = None
    walls: Any = None  # known pieces' points whose change is a tall piece's side wall come or gone beside them: kept
    view_circles: Any = None
    was_occ: Any = None

    def __init__(self, **fields: Any) -> None:
        for k, v in fields.items():
            setattr(self, k, v)

    def pieces_but(self, *points: int) -> list[int]:
        """The points known to hold a piece, less `points` (the ones whose outline is being judged)."""
        is_piece, = self.is_piece,
        return [k for k in range(90) if is_piece[k] and k not in points]

    def emptied(self, i: int) -> bool:
        """Point i, which held a piece, shows it gone: not a trace of ink left (`ink_trace`), and all of its piece's
        ink gone, or all but a quarter of it (or its piece's ink never read) with its round outline gone too; or read
        emptied by the joint of the cues where the ink fails (`read_emptied`)."""
        cfg, dens, ref_dens, ref_occ = self.cfg, self.dens, self.ref_dens, self.ref_occ
        return bool((self.occ[i] < cfg.ink_trace
                     and (dens[i] < cfg.ink_all_gone * ref_dens[i]
                          or ((dens[i] < cfg.ink_most_gone * ref_dens[i] or ref_occ[i] < cfg.ink_none)
                              and self.ref_view is not None
                              and _outline_gone(self.outlines.discs(), i, self.pieces_but(i), cfg=cfg))))
                    or self.read_emptied(i))

    def read_emptied(self, i: int) -> bool:
        """Where the ink alone does not tell this board's pieces from its empty points (`PointReading.joint`), point i
        reads emptied by the joint of the cues (its ink, its round outline, its printed lines bared, weighed as they
        tell the known position's points apart): under `joint_emptied`. A point's ink then says nothing of whether a
        piece stays on it: the printed marks an emptied point bares read as much ink as a piece's character did."""
        joint = self.reading.joint
        return joint is not None and float(joint[i]) < self.cfg.joint_emptied

    def outline_fell(self) -> np.ndarray:
        """How much each known piece's round outline fell (only a piece's can leave; elsewhere 0)."""
        is_piece, outline_delta = self.is_piece, self.outline_delta
        return np.where(is_piece, -outline_delta(), 0.0)

    def outline_came(self) -> np.ndarray:
        """How much each point not known to hold a piece saw an outline come (elsewhere 0)."""
        is_piece, outline_delta = self.is_piece, self.outline_delta
        return np.where(is_piece, 0.0, outline_delta())

    def set_down_near(self, src: int) -> list[int]:
        """The empty points the piece on `src` could go to within half a spacing of where the hand's fingertips
        went on to from where they took it up (`set_down`), before they drew back."""
        cfg = self.cfg
        known, set_down, taken = self.known, self.set_down, self.taken
        if set_down is None:
            return []
        return [i for i in range(90) if known[i] in ".?" and i not in taken and _reaches(known, src, i)
                and float(np.hypot(*(POINTS_UV[i] - POINTS_UV[src] - set_down))) < cfg.set_down_within]

    def went_where_it_could(self, src: int, arrived: list[int]) -> list[int]:
        """The one arrival where the piece from `src` cannot go, given to the point beside it where it could."""
        cfg, change, known, lvl, misaligned = self.cfg, self.change, self.known, self.lvl, self.misaligned
        occ, parallax, pieces_but, reading = self.occ, self.parallax, self.pieces_but, self.reading
        ref_view, straightened, taken, view_circles = self.ref_view, self.straightened, self.taken, self.view_circles
        if (len(arrived) == 2 and known[arrived[0]] == known[arrived[1]] == "?"
                and arrived[1] in neighbours(arrived[0])):
            # Both points of a piece left between them show a piece now: it was set onto one of them under the
            # hand of a move to the other, the one the piece that left can reach (e.g. the rook between
            # i8 and i7 set onto i8 as the horse h9-i7 came; on a board whose red ink reads dark, the rook read
            # red by its ink). The pair's piece was not taken (it stands there), so it stood in the mover's way:
            # only the near point of the pair can be reached past it (e.g. the horse between i2 and i1
            # set onto i2 as the rook i0-i1 came). The pair's point stays unsure, its letter kept for when it is
            # plainly seen again.
            a, b = arrived
            could = [p for p, q in ((a, b), (b, a)) if _reaches_past(known, src, p, q)]
            if len(could) == 1:
                straightened.extend(a for a in arrived if a not in could)
                return could
        if len(arrived) == 1 and known[arrived[0]] == "?" and not _reaches(known, src, arrived[0]):
            # A piece left between two points by an earlier move is straightened onto one of them when a piece
            # comes to the other: the piece that left went to the one it could reach (e.g. the cannon
            # between c2 and d2 set onto d2 under the hand of the horse d4-c2; d2, where a horse from d4 cannot
            # go, changed most)
            pair = [k for k in neighbours(arrived[0]) if known[k] == "?" and k not in taken and change[k] > lvl
                    and occ[k] > cfg.ink_piece and _reaches(known, src, k)]
            if len(pair) == 1:
                arrived = pair
        if len(arrived) == 1 and known[arrived[0]] == "." and not _reaches(known, src, arrived[0]):
            # The ink came where the piece that left cannot go: it leans there from the neighbour it went to, which
            # its ink peak lies well towards and which changed too (e.g. the rook h7-g7 set down off g7
            # towards g8, the camera's parallax carrying its top face further; g8 read 0.93 occupied, g7 0.04)
            a = arrived[0]
            went = [k for k in neighbours(a) if known[k] == "." and k not in taken and change[k] > cfg.change_half * lvl
                    and _reaches(known, src, k)
                    and _lean(reading, parallax, a, k) >= cfg.lean_far]
            if len(went) == 1:
                return went
            # Or it stands between the two (5.10), its ink peak only part of the way over: its round outline
            # half-way between them tells (e.g. the cannon b2-b6 left between b6 and c6, c6 changed
            # 0.25, b6 0.14 under the level, the ink peak 0.41 towards b6)
            # (of two such neighbours, the one its outline stands half-way towards: e.g. the rook i9 left between
            # i8 and h8 on a board whose edge file reads dark as ink, h9 beside the rook's old point changed too)
            went = [k for k in neighbours(a) if known[k] == "." and k not in taken and change[k] > cfg.change_half * lvl
                    and _reaches(known, src, k)]
            if ref_view is not None and len(pieces_but(src)) >= cfg.least_standing:
                went = [k for k in went if _half_way_between(view_circles(), a, k, pieces_but(src), cfg)
                        and not self.look_on_a_point(src, a, k)]
                if len(went) == 1:
                    misaligned.append((min(a, went[0]), max(a, went[0])))
                    taken.update((a, went[0]))
                    return []
        return arrived

    def left_most(self, cand: list[int]) -> int:
        """Of the changed points that held a piece, where one left: the point changed most, and read least like a
        piece (a move empties its point, though an edge or corner point keeps some ink of the frame)."""
        cfg = self.cfg
        change, occ = self.change, self.occ
        return max(cand, key=lambda k: change[k] * (cfg.left_occ_weight - occ[k]))

    def left_towards(self, a: int, src: int) -> int | None:
        """The piece from `src` went to the empty point a where it could and its ink peak lies well over towards an
        empty neighbour, which changed though it reads under half a piece: where its round outline stands half-way
        between the two, it was left there (5.10): that neighbour, else None. (e.g. the cannon b7-e7 left
        between e7 and f7, f7 changed 0.10 and read 0.30 occupied; the ink peaks, less a median parallax of 0.28
        across, did not agree.) The neighbour need not be a point the piece could go to (e.g. the
        rook i0-h0 left towards h1, which changed 0.095 at the level 0.151; the disc 0.52 and 0.50 off the two), nor
        have changed where its own ink rose many-fold: a disc as light as the wood (e.g. the pawn
        c3-c4 left half-way towards d4, d4 changed 0.025, its ink 0.001 -> 0.100). The ink peak at either point may
        be the one leaning towards the other (e.g. the horse i2-h4 left half-way towards h5, h4's
        peak 0.13 towards h5, h5's 0.28 towards h4; the disc 0.47 and 0.54 off the two)."""
        cfg, change, dens, known, lvl = self.cfg, self.change, self.dens, self.known, self.lvl
        parallax, pieces_but, reading, ref_dens = self.parallax, self.pieces_but, self.reading, self.ref_dens
        ref_view, taken, view_circles = self.ref_view, self.taken, self.view_circles
        if known[a] != "." or ref_view is None or len(pieces_but(src)) < cfg.least_standing:
            return None
        # (or, where the ink peaks lean less, the round outline seen half-way from both points, each towards the
        # other: a piece half-way covers half of each point's ink window, and a character set off its top's centre
        # pulls the peak short; e.g. the pawn a3-a4 left half-way towards a5, the peaks leaning 0.23 and 0.08, the
        # disc 0.46 and 0.54 off the two)
        towards = [k for k in neighbours(a) if known[k] == "." and k not in taken
                   and (change[k] > cfg.change_half * lvl
                        or dens[k] > cfg.ink_manyfold * ref_dens[k] + cfg.ink_rise_least)
                   and (max(_lean(reading, parallax, a, k), _lean(reading, parallax, k, a)) >= cfg.lean_some
                        or self.outline_half_way_from_both(a, k, src))]
        # (not where the piece's characters read plainly on a, not leaning towards the neighbour (`_topped_on`):
        # a tall piece's side wall and shadow reach over the neighbour, raising its change, its ink's lean and an
        # outline half-way; e.g. the horse b0-c2, c2 read 1.00 occupied with its peak 0.12 off, c3 changed as
        # much, 0.252 against 0.248, its peak 0.53 towards c2)
        # (nor where the piece's look is found on a point rather than half-way: `look_on_a_point`)
        if (len(towards) == 1 and _half_way_between(view_circles(), a, towards[0], pieces_but(src), cfg)
                and not _topped_on(reading, parallax, a, over=towards[0], cfg=cfg)
                and not self.look_on_a_point(src, a, towards[0])):
            return towards[0]
        return None

    def outline_half_way_from_both(self, a: int, k: int, src: int) -> bool:
        """The round outline nearest each of the neighbouring points a and k stands half-way towards the other
        (`_half_way_towards`, the standing pieces but the one from `src` measuring the parallax): one disc between
        the two, seen so from both sides (a disc set down 0.3 off a point is seen from it short of half-way)."""
        pieces, score = self.pieces_but(src), self.view_circles()
        return (_half_way_towards(score, a, pieces, self.cfg) == k
                and _half_way_towards(score, k, pieces, self.cfg) == a)

    def look_of(self, src: int) -> np.ndarray | None:
        """Where the change the piece leaving `src` made is centred off its point (spacings, (u, v)): its look, the top
        face with the side wall and shadow a tall piece shows on one side (`_look_centre`), where that centre stands
        `skirt_least` or more off the point; else None (a flat piece's look is centred on its point)."""
        cfg, ref_view, view = self.cfg, self.ref_view, self.view
        if ref_view is None:
            return None
        if self.cmap is None:
            self.cmap = _change_map(ref_view, view)
        skirt = _look_centre(self.cmap, src, cfg) - POINTS_UV[src]
        return skirt if float(np.hypot(*skirt)) >= cfg.skirt_least else None

    def look_on(self, src: int, a: int, k: int) -> bool:
        """The change measured where the look of the piece that left `src` would stand on a (`change_at_looks`: a
        tall piece's) outdoes that measured where it would stand on its neighbour k (`skirt_margin`): the piece's top
        face is on a, and what k shows is its side wall and shadow. One left half-way between the two changes both
        looks' places about alike (where it took, the prey's look left from a as the taker's came half-way)."""
        if self.look_of(src) is None:
            return False
        seen = self.change_at_looks(src)
        return bool(seen[a] > self.cfg.skirt_margin * seen[k])

    def change_at_looks(self, src: int) -> np.ndarray:
        """Each point's change measured where the look of the piece that left `src` would stand on it (`look_of`; the
        same on every point of the board: the camera's and the light's side), else as measured about the point. A
        piece arriving changes its look's disc; the neighbour its look leaves changes under the skirt leaving, which
        measured there lies back over the point left."""
        skirt = self.look_of(src)
        if skirt is None:
            return self.change
        if self.looks is None:
            self.looks = {}
        if src not in self.looks:  # (90 discs measured: asked again for each neighbour judged)
            self.looks[src] = np.array([_change_about(self.cmap, POINTS_UV[k] + skirt, self.cfg) for k in range(90)])
        return self.looks[src]

    def look_unlike(self, src: int, uv: np.ndarray, before: bool = False) -> float:
        """How unlike the look of the piece on `src` at the last still board (its top face, side wall and shadow,
        about the point and its look's offset, `look_of`) this view is about board position `uv` (spacings) with the
        same offset: the mean absolute difference of the two normalised views (`_norm`: the light's drift cancels)
        within `look_radius`. Small where that piece now stands: a piece carries its whole look with it, however
        little of it reads as ink or as a round outline (a red piece's washed-out characters, a tall piece's top
        face seen far off its point). `before`: the last still board's view about `uv` instead of this one's."""
        cfg = self.cfg
        if self.norms is None:
            self.norms = (_norm(self.ref_view), _norm(self.view))
        ref, now = self.norms
        skirt = self.look_of(src)
        off = np.zeros(2) if skirt is None else skirt
        x0, y0 = _pt(0)
        r = round(cfg.look_radius * S)
        yy, xx = np.mgrid[-r:r + 1, -r:r + 1]
        inside = (xx ** 2 + yy ** 2) <= r * r

        def about(img: np.ndarray, at: np.ndarray) -> np.ndarray:
            centre = (x0 + float(at[0]) * S, y0 + float(at[1]) * S)
            return cv2.getRectSubPix(img, (2 * r + 1, 2 * r + 1), centre)

        there = about(ref if before else now, uv + off)
        return float(np.abs(there - about(ref, POINTS_UV[src] + off))[inside].mean())

    def look_found(self, src: int, i: int) -> float | None:
        """`look_unlike` on point i where the look of the piece from `src` is found there, else None: the view there
        under 1/`look_found` of what the same place showed on the last still board where it was empty (the look
        came whole), under 1/`look_margin` of it where a piece stood there (a taker's look in its prey's place:
        pieces of a set look alike)."""
        now = self.look_unlike(src, POINTS_UV[i])
        least = self.cfg.look_found if self.known[i] in ".?" else self.cfg.look_margin
        return now if self.look_unlike(src, POINTS_UV[i], before=True) > least * now else None

    def look_on_a_point(self, src: int, a: int, k: int) -> bool:
        """The look of the piece from `src` (`look_unlike`) is found on a point rather than half-way between the
        neighbours a and k: on a or k, or on another empty point the piece could go to, where it is found
        (`look_found`), `look_margin` times more like itself than at the two points' middle. A piece left half-way
        shows its whole look there, half a spacing off each point; where a point shows it whole, a round outline
        seen half-way is the board's print or the piece's own side wall (a tall piece seen from the side, its top
        face further off its point than the camera's parallax measured from the outlines tells)."""
        return self.look_point(src, a, k) is not None

    def look_point(self, src: int, a: int, k: int) -> int | None:
        """The point `look_on_a_point` finds the look of the piece from `src` on, else None."""
        known, ref_view = self.known, self.ref_view
        if ref_view is None:
            return None
        places = {a, k} | {i for i in range(90) if known[i] in ".?" and _reaches(known, src, i)}
        unlike = {i: self.look_unlike(src, POINTS_UV[i]) for i in places}
        best = min(unlike, key=lambda i: unlike[i])
        middle = self.look_unlike(src, (POINTS_UV[a] + POINTS_UV[k]) / 2.0)
        return best if self.look_found(src, best) is not None and middle > self.cfg.look_margin * unlike[best] else None

    def look_prefers(self, src: int, a: int, k: int) -> bool:
        """The look of the piece from `src` is found on point a (`look_found`), `look_margin` times more like itself
        than on point k."""
        if self.ref_view is None or (on_a := self.look_found(src, a)) is None:
            return False
        return bool(self.look_unlike(src, POINTS_UV[k]) > self.cfg.look_margin * on_a)

    def look_went(self, src: int) -> int | None:
        """The point the piece from `src` could go to (empty, or holding a piece it may take) where its look is found
        (`look_found`), `look_margin` times more like itself (`look_unlike`) there than on its own point, on any
        other point it could go to, and half-way between two neighbouring points of those; else None."""
        cfg, known, ref_view = self.cfg, self.known, self.ref_view
        if ref_view is None:
            return None
        could = [i for i in range(90) if i != src and ((known[i] in ".?" and _reaches(known, src, i))
                                                      or (known[i] in _CASED and _may_take(known, src, i)))]
        if not could:
            return None
        unlike = {i: self.look_unlike(src, POINTS_UV[i]) for i in [src, *could]}
        went = min(could, key=lambda i: unlike[i])
        halves = [self.look_unlike(src, (POINTS_UV[went] + POINTS_UV[k]) / 2.0) for k in neighbours(went)
                  if k in unlike]
        others = [v for i, v in unlike.items() if i != went] + halves
        if self.look_found(src, went) is None:
            return None
        return went if all(v > cfg.look_margin * unlike[went] for v in others) else None

    def went_by_look(self, src: int) -> tuple[list[int], list[int]] | None:
        """A piece that left `src` and arrived nowhere the inks tell: (arrived, captured) where its whole look is
        found on one point it could go to (`look_went`), clearly more like itself there than on its own point or
        anywhere else it could stand, and that point changed where the look would stand (half the level); else
        None. A piece pushed keeps its look on its own point. (e.g. the red cannon b2-b3 on a board in glare, its
        ink 0.008 at b2 and read nowhere after, b2 still 0.21 occupied by the light and its printed marks; b3
        changed 0.060 at the level 0.090, 0.098 where the look would stand.) Where a piece stood there, it took it
        (e.g. the red pawn c4xc5, both pawns' inks washed out, c5 changed 0.046, the look 0.060 unlike the pawn's
        there, 0.076 the taken one's, 0.099 on c4)."""
        cfg, known = self.cfg, self.known
        if known[src] not in _CASED or self.ref_view is None:
            return None
        went = self.look_went(src)
        if went is None or self.change_at_looks(src)[went] <= cfg.change_half * self.lvl:
            return None
        return ([], [went]) if known[went] in _CASED else ([went], [])

    def shown_by_the_mover(self, mover: int | None, i: int, j: int) -> list[int]:
        """The points of the neighbouring pair i, j that show only the side wall and shadow of the piece that moved
        (`mover`, the one known piece whose point emptied; None where not one), and no piece between them: a tall
        piece's side wall and shadow darken the neighbours on one side of where it stands, and read there as ink
        leaning towards each other, as a piece half-way's would (e.g. the cannon h2-e2, its shadow over f3 and f2, 0.96
        and 0.04 occupied, their peaks 0.53 and 0.59 towards each other). Two points that were both empty hold a piece
        between them only where the move brought it there, and one piece moves: none where the mover can go to
        neither, or is seen whole on another point it could go to (an arrival read plainly, its ink peak short of
        half-way along every line from it): both points show its shadow; none where its whole look (top face, side
        wall, shadow) is found on a point rather than half-way (`look_point`): the pair's points but that one. Else
        none (a piece may stand between the two)."""
        known = self.known
        if mover is None or known[i] != "." or known[j] != ".":
            return []
        if not (_reaches(known, mover, i) or _reaches(known, mover, j)):
            return [i, j]
        if any(a not in (i, j) and _reaches(known, mover, a) and self.ink_on_point(a) for a in self.arrived):
            return [i, j]
        on = self.look_point(mover, i, j)
        return [] if on is None else [k for k in (i, j) if k != on]

    def stands_plainly(self, a: int, src: int) -> bool:
        """A piece plainly stands on point a, as the piece that left `src` would where it went: its ink reads plainly
        (`ink_plain`), its ink peak lies short of half-way along every line from a (the camera's parallax removed),
        and a round outline as plain as the standing pieces' (`outline_plain` of their median) is centred on a
        (`_stands_on`). A tall piece's shadow or side wall cast over a neighbouring empty point reads as dark ink
        there, but off the point (towards the piece that casts it) or with no plain round outline of its own (e.g.
        0.55 where the standing pieces' reach 0.8, risen by 0.02)."""
        cfg = self.cfg
        standing = self.pieces_but(src)
        if not self.ink_on_point(a) or self.ref_view is None or len(standing) < cfg.least_standing:
            return False
        discs = self.outlines.discs()
        return (float(discs[a]) >= cfg.outline_plain * float(np.median(discs[standing]))
                and _stands_on(self.outlines, a, standing, cfg=cfg))

    def ink_on_point(self, a: int) -> bool:
        """Point a's ink reads plainly (`ink_plain`) and its peak lies short of half-way along every line from a, the
        camera's parallax removed (as the peaks looked at for a piece between two points): a piece on a, not a
        shadow or side wall cast over it from a neighbour."""
        cfg = self.cfg
        short = cfg.misaligned_from - cfg.between_short
        return self.occ[a] > cfg.ink_plain and all(
            float(np.dot(self.reading.offset[a] - self.parallax, POINTS_UV[k] - POINTS_UV[a])) < short
            for k in neighbours(a))

    def the_one_standing(self, src: int, arrived: list[int]) -> list[int]:
        """Of several empty points where the one piece that left `src` seems to have arrived, the one it could go to
        where a piece plainly stands (`stands_plainly`), where none of the others does and its round outline rose
        more than at each of them: one piece moved, and the others show only the shadow or side wall of a tall piece
        beside them. They keep what they were. Else `arrived` as it is (two points a piece plainly stands on, or
        none, are no move's to choose between: the still board fits no move, and the arbiter is asked)."""
        known = self.known
        if any(known[a] != "." for a in arrived):
            return arrived
        standing = [a for a in arrived if self.stands_plainly(a, src)]
        if len(standing) != 1 or not _reaches(known, src, standing[0]):
            return arrived
        rise = self.outline_delta()
        if any(rise[a] >= rise[standing[0]] for a in arrived if a != standing[0]):
            return arrived
        self.leaning.extend(a for a in arrived if a != standing[0] and a not in self.leaning)
        return standing

    def fresh_pairs(self) -> list[tuple[int, int]]:
        """The pairs found this move: a piece left half-way by an earlier move (both points already unsure) is
        seen again, and is not this move's."""
        known, misaligned = self.known, self.misaligned
        return [(a, b) for a, b in misaligned if not (known[a] == "?" and known[b] == "?")]


def _measure(w: _Work) -> None:
    """What every step weighs: each point's change and the level it must pass, the inks now and
    on the last still board, the round outlines (computed when first asked), which points hold a piece."""
    cfg, change, known, lvl, outlines, reading = w.cfg, w.change, w.known, w.lvl, w.outlines, w.reading
    ref_reading, ref_view, view = w.ref_reading, w.ref_view, w.view
    if change is None:
        change = _point_change(ref_view, view, cfg=cfg) if ref_view is not None else np.ones(90)
    occ = reading.occupied
    sq = list(known)
    # The pieces' round outlines: looked at only where the inks and changes leave a doubt
    outlines = outlines or Outlines(view, ref_view, cfg=cfg)
    view_circles, ref_circles, outline_delta = outlines.view, outlines.ref, outlines.rise
    is_piece = np.array([c in _CASED for c in known])

    # A change of the light (exposure, a passing shadow) raises every point's change a little; a move changes its
    # points far more: what counts as changed is judged against how much the board as a whole changed.
    lvl = _change_level(change, cfg)
    # Compared with the last still board, not by the reading alone: a point whose ink reads like a piece in both
    # (wood grain, a shadow's edge) and changed only a little (light) is no arrival; nor is one that read empty
    # in both and no piece left. And where the light changed the whole board, a point whose own ink rose or fell
    # several-fold changed for a piece, however much the light changed around it.
    dens, ref_dens = reading.density, (ref_reading.density if ref_reading is not None else np.zeros(90))
    ref_occ = ref_reading.occupied if ref_reading is not None else np.zeros(90)
    base = cfg.change_level
    # Nothing changed at the change level, and the board as a whole changed little: a piece that reads faintly
    # (a corner in glare, a blurred board) changes its points by less; look again at 0.6 of the level, still
    # three times the board's typical change.
    levels = ((lvl, base), (max(cfg.low_level * base, cfg.typical_change_times * float(np.median(change))),
                            cfg.low_level * base))
    # a piece's top face is seen displaced from its foot by the camera's angle (parallax): what all pieces share
    # is not a displacement
    on = occ > cfg.ink_piece
    parallax = np.median(reading.offset[on], axis=0) if on.sum() >= cfg.parallax_least else np.zeros(2)
    w.change, w.dens, w.is_piece, w.levels, w.lvl, w.occ = change, dens, is_piece, levels, lvl, occ
    w.parallax = parallax
    w.outline_delta, w.outlines, w.ref_circles, w.ref_dens = outline_delta, outlines, ref_circles, ref_dens
    w.ref_occ, w.sq, w.view_circles = ref_occ, sq, view_circles


def _changed_points(w: _Work) -> None:
    """The points that changed: those that held a piece and those where ink arrived (at the change
    level, or at 0.6 of it where nothing changed), and under full glare the move the round outlines show."""
    arrived, cfg, change, dens, known, levels, lvl = w.arrived, w.cfg, w.change, w.dens, w.known, w.levels, w.lvl
    occ, outline_fell, outlines, pieces_but, reading = w.occ, w.outline_fell, w.outlines, w.pieces_but, w.reading
    ref_dens, ref_occ, ref_reading, ref_view, was_occ = w.ref_dens, w.ref_occ, w.ref_reading, w.ref_view, w.was_occ
    for lvl, base in levels:  # (the level the sets were found at is the one used below)
        was_occ = [i for i in range(90) if known[i] not in ".?"
                   and (change[i] > lvl or (change[i] > base and occ[i] < cfg.ink_piece
                                            and dens[i] < cfg.ink_lost * ref_dens[i]))]
        arrived = [i for i in range(90) if known[i] in ".?" and occ[i] > cfg.ink_piece
                   and ((change[i] > lvl
                         and (ref_occ[i] < cfg.ink_piece or dens[i] > cfg.ink_rose * ref_dens[i]
                              or (change[i] > cfg.change_strong * lvl and (known[i] == "."
                                                                           or dens[i] >= cfg.ink_held * ref_dens[i]))))
                        or (change[i] > base and dens[i] > cfg.ink_doubled * ref_dens[i] + cfg.ink_rise_least_low))]
        # (a point left unsure by a piece between two points, whose ink fell, is that piece leaving: no arrival)
        # A point that changed clearly and whose own ink rose many-fold received a piece, though it reads under
        # the board's piece scale (a board whose edge points read like pieces sets that scale high)
        arrived += [i for i in range(90) if known[i] in ".?" and cfg.ink_under_scale < occ[i] <= cfg.ink_piece
                    and change[i] > cfg.change_clear * lvl
                    and dens[i] > cfg.ink_manyfold * ref_dens[i] + cfg.ink_rise_least]
        if base < cfg.change_level:
            # (at the lower level, no arrival where an empty or unsure point changed more than twice as much: the
            # piece went there, its ink not read; e.g. the cannon between e2 and f2 went to h2, whose red
            # ink reads as none, h2 changed 0.160, and at 0.6 of the level i2 beside it (0.059) read an arrival:
            # e2-i2, a silent wrong move)
            most = max((float(change[i]) for i in range(90) if known[i] in ".?" and i not in arrived), default=0.0)
            arrived = [i for i in arrived if change[i] >= cfg.arrival_change_share * most]
        if was_occ or arrived or levels[1][0] >= levels[0][0]:
            break
    if not was_occ and len(arrived) <= 1 and ref_view is not None and len(pieces_but()) >= cfg.least_standing_many:
        # No piece's point changed at either level: under full glare, the piece whose outline left (and, where no
        # point changed at all, the point where one came) is the move, where that piece could go there
        src = _outline_left(known, outlines, cfg=cfg)
        dst = arrived[0] if arrived else _outline_came(known, outlines, cfg=cfg) if src is not None else None
        if src is not None and dst is not None and _reaches(known, src, dst):
            was_occ, arrived = [src], [dst]
        elif not arrived and ref_reading is not None:
            taking = _taken_under_glare(known, reading, ref_reading, outline_fell(), change, lvl, cfg=cfg)
            if taking is not None:
                was_occ = list(taking)
    w.arrived, w.lvl, w.was_occ = arrived, lvl, was_occ


def _not_a_move(w: _Work) -> tuple[str, list[int], list[int], list[tuple[int, int]]] | None:
    """Too many changed points for a move (light, camera, the board disturbed): the squares as they
    are seen, returned at once; else None."""
    arrived, cfg, change, known, lvl, occ, reading = w.arrived, w.cfg, w.change, w.known, w.lvl, w.occ, w.reading
    sq, was_occ = w.sq, w.was_occ
    # points left unsure before (a piece half-way, seen again) are looked at for pieces between two points too
    unsure_before = [i for i in range(90) if known[i] == "?" and occ[i] > cfg.ink_piece and change[i] <= lvl]
    misaligned: list[tuple[int, int]] = []
    if len(was_occ) + len(arrived) > cfg.max_changed:
        # Not a move: the light, the camera or the board itself changed. Keep each letter where the point did not
        # change or still shows a piece of its colour; say what is seen elsewhere.
        for i in range(90):
            if change[i] <= lvl:
                continue  # unchanged: as it was
            if occ[i] < cfg.ink_none:
                sq[i] = "."
            elif occ[i] > cfg.ink_plain:
                seen = _ink_letter(reading, i, cfg=cfg)
                if known[i] in ".?" or (seen in "Xx" and seen.isupper() != known[i].isupper()):
                    sq[i] = seen
            else:
                sq[i] = "?"
        return "".join(sq), [], [], []
    w.misaligned, w.unsure_before = misaligned, unsure_before
    # what the steps find, none of it found yet
    w.taken = set()  # the points of pieces found between two points (5.10), judged no further
    w.straightened = []  # a pair's unsure point its piece was set onto under another move's hand
    w.unexplained = []  # points that changed in a way no single move explains: reported unsure
    w.leaning = []  # points showing only the ink of a piece on a neighbouring point: as they were
    w.emptied_too = []  # the other point of a piece between two that left: empty as well
    w.nudged, w.captured = [], []
    w.walls = []  # (`_side_walls`, `_went_by_its_side_wall`)
    return None


def _pieces_between(w: _Work) -> None:
    """Pieces standing between two points (5.10), told by ink peaks far from their points along a line."""
    arrived, cfg, change, known, lvl, misaligned = w.arrived, w.cfg, w.change, w.known, w.lvl, w.misaligned
    occ, outlines, parallax, pieces_but, reading = w.occ, w.outlines, w.parallax, w.pieces_but, w.reading
    taken, unsure_before, was_occ = w.taken, w.unsure_before, w.was_occ
    # the one known piece whose point now reads empty: the piece that moved (`shown_by_the_mover`)
    left = [i for i in was_occ if occ[i] < cfg.ink_piece and known[i] in _CASED]
    mover = left[0] if len(left) == 1 else None
    # a piece between two points: an ink peak far from its point along a line, towards a neighbour (5.10)
    for i in sorted(arrived + was_occ + unsure_before, key=lambda k: -change[k]):
        off = reading.offset[i] - parallax
        # The peak followed from a point falls short of a piece half-way (the mean shift starts at the point and
        # its window holds only half the disc): a peak 0.1 short of `misaligned_from` is looked at, and
        # `_between` decides from both points' peaks together.
        if (float(np.hypot(*off)) >= cfg.misaligned_from - cfg.between_short and i not in taken
                and occ[i] > cfg.ink_piece):
            j = _towards(i, off, cfg=cfg)
            # a piece half-way covers half of each point's disc: both must show ink, and both must have changed
            # against the last still board (a piece set down 0.3 off its point, its peak pulled further by its
            # ring or its shadow, reaches into the neighbour's disc but changes it far less than half a disc
            # does), unless the neighbour was left unsure by the same piece half-way before, seen again. And it
            # can only stand where no other piece still stands: the neighbour was empty or its piece left.
            # (and not where a round outline stands plainly on either point, short of half-way: a piece touched whose
            # ink leans over; e.g. the rook b0 pushed towards b1, b1's ink peak 0.47 towards b0, the rook's disc
            # 0.16 off b0; or a piece gone to its neighbour, whose old point's printed marks read as ink leaning towards
            # it: e.g. the pawn c3-c4. A plain outline short of `misaligned_from` stands on its point, as the
            # outline rules below judge a piece half-way: e.g. the rook c9xc5 set down 0.31 off c5
            # towards c6, its ink peak 0.32 towards c6 and c6's 0.56 towards c5 (parallax removed), read as between the
            # two, both points then left unsure and the cannon a6xe6 six moves on read as the rook b6 taking)
            if (j is not None and j not in taken and (known[j] in ".?" or known[i] in ".?")
                    and (known[j] == "?" or change[j] > lvl) and occ[j] > cfg.ink_rim
                    and _between(reading.offset[i], reading.offset[j], POINTS_UV[j] - POINTS_UV[i], parallax, cfg)
                    and not any(_stands_on(outlines, k, pieces_but(k), within=cfg.misaligned_from, cfg=cfg)
                                for k in (i, j))):
                if shadow := w.shown_by_the_mover(mover, i, j):
                    w.leaning.extend(k for k in shadow if k not in w.leaning)  # (kept as they were)
                    arrived = [k for k in arrived if k not in shadow]
                    continue
                misaligned.append((i, j) if i < j else (j, i))
                taken.update((i, j))
    w.arrived = [i for i in arrived if i not in taken]


def _vacated(w: _Work) -> None:
    """The known pieces' points that changed and read empty now, not between two points: where a piece left."""
    w.vacated = [i for i in w.was_occ if w.occ[i] < w.cfg.ink_piece and i not in w.taken]


def _where_the_mover_went(w: _Work) -> None:
    """The point a piece left, and where it went where the ink came where it cannot go, or
    half-way (5.10), or where a taker was left half-way beside its prey."""
    arrived, cfg, change, known, left_most = w.arrived, w.cfg, w.change, w.known, w.left_most
    left_towards, lvl, misaligned, pieces_but = w.left_towards, w.lvl, w.misaligned, w.pieces_but
    ref_view, taken, vacated, view_circles, was_occ = w.ref_view, w.taken, w.vacated, w.view_circles, w.was_occ
    went_where_it_could, = w.went_where_it_could,
    held = [i for i in was_occ if i not in taken]
    # The piece that left, where one point emptied or, with ink arrived and none emptied, where one most likely left
    # (said below; e.g. the rook a9-a8, the corner a9 reading 0.6 occupied): its move tells where it went
    went_from = vacated[0] if len(vacated) == 1 else left_most(held) if not vacated and arrived and held else None
    if went_from is not None and known[went_from] in _CASED:
        arrived = went_where_it_could(went_from, _where_it_could_go(known, went_from, arrived, change, lvl, cfg))
    if len(vacated) == 1 and known[vacated[0]] in _CASED and len(arrived) >= 2:
        # (a tall piece's shadow cast over an empty point beside where the mover stands changes it as much as the
        # mover's arrival does its own: e.g. the rook i0-h0, its shadow over i1 changed 0.55, read 0.99 occupied,
        # its ink peak 0.44 towards i0 and its outline 0.76 against h0's 0.84 centred)
        arrived = w.the_one_standing(vacated[0], arrived)
    if (went_from is not None and known[went_from] in _CASED and len(arrived) == 1
            and (half_to := left_towards(arrived[0], went_from)) is not None):
        misaligned.append((min(arrived[0], half_to), max(arrived[0], half_to)))
        taken.update((arrived[0], half_to))
        arrived = []
    if 1 <= len(vacated) <= 2 and len(arrived) == 1 and ref_view is not None:
        # A piece's point emptied, another piece's beside the point where ink arrived changed too: a piece that took
        # and was left half-way between the prey's point and that neighbour, half a disc on each; where its round
        # outline stands half-way between them, the taker stands between the two (5.10; e.g. the cannon
        # e2 took e5 and was left towards f5, e5 read 0.50 occupied, f5 0.98: e5 was read empty and f5 unsure;
        # e.g. the cannon a2 took a6 and was left towards a5, read as having gone to a5)
        a = arrived[0]
        for s, p in [(s, p) for s in vacated for p in was_occ if p != s and p not in taken and p in neighbours(a)]:
            if (_may_take(known, s, p) and len(pieces_but(s, p)) >= cfg.least_standing
                    and _half_way_between(view_circles(), p, a, pieces_but(s, p), cfg)
                    and not w.look_on_a_point(s, p, a)):
                misaligned.append((min(p, a), max(p, a)))
                taken.update((p, a))
                vacated, arrived = [s], []
                break
    w.arrived, w.vacated = arrived, vacated


def _ink_leaning(w: _Work) -> None:
    """Two neighbouring arrivals that are one piece (between the two, or leaning towards one), and
    ink leaning over from a taker or a touched piece."""
    arrived, cfg, dens, emptied_too, known = w.arrived, w.cfg, w.dens, w.emptied_too, w.known
    misaligned, occ, outlines, parallax, pieces_but = w.misaligned, w.occ, w.outlines, w.parallax, w.pieces_but
    reading, ref_dens, ref_reading, ref_view, taken = w.reading, w.ref_dens, w.ref_reading, w.ref_view, w.taken
    unexplained, vacated, view_circles, was_occ = w.unexplained, w.vacated, w.view_circles, w.was_occ
    leaning = w.leaning
    standing = pieces_but(*was_occ)
    if (len(arrived) == 2 and arrived[1] in neighbours(arrived[0]) and ref_view is not None
        and len(standing) >= cfg.least_standing
            and _half_way_between(view_circles(), arrived[0], arrived[1], standing, cfg)):
        # Both points show ink of one piece: where its round outline stands half-way between them (the centre
        # `misaligned_from` or more off each), the piece stands between the two (5.10). The outline places it where
        # the ink peaks do not: parallax differs across the view, the ink peaks take the board's median (e.g.
        #  the rook i8-d8 left between d8 and c8, its disc 0.50 off each; the ink peaks, less the median
        # parallax, placed it 0.30 from c8)
        misaligned.append((arrived[0], arrived[1]))
        taken.update(arrived)
        arrived = []
    if len(arrived) == 2 and arrived[1] in neighbours(arrived[0]):
        # One piece set down a little off its point shows ink at the neighbour it leans towards as well: the
        # point whose ink peak lies further towards the other is that neighbour, and keeps what it was (its ink is
        # the arriving piece's; reporting it unsure would leave a '?' that a later change re-reads as a piece).
        # If neither clearly, both unsure.
        # (But where a round outline stands plainly on one of the two, within 0.3, the piece is there: the ink
        # peaks lean with the camera's parallax, which differs across the view; e.g. the rook g7-g6 set
        # down towards g5, g6 changed 0.30 and g5 0.12, and the peaks, less the board's median parallax, leant
        # the wrong way.)
        a, b = arrived
        pa, pb = _lean(reading, parallax, a, b), _lean(reading, parallax, b, a)
        on = [k for k in (a, b) if ref_view is not None and len(standing) >= cfg.least_standing
              and _stands_on(outlines, k, standing, cfg=cfg)]
        if len(on) == 1:
            arrived, leaning = on, [b if on[0] == a else a]
        elif pa - pb > cfg.lean_margin and pa >= cfg.lean_some:
            arrived, leaning = [b], [a]
        elif pb - pa > cfg.lean_margin and pb >= cfg.lean_some:
            arrived, leaning = [a], [b]
        else:
            unexplained = [a, b]
    if len(arrived) == 1 and ref_reading is not None:
        # A piece that took, set down a little off its point towards an empty neighbour, shows ink there too: that
        # neighbour is no arrival where the point beside it turned surely to the other side's colour (a capture)
        # and the neighbour's ink peak lies well over towards that point (its ink is the taker's). It keeps what
        # it was. So too where the colours do not read but the one piece that left could not go to the neighbour
        # and could take on the point beside it (e.g. the red rook c4 took c2 and leant towards d2, red
        # ink reading dark on that board). So too where a round outline stands plainly on that point, short of
        # half-way (`misaligned_from`), and none on the neighbour: the taker is there (e.g. the
        # rook c9xc5 set down 0.31 off c5 towards c6, the taken red pawn's ink mixed in, c5 read 0.33 red, not
        # surely dark, and the move read as c9-c6).
        a = arrived[0]
        mover = vacated[0] if len(vacated) == 1 and known[vacated[0]] in _CASED else None
        for k in neighbours(a):
            if (k in was_occ and k not in taken
                    and (_colour_turned(known, k, reading, ref_reading, cfg=cfg)
                         or (mover is not None and not _reaches(known, mover, a) and _may_take(known, mover, k))
                         or (ref_view is not None and len(pieces_but(k)) >= cfg.least_standing
                             and _stands_on(outlines, k, pieces_but(k), within=cfg.misaligned_from, cfg=cfg)
                             and not _stands_on(outlines, a, pieces_but(k), within=cfg.misaligned_from, cfg=cfg)))
                    and _lean(reading, parallax, a, k) >= cfg.lean_far):
                arrived, leaning = [], [a]
                break
    if len(arrived) == 1 and not misaligned and len([i for i in was_occ if i not in taken]) == 1:
        # A piece pushed towards an empty neighbour, still on its point, shows ink in the neighbour's disc: no
        # arrival where the only changed piece beside it kept all its ink (a piece that left loses it) and the two
        # ink peaks lie towards each other. The piece was touched; the neighbour keeps what it was.
        # And the piece's centre, as the two peaks place it, stays nearer its own point than the neighbour: one that
        # went to the neighbour and was set down off it towards where it came from also keeps much ink at its old
        # point, but the neighbour's peak lies nearer (e.g. g6-g5 set down towards g6, the peak followed
        # from g6 0.64 of a spacing over, from g5 0.21 back)
        a, k = arrived[0], next(i for i in was_occ if i not in taken)
        from_k, from_a = _lean(reading, parallax, k, a), _lean(reading, parallax, a, k)
        if (k in neighbours(a) and occ[k] > cfg.ink_plain and dens[k] >= cfg.ink_all_kept * ref_dens[k]
                and from_k >= cfg.lean_some and from_a >= cfg.lean_some and from_k <= from_a):
            arrived, leaning = [], [a]
    w.arrived, w.emptied_too, w.leaning, w.unexplained = arrived, emptied_too, leaning, unexplained


def _along_the_lean(i: int, tops: tuple[float, float, float], cfg: TrackerConfig) -> tuple[int | None, int | None]:
    """Point i's two neighbours along the way its top face leans (`tops.py`): the one beyond its top, away from the
    camera, and the one on the camera's side, where its side wall and foot are seen (each None off the board); both
    None where the top leans under `tops_from` (its side wall does not reach the neighbour)."""
    lean = parallax_centres(POINTS_UV[i:i + 1], tops)[0] - POINTS_UV[i]
    axis = int(np.argmax(np.abs(lean)))
    if abs(float(lean[axis])) < cfg.tops_from:
        return None, None
    du, dv = (int(np.sign(lean[0])), 0) if axis == 0 else (0, int(np.sign(lean[1])))
    u, v = i % 9, i // 9
    return point_at(u + du, v + dv), point_at(u - du, v - dv)


def _read_at_its_top(w: _Work) -> None:
    """The one move's ends read on the camera's side of where the piece's top face stands or stood, given to the
    point of its top.

    Through the top faces' plane (`tops.py`) a piece's top face stands on its point, and its side wall and the
    shadow at its foot reach from there towards the camera, as far again as the top leans (the foot is seen at the
    point less the lean): a piece set down or taken up changes its own point and its neighbour on the camera's side,
    and leaves the point beyond its top, away from the camera, as it was. Where the top face is faint (glare, a
    washed-out character) the side wall's dark band, over the camera-side neighbour, reads as the piece's ink and
    changes that point the most. So:
    - an arrival whose own camera-side neighbour (empty before) did not change shows no side wall of its own: where
      the point beyond it, away from the camera, changed and a round outline rose there, the piece stands there and
      what was read is its side wall;
    - of two neighbouring arrivals along the lean, the camera-side one is the other's side wall where the point on
      its own camera side (empty before) did not change;
    - an arrival whose own camera-side neighbour did not change, beyond which stands a piece the one that left may
      take, which changed and still reads a piece, is the taker's side wall: it took there;
    - a point read emptied whose neighbour beyond it (a known piece) changed more and lost its round outline, while
      its own outline stays, is that neighbour's side wall gone: the piece left from beyond (its point keeps the
      ink of the side wall of the piece beyond it in turn).
    In each, the piece that left could go where it is given."""
    arrived, cfg, change, known, lvl, tops = w.arrived, w.cfg, w.change, w.known, w.lvl, w.tops
    taken, vacated, was_occ = w.taken, w.vacated, w.was_occ
    if tops is None or w.ref_view is None or len(vacated) != 1 or not 1 <= len(arrived) <= 2:
        return
    rise = w.outlines.rise()

    def quiet(i: int | None) -> bool:  # empty before and unchanged: no side wall reached it
        return i is not None and known[i] == "." and i not in taken and change[i] < cfg.body_side_quiet * lvl

    src = vacated[0]
    beyond, _ = _along_the_lean(src, tops, cfg)
    if (beyond is not None and known[beyond] in _CASED and beyond in was_occ and beyond not in taken
            and change[beyond] > change[src] and rise[beyond] <= -cfg.top_gone_fall
            and rise[src] > -cfg.top_gone_fall and any(_reaches(known, beyond, a) for a in arrived)):
        src = beyond
    if known[src] not in _CASED or any(known[a] != "." for a in arrived):
        return
    if len(arrived) == 2:
        a, b = arrived
        for x, z in ((a, b), (b, a)):
            if _along_the_lean(x, tops, cfg)[1] == z and quiet(_along_the_lean(z, tops, cfg)[1]) \
                    and _reaches(known, src, x):
                w.arrived, w.vacated = [x], [src]
                return
        return
    x = arrived[0]
    y, z = _along_the_lean(x, tops, cfg)
    if (y is not None and known[y] in _CASED and y in was_occ and y not in taken and quiet(z)
            and w.occ[y] > cfg.ink_piece and _may_take(known, src, y)):
        # (the point beyond holds a piece the mover may take, which changed and still reads a piece: the taker's
        # side wall stands where its prey's did, and what was read arriving is that wall)
        w.arrived, w.vacated, w.captured = [], [src], [y]
        return
    if (y is not None and known[y] == "." and y not in taken and quiet(z)
            and change[y] >= cfg.top_beyond_changed * lvl and float(rise[y]) >= cfg.top_beyond_rise
            and _reaches(known, src, y)):
        x = y
    if _reaches(known, src, x):
        w.arrived, w.vacated = [x], [src]


def _left_under_glare_by_its_side_wall(w: _Work) -> None:
    """Through the top faces' plane (`tops.py`), one piece arrived and no known piece's point changed: the top face
    it left was washed out already (glare over it on the last still board too), so that its point changed no more
    than the light did. Its side wall, reaching over the neighbour on the camera's side, was no glare: that
    neighbour, empty, changed over the level and lost its ink (under `ink_lost` of it: the dark band gone). The one
    known piece that now reads no piece on its point (under `ink_piece`), whose camera-side neighbour shows so,
    and that could go where the piece arrived, left. The arrival is first given to the point beyond it, away from
    the camera, where `_read_at_its_top` would: its own camera-side neighbour quiet, the point beyond changed and
    a round outline rose there (what was read is the side wall)."""
    arrived, cfg, change, known, lvl, taken, tops = w.arrived, w.cfg, w.change, w.known, w.lvl, w.taken, w.tops
    if (tops is None or w.ref_view is None or w.vacated or len(arrived) != 1 or known[arrived[0]] != "."
            or [i for i in w.was_occ if i not in taken]):
        return
    dens, occ, ref_dens = w.dens, w.occ, w.ref_dens

    def wall_gone(s: int) -> bool:
        c = _along_the_lean(s, tops, cfg)[1]
        return (c is not None and known[c] == "." and c not in taken and c not in arrived and change[c] > lvl
                and dens[c] < cfg.ink_lost * ref_dens[c])

    x = arrived[0]
    y, z = _along_the_lean(x, tops, cfg)
    if (y is not None and known[y] == "." and y not in taken and z is not None and known[z] == "."
            and change[z] < cfg.body_side_quiet * lvl and change[y] >= cfg.top_beyond_changed * lvl
            and float(w.outlines.rise()[y]) >= cfg.top_beyond_rise):
        x = y
    left = [s for s in range(90) if known[s] in _CASED and s not in taken and occ[s] < cfg.ink_piece
            and _reaches(known, s, x) and wall_gone(s)]
    if len(left) == 1:
        w.arrived, w.vacated = [x], left


def _went_by_its_side_wall(w: _Work) -> None:
    """Through the top faces' plane (`tops.py`), a piece left its point and no arrival was read (its top face washed
    out where it went): it went to the one empty point it could go to whose neighbour on the camera's side changed
    over the level (its side wall reaching over that neighbour, empty or holding a piece), which changed itself by
    `top_beyond_changed` of the level and where a round outline rose by `top_beyond_rise` (its top face). The
    camera-side neighbour of the point left is no such point: what changed there is the mover's own side wall gone.
    Where no point shows so (the side wall falls over the point left: a move away from the camera), the one it could
    go to where a round outline came most of the board's empty points, by `outline_rise` and `clear_margin` times
    more than at any other point it could go to. The known pieces under the side walls gone and come keep theirs."""
    arrived, cfg, change, known, lvl, taken, tops = w.arrived, w.cfg, w.change, w.known, w.lvl, w.taken, w.tops
    if (tops is None or w.ref_view is None or len(w.vacated) != 1 or arrived or w.captured or w.misaligned
            or known[w.vacated[0]] not in _CASED):
        return
    src = w.vacated[0]
    rise = w.outlines.rise()
    own_wall = _along_the_lean(src, tops, cfg)[1]
    could = [y for y in range(90) if known[y] == "." and y not in taken and y != own_wall and _reaches(known, src, y)]

    def wall(y: int) -> int | None:
        return _along_the_lean(y, tops, cfg)[1]

    went = [y for y in could if change[y] >= cfg.top_beyond_changed * lvl and float(rise[y]) >= cfg.top_beyond_rise
            and (c := wall(y)) is not None and c != src and c not in taken and change[c] > lvl]
    if not went and could:
        best = max(could, key=lambda k: float(rise[k]))
        came = w.outline_came()
        if (float(rise[best]) >= cfg.outline_rise and float(came[best]) >= float(came.max())
                and all(float(rise[best]) > cfg.clear_margin * float(rise[k]) for k in could if k != best)):
            went = [best]
    if len(went) == 1:
        w.arrived = went
        w.walls.extend(k for k in (own_wall, wall(went[0])) if k is not None and known[k] in _CASED and k != src)


def _fresh(w: _Work) -> None:
    """The pairs found between two points so far that are this move's (`_Work.fresh_pairs`)."""
    w.fresh = w.fresh_pairs()


def _source_of_an_arrival(w: _Work) -> None:
    """Where a piece came from where no known piece's point emptied: the point changed most,
    an outline gone, a dim point read poorly already, an edge point keeping the frame's ink."""
    cfg = w.cfg
    arrived, change, dens, fresh, fresh_pairs = w.arrived, w.change, w.dens, w.fresh, w.fresh_pairs
    is_piece, known, left_most, lvl, occ = w.is_piece, w.known, w.left_most, w.lvl, w.occ
    outline_came, outlines, pieces_but, reading = w.outline_came, w.outlines, w.pieces_but, w.reading
    ref_dens, ref_reading, ref_view, taken, vacated = w.ref_dens, w.ref_reading, w.ref_view, w.taken, w.vacated
    was_occ, went_where_it_could = w.was_occ, w.went_where_it_could
    if not vacated and (arrived or fresh) and was_occ:
        # a move empties its point even where the emptied point still reads a little like a piece
        cand = [i for i in was_occ if i not in taken]
        if cand:
            vacated = [left_most(cand)]
            if known[vacated[0]] in _CASED:
                arrived = went_where_it_could(vacated[0],
                                              _where_it_could_go(known, vacated[0], arrived, change, lvl, cfg))
                fresh = fresh_pairs()  # the piece may have been found between two points
    if not vacated and fresh and not [i for i in was_occ if i not in taken] and ref_view is not None:
        # A piece found between two points this move came from somewhere, though no known piece's point changed at
        # the level: the light changed the whole board and raised it over every point (e.g. the
        # black pawn g6-g5 left between g5 and h5 at the level 0.29; g6 changed 0.21, its ink fell from 0.23 to
        # 0.12 and its round outline from 0.91 to 0.26). The one known piece whose point changed at half the
        # level, whose ink fell and whose outline is gone, and that could go to one of the pair's points, left.
        ends = {p for pair in fresh for p in pair}
        gone = [k for k in range(90) if is_piece[k] and k not in taken and change[k] > cfg.change_half * lvl
                and dens[k] < cfg.ink_fell_light * ref_dens[k] and any(_reaches(known, k, p) for p in ends)
                and _outline_gone(outlines.discs(), k, pieces_but(k), cfg=cfg)]
        if len(gone) == 1:
            vacated = gone
    if not vacated and not arrived and not fresh and not was_occ and ref_view is not None and float(change.max()) > lvl:
        # No known piece changed and no ink arrived, yet an empty point changed most of all, over the level, and a
        # round outline came there clearly more than anywhere: a piece whose ink does not read arrived (e.g.
        #  the black horse b9-a7 on a board whose black ink reads faintly, b9 under glare)
        dst = _clearly_most(outline_came(), cfg.outline_rise, cfg=cfg)
        if dst is not None and change[dst] > lvl and int(np.argmax(change)) == dst and dst not in taken:
            arrived = [dst]
    if not vacated and len(arrived) == 1 and not fresh and not [i for i in was_occ if i not in taken]:
        # A piece arrived and no known piece's point changed enough: the one it came from read poorly already on
        # the last still board (glare, a dim corner). A known piece's point that now reads clearly empty, whose
        # piece could go where one arrived, and that changed clearly most among those is where it came from (e.g.
        #  the horse h0-g2, h0 in a dim corner read 0.10 occupied before and changed 0.041)
        src = _changed_most([i for i in range(90) if known[i] in _CASED and occ[i] < cfg.ink_none and i not in taken
                             and _reaches(known, i, arrived[0])], change, lvl, reading, ref_reading, cfg=cfg)
        if src is None and ref_view is not None:
            # (or the one such piece whose point changed at half the level and whose round outline is gone, though
            # its point still reads like a piece: an edge point keeps the frame's ink; e.g. the horse
            # h0-g2, h0 changed 0.088 at the level 0.09 and still read 0.97 occupied)
            gone = [i for i in range(90) if is_piece[i] and i not in taken and change[i] > cfg.change_half * lvl
                    and _reaches(known, i, arrived[0]) and _outline_gone(outlines.discs(), i, pieces_but(i), cfg=cfg)]
            src = gone[0] if len(gone) == 1 else None
        if src is not None:
            vacated = [src]
    if not vacated and not arrived and not fresh:
        # An empty edge point shows the frame's lines and the printed numbers: where a piece left one, the
        # point may still read like a piece. What tells is the change against the last still board: the point
        # changed as much as a piece leaving changes it and its ink fell to well under what the piece showed.
        left = [i for i in was_occ if _on_edge(i) and change[i] > cfg.edge_left_change * lvl
                and dens[i] < cfg.ink_left * ref_dens[i]]
        if len(left) == 1:
            vacated = left
    w.arrived, w.fresh, w.vacated = arrived, fresh, vacated


def _captures_read_faintly(w: _Work) -> None:
    """Captures whose taker reads faintly or washes out, colours crossing over, and a move told
    by the changes alone where the inks say nothing."""
    arrived, cfg, change, dens, fresh, known = w.arrived, w.cfg, w.change, w.dens, w.fresh, w.known
    leaning, lvl, misaligned, occ, outline_delta = w.leaning, w.lvl, w.misaligned, w.occ, w.outline_delta
    outline_fell, outlines, pieces_but, reading = w.outline_fell, w.outlines, w.pieces_but, w.reading
    ref_dens, ref_occ, ref_reading, ref_view, taken = w.ref_dens, w.ref_occ, w.ref_reading, w.ref_view, w.taken
    unexplained, vacated, view_circles, was_occ = w.unexplained, w.vacated, w.view_circles, w.was_occ
    if len(vacated) == 2 and not arrived and not fresh:
        # Two pieces' points read empty and nothing arrived: one piece took the other, and the taker reads faintly
        # where it stands (a dim or blurred board). The point emptied outright is where it came from; the other,
        # which still shows some ink and held a piece it may take, is where it took.
        a, b = sorted(vacated, key=lambda k: occ[k])
        if occ[a] < cfg.ink_trace <= occ[b] and known[a] in _CASED and known[b] in _CASED and _may_take(known, a, b):
            vacated = [a]
        elif (occ[b] < cfg.ink_trace and known[a] in _CASED and known[b] in _CASED
              and known[a].isupper() != known[b].isupper()):
            # Both emptied outright: the taker washed out where it stands (glare over its disc). Which of the two
            # took is not for the camera to guess from two blank discs: both unsure, the rules choose (only one of
            # the two captures is a legal move, as a rule).
            # But where a round outline as plain as the standing pieces' stands half-way between one's point and an
            # empty neighbour, and the other may take there, the taker was left between the two (5.10; e.g.
            #  the black cannon e8 took the red cannon e4 and was left towards e5, neither's ink read,
            # the disc 0.51 and 0.50 off the two)
            half = [(s, p, k) for s, p in ((a, b), (b, a))
                    if _may_take(known, s, p) and len(pieces_but(s, p)) >= cfg.least_standing
                    for k in neighbours(p) if known[k] == "." and k not in taken
                    and _half_way_between(view_circles(), p, k, pieces_but(s, p), cfg)
                    and _plain_disc_near(view_circles(), [p, k], outlines.discs(), pieces_but(s, p), cfg=cfg)
                    and not w.look_on_a_point(s, p, k)]
            if len(half) == 1:
                s, p, k = half[0]
                misaligned.append((min(p, k), max(p, k)))
                taken.update((p, k))
                vacated, fresh = [s], [misaligned[-1]]
            else:
                unexplained = [a, b]
                taken.update((a, b))
                vacated = []
        elif (ref_view is not None and known[a] in _CASED and known[b] in _CASED
              and known[a].isupper() != known[b].isupper()):
            # Both still show a little ink (a board whose inks read faintly): the pieces' outlines tell which took.
            # The taker's disc left its point; where it took, a disc still stands (e.g. the pawn e3 took
            # the bishop e2, both read 0.10 occupied after)
            fell = _clearly_most(outline_fell(), cfg.outline_fall, cfg=cfg)
            if fell in (a, b) and outline_delta()[b if fell == a else a] > -cfg.outline_kept:
                vacated = [fell]
    if not vacated and not arrived and not fresh and ref_reading is not None:
        # No point reads empty and none newly reads a piece, yet a piece's colour left its point and appeared at an
        # empty one: a board's printed marks (a double frame at a corner) read like ink where no piece covers
        # them, so the emptied point reads occupied and the piece on them reads faint. The piece's point changed
        # and now surely shows the other colour; the empty point changed and now surely shows the piece's colour,
        # which it did not before.
        gone = [i for i in was_occ if i not in taken and known[i] in _CASED
                and _sure_colour(reading, i, cfg=cfg) == (not known[i].isupper())]
        if len(gone) == 1:
            src = gone[0]
            came = [j for j in range(90) if known[j] in ".?" and j not in taken and change[j] > lvl
                    and occ[j] > cfg.ink_none and _sure_colour(reading, j, cfg=cfg) == known[src].isupper()
                    and _sure_colour(ref_reading, j, cfg=cfg) != known[src].isupper()]
            if len(came) == 1:
                vacated, arrived = [src], came
    if not vacated and not arrived and not fresh and ref_reading is not None:
        # One piece's point turned surely to the other side's colour (a capture), yet no point of the mover's side
        # changed at the level: the taker's point read dimly already (glare, a corner), so that its emptying changed
        # it little. A piece of the taker's colour whose ink is all but gone, and which changed clearly most among
        # those, is where the taker came from.
        turned = [j for j in was_occ if j not in taken and _colour_turned(known, j, reading, ref_reading, cfg=cfg)]
        if len(turned) == 1:
            mover_red = not known[turned[0]].isupper()
            gone = sorted((i for i in range(90) if known[i] in _CASED and known[i].isupper() == mover_red
                           and i not in taken and occ[i] < cfg.ink_none and dens[i] < cfg.ink_lost * ref_dens[i]),
                          key=lambda k: -change[k])
            if (gone and change[gone[0]] > cfg.change_half * lvl
                    and (len(gone) == 1 or change[gone[0]] > cfg.clear_margin * change[gone[1]])):
                vacated = gone[:1]
    if not arrived and not fresh and len(vacated) <= 1:
        # The inks say nothing (a washed-out half of the board, where pieces read no ink and empty points some),
        # but the changes do: exactly one known piece's point and one empty point changed at the level, and the
        # rest of the board stayed quiet (a touch changes only its own point). The piece went there.
        moved = [i for i in range(90) if i not in taken and i not in leaning and change[i] > lvl]
        # (through the tops' plane, a piece still standing plainly on the camera-side neighbour of another changed
        # point shows there the side wall of the piece that came or went beyond it: `_side_walls`; it keeps its
        # piece, and judges neither the move nor the quiet)
        walls = _side_walls(w, moved)
        moved = [i for i in moved if i not in walls]
        # (quiet: under half the level, or under 0.4 of the lesser of the two changes: a disc set down changes
        # its neighbours a little by its shadow; e.g. a first move h2-f2 on a board whose pieces read
        # no ink, changed h3 0.056 and f3 0.049 against 0.323 and 0.163 at the level 0.09)
        calm = max(cfg.change_half * lvl, cfg.calm_share * min((change[i] for i in moved), default=0.0))
        src = next((k for k in moved if known[k] in _CASED), None)
        # (a neighbour of either end where the piece could not have gone, only under `twin_change` of that end's
        # change: a piece set down changes the point beside it by its shadow and lean, and only one changed as much
        # as it could be the same piece between the two; e.g. the black horse b9-c7 on a paper print with plain
        # discs, b9 0.103, c7 0.091 at the level 0.090, the cannon b7 beside c7 0.048. One it could have gone to is
        # no shadow but perhaps its point: a tall piece's body changes the neighbour on its far side more; e.g. the
        # rook f1-f4, f3 changed more than f4)
        quiet = all(change[i] < max(calm, max((cfg.twin_change * change[m] for m in moved if i in neighbours(m)
                                               and src is not None and not _reaches(known, src, i)), default=0.0))
                    for i in range(90) if i not in moved and i not in taken and i not in walls)
        if quiet and len(moved) == 2:
            src, dst = sorted(moved, key=lambda k: known[k] in ".?")
            # (not where the piece's point read it clearly before and still shows half its ink: a piece touched
            # towards an empty neighbour, its ink reaching into that neighbour's disc. A touch reaches no point
            # further off: there, a piece whose ink still reads (a plain disc read by the board's own marks under
            # it) went all the same)
            kept = (ref_occ[src] > cfg.ink_piece and occ[src] > cfg.ink_piece
                    and dens[src] >= cfg.ink_lost * ref_dens[src] and dst in neighbours(src))
            # (nor where the point it would have gone to was left unsure, showed a piece on the last still board
            # and lost its ink: a piece left there; e.g. a pawn half-way between g3 and g4, both unsure,
            # took on g5. A point known empty may have read like a piece only by the board's frame, as an a4 did)
            kept = kept or (known[dst] == "?" and _left_by_a_piece(dst, ref_reading, reading, cfg=cfg))
            went = (w.went_where_it_could(src, [dst])
                    if known[src] in _CASED and known[dst] in ".?" and vacated in ([], [src]) and not kept else None)
            # (where it cannot go there, it went to a neighbour it can reach, or stands half-way between the two:
            # `went_where_it_could`. Where it can reach neither, the two changes are no one move of that piece: a
            # piece still inked on its point changes by another's arrival, e.g. taken by a piece that stood between
            # two points, whose leaving changed one of them; the cannon between b6 and c6 took the pawn g6, g6 still
            # read 0.99 occupied, and the pawn would have gone to c6)
            if went is not None and all(_reaches(known, src, k) for k in went):
                vacated, arrived = [src], went
                w.walls.extend(k for k in walls if k not in w.walls)  # (kept as they were: no touch)
                if len(arrived) == 1 and (half_to := w.left_towards(arrived[0], src)) is not None:
                    # (or it was left half-way from there (5.10): the neighbour the shadow allowance above let
                    # change is then the piece's own disc, not its shadow, and its round outline straddles the
                    # two points; e.g. the horse i2-h4 left towards h5, h4 changed 0.093 at the level 0.090,
                    # h5 0.059, under the allowance 0.065)
                    misaligned.append((min(arrived[0], half_to), max(arrived[0], half_to)))
                    taken.update((arrived[0], half_to))
                    arrived = []
                if not arrived:
                    fresh = [misaligned[-1]]
    w.arrived, w.fresh, w.unexplained, w.vacated = arrived, fresh, unexplained, vacated


def _side_walls(w: _Work, moved: list[int]) -> list[int]:
    """Of the points `moved` (changed over the level), those whose change is the side wall of a piece that came to or
    left the neighbour beyond them, away from the camera (`_along_the_lean`), seen through the top faces' plane
    (`tops.py`): a piece set down or taken up there changes its neighbour on the camera's side too. Such a point
    holds a piece that stays: it still reads plainly (`ink_plain`) with at least `ink_lost` of its ink, and it
    changed less than the point beyond it, which changed itself. Flat pieces (no tops' plane) cast no side wall
    over a neighbour: none."""
    cfg, change, dens, known, occ, ref_dens, tops = w.cfg, w.change, w.dens, w.known, w.occ, w.ref_dens, w.tops
    if tops is None:
        return []
    walls = []
    for i in moved:
        beyond = _along_the_lean(i, tops, cfg)[0]
        if (beyond is not None and beyond in moved and change[beyond] > change[i] and known[i] in _CASED
                and occ[i] > cfg.ink_plain and dens[i] >= cfg.ink_lost * ref_dens[i]):
            walls.append(i)
    return walls


def _changed_pieces(w: _Work) -> None:
    """The known pieces that changed and did not leave: whether one of them was the source of a capture,
    and each of the rest nudged, taken, or unsure."""
    arrived, cfg, change, dens, emptied_too = w.arrived, w.cfg, w.change, w.dens, w.emptied_too
    fresh, known, lvl, occ, outlines = w.fresh, w.known, w.lvl, w.occ, w.outlines
    pieces_but, reading, ref_circles, ref_dens = w.pieces_but, w.reading, w.ref_circles, w.ref_dens
    ref_reading, ref_view, taken, vacated = w.ref_reading, w.ref_view, w.taken, w.vacated
    view_circles, was_occ = w.view_circles, w.was_occ
    rest = [i for i in was_occ if i not in vacated and i not in taken]
    if (not vacated and not arrived and not fresh and len(rest) == 1 and known[rest[0]] in _CASED
            and change[rest[0]] > cfg.change_clear * lvl
            and _outline_gone(outlines.discs(), rest[0], pieces_but(rest[0]), cfg=cfg)):
        # One piece's point changed far over the level and its round outline is gone, though its point still reads
        # like a piece (printed marks): it left. Where it went, a piece of the other side that it could take now
        # surely shows its colour, though that point changed under the level (the light changed the board; e.g.
        #  the red horse e6 took g7, e6 changed 0.40, g7 0.19 at the level 0.20)
        src = rest[0]
        prey = [k for k in range(90) if k not in taken and k != src and change[k] > cfg.change_half * lvl
                and _may_take(known, src, k) and _takes(known, src, k, reading, cfg=cfg)]
        if len(prey) == 1:
            vacated, rest = [src], []
    if not vacated and not arrived and not fresh and len(rest) >= 2:
        # No point reads empty, yet several pieces changed: a capture whose source still reads a little like a
        # piece (a corner's frame lines, its neighbour's ink). Where a piece left, the point changed most; where
        # it took, the point now shows the mover's colour instead of the other side's.
        src = max(rest, key=lambda k: change[k] * (cfg.left_occ_weight - occ[k]))
        # Where the source's own ink fell to well under what its piece showed, a colour that only crossed over
        # towards the mover's (from surely the other side's) is enough: a dim or blurred board reads colours
        # weakly, and the taker's ink sits where the taken piece's was.
        emptied = ref_reading is not None and dens[src] < cfg.ink_left * ref_dens[src]
        if any(_takes(known, src, j, reading, cfg=cfg)
               or (emptied and _turned(known, src, j, reading, ref_reading, cfg=cfg))
               for j in rest if j != src):
            vacated = [src]
            rest = [i for i in rest if i != src]
        elif (any(_may_take(known, src, j) for j in rest if j != src)
              and _outline_gone(outlines.discs(), src,
                                pieces_but(*was_occ), cfg=cfg)):
            # The source's ink is the board's own: a cannon or pawn point's printed marks, or the frame at an edge,
            # which the piece covered (e.g. the pawn g3 took on g4, and g3's marks read as more ink than
            # the red pawn had shown), while a colour read weakly does not say who stands where it took. A piece's
            # round outline tells: it is gone from the source.
            vacated = [src]
            rest = [i for i in rest if i != src]
        else:
            # The point that changed most may be where it took, its ink grown (e.g. the black pawn c4 took
            # c3, whose red ink turned only half-way; c3 changed 0.19, c4 0.15, its ink fell to 0.58 of the pawn's
            # and its outline left): the one other piece whose outline left is the source.
            standing = pieces_but(*was_occ)
            # (where it took, the taker stands plainly: not half a piece, as where one stands between the two
            # points; e.g. the pawn c5 took c4 and was left half-way, both read 0.58 occupied)
            gone = [k for k in rest if k != src and known[k] in _CASED
                    and any(_may_take(known, k, j) and occ[j] > cfg.ink_plain for j in rest if j != k)
                    and _outline_gone(outlines.discs(), k, standing, cfg=cfg)]
            if len(gone) == 1:
                vacated = gone
                rest = [i for i in rest if i != gone[0]]
    if not vacated and not arrived and not fresh and len(rest) == 1 and known[rest[0]] in _CASED:
        # A piece left between two points by an earlier move (both points unsure, no letter known there) moved on
        # and took: the unsure points where it stood lost their ink, and the piece it took changed (e.g.
        # the black pawn between c4 and d4 took the red horse b4, whose red ink read faintly: c4's and d4's ink fell
        # from 0.227 and 0.141 to under 0.02, b4 changed 0.124 and read a black piece no more surely than before)
        emptied = [i for i in range(90) if known[i] == "?" and i not in taken and change[i] > cfg.change_half * lvl
                   and occ[i] < cfg.ink_none and _left_by_a_piece(i, ref_reading, reading, cfg=cfg)]
        if len(emptied) == 1 or (len(emptied) == 2 and emptied[1] in neighbours(emptied[0])):
            vacated, emptied_too = [emptied[0]], emptied[1:]
        elif not emptied and ref_view is not None and change[rest[0]] > lvl:
            # (or, where the pair's points still read like pieces, its disc left them: e.g. the black
            # pawn between c5 and c4 took c3, c4 still read 0.89 occupied)
            pair = _pair_left(known, taken, view_circles(), ref_circles(), cfg=cfg)
            if pair is not None and any(_may_take(known, k, rest[0]) for k in pair):
                vacated, emptied_too = [pair[0]], [pair[1]]
    w.emptied_too, w.vacated = emptied_too, vacated


def _touched_or_taken(w: _Work) -> None:
    """Each known piece that changed and did not leave: nudged, taken by the piece that left, or unsure."""
    arrived, captured, cfg, change, known, lvl = w.arrived, w.captured, w.cfg, w.change, w.known, w.lvl
    nudged, outlines, pieces_but, reading, ref_reading = w.nudged, w.outlines, w.pieces_but, w.reading, w.ref_reading
    ref_view, taken, unexplained, vacated, was_occ = w.ref_view, w.taken, w.unexplained, w.vacated, w.was_occ
    # (a piece already found taken, `_read_at_its_top`, is not touched as well; nor one whose change is a side wall)
    rest = [i for i in was_occ if i not in vacated and i not in taken and i not in captured and i not in w.walls]
    for i in rest:
        shift = float(np.hypot(*(reading.offset[i] - (ref_reading.offset[i] if ref_reading is not None else 0))))
        if not vacated:
            # nothing left its point: nothing was taken. A piece that changed colour all the same is not
            # explained by a touch: unsure (where its colour read surely before: on an edge point the frame's ink
            # can outweigh a piece's, and a touch moves the piece over it)
            colour = _sure_colour(reading, i, cfg=cfg)
            # (but where no other point changed over the level, not even an unsure one, no piece can have come
            # there from anywhere, and its round outline still stands on it: the same piece, touched, its ink read
            # the other colour; e.g. the red cannon h2 touched and read surely dark after, left unsure,
            # and its letter lost)
            # (not under a change of light, which can hide where a capture came from: e.g.)
            alone = (was_occ == [i] and not arrived and ref_view is not None and lvl <= cfg.change_level
                     and all(change[k] <= lvl for k in range(90) if known[k] == "?")
                     and _stands_on(outlines, i, pieces_but(i), cfg=cfg))
            if (colour is not None and known[i] in _CASED and colour != known[i].isupper()
                    and (ref_reading is None or _sure_colour(ref_reading, i, cfg=cfg) == known[i].isupper())
                    and not alone):
                unexplained.append(i)
            else:
                nudged.append(i)
        elif change[i] < cfg.nudge_change_most * lvl and shift >= cfg.nudge_from:
            nudged.append(i)
        elif _may_take(known, vacated[0], i):
            captured.append(i)
        elif shift >= cfg.nudge_from:
            # a piece of the mover's own side is never taken (3.1): it was touched
            nudged.append(i)
    w.captured, w.nudged = captured, nudged


def _arrival_under_its_skirt(w: _Work) -> None:
    """A piece left and arrived nowhere sure, and two neighbouring empty points it could go to changed between half
    the level and the level, none else: one tall piece's look split over two discs. Its top face covers its point;
    its side wall and its shadow reach over the neighbour on one side, the same side for every piece on the board
    (the camera's and the light's). The change the same piece made where it left shows that side: where it is
    centred off its point along the pair's line (`skirt_least`), the point the side leads away from is where the piece
    stands, when the change measured where a piece's look would stand on it outdoes the other's (`skirt_margin`).
    The other keeps what it was (its change is the skirt's), and no weak capture is read instead (a colour turning on
    a piece that changed a quarter of the level; e.g. the rook h0-h4 changed h4 0.107 and h3 0.124 at the level
    0.150, the look at h0 centred 0.19 off it on h3's side (the shadow's), measured so h4 0.114 and h3 0.076)."""
    arrived, captured, cfg, change, fresh, known = w.arrived, w.captured, w.cfg, w.change, w.fresh, w.known
    leaning, lvl, nudged, pieces_but, ref_view, taken = w.leaning, w.lvl, w.nudged, w.pieces_but, w.ref_view, w.taken
    vacated, view, view_circles = w.vacated, w.view, w.view_circles
    if (len(vacated) != 1 or arrived or fresh or captured or nudged or ref_view is None
            or known[vacated[0]] not in _CASED):
        return
    src = vacated[0]
    could = [i for i in range(90) if known[i] == "." and i not in taken and _reaches(known, src, i)
             and change[i] > cfg.change_half * lvl]
    if len(could) != 2 or could[1] not in neighbours(could[0]) or max(change[could[0]], change[could[1]]) > lvl:
        return
    p, q = could
    standing = pieces_but(src)
    # (a piece half-way between the two (5.10) changes both by half a disc as well: its outline tells)
    if len(standing) < cfg.least_standing or _half_way_between(view_circles(), p, q, standing, cfg):
        return
    cmap = _change_map(ref_view, view)
    skirt = _look_centre(cmap, src, cfg) - POINTS_UV[src]
    along = float(np.dot(skirt, POINTS_UV[q] - POINTS_UV[p]))
    if abs(along) < cfg.skirt_least:
        return
    top, over = (p, q) if along > 0 else (q, p)
    on_top, on_over = (_change_about(cmap, POINTS_UV[k] + skirt, cfg) for k in (top, over))
    if on_top > cfg.skirt_margin * on_over:
        w.arrived, w.leaning = [top], [*leaning, over]


def _look_centre(cmap: np.ndarray, i: int, cfg: TrackerConfig = DEFAULTS) -> np.ndarray:
    """Where the change about point i is centred (board spacings, (u, v)): the centroid of the change over the board's
    median within `skirt_reach` of the point (a piece's top face, side wall and shadow together)."""
    r = round(cfg.skirt_reach * S)
    yy, xx = np.mgrid[-r:r + 1, -r:r + 1]
    inside = (xx ** 2 + yy ** 2) <= r * r
    x, y = _pt(i)
    over = np.clip(windows(cmap, np.array([[x, y]]), r)[0] - float(np.median(cmap)), 0.0, None) * inside
    total = float(over.sum())
    if total <= 0.0:
        return POINTS_UV[i].copy()
    return POINTS_UV[i] + np.array([float((over * xx).sum()), float((over * yy).sum())]) / (total * S)


def _change_about(cmap: np.ndarray, uv: np.ndarray, cfg: TrackerConfig = DEFAULTS) -> float:
    """The mean change within the disc (`change_disc`) about board position `uv` (spacings), as `_point_change`
    measures it about a point."""
    r, disc = _change_disc(cfg)
    x0, y0 = _pt(0)
    centre = np.array([[round(x0 + float(uv[0]) * S), round(y0 + float(uv[1]) * S)]])
    return float(windows(cmap, centre, r)[0][disc].mean())


def _captures_under_changed_light(w: _Work) -> None:
    """Captures found where the light changed the whole board, a pair's piece that took,
    and the one capture among the touched pieces."""
    arrived, captured, cfg, change, dens, emptied_too = w.arrived, w.captured, w.cfg, w.change, w.dens, w.emptied_too
    fresh, is_piece, known, lvl, nudged, occ = w.fresh, w.is_piece, w.known, w.lvl, w.nudged, w.occ
    reading, ref_dens, ref_reading, taken, vacated = w.reading, w.ref_dens, w.ref_reading, w.taken, w.vacated
    was_occ, = w.was_occ,
        # (else the mover's own piece that changed without moving: a shadow or the light over it; as it was. e.g.
        #  h0-h6 while a shadow fell over the first rank, whose own pieces changed as much as a capture)
    if (not vacated and not arrived and not fresh and not captured and not nudged and not was_occ
            and ref_reading is not None and lvl > cfg.change_level):
        # The light changed the whole board and raised the level over every point, the move's too: a capture
        # changes its point little more than its ink's colour. One piece that turned surely to the other side's
        # colour, and one piece of that side, which could take it, whose point lost its ink, both changed at half
        # the level: it took there (e.g. the black cannon b3 took e3 while the light changed, e3 changed
        # 0.115 and turned from surely red to surely dark, b3 changed 0.076 and its ink fell from 0.09 to none,
        # at the level 0.116).
        turned = [i for i in range(90) if change[i] > cfg.change_half * lvl
                  and _colour_turned(known, i, reading, ref_reading, cfg=cfg)]
        emptied = [k for k in range(90) if is_piece[k] and change[k] > cfg.change_half * lvl and occ[k] < cfg.ink_piece
                   and dens[k] < cfg.ink_lost * ref_dens[k]]
        took = [(k, i) for i in turned for k in emptied
                if known[k].isupper() != known[i].isupper() and _may_take(known, k, i)]
        if len(took) == 1:
            vacated, captured = [took[0][0]], [took[0][1]]
    if (not vacated and not arrived and not fresh and not captured and not was_occ and ref_reading is not None
            and (pair := _pair_emptied(known, taken, occ, dens, ref_dens, cfg=cfg)) is not None):
        # A piece left between two points (both unsure) took: the pair lost its ink, and the one piece that turned
        # surely to the other side's colour, changed at half the level, is where it took (e.g. the red
        # pawn between g4 and g3 took the black pawn g5, which changed 0.082 at the level 0.093 and turned from
        # 0.28 to 0.98 red; g4's ink fell from 0.136 to 0.038, g3's to 0.068)
        # (turned: surely the other side's colour now, its own side's more than not before, g5 read 0.28; and
        # where some piece on one of the pair's points could take it)
        turned = [i for i in range(90) if is_piece[i] and i not in taken and change[i] > cfg.change_half * lvl
                  and _sure_colour(reading, i, cfg=cfg) == (not known[i].isupper())
                  and (ref_reading.red[i] > cfg.red_even) == known[i].isupper()
                  and any(_some_piece_may_take(known, a, i) for a in pair)]
        if len(turned) == 1:
            vacated, captured, emptied_too = [pair[0]], turned, [pair[1]]
    if vacated and not arrived and not fresh and not captured and nudged:
        # a piece left its point and arrived nowhere empty: it took a piece; the most changed occupied point is
        # where (a pawn taking a pawn changes little more than a touch would), preferring one of the other side
        # that now shows the mover's colour
        nudged.sort(key=lambda k: (not _takes(known, vacated[0], k, reading, cfg=cfg),
                                   not _may_take(known, vacated[0], k), -change[k]))
        if _may_take(known, vacated[0], nudged[0]):
            captured, nudged = nudged[:1], nudged[1:]
    if vacated and not arrived and not fresh and not captured and len(vacated) == 1:
        # A piece left and nothing changed enough where it went: under a change of light a capture changes its
        # point less than the light changed the board. A piece of the other side that now surely shows the
        # mover's colour is where it took (one piece's disc taking another's place changes the point little more
        # than its ink's colour: half the change level is enough where the colour turned surely).
        # (a quarter of it where the ink turned surely from the other side's colour to the mover's, the piece
        # could take there, and no empty point changed at the level: e.g. the rook b0 took the
        # black rook b9 in glare, b9 changed 0.043 at the level 0.090 and read 0.00 -> 1.00 red; e.g.
        #  the bishop e2 took the pawn g4, which changed 0.058 at 0.118 and read 0.00 -> 0.94 red, while the
        # empty edge point g0 read as a faint arrival from the frame's ink, changed 0.078. Not where an empty point
        # changed clearly: e.g. the rook b3 went to b5, which changed 0.175 at 0.137 and reads
        # faintly, and the pawn a3 beside it read 0.87 -> 0.05 red on a board whose colours read poorly)
        weak_ok = ref_reading is not None and not any(known[i] in ".?" and i not in taken and change[i] > lvl
                                                      for i in range(90))
        # (and no rook's through a piece: e.g. the rook d4-d5 in glare, the black advisor d9
        # behind the cannon d7 read 0.86 red and changed 0.070 at the level 0.127. Asked of every piece, the reach
        # lost a capture: the rook a6 took the horse c6, read here as c6's horse taking a6, which no
        # horse can, and yet the still board's reading came out right in the end; why, not looked into)
        rook = known[vacated[0]] in "Rr"
        takers = [i for i in range(90) if i not in taken and i not in vacated
                  and ((change[i] > cfg.change_half * lvl and (not rook or _may_take(known, vacated[0], i)))
                       or (weak_ok and change[i] > cfg.change_quarter * lvl
                           and _colour_turned(known, i, reading, ref_reading, cfg=cfg)
                           and _may_take(known, vacated[0], i)))
                  and _takes(known, vacated[0], i, reading, cfg=cfg)]
        if takers:
            captured = [max(takers, key=lambda k: change[k])]
            nudged = [i for i in nudged if i != captured[0]]
    w.captured, w.emptied_too, w.nudged, w.vacated = captured, emptied_too, nudged, vacated


def _went_nowhere_sure(w: _Work) -> None:
    """A piece that left and arrived nowhere sure: where it went by the changes, the inks, the hand's
    fingertips, or that it was pushed."""
    arrived, captured, cfg, change, dens, fresh = w.arrived, w.captured, w.cfg, w.change, w.dens, w.fresh
    known, lvl, misaligned, nudged, occ, outlines = w.known, w.lvl, w.misaligned, w.nudged, w.occ, w.outlines
    outline_delta, pieces_but, ref_dens, ref_occ = w.outline_delta, w.pieces_but, w.ref_dens, w.ref_occ
    ref_view, set_down, taken, unexplained, vacated = w.ref_view, w.set_down, w.taken, w.unexplained, w.vacated
    if vacated and not arrived and not fresh and not captured:
        # A piece left its point and arrived nowhere sure: pieces do not vanish from a still board. A piece set down
        # off its point near the edge shows only part of its ink inside the board: the empty point that changed
        # most, if it changed clearly and shows some ink, is where it went (or, changed at all, whose own ink rose
        # well over what it showed empty: a dim board's pieces read faintly everywhere; under glare, the whole disc
        # washed out changing the point by half as much, ink where there was none); not where no round outline stands
        # and it fell: a piece come never lowers it, ink bared by the piece gone does (a corner's frame lines).
        faint = [i for i in range(90) if known[i] in ".?" and i not in taken and occ[i] >= cfg.ink_faint
                 and (change[i] > cfg.change_clear * lvl
                      or (change[i] > lvl and dens[i] > cfg.ink_rose_faint * ref_dens[i] + cfg.ink_rise_least_faint)
                      or (change[i] > cfg.change_half * lvl
                          and dens[i] > cfg.ink_doubled * ref_dens[i] + cfg.ink_rise_least))
                 and not (outline_delta()[i] < 0 and _outline_gone(outlines.discs(), i, pieces_but(i), cfg=cfg))]
        bare = sorted((i for i in range(90) if known[i] in ".?" and i not in taken and change[i] > lvl),
                      key=lambda k: -change[k])
        typical = float(np.median(change))  # (what every point changed by: the light's, the camera's)
        if faint:
            arrived = [max(faint, key=lambda k: change[k])]
            if len(vacated) == 1 and known[vacated[0]] in _CASED:
                # (where the piece cannot go to that point, it went to a neighbour it can reach, or stands half-way
                # between the two: e.g. the advisor f0-e1 left half-way towards e2, e2 changed
                # 0.113 and read 0.35 occupied, e1 0.071 and 0.14, at the level 0.09: read as gone to e2)
                arrived = w.went_where_it_could(vacated[0], arrived)
                if len(arrived) == 1 and (half_to := w.left_towards(arrived[0], vacated[0])) is not None:
                    # (or left half-way from there: e.g. the pawn c3-c4 towards d4, c4 changed
                    # 0.085 at the level 0.090)
                    misaligned.append((min(arrived[0], half_to), max(arrived[0], half_to)))
                    taken.update((arrived[0], half_to))
                    arrived = []
                if not arrived:
                    fresh = [misaligned[-1]]
        elif bare and all((occ[i] < cfg.ink_trace and not _on_edge(i))
                          or change[bare[0]] > cfg.bare_change_share * change[i]
                          or (ref_view is not None and _outline_gone(outlines.discs(), i, pieces_but(i), cfg=cfg)
                              and _stands_on(outlines, bare[0], pieces_but(i), cfg=cfg))
                          for i in vacated):
            # Empty points changed as much as a piece arriving changes one, though no ink reads there (a blurred or
            # small board, whose pieces' characters wash out; the disc itself still changed the point), and the
            # point left was emptied, not pushed: no ink left there, or an empty point changed about as much as it
            # did (a piece pushed changes its own point most, and outwards from an edge point no other; an edge
            # point keeps the frame's ink when emptied), or its round outline is gone and one stands on the empty
            # point (e.g. the red pawn c3-c4 on a pale board, c3 still 0.18 occupied by its faint ink,
            # changed 0.26, c4 0.14; the outlines 0.59 -> 0.19 at c3, 0.33 -> 0.57 at c4). The one that changed
            # clearly most is where it went; among several alike, unsure (the rules choose among them).
            # (the next is the next point the piece could have gone to, changed over the level or not: a point just
            # under the level beside one just over it tells nothing apart; e.g. the cannon b2-e2, its disc's ink not
            # read at e2, which changed 0.067, b3 beside b2 0.092 at the level 0.09: read as b2-b3)
            mover = vacated[0] if len(vacated) == 1 and known[vacated[0]] in _CASED else None
            # (the empty points the piece that left could have gone to: any, where which piece left is unsure)
            could = [i for i in range(90) if known[i] in ".?" and i not in taken
                     and (mover is None or _reaches(known, mover, i))]
            # (where it may have gone: the points changed over the level, and those it could have gone to over half
            # of it; the most changed first)
            maybe = sorted({*bare, *(i for i in could if change[i] > cfg.change_half * lvl)}, key=lambda k: -change[k])
            nxt = float(change[maybe[1]]) if len(maybe) > 1 else 0.0
            if change[bare[0]] > cfg.bare_margin * nxt:
                arrived = bare[:1]
            else:
                # Unsure: each of the points that changed most, not only the first two. The point a piece went to
                # need not be among those two where its ink does not read: its disc changes its own point no more
                # than its lean, its shadow or the hand lifting it change a neighbour of either end, and a snapshot
                # that leaves it out fits only wrong moves.
                unexplained.extend(maybe[:cfg.unexplained_most])
        elif (len(vacated) == 1 and w.emptied(vacated[0])
              and (seen := w.change_at_looks(vacated[0])) is not None  # (binds it only where looked at)
              and len(dests := sorted((i for i in range(90) if i not in taken and i not in vacated
                                       and ((known[i] in ".?" and _reaches(known, vacated[0], i))
                                            or (known[i] in _CASED and _may_take(known, vacated[0], i)))),
                                      key=lambda k: -seen[k])) >= 1
              and seen[dests[0]] > cfg.change_half * lvl
              and all(seen[dests[0]] - typical > (cfg.dest_margin_beside if j in neighbours(dests[0])
                                                  else cfg.dest_margin) * (seen[j] - typical) for j in dests[1:]
                      if j not in neighbours(vacated[0]))):
            # The point left lost all its ink (not pushed: a piece pushed outwards from an edge point keeps some
            # of it, and changes no other point), or all but a quarter of it with its round outline gone, or its
            # piece's ink never read (a small, blurred picture: no character shows) and its outline is gone (e.g.
            #  the red rook h6, read faintly, took the black rook h9 and read black there; h6's ink fell
            # from 0.060 to 0.009, its outline 0.74 -> 0.32, h9 changed 0.071 at the level 0.090), and one point it
            # could have gone to (empty, or holding a piece of the other side) changed clearly more than every
            # other (where it could go: e.g.), or is the only one, though under the level: the piece went
            # there and reads washed out (glare over its disc), or took there (one disc in another's place). Its own
            # neighbours need only be outdone by a fifth (its disc's shadow or lean changes them a little too);
            # those of the point left, not at all (the piece lifted off changes them so: e.g. the rook g0
            # took the cannon in the corner i0, which changed 0.107, g1 beside g0 0.073).
            # Each change measured where the mover's look would stand (`change_at_looks`), over what every point
            # changed (`typical`): the skirt leaving a neighbour lies back over the point left (e.g. the rook h4-f4,
            # h3 changed 0.118 and f4 0.073; so measured 0.060 and 0.086, the edge a4 0.063, the board 0.055).
            if known[dests[0]] in ".?":
                arrived = dests[:1]
                # (or it was left between that point and an empty one beside it that it could also go to, which
                # changed less: its round outline, seen from the point, stands half-way towards it; e.g.
                # the rook h0-h6 left between h6 and h5 on a pale board, h5 changed 0.075, h6 0.036, neither's ink
                # read, the disc 0.43 off h5 towards h6. Seen from h6 the strongest outline within 0.7 was the
                # cannon's on h7: one side's view is what there is)
                standing = pieces_but(vacated[0])
                k = (_half_way_towards(w.view_circles(), dests[0], standing, cfg)
                     if len(standing) >= cfg.least_standing else None)
                if (k is not None and known[k] == "." and k not in taken and _reaches(known, vacated[0], k)
                        and not w.look_on_a_point(vacated[0], dests[0], k)):
                    misaligned.append((min(dests[0], k), max(dests[0], k)))
                    taken.update((dests[0], k))
                    arrived = []
            else:
                captured = dests[:1]
                nudged = [i for i in nudged if i != dests[0]]
        elif (len(vacated) == 1 and set_down is not None and occ[vacated[0]] < cfg.ink_trace
              and dens[vacated[0]] < cfg.ink_lost * ref_dens[vacated[0]]
              and len(near := w.set_down_near(vacated[0])) == 1
              and (change[near[0]] > cfg.set_down_change * lvl
                   or outline_delta()[near[0]] > cfg.outline_rise_set_down)):
            # The point left lost most of its ink and no point it could go to changed clearly more than the others
            # (glare over the disc set down: e.g. the black cannon b7-d7, d7 changed 0.069 at the
            # level 0.13, a7 0.056, b4 0.052), but the hand showed where: its fingertips went on from where they
            # took the piece up by about the move (2.0 files across, 0.1 ranks) before they drew back. The one
            # empty point the piece could go to within half a spacing of that, which changed or whose round
            # outline rose a little, is where it was set down.
            arrived = near
        elif len(vacated) == 1 and (by_look := w.went_by_look(vacated[0])) is not None:
            arrived, captured = by_look  # (its whole look went there, not pushed: `went_by_look`)
        else:
            # Nowhere: a "vacated" point whose disc still shows some ink was pushed, not emptied; so was one on the
            # edge of the board, whose ink may lie all beyond the outer line when pushed outwards (the reading
            # looks no further than the frame); and one whose piece's ink did not read before either (red ink on
            # some boards) or did not fade, and whose round outline still stands there (e.g. the red pawn
            # e3 and cannon c2, read 0.01 occupied throughout, changed 0.09 and 0.10 when touched). It keeps its
            # piece.
            standing = pieces_but(*vacated)
            # (but not where the ink does not tell pieces from empty points on this board and the joint of the cues
            # reads the point emptied: its ink is no trace of its piece, `read_emptied`)
            pushed = [i for i in vacated if _on_edge(i)
                      or (not w.read_emptied(i)
                          and (occ[i] >= cfg.ink_trace
                               or ((ref_occ[i] < cfg.ink_none or dens[i] >= cfg.ink_lost * ref_dens[i])
                                   and not _outline_gone(outlines.discs(), i, standing, cfg=cfg))))]
            nudged.extend(pushed)
            vacated = [i for i in vacated if i not in pushed]
    if vacated and not arrived and not fresh and len(captured) > 1:
        # one capture per move: the largest change among those now showing the mover's colour; the others were
        # only touched
        captured.sort(key=lambda k: (not _takes(known, vacated[0], k, w.reading, cfg=cfg), -change[k]))
        nudged.extend(captured[1:])
        captured = captured[:1]
    w.arrived, w.captured, w.fresh, w.nudged, w.vacated = arrived, captured, fresh, nudged, vacated


def _by_outlines(w: _Work) -> None:
    """Where the inks and changes found no whole move: the pieces' round outlines (gone from one point,
    come to another, half-way between two) and the prey the changes tell."""
    arrived, captured, cfg, change, emptied_too = w.arrived, w.captured, w.cfg, w.change, w.emptied_too
    fresh, known, lvl, misaligned, nudged = w.fresh, w.known, w.lvl, w.misaligned, w.nudged
    outline_came, outline_delta, outline_fell, outlines = w.outline_came, w.outline_delta, w.outline_fell, w.outlines
    pieces_but, reading, ref_circles, ref_reading = w.pieces_but, w.reading, w.ref_circles, w.ref_reading
    ref_view, set_down, set_down_near, taken = w.ref_view, w.set_down, w.set_down_near, w.taken
    unexplained, vacated, view_circles = w.unexplained, w.vacated, w.view_circles
    if (not fresh and not arrived and not captured and len(vacated) <= 1 and ref_view is not None
            and (float(change.max()) > lvl or set_down is not None)):
        # The inks and the changes found no whole move (a piece whose ink does not read: red ink on a yellow board,
        # glare; an emptied point whose printed marks read as ink), but the pieces' round outlines may: one known
        # piece's outline gone and one empty point's come, each clearly more than anywhere else (e.g.
        #  the source's outline fell by 0.46-0.59, the destination's rose by 0.24-0.57, no other
        # point's by more than 0.15).
        src = _clearly_most(outline_fell(), cfg.outline_fall, cfg=cfg)
        dst = _clearly_most(outline_came(), cfg.outline_rise, cfg=cfg)
        if src is None and dst is None and len(vacated) == 1 and known[vacated[0]] in _CASED:
            # A point already found emptied (no ink left, its outline gone) whose outline fell most, though under
            # glare less clearly (other pieces' outlines wash out a little with the light), and one empty point
            # it could go to where an outline came clearly most and which changed over the board's median: it
            # went there (e.g. the red cannon e6-e5 into a glare spot; e6's outline fell 0.29,
            # the glared pawn c4's 0.18, e5's rose 0.18, no other point's over 0.08; e5 changed 0.021, the
            # median 0.016)
            v, k = vacated[0], _clearly_most(outline_came(), cfg.outline_rise_weak, cfg=cfg)
            fell = outline_fell()
            if (k is not None and known[k] == "." and k not in taken and _reaches(known, v, k)
                    and fell[v] >= cfg.outline_fall_weak and fell[v] >= float(fell.max())
                    and change[k] > float(np.median(change))):
                src, dst = v, k
        gone = src is not None and known[src] in _CASED and src not in taken and vacated in ([], [src])
        pair = _pair_left(known, taken, view_circles(), ref_circles(), cfg=cfg) if src is None and not vacated else None
        if pair is not None and dst is not None and known[dst] == "." and dst not in taken:
            # A piece left between two points by an earlier move (both unsure) moved on, where neither its ink
            # left nor came: its disc left the pair and came at one empty point (e.g. the rooks
            # between a3 and b3 and between g9 and h9, on boards whose inks do not tell, went to a1 and h5). Both
            # points are empty now; the pair's letter goes with the piece.
            vacated, emptied_too, arrived = [pair[0]], [pair[1]], [dst]
        if gone and dst is None:
            # The piece may have been set down well off its point, even half-way between two, where no point's
            # outline within 0.3 rose (e.g. the rook a8-d8 left between d8 and d7, which rose by 0.08 and
            # 0.13): the disc that came is looked for within 0.7 of the empty points
            dst = _disc_came(view_circles(), ref_circles(), known, taken, src, change, cfg=cfg)
        if gone and dst is None:
            # Or the outline came about as much at two neighbouring points and clearly less anywhere else, both where
            # the piece could go, and its disc stands half-way between them (e.g. the rook i9-h9 left
            # between h9 and g9, which rose by 0.19 and 0.21, no other point by more than 0.06)
            came = outline_came()
            a, b, c = (int(k) for k in np.argsort(-came, kind="stable")[:3])
            if (b in neighbours(a) and came[b] >= cfg.outline_rise_weak and cfg.clear_margin * came[c] < came[b]
                    and all(known[k] in ".?" and k not in taken and _reaches(known, src, k) for k in (a, b))
                    and _half_way_between(view_circles(), a, b, pieces_but(src), cfg)):
                dst = a
        if gone and dst is None and len(pieces_but(src)) >= cfg.least_standing:
            # Or two empty points side by side both changed, at least half the level, one of them where the piece
            # could go, and its disc stands half-way between them, seen from each (5.10): it went to that one and
            # was left towards the other, which need not be one it could go to (e.g. the cannon
            # c4-d4 left towards d3; d4 changed 0.093, d3 0.113 at the level 0.090, the disc 0.50 and 0.51 off the
            # two; c4's outline fell 0.43 but its ink only by half, and the move read as the cannon pushed)
            both = [k for k in range(90) if known[k] == "." and k not in taken and change[k] > cfg.change_half * lvl]
            standing = pieces_but(src)
            pairs = [(a, b) for a in both for b in neighbours(a) if b in both and a < b
                     and (_reaches(known, src, a) or _reaches(known, src, b))
                     and _plain_disc_near(view_circles(), [a, b], outlines.discs(), standing, cfg=cfg)
                     and _half_way_between(view_circles(), a, b, standing, cfg)]
            if len(pairs) == 1:
                a, b = pairs[0]
                dst = a if _reaches(known, src, a) else b
        if gone and dst is None:
            # Or, where the outline rose less, the one empty point it could go to on which a round outline now
            # stands plainly and did not before, and which changed (e.g. the red pawn e3-e4 on a
            # board whose red ink does not read; e3's outline fell 0.60 -> 0.28, e4's rose only 0.28 -> 0.39 but
            # now stands 0.19 off it, before 0.68; e4 changed 0.025, over the board's median of 0.019)
            standing = pieces_but(src)
            now_on = [k for k in range(90) if known[k] == "." and k not in taken and _reaches(known, src, k)
                      and change[k] > float(np.median(change)) and _stands_on(outlines, k, standing, cfg=cfg)]
            came_on = [k for k in now_on if not _stands_on(outlines, k, standing, before=True, cfg=cfg)]
            # (and whose outline rose more than at any other empty point it could go to: the piece lifted off
            # changes the outlines about its point, and an empty neighbour's printed marks may then just pass for
            # one; e.g. the rook a0 took a5, b0's outline rose 0.38 -> 0.43 and a2's by 0.06)
            rise = outline_delta()
            if (len(now_on) == 1 and came_on == now_on
                    and all(rise[now_on[0]] > rise[k] for k in range(90) if known[k] == "." and k not in taken
                            and k != now_on[0] and _reaches(known, src, k))):
                dst = now_on[0]
        if gone and dst is None and len(near := set_down_near(src)) == 1:
            # Or the hand showed where (as where the ink told the point left): the one empty point it could go to
            # near where the fingertips set it down, where an outline came a little and which changed over the
            # board's median (e.g. the black rook b5-d5 into a glare spot that read no ink at
            # either; b5's outline fell 0.31, no other's over 0.08; d5's rose 0.09, changed 0.020, the median 0.016;
            # the fingertips went on 1.6 files across)
            k = near[0]
            if outline_delta()[k] > cfg.outline_rise_trace and change[k] > float(np.median(change)):
                dst = k
        if gone and dst is None:
            dst = _came_where_it_could(w, src)
        if gone and dst is None and not _stands_on(outlines, src, pieces_but(src), cfg=cfg):
            # No disc came anywhere, and none stands on the source any more: the piece took. (One still standing
            # there, its outline fallen by a third, was touched: e.g. the rook h0 nudged, its
            # outline 0.89 -> 0.58 and 0.11 off, read as taking the cannon h7, which changed 0.025: a silent wrong
            # move.) Where, the changes tell: the piece it may take whose point
            # changed clearly most (e.g. the pawn c3 took on c4, whose red ink read as none, while c3's
            # printed marks read as a black piece; c4 changed 0.08, no other point 0.02), or, the only one it can
            # reach, whose point changed a little and lost most of its ink (e.g. the red cannon b5 took the
            # rook h5 over a screen; h5 changed 0.049, its ink fell from 0.165 to 0.027)
            could_take = [i for i in range(90) if known[i] in _CASED and i != src and i not in taken
                          and _may_take(known, src, i)]
            prey = _changed_most(could_take, change, lvl, reading, ref_reading, cfg=cfg)
            if (prey is None and len(could_take) == 1 and change[could_take[0]] > cfg.change_quarter * lvl
                    and _stands_on(outlines, could_take[0], pieces_but(src, could_take[0]), cfg=cfg)):
                # (or the only one it could take, whose point changed a little and where a disc still stands, the
                # taker's in the prey's place, though the ink did not change: e.g. the black cannon e7
                # took the red cannon e4 on a board where red ink read dark; e4 changed 0.034 at the level 0.09)
                prey = could_take[0]
            if prey is not None:
                vacated, captured = [src], [prey]
                nudged = [i for i in nudged if i not in (src, prey)]
                unexplained = [i for i in unexplained if i not in (src, prey)]
        if gone and dst is not None and known[dst] in ".?" and dst not in taken:
            vacated, arrived = [src], [dst]
            nudged = [i for i in nudged if i not in (src, dst)]
            unexplained = [i for i in unexplained if i not in (src, dst)]
            # The outline is looked for within 0.3 of each point: a piece standing between two points (5.10) is
            # found at the edge of that window. Where its disc's centre, looked for further, lies at least
            # `misaligned_from` off the point towards an empty neighbour, it stands between the two (e.g.
            #  the horse b0-c2 left between c2 and c1)
            # (and seen half-way from the neighbour too, or at their midpoint: from one point alone, the strongest
            # circle within 0.7 may be another's; e.g. the horse b9-d8, its ink not read, a faint
            # circle 0.55 off d8 towards c8 and 0.29 across, read as the horse between d8 and c8)
            standing = pieces_but(src, dst)
            j = _half_way_towards(view_circles(), dst, standing, cfg)
            if (j is not None and known[j] in ".?" and j not in taken and j != src
                    and _half_way_between(view_circles(), dst, j, standing, cfg)
                    and not w.look_on_a_point(src, dst, j)):
                misaligned.append((dst, j) if dst < j else (j, dst))
                taken.update((dst, j))
                arrived, fresh = [], [misaligned[-1]]
    w.arrived, w.captured, w.emptied_too, w.fresh, w.nudged = arrived, captured, emptied_too, fresh, nudged
    w.unexplained, w.vacated = unexplained, vacated


def _came_where_it_could(w: _Work, src: int) -> int | None:
    """Where the piece from `src`, whose outline fell clearly most, went when no change tells (a disc washed out by
    glare changes its point no more than the light does): the empty point it could go to where a round outline came
    most of all the board's empty points, by `outline_rise` or more and `clear_margin` times more than at any other
    point it could go to; only where its point was emptied (`_Work.emptied`: no trace of its ink left), not touched.
    Else None. (A disc risen where the piece could not go is noise or the board's print brightening: it tells
    nothing of where this piece went.)"""
    cfg, known, taken = w.cfg, w.known, w.taken
    if not w.emptied(src):
        return None
    came = w.outline_came()
    empty = [i for i in range(90) if known[i] in ".?" and i not in taken]
    could = [i for i in empty if _reaches(known, src, i)]
    if not could:
        return None
    best = max(could, key=lambda k: float(came[k]))
    rise = float(came[best])
    if (rise < cfg.outline_rise or rise < max(float(came[i]) for i in empty)
            or any(cfg.clear_margin * float(came[i]) >= rise for i in could if i != best)):
        return None
    return best


def _taker_and_half_way(w: _Work) -> None:
    """Which of two took; a taker or a mover left half-way (5.10); an arrival with its twin beside it."""
    arrived, captured, cfg, change, fresh, known = w.arrived, w.captured, w.cfg, w.change, w.fresh, w.known
    leaning, lvl, misaligned, outline_delta = w.leaning, w.lvl, w.misaligned, w.outline_delta
    outline_fell, outlines, pieces_but, reading = w.outline_fell, w.outlines, w.pieces_but, w.reading
    ref_circles, ref_view, taken, vacated = w.ref_circles, w.ref_view, w.taken, w.vacated
    view_circles, = w.view_circles,
    if len(vacated) == 1 and len(captured) == 1 and not arrived and not fresh and ref_view is not None:
        # Which of the two took: the inks may say the wrong one where the taker's ink does not read (a red cannon on
        # a yellow board reads empty) and the point it left still reads like a piece (an edge point's frame). The
        # taker's outline left its point; the taken piece's point still has a disc on it (e.g.
        # a0 and a2 fell by 0.65 and 0.52, their targets a4 and a6 by 0.08 at most).
        v, c = vacated[0], captured[0]
        if (_clearly_most(outline_fell(), cfg.outline_fall, cfg=cfg) == c
                and outline_delta()[v] > -cfg.outline_kept and _may_take(known, c, v)):
            vacated, captured = [c], [v]
        # The taker left half-way between the taken piece's point and a neighbour: an empty one, which changed by
        # half the level (under the level where the taken piece's ink already leant over it, or where the taker's
        # ink reads as none), or the point it came from. Where a round outline as plain as the standing pieces'
        # stands half-way between the two, seen from each, the taker stands between them (5.10; e.g.
        #  the red pawn g4 took g5 and was left towards g6, which read 0.46 occupied before and 0.97 after and
        # changed 0.095 at the level 0.154; e.g. the red cannon b6 took g6 and was left towards g5,
        # which read 0.16 occupied; e.g. the black pawn g6 took g5 and was left half-way back)
        v, c = vacated[0], captured[0]
        others = pieces_but(v, c)
        beside = [k for k in neighbours(c) if k not in taken
                  and (k == v or (known[k] == "." and change[k] > cfg.change_half * lvl))]
        # (a disc 0.75 as plain as the standing pieces' will do, seen half-way from both points: e.g.
        #  the horse b4 took the rook d5 and was left towards c5 under the noise of a small board, its disc 0.55
        # against their median 0.70)
        # (not where the taker's characters read plainly on the prey's point, not leaning towards the neighbour:
        # its top face is there, and the outline half-way is its side wall and shadow reaching over the neighbour)
        # (where the change shows the taker's look standing on c, k under its side wall and shadow, k may read some
        # ink: a dark shadow does (`look_on`); not where k is the point it came from, whose change is its leaving)
        half = [k for k in beside if len(others) >= cfg.least_standing
                and _half_way_between(view_circles(), c, k, others, cfg)
                and not _topped_on(reading, w.parallax, c, over=k, cfg=cfg,
                                   shaded=k != v and w.look_on(v, c, k))
                and not w.look_on_a_point(v, c, k)]
        if len(half) == 1 and _plain_disc_near(view_circles(), [c], outlines.discs(), others,
                                               share=cfg.outline_plain_taker, cfg=cfg):
            k = half[0]
            misaligned.append((min(c, k), max(c, k)))
            taken.update((c, k))
            captured, fresh = [], [misaligned[-1]]
            if k == v:
                vacated = []  # (its old point is one of the two)
    if len(vacated) == 1 and len(arrived) == 1 and captured and not fresh:
        # A move goes to one point: an empty one, or one where it took. Where a piece arrived on an empty point and
        # a piece of the other side changed as well (a shadow passing over the board with the hand), it took there
        # only if that point now surely shows the mover's colour; else it arrived, and the other piece stays (e.g.
        #  the rook h6-h4 while a shadow crossed the black king's rank, read as arriving and taking the king,
        # both reported as pieces of unknown type)
        if all(_takes(known, vacated[0], k, reading, cfg=cfg) for k in captured):
            arrived = []
        else:
            captured = []
    if len(vacated) == 1 and len(arrived) == 1 and not fresh and ref_view is not None:
        # Where the piece went, an empty neighbour changed about as much: the piece stands between the two, nearer
        # one. Its ink may read at the wrong one (a red horse on a board whose red ink reads as none, its edge's
        # shadow read as ink beside it): the disc that came, looked for within 0.7 of each, tells which (e.g.
        #  the horse f4-d5, set down towards e5; e5 read 0.97 occupied and d5 0.04, each changed 0.17, the disc
        # rose by 0.46 beside d5 and 0.30 beside e5)
        a = arrived[0]
        twin = [k for k in neighbours(a) if known[k] in ".?" and k not in taken and k not in leaning
                and change[k] > cfg.twin_change * change[a]]
        s = vacated[0]
        if (s in neighbours(a) and known[s] in _CASED and not captured
                and _half_way_between(view_circles(), a, s, pieces_but(s), cfg)
                and not w.look_on_a_point(s, a, s)):
            # It went to the neighbouring point and was left half-way back: its disc stands half-way between the
            # two (e.g. the rook a3-b3 left between them; a3 still read 0.90 occupied, b3 0.42)
            misaligned.append((s, a) if s < a else (a, s))
            taken.update((s, a))
            vacated, arrived, fresh, twin = [], [], [misaligned[-1]], []
        # (but not where the piece's characters read plainly on the arrival, not leaning towards the twin
        # (`_topped_on`): the top face is on the point, and the twin's change and the outline seen half-way are the
        # side wall and shadow of a tall piece reaching over it; e.g. the rook h0-h5, its ink 0.96 on h5 leaning
        # 0.19 towards h4, which changed more, 0.149 against 0.130)
        if len(twin) == 1 and not _topped_on(reading, w.parallax, a, over=twin[0], cfg=cfg):
            k = twin[0]
            # half-way (its disc's centre, the camera's parallax removed, `misaligned_from` or more off towards the
            # other): both (e.g. the bishop g0-e2 left between e2 and f2, the disc rose by 0.25 and 0.27)
            # (seen from the neighbour too, or at their midpoint: e.g. the rook a0-a1 set down 0.21
            # off a1 towards a2, whose shadow read as ink; from a2 the rook's disc lay 0.67 towards a1, from a1 it
            # stood on a1, and it was reported between the two)
            standing = pieces_but(*vacated)
            if (_half_way_towards(view_circles(), a, standing, cfg) == k
                    and _half_way_between(view_circles(), a, k, standing, cfg)
                    and not (known[s] in _CASED and w.look_on_a_point(s, a, k))):
                misaligned.append((a, k) if a < k else (k, a))
                taken.update((a, k))
                arrived, fresh = [], [misaligned[-1]]
            else:
                rise_a, rise_k = _disc_rise(view_circles(), ref_circles(), [a, k], cfg=cfg).tolist()
                # (nor where the piece's look is found on a, `look_margin` times more like itself than on k)
                # (nor, through the tops' plane, where k is a's neighbour on the camera's side: a piece set down on
                # k never changes the point beyond its top, and one set down on a reaches over k with its side
                # wall, whose far end reads as a round outline there; `_read_at_its_top`)
                if (rise_k >= cfg.outline_rise and rise_k > cfg.twin_rise_ratio * rise_a
                        and not _inked_on(reading, w.parallax, a, over=k, cfg=cfg)
                        and not (known[s] in _CASED and w.look_prefers(s, a, k))
                        and not (w.tops is not None and _along_the_lean(a, w.tops, cfg)[1] == k)):
                    arrived = [k]
    w.arrived, w.captured, w.fresh, w.vacated = arrived, captured, fresh, vacated


def _inked_on(reading: PointReading, parallax: np.ndarray, a: int, over: int, cfg: TrackerConfig = DEFAULTS) -> bool:
    """Point a plainly shows a piece's top face and its neighbour `over` does not (`_plain_on_point`). A piece's
    characters are on its top face, which the view is read through; a round outline rising on the neighbour (a tall
    piece's side wall and shadow reaching over it) does not move the piece there."""
    return _plain_on_point(reading, parallax, a, cfg) and not _plain_on_point(reading, parallax, over, cfg)


def _topped_on(reading: PointReading, parallax: np.ndarray, a: int, over: int,
               cfg: TrackerConfig = DEFAULTS, shaded: bool = False) -> bool:
    """A piece's top face stands on point a, not between it and its neighbour `over` (5.10): a's ink reads plainly
    (over `ink_plain`), its peak leaning under `lean_some` towards `over` (the camera's `parallax` removed), and
    `over` plainly reads none (under `ink_none`). The characters are on the top face: a tall piece's side wall and
    shadow, which reach over the neighbour on one side, carry none. A piece half-way shows them half a spacing off both
    points, and where the neighbour reads some ink it may be half the characters, however little the lean measured
    against the median parallax (a dark shadow reads as ink too, 0.51 occupied, but is not told apart from them: e.g.
    a cannon half-way between f0 and f1, f1 0.44, its peak 0.27 back towards f0, f0's 0.14 towards f1). `shaded`: the
    change shows the piece's look standing on a, `over` under its side wall and shadow (`_Work.look_on`): there
    `over` may read some ink, only not plainly (under `ink_plain`; e.g. the horse d5xc3, its shadow 0.51 on c2)."""
    most = cfg.ink_plain if shaded else cfg.ink_none
    return bool(reading.occupied[a] > cfg.ink_plain and _lean(reading, parallax, a, over) < cfg.lean_some
                and reading.occupied[over] < most)


def _plain_on_point(reading: PointReading, parallax: np.ndarray, i: int, cfg: TrackerConfig = DEFAULTS) -> bool:
    """Point i's ink reads plainly (over `ink_plain`) and its peak is centred on the point (within `ink_centred`,
    the camera's `parallax` removed): a piece stands there, not a neighbour's piece leaning towards it."""
    centred = float(np.hypot(*(reading.offset[i] - parallax))) < cfg.ink_centred
    return bool(reading.occupied[i] > cfg.ink_plain and centred)


def _lean(reading: PointReading, parallax: np.ndarray, a: int, k: int) -> float:
    """How far point a's ink peak lies towards its neighbour k (board spacings along a -> k), the camera's `parallax`
    removed."""
    return float(np.dot(reading.offset[a] - parallax, POINTS_UV[k] - POINTS_UV[a]))


def _departure_outdone(w: _Work) -> None:
    """A move whose point left is read by its ink alone while another piece that could have made it changed far
    more: which piece left is unsure."""
    arrived, captured, cfg, change, known, lvl = w.arrived, w.captured, w.cfg, w.change, w.known, w.lvl
    occ, taken, unexplained, vacated = w.occ, w.taken, w.unexplained, w.vacated
    if len(vacated) != 1 or len(targets := arrived + captured) != 1 or change[vacated[0]] > lvl:
        return
    # The point left changed under the board's level: only its ink, fallen under a piece's, says it emptied. A piece
    # lifted off changes its point as much as one set down changes its own; where another piece's point, still
    # reading occupied, changed clearly and over `departure_outdone` times as much, and that piece could have made
    # the move, the ink may have read a shadow over that point as its piece and a dim piece as gone (a dark, small
    # picture): both are unsure, and so is what arrived (the rules, or the move fit, choose among them).
    v, t = vacated[0], targets[0]
    rivals = [j for j in range(90) if known[j] in _CASED and j != v and j != t and j not in taken
              and occ[j] >= cfg.ink_piece and change[j] > cfg.change_clear * lvl
              and change[j] > cfg.departure_outdone * change[v]
              and (_may_take(known, j, t) if t in captured else _reaches(known, j, t))]
    if rivals:
        unexplained.extend(k for k in (v, *rivals) if k not in unexplained)
        w.vacated = []


def _touches_that_moved(w: _Work) -> None:
    """Touches that were moves left half-way back, two touches that were a capture left half-way,
    and a move that was a push."""
    arrived, captured, cfg, change, fresh, known = w.arrived, w.captured, w.cfg, w.change, w.fresh, w.known
    leaning, lvl, misaligned, nudged, occ, outlines = w.leaning, w.lvl, w.misaligned, w.nudged, w.occ, w.outlines
    pieces_but, ref_view, taken, unexplained, vacated = w.pieces_but, w.ref_view, w.taken, w.unexplained, w.vacated
    view_circles, = w.view_circles,
    if (not vacated and not arrived and not captured and not fresh and (nudged or unexplained)
            and ref_view is not None):
        # A piece moved to a neighbouring point and left half-way back towards where it came from still covers
        # half of its old point: the old point's ink reads as before, and the move reads as a touch. Its disc's
        # centre tells: `misaligned_from` or more off the point towards an empty neighbour that changed too (by
        # half the level: e.g. the rook i0-i1, i1 changed 0.082 while the light changed the board), it
        # stands between the two (5.10; e.g. the red cannons e2-f2 and a2-a1, their red ink
        # read as none at the new point; a piece nudged stays within 0.3 of its point)
        # (a disc as plain as the standing pieces': where a piece left, the circle score near its point may peak
        # on the printed marks; e.g. the rook g0 took on i0, and a faint circle 0.64 off g0 towards g1)
        # (or as a piece whose colour turned: the half left on its old point reads another ink; e.g. the
        # red pawn g4-g5 left half-way, g4 read dark)
        i = max(nudged + unexplained, key=lambda k: change[k])
        standing = pieces_but(i)
        if known[i] in _CASED and i not in taken and len(standing) >= cfg.least_standing:
            j = _half_way_towards(view_circles(), i, standing, cfg)
            _, near = find_discs(view_circles(), POINTS_UV[i:i + 1], reach=cfg.disc_reach_near, px=S)
            plain = float(near[0]) >= cfg.outline_plain * float(np.median(outlines.discs()[standing]))
            # (half-way seen from both: a piece gone to the neighbour and set down 0.3 back towards its old point
            # lies 0.7 from that point; e.g. the pawn g3-g4, g3's printed marks reading a dark ink)
            if (plain and j is not None and known[j] == "." and j not in taken and change[j] > cfg.change_half * lvl
                    and _half_way_towards(view_circles(), j, standing, cfg) == i
                    and not w.look_on_a_point(i, i, j)):
                misaligned.append((i, j) if i < j else (j, i))
                taken.update((i, j))
                nudged = [k for k in nudged if k != i]
                unexplained = [k for k in unexplained if k != i]
                fresh = [misaligned[-1]]
    if (not vacated and not arrived and not captured and not fresh and len(nudged) == 2
            and nudged[1] in neighbours(nudged[0]) and ref_view is not None):
        # A piece that took its neighbour and was left half-way between the two points covers half of each: both
        # read half a piece and neither emptied, and the move reads as two touches. Where one could take the other
        # and a disc as plain as the standing pieces' stands half-way between them, the taker stands between the
        # two (5.10; e.g. the black pawn c5 took c4 and was left in the river, both points 0.55 occupied)
        a, b = nudged
        standing = pieces_but(a, b)
        if (known[a] in _CASED and known[b] in _CASED and (_may_take(known, a, b) or _may_take(known, b, a))
                and max(occ[a], occ[b]) < cfg.ink_plain and len(standing) >= cfg.least_standing
                and _plain_disc_near(view_circles(), [a, b], outlines.discs(), standing, cfg=cfg)
                and _half_way_between(view_circles(), a, b, standing, cfg)):
            misaligned.append((a, b))
            taken.update((a, b))
            nudged, fresh = [], [misaligned[-1]]
    if (len(vacated) == 1 and len(arrived) == 1 and not captured and not fresh and ref_view is not None
            and arrived[0] in neighbours(vacated[0]) and known[vacated[0]] in _CASED):
        # A piece pushed towards an empty neighbour reads as having gone there where its ink now lies more on the
        # neighbour's side (a point whose printed marks read like ink beside it): its round outline tells. Still
        # standing on its own point, plainly and within 0.3 of it, and none so on the neighbour, the piece was
        # touched, not moved (e.g. the pawn g5 pushed towards f5, its disc 0.18 off g5; where a piece
        # went to the neighbour, its disc stands there, and its old point may still show an outline within 0.3 by
        # the moved disc's edge: e.g.)
        # (but not where all the ink its piece showed is gone from its point: a piece pushed keeps its character
        # there, and a circle of the board's printed marks may stand where it stood; e.g. a pawn with a real
        # top's faint ink gone from its point on a small picture, its point's position marks scoring 0.86 as a
        # circle)
        s, a = vacated[0], arrived[0]
        standing = pieces_but(s)
        if (_stands_on(outlines, s, standing, cfg=cfg) and not _stands_on(outlines, a, standing, cfg=cfg)
                and w.dens[s] >= cfg.ink_all_gone * w.ref_dens[s]):
            vacated, arrived, leaning = [], [], [*leaning, a]
            nudged = sorted({*nudged, s})
    w.arrived, w.fresh, w.leaning, w.nudged, w.unexplained = arrived, fresh, leaning, nudged, unexplained
    w.vacated = vacated


def _squares(w: _Work) -> tuple[str, list[int], list[int], list[tuple[int, int]]]:
    """The squares, the points placed, the pieces nudged and the pairs a piece stands between."""
    arrived, captured, cfg, change, dens, emptied_too = w.arrived, w.captured, w.cfg, w.change, w.dens, w.emptied_too
    fresh, known, leaning, lvl, misaligned, nudged = w.fresh, w.known, w.leaning, w.lvl, w.misaligned, w.nudged
    occ, outlines, parallax, pieces_but, reading = w.occ, w.outlines, w.parallax, w.pieces_but, w.reading
    ref_circles, ref_dens, ref_view, sq, straightened = w.ref_circles, w.ref_dens, w.ref_view, w.sq, w.straightened
    taken, unexplained, vacated, view_circles = w.taken, w.unexplained, w.vacated, w.view_circles
    targets = arrived + captured
    for i in vacated + emptied_too:
        sq[i] = "."
    if len(vacated) == 1 and len(targets) == 1 and not fresh:
        mover = known[vacated[0]]
        if mover == "?" and targets[0] in captured and known[targets[0]] in _CASED:
            mover = "x" if known[targets[0]].isupper() else "X"  # a piece not known took: the other side's
        sq[targets[0]] = mover
    else:
        for i in targets:
            sq[i] = _ink_letter(reading, i, cfg=cfg)
    for a, b in misaligned:
        sq[a] = sq[b] = "?"
    for i in unexplained:
        sq[i] = "?"
    # A piece arrived from no known piece's point, and points left unsure by an earlier snapshot (a piece between
    # two points) changed and lost ink: the piece came from there, and they are empty now (an edge point keeps
    # the frame's ink and would read like a piece)
    left = []
    if arrived and not vacated and not fresh:
        left = [i for i in range(90) if known[i] == "?" and i not in taken and i not in targets and change[i] > lvl
                and dens[i] < cfg.ink_held * ref_dens[i]]
        if not left and ref_view is not None and len(arrived) == 1:
            # (or, where the inks do not tell, the disc that left the pair: e.g. the rook between g9 and
            # h9, on a board whose empty points read like pieces, went to h5)
            pair = _pair_left(known, taken | set(targets), view_circles(), ref_circles(), cfg=cfg)
            left = list(pair) if pair is not None else []
        # A piece between two points is one piece: where it left one of them, the other unsure point beside it whose
        # ink fell away too, though it changed under the level, is empty as well (e.g. the rook between
        # h0 and h1 went to h6; h0 changed 0.10, h1 0.085 at the level 0.09, its ink from 0.15 to none; h1 left
        # unsure then let a later move be read as the rook going back there); so is one where no round outline
        # stands, whatever its ink reads (e.g. the rook between f5 and g5 went to c5; g5, by the river's
        # characters, read 0.86 occupied by a dark piece before and after)
        left += [j for i in left for j in neighbours(i) if known[j] == "?" and j not in left and j not in taken
                 and j not in targets
                 and ((occ[j] < cfg.ink_none and dens[j] < cfg.ink_lost * ref_dens[j])
                      or (ref_view is not None and _outline_gone(outlines.discs(), j, pieces_but(j), cfg=cfg)))]
        for i in left:
            sq[i] = "."
    # points left unsure by an earlier snapshot and changed since: what they show now, where it is clear (a piece
    # centred on the point, not the ink of a neighbour's piece leaning towards it); unchanged, they stay unsure
    for i in range(90):
        if (known[i] == "?" and i not in taken and i not in targets and i not in leaning and i not in left
                and i not in straightened and i not in vacated and i not in emptied_too and change[i] > lvl):
            sq[i] = "." if occ[i] < cfg.ink_none else (_ink_letter(reading, i, cfg=cfg)
                                                       if _plain_on_point(reading, parallax, i, cfg) else "?")
    if nudged and ref_view is not None and len(pieces_but()) >= cfg.least_standing_many:
        # A piece touched moved on its point: its round outline moved with it, or changed its shape where the hand
        # turned it. A piece whose ink peak alone shifted (a change of light or shadow over it) was not touched
        # (e.g. the false touches' discs moved 0.01-0.06 of a spacing, the
        # true ones' 0.13-0.22, or by 0.06 with the outline fallen by 0.48)
        # (and where what changed on its point is centred on its top face, not to one side of it: a moved
        # neighbour's shadow or tall body moves the outline found beside it too)
        nudged = [i for i in nudged if _outline_moved(outlines, i, pieces_but(i), cfg)
                  and not changed_beside(w.view, ref_view, outlines.view(), i, pieces_but(i), cfg=cfg)]
    return "".join(sq), [i for i in targets if i not in unexplained], sorted(nudged), misaligned


# The steps `interpret` runs, in order, on what `_changed_points` found: the corrections, and among them the three
# that only bind what the later ones share (`_vacated`, `_fresh`, `_touched_or_taken`). (A tuple looked up at each
# call, so that bench/interpret_passes.py can measure what each correction is worth by running without it.)
_PASSES = (_pieces_between, _vacated, _where_the_mover_went, _read_at_its_top, _left_under_glare_by_its_side_wall,
           _went_by_its_side_wall, _ink_leaning, _fresh, _source_of_an_arrival, _captures_read_faintly, _changed_pieces,
           _touched_or_taken, _arrival_under_its_skirt, _captures_under_changed_light, _went_nowhere_sure,
           _by_outlines, _taker_and_half_way, _departure_outdone, _touches_that_moved)


def _settled_from_between(known: str, squares: str, placed: list[int], unsure_of: dict[int, str]) -> str:
    """A piece reported between two points set onto one of them: it moved from the one unsure point to the other,
    which keeps the letter the tracker kept for the pair, whatever its ink reads (e.g. the black pawn
    between c5 and c4 set onto c4, read as a red piece there). A piece coming from elsewhere onto an unsure point
    (one taking the piece half-way) is not this: the pair's other point did not empty.
    So with a piece between two points that moved on to an empty point, both of the pair's points emptied, the only
    piece set down anywhere (e.g. the red rook between h0 and i0 went to h4, whose red ink read dark); and
    with an unsure point not set down on that now reads a piece of the pair's colour."""
    out = list(squares)
    for p in placed:
        letter = unsure_of.get(p)
        if known[p] != "?" or letter is None or squares[p] not in "?Xx":
            continue
        if any(known[q] == "?" and unsure_of.get(q) == letter and squares[q] == "." for q in neighbours(p)):
            out[p] = letter
    for p, letter in unsure_of.items():
        # one of the pair, set onto its point where another piece came to the other, read as a
        # piece of the pair's colour, type unknown: the pair's piece
        if p not in placed and known[p] == "?" and squares[p] == ("X" if letter.isupper() else "x"):
            out[p] = letter
    if len(placed) == 1 and known[placed[0]] == "." and squares[placed[0]] in "?Xx":
        emptied = {unsure_of[q] for q in unsure_of if known[q] == "?" and squares[q] == "."
                   and any(unsure_of.get(k) == unsure_of[q] and squares[k] == "." for k in neighbours(q))}
        if len(emptied) == 1:
            out[placed[0]] = emptied.pop()
    return "".join(out)


def _set_onto_by_outline(known: str, squares: str, placed: list[int], unsure_of: dict[int, str],
                         outlines: Outlines, change: np.ndarray, lvl: float,
                         cfg: TrackerConfig) -> tuple[str, list[int]]:
    """A piece reported between two points (both unsure, the pair's letter kept) set onto one of them, told by its
    round outline where its ink does not read (a board whose black ink washes out): the outline that stood half-way
    now stands plainly on the one point, none is left on the other, and the pair changed; no other known piece was
    lost (nothing else moved: the piece was set right, or moved from the one point to the other). That point gets
    the pair's letter, the other is empty, and the piece is reported placed. (e.g. the black rook
    between b4 and b3 went to b3, whose ink read 0.007 as it stood there, the river's text at b4 0.043; read as
    b3 emptied, the rook lost for the rest of the game.)"""
    if any(known[k] in _CASED and squares[k] != known[k] for k in range(90)):
        return squares, placed
    out, placed = list(squares), list(placed)
    for p, letter in unsure_of.items():
        pair = [q for q in neighbours(p) if known[q] == "?" and unsure_of.get(q) == letter]
        if known[p] != "?" or len(pair) != 1 or p in placed:
            continue
        q = pair[0]
        sure = "X" if letter.isupper() else "x"
        if squares[p] not in ("?", ".", sure) or squares[q] not in "?." or max(change[p], change[q]) <= lvl:
            continue
        standing = [k for k in range(90) if squares[k] in _CASED and k not in (p, q)]
        if len(standing) < cfg.least_standing:
            continue
        was = float(np.hypot(*_disc_offset(outlines.ref(), p, standing, cfg=cfg)))
        if (was >= cfg.misaligned_from - cfg.between_short and _stands_on(outlines, p, standing, cfg=cfg)
                and _outline_gone(outlines.discs(), q, standing, cfg=cfg)):
            out[p], out[q] = letter, "."
            placed.append(p)
    return "".join(out), placed


def as_seen_twice(known: str, squares: str, outlines: Outlines, reading: PointReading, doubted: dict[int, str],
                  unsure_of: dict[int, str], between: list[tuple[int, int]],
                  settled: frozenset[int] = frozenset(),
                  cfg: TrackerConfig = DEFAULTS, changed: frozenset[int] | None = None,
                  ) -> tuple[str, dict[int, str], dict[int, str], list[int]]:
    """A snapshot's `squares` (interpreted against the `known` board) corrected where they contradict what the board
    plainly shows, and have on the last still board too (`doubted`, what it showed there; once may be a shadow):
    (squares, what they contradict now and were not corrected for, the points left unsure with the letter of the
    piece that made them so, the points whose ink alone contradicts them: plainly_seen's, `settled` not looked at).

    A move missed at one still board (a piece set down half-way read as nothing arriving, an emptied point whose
    printed marks read as ink) would otherwise stay in the known board for the rest of the game, every later snapshot
    judged against it and carrying it. And a piece the snapshot reported `between` two points (both '?') is still
    the piece it was: its letter (`unsure_of`, carried from snapshot to snapshot) is kept for when it is plainly seen
    on one of them again. (Only there: other points are left unsure where a change told nothing sure, e.g.
     and the one piece that left is not always what stands there.)"""
    left = [i for i in range(90) if known[i] in _CASED and squares[i] in ".?"]
    unsure_of = {i: c for i, c in unsure_of.items() if squares[i] == "?"}
    if len(left) == 1:
        unsure_of.update({i: known[left[0]] for pair in between for i in pair if known[i] != "?"})
    seen, ink_only = plainly_seen(squares, outlines, reading, unsure_of, settled, cfg=cfg)
    if changed is not None:
        # A piece comes to a point known empty only by changing it: a move missed changed its arrival at the still
        # board where it was missed. Where the point did not change (`changed`: by half the level or more), a
        # piece seen there is the board's print read as one (a paper board's marks, its curled lines off the mask;
        # e.g. the red palace's middle read as a dark piece from the start on), first doubted no more.
        seen = {i: c for i, c in seen.items() if c == "." or squares[i] != "." or i in changed or i in doubted}
        # Likewise a piece leaves its point only by changing it: a move missed changed its source at the still board
        # where it was missed, and is first doubted there. A piece seen gone where its point did not change, nor
        # had when first doubted, is one the light washes out (a pale piece under glare: no ink, a faint outline,
        # the print around it showing), still standing.
        seen = {i: c for i, c in seen.items() if c != "." or squares[i] not in _CASED or i in changed
                or i in doubted}
    seen = _with_a_source(known, squares, seen, doubted)
    again = {i: c for i, c in seen.items() if doubted.get(i) == c}
    if again:
        squares = as_plainly_seen(squares, again, reading, cfg=cfg)
    return (squares, {i: c for i, c in seen.items() if i not in again},
            {i: c for i, c in unsure_of.items() if squares[i] == "?"}, ink_only)


def _with_a_source(known: str, squares: str, seen: dict[int, str], doubted: dict[int, str]) -> dict[int, str]:
    """`seen` (what points plainly show against the snapshot `squares`) without the pieces seen come that no piece
    can have come from. No piece is ever added to a board: a piece standing where the snapshot has none is one the
    snapshot lost, either a known piece that left its point with nothing read arriving (the snapshot holds fewer
    pieces than the `known` board) or one plainly seen gone from its point (a move missed whole). Where more pieces
    are seen come than that, what reads as a piece (ink and a round outline together) is something else: a round
    shadow spot left bare by a piece that moved off it, a neighbour's tall body leaning over the point. None of those
    new ones is taken (which would be a guess); those `doubted` already on the last still board were weighed there."""
    come = [i for i, c in seen.items() if c != "." and squares[i] == "."]
    if not come:
        return seen
    missing = sum(c in _CASED for c in known) - sum(c in _CASED for c in squares)
    gone = sum(c == "." for c in seen.values())
    if len(come) <= max(0, missing) + gone:
        return seen
    return {i: c for i, c in seen.items() if i not in come or i in doubted}


def plainly_seen(squares: str, outlines: Outlines, reading: PointReading, unsure_of: dict[int, str] | None = None,
                 settled: frozenset[int] = frozenset(),
                 cfg: TrackerConfig = DEFAULTS) -> tuple[dict[int, str], list[int]]:
    """The points where a snapshot's `squares` contradict what the board plainly shows, with what it shows: '.'
    where a piece is known and neither ink nor a round outline is there; the ink's letter (X / x, '?' where its
    colour is unsure) where the point is known empty and both are; the letter in `unsure_of` (a point left unsure by
    a known piece) where that piece is plainly seen there again, and '.' on the neighbour it was left unsure with.

    Plainly: ink over 0.8 and outline over 0.8 of the standing pieces' median, or under 0.2 and 0.5 (both cues
    agreeing about a piece being there were never wrong on six hard games' still boards, 12,000 points; its colour
    was, 14 times in 3,000). Other points left unsure stay so: they contradict nothing, and where a piece half-way was
    set right, its ink's colour read wrongly would (e.g. a red cannon and a red advisor read black).
    None where more than three points contradict: that is the light or the camera. The outlines (43 ms a view) are
    computed only where the ink already disagrees, and not for the points `settled` (the ink alone disagreed there
    on the last still board, and nothing changed since). Also returned: the points where the ink alone disagrees."""
    occ = reading.occupied
    unsure_of = unsure_of or {}
    doubt = [i for i in range(90) if (squares[i] in _CASED and occ[i] < cfg.ink_none)
             or ((squares[i] == "." or i in unsure_of) and occ[i] > cfg.ink_plain)]
    standing = [i for i in range(90) if squares[i] in _CASED]
    if not [i for i in doubt if i not in settled] or len(standing) < cfg.least_standing:
        return {}, doubt
    score, disc = outlines.view(), outlines.discs()
    median = float(np.median(disc[standing]))
    # (gone: no outline within 0.4 of the point either; a piece set down well off its point, whose ink does not
    # read, is no piece gone: e.g. the red horse set down 0.4 off d5 towards e5)
    gone = [i for i in doubt if squares[i] in _CASED and disc[i] < cfg.outline_gone_share * median]
    if gone:
        # (and the printed lines seen there, as at the empty points: glare over a piece washes out its ink and its
        # outline, and the lines it covers stay unseen; e.g. the black horse b9 under glare, its point's
        # grey spread over 6 levels, the empty points' 60 to 75, an empty point under the same glare 26)
        empty = [i for i in range(90) if squares[i] == "."]
        lines = float(np.median(outlines.contrast(empty))) if empty else 0.0
        gone = [i for i, c in zip(gone, outlines.contrast(gone), strict=True) if c >= cfg.lines_glare_share * lines]
    wide = find_discs(score, POINTS_UV[gone], reach=cfg.disc_reach_gone, px=S)[1] if gone else []
    seen = {i: "." for i, w in zip(gone, wide, strict=True) if w < cfg.outline_gone_share * median}
    # (come: not beside a known piece that does not plainly stand on its own point; that piece, moved part-way
    # towards it, is what is seen: e.g. a rook set down half-way between h0 and h1 read as a second piece)
    seen.update({i: _ink_letter(reading, i, cfg=cfg) for i in doubt if squares[i] == "."
                 and disc[i] > cfg.outline_plain * median
                 and all(disc[k] > cfg.outline_plain * median for k in neighbours(i) if squares[k] in _CASED)})
    # (and its disc on the point, the camera's parallax removed: under 0.4 off it, where the tracker says a piece
    # stands between two points; e.g. the horse left between g7 and g8, 0.54 off g8, reads plainly at g8
    # by ink and by an outline within 0.3; a cannon set right on a7 lay 0.30 off it)
    came = [i for i in doubt if i in unsure_of and disc[i] > cfg.outline_plain * median
            and float(np.hypot(*_disc_offset(score, i, standing, cfg=cfg))) < cfg.plainly_on_within]
    if len(came) == 1:  # (two: the one piece cannot stand on both)
        c = came[0]
        seen[c] = unsure_of[c]
        # and the point it was between it and a neighbour is empty (e.g. the cannon b7-a7 reported between
        # the two, b7's cannon marks reading as ink)
        seen.update({k: "." for k in neighbours(c) if squares[k] == "?" and unsure_of.get(k) == unsure_of[c]})
    if len(seen) > cfg.plainly_most:
        return {}, doubt
    return seen, [i for i in doubt if i not in seen]


def as_plainly_seen(squares: str, seen: dict[int, str], reading: PointReading, cfg: TrackerConfig = DEFAULTS) -> str:
    """`squares` with the points of `seen` set to what they show; where exactly one known piece is gone and one
    piece stands where none was known, of its colour or of a colour unsure, that piece went there (a move missed):
    it keeps its letter."""
    out = list(squares)
    for i, c in seen.items():
        out[i] = c
    gone = [i for i, c in seen.items() if c == "."]
    come = [i for i, c in seen.items() if c != "." and squares[i] == "."]
    if len(gone) == 1 and len(come) == 1:
        colour = _sure_colour(reading, come[0], cfg=cfg)
        if colour is None or colour == squares[gone[0]].isupper():
            out[come[0]] = squares[gone[0]]
    return "".join(out)
