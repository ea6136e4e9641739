"""棋例 (repetition): each term on a small hand-made position, then the rulings of 24/26, with pyffish beside.

Boards are drawn in FEN (rank 9 first, uppercase Red). pyffish (Fairy-Stockfish) implements the Asian (AXF)
xiangqi rules: where the CXA rules differ, the test says why and asserts the CXA result.
"""

from __future__ import annotations

import json

import pytest

from xqarb.referee.rules import Move, Position
from xqarb.referee.rules.repetition import (
    UnknownRuleset,
    classify_move,
    find_cycle,
    judge_repetition,
    ruling_for_terms,
)

sf = pytest.importorskip("pyffish")


def line(fen: str, moves: list[str]) -> tuple[list[Position], list[Move]]:
    positions = [Position.from_fen(fen)]
    played = []
    for text in moves:
        mv = Move.parse(text)
        played.append(mv)
        positions.append(positions[-1].play(mv))
    return positions, played


def classify(fen: str, move: str):
    return classify_move(Position.from_fen(fen), Move.parse(move))


def pyffish_outcome(fen: str, moves: list[Move]) -> tuple[str, str | None] | None:
    """pyffish's ruling at the end of `moves`: ("draw", None), ("loss", side) or None (no game end)."""

    def uci(m: Move) -> str:  # pyffish numbers ranks 1-10
        return f"{m.frm[0]}{int(m.frm[1]) + 1}{m.to[0]}{int(m.to[1]) + 1}"

    end, value = sf.is_optional_game_end("xiangqi", fen, [uci(m) for m in moves])
    if not end:
        return None
    if value == 0:
        return ("draw", None)
    to_move = "red" if (fen.split()[1] == "w") == (len(moves) % 2 == 0) else "black"
    other = "black" if to_move == "red" else "red"
    return ("loss", to_move if value < 0 else other)


# --- 将 check -----------------------------------------------------------------------------------------------------


def test_check_is_jiang():
    mc = classify("4k4/R8/9/9/9/9/9/9/9/3K5 w - - 0 1", "a8a9")
    assert mc.term == "将"
    assert mc.reason == "将: rook a8-a9 checks the black king"
    assert mc.side == "red"


# --- 杀 mate threat -----------------------------------------------------------------------------------------------
# Black king e9 boxed in by its advisors d9 and f9, rook i8 holding rank 8: horse c4-b6 threatens b6-c8 mate.
SHA = "3aka3/8R/9/9/9/2N6/9/9/9/3K5 w - - 0 1"


def test_quiet_move_threatening_mate_by_check_is_sha():
    mc = classify(SHA, "c4b6")
    assert mc.term == "杀"
    assert "b6c8" in mc.reason


def test_move_that_threatens_nothing_is_idle():
    # The same horse going the other way threatens no mate and attacks nothing.
    mc = classify(SHA, "c4a3")
    assert mc.term == "闲"


def test_standing_mate_is_not_a_threat_this_move_makes():
    # Two rooks against a bare king: red could force mate by checks before and after a king step; the step
    # itself threatens nothing new (29.2's principle applied to 杀).
    mc = classify("4k4/9/9/9/9/9/9/9/R7R/3K5 w - - 0 1", "d0d1")
    assert mc.term == "闲"


# --- 捉 chase -----------------------------------------------------------------------------------------------------


def test_rook_chasing_unprotected_horse():
    mc = classify("4k4/9/2n6/9/9/9/9/7R1/9/3K5 w - - 0 1", "h2h7")
    assert mc.term == "捉"
    assert mc.reason == "捉: rook h7 attacks unprotected horse c7"
    assert mc.targets == ("c7",)


def test_horse_chasing_unprotected_rook():
    mc = classify("4k4/3r5/9/9/6N2/9/9/9/9/5K3 w - - 0 1", "g5e6")
    assert mc.term == "捉"
    assert mc.reason == "捉: horse e6 attacks unprotected rook d8"


def test_protected_horse_is_not_chased():
    # Same rook move, but the horse c7 is protected by the horse a8 (a8-c7, leg b8): a rook for a horse wins
    # nothing, so the move is idle (跟: following a protected piece).
    mc = classify("4k4/n8/2n6/9/9/9/9/7R1/9/3K5 w - - 0 1", "h2h7")
    assert mc.term == "闲"


