"""Per-point evidence on a still board against the last one: how much each point changed, its ink (occupancy,
colour, the peak's offset), the pieces' round outlines (circle scores) and the printed lines a point shows. Each
function answers one question about one point or a pair of neighbours. Pure: arrays in, values out."""

from __future__ import annotations

import cv2
import numpy as np

from .detect import circle_score, find_discs, fit_parallax, parallax_centres
from .frames import _change_map, _pt
from .grid import POINTS_UV, neighbours
from .occupancy import POINTS_PX, PointReading, S, windows
from .settings import DEFAULTS, TrackerConfig
from .squares import _CASED


class Outlines:
    """The circle scores (detect's `circle_score`, 43 ms a view) of a still board's view and of the last one: each
    computed once, when a rule first asks for it (most snapshots need neither). The last one's may be given (carried
    in the tracker's state from when its view was current)."""

    def __init__(self, view: np.ndarray, ref_view: np.ndarray | None, ref_score: np.ndarray | None = None,
                 cfg: TrackerConfig = DEFAULTS) -> None:
        self._view, self._ref_view, self._cfg = view, ref_view, cfg
        self._score: np.ndarray | None = None
        self._ref_score = ref_score
        self._discs: np.ndarray | None = None
        self._ref_discs: np.ndarray | None = None
        self._rise: np.ndarray | None = None
        self._grey: np.ndarray | None = None

    def view(self) -> np.ndarray:
        if self._score is None:
            self._score = circle_score(self._view, px=S)
        return self._score

    def ref(self) -> np.ndarray:
        if self._ref_score is None:
            if self._ref_view is None:
                raise ValueError("no last still board to score")
            self._ref_score = circle_score(self._ref_view, px=S)
        return self._ref_score

    def discs(self) -> np.ndarray:
        """Per point, the view's strongest circle within 0.3 of it (_point_discs)."""
        if self._discs is None:
            self._discs = _point_discs(self.view(), cfg=self._cfg)
        return self._discs

    def ref_discs(self) -> np.ndarray:
        """Per point, the last still board's strongest circle within 0.3 of it."""
        if self._ref_discs is None:
            self._ref_discs = _point_discs(self.ref(), cfg=self._cfg)
        return self._ref_discs

    def rise(self) -> np.ndarray:
        """How much each point's round outline rose since the last still board."""
        if self._rise is None:
            self._rise = self.discs() - self.ref_discs()
        return self._rise

    def computed(self) -> np.ndarray | None:
        """The view's score where a rule asked for it, else None."""
        return self._score

    def contrast(self, points: list[int]) -> np.ndarray:
        """Per point of `points`, the spread of the view's grey within a quarter spacing of it (its 90th less its 10th
        percentile): an empty point shows its printed lines there, a piece its ink; under glare neither does."""
        if self._grey is None:  # made once: plainly_seen asks for the empty points and then the gone ones
            self._grey = cv2.cvtColor(self._view, cv2.COLOR_BGR2GRAY)
        grey = self._grey
        r = S // 4
        out = []
        for i in points:
            x, y = _pt(i)
            w = grey[max(0, y - r):y + r + 1, max(0, x - r):x + r + 1]
            out.append(float(np.percentile(w, 90) - np.percentile(w, 10)))
        return np.array(out)


def _between(off_i: np.ndarray, off_j: np.ndarray, d: np.ndarray, parallax: np.ndarray, cfg: TrackerConfig) -> bool:
    """The ink peaks followed from neighbouring points i and j (offsets, spacings; `d` from i to j) are one piece
    standing between them: both peaks found the same centre (the two offsets together about a spacing; the camera's
    parallax shifts both the same way, so it cancels there), and that centre, parallax removed, lies at least
    `misaligned_from` from each point (a piece set down carelessly stands up to ~0.3 off its point). (The two peaks
    stop short of a piece half-way, so their sum falls to 0.6-0.7 spacing for some: requiring 0.85 lost 3 of 13
    pieces half-way on e.g. to drop a few false reports at corners.)"""
    pi, pj = float(np.dot(off_i, d)), float(np.dot(off_j, -d))
    if not cfg.peaks_sum_least <= pi + pj <= cfg.peaks_sum_most:
        return False
    t = (pi - pj + 1.0) / 2.0 - float(np.dot(parallax, d))  # the centre's place from i (0) to j (1)
    margin = cfg.misaligned_from - cfg.found_to  # the peaks are found to a pixel or two (~0.05 spacing)
    return margin <= t <= 1.0 - margin


