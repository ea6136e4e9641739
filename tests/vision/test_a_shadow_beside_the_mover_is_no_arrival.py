"""A tall piece's shadow or side wall cast over an empty point beside where the mover was set down changes that point
as much as the arrival does its own, and reads as dark ink there: of several arrivals where the one piece that left
could go, the one a piece plainly stands on (ink read plainly, its peak on the point, a round outline as plain as the
standing pieces' centred there) is where it went, and the others keep what they were. Where none or several stand
plainly, the arrivals are left as they are (no move is chosen between them)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gamecheck import check_hard_window

import xqarb.vision.interpret as interpret
from xqarb.vision.grid import point_name
from xqarb.vision.settings import DEFAULTS
from xqarb.vision.squares import START_SQUARES as START

A0, I0, H0, I1 = (next(i for i in range(90) if point_name(i) == p) for p in ("a0", "i0", "h0", "i1"))
# the red rook i0 goes to h0 (the horse h0 gone before)
KNOWN = "".join("." if i == H0 else c for i, c in enumerate(START))


class _Outlines:
    """Round outlines as plain as the standing pieces' (0.85) on the pieces and on `on`, the board's print (0.45)
    elsewhere; risen by `rise` where given."""

    def __init__(self, on: set[int], rise: dict[int, float]) -> None:
        self.disc = np.array([0.85 if c != "." or i in on else 0.45 for i, c in enumerate(KNOWN)])
        self.rise = np.array([rise.get(i, 0.0) for i in range(90)])

    def discs(self) -> np.ndarray:
        return self.disc


def _work(monkeypatch: pytest.MonkeyPatch, outline_on: set[int], off_i1: tuple[float, float],
          rise: dict[int, float] | None = None) -> interpret._Work:
    monkeypatch.setattr(interpret, "_stands_on", lambda outlines, a, pieces, **_: a in outline_on)
    outlines = _Outlines(outline_on, {H0: 0.44, I1: 0.25} if rise is None else rise)
    offset = np.zeros((90, 2))
    offset[I1] = off_i1
    occ = np.array([0.99 if c != "." else 0.02 for c in KNOWN])
    occ[[H0, I1]], occ[I0] = 0.99, 0.02

    class _Reading:
        pass

    reading = _Reading()
    reading.offset = offset  # type: ignore[attr-defined]
    return interpret._Work(known=KNOWN, occ=occ, cfg=DEFAULTS, ref_view=np.zeros((4, 4, 3), np.uint8),
                           reading=reading, parallax=np.zeros(2), outlines=outlines, leaning=[],
                           outline_delta=lambda: outlines.rise,
                           is_piece=np.array([c not in ".?" for c in KNOWN]))


def test_a_shadow_whose_ink_lies_off_its_point_is_no_arrival(monkeypatch: pytest.MonkeyPatch) -> None:
    w = _work(monkeypatch, {H0, I1}, (-0.22, 0.44))  # its ink peak 0.44 towards i0, off the point
    assert w.the_one_standing(I0, [I1, H0]) == [H0]
    assert w.leaning == [I1]


def test_a_shadow_with_no_round_outline_of_its_own_is_no_arrival(monkeypatch: pytest.MonkeyPatch) -> None:
    w = _work(monkeypatch, {H0}, (0.0, -0.09))  # its ink on the point, but no piece's round outline there
    assert w.the_one_standing(I0, [I1, H0]) == [H0]


def test_the_one_standing_whose_outline_rose_less_than_a_shadow_s_is_not_taken(
        monkeypatch: pytest.MonkeyPatch) -> None:
    w = _work(monkeypatch, {H0, I1}, (-0.22, 0.44), rise={H0: 0.2, I1: 0.3})
    assert w.the_one_standing(I0, [I1, H0]) == [I1, H0]


def test_an_outline_short_of_the_standing_pieces_is_no_piece_standing(monkeypatch: pytest.MonkeyPatch) -> None:
    w = _work(monkeypatch, {H0, I1}, (-0.22, 0.44))
    w.outlines.disc[H0] = 0.55  # (a shadow's circle: not gone, but not as plain as a piece's)
    assert w.the_one_standing(I0, [I1, H0]) == [I1, H0]


def test_two_points_a_piece_plainly_stands_on_are_left_as_they_are(monkeypatch: pytest.MonkeyPatch) -> None:
    w = _work(monkeypatch, {H0, I1}, (0.0, -0.09))
    assert w.the_one_standing(I0, [I1, H0]) == [I1, H0]
    assert w.leaning == []


def test_the_one_standing_where_the_mover_cannot_go_is_no_move_of_it(monkeypatch: pytest.MonkeyPatch) -> None:
    w = _work(monkeypatch, {H0, I1}, (-0.22, 0.44))
    assert w.the_one_standing(A0, [I1, H0]) == [I1, H0]  # (the rook a0, its rank blocked, reaches neither)


def test_a_rook_s_long_shadow_over_the_edge_file_is_no_second_arrival(shared_data: Path) -> None:
    # a rendered game in low side light: the red rook i0-h0, its shadow over i1 changed 0.55 against h0's 0.29,
    # read 0.99 occupied and dark, its ink peak 0.44 towards i0 and its outline 0.76 against h0's 0.84 centred;
    # both read as arrivals, the still board fitted no move and three moves were lost
    r = check_hard_window(shared_data, 72, 3, 2)
    assert (r.inferred_ok, r.moves, r.wrong_inferred, r.false_touches, r.false_lifts) == (2, 2, 0, 0, 0), r.wrong