def test_horse_attacking_protected_rook_still_chases_by_value():
    # 29.1: the rook d8 is protected by the king d9, but horse for rook wins 2 by 25.3's values.
    mc = classify("3k5/3r5/9/9/6N2/9/9/9/9/5K3 w - - 0 1", "g5e6")
    assert mc.term == "捉"
    assert "protected, but the full exchange wins 2" in mc.reason


def test_false_root_pinned_protector_counts_as_unprotected():
    # The horse c7's root, the horse e8, may not recapture: the rook e2 pins it against the king e9 (28.16 假根).
    mc = classify("4ka3/4n4/2n6/9/9/9/9/4R2R1/9/3K5 w - - 0 1", "h2h7")
    assert mc.term == "捉"
    assert "protected only in form (假根" in mc.reason
    assert "horse e8" in mc.reason


def test_chase_through_a_check_and_a_root_that_would_be_mated():
    # 28.3: horse h7-f8 checks, the king must go d9-d8, then the horse takes the cannon d7; the king's
    # recapture d8xd7 would be met by rook g3-d3 mate, so the root is false. Found by a random search.
    positions, _ = line("3k5/9/7N1/9/9/9/3c2R2/4K4/9/9 w - - 0 1", ["h7g9", "d3d7"])
    mc = classify_move(positions[2], Move.parse("g9h7"))
    assert mc.term == "捉"
    assert "after the check h7f8" in mc.reason and "cannon d7" in mc.reason


def test_threat_already_there_is_not_a_chase():
    # 29.2: the rook h7 attacked the horse c7 before this king step; the step creates nothing.
    mc = classify("4k4/9/2n4R1/9/9/9/9/9/9/3K5 w - - 0 1", "d0d1")
    assert mc.term == "闲"
    assert "there before this move" in mc.reason


def test_capture_that_gets_the_capturer_mated_is_not_a_chase():
    # 29.4: rook h3 attacks the horse c3, but leaving the h-file lets rook h9-h0 mate (rook i1 holds rank 1).
    mc = classify("4k2r1/9/9/9/9/7R1/2n6/9/8r/3K5 w - - 0 1", "h4h3")
    assert mc.term == "闲"
    assert "mated at once" in mc.reason


def test_king_attacking_counts_as_idle():
    # 27.1: the king d1 itself attacks the unprotected horse d0.
    mc = classify("1c7/4k4/9/9/9/9/9/3K5/9/3n5 w - - 0 1", "d2d1")
    assert mc.term == "闲"
    assert "king d1 attacks unprotected horse d0" in mc.reason


def test_pawn_chasing_counts_as_idle():
    # 27.2: a crossed pawn stepping sideways to attack an unprotected rook.
    mc = classify("5k3/9/9/3r5/4P4/9/9/9/9/3K5 w - - 0 1", "e5d5")
    assert mc.term == "闲"
    assert mc.pawn_chase
    assert "pawn d5 attacks unprotected rook d6" in mc.reason


def test_uncrossed_pawn_is_not_a_target_but_a_crossed_one_is():
    # 25.3: Black's pawn c6 has not crossed the river (Black's half is ranks 5-9): not 子力.
    assert classify("4k4/9/9/2p6/9/9/9/7R1/9/3K5 w - - 0 1", "h2h6").term == "闲"
    crossed = classify("4k4/9/9/9/9/2p6/9/7R1/9/3K5 w - - 0 1", "h2h4")
    assert crossed.term == "捉"
    assert crossed.reason == "捉: rook h4 attacks unprotected pawn c4"


def test_offer_to_exchange_is_idle():
    # 28.5 兑: rook h7 attacks the rook c7, which may take it back: equal for equal.
    mc = classify("4k4/9/2r6/9/9/9/9/7R1/9/3K5 w - - 0 1", "h2h7")
    assert mc.term == "闲"
    assert "兑" in mc.reason


def test_check_outranks_chase():
    # 27.4: a move that checks and attacks an unprotected rook at once is named 将.
    mc = classify("4k4/7r1/9/9/6N2/9/9/9/9/5K3 w - - 0 1", "g5f7")  # horse f7 checks e9 and forks rook h8
    assert mc.term == "将"


