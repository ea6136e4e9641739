"""On a dark, small picture the ink reads a shadow over a point as a piece and a dim piece as gone. A point read left
by its ink alone (its change under the board's level) is where the piece left only where no other piece that could
have made the move changed clearly and far more: else which piece left is unsure, and the move fit or the referee
chooses, never the ink's guess."""

from __future__ import annotations

from pathlib import Path

from gamecheck import check_hard_window


def test_a_piece_whose_point_changed_most_left_though_its_ink_stayed(shared_data: Path) -> None:
    # a 247 x 216 picture under dark shadows: the advisor d0-e1 (ply 10). d0 changed 0.39 at the level 0.12 but a
    # shadow there read 1.0 occupied; the king's point e0 beside it changed 0.11 and its ink fell to 0.48 occupied:
    # read as the king e0-e1, a silent wrong move, and every move after read against a board that was not there
    r = check_hard_window(shared_data, 222, 9, 2)
    assert r.wrong_inferred == 0, r.wrong
    assert (r.inferred_ok, r.moves, r.false_touches, r.false_lifts) == (2, 2, 0, 0), r.wrong
