"""Recording 7.1 / 7.2 / 8.1.6 (2011: 7.1, 7.2, 9.1.7); draw offers 8.1.3 and their order (22.1, 2011 23.1),
agreement 4.2.1; natural-limit claims 4.2.4 / 8.1.4 / 4.1.11 and the five minutes."""

from __future__ import annotations

from xqarb.referee.rules import Move, Position, chinese, wxf

OPENING = ["h2e2", "h9g7", "h0g2", "i9h9", "i0h0", "b9c7", "b0c2", "a9b9", "a0b0", "b7b3"]
LIMIT_FEN = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 118 60"


def _entries(s, side, plies, notation="mixed", bad=()):
    """`side` writes the given plies on its scoresheet (in Chinese, WXF or ICCS), `bad` ones illegibly."""
    p = Position.from_fen(s.lines[0].get("start_fen") or "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/"
                                                          "RNBAKABNR w - - 0 1")
    texts = {}
    for ply, iccs in enumerate(OPENING, start=1):
        m = Move.parse(iccs)
        texts[ply] = [chinese(p, m), wxf(p, m), iccs][ply % 3] if notation == "mixed" else chinese(p, m)
        p = p.play(m)
    for ply in plies:
        s.add("ScoresheetEntry", dt=0.1, side=side, ply=ply, text="??" if ply in bad else texts[ply])


def test_7_1_every_four_unrecorded_moves_is_a_foul_8_1_6(scenario):
    s = scenario(recording_required=True).moves(*OPENING[:7])
    r = s.run()
    fouls = [(f["side"], f["article"], f["ply"]) for f in r.rulings("foul")]
    # Black misses plies 1-4 when it plays ply 6; Red misses plies 1-5 when it plays ply 7.
    assert fouls == [("black", "8.1.6", 6), ("red", "8.1.6", 7)]


def test_7_1_all_recorded_in_any_notation_no_foul_and_not_required_no_foul(scenario):
    s = scenario(recording_required=True)
    for i, iccs in enumerate(OPENING, start=1):
        s.move(iccs)
        if i >= 1:
            _entries(s, "red", [i])
            _entries(s, "black", [i])
    r = s.run()
    assert r.quiet() and len(r.moves) == 10
    assert r.game.to_json()["recording"]["red_recorded"] == list(range(1, 11))
    assert scenario(recording_required=False).moves(*OPENING).run().quiet()


def test_7_2_illegible_entry_counts_as_missing(scenario):
    s = scenario(recording_required=True).moves(*OPENING[:2])
    _entries(s, "red", [1, 2], bad=(2,))
    r = s.run()
    warn = r.rulings("warning", "7.2")
    assert len(warn) == 1 and warn[0]["ply"] == 2 and "cannot be read" in warn[0]["message"]
    assert r.game.to_json()["recording"]["red_recorded"] == [1]
    # An entry naming another move than the one played is no record of it either.
    s = scenario(recording_required=True).moves("h2e2")
    s.add("ScoresheetEntry", side="red", ply=1, text="炮八平五")
    assert "b2e2" in s.run().rulings("warning", "7.2")[0]["message"]


def test_2011_counts_only_four_consecutive_missed_moves(scenario):
    # Red records plies 1, 3 and 5 only; when it plays ply 9 plies 2, 4, 6 and 7 are missing: four in all
    # (2021: one foul) but never four in a row (2011: none).
    results = {}
    for ruleset in ("cxa-2021", "cxa-2011"):
        s = scenario(recording_required=True, ruleset=ruleset)
        _entries(s, "red", [1, 3, 5])
        _entries(s, "black", list(range(1, 10)))
        s.moves(*OPENING[:9])
        results[ruleset] = [(f["article"], f["ply"]) for f in s.run().rulings("foul") if f["side"] == "red"]
    assert results == {"cxa-2021": [("8.1.6", 9)], "cxa-2011": []}
    s = scenario(recording_required=True, ruleset="cxa-2011").moves(*OPENING[:9])
    assert [f["article"] for f in s.run().rulings("foul") if f["side"] == "red"] == ["9.1.7"]  # 1-5 in a row


def test_2011_7_2_under_three_minutes_recording_may_wait(scenario):
    tc = {"scheme": "sudden_death", "base_ms": 170_000}
    r = scenario(recording_required=True, ruleset="cxa-2011", time_control=tc).moves(*OPENING).run()
    assert not r.rulings("foul")
    r = scenario(recording_required=True, time_control=tc).moves(*OPENING).run()
    assert r.rulings("foul", "8.1.6")  # 2021 has no such suspension


