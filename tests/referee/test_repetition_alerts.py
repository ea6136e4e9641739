"""23.2: the arbiter steps in unasked, so a repeating cycle found live raises AttentionNeeded (kind repetition)
naming each side's moves (25.2), the ruling it points to and its articles, once per cycle; the arbiter's
ArbiterDecision confirms it (4.1.4 ends the game), overrules it, or orders a side to vary (4.1.5 then on its own).
pyffish (Fairy-Stockfish) is the oracle for when a cycle has come round three times."""

from __future__ import annotations

import pytest

from xqarb.events import make_event

sf = pytest.importorskip("pyffish")

CHECKS_FEN = "4k4/8R/9/9/9/9/9/9/9/3K5 w - - 0 1"  # Red's rook checks from i9 and i8 by turns
CHECKS = ["i8i9", "e9e8", "i9i8", "e8e9"]
CHASE_FEN = "4k4/9/9/9/9/1c7/R8/9/9/3K5 w - - 0 1"  # Red's rook chases Black's unprotected cannon
CHASE = ["a3a4", "b4b3", "a4a3", "b3b4"]
IDLE = ["h0g2", "h9g7", "g2h0", "g7h9"]
# Red's rook follows an elephant: 27.3 may make it idle (a key defensive point): the referee refers it.
ELEPHANT_FEN = "2bakab2/9/9/9/9/9/8R/9/9/3K5 w - - 0 1"
ELEPHANT = ["i3g3", "g9i7", "g3i3", "i7g9"]


def _alerts(r):
    return [a for a in r.of("AttentionNeeded") if a["kind"] == "repetition"]


def _alert_id(r) -> str:
    ids = [o.event_id for o in r.outputs if o.type == "AttentionNeeded" and o.data["kind"] == "repetition"]
    assert len(ids) == 1, ids
    return ids[0]


def _pyffish_repetition_ply(fen: str, moves: list[str]) -> int | None:
    """The first ply after which pyffish sees the game end by repetition (None: never)."""
    def uci(m: str) -> str:
        return f"{m[0]}{int(m[1]) + 1}{m[2]}{int(m[3]) + 1}"
    for n in range(1, len(moves) + 1):
        if sf.is_optional_game_end("xiangqi", fen, [uci(m) for m in moves[:n]])[0]:
            return n
    return None


def test_perpetual_check_is_alerted_once_with_its_classification_and_ruling(scenario):
    s = scenario(start_fen=CHECKS_FEN).moves(*CHECKS * 3)  # six checks round one cycle, and more
    r = s.run()
    alerts = _alerts(r)
    assert len(alerts) == 1 and r.ended is None, r.describe()
    a = alerts[0]
    assert a["patterns"] == {"red": "长将", "black": "闲"}
    assert (a["outcome"], a["side"], a["result"]) == ("loss", "red", "0-1")
    assert a["article"].startswith("4.1.4") and "4.1.4" in a["reason"] and "长将" in a["reason"]
    assert "i8i9 将" in a["reason"] and "e9e8 闲" in a["reason"]
    # Raised by the move that brought the position round the third time, where pyffish also sees the repetition.
    moved = [o for o in r.outputs if o.type == "MoveMade"]
    alert_at = next(i for i, o in enumerate(r.outputs) if o.type == "AttentionNeeded")
    assert sum(1 for o in r.outputs[:alert_at] if o.type == "MoveMade") == 8 == _pyffish_repetition_ply(
        CHECKS_FEN, CHECKS * 3)
    assert len(moved) == 12
    # Its evidence: the camera's still board that showed the move, and its frame.
    stables = {e.event_id for e in s.events() if e.type == "BoardStable"}
    assert a["evidence"][0] in stables and a["evidence"][1] == "f" * 64
    state = r.game.to_json()
    assert state["pending"][0]["kind"] == "repetition" and state["pending"][0]["alert"]["outcome"] == "loss"


def test_the_alert_is_a_valid_event_of_its_schema(scenario):
    r = scenario(start_fen=CHECKS_FEN).moves(*CHECKS * 2).run()
    out = next(o for o in r.outputs if o.type == "AttentionNeeded")
    again = make_event("AttentionNeeded", out.board_id, source=out.source, source_seq=out.source_seq,
                       occurred_at=out.occurred_at, received_at=out.received_at, **dict(out.data))
    assert dict(again.data) == dict(out.data)


