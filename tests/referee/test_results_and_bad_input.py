"""Fouls 4.1.10, resignation 4.1.12 and 8.2's waiver, arbiter decisions and reported fouls, 棋例 rulings on
request (4.1.4 / 4.1.5 / 4.2.3), and bad input: attention or a clear error, and the fold goes on."""

from __future__ import annotations

PERPETUAL_FEN = "4k4/9/9/9/9/9/9/9/9/R2K5 w - - 0 1"
PERPETUAL = ["a0a9"] + ["e9e8", "a9a8", "e8e9", "a8a9"] * 2  # the position after a0a9 comes round thrice
CHASE_FEN = "4k4/9/9/9/9/1c7/R8/9/9/3K5 w - - 0 1"  # Red's rook chases Black's unprotected cannon
CHASE = ["a3a4", "b4b3", "a4a3", "b3b4"] * 2
IDLE = ["h0g2", "h9g7", "g2h0", "g7h9"] * 2


def test_three_fouls_lose_4_1_10_and_rapid_two(scenario):
    s = scenario()
    for _ in range(3):
        s.add("FoulReported", side="black", article="8.1.1", note="disturbing the opponent")
    r = s.run()
    assert len(r.rulings("foul", "8.1.1")) == 3 and r.ended["result"] == "1-0" and r.ended["article"] == "4.1.10"
    r = scenario(rapid=True).add("FoulReported", side="red", article="8.1.9").add(
        "FoulReported", side="red", article="8.1.9").run()
    assert r.ended["article"] == "4.1.10" and r.ended["ruleset"] == "rapid"
    r = scenario(ruleset="cxa-2011").add("FoulReported", side="red", article="9.1.1").add(
        "FoulReported", side="red", article="9.1.1").run()
    assert r.ended is None  # two fouls are not three
    s = scenario(ruleset="cxa-2011")
    for _ in range(3):
        s.add("FoulReported", side="red", article="9.1.1")
    assert s.run().ended["article"] == "4.1.8"


def test_resignation_4_1_12_and_8_2_waiver_when_resigning_at_once(scenario):
    r = scenario().move("h2e2").add("Resigned", side="black").run()
    assert r.ended == {**r.ended, "result": "1-0", "article": "4.1.12"}
    assert scenario(ruleset="cxa-2011").add("Resigned", side="red").run().ended["article"] == "4.1.9"
    r = scenario().add("FoulReported", side="red", article="8.1.1").add("Resigned", side="red").run()
    assert r.rulings("correction", "8.2") and r.ended["article"] == "4.1.12"
    assert r.game.to_json()["fouls"]["red"][0]["waived"] is True
    # Not at once (a move in between): no waiver.
    s = scenario().add("FoulReported", side="black", article="8.1.1").move("h2e2").add("Resigned", side="black")
    r = s.run()
    assert not r.rulings("correction") and r.game.to_json()["fouls"]["black"][0]["waived"] is False


def test_arbiter_decision_ends_the_game_and_nothing_changes_a_result(scenario):
    s = scenario().add("ArbiterDecision", result="1/2-1/2", article="4.2.2", note="neither side can win")
    s.add("ArbiterDecision", result="1-0", article="4.1.13").add("Resigned", side="red")
    r = s.run()
    assert r.ended["article"] == "4.2.2" and len(r.attention) == 2
    assert all("already stands" in a for a in r.attention)
    r = scenario().add("ArbiterDecision", result="2-0", article="4.1.13").run()
    assert r.attention and r.ended is None


def test_repetition_is_ruled_when_asked_perpetual_check_loses_4_1_4(scenario):
    s = scenario(start_fen=PERPETUAL_FEN).moves(*PERPETUAL)
    r = s.run()
    # Shown and told to the arbiter (23.2), not ruled unasked.
    assert r.ended is None and not r.rulings() and r.game.to_json()["pending"][0]["kind"] == "repetition"
    assert [a["kind"] for a in r.of("AttentionNeeded")] == ["repetition"]
    s.add("ArbiterDecision", result="", article="23", note="Black asks for a ruling")
    r = s.run()
    assert r.ended["result"] == "0-1" and r.ended["article"].startswith("4.1.4") and "长将" in r.ended["reason"]


def test_repetition_idle_both_sides_is_a_draw_4_2_3(scenario):
    s = scenario().moves(*IDLE).add("ArbiterDecision", result="", article="23")
    r = s.run()
    assert r.ended["result"] == "1/2-1/2" and r.ended["article"].startswith("4.2.3")
    r = scenario(ruleset="cxa-2011").moves(*IDLE).add("ArbiterDecision", result="", article="24").run()
    assert r.ended["result"] == "1/2-1/2"