def _line_arms(i: int) -> list[tuple[int, int]]:
    """The directions (across, down the view) in which printed lines leave point i: none off the board's edge,
    and no file line across the river but on the outer files."""
    f, row = i % 9, i // 9  # row 0 is rank 9, the top of the view
    arms = [(-1, 0)] if f > 0 else []
    if f < 8:
        arms.append((1, 0))
    if row > 0 and not (row == 5 and f not in (0, 8)):
        arms.append((0, -1))
    if row < 9 and not (row == 4 and f not in (0, 8)):
        arms.append((0, 1))
    return arms


def _line_contrast(grey: np.ndarray, i: int, cfg: TrackerConfig = DEFAULTS,
                   at: tuple[float, float] | None = None) -> float:
    """How plainly point i shows the board's printed lines in the view `grey`: the wood beside its lines (22.5
    degrees off each, clear of the palace's diagonals) less the lines themselves, 0.22-0.46 of a spacing out, where a
    piece on the point covers them and a lifted one leaves them bare (median grey levels; about 0 where a piece,
    a hand or glare covers the point). `at`: where the view shows the point's printed crossing, where not at the
    point (a view through the pieces' top faces, `tops.py`)."""
    x0, y0 = POINTS_PX[i] if at is None else at
    h, w = grey.shape[:2]
    on, off = [], []
    c, s = float(np.cos(np.pi / 8)), float(np.sin(np.pi / 8))
    for r in np.arange(cfg.lines_from, cfg.lines_to, cfg.lines_step) * S:
        for dx, dy in _line_arms(i):
            on.append(grey[min(h - 1, round(y0 + dy * r)), min(w - 1, round(x0 + dx * r))])
            for sn in (s, -s):
                ox, oy = dx * c - dy * sn, dx * sn + dy * c
                off.append(grey[min(h - 1, round(y0 + oy * r)), min(w - 1, round(x0 + ox * r))])
    return float(np.median(off) - np.median(on))


def _lines_hidden(contrast: float, bare: list[float], share: float, cfg: TrackerConfig = DEFAULTS) -> bool:
    """A point whose printed lines show with `contrast` (`_line_contrast`) has them hidden: under `share` of the
    median of the empty points clear of the hand (`bare`). With fewer than five such points there is no typical to
    judge by (a hand over nearly the whole board), so nothing counts as hidden."""
    if len(bare) < cfg.lines_least_bare:
        return False
    return contrast < share * float(np.median(bare))


def _on_edge(i: int) -> bool:
    """Point i lies on the outer lines of the board (file a or i, rank 0 or 9)."""
    return i % 9 in (0, 8) or i // 9 in (0, 9)


def _sure_colour(reading: PointReading, i: int, cfg: TrackerConfig = DEFAULTS) -> bool | None:
    """True / False where point i's ink is surely red / dark, None where unsure."""
    red = reading.red[i]
    return True if red > cfg.red_sure else False if red < cfg.dark_sure else None


def _colour_turned(known: str, i: int, reading: PointReading, ref_reading: PointReading,
                   cfg: TrackerConfig = DEFAULTS) -> bool:
    """Point i's piece read surely its own side's colour on the last still board and surely the other side's now
    (another piece took its place)."""
    if known[i] not in _CASED:
        return False
    red = known[i].isupper()
    return _sure_colour(ref_reading, i, cfg=cfg) == red and _sure_colour(reading, i, cfg=cfg) == (not red)


def _ink_order(reading: PointReading, squares: str) -> float:
    """The share of (occupied point, empty point) pairs of `squares` whose inks read in that order: how much the
    board looks like that position's occupancy, whatever the reading's scale (1.0: every piece out-inks every
    empty point; drawn boards two and four plies from the start read 0.94 and 0.93 for the start, over the
    `start_order` that takes a first board for the start: a new game's start is told from the last game's board
    by comparing the two)."""
    want = np.array([c != "." for c in squares])
    if want.all() or not want.any():
        return 0.0
    return float(np.mean(reading.density[want][:, None] > reading.density[~want][None, :]))


def _ranks(values: np.ndarray) -> np.ndarray:
    """Each value's rank among `values` (0 the least; equal values share their mean rank, so that a cue that reads
    the same everywhere, e.g. no ink at all, orders nothing)."""
    v = np.asarray(values, np.float64)
    return (v[:, None] > v[None, :]).sum(axis=1) + ((v[:, None] == v[None, :]).sum(axis=1) - 1) / 2.0