# --- cycles and rulings ------------------------------------------------------------------------------------------

PERPETUAL_CHECK = "4k4/R8/9/9/9/9/9/9/9/3K5 w - - 0 1"
CHECKS = ["a8a9", "e9e8", "a9a8", "e8e9"]


def test_no_verdict_before_the_third_occurrence():
    positions, moves = line(PERPETUAL_CHECK, (CHECKS * 2)[:7])
    assert find_cycle(positions) is None
    assert judge_repetition(positions, moves) is None


def test_one_sided_perpetual_check_loses_and_pyffish_agrees():
    positions, moves = line(PERPETUAL_CHECK, CHECKS * 2)
    v = judge_repetition(positions, moves)
    assert v is not None
    assert (v.cycle.length, v.cycle.occurrences, v.cycle.strict) == (4, 3, True)
    assert [m.term for m in v.moves] == ["将", "闲", "将", "闲"]
    assert v.patterns == {"red": "长将", "black": "闲"}
    assert (v.outcome, v.side, v.result) == ("loss", "red", "0-1")
    assert v.article.startswith("4.1.4")
    assert pyffish_outcome(PERPETUAL_CHECK, moves) == ("loss", "red")


def test_article_numbering_follows_the_rule_set():
    positions, moves = line(PERPETUAL_CHECK, CHECKS * 2)
    v2011 = judge_repetition(positions, moves, ruleset="cxa-2011")
    assert v2011 is not None and v2011.article == "24.1, 26.1"
    with pytest.raises(UnknownRuleset):
        judge_repetition(positions, moves, ruleset="axf")


def test_idle_shuffling_is_a_draw_and_pyffish_agrees():
    start = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"
    positions, moves = line(start, ["h0g2", "h9g7", "g2h0", "g7h9"] * 2)
    v = judge_repetition(positions, moves)
    assert v is not None
    assert v.patterns == {"red": "闲", "black": "闲"}
    assert (v.outcome, v.result) == ("draw", "1/2-1/2")
    assert v.article.startswith("4.2.3")
    assert pyffish_outcome(start, moves) == ("draw", None)


# Red's rook a1/b1 chases the black cannon a9/b9 up the open file; the cannon's flights are idle. (The advisor d9
# shuts rank 9: without it rook b1-b9 check then b9xa9 would already win the cannon, and a1 would threaten
# nothing new, 29.2.)
CHASE = "1c1ak4/9/9/9/9/9/9/9/R8/3K5 w - - 0 1"
CHASE_MOVES = ["a1b1", "b9a9", "b1a1", "a9b9"]


def test_perpetual_chase_against_idle_must_vary():
    positions, moves = line(CHASE, CHASE_MOVES * 2)
    v = judge_repetition(positions, moves)
    assert v is not None
    assert [m.term for m in v.moves] == ["捉", "闲", "捉", "闲"]
    assert v.moves[0].reason == "捉: rook b1 attacks unprotected cannon b9"
    assert v.patterns["red"] == "长捉"
    assert (v.outcome, v.side, v.result) == ("must_vary", "red", None)
    # pyffish (AXF rules) scores the perpetual chaser's loss at once. CXA 26.4 / 24.3: the forbidden side must
    # vary first and loses only if it repeats the cycle once more (below).
    assert pyffish_outcome(CHASE, moves) == ("loss", "red")


def test_repeating_once_more_after_the_order_to_vary_loses():
    positions, moves = line(CHASE, CHASE_MOVES * 3)
    told_at = 8  # the must_vary ruling came after 8 plies
    v = judge_repetition(positions, moves, vary_order=("red", told_at))
    assert v is not None
    assert (v.outcome, v.side, v.result) == ("loss", "red", "0-1")
    assert v.article.startswith("4.1.5")
    assert judge_repetition(positions, moves, ruleset="cxa-2011", vary_order=("red", told_at)).article.startswith(
        "4.1.7"
    )
    # Half a cycle later is not "once more" yet.
    early = judge_repetition(positions[:11], moves[:10], vary_order=("red", told_at))
    assert early is None or early.outcome == "must_vary"


