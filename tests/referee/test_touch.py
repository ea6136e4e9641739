"""摸子: touch-move 5.1-5.5, the 8.1.5 fouls, 5.6 adjustments, 5.10 pieces between two points."""

from __future__ import annotations

from xqarb.referee.rules import Move, Position

FROZEN_ADVISOR = "3k5/9/9/9/9/9/9/9/4K4/3A5 w - - 0 1"  # Red's advisor on d0 has no legal move


def test_5_1_touched_own_piece_must_move(scenario):
    s = scenario().add("PieceLifted", point="b0")
    r = s.run()
    pending = r.game.to_json()["pending"]
    assert pending[0]["kind"] == "touch" and pending[0]["article"] == "5.1" and "b0c2" in pending[0]["allowed"]
    s.move("h2e2")  # another piece: not accepted
    r = s.run()
    assert r.moves == [] and r.rulings("correction", "5.1")[0]["side"] == "red"
    assert not r.rulings("foul")
    s.position = Position.from_fen(r.game.position.fen())
    s.stable(s.position.squares())
    s.move("b0c2")
    r = s.run()
    assert r.moves == ["b0c2"] and r.game.to_json()["pending"] == []


def test_5_1_nudge_counts_as_touch_and_lifting_the_piece_you_move_is_no_ruling(scenario):
    s = scenario().add("PieceLifted", point="h2").move("h2e2")
    # Black's time: the camera reports a nudged horse with a still board that shows no move: a touch (5.1).
    s.add("PieceNudged", point="h9").stable(s.position.squares())
    s.move("b9c7")
    r = s.run()
    assert r.moves == ["h2e2"] and r.rulings("correction", "5.1")
    r2 = scenario().add("PieceLifted", point="h2").move("h2e2").run()
    assert r2.quiet()


def test_a_nudge_reported_with_the_move_is_part_of_the_move_5_7(scenario):
    # The camera reports contact with a neighbour in the same still-board report as the move (nudge first, then
    # the BoardStable): the move was complete when the hand left; nothing is ruled.
    s = scenario().add("PieceNudged", point="b0").move("h2e2")
    r = s.run()
    assert r.moves == ["h2e2"] and r.quiet() and r.game.touches("red") == ()


def test_8_1_5_own_piece_that_cannot_move_is_a_foul_and_the_move_is_free(scenario):
    s = scenario(start_fen=FROZEN_ADVISOR).add("TouchReported", side="red", point="d0")
    s.move("e1f1")
    r = s.run()
    assert [(f["side"], f["article"]) for f in r.rulings("foul")] == [("red", "8.1.5")]
    assert r.moves == ["e1f1"]
    r = scenario(start_fen=FROZEN_ADVISOR, ruleset="cxa-2011").add("TouchReported", side="red", point="d0").run()
    assert r.rulings("foul")[0]["article"] == "9.1.5"


def test_5_2_touched_opponent_piece_must_be_captured_else_8_1_5(scenario):
    s = scenario().add("TouchReported", side="red", point="h9")
    s.move("h2e2")
    r = s.run()
    assert r.moves == [] and r.rulings("correction", "5.2")
    s.position = Position.from_fen(r.game.position.fen())
    s.stable(s.position.squares())
    s.move("h2h9")  # the cannon takes the touched horse over the h7 screen
    r = s.run()
    assert r.moves == ["h2h9"] and not r.rulings("foul")
    # Black's a9 rook: no red piece can take it: 8.1.5 (2011: 9.1.6), and the move is free.
    r = scenario().add("TouchReported", side="red", point="a9").move("h2e2").run()
    assert r.rulings("foul", "8.1.5") and r.moves == ["h2e2"]
    r = scenario(ruleset="cxa-2011").add("TouchReported", side="red", point="a9").run()
    assert r.rulings("foul", "9.1.6")


def test_5_3_own_first_then_opponent(scenario):
    # 5.3.1: the first (b2 cannon) can take the second (b9 horse, screen b7): it must.
    s = scenario().add("TouchReported", side="red", point="b2").add("TouchReported", side="red", point="b9")
    r = s.run()
    assert r.game.obligation().article == "5.3.1"
    assert {m.iccs for m in r.game.obligation().allowed} == {"b2b9"}
    # 5.3.2: the h0 horse cannot take the a9 rook: it must move.
    s = scenario().add("TouchReported", side="red", point="h0").add("TouchReported", side="red", point="a9")
    ob = s.run().game.obligation()
    assert ob.article == "5.3.2" and {m.iccs for m in ob.allowed} == {"h0g2", "h0i2"}