def _joint_order(want: np.ndarray, *cues: np.ndarray) -> float:
    """The share of (wanted point, other point) pairs whose summed ranks over the `cues` (each larger where a piece
    stands) are in that order: where one cue fails (a small blurred picture's characters wash out; a thin paper
    print's lines show faintly; pieces' outlines merge on a busy top face), the others still order the points, as
    a cue that fails ranks the points by chance and shifts every sum alike."""
    if want.all() or not want.any():
        return 0.0
    joint = np.sum([_ranks(c) for c in cues], axis=0)
    return float(np.mean(joint[want][:, None] > joint[~want][None, :]))


def _lines_shown(view: np.ndarray, crossings: np.ndarray, cfg: TrackerConfig = DEFAULTS) -> np.ndarray:
    """Per point, how plainly it shows the board's printed lines (`_line_contrast`) in the canonical `view`, where
    the view shows each point's crossing (`crossings`, 90 x 2 pixels): a piece standing on a point covers its
    lines; the lines are bold enough to show on a picture too small or blurred for the pieces' characters."""
    grey = cv2.cvtColor(view, cv2.COLOR_BGR2GRAY)
    return np.array([_line_contrast(grey, i, cfg=cfg, at=(float(crossings[i][0]), float(crossings[i][1])))
                     for i in range(90)])


def _left_by_a_piece(i: int, ref_reading: PointReading | None, reading: PointReading,
                     cfg: TrackerConfig = DEFAULTS) -> bool:
    """Point i showed a piece on the last still board and has lost most of its ink: a piece left it."""
    return (ref_reading is not None and ref_reading.occupied[i] > cfg.ink_piece
            and reading.density[i] < cfg.ink_lost * ref_reading.density[i])


def _stands_on(outlines: Outlines, i: int, pieces: list[int], *, before: bool = False, within: float | None = None,
               cfg: TrackerConfig = DEFAULTS) -> bool:
    """A piece's round outline stands plainly on point i: as strong as the standing `pieces`' (`_outline_gone`
    not), centred within `within` of the point (`stands_within` where not given: where a piece set down carelessly
    or touched stands). `before`: on the last still board's view instead of this one's."""
    within = cfg.stands_within if within is None else within
    discs, score = (outlines.ref_discs(), outlines.ref()) if before else (outlines.discs(), outlines.view())
    return (not _outline_gone(discs, i, pieces, cfg=cfg)
            and float(np.hypot(*_disc_offset(score, i, pieces, cfg=cfg))) < within)


def _outline_moved(outlines: Outlines, i: int, pieces: list[int], cfg: TrackerConfig) -> bool:
    """The round outline nearest point i moved since the last still board by `touch_moved` of a spacing or more, or
    fell by `lift_outline_fall` (a piece turned or tilted by the hand): the piece there was touched."""
    now, then = _disc_offset(outlines.view(), i, pieces, cfg=cfg), _disc_offset(outlines.ref(), i, pieces, cfg=cfg)
    # (an outline found most of a spacing off is a neighbour's, stronger than this piece's own: a piece set down
    # beside it, e.g. the black cannon b7-b6 beside the pawn a6, whose nearest outline was then
    # found 0.92 off towards b6, read as the pawn touched. A piece touched stays on its point; one moved that far is
    # half-way, which is told apart elsewhere)
    own = max(float(np.hypot(*now)), float(np.hypot(*then))) < cfg.outline_own
    return ((own and float(np.hypot(*(now - then))) >= cfg.touch_moved)
            or float(outlines.rise()[i]) <= -cfg.lift_outline_fall)


def _plain_disc_near(score: np.ndarray, points: list[int], discs: np.ndarray, standing: list[int],
                     share: float | None = None, cfg: TrackerConfig = DEFAULTS) -> bool:
    """A round outline as plain as the standing pieces' (`share` of their median, `discs` per point) is centred within
    0.7 of one of `points` (a piece half-way between two points stands 0.5 from each): where none is, the strongest
    circle nearby is the board's own print or its noise, and where it lies tells nothing. (`share`: `outline_plain`
    where not given.)"""
    share = cfg.outline_plain if share is None else share
    _, near = find_discs(score, POINTS_UV[points], reach=cfg.disc_reach_near, px=S)
    return float(near.max()) >= share * float(np.median(discs[standing]))


