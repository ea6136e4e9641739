"""Moves that the inks misread, told physically: a move changes two points (the rest of the board quiet but for the
ends' own neighbours, by the set-down piece's shadow and lean); a point no piece can reach changes only by the light,
and a neighbour that changed alike with it is lit too; a piece standing still reads no more surely than before; a
piece the rules place where its mover cannot go stands half-way towards the point its outline leans to."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gamecheck import check_hard_window
from test_tracker_interpret import _interpret, _moved, _reading

from xqarb.vision.grid import point_index
from xqarb.vision.joint_reading import joint_reading
from xqarb.vision.move_checks import _reached_by_any, _where_it_could_go
from xqarb.vision.occupancy import PointReading
from xqarb.vision.settings import DEFAULTS
from xqarb.vision.tracker import START_SQUARES


def _change(**points: float) -> np.ndarray:
    change = np.full(90, 0.02)
    for name, v in points.items():
        change[point_index(name)] = v
    return change


def test_a_horse_whose_point_still_reads_inked_went_where_only_its_move_changed_the_board() -> None:
    # The black horse b9-c7 on a paper print with plain discs: b9 still reads a piece (the board's marks under it),
    # with most of its ink; c7 reads none. Both changed over the level, the cannon b7 beside c7 about half as much
    # (the horse's shadow), nothing else. A touch reaches no point a horse's move away: the horse went there.
    # (changes 0.105, 0.093, 0.050 at the level 0.09, as on the board)
    known = START_SQUARES
    now = _reading(known, b9={"occupied": 0.97, "density": 0.25})
    squares, placed, nudged, misaligned = _interpret(known, {"b9": 0.19, "c7": 0.17, "b7": 0.09}, _reading(known), now)
    assert squares == _moved(known, "b9", "c7") and placed == [point_index("c7")], squares
    assert not nudged and not misaligned


def test_a_piece_touched_towards_its_neighbour_keeps_its_point() -> None:
    # The same inks where the changed empty point is the piece's neighbour (the cannon b7 pushed towards c7): a
    # touch reaches into the neighbour's disc; the cannon still reads with its ink, and stays.
    known = START_SQUARES
    now = _reading(known, b7={"occupied": 0.97, "density": 0.25})
    squares, placed, _, _ = _interpret(known, {"b7": 0.19, "c7": 0.17}, _reading(known), now)
    assert squares[point_index("b7")] == "c" and squares[point_index("c7")] == "." and placed == []


def test_a_neighbour_lit_alike_with_a_point_no_piece_can_reach_is_no_arrival() -> None:
    # The pawn c3-c4 while a patch of sun moved off d3 and d4: d4 (beside c4, where the pawn can go) changed 0.37
    # and read as ink, as did d3, where no piece on the board can go. d4 is the light's, not the pawn's other half.
    known = START_SQUARES
    c3, c4, d4 = point_index("c3"), point_index("c4"), point_index("d4")
    assert point_index("d3") not in _reached_by_any(known)
    lit = _change(c3=0.10, c4=0.12, d4=0.37, d3=0.37)
    assert _where_it_could_go(known, c3, [c4, d4], lit, 0.09) == [c4]
    # (where d3 did not change with it, d4 may be the other point of the pawn set down half-way: kept)
    alone = _change(c3=0.10, c4=0.12, d4=0.37)
    assert _where_it_could_go(known, c3, [c4, d4], alone, 0.09) == [c4, d4]


def test_an_arrival_where_no_piece_can_go_is_the_lights() -> None:
    # The black cannon h7 moved while a patch of sun left an empty point no piece can go to (changed 0.26, reading
    # a piece): no arrival there. One where some other piece could go is kept (the mover may have been misread).
    known = START_SQUARES
    h7, d8, b8 = point_index("h7"), point_index("d8"), point_index("b8")
    assert d8 not in _reached_by_any(known) and b8 in _reached_by_any(known)
    assert _where_it_could_go(known, h7, [d8], _change(d8=0.26), 0.09) == []
    assert _where_it_could_go(known, h7, [b8], _change(b8=0.26), 0.09) == [b8]


def test_a_piece_of_unknown_type_may_reach_anything_its_kinds_can() -> None:
    # a point left unsure ('?': a piece between two points) is read as any kind of piece of either side
    known = list(START_SQUARES)
    known[point_index("e4")] = "?"
    reached = _reached_by_any("".join(known))
    assert point_index("d4") in reached and point_index("e5") in reached and point_index("d8") not in reached


def test_a_piece_standing_still_reads_no_more_surely_than_before_unless_its_ink_rose() -> None:
    # The red pieces' characters wash out (the ink misses them; outlines and lines show them). The red pawn c3 went
    # to c4 and its tall body hides c3's printed lines: the cues fitted on the position before read c3 more surely a
    # piece than on the last still board (0.30). It is held there, and reads emptied; where its ink rose with the
    # change (another piece came), or no last board is known, the cues stand.
    squares = START_SQUARES
    piece = np.array([c != "." for c in squares])
    c3 = point_index("c3")
    rng = np.random.default_rng(3)
    discs = np.where(piece, 0.65, 0.45) + rng.normal(0, 0.03, 90)
    lines = np.where(piece, 5.0, 30.0) + rng.normal(0, 3, 90)
    dens = np.where(np.array([c.islower() for c in squares]), 0.3, 0.001)
    occ = np.where(dens > 0.1, 0.98, 0.01)
    changed = np.isin(np.arange(90), [c3])
    ref_occ = np.where(piece, 0.9, 0.05)
    ref_occ[c3] = 0.30

    def at_c3(density: float, ref_occupied: np.ndarray | None) -> float:
        d = dens.copy()
        d[c3] = density
        reading = PointReading(occ, np.full(90, 0.5), np.zeros((90, 2)), d, np.zeros(90))
        return float(joint_reading(reading, squares, lambda: discs, lambda: lines, changed=changed,
                                   ref_density=dens, ref_occupied=ref_occupied).occupied[c3])

    assert at_c3(0.001, None) > DEFAULTS.ink_piece
    assert at_c3(0.001, ref_occ) <= 0.30
    assert at_c3(0.3, ref_occ) > DEFAULTS.ink_piece


@pytest.mark.parametrize(
    ("k", "from_ply", "plies"),
    [
        # a paper print with plain discs: the black horse b9-c7 (ply 5), b9 still read a piece, the cannon b7
        # changed half as much as c7; the move was never seen (5 of 20 moves)
        (38, 0, 6),
        # outdoor sun: the pawn c3-c4 (ply 0) read as c3-d4 where a patch of sun moved off d3 and d4
        (47, 0, 1),
        # tall pieces seen steeply, red ink that never reads: the pawn c3-c4 (ply 6), its tall body hiding c3's
        # lines, the joint held c3 a piece (6 of 20)
        (42, 0, 7),
        # the rook i9 left between i8 and h8 (ply 5) on a board whose edge file reads as ink: read as i9-h8
        (56, 0, 6),
        # tall pieces in outdoor sun: the rook f1-f4 (ply 16), f3 changed more than f4 (the rook's body); f4, where
        # the rook could go, is no shadow to allow beside a move told by its changes alone (read as f1-f3, inferred
        # wrongly, where that allowance took any neighbour; the video from ply 16 alone reads it wrongly either way)
        (120, 0, 17),
    ],
)
def test_the_moves_read(shared_data: Path, k: int, from_ply: int, plies: int) -> None:
    r = check_hard_window(shared_data, k, from_ply, plies)
    assert (r.inferred_ok, r.moves, r.wrong_inferred) == (plies, plies, 0), r.wrong



@pytest.mark.parametrize(("src", "far"), [("b9", "d7"), ("g6", "c5")])
def test_changes_alone_tell_no_move_the_piece_cannot_make(src: str, far: str) -> None:
    # As the horse b9-c7 above, but the empty point that changed is one the piece cannot go to (the horse's leg
    # blocked; a pawn's one step): a touch does not reach that far, and no move of that piece does either. Another
    # piece came there, or the light changed both (e.g. a cannon left between two points took the pawn g6, which
    # still read its ink, and the cannon's leaving changed c6): the changes tell no move of it.
    known = START_SQUARES
    now = _reading(known, **{src: {"occupied": 0.97, "density": 0.25}})
    squares, placed, _, _ = _interpret(known, {src: 0.19, far: 0.17}, _reading(known), now)
    assert squares[point_index(far)] != known[point_index(src)] and point_index(far) not in placed, squares