def test_5_4_opponent_first_then_own_and_5_5_both_at_once(scenario):
    # 5.4.2: the h2 cannon cannot take b9, another piece (b2) can: it must be taken.
    s = scenario().add("TouchReported", side="red", point="b9").add("TouchReported", side="red", point="h2")
    ob = s.run().game.obligation()
    assert ob.article == "5.4.2" and {m.iccs for m in ob.allowed} == {"b2b9"}
    # 5.4.1: the own piece touched second can take the first: it must.
    s = scenario().add("TouchReported", side="red", point="h9").add("TouchReported", side="red", point="h2")
    ob = s.run().game.obligation()
    assert ob.article == "5.4.1" and {m.iccs for m in ob.allowed} == {"h2h9"}
    # 5.5: both at once (same instant) is handled as 5.4.
    s = scenario().add("TouchReported", side="red", point="h2").add("TouchReported", dt=0, side="red", point="h9")
    assert s.run().game.obligation().article == "5.5"


def test_5_6_announced_adjustment_in_own_time_is_no_touch(scenario):
    s = scenario().add("TouchReported", side="red", point="b0", adjust=True).add("PieceNudged", point="b0")
    s.move("h2e2")
    r = s.run()
    assert r.moves == ["h2e2"] and r.quiet()


def test_5_6_adjusting_in_the_opponents_time_counts_as_touch(scenario):
    s = scenario().add("TouchReported", side="black", point="h9", adjust=True)
    s.move("h2e2")
    s.move("b9c7")  # Black must move the h9 horse it adjusted in Red's time
    r = s.run()
    assert r.rulings("warning", "5.6") and r.moves == ["h2e2"] and r.rulings("correction", "5.1")


def test_arbiter_rules_contact_accidental_5_6_and_the_move_stands(scenario):
    s = scenario().add("PieceNudged", point="b0").stable(scenario().position.squares())  # a touch, no move
    s.move("h2e2")
    assert s.run().moves == [] and s.run().rulings("correction", "5.1")
    s.add("ArbiterDecision", result="", article="5.6", note="sleeve brushed the horse")
    r = s.run()
    assert r.moves == ["h2e2"] and r.rulings("correction", "5.6")


def test_5_10_piece_between_points_after_the_press_opponent_designates(scenario):
    s = scenario().move("h2e2")
    s.add("PieceMisaligned", points=["e2", "d2"])
    r = s.run()
    ob = r.rulings("obligation", "5.10")
    assert ob and ob[0]["side"] == "black" and not r.rulings("foul")
    assert r.game.to_json()["pending"][0]["kind"] == "designation"
    s.add("PointDesignated", point="d2")
    r = s.run()
    assert r.rulings("correction", "5.10") and r.of("MoveMade")[-1]["iccs"] == "h2d2"
    assert r.game.position.piece_at("d2") == "C" and r.game.ply == 1


def test_5_10_before_the_press_the_mover_fixes_it_and_nothing_is_ruled(scenario):
    s = scenario().move("h2e2", press=False).add("PieceMisaligned", points=["e2", "d2"])
    assert not s.run().rulings()
    s.press("red")
    r = s.run()
    assert r.rulings("obligation", "5.10")  # pressed before fixing it: the opponent designates


def test_5_10_rapid_play_off_mover_gets_a_foul(scenario):
    s = scenario(rapid=True).move("h2e2").add("PieceMisaligned", points=["e2", "d2"])
    r = s.run()
    fouls = r.rulings("foul")
    assert [(f["side"], f["article"], f["ruleset"]) for f in fouls] == [("red", "5.10", "rapid")]


def test_designation_with_nothing_pending_is_attention(scenario):
    r = scenario().add("PointDesignated", point="e2").run()
    assert r.attention and not r.rulings()


def test_5_10_fixed_before_the_press_clears_it(scenario):
    s = scenario().move("h2e2", press=False).add("PieceMisaligned", points=["e2", "d2"])
    s.stable(s.position.squares()).press("red")
    r = s.run()
    assert not r.rulings() and r.game.misaligned is None