def test_repetition_must_vary_then_once_more_loses_4_1_5(scenario):
    s = scenario(start_fen=CHASE_FEN).moves(*CHASE).add("ArbiterDecision", result="", article="23")
    r = s.run()
    vary = r.rulings("obligation")
    assert vary and vary[0]["side"] == "red" and r.ended is None
    s.moves("a3a4", "b4b3", "a4a3", "b3b4")  # Red chases on through the cycle once more
    r = s.run()
    assert r.ended["result"] == "0-1" and r.ended["article"].startswith("4.1.5")


def test_asking_for_a_repetition_ruling_without_one_is_attention(scenario):
    r = scenario().moves("h2e2").add("ArbiterDecision", result="", article="23").run()
    assert r.attention and r.ended is None


def test_bad_input_gets_attention_and_the_fold_goes_on(scenario):
    s = scenario(start=False)
    start = s.position.squares()
    s.stable(start).add("PieceLifted", point="e3")  # the camera watches a board with no game: nothing to say
    s.add("DrawOffered", side="red")  # a game event for a board with no game
    r = s.run()
    assert r.game is None and len(r.attention) == 1 and r.game_ids == [None, None, None]
    s.add("GameStarted", game_id="g1", red_player="A", black_player="B", ruleset="cxa-1999",
          time_control={"scheme": "sudden_death", "base_ms": 1})
    r = s.run()
    assert r.game is None and "cxa-1999" in r.attention[-1]
    s.add("GameStarted", game_id="g1", red_player="A", black_player="B",
          time_control={"scheme": "increment", "base_ms": 3_600_000, "increment_ms": 0})
    s.add("GameStarted", game_id="g1", red_player="A", black_player="B",
          time_control={"scheme": "increment", "base_ms": 3_600_000, "increment_ms": 0})  # again
    s.stable(start[:89])  # malformed snapshot
    s.add("Resigned", side="red", game_id="other-game")  # names another game
    s.add("MoveMade", game_id="g1", ply=1, side="red", iccs="h2e2", wxf="C2=5", chinese="炮二平五",
          fen_after="x")  # an output type fed back as input
    s.add("DrawAnswered", side="black", accepted=True)  # no offer pending: contradicts the state
    s.move("h2e2")
    r = s.run()
    assert r.moves == ["h2e2"] and r.ended is None
    assert len(r.attention) == 2 + 5
    assert r.game_ids[-6:] == ["g1"] * 6


def test_a_new_game_on_the_board_while_the_last_has_no_result(scenario):
    s = scenario().move("h2e2")
    s.add("GameStarted", game_id="g2", red_player="C", black_player="D",
          time_control={"scheme": "sudden_death", "base_ms": 600_000})
    s.position = s.position.__class__.from_fen("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - "
                                               "- 0 1")
    s.move("b2e2")
    r = s.run()
    assert r.game.game_id == "g2" and r.moves == ["h2e2", "b2e2"]
    assert "g1 has no result" in r.attention[0] and r.game_ids[-2:] == ["g2", "g2"]
    # The notice about g1 is not numbered in g2: a rebuild of g2 from its own inputs numbers its outputs alike.
    assert [o.source_seq for o in r.outputs if o.data["game_id"] == "g2"] == [0, 1]


def test_game_started_without_an_id_starts_nothing(scenario):
    r = scenario(game="").run()
    assert r.game is None and r.game_ids == [None] and "without a game id" in r.attention[0]


def test_camera_fault_is_attention(scenario):
    r = scenario().add("CameraFault", reason="lens covered").run()
    assert r.attention and "lens covered" in r.attention[0]


def test_a_penalty_recorded_after_the_result_changes_nothing_and_raises_nothing(scenario) -> None:
    # 18.1 / 18.2: the arbiter may record a warning or a disqualification once the game is over; the standings
    # weigh it (18.5), the game's result stands (22.5) and nobody is alerted.
    ended = scenario().move("h2e2").add("Resigned", side="black")
    r = ended.add("ArbiterDecision", article="18.1", side="red", result="", note="spoke during play").run()
    assert r.ended["result"] == "1-0" and not r.of("AttentionNeeded")
    r = ended.add("ArbiterDecision", article="18.2", side="black", result="1-0", note="phone in play").run()
    assert not r.of("AttentionNeeded")
    # One that contradicts the result is for the arbiter, as any such action is.
    r = ended.add("ArbiterDecision", article="18.2", side="red", result="0-1", note="phone in play").run()
    [alert] = r.of("AttentionNeeded")
    assert "after the result already stands (1-0" in alert["reason"]
