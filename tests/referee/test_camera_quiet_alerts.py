"""A board whose camera went quiet (issue 38 item 3): vision reports CameraQuiet when a board's camera has sent no
frame for its setting, and again (`back`) when frames come; the fold raises AttentionNeeded `kind: camera_quiet`
once per silence, naming the board and since when, and a `camera_back` notice when the silence it told ends.

T0 is 2026-01-01 00:00:00 UTC; the last frame before the silence was captured 10 s after it."""

from __future__ import annotations

from tests.referee.conftest import T0

SINCE = T0 + 10_000_000


def _quiet(s, dt: float, back: bool = False):
    return s.add("CameraQuiet", dt=dt, since=SINCE, quiet_ms=20_000, back=back)


def _kinds(r):
    return [a["kind"] for a in r.of("AttentionNeeded")]


def test_frames_stop_then_resume_alert_then_notice(scenario):
    s = _quiet(scenario().moves("h2e2"), dt=30)
    r = s.run()
    [alert] = r.of("AttentionNeeded")
    assert alert["kind"] == "camera_quiet" and alert["side"] is None
    assert "board b1" in alert["reason"] and "since 2026-01-01 00:00:10 UTC" in alert["reason"]
    assert "more than 20 s" in alert["reason"]
    [pending] = [p for p in r.game.to_json()["pending"] if p["kind"] == "camera_quiet"]
    assert (pending["since"], pending["quiet_ms"]) == (SINCE, 20_000)
    assert _kinds(_quiet(s, dt=5).run()) == ["camera_quiet"]  # the same silence reported again: told once
    r = _quiet(s, dt=9.5, back=True).run()  # frames again at 50 s, 40 s after the last
    assert _kinds(r) == ["camera_quiet", "camera_back"]
    back = r.of("AttentionNeeded")[-1]["reason"]
    assert "frames come again from 2026-01-01 00:00:50 UTC after 40 s" in back
    assert not [p for p in r.game.to_json()["pending"] if p["kind"] == "camera_quiet"]
    assert r.moves == ["h2e2"] and r.ended is None


def test_frames_back_without_a_told_silence_say_nothing(scenario):
    assert _kinds(_quiet(scenario(), dt=30, back=True).run()) == []


def test_acknowledged_silence_leaves_the_list_and_still_gets_its_notice(scenario):
    s = _quiet(scenario(), dt=30)
    alert_id = next(o.event_id for o in s.run().outputs if o.type == "AttentionNeeded")
    s.add("ArbiterDecision", result="", article="", action="overrule", alert=alert_id)
    r = s.run()
    assert not [p for p in r.game.to_json()["pending"] if p["kind"] == "camera_quiet"]
    assert _kinds(_quiet(s, dt=5, back=True).run()) == ["camera_quiet", "camera_back"]


def test_no_game_or_a_result_no_alert(scenario):
    r = _quiet(scenario(start=False), dt=30).run()
    assert r.outputs == [] and r.game is None
    s = scenario().add("Resigned", side="red")
    assert _kinds(_quiet(s, dt=30).run()) == []
