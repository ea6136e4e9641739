"""A flag about to fall (4.1.6, issue 38 item 3): the referee service records a ClockCheck at the moment the running
side's remaining time reaches the flag-warning setting (watch.flag_check_due); the fold raises AttentionNeeded
`kind: flag` if that side is still running at or below it, once per side and time period, and nothing otherwise.

The games: sudden death, 2 minutes each (6.3), warning at 1 minute; the scenario starts at T0, Red's clock running.
"""

from __future__ import annotations

import io
from contextlib import redirect_stdout
from pathlib import Path

from tests.referee.conftest import T0
from xqarb.cli import main
from xqarb.referee.watch import flag_check_due

TWO_MINUTES = {"scheme": "sudden_death", "base_ms": 120_000}
WARN_MS = 60_000


def _flags(r):
    return [a for a in r.of("AttentionNeeded") if a["kind"] == "flag"]


def _check(s, side: str, at_s: float):
    """A ClockCheck for `side` at `at_s` seconds after the start (as the service records it)."""
    return s.add("ClockCheck", dt=at_s - s.t, game_id="g1", side=side, warn_ms=WARN_MS)


def test_the_check_is_due_when_the_running_side_reaches_the_setting(scenario):
    s = scenario(time_control=TWO_MINUTES)
    g = s.run().game
    assert flag_check_due(g.clock, g.watch, g.last_at, WARN_MS) == (T0 + 60_000_000, "red")
    s.moves("h2e2")  # red pressed 5.5 s in: black's two minutes run from there
    g = s.run().game
    assert flag_check_due(g.clock, g.watch, g.last_at, WARN_MS) == (T0 + 5_500_000 + 60_000_000, "black")


def test_a_check_below_the_setting_raises_one_alert_naming_side_time_control_and_article(scenario):
    s = _check(scenario(time_control=TWO_MINUTES), "red", 61)
    r = s.run()
    [alert] = _flags(r)
    assert (alert["side"], alert["article"], alert["outcome"], alert["result"]) == ("red", "4.1.6", "", "")
    assert "0:59 left" in alert["reason"] and "2:00 for all moves (6.3)" in alert["reason"]
    assert "red loses on time (4.1.6)" in alert["reason"]
    [pending] = [p for p in r.game.to_json()["pending"] if p["kind"] == "flag"]
    alert_id = next(o.event_id for o in r.outputs if o.type == "AttentionNeeded")
    assert (pending["alert"], pending["remaining_ms"], pending["warn_ms"]) == (alert_id, 59_000, WARN_MS)
    # Told once in the period: a second check (a restarted service) says nothing, and none is due any more.
    r = _check(s, "red", 70).run()
    assert len(_flags(r)) == 1
    assert flag_check_due(r.game.clock, r.game.watch, r.game.last_at, WARN_MS) is None


def test_a_move_before_the_check_makes_it_nothing(scenario):
    s = scenario(time_control=TWO_MINUTES).moves("h2e2")
    r = _check(s, "red", 61).run()  # red pressed at 5.5 s: black runs, with 64.5 s left of its own two minutes
    assert r.of("AttentionNeeded") == [] and r.of("Ruling") == []
    r = _check(s, "black", 64).run()  # black has 61.5 s left: above the setting
    assert r.of("AttentionNeeded") == []


def test_a_paused_clock_gets_no_warning(scenario):
    s = scenario(time_control=TWO_MINUTES).add("ClockPaused", dt=30, by="arbiter")
    r = _check(s, "red", 100).run()
    assert _flags(r) == []


def test_a_check_after_the_time_ran_out_rules_the_flag(scenario):
    r = _check(scenario(time_control=TWO_MINUTES), "red", 121).run()
    assert _flags(r) == []
    assert r.ended["result"] == "0-1" and r.ended["article"] == "4.1.6"


def test_once_per_period_of_moves(scenario):
    # 6.2: one move in the first 2 minutes, then 2 minutes for each further move.
    tc = {"scheme": "moves_in_time", "periods": [{"moves": 1, "ms": 120_000}, {"moves": 1, "ms": 120_000,
                                                                                 "repeat": True}]}
    s = _check(scenario(time_control=tc), "red", 61)
    assert "period 1: 1 moves in 2:00, 0 made (6.2)" in _flags(s.run())[0]["reason"]
    # Red presses at 62 s with 58 s left and gets the second period's 2 minutes: 178 s, running again from 63.5 s
    # after black's move; its second warning is due at 63.5 + 118 = 181.5 s.
    s.move("h2e2", dt=0.5).move("h9g7", dt=1)
    g = s.run().game
    assert flag_check_due(g.clock, g.watch, g.last_at, WARN_MS) == (T0 + 181_500_000, "red")
    flags = _flags(_check(s, "red", 181.5).run())
    assert [f["side"] for f in flags] == ["red", "red"] and "1:00 left (period 2: 1 moves in 2:00" in flags[1]["reason"]


def test_acknowledging_clears_the_alert_and_confirming_is_refused(scenario):
    s = _check(scenario(time_control=TWO_MINUTES), "red", 61)
    r = s.run()
    alert_id = next(o.event_id for o in r.outputs if o.type == "AttentionNeeded")
    s.add("ArbiterDecision", result="", article="4.1.6", action="confirm", alert=alert_id)
    r = s.run()
    assert "does not apply" in r.attention[-1] and any(p["kind"] == "flag" for p in r.game.to_json()["pending"])
    n = len(r.outputs)
    s.add("ArbiterDecision", result="", article="4.1.6", action="overrule", alert=alert_id)
    r = s.run()
    assert len(r.outputs) == n and r.ended is None  # acknowledged: nothing ruled, play goes on
    assert not [p for p in r.game.to_json()["pending"] if p["kind"] == "flag"]


def test_the_same_inputs_give_the_same_bytes(scenario, tmp_path: Path):
    s = _check(scenario(time_control=TWO_MINUTES).moves("h2e2", "h9g7"), "red", 75)
    path = tmp_path / "flag.jsonl"
    path.write_text(s.jsonl(), encoding="utf-8")
    runs = []
    for _ in range(2):
        out = io.StringIO()
        with redirect_stdout(out):
            main(["referee", "run", str(path), "--json"])
        runs.append(out.getvalue().encode())
    assert runs[0] == runs[1] and b'"kind":"flag"' in runs[0]