def test_draw_offer_in_order_and_accepted_4_2_1(scenario):
    s = scenario().move("h2e2", press=False).add("DrawOffered", side="red").press("red")
    s.add("DrawAnswered", side="black", accepted=True)
    r = s.run()
    assert not r.rulings() and r.ended["result"] == "1/2-1/2" and r.ended["article"] == "4.2.1"
    r = scenario(ruleset="cxa-2011").add("DrawOffered", side="red").add("DrawOffered", side="black").run()
    assert r.ended["article"] == "4.2.2"  # both offered: agreed (2011 numbering)


def test_draw_offer_out_of_order_is_a_warning_and_moving_refuses(scenario):
    s = scenario().add("DrawOffered", side="black")  # in Red's time, not after its own move
    r = s.run()
    assert r.rulings("warning", "22.1") and r.game.offer_pending == "black"
    s.move("h2e2")
    r = s.run()
    assert r.game.offer_pending is None and r.ended is None  # 23.1: Red refused by moving
    s.add("DrawAnswered", side="red", accepted=True)
    r = s.run()
    assert r.attention and r.ended is None  # nothing to accept any more


def test_8_1_3_offers_outnumbering_by_two_and_2011_offering_again_after_refusal(scenario):
    s = scenario()
    for iccs in ("h2e2", "h9g7", "h0g2", "i9h9"):
        side = s.position.side
        s.move(iccs, press=False)
        if side == "red":
            s.add("DrawOffered", side="red")
        s.press(side)
    r = s.run()
    assert [(f["side"], f["article"]) for f in r.rulings("foul")] == [("red", "8.1.3")]
    s = scenario(ruleset="cxa-2011").move("h2e2", press=False).add("DrawOffered", side="red").press("red")
    s.add("DrawAnswered", side="black", accepted=False).move("h9g7")
    s.move("h0g2", press=False).add("DrawOffered", side="red").press("red")
    assert [(f["side"], f["article"]) for f in s.run().rulings("foul")] == [("red", "9.1.3")]


def test_natural_limit_claim_true_is_a_draw_4_2_4(scenario):
    r = scenario(start_fen=LIMIT_FEN).moves("h0g2", "h9g7").add("NaturalLimitClaimed", side="red").run()
    assert r.ended["result"] == "1/2-1/2" and r.ended["article"] == "4.2.4" and not r.rulings()


def test_natural_limit_false_claim_foul_five_minutes_then_4_1_11(scenario):
    s = scenario(start_fen=LIMIT_FEN).move("h0g2").add("NaturalLimitClaimed", side="black", dt=2)
    r = s.run()
    assert [(f["side"], f["article"]) for f in r.rulings("foul")] == [("black", "8.1.4")]
    # Black's clock: 60 minutes, less the 2 s since Red's press, less the five minutes.
    assert r.game.clock.remaining("black", r.game.last_at) == 3_600_000 - 2_000 - 300_000
    s.add("NaturalLimitClaimed", side="black", dt=1)
    r = s.run()
    assert r.ended["result"] == "1-0" and r.ended["article"] == "4.1.11"


def test_natural_limit_rapid_and_overrun_by_the_penalty(scenario):
    rapid_fen = LIMIT_FEN.replace(" 118 60", " 98 50")
    assert scenario(start_fen=rapid_fen, rapid=True).moves("h0g2", "h9g7").add(
        "NaturalLimitClaimed", side="red").run().ended["article"] == "4.2.4"  # 50 rounds in rapid play-offs
    r = scenario(start_fen=rapid_fen, rapid=True).add("NaturalLimitClaimed", side="red").run()
    assert r.ended["result"] == "0-1" and r.ended["ruleset"] == "rapid"  # a false claim loses at once
    r = scenario(start_fen=rapid_fen, rapid=True, ruleset="cxa-2011").add("NaturalLimitClaimed", side="red").run()
    assert r.ended["article"] == "rapid.nl"
    tc = {"scheme": "sudden_death", "base_ms": 200_000}
    r = scenario(start_fen=LIMIT_FEN, time_control=tc).add("NaturalLimitClaimed", side="red").run()
    assert r.rulings("foul", "8.1.4") and r.ended["article"] == "4.1.6"
    r = scenario(start_fen=LIMIT_FEN, ruleset="cxa-2011").add("NaturalLimitClaimed", side="red").add(
        "NaturalLimitClaimed", side="red").run()
    assert [f["article"] for f in r.rulings("foul")] == ["9.1.4", "9.1.4"] and r.ended is None


def test_the_event_may_lower_the_natural_limit(scenario):
    fen = LIMIT_FEN.replace(" 118 60", " 78 40")  # 39 rounds without a capture
    r = scenario(start_fen=fen, natural_limit_rounds=40).moves("h0g2", "h9g7").add(
        "NaturalLimitClaimed", side="red").run()
    assert r.ended["article"] == "4.2.4"
    r = scenario(start_fen=fen).moves("h0g2", "h9g7").add("NaturalLimitClaimed", side="red").run()
    assert r.ended is None and r.rulings("foul", "8.1.4")
