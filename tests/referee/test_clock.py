"""Clocks (6.1-6.5): flag 4.1.6 and 22.5, pressing without moving 8.1.7 / 4.1.9, stopping or starting the clock
8.1.2, late arrival 20.1 / 4.1.7, the device's times beside the model."""

from __future__ import annotations

SUDDEN_MINUTE = {"scheme": "sudden_death", "base_ms": 60_000}


def test_flag_4_1_6_when_the_running_side_has_no_time_left(scenario):
    s = scenario(time_control=SUDDEN_MINUTE).add("HandEntered", dt=59)
    assert s.run().ended is None
    s.add("HandLeft", dt=2)  # any event after the minute shows Red's flag fell
    r = s.run()
    assert r.ended["result"] == "0-1" and r.ended["article"] == "4.1.6"


def test_a_move_after_the_flag_does_not_count(scenario):
    s = scenario(time_control=SUDDEN_MINUTE).move("h2e2", dt=61)
    r = s.run()
    assert r.moves == [] and r.ended["article"] == "4.1.6"


def test_no_flag_when_a_result_already_stands_22_5(scenario):
    s = scenario(time_control=SUDDEN_MINUTE).add("Resigned", side="black", dt=10)
    s.add("HandEntered", dt=120).press("red", dt=1)
    r = s.run()
    assert len(r.of("GameEnded")) == 1 and r.ended["article"] == "4.1.12" and r.ended["result"] == "1-0"
    assert not r.rulings() and not r.attention


def test_6_2_moves_in_time_next_period_added_and_flag_when_moves_not_made(scenario):
    tc = {"scheme": "moves_in_time", "periods": [{"moves": 2, "ms": 20_000}, {"moves": 1, "ms": 10_000,
                                                                                "repeat": True}]}
    s = scenario(time_control=tc)
    s.moves("h2e2", "h9g7", "h0g2")  # Red completes its 2 moves in 11 s: 10 s more for the next period
    r = s.run()
    clock = r.game.to_json()["clock"]
    assert clock["red_period"] == 1 and clock["red_period_moves"] == 0
    assert r.game.clock.red_ms == 20_000 - 11_000 + 10_000
    # Black made one of its two moves and then thinks past its 20 s.
    s.add("HandEntered", dt=30)
    r = s.run()
    assert r.ended["result"] == "1-0" and r.ended["article"] == "4.1.6" and "1 of the 2 moves" in r.ended["reason"]


def test_6_5_handicap_black_base_time(scenario):
    tc = {"scheme": "increment", "base_ms": 600_000, "increment_ms": 0, "black_base_ms": 480_000}
    st = scenario(time_control=tc).run().game.to_json()
    assert st["red_ms"] == 600_000 and st["black_ms"] == 480_000


def test_8_1_7_press_without_moving_foul_then_4_1_9(scenario):
    s = scenario()
    start = s.position.squares()
    s.press("red", dt=3).stable(start)  # pressed, and the board shows no move
    r = s.run()
    assert [(f["side"], f["article"]) for f in r.rulings("foul")] == [("red", "8.1.7")] and r.ended is None
    s.press("black", dt=2)  # Black presses back without moving: its own 8.1.7 (settled by the next press)
    s.moves("h2e2", "h9g7")
    r = s.run()
    assert [(f["side"], f["article"]) for f in r.rulings("foul")] == [("red", "8.1.7"), ("black", "8.1.7")]
    s.press("red", dt=2).press("black", dt=2)  # Red presses again without moving: the second time loses
    r = s.run()
    assert r.ended["result"] == "0-1" and r.ended["article"] == "4.1.9"


def test_press_without_moving_rapid_loses_at_once_and_2011_only_warns(scenario):
    s = scenario(rapid=True)
    r = s.press("red", dt=3).stable(s.position.squares()).run()
    assert r.ended["article"] == "4.1.9" and r.ended["ruleset"] == "rapid"
    s = scenario(ruleset="cxa-2011")
    r = s.press("red", dt=3).stable(s.position.squares()).run()
    assert r.ended is None and not r.rulings("foul") and r.rulings("warning", "6")
    s = scenario(ruleset="cxa-2011", rapid=True)  # the play-off rules on the older edition: rapid.3
    r = s.press("red", dt=3).stable(s.position.squares()).run()
    assert r.ended["article"] == "rapid.3" and r.ended["ruleset"] == "rapid"


def test_press_before_the_camera_sees_the_move_is_no_foul(scenario):
    s = scenario()
    s.press("red", dt=5)  # the hand left and pressed before the board was still for the camera
    s.move("h2e2", press=False, dt=0.3)
    s.move("h9g7")
    r = s.run()
    assert r.moves == ["h2e2", "h9g7"] and r.quiet()
    assert r.game.clock.red_ms == 3_600_000 - 5_000 + 30_000  # the increment was credited when the move was seen


def test_press_well_before_a_move_nobody_was_making_is_8_1_7(scenario):
    # 8.1.7: Red presses; no hand is over the board; the camera first shows Red's move 5 s later (past the
    # 3 s grace): the press was made before moving. The move still stands, counted for that press.
    s = scenario()
    s.press("red", dt=3)
    s.move("h2e2", press=False, dt=5)
    s.move("h9g7")
    r = s.run()
    assert [(f["side"], f["article"]) for f in r.rulings("foul")] == [("red", "8.1.7")]
    assert r.moves == ["h2e2", "h9g7"] and r.ended is None and not r.attention
    # A hand seen only after the press (reaching in to move after pressing) does not excuse it either.
    s = scenario()
    s.press("red", dt=3).add("HandEntered", dt=1).add("PieceLifted", point="h2", dt=0.5)
    s.move("h2e2", press=False, dt=3.5)
    assert [(f["side"], f["article"]) for f in s.run().rulings("foul")] == [("red", "8.1.7")]