def _half_way_between(score: np.ndarray, a: int, b: int, pieces: list[int], cfg: TrackerConfig) -> bool:
    """A disc stands half-way between the neighbouring points a and b: seen from each, `misaligned_from` or more off
    towards the other (from one alone, a disc set down 0.3 off the other point would do)."""
    return ((_half_way_towards(score, a, pieces, cfg) == b and _half_way_towards(score, b, pieces, cfg) == a)
            or _disc_at_middle(score, a, b, pieces, cfg))


def _disc_at_middle(score: np.ndarray, a: int, b: int, pieces: list[int], cfg: TrackerConfig) -> bool:
    """A round outline as plain as the standing `pieces`' (0.8 of their median) is centred half-way between the
    neighbouring points a and b: looked for within 0.3 of their midpoint, the camera's parallax removed, and found
    `misaligned_from` or more off each, under 0.2 to the side of the line. (Seen from each point alone, the strongest
    circle within 0.7 may be another's: e.g. the rook i8-d8 left half-way towards d7, its disc
    0.61 at 0.48 from d8; from d7 a stronger circle of the board's print 0.55 towards d6 was found, and the rook
    was read as set down on d8.)"""
    if len(pieces) < cfg.least_standing:
        return False
    found, plain = find_discs(score, POINTS_UV[pieces], reach=cfg.disc_reach_on, px=S)
    par = fit_parallax(POINTS_UV[pieces], found)
    mid = (POINTS_UV[a] + POINTS_UV[b]) / 2.0
    seen = parallax_centres(mid[None], par)[0]
    centre, value = find_discs(score, seen[None], reach=cfg.disc_reach_on, px=S)
    # (and stronger there than on either point: the shoulder of a disc standing on a point also peaks in the window)
    _, on_points = find_discs(score, POINTS_UV[[a, b]] + (seen - mid), reach=cfg.disc_reach_point, px=S)
    off = centre[0] - (seen - mid) - POINTS_UV[a]  # the disc's foot, from a
    d = POINTS_UV[b] - POINTS_UV[a]
    along = float(np.dot(off, d)) / float(np.dot(d, d))
    across = abs(float(off[0] * d[1] - off[1] * d[0])) / float(np.hypot(*d))
    margin = cfg.misaligned_from - cfg.found_to  # (as `_between`: found to a pixel or two)
    return (margin <= along <= 1.0 - margin and across < cfg.middle_across and float(value[0]) > float(on_points.max())
            and float(value[0]) >= cfg.outline_plain * float(np.median(plain)))


def _half_way_towards(score: np.ndarray, i: int, pieces: list[int], cfg: TrackerConfig) -> int | None:
    """The neighbour of point i that the disc nearest i stands half-way towards: its centre (`_disc_offset`)
    `misaligned_from` or more off i along the line to it, and under 0.3 to the side of that line; None where the
    disc stands on i or by neither point."""
    off = _disc_offset(score, i, pieces, cfg=cfg)
    j = _towards(i, off, cfg=cfg) if float(np.hypot(*off)) >= cfg.misaligned_from else None
    if j is None:
        return None
    # (and on the line between the two: a disc found 0.3 or more to the side of it stands by neither, it is another
    # point's; e.g. the red horse c2-d4, the disc found 0.69 off d4, 0.41 across the line to d3,
    # read as the horse between d4 and d3)
    d = POINTS_UV[j] - POINTS_UV[i]
    across = abs(float(off[0] * d[1] - off[1] * d[0]))
    return j if across < cfg.towards_across else None


def _disc_offset(score: np.ndarray, i: int, pieces: list[int], cfg: TrackerConfig = DEFAULTS) -> np.ndarray:
    """How far off point i the round outline nearest it is centred (board-plane spacings, looked for within 0.7 in
    the view's circle score `score`), the camera's parallax removed: the top faces of the standing `pieces` are seen
    displaced from their points, more the further they stand from the middle of the view (a homothety fitted to
    their outlines)."""
    found, _ = find_discs(score, POINTS_UV[pieces], reach=cfg.disc_reach_on, px=S)
    seen = parallax_centres(POINTS_UV[i:i + 1], fit_parallax(POINTS_UV[pieces], found))[0]
    centre, _ = find_discs(score, POINTS_UV[i:i + 1], reach=cfg.disc_reach_near, px=S)
    return centre[0] - seen


def _outline_gone(disc: np.ndarray, i: int, pieces: list[int], cfg: TrackerConfig = DEFAULTS) -> bool:
    """No piece's round outline is centred near point i any more: its score is under half the median of the
    pieces still standing (`pieces`; at least five to judge by). Measured on e.g. standing pieces 0.59-0.79,
    empty points up to 0.52, the emptied pawn point 0.23."""
    if len(pieces) < cfg.least_standing:
        return False
    return bool(disc[i] < cfg.outline_gone_share * float(np.median(disc[pieces])))