def test_confirming_a_perpetual_check_ends_the_game_4_1_4(scenario):
    s = scenario(start_fen=CHECKS_FEN).moves(*CHECKS * 2)
    alert = _alert_id(s.run())
    s.add("ArbiterDecision", result="", article="23", action="confirm", alert=alert, claimed_by="black")
    r = s.run()
    assert r.ended["result"] == "0-1" and r.ended["article"].startswith("4.1.4")
    assert "confirmed by the arbiter" in r.ended["reason"] and "claimed by black" in r.ended["reason"]
    assert r.game.repetition_alert is None


def test_overruling_lets_play_go_on_and_the_same_cycle_is_not_alerted_again(scenario):
    s = scenario(start_fen=CHECKS_FEN).moves(*CHECKS * 2)
    alert = _alert_id(s.run())
    s.add("ArbiterDecision", result="", article="23", action="overrule", alert=alert)
    s.moves(*CHECKS * 2)
    r = s.run()
    assert r.ended is None and len(_alerts(r)) == 1
    assert [(x["kind"], x["article"]) for x in r.rulings()] == [("correction", "23")]
    assert "overrules" in r.rulings()[0]["message"] and r.game.repetition_alert is None


def test_idle_cycle_points_to_a_draw_in_either_edition(scenario):
    r = scenario().moves(*IDLE * 2).run()
    a = _alerts(r)
    assert len(a) == 1 and (a[0]["outcome"], a[0]["result"], a[0]["side"]) == ("draw", "1/2-1/2", None)
    assert a[0]["patterns"] == {"red": "闲", "black": "闲"} and a[0]["article"].startswith("4.2.3")
    r = scenario(ruleset="cxa-2011").moves(*IDLE * 2).run()
    a = _alerts(r)
    assert len(a) == 1 and a[0]["article"] == "4.2.3; 24.2, 26.2" and "(24)" in a[0]["reason"]
    s = scenario(ruleset="cxa-2011").moves(*IDLE * 2)
    r = s.add("ArbiterDecision", result="", article="24", action="confirm").run()  # the open alert, unnamed
    assert r.ended["result"] == "1/2-1/2" and r.ended["article"] == "4.2.3; 24.2, 26.2"


def test_confirming_a_chase_orders_the_chaser_to_vary_and_once_more_loses_4_1_5(scenario):
    s = scenario(start_fen=CHASE_FEN).moves(*CHASE * 2)
    r = s.run()
    a = _alerts(r)
    assert len(a) == 1 and (a[0]["outcome"], a[0]["side"], a[0]["result"]) == ("must_vary", "red", "")
    assert a[0]["patterns"] == {"red": "长捉", "black": "闲"}
    s.add("ArbiterDecision", result="", article="23", action="confirm", alert=_alert_id(r))
    r = s.run()
    assert [(x["kind"], x["side"]) for x in r.rulings()] == [("obligation", "red")] and r.ended is None
    s.moves(*CHASE)
    r = s.run()
    assert r.ended["result"] == "0-1" and r.ended["article"].startswith("4.1.5")


def test_a_cycle_referred_to_the_arbiter_cannot_be_confirmed_but_a_side_can_be_ordered_to_vary(scenario):
    s = scenario(start_fen=ELEPHANT_FEN).moves(*ELEPHANT * 2)
    r = s.run()
    a = _alerts(r)
    assert len(a) == 1 and (a[0]["outcome"], a[0]["side"], a[0]["result"]) == ("judgment", None, "")
    assert a[0]["patterns"] == {"red": "长捉", "black": "闲"} and "arbiter must judge" in a[0]["reason"]
    alert = _alert_id(r)
    s.add("ArbiterDecision", result="", article="23", action="confirm", alert=alert)
    r = s.run()
    assert r.ended is None and "nothing to confirm" in r.attention[-1]
    s.add("ArbiterDecision", result="", article="23", action="vary", side="red", alert=alert)
    r = s.run()
    vary = r.rulings("obligation")
    assert [(x["side"], x["article"]) for x in vary] == [("red", "23, 25 (4.1.5 if the cycle repeats once more)")]
    s.moves(*ELEPHANT[:3])
    assert s.run().ended is None  # not yet a whole cycle since the order
    s.moves(ELEPHANT[3])
    r = s.run()
    assert r.ended["result"] == "0-1" and r.ended["article"].startswith("4.1.5") and "arbiter" in r.ended["reason"]


