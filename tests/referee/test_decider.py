"""The fold as a decider: an input decides facts (pure), `evolve` applies them, and the state is immutable.

`apply` must be exactly `decide` followed by `evolve` over its facts; the state never changes in place (assigning
to any part raises); per-side counts live in `sides[side]`; once a GameEnded stands, no input decides anything
but the bookkeeping of the input itself."""

from __future__ import annotations

import dataclasses
import functools

import pytest

from xqarb.referee import game as game_mod
from xqarb.referee import snapshot
from xqarb.referee.board import fold
from xqarb.referee.game_evolve import GameEnded, IllegalMoveCounted, InputTaken, MovePlayed, evolve
from xqarb.referee.game_state import SideState


def _game(scenario_events):
    return fold(scenario_events).game


def test_apply_is_decide_then_evolve_for_every_input(scenario):
    s = scenario().moves("h2e2", "h9g7")
    s.add("TouchReported", side="red", point="b0").add("DrawOffered", side="black").moves("b0c2")
    s.press("red").press("red")
    events = s.events()
    state = game_mod.start(events[0])
    for e in events[1:]:
        facts, outs = game_mod.decide(state, e)
        after, outs_applied = game_mod.apply(state, e)
        assert outs == outs_applied
        assert functools.reduce(evolve, facts, state) == after
        assert isinstance(facts[-1], InputTaken) and facts[-1].outputs == len(outs)
        state = after
    assert state.ply == 3


def test_a_move_is_one_fact_and_the_mover_side_is_reset(scenario):
    events = scenario().add("TouchReported", side="red", point="h2").events()
    touched = _game(events)
    assert touched.sides["red"].touches[0].point == "h2" and touched.sides["black"] == SideState(arrived=False)
    move = scenario().moves("h2e2").events()[-2]  # the BoardStable that shows the move
    facts, outs = game_mod.decide(touched, dataclasses.replace(move, event_id="m1"))
    played = [f for f in facts if isinstance(f, MovePlayed)]
    assert len(played) == 1 and played[0].record.move.iccs == "h2e2"
    after = functools.reduce(evolve, facts, touched)
    assert after.sides["red"].touches == () and after.sides["red"].arrived
    assert [o.type for o in outs] == ["MoveMade"]


def test_the_state_cannot_be_changed_in_place(scenario):
    state = _game(scenario().moves("h2e2").events())
    with pytest.raises(AttributeError):
        state.out_count = 99  # type: ignore[misc]
    with pytest.raises(AttributeError):
        state.line.moves = ()  # type: ignore[misc]
    with pytest.raises(AttributeError):
        state.sides.red.presses = 5  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        state.setup.game_id = "g2"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        state.position = state.position  # type: ignore[misc]  # a name read from a part: read-only
    before = state.to_json()
    evolve(state, IllegalMoveCounted("red"))
    assert state.to_json() == before and state.sides["red"].illegal == 0


def test_per_side_counts_are_kept_apart(scenario):
    s = scenario()
    s.press("red", dt=3).stable(s.position.squares())  # red presses, the still board shows no move: 8.1.7
    state = _game(s.events())
    assert state.sides["red"].presses == 1 and state.sides["black"].presses == 0
    assert state.to_json()["presses_without_move"] == {"red": 1, "black": 0}
    assert [f.side for f in state.fouls] == ["red"]


def test_nothing_is_decided_after_the_game_ended(scenario):
    s = scenario().moves("h2e2").add("Resigned", side="black")
    state = _game(s.events())
    assert state.result is not None and state.result.result == "1-0"
    late = s.add("FoulReported", side="red", article="8.1.1", note="late").events()[-1]
    facts, outs = game_mod.decide(state, late)
    assert [type(f) for f in facts] == [InputTaken]  # the input's bookkeeping only: no foul, no new result
    assert [o.type for o in outs] == ["AttentionNeeded"] and "after the result" in dict(outs[0].fields)["reason"]


def test_the_decision_stops_at_the_game_ended_fact(scenario):
    # A draw offer a day after the last move: red's time has run out first (4.1.6), so the offer itself (out of
    # order, a warning, and counted) is never decided.
    s = scenario().moves("h2e2", "h9g7")
    state = _game(s.events())
    offer = s.add("DrawOffered", dt=86_400, side="red").events()[-1]
    facts, outs = game_mod.decide(state, offer)
    assert [type(f) for f in facts] == [GameEnded, InputTaken]
    assert [o.type for o in outs] == ["GameEnded"] and dict(outs[0].fields)["result"] == "0-1"
    after = functools.reduce(evolve, facts, state)
    assert after.sides["red"].offers == 0 and after.offer_pending is None


def test_a_snapshot_of_the_earlier_state_shape_is_refused_with_its_reason():
    old = snapshot.header().replace(f" state={snapshot.STATE_SHAPE}".encode(), b"") + b"\x80\x05N."
    with pytest.raises(snapshot.SnapshotError, match="another version"):
        snapshot.decode(old)