def _outline_scores(view: np.ndarray, cfg: TrackerConfig = DEFAULTS) -> np.ndarray:
    """Per point, how much a piece-sized circle is centred near it in the canonical view (detect's circle score;
    a piece's round outline shows where its ink does not)."""
    return _point_discs(circle_score(view, px=S), cfg=cfg)


def _point_discs(score: np.ndarray, cfg: TrackerConfig = DEFAULTS) -> np.ndarray:
    """Per point, the strongest circle in a view's circle score within 0.3 spacing of it (the top faces stand a
    little off their points)."""
    _, disc = find_discs(score, POINTS_UV, reach=cfg.disc_reach_on, px=S)
    return disc


def _disc_rise(score: np.ndarray, ref_score: np.ndarray, points: list[int],
               cfg: TrackerConfig = DEFAULTS) -> np.ndarray:
    """How much the strongest circle within 0.7 of each of `points` rose since the last still board (a disc set
    down half-way between two points lies 0.5 from each)."""
    _, now = find_discs(score, POINTS_UV[points], reach=cfg.disc_reach_near, px=S)
    _, was = find_discs(ref_score, POINTS_UV[points], reach=cfg.disc_reach_near, px=S)
    return now - was


def _outline_left(known: str, outlines: Outlines, at_least: float | None = None,
                  cfg: TrackerConfig = DEFAULTS) -> int | None:
    """The one piece whose round outline left its point: fell by `at_least` (of a circle score whose standing pieces
    reach about 0.9) and by twice as much as any other piece's, and gone (`_outline_gone`). A board in full glare
    washes the characters out and a move changes its points under the change level; the pieces' rims still show
    (e.g. the black cannon b7-c7 changed b7 0.022 and c7 0.047 at the level 0.09; its outline fell 0.45 at
    b7 and rose 0.58 at c7, elsewhere under 0.11; the red rook b7-b3, b7 unchanged over the level). (`at_least`:
    `glare_outline_change` where not given.)"""
    at_least = cfg.glare_outline_change if at_least is None else at_least
    pieces = [i for i in range(90) if known[i] in _CASED]
    if len(pieces) < cfg.least_standing_many:
        return None
    rise = outlines.rise()
    fell = sorted(pieces, key=lambda i: rise[i])
    src = fell[0]
    if -rise[src] < at_least or -rise[src] < -cfg.clear_margin * rise[fell[1]]:
        return None
    return src if _outline_gone(outlines.discs(), src, fell[1:], cfg=cfg) else None


def _outline_came(known: str, outlines: Outlines, at_least: float | None = None,
                  cfg: TrackerConfig = DEFAULTS) -> int | None:
    """The one empty point where a round outline came and stands (risen by `at_least` and twice as much as at any
    other empty point; see `_outline_left`)."""
    at_least = cfg.glare_outline_change if at_least is None else at_least
    rise = outlines.rise()
    came = sorted((i for i in range(90) if known[i] == "."), key=lambda i: -rise[i])
    pieces = [i for i in range(90) if known[i] in _CASED]
    if len(came) < 2 or len(pieces) < cfg.least_standing_many:
        return None
    dst = came[0]
    if rise[dst] < at_least or rise[dst] < cfg.clear_margin * rise[came[1]]:
        return None
    return dst if _stands_on(outlines, dst, pieces, cfg=cfg) else None


def _pair_emptied(known: str, taken: set[int], occ: np.ndarray, dens: np.ndarray,
                  ref_dens: np.ndarray, cfg: TrackerConfig = DEFAULTS) -> tuple[int, int] | None:
    """The one pair of neighbouring unsure points (a piece left between them) that both read under half a piece now,
    one of them having lost half its ink or more; None where no pair or several did."""
    pairs = [(a, b) for a in range(90) for b in neighbours(a) if a < b and known[a] == known[b] == "?"
             and a not in taken and b not in taken and occ[a] < cfg.ink_piece and occ[b] < cfg.ink_piece
             and min(dens[a] / max(ref_dens[a], cfg.density_floor),
                     dens[b] / max(ref_dens[b], cfg.density_floor)) < cfg.ink_lost]
    return pairs[0] if len(pairs) == 1 else None


