"""The end of a finite input (`referee run`, `replay`): what still waits for the camera's next still board is
folded as that board would fold it (`game.finish`, `board.end_of_input`)."""

from __future__ import annotations

from xqarb.referee.board import end_of_input


def _ended(scenario_):
    r = scenario_.run()
    board, st = end_of_input(r.state)
    return r, board, st


def test_a_second_press_without_a_move_as_the_last_input_loses_4_1_9(scenario):
    s = scenario()
    s.press("red", dt=3).stable(s.position.squares())  # Red's 8.1.7
    s.press("black", dt=2)  # Black's 8.1.7, settled when Red's move is seen
    s.moves("h2e2", "h9g7", "h0g2")
    s.press("black", dt=3)  # the last input: Black presses again, no move follows
    r, board, st = _ended(s)
    assert r.ended is None and board.game.press_pending is None
    assert [(o.type, o.data.get("article")) for o in st.outputs] == [("GameEnded", "4.1.9")]
    assert st.outputs[0].data["result"] == "1-0" and board.game.result.article == "4.1.9"
    assert st.outputs[0].occurred_at == r.game.last_at and st.outputs[0].source_seq == r.game.out_count + 1
    assert board.game.out_count == r.game.out_count + 1
    # Folded once: the end of the input again changes nothing.
    again, st2 = end_of_input(board)
    assert st2.outputs == () and again.game.result == board.game.result


def test_the_first_press_without_a_move_is_a_foul_and_the_game_goes_on(scenario):
    s = scenario().moves("h2e2")
    s.press("black", dt=3)
    _, board, st = _ended(s)
    assert [(o.type, o.data["kind"], o.data["side"], o.data["article"]) for o in st.outputs] == [
        ("Ruling", "foul", "black", "8.1.7")]
    assert board.game.result is None and board.game.sides["black"].presses == 1


def test_a_nudge_not_yet_judged_is_a_touch_at_the_end_of_the_input_5_1(scenario):
    s = scenario().move("h2e2")
    s.add("PieceNudged", point="h9")  # Black's time; the still board that would judge it never comes
    r, board, _ = _ended(s)
    assert r.game.nudges and r.game.touches("black") == ()
    assert [t.point for t in board.game.touches("black")] == ["h9"] and board.game.nudges == ()


def test_nothing_waiting_or_a_result_standing_gives_nothing(scenario):
    _, board, st = _ended(scenario().moves("h2e2", "h9g7"))
    assert st.outputs == () and board.game.result is None
    _, board, st = _ended(scenario().press("red", dt=3).add("Resigned", side="red"))
    assert st.outputs == () and board.game.result.article == "4.1.12"
