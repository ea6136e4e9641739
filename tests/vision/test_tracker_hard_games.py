"""Short rendered videos with the renderer's hard options (render_hard), through the tracker as gamecheck runs it:
each case a behaviour that lost moves on whole games drawn with the preset `hard`."""

from __future__ import annotations

from pathlib import Path

from gamecheck import check_game

START = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"


def _crops(shared_data: Path) -> str:
    return str(shared_data / "piece_crops" / "valid")


def test_a_piece_whose_ink_all_left_its_point_moved_and_was_not_pushed(shared_data: Path) -> None:
    # A small picture (320 x 240) of a paper board with real pieces' tops: the pawn g6-g5's faint ink left g6
    # entirely, while the circle score at g6 (its printed position marks) still stood as a piece's outline; the
    # move was read as a push and the board kept the pawn on g6 for the rest of the game.
    r = check_game(START, ["b0a2", "g6g5", "g0e2"], 1005, truth_fit=True, adopt="moves", from_ply=1,
                   hard="hard", piece_crops=_crops(shared_data))
    assert (r.inferred_ok, r.moves, r.false_touches, r.false_lifts) == (2, 2, 0, 0)