def test_a_touch_after_the_move_but_before_the_press_is_the_movers(scenario):
    # Red moved and, its clock still running, nudges its own b0 horse: a touch of Red's (5.6), not a Black touch
    # of an opponent piece (which would be an 8.1.5 foul for Black).
    s = scenario().move("h2e2", press=False)
    s.add("PieceNudged", point="b0").stable(s.position.squares()).press("red")
    r = s.run()
    assert not r.rulings() and [t.point for t in r.game.touches("red")] == ["b0"]
    assert r.game.touches("black") == ()


def test_5_10_in_the_cameras_order_misaligned_before_the_still_board(scenario):
    # The camera: PieceMisaligned(e2, d2), then the BoardStable with both points unsure, then the mover presses.
    s = scenario()
    sq = list(s.position.squares())
    sq[(9 - 2) * 9 + 7] = "."  # h2 emptied
    sq[(9 - 2) * 9 + 4] = "?"
    sq[(9 - 2) * 9 + 3] = "?"
    s.add("PieceMisaligned", points=["e2", "d2"]).stable("".join(sq))
    r = s.run()
    assert not r.attention and not r.rulings() and r.moves == []  # the mover may still set it right
    s.press("red")
    r = s.run()
    assert r.rulings("obligation", "5.10")[0]["side"] == "black" and not r.attention
    s.add("PointDesignated", point="d2")
    r = s.run()
    assert r.moves == ["h2d2"] and not r.rulings("foul")
    # The camera put the piece on e2 itself: the move stands and Black may designate the other point.
    s = scenario()
    after = s.position.play(Move.parse("h2e2"))
    s.add("PieceMisaligned", points=["e2", "d2"]).stable(after.squares()).press("red")
    r = s.run()
    assert r.moves == ["h2e2"] and r.rulings("obligation", "5.10") and not r.attention


def test_5_10_a_move_left_half_way_from_its_own_point_waits_for_the_designation(scenario):
    # Red's rook leaves a0 for a1 and stays half-way: the camera reads both points unsure ('?') and names them;
    # no single snapshot shows the move, so the opponent designates (5.10) and that decides whether it was made.
    s = scenario()
    half = list(s.position.squares())
    half[81] = half[72] = "?"  # a0 and a1
    s.add("PieceMisaligned", points=["a0", "a1"], dt=5).stable("".join(half), dt=0.2).press("red")
    s.stable("".join(half), dt=1.0)  # the camera repeats the still board: the press is not ruled 8.1.7 yet
    r = s.run()
    assert r.moves == [] and not r.rulings("foul") and not r.attention
    assert [(o["side"], o["article"]) for o in r.rulings("obligation")] == [("black", "5.10")]
    made = s.add("PointDesignated", point="a1", dt=12).run()  # Black takes its time to say
    assert made.moves == ["a0a1"] and made.game.position.piece_at("a1") == "R" and not made.rulings("foul")
    # Designated back on a0: no move was made, and the press was one without moving (8.1.7).
    s2 = scenario()
    s2.add("PieceMisaligned", points=["a0", "a1"], dt=5).stable("".join(half), dt=0.2).press("red")
    s2.add("PointDesignated", point="a0").stable(s2.position.squares(), dt=1.0)
    r2 = s2.run()
    assert r2.moves == [] and [(f["side"], f["article"]) for f in r2.rulings("foul")] == [("red", "8.1.7")]


def test_5_10_once_designated_the_same_piece_seen_between_the_points_again_is_settled(scenario):
    s = scenario().move("h2e2")
    s.add("PieceMisaligned", points=["e2", "d2"]).add("PointDesignated", point="e2")
    s.add("PieceMisaligned", points=["e2", "d2"], dt=3)  # the piece stays off-centre: the camera says so again
    s.move("h9g7")
    s.add("PieceMisaligned", points=["e2", "d2"], dt=3)
    r = s.run()
    assert r.moves == ["h2e2", "h9g7"] and len(r.rulings("obligation", "5.10")) == 1 and not r.attention
    # once a move leaves one of those points, a piece between them is a new question
    s.move("e2d2").add("PieceMisaligned", points=["d2", "e2"])
    assert len(s.run().rulings("obligation", "5.10")) == 2


