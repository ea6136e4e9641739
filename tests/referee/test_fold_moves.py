"""Moves from vision (BoardStable), illegal moves (4.1.8 / 8.1.8 / 5.8.3, 2011 4.1.6), suicide (4.1.3), mate
(4.1.1) and stalemate (4.1.2), board changes that are no single move (5.8.2, 5.9)."""

from __future__ import annotations

from xqarb.referee.rules import Move, Position

MATE_FEN = "3k5/9/9/9/9/9/9/9/R8/4K3R w - - 0 1"  # a1d1 mates (d-file rook, the red king holds the e-file)
STALE_FEN = "3k5/9/R8/9/9/9/9/9/9/4K4 w - - 0 1"  # a7a8 leaves Black no move, not in check (困毙)


def test_legal_move_becomes_move_made_with_three_notations_and_clocks(scenario):
    r = scenario().moves("h2e2", "h9g7").run()
    made = r.of("MoveMade")
    assert [(m["iccs"], m["wxf"], m["chinese"]) for m in made] == [("h2e2", "C2=5", "炮二平五"),
                                                                    ("h9g7", "H8+7", "马8进7")]
    assert made[0]["fen_after"] == "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b - - 1 1"
    # Red thought 5 s of a 60-minute clock; the move is stamped with both clocks.
    assert made[0]["red_ms"] == 3_600_000 - 5_000 and made[0]["black_ms"] == 3_600_000
    # Black's move: Red pressed 0.5 s after its move (5.5 s used) and got the 30 s increment (6.1); Black's clock
    # ran from that press to its move 5 s later.
    assert made[1]["red_ms"] == 3_600_000 - 5_500 + 30_000 and made[1]["black_ms"] == 3_600_000 - 5_000
    assert r.quiet() and [o.data["ply"] for o in r.outputs] == [1, 2]
    assert r.game_ids == ["g1"] * 5


def test_same_snapshot_twice_and_unchanged_board_do_nothing(scenario):
    s = scenario().move("h2e2")
    s.stable(s.position.squares())  # the camera reports the same still board again
    r = s.run()
    assert r.moves == ["h2e2"] and r.quiet()


def test_colour_only_and_unsure_points_are_enough_but_never_a_guess(scenario):
    s = scenario()
    after = s.position.play(Move.parse("h2e2"))
    squares = list(after.squares())
    # The camera knows colours only (X / x) and is unsure of a far point: still exactly one move fits.
    squares = ["X" if c.isupper() else "x" if c.islower() else c for c in squares]
    squares[0] = "?"
    s.stable("".join(squares))
    r = s.run()
    assert r.moves == ["h2e2"]


def test_ambiguous_change_asks_the_arbiter_and_designation_settles_it(scenario):
    s = scenario()
    sq = list(s.position.squares())
    # h2 emptied; e2 or d2 unsure: both h2e2 and h2d2 fit.
    sq[(9 - 2) * 9 + 7] = "."
    sq[(9 - 2) * 9 + 4] = "?"
    sq[(9 - 2) * 9 + 3] = "?"
    s.stable("".join(sq))
    r = s.run()
    assert r.moves == [] and len(r.attention) == 1 and "h2d2" in r.attention[0] and "h2e2" in r.attention[0]
    s.add("PointDesignated", point="e2")
    r = s.run()
    assert r.moves == ["h2e2"]


def test_two_moves_at_once_is_attention_never_a_guess_and_restoring_resolves_it(scenario):
    s = scenario()
    before = s.position.squares()
    p = s.position.play(Move.parse("h2e2"))
    p = p.play(Move.parse("h9g7"))
    s.stable(p.squares())
    r = s.run()
    assert r.moves == [] and len(r.attention) == 1 and "no single" in r.attention[0]
    assert r.game.to_json()["pending"][0]["kind"] == "attention"
    # 5.8.2: the arbiter restores the position before the error; then play goes on.
    s.add("PositionRestored", fen=s.position.fen(), article="5.8.2")
    s.stable(before)
    s.move("h2e2")
    r = s.run()
    assert r.moves == ["h2e2"] and len(r.attention) == 1
    assert r.game.to_json()["pending"] == []


def test_knocked_over_piece_then_put_back_5_9(scenario):
    s = scenario().move("h2e2")
    sq = list(s.position.squares())
    sq[0] = "."  # Black's a9 rook knocked off its point
    s.stable("".join(sq))
    s.stable(s.position.squares())  # put back (5.9) in the offender's time
    s.move("h9g7")
    r = s.run()
    assert r.moves == ["h2e2", "h9g7"] and len(r.attention) == 1 and "a9" in r.attention[0]
    assert not r.rulings()


def test_illegal_move_national_loses_at_once_4_1_8(scenario):
    s = scenario()
    s.stable(s.displaced("b0b3"))  # a horse moving like a rook
    r = s.run()
    assert r.ended == {**r.ended, "result": "0-1", "article": "4.1.8"}
    assert r.moves == []