def test_one_check_one_chase_is_forbidden():
    # Red's rook alternates f1 (check up the f-file) and a1 (attacking the crossed pawn a3); Black's pawn g4/f4
    # shuttles. Found by a random search. 一将一捉 against idle: red must vary. pyffish calls it a draw: its
    # chase detection ignores the f1-a1 rook's attack on the pawn (not a chase in its AXF-derived rule).
    fen = "9/5k3/9/9/9/6p2/p8/9/5R3/3Kc4 b - - 0 1"
    positions, moves = line(fen, ["g4f4", "f1a1", "f4g4", "a1f1"] * 2)
    v = judge_repetition(positions, moves)
    assert v is not None
    assert v.patterns == {"red": "一将一捉", "black": "闲"}
    assert (v.outcome, v.side) == ("must_vary", "red")
    assert pyffish_outcome(fen, moves) == ("draw", None)


def test_perpetual_mate_threat_is_forbidden_in_cxa():
    # Black's rook h5-h8 threatens h8-d8 mate, h8-h5 attacks the unprotected crossed pawn f5: 一杀一捉.
    # CXA 25.2 forbids 长杀 and its mixes; pyffish has no notion of a mate threat and calls it a draw.
    fen = "4k4/9/9/9/5P1r1/9/9/9/3K5/9 w - - 0 1"
    positions, moves = line(fen, ["d1d0", "h5h8", "d0d1", "h8h5"] * 2)
    v = judge_repetition(positions, moves)
    assert v is not None
    assert [m.term for m in v.moves] == ["闲", "杀", "闲", "捉"]
    assert v.patterns["black"] == "一杀一捉"
    assert (v.outcome, v.side) == ("must_vary", "black")
    assert pyffish_outcome(fen, moves) == ("draw", None)


def test_perpetual_check_against_perpetual_chase_loses_for_the_checker():
    # 26.1 / 26.3: both forbidden, but one side checks at every move: one-sided perpetual check still loses.
    # Black's horse g4/e3 checks; red's king steps uncover nothing new (the rook e1's attack on a1 stood before).
    fen = "9/3k5/9/9/9/6n2/9/5K2C/n3R4/9 w - - 0 1"
    positions, moves = line(fen, ["f2f1", "g4e3", "f1f2", "e3g4"] * 2)
    v = judge_repetition(positions, moves)
    assert v is not None
    assert v.patterns["black"] == "长将"
    assert (v.outcome, v.side) == ("loss", "black")
    assert pyffish_outcome(fen, moves) == ("loss", "black")


def test_pawn_chase_counts_when_both_sides_attack_perpetually():
    # Red's crossed pawn d6/e6 attacks the unprotected horses c6/f6 at every move; Black's rook a9/b9 attacks the
    # unprotected cannons a1/b1 at every move. 27.2: a pawn's chase is idle, except in mutual perpetual attack:
    # here it counts, both sides are forbidden, draw (26.3). Without the exception Black would have to vary.
    fen = "r4k3/9/9/2n1Pn3/9/9/9/9/CC7/3K5 w - - 0 1"
    positions, moves = line(fen, ["e6d6", "a9b9", "d6e6", "b9a9"] * 2)
    v = judge_repetition(positions, moves)
    assert v is not None
    assert v.patterns == {"red": "长捉", "black": "长捉"}
    assert [m.term for m in v.moves] == ["捉", "捉", "捉", "捉"]
    assert v.moves[0].reason.startswith("捉 (mutual perpetual attack): pawn d6 attacks unprotected horse c6")
    assert (v.outcome, v.side) == ("draw", None)
    assert any("pawns' chases count" in n for n in v.notes)


def test_lone_pawn_chase_against_idle_is_allowed():
    # The same pawn chases, but Black only shuffles its king: the pawn's chases stay idle (27.2), draw.
    fen = "r4k3/9/9/2n1Pn3/9/9/9/9/CC7/3K5 w - - 0 1"
    positions, moves = line(fen, ["e6d6", "f9f8", "d6e6", "f8f9"] * 2)
    v = judge_repetition(positions, moves)
    assert v is not None
    assert v.patterns["red"] == "闲" and v.moves[0].pawn_chase
    assert v.outcome == "draw"


