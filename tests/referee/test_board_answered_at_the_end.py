"""A still board that shows the accepted position answers the questions open about the board (an ambiguous change,
an unexplained one), also when the press it rules on ends the game: the ended game's state lists no such question
as still pending (4.1.9 with 8.1.7)."""

from __future__ import annotations

from xqarb.referee.board import fold


def _unsure_rook(squares: str) -> str:
    """Red's rook gone from a0, and a1 and a2 unreadable: the change fits a0a1 and a0a2."""
    sq = list(squares)
    a0, a1, a2 = 81, 72, 63  # (rank 0, 1, 2 of file a in the 90-point form)
    sq[a0], sq[a1], sq[a2] = ".", "?", "?"
    return "".join(sq)


def _pending_kinds(state) -> list[str]:
    return [p["kind"] for p in state.to_json()["pending"]]


def test_an_ambiguous_change_is_answered_by_the_board_that_ends_the_game(scenario):
    s = scenario()
    start = s.position.squares()
    s.press("red").stable(start)  # red's first press without a move: a foul (8.1.7)
    s.press("black").stable(_unsure_rook(start)).stable(start)  # black's, the camera unsure in between
    s.press("red").stable(_unsure_rook(start))
    before_end = fold(s.events()).game
    assert _pending_kinds(before_end) == ["ambiguous", "press_without_move"] and before_end.result is None
    s.stable(start)  # the rook stood on a0 all along: red pressed without a move again, 4.1.9
    ended = fold(s.events()).game
    assert ended.result is not None and ended.result.article == "4.1.9" and ended.result.result == "0-1"
    assert _pending_kinds(ended) == []
    assert ended.ambiguous == () and ended.attention is None


def test_the_press_is_still_judged_on_the_question_open_when_it_was_made(scenario):
    # An unexplained board (AttentionNeeded) open when red pressed: the press is not ruled (it cannot be known
    # whether it followed a move), even though the next still board shows the accepted position again.
    s = scenario()
    start = s.position.squares()
    disturbed = list(start)
    disturbed[81] = disturbed[89] = disturbed[54] = "."  # both red rooks and a pawn gone: no move explains it
    s.stable("".join(disturbed)).press("red").stable(start)
    result = s.run()
    assert result.rulings() == [] and result.ended is None and len(result.attention) == 1
    state = result.game.to_json()
    assert state["presses_without_move"] == {"red": 0, "black": 0} and state["pending"] == []