def test_press_while_the_move_was_under_way_is_its_own_press_however_late_the_camera(scenario):
    # The hand was over the board and the piece placed before the press: the move was made, then the clock
    # pressed; the camera only calls the board still seconds later (a hand lingering near the edge).
    s = scenario()
    s.add("HandEntered", dt=2).add("PieceLifted", point="h2", dt=0.5).add("PiecePlaced", point="e2", dt=1)
    s.press("red", dt=0.5)
    s.move("h2e2", press=False, dt=6)
    s.move("h9g7")
    r = s.run()
    assert r.moves == ["h2e2", "h9g7"] and r.quiet()


def test_the_grace_for_a_late_camera_is_part_of_the_time_control(scenario):
    tc = {"scheme": "increment", "base_ms": 3_600_000, "increment_ms": 30_000, "press_grace_ms": 8_000}
    s = scenario(time_control=tc)
    s.press("red", dt=3)
    s.move("h2e2", press=False, dt=5)  # 5 s: within this venue's 8 s
    r = s.run()
    assert r.moves == ["h2e2"] and r.quiet()
    bad = scenario(time_control={**tc, "press_grace_ms": -1}).run()
    assert bad.attention and "press_grace_ms" in bad.attention[0], bad.attention


def test_8_1_2_stopping_or_starting_the_clock_without_permission(scenario):
    s = scenario().add("ClockPaused", by="arbiter", dt=5).add("ClockResumed", by="arbiter", dt=60)
    r = s.run()
    assert not r.rulings()
    assert r.game.clock.remaining("red", r.game.last_at) == 3_600_000 - 5_000  # paused time is not charged
    s.add("ClockPaused", by="red", dt=1).add("ClockResumed", by="black", dt=1)
    r = s.run()
    assert [(f["side"], f["article"]) for f in r.rulings("foul")] == [("red", "8.1.2"), ("black", "8.1.2")]
    r = scenario(ruleset="cxa-2011").add("ClockPaused", by="red").run()
    assert r.rulings("foul", "9.1.2")


def test_late_arrival_4_1_7_and_not_when_the_player_came_in_time(scenario):
    r = scenario().add("HandLeft", dt=15 * 60 + 1).run()
    assert r.ended["result"] == "0-1" and r.ended["article"] == "4.1.7"
    r = scenario().move("h2e2", dt=14 * 60).add("HandLeft", dt=30).run()
    assert r.ended is None and r.moves == ["h2e2"]
    # Black's clock runs from Red's press; Black not there 15 minutes after the start forfeits.
    r = scenario().move("h2e2", dt=14 * 60).add("HandLeft", dt=10 * 60).run()
    assert r.ended["result"] == "1-0" and r.ended["article"] == "4.1.7"
    tc = {"scheme": "increment", "base_ms": 3_600_000, "increment_ms": 0, "late_forfeit_ms": 300_000}
    r = scenario(time_control=tc).move("h2e2", dt=6 * 60).run()
    assert r.ended["article"] == "4.1.7" and r.moves == []
    r = scenario(ruleset="cxa-2011").add("HandLeft", dt=16 * 60).run()
    assert r.ended["article"] == "4.1.5"


def test_device_times_kept_beside_the_model_and_a_warning_when_they_drift(scenario):
    s = scenario().move("h2e2", press=False)
    s.press("red", red_ms=3_600_000 - 5_500 + 30_000 + 400, black_ms=3_600_000)  # within tolerance
    r = s.run()
    assert not r.rulings() and r.game.to_json()["clock"]["device_red_ms"] == 3_624_900
    s.move("h9g7", press=False)
    s.press("black", red_ms=3_624_500, black_ms=3_600_000 - 5_500 + 30_000 - 12_000)  # 12 s out
    r = s.run()
    warn = r.rulings("warning", "6")
    assert len(warn) == 1 and "12000 ms" in warn[0]["message"]


def test_clock_press_on_a_board_with_no_game_is_attention(scenario):
    s = scenario(start=False).press("red")
    r = s.run()
    assert r.attention and "no game" in r.attention[0] and r.game is None and r.game_ids == [None]


def test_rapid_pressing_after_knocking_pieces_over_loses(scenario):
    s = scenario(rapid=True)
    sq = list(s.position.squares())
    sq[(9 - 0) * 9 + 1], sq[(9 - 0) * 9 + 2] = ".", "."  # Red's b0 horse and c0 elephant knocked off
    s.stable("".join(sq), dt=3).press("red")
    r = s.run()
    assert r.attention and r.ended["result"] == "0-1" and r.ended["ruleset"] == "rapid"
    assert r.ended["article"] == "rapid.2"
    s = scenario()  # slow play: the board is restored in the offender's time (5.9), no loss
    s.stable("".join(sq), dt=3).press("red")
    assert s.run().ended is None


def test_deadline_says_when_the_flag_falls(scenario):
    r = scenario(time_control={"scheme": "sudden_death", "base_ms": 60_000}).move("h2e2").run()
    g = r.game  # Red pressed at 5.5 s; Black's minute runs from there
    assert g.deadline() == g.started_at + 5_500_000 + 60_000_000
    late = scenario().run().game  # nobody has arrived: the late limit (15 minutes) comes first
    assert late.deadline() == late.started_at + 900_000_000 + 1
    s = scenario(time_control={"scheme": "sudden_death", "base_ms": 60_000}).move("h2e2")
    s.add("HandLeft", dt=(g.deadline() - g.last_at) / 1e6 + 0.001)
    assert s.run().ended["article"] == "4.1.6"
    assert s.run().game.deadline() is None