@pytest.mark.parametrize(
    ("red", "black", "expected"),
    [
        (["将", "将"], ["将", "将"], ("draw", None)),  # mutual perpetual check: not one-sided (26.1, 26.3)
        (["将", "将"], ["捉", "捉"], ("loss", "red")),  # 26.3 excludes one-sided perpetual check
        (["将", "闲"], ["闲", "闲"], ("draw", None)),  # 数将一闲 is allowed (25.2)
        (["将", "捉"], ["闲", "闲"], ("must_vary", "red")),  # 一将一捉
        (["杀", "杀"], ["闲", "杀"], ("must_vary", "red")),  # 长杀 against 一杀一闲
        (["捉", "捉"], ["杀", "将"], ("draw", None)),  # 长打对长打
        (["闲", "闲"], ["捉", "捉"], ("must_vary", "black")),
    ],
)
def test_rulings_on_terms(red, black, expected):
    outcome, side, article, reason = ruling_for_terms({"red": red, "black": black})
    assert (outcome, side) == expected
    assert article and reason


def test_mutual_perpetual_check_ruling_names_the_draw_article():
    # A position where every move of both sides checks needs each answer to a check to give check; none turned up
    # in random searches, so the mutual case is checked on the terms (the ruling is the same code path).
    outcome, side, article, _ = ruling_for_terms({"red": ["将"] * 2, "black": ["将"] * 2}, "cxa-2011")
    assert (outcome, side, article) == ("draw", None, "4.2.3; 24.2, 26.3")


def test_elephant_chase_by_a_side_no_stronger_is_left_to_the_arbiter():
    # Red's rook g3/i3 follows the elephant g9/i7 up the files. 27.3: chasing an advisor or elephant incidentally,
    # by occupying a key defensive point that makes a simple draw, is idle; whether that is so is the arbiter's
    # call. Red's rook (4) is no more than Black's advisors and elephants (4), so Red may be the defender: the
    # verdict says judgment and what each reading gives. pyffish (no 27.3) scores the chase as Red's loss.
    fen = "2bakab2/9/9/9/9/9/8R/9/9/3K5 w - - 0 1"
    positions, moves = line(fen, ["i3g3", "g9i7", "g3i3", "i7g9"] * 2)
    v = judge_repetition(positions, moves)
    assert v is not None
    assert [m.term for m in v.moves] == ["捉", "闲", "捉", "闲"]
    assert v.moves[0].alt_term == "闲"
    assert (v.outcome, v.side, v.result) == ("judgment", None, None)
    assert "red must vary" in v.reason and "draw" in v.reason
    assert pyffish_outcome(fen, moves) == ("loss", "red")


def test_elephant_chase_by_the_stronger_side_is_a_chase():
    # Without Black's advisors the rook is the stronger side: no defensive point to hold, a plain 长捉.
    fen = "2b1k1b2/9/9/9/9/9/8R/9/9/3K5 w - - 0 1"
    positions, moves = line(fen, ["i3g3", "g9i7", "g3i3", "i7g9"] * 2)
    v = judge_repetition(positions, moves)
    assert v is not None
    assert v.moves[0].alt_term is None
    assert (v.outcome, v.side) == ("must_vary", "red")


def test_same_position_by_different_moves_is_judged_over_all_of_them():
    # The start position comes back twice by two different horse routes: pyffish counts a threefold repetition;
    # the moves did not repeat one cycle, so every move since the first occurrence is judged and the verdict
    # asks the arbiter to confirm it is one repetition.
    start = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"
    positions, moves = line(start, ["h0g2", "h9g7", "g2h0", "g7h9", "h0i2", "h9i7", "i2h0", "i7h9"])
    cycle = find_cycle(positions)
    assert cycle is not None
    assert (cycle.start, cycle.end, cycle.strict, cycle.occurrences) == (0, 8, False, 3)
    v = judge_repetition(positions, moves)
    assert v is not None and len(v.moves) == 8
    assert v.outcome == "draw"
    assert any("different moves" in n for n in v.notes)
    assert pyffish_outcome(start, moves) == ("draw", None)


