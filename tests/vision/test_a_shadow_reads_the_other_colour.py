"""A tall piece's shadow, cast beside where it stands, reads as dark ink and changes its point as much as the piece
changes its own: two arrivals where the one piece that left could go. One piece moves and keeps its colour: where one
arrival reads surely the mover's colour and the other (empty before) surely the other side's, the mover went to the
first, and the second keeps what it was."""

from __future__ import annotations

from pathlib import Path

from gamecheck import check_hard_window


def test_an_arrival_of_the_other_colour_beside_the_movers_is_its_shadow(shared_data: Path) -> None:
    # low light from one side: the red rook i0-h0 (h0 0.96 red), its shadow over i1 read 1.00 occupied and 0.06 red,
    # changed 0.53 against h0's 0.31: the snapshot read both as arrivals and fitted no move
    r = check_hard_window(shared_data, 72, 4, 2)
    assert (r.inferred_ok, r.moves, r.wrong_inferred) == (2, 2, 0), r.wrong
    assert r.misaligned_false_pairs == [], r.misaligned_false_pairs
