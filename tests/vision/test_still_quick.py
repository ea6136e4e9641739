"""The quick still board: BoardStable before `stable_us` only where what the board shows is clear (one move, read
plainly, nothing else changed), and nothing changed where it is not."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from xqarb.vision.frames import _pt
from xqarb.vision.grid import point_index
from xqarb.vision.occupancy import PointReading, S
from xqarb.vision.settings import DEFAULTS
from xqarb.vision.squares import START_SQUARES
from xqarb.vision.still_clear import unclear

H2, E2 = point_index("h2"), point_index("e2")
AFTER = "".join("." if i == H2 else "C" if i == E2 else c for i, c in enumerate(START_SQUARES))
VIEW = (int(10.5 * S), int(11.5 * S))  # the canonical view's size (rows, columns): the board and its margin


def _reading(squares: str) -> PointReading:
    """Ink read plainly: 1 on a piece, 0 elsewhere; red 1 / 0 by its side."""
    occ = np.array([0.0 if c == "." else 1.0 for c in squares])
    red = np.array([1.0 if c.isupper() else 0.0 for c in squares])
    return PointReading(occupied=occ, red=red, offset=np.zeros((90, 2)), density=occ * 0.3, redness=red)


def _changed(*points: int, radius: float = 0.6) -> np.ndarray:
    """A change map with a piece-sized change around each of `points` (spacings), nothing elsewhere."""
    m = np.zeros(VIEW, np.float32)
    yy, xx = np.mgrid[: VIEW[0], : VIEW[1]]
    for p in points:
        x, y = _pt(p)
        m[np.hypot(xx - x, yy - y) < radius * S] = 1.0
    return m


def _unclear(squares: str = AFTER, placed: list[int] | None = None, touched: bool = False,
             reading: PointReading | None = None, changed: np.ndarray | None = None) -> str | None:
    return unclear(START_SQUARES, squares, [E2] if placed is None else placed, touched,
                   reading or _reading(AFTER), _reading(START_SQUARES),
                   _changed(H2, E2) if changed is None else changed)


def test_one_move_read_plainly_with_nothing_else_changed_is_clear() -> None:
    assert _unclear() is None


def test_a_point_unsure_anywhere_waits() -> None:
    sq = AFTER[:4] + "?" + AFTER[5:]
    assert _unclear(sq) == "a point unsure"


def test_a_piece_touched_or_between_two_points_waits() -> None:
    assert _unclear(touched=True) == "a piece touched or between two points"


def test_a_board_in_no_single_moves_shape_waits() -> None:
    # a piece gone and none come (a hand still holding it), and a piece come from nowhere
    gone = "".join("." if i == H2 else c for i, c in enumerate(START_SQUARES))
    assert _unclear(gone, placed=[]) == "no single move"
    # two pieces moved: the cannon h2-e2 and a soldier a3-a4
    a3, a4 = point_index("a3"), point_index("a4")
    two = "".join("." if i == a3 else "P" if i == a4 else c for i, c in enumerate(AFTER))
    assert _unclear(two) == "no single move"


def test_the_point_left_that_still_reads_as_a_piece_waits() -> None:
    r = _reading(AFTER)
    occ = r.occupied.copy()
    occ[H2] = 0.6
    assert _unclear(reading=replace(r, occupied=occ, density=np.where(np.arange(90) == H2, 0.2, r.density))) == (
        "the point left still shows ink")


def test_the_point_left_whose_printed_marks_read_faintly_is_clear() -> None:
    """A cannon's point keeps its printed marks once the piece is gone: 0.42 occupied, its ink down to 46 % of
    the piece's (the e2e bench's first move, at 4 frames a second)."""
    r = _reading(AFTER)
    occ, dens = r.occupied.copy(), r.density.copy()
    occ[H2], dens[H2] = 0.42, 0.14
    assert _unclear(reading=replace(r, occupied=occ, density=dens)) is None


def test_a_piece_set_down_that_reads_faintly_or_of_no_sure_colour_waits() -> None:
    r = _reading(AFTER)
    occ = r.occupied.copy()
    occ[E2] = 0.7
    assert _unclear(reading=replace(r, occupied=occ)) == "the piece set down reads faintly"
    red = r.red.copy()
    red[E2] = 0.5
    assert _unclear(reading=replace(r, red=red)) == "the piece set down is of no sure colour"


def test_a_change_away_from_the_moves_two_points_waits() -> None:
    # fingertips resting at e0, two spacings below where the cannon was set down
    assert _unclear(changed=_changed(H2, E2, point_index("e0"), radius=0.3)).startswith(
        "the view changed away from the move")
    # a piece's disc with its shadow and the change map's blur stays within `quick_reach`
    assert DEFAULTS.quick_reach > 0.95
    assert _unclear(changed=_changed(H2, E2, radius=0.95)) is None


# ---------------------------------------------------------------------------------------------------------------
# the tracker over a rendered game: the bench's first moves (shipped game, easy scene, 2 frames a second)


@pytest.fixture(scope="module")
def bench_frames():
    from xqarb.demo import shipped_games
    from xqarb.vision.render import render_game

    game = shipped_games()[0]
    moves = game["iccs"][:3]  # h2e2 (inside the board), h9g7 and h0g2 (from an edge point)
    frames = list(render_game(game["start_fen"], moves, seed=7, fps=2, difficulty="easy", misplace_rate=0.0,
                              nudge_rate=0.0))
    return frames, moves, game["start_fen"]


def _still_rule(frames, tracker, scale: float = 1.0) -> tuple[dict[int, float], list[str], list[str]]:
    """Per move (ply), seconds from its first still frame without the hand to its BoardStable; the squares of
    every BoardStable; the types of every observation. `scale`: the frames' times multiplied by it."""
    state = tracker.initial()
    first: dict[int, int] = {}
    waits: dict[int, float] = {}
    boards, types = [], []
    for f in frames:
        t_us = round(f.t_us * scale)
        if f.truth.stable and not f.truth.hand_present:
            first.setdefault(f.truth.ply, t_us)
        state, obs = tracker.step(state, f.image, t_us)
        for o in obs:
            types.append(o.type)
            if o.type == "BoardStable":
                boards.append(o.fields["squares"])
                waits.setdefault(f.truth.ply, round((t_us - first[f.truth.ply]) / 1e6, 3))
    return waits, boards, types