def test_a_side_that_varies_after_the_order_plays_on(scenario):
    s = scenario(start_fen=ELEPHANT_FEN).moves(*ELEPHANT * 2)
    s.add("ArbiterDecision", result="", article="23", action="vary", side="red")
    s.moves("i3h3", "g9i7", "h3i3")  # Red varies: the rook goes round another way
    r = s.run()
    assert r.ended is None and r.game.vary_forced


def test_decisions_that_cannot_apply_get_attention_and_change_nothing(scenario):
    s = scenario(start_fen=CHECKS_FEN).moves(*CHECKS * 2)
    s.add("ArbiterDecision", result="", article="23", action="confirm", alert="ref-not-this-one")
    s.add("ArbiterDecision", result="", article="23", action="vary")  # no side
    s.add("ArbiterDecision", result="", article="23", action="pardon")
    r = s.run()
    assert r.ended is None and r.game.repetition_alert is not None and r.game.vary_order is None
    assert len(r.attention) == 4  # the alert, then one for each decision
    assert "ref-not-this-one" in r.attention[1] and "red or black" in r.attention[2] and "pardon" in r.attention[3]
    r = scenario().moves("h2e2").add("ArbiterDecision", result="", article="23", action="overrule").run()
    assert r.attention and "no repeating cycle" in r.attention[0] and not r.rulings()


def test_a_result_from_the_arbiter_overrules_the_alert(scenario):
    s = scenario(start_fen=CHECKS_FEN).moves(*CHECKS * 2)
    r = s.add("ArbiterDecision", result="1/2-1/2", article="4.2.3", action="overrule", claimed_by="red").run()
    assert r.ended["result"] == "1/2-1/2" and r.ended["article"] == "4.2.3" and "claimed by red" in r.ended["reason"]


def test_alerts_are_deterministic(scenario):
    s = scenario(start_fen=CHASE_FEN).moves(*CHASE * 3)
    assert s.run().describe() == s.run().describe()



def test_the_arbiter_may_name_one_move_otherwise_and_confirm_the_ruling_that_follows(scenario):
    # 27.3: the arbiter finds Red's rook holds a key defensive point: its chase of the elephant at ply 5 is idle.
    s = scenario(start_fen=ELEPHANT_FEN).moves(*ELEPHANT * 2)
    r = s.run()
    alert = _alert_id(r)
    moves = r.game.repetition_alert.to_json()["moves"]
    assert [(m["ply"], m["side"], m["iccs"], m["term"]) for m in moves] == [
        (5, "red", "i3g3", "捉"), (6, "black", "g9i7", "闲"), (7, "red", "g3i3", "捉"), (8, "black", "i7g9", "闲")]
    s.add("ArbiterDecision", result="", article="27.3", action="reclassify", ply=5, term="闲", alert=alert)
    r = s.run()
    fix = r.rulings("correction")
    assert len(fix) == 1 and fix[0]["side"] == "red" and fix[0]["article"].startswith("4.2.3")
    assert "red 1捉1闲 (允许着法)" in fix[0]["message"] and "draw" in fix[0]["message"]
    opened = r.game.repetition_alert
    assert (opened.alert_id, opened.outcome, opened.result) == (alert, "draw", "1/2-1/2")
    s.add("ArbiterDecision", result="", article="23", action="confirm", alert=alert)
    r = s.run()
    assert r.ended["result"] == "1/2-1/2" and r.ended["article"].startswith("4.2.3")


def test_renaming_the_idle_side_s_move_a_chase_makes_both_forbidden_a_draw(scenario):
    s = scenario(start_fen=CHASE_FEN).moves(*CHASE * 2)
    s.add("ArbiterDecision", result="", article="23", action="reclassify", ply=6, term="捉")
    s.add("ArbiterDecision", result="", article="23", action="reclassify", ply=8, term="捉")
    r = s.run()
    assert r.game.repetition_alert.outcome == "draw"
    assert dict(r.game.repetition_alert.patterns) == {"red": "长捉", "black": "长捉"}
    s.add("ArbiterDecision", result="", article="23", action="reclassify", ply=3, term="捉")  # not in the cycle
    s.add("ArbiterDecision", result="", article="23", action="reclassify", ply=5, term="吃")  # no such term
    r = s.run()
    assert "not a move of the repeating cycle" in r.attention[-2] and "needs a term" in r.attention[-1]