def test_illegal_move_provincial_is_a_foul_first_then_loss_with_5_8_3_replay(scenario):
    s = scenario(level="provincial")
    s.stable(s.displaced("b0b3"))  # a horse moving like a rook
    r = s.run()
    assert r.ended is None
    fouls = r.rulings("foul")
    assert [(f["side"], f["article"]) for f in fouls] == [("red", "8.1.8")]
    replay = r.rulings("obligation", "5.8.3")
    assert replay and "b0" in replay[0]["message"]
    # 5.8.3: the moved horse counts as touched (5.1): playing another piece is not accepted.
    s.stable(s.position.squares())  # the board is put back
    s.move("h2e2")
    r = s.run()
    assert r.moves == [] and r.rulings("correction", "5.1")
    s.position = Position.from_fen(r.game.position.fen())
    s.stable(s.position.squares())
    s.move("b0c2")
    r = s.run()
    assert r.moves == ["b0c2"]
    # A second illegal move loses (4.1.8).
    s.move("h9g7")
    s.stable(s.displaced("a0a5"))  # the rook jumps its own pawn on a3
    r = s.run()
    assert r.ended["article"] == "4.1.8" and r.ended["result"] == "0-1"
    assert "number 2" in r.ended["reason"]


def test_illegal_move_junior_and_2011_editions(scenario):
    r = scenario(level="junior").stable(scenario().displaced("b0b3")).run()
    assert r.ended is None and r.rulings("foul", "8.1.8")
    s = scenario(ruleset="cxa-2011", level="provincial")
    r = s.stable(s.displaced("b0b3")).run()
    assert r.ended["article"] == "4.1.6" and r.ended["ruleset"] == "cxa-2011"


def test_suicide_loses_at_every_level_4_1_3(scenario):
    # Red's king steps onto the open e-file facing Black's king: 自杀.
    fen = "4k4/9/9/9/9/9/9/9/9/3K5 w - - 0 1"
    s = scenario(start_fen=fen, level="junior")
    s.stable(s.displaced("d0e0"))
    r = s.run()
    assert r.ended["article"] == "4.1.3" and r.ended["result"] == "0-1"
    s = scenario(start_fen=fen, ruleset="cxa-2011")
    s.stable(s.displaced("d0e0"))
    assert s.run().ended["article"] == "4.1.2"


def test_checkmate_4_1_1_and_stalemate_4_1_2(scenario):
    r = scenario(start_fen=MATE_FEN).move("a1d1").run()
    assert r.moves == ["a1d1"] and r.ended["result"] == "1-0" and r.ended["article"] == "4.1.1"
    r = scenario(start_fen=STALE_FEN).move("a7a8").run()
    assert r.ended["result"] == "1-0" and r.ended["article"] == "4.1.2" and "困毙" in r.ended["reason"]
    r = scenario(start_fen=STALE_FEN, ruleset="cxa-2011").move("a7a8").run()
    assert r.ended["article"] == "4.1.3"


def test_nothing_is_ruled_after_mate(scenario):
    s = scenario(start_fen=MATE_FEN).move("a1d1")
    s.stable(s.displaced("d9e9"))
    s.press("black")
    r = s.run()
    assert len(r.of("GameEnded")) == 1 and not r.rulings() and not r.attention


def test_position_restored_within_five_rounds_cancels_later_moves_5_8_2(scenario):
    s = scenario().moves("h2e2", "h9g7", "h0g2")
    back = Position.from_fen("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b - - 1 1")
    s.add("PositionRestored", fen=back.fen(), article="5.8.2")
    r = s.run()
    corr = r.rulings("correction", "5.8.2")
    assert corr and "h9g7 h0g2" in corr[0]["message"]
    assert r.game.ply == 1 and r.game.position.side == "black"
    s.position = back
    s.move("b9c7")
    r = s.run()
    assert r.moves[-1] == "b9c7" and r.game.ply == 2


def test_position_restored_one_move_on_is_that_move(scenario):
    s = scenario()
    after = s.position.play(Move.parse("h2e2"))
    s.add("PositionRestored", fen=after.fen(), article="5.8.2")
    assert s.run().moves == ["h2e2"]


def test_no_attacking_piece_left_is_shown_for_the_arbiter_4_2_2(scenario):
    r = scenario(start_fen="3k5/4a4/4b4/9/9/9/9/4B4/4A4/4K4 w - - 0 1").run()
    kinds = [p["kind"] for p in r.game.to_json()["pending"]]
    assert "material" in kinds and r.ended is None and not r.outputs


def test_rulings_name_the_input_and_the_camera_frame_as_evidence(scenario):
    s = scenario(level="provincial")
    s.stable(s.displaced("b0b3"))
    r = s.run()
    foul = r.rulings("foul")[0]
    assert foul["evidence"][1] == "f" * 64 and len(foul["evidence"]) == 2
    assert foul["evidence"][0] == r.outputs[0].data["evidence"][0]