def test_a_move_from_an_edge_point_is_taken_at_the_second_still_frame(bench_frames) -> None:
    """A piece taken off an edge point leaves a change that touches the view's edge: read as an arm until still
    for `hand_rest_us`, it kept the board waiting a frame more than a move inside the board (1.0 s against 0.5 s
    at 2 frames a second). With the quick still board every clear move waits two still frames, 0.5 s."""
    from xqarb.referee.rules import Move, Position
    from xqarb.vision.tracker import Tracker, TrackerConfig

    frames, moves, fen = bench_frames
    quick, boards, types = _still_rule(frames, Tracker())
    full, full_boards, full_types = _still_rule(frames, Tracker(TrackerConfig(quick_stable_us=10**9)))
    assert full == {0: 1.0, 1: 0.5, 2: 1.0, 3: 1.0}
    assert quick == {0: 1.0, 1: 0.5, 2: 0.5, 3: 0.5}
    # the same still boards, the true positions, and nothing else reported
    p = Position.from_fen(fen)
    truth = [p.squares()]
    for mv in moves:
        p = p.play(Move.parse(mv))
        truth.append(p.squares())
    assert boards == full_boards == truth
    assert types == full_types


def test_an_early_reading_not_clear_changes_nothing(bench_frames, monkeypatch) -> None:
    """Read early and found unclear, the still board is read again at the full still time from the state as it
    was: the observations are those of the tracker without the quick still board, at the same frames."""
    from xqarb.vision import still_board
    from xqarb.vision.tracker import Tracker, TrackerConfig

    frames, _, _ = bench_frames
    tried: list[int] = []

    def never(*args, **kw) -> str:
        tried.append(1)
        return "not clear"

    monkeypatch.setattr(still_board, "unclear", never)
    waits, boards, types = _still_rule(frames, Tracker())
    assert len(tried) == 2  # the two moves from an edge point were read early
    assert (waits, boards, types) == _still_rule(frames, Tracker(TrackerConfig(quick_stable_us=10**9)))


def test_frames_a_little_early_end_the_wait_on_the_frame_meant(bench_frames) -> None:
    """Frames' capture times stray from their rate (a loaded sender): frames 480 ms apart instead of 500 ended the
    resting hand's 0.5 s and the quick still board's one frame later, by 20 ms (1.0 s instead of 0.5 s). Met
    `frame_jitter_us` early, both end on the second still frame."""
    from xqarb.vision.tracker import Tracker, TrackerConfig

    frames, _, _ = bench_frames
    waits, _, _ = _still_rule(frames, Tracker(), scale=0.96)
    assert waits == {0: 0.96, 1: 0.48, 2: 0.48, 3: 0.48}
    late, _, _ = _still_rule(frames, Tracker(TrackerConfig(frame_jitter_us=0)), scale=0.96)
    assert late == {0: 0.96, 1: 0.48, 2: 0.96, 3: 0.96}