def _pair_left(known: str, taken: set[int], score: np.ndarray, ref_score: np.ndarray,
               cfg: TrackerConfig = DEFAULTS) -> tuple[int, int] | None:
    """The two neighbouring unsure points (a piece left between them) whose disc left: the strongest circles near
    the two (within 0.7, as a disc half-way lies 0.5 from each) fell by 0.1 or more together, and at no other pair
    by half as much (a disc half-way is found weakly from both points: e.g. the rook between a3 and b3
    left, 0.04 and 0.09). None where no pair's did."""
    pairs = [(a, b) for a in range(90) for b in neighbours(a) if a < b and known[a] == known[b] == "?"
             and a not in taken and b not in taken]
    if not pairs:
        return None
    points = sorted({k for pair in pairs for k in pair})
    fell = dict(zip(points, (-_disc_rise(score, ref_score, points, cfg=cfg)).tolist(), strict=True))
    by = sorted(pairs, key=lambda p: -(fell[p[0]] + fell[p[1]]))
    best = fell[by[0][0]] + fell[by[0][1]]
    if best < cfg.pair_fall or (len(by) > 1 and cfg.clear_margin * (fell[by[1][0]] + fell[by[1][1]]) > best):
        return None
    return by[0]


def _clearly_most(values: np.ndarray, at_least: float, cfg: TrackerConfig = DEFAULTS) -> int | None:
    """The point whose value is largest where it is at least `at_least` and more than twice every other point's."""
    order = np.argsort(-values, kind="stable")
    best = int(order[0])
    if values[best] < at_least or cfg.clear_margin * float(values[order[1]]) > float(values[best]):
        return None
    return best


def _implausible(reading: PointReading, cfg: TrackerConfig = DEFAULTS) -> str | None:
    """Why a first reading cannot be a Xiangqi position (more than 32 pieces, far more than 16 of a colour)."""
    occ = reading.occupied > cfg.ink_piece
    red = occ & (reading.red > cfg.red_even)
    black = occ & (reading.red <= cfg.red_even)
    if occ.sum() > cfg.most_pieces:
        return f"{int(occ.sum())} points read as pieces (at most 32)"
    # colours are read less surely than occupancy: only a clear excess counts
    if red.sum() > cfg.most_of_a_side or black.sum() > cfg.most_of_a_side:
        return f"{int(red.sum())} red and {int(black.sum())} black pieces read (at most 16 each)"
    return None


def _ink_letter(reading: PointReading, i: int, cfg: TrackerConfig = DEFAULTS) -> str:
    t = reading.types[i]
    red = reading.red[i]
    if t is not None and reading.type_conf[i] > cfg.type_sure and t.isupper() == (red > cfg.red_even):
        return t
    if red > cfg.red_sure:
        return "X"
    if red < cfg.dark_sure:
        return "x"
    return "?"


def _towards(i: int, off: np.ndarray, cfg: TrackerConfig = DEFAULTS) -> int | None:
    """The neighbour of point i in the direction of `off` (board-plane spacings: +u = towards file i, +v down)."""
    best, best_cos = None, cfg.towards_cos  # within 41 degrees of a line: the four neighbours lie 90 degrees apart
    for j in neighbours(i):
        d = POINTS_UV[j] - POINTS_UV[i]
        cos = float(np.dot(d, off) / (np.linalg.norm(off) + 1e-9))
        if cos > best_cos:
            best, best_cos = j, cos
    return best


def _change_level(change: np.ndarray, cfg: TrackerConfig) -> float:
    """How much a point must change to count as changed: the configured level, or three times the board's typical
    change where the light changed the whole board."""
    return max(cfg.change_level, cfg.typical_change_times * float(np.median(change)))


def _change_disc(cfg: TrackerConfig = DEFAULTS) -> tuple[int, np.ndarray]:
    """(radius in pixels, the disc's mask over a (2r+1)-square window): where a point's change is measured
    (`change_disc` spacings about it)."""
    r = round(cfg.change_disc * S)
    yy, xx = np.mgrid[-r:r + 1, -r:r + 1]
    return r, (xx ** 2 + yy ** 2) <= r * r


def _point_change(ref: np.ndarray, view: np.ndarray, cfg: TrackerConfig = DEFAULTS) -> np.ndarray:
    """Per point: mean normalised appearance change within the disc (0.4 spacing)."""
    d = _change_map(ref, view)
    r, disc = _change_disc(cfg)
    pts = np.array([_pt(i) for i in range(90)])
    return windows(d, pts, r)[:, disc].mean(axis=1).astype(np.float64)