def test_5_10_a_question_the_opponent_lets_lapse_is_not_asked_again_for_the_same_piece(scenario):
    # Black is asked to designate but moves on instead: the position the referee holds stands, and the camera
    # still seeing that piece between the same points after later moves is no new question and no alert.
    s = scenario().move("h2e2").add("PieceMisaligned", points=["e2", "d2"])
    s.move("h9g7").add("PieceMisaligned", points=["e2", "d2"], dt=3)
    s.move("h0g2").add("PieceMisaligned", points=["d2", "e2"], dt=3)
    s.move("i9h9").add("PieceMisaligned", points=["e2", "d2"], dt=3)
    r = s.run()
    assert r.moves == ["h2e2", "h9g7", "h0g2", "i9h9"]
    assert len(r.rulings("obligation", "5.10")) == 1 and not r.attention


def test_a_displaced_piece_is_told_once_not_after_every_move(scenario):
    # A piece that is not the one just moved stands between two points (5.8.2 / 5.9): the arbiter is told once;
    # the camera reporting the same piece there after every later move adds nothing.
    s = scenario().move("h2e2").move("h9g7").add("PieceMisaligned", points=["i0", "i1"], dt=3)
    for iccs in ("h0g2", "i9h9"):
        s.move(iccs).add("PieceMisaligned", points=["i0", "i1"], dt=3)
    r = s.run()
    assert r.moves == ["h2e2", "h9g7", "h0g2", "i9h9"]
    displaced = [reason for reason in r.attention if "displaced piece" in reason]
    assert len(displaced) == 1 and "i0 and i1" in displaced[0]
    # once a move leaves one of those points (the rook on i0), a piece between them is news again
    s.move("i0h0").add("PieceMisaligned", points=["i0", "i1"], dt=3).move("h7h6")  # judged at the next still board
    assert len([reason for reason in s.run().attention if "displaced piece" in reason]) == 2


def test_two_pieces_reported_between_points_with_one_still_board_are_both_judged(scenario):
    # Found in the demo: the camera reported the piece just moved between two points (5.10) and another, displaced
    # piece (5.8.2 / 5.9) before the same still board; the second report used to hide the first.
    s = scenario().move("h2e2")
    after = s.position.play(Move.parse("h9g7"))
    s.add("PieceMisaligned", points=["g7", "g8"]).add("PieceMisaligned", points=["i0", "i1"])
    s.stable(after.squares()).press("black")
    r = s.run()
    assert r.moves == ["h2e2", "h9g7"]
    assert [(o["side"], o["article"]) for o in r.rulings("obligation")] == [("red", "5.10")]
    assert [reason for reason in r.attention if "displaced piece" in reason and "i0 and i1" in reason]
    s.add("PointDesignated", point="g7")
    r = s.run()
    assert r.moves == ["h2e2", "h9g7"] and not [a for a in r.attention if "no piece is waiting" in a]


def test_unmet_obligation_agrees_with_the_obligation_for_every_legal_move(shared_data) -> None:
    # The referee judges a move against the touches with unmet_obligation, which skips listing the touched piece's
    # moves when that piece moved (5.1); every touch order and every legal move must give what obligation() says.
    from itertools import permutations

    from xqarb.referee.rules import read_pgn, replay
    from xqarb.referee.touch import Touch, obligation, unmet_obligation

    game = replay(read_pgn((shared_data / "games" / "ccpd_dev.pgn").read_text(encoding="utf-8"))[0])
    checked = unmet = 0
    for position in game.positions[:40:5]:
        side_is_red = position.side == "red"
        pieces = sorted(position.pieces().items())
        own = [pt for pt, letter in pieces if letter.isupper() == side_is_red][::4]
        opp = [pt for pt, letter in pieces if letter.isupper() != side_is_red][::5]
        for points in [*([p] for p in own), *([p] for p in opp), *permutations(own[:2] + opp[:2], 2)]:
            touches = [Touch(pt, pt in own, position.piece_at(pt), at, f"t{at}") for at, pt in enumerate(points)]
            ob = obligation(position, touches)
            for legal in position.legal_moves():
                expected = ob if ob is not None and not ob.met_by(legal) else None
                assert unmet_obligation(position, touches, legal) == expected, (position.fen(), points, legal)
                checked += 1
                unmet += expected is not None
    assert checked > 5_000 and unmet > 1_000  # both answers were checked, many times
