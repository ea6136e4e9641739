"""23.3 / 4.2.4: the arbiter is told when the natural move limit (自然限着) is coming due (NATURAL_LIMIT_NOTICE_ROUNDS
before it) and when it is reached, once each per stretch without a capture; a confirmation ends the game drawn."""

from __future__ import annotations

from xqarb.referee.game import NATURAL_LIMIT_NOTICE_ROUNDS

# The start position with 106 plies (53 rounds) already played without a capture.
NEAR_FEN = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 106 54"
# Horses out and back: no capture, no repetition within the first eight plies.
SHUFFLE = ["h0g2", "h9g7", "b0c2", "b9c7", "g2h0", "g7h9", "c2b0", "c7b9"]


def _notices(r):
    return [a for a in r.of("AttentionNeeded") if a["kind"] == "natural_limit"]


def test_coming_due_then_reached_each_told_once(scenario):
    assert NATURAL_LIMIT_NOTICE_ROUNDS == 5
    s = scenario(start_fen=NEAR_FEN).moves(*SHUFFLE[:3])  # 54.5 rounds: not yet due
    assert not _notices(s.run())
    s.moves(SHUFFLE[3])  # 55 rounds: 5 to go
    r = s.run()
    n = _notices(r)
    assert len(n) == 1 and (n[0]["outcome"], n[0]["result"], n[0]["article"]) == ("", "", "4.2.4")
    assert "coming due" in n[0]["reason"] and "55 of 60 rounds" in n[0]["reason"] and "5 more rounds" in n[0]["reason"]
    s.moves(*SHUFFLE[4:])  # 57 rounds: no second notice
    assert len(_notices(s.run())) == 1
    s.moves("h0i2", "h9i7", "i2h0", "i7h9", "b0a2", "b9a7")  # 60 rounds
    r = s.run()
    n = _notices(r)
    assert [x["outcome"] for x in n] == ["", "draw"] and n[1]["result"] == "1/2-1/2"
    assert "reached" in n[1]["reason"] and "60 of 60 rounds" in n[1]["reason"] and r.ended is None
    assert r.game.to_json()["pending"][-1] == {"kind": "natural_limit", "alert": r.game.limit_alert,
                                              "reached": True, "article": "4.2.4"}
    s.moves("a2b0", "a7b9")
    assert len(_notices(s.run())) == 2  # past the limit: nothing more until a claim or a decision


def test_confirming_the_reached_limit_ends_the_game_drawn_4_2_4(scenario):
    s = scenario(start_fen=NEAR_FEN).moves(*SHUFFLE, "h0i2", "h9i7", "i2h0", "i7h9", "b0a2", "b9a7")
    r = s.run()
    alert = next(o.event_id for o in r.outputs if o.type == "AttentionNeeded" and o.data["kind"] == "natural_limit"
                 and o.data["outcome"] == "draw")
    s.add("ArbiterDecision", result="", article="4.2.4", action="confirm", alert=alert, claimed_by="red")
    r = s.run()
    assert r.ended["result"] == "1/2-1/2" and r.ended["article"] == "4.2.4"
    assert "confirmed by the arbiter (claimed by red)" in r.ended["reason"]


def test_confirming_before_the_limit_is_attention_and_overruling_clears_the_notice(scenario):
    s = scenario(start_fen=NEAR_FEN).moves(*SHUFFLE[:4])
    s.add("ArbiterDecision", result="", article="4.2.4", action="confirm")  # the open notice, unnamed
    r = s.run()
    assert r.ended is None and "not reached" in r.attention[-1]
    s.add("ArbiterDecision", result="", article="4.2.4", action="overrule")
    r = s.run()
    assert [(x["kind"], x["article"]) for x in r.rulings()] == [("correction", "4.2.4")]
    assert r.game.limit_alert is None and all(p["kind"] != "natural_limit" for p in r.game.to_json()["pending"])


def test_a_capture_starts_a_new_count_and_the_event_may_lower_the_limit(scenario):
    s = scenario(natural_limit_rounds=6).moves("h2e2", "h9g7")  # one round of six: five to go
    r = s.run()
    assert len(_notices(r)) == 1 and r.game.limit_alert is not None
    s.moves("e2e6")  # the cannon takes a pawn: a new stretch, the notice is moot
    r = s.run()
    assert r.game.limit_alert is None and len(_notices(r)) == 1
    s.moves("g7e6", "h0g2")  # the horse takes back (again a new stretch), then one round
    r = s.run()
    assert len(_notices(r)) == 1
    s.moves("i9h9")
    r = s.run()
    assert len(_notices(r)) == 2 and "1 of 6 rounds" in _notices(r)[1]["reason"]


def test_the_2011_edition_and_rapid_play_offs_count_their_own_limit(scenario):
    rapid_near = NEAR_FEN.replace(" 106 54", " 86 44")  # 43 rounds; rapid play-offs: 50
    r = scenario(start_fen=rapid_near, rapid=True).moves(*SHUFFLE[:4]).run()
    n = _notices(r)
    assert len(n) == 1 and "45 of 50 rounds" in n[0]["reason"]
    r = scenario(start_fen=NEAR_FEN, ruleset="cxa-2011").moves(*SHUFFLE[:4]).run()
    assert len(_notices(r)) == 1 and _notices(r)[0]["article"] == "4.2.4"
