"""The same inputs folded twice give byte-identical outputs; every output is a valid event of its schema; the
shared real games replay with no ruling at all and end on the right positions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from xqarb import codec
from xqarb.events import Event
from xqarb.referee.board import fold, step
from xqarb.referee.cli import synthesize
from xqarb.referee.inference import fen_of
from xqarb.referee.rules import Move, Position, read_pgn

DEFAULT_GAMES = 100  # per file in the default run (200 games); the slow test replays all 2,125


def _busy_scenario(scenario):
    s = scenario(level="provincial", recording_required=True)
    s.moves("h2e2", "h9g7").add("PieceLifted", point="h0").move("h0g2")
    s.add("TouchReported", side="black", point="a9").add("DrawOffered", side="red")
    s.stable(s.displaced("b9b5"))
    s.stable(s.position.squares()).move("i9h9").add("PieceMisaligned", points=["h9", "h8"])
    s.add("ScoresheetEntry", side="red", ply=1, text="炮二平五").press("red", dt=3)
    s.add("ClockPaused", by="black").add("NaturalLimitClaimed", side="red").add("Resigned", side="black")
    return s


def test_the_same_inputs_give_byte_identical_outputs(scenario):
    s = _busy_scenario(scenario)
    first = s.run()
    second = s.run()
    a = [o.to_json() for o in first.outputs]
    b = [o.to_json() for o in second.outputs]
    assert a == b and len(a) >= 10
    assert len({o.event_id for o in first.outputs}) == len(a)  # every output has its own id
    kinds = {o.type for o in first.outputs}
    assert {"MoveMade", "Ruling", "GameEnded"} <= kinds
    assert json.dumps(first.game.to_json(), sort_keys=True) == json.dumps(second.game.to_json(), sort_keys=True)


def test_every_output_is_a_valid_event_of_its_schema(scenario):
    s = _busy_scenario(scenario)
    s.add("CameraFault", reason="x")
    outs = s.run().outputs + scenario(start=False).add("DrawOffered", side="red").run().outputs
    for o in outs:
        again = Event.from_json_dict(o.to_json_dict())  # checks every field against the schema
        assert again == o, o.to_json()
        assert codec.decode(codec.encode(o)) == o  # and it goes through Kafka's wire form unchanged
        assert o.source == (f"referee:{o.game_id}" if o.source_seq else f"referee:board:{o.board_id}")


def test_fold_is_the_state_after_the_steps(scenario):
    s = _busy_scenario(scenario)
    events = s.events()
    state = None
    for e in events:
        state, _ = step(state, e)
    assert fold(events).to_json() == state.to_json()
    # State after N inputs is the fold of the first N (what GET /state?seq=N shows).
    part = fold(events[:5]).game.to_json()
    assert part["ply"] == 2 and part["pending"] == []
    assert fold(events[:6]).game.to_json()["pending"][0]["kind"] == "touch"


def _games(shared_data: Path, name: str):
    records = read_pgn((shared_data / "games" / f"{name}.pgn").read_text(encoding="utf-8"))
    expected = [json.loads(line) for line in (shared_data / "games" / f"{name}.jsonl").read_text().splitlines()]
    assert len(records) == len(expected)
    return list(zip(records, expected, strict=True))


def _replay_and_check(records, name: str) -> int:
    moves = 0
    for number, (record, want) in enumerate(records, start=1):
        events, stopped, _ = synthesize(record, f"{name}#{number}")
        assert stopped is None, f"{name}#{number}: {stopped}"
        state = None
        for e in events:
            state, st = step(state, e)
            for o in st.outputs:
                # Real games run through repetitions nobody claimed (23.2) and long stretches without a capture
                # (23.3): the arbiter is told, nothing is ruled.
                told = o.type == "AttentionNeeded" and o.data["kind"] in ("repetition", "natural_limit")
                assert o.type in ("MoveMade", "GameEnded") or told, f"{name}#{number}: {o.to_json()}"
                if o.type == "GameEnded":  # only the checkmate a record ends with
                    assert o.data["article"] == "4.1.1" and e is events[-2], o.to_json()
        game = state.game
        assert game.position.fen().split()[:2] == want["final_fen"].split()[:2], f"{name}#{number}"
        assert [m.move.iccs for m in game.moves] == want["iccs"]
        moves += len(game.moves)
    return moves


@pytest.mark.parametrize("name", ["ccpd_dev", "liu_dahua_iccs"])
def test_real_games_replay_without_any_ruling(shared_data, name):
    assert _replay_and_check(_games(shared_data, name)[:DEFAULT_GAMES], name) > 1000


@pytest.mark.slow
@pytest.mark.parametrize("name", ["ccpd_dev", "liu_dahua_iccs"])
def test_all_real_games_replay_without_any_ruling(shared_data, name):
    assert _replay_and_check(_games(shared_data, name), name) > 10_000


def test_fen_written_from_squares_is_the_rules_cores(shared_data):
    for record, want in _games(shared_data, "liu_dahua_iccs")[:20]:
        p = Position.from_fen(record.start_fen)
        for iccs in want["iccs"]:
            p = p.play(Move.parse(iccs))
            assert fen_of(p.squares(), p.side, p.plies_since_capture, p.fullmove) == p.fen()


def test_a_game_rebuilt_from_its_own_inputs_continues_exactly_as_an_uninterrupted_run(scenario):
    """What the service does after a restart or a rebalance: fold the latest game's inputs, then go on."""
    s = scenario().move("h2e2")  # g1 is left without a result
    s.add("GameStarted", game_id="g2", red_player="C", black_player="D",
          time_control={"scheme": "increment", "base_ms": 600_000, "increment_ms": 5_000}, recording_required=True)
    s.position = Position.from_fen("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1")
    s.moves("h2e2", "h9g7", "h0g2", "i9h9", "b0c2", "b9c7")
    s.add("FoulReported", side="red", article="8.1.1").press("black", dt=2)
    events = s.events()
    full = []
    state = None
    for e in events:
        state, st = step(state, e)
        full.append([o.to_json() for o in st.outputs])
    g2 = next(i for i, e in enumerate(events) if e.type == "GameStarted" and e.data["game_id"] == "g2")
    for cut in range(g2 + 1, len(events)):
        rebuilt = fold(events[g2:cut])  # the ledger holds g2's inputs only
        state = rebuilt
        for i in range(cut, len(events)):
            state, st = step(state, events[i])
            assert [o.to_json() for o in st.outputs] == full[i], f"restart after input {cut}, input {i}"