def test_occurrences_threshold_is_configurable_and_history_must_fit():
    positions, moves = line(PERPETUAL_CHECK, CHECKS)
    assert judge_repetition(positions, moves) is None
    v = judge_repetition(positions, moves, min_occurrences=2)
    assert v is not None and v.cycle.occurrences == 2 and v.outcome == "loss"
    with pytest.raises(ValueError):
        judge_repetition(positions[:-1], moves)


def test_drawn_repetition_going_on_may_be_ruled_without_a_claim():
    start = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"
    positions, moves = line(start, ["h0g2", "h9g7", "g2h0", "g7h9"] * 2)
    assert not judge_repetition(positions, moves).unclaimed_draw
    positions, moves = line(start, ["h0g2", "h9g7", "g2h0", "g7h9"] * 3)
    v = judge_repetition(positions, moves, ruleset="cxa-2011")
    assert v.cycle.occurrences == 4 and v.unclaimed_draw
    assert any("23.2" in n for n in v.notes)
    assert json.loads(json.dumps(v.as_dict(), ensure_ascii=False))["unclaimed_draw"] is True


def test_check_prefilter_misses_no_check(shared_data):
    # _checking_moves skips gives_check for moves whose geometry cannot check; it must find every check the
    # engine finds. Positions: every third ply of the first 40 real games.
    from xqarb.referee.rules.repetition import AnalysisCache, _checking_moves

    lines = (shared_data / "games" / "ccpd_dev.jsonl").read_text(encoding="utf-8").splitlines()[:40]
    compared = checks = 0
    for text in lines:
        game = json.loads(text)
        pos = Position.from_fen(game["start_fen"])
        for i, mv in enumerate(game["iccs"]):
            if i % 3 == 0:
                expected = [m for m in pos.legal_moves() if pos.gives_check(m)]
                assert _checking_moves(pos, AnalysisCache()) == expected, pos.fen()
                compared += 1
                checks += len(expected)
            pos = pos.play(Move.parse(mv))
    assert compared > 1000 and checks > 100


def test_verdicts_are_deterministic():
    positions, moves = line(CHASE, CHASE_MOVES * 2)
    assert judge_repetition(positions, moves) == judge_repetition(positions, moves)


def test_moves_that_do_not_match_the_positions_are_refused():
    from xqarb.referee.rules.repetition import HistoryError

    positions, moves = line(PERPETUAL_CHECK, CHECKS * 2)
    wrong = [*moves[:-1], Move.parse("e8e7")]
    with pytest.raises(HistoryError):
        judge_repetition(positions, wrong)


def test_alert_words_name_each_sides_moves_and_the_ruling():
    from xqarb.referee.rules.repetition import alert_words

    fen = "4k4/8R/9/9/9/9/9/9/9/3K5 w - - 0 1"
    positions, moves = line(fen, ["i8i9", "e9e8", "i9i8", "e8e9"] * 2)
    v = judge_repetition(positions, moves)
    assert v is not None and v.outcome == "loss" and v.side == "red"
    words = alert_words(v)
    assert "3 times in a 4-ply cycle" in words
    assert "red 长将 (i8i9 将, i9i8 将)" in words and "black 闲 (e9e8 闲, e8e9 闲)" in words
    assert words.endswith(f"({v.article})") and "4.1.4" in words
    assert pyffish_outcome(fen, moves) == ("loss", "red")


def test_ruling_articles_and_the_repeat_after_an_order_to_vary():
    from xqarb.referee.rules.repetition import repeated_after_order, ruling_article

    assert ruling_article("not_varied") == "4.1.5; 23, 25"
    assert ruling_article("not_varied", "cxa-2011") == "4.1.7; 24.3, 26.4"
    with pytest.raises(ValueError, match="no ruling"):
        ruling_article("forfeit")
    with pytest.raises(UnknownRuleset):
        ruling_article("must_vary", "axf")
    fen = "4k4/9/9/9/9/1c7/R8/9/9/3K5 w - - 0 1"
    positions, _ = line(fen, ["a3a4", "b4b3", "a4a3", "b3b4"] * 3)
    cycle = find_cycle(positions)
    assert cycle is not None and cycle.length == 4 and cycle.stretch_start == 0
    assert repeated_after_order(cycle, ("red", 8), 12)  # told at ply 8, a whole cycle since
    assert not repeated_after_order(cycle, ("red", 9), 12)  # three plies since: not yet
