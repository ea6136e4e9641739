"""What the camera gets wrong must not become a ruling: a misread piece type, and presses while the referee
cannot follow the board (AttentionNeeded) are no 8.1.7."""

from __future__ import annotations

from xqarb.events import Event, make_event
from xqarb.referee.board import step
from xqarb.referee.rules import START_FEN, Move, Position

T0 = 1_764_460_800_000_000


def _events(*items: tuple[str, dict]) -> list[Event]:
    out = [make_event("GameStarted", "3", source="desk", source_seq=0, occurred_at=T0, received_at=T0, game_id="g3",
                      red_player="A", black_player="B",
                      time_control={"scheme": "increment", "base_ms": 3_600_000, "increment_ms": 30_000})]
    for n, (type_, fields) in enumerate(items, start=1):
        t = T0 + n * 5_000_000
        out.append(make_event(type_, "3", source="dev", source_seq=n, occurred_at=t, received_at=t, **fields))
    return out


def _fold(events: list[Event]) -> list[Event]:
    state, outputs = None, []
    for e in events:
        state, result = step(state, e)
        outputs.extend(result.outputs)
    return outputs


def _stable(squares: str) -> tuple[str, dict]:
    return ("BoardStable", {"squares": squares, "frame_sha256": "0" * 64})


def test_a_misread_type_on_an_unchanged_point_is_not_a_board_change() -> None:
    after = Position.from_fen(START_FEN).play(Move.parse("h2e2")).squares()
    misread = list(after)
    misread[(9 - 3) * 9 + 6] = "K"  # the red pawn on g3 read as a king
    outputs = _fold(_events(_stable("".join(misread)), ("ClockPressed", {"side": "red"})))
    assert [(o.type, o.data.get("iccs")) for o in outputs] == [("MoveMade", "h2e2")], [o.to_json() for o in outputs]


def test_presses_while_the_board_is_not_understood_are_not_8_1_7() -> None:
    start = Position.from_fen(START_FEN).squares()
    knocked = start.replace("R", ".", 1)  # a red rook gone from the board: no legal move explains it
    outputs = _fold(_events(_stable(knocked), ("ClockPressed", {"side": "red"}), _stable(knocked),
                            ("ClockPressed", {"side": "black"}), _stable(knocked), ("ClockPressed", {"side": "red"})))
    types = [o.type for o in outputs]
    assert "AttentionNeeded" in types
    assert not [o for o in outputs if o.type in ("Ruling", "GameEnded") and o.data.get("article") in ("8.1.7", "4.1.9")]


def test_a_board_change_not_followed_names_the_position_held_for_the_camera() -> None:
    """The referee's AttentionNeeded for a still board it cannot follow carries the position it holds (`fen`): the
    camera looks again from it (the vision service's Tracker.not_followed), as an arbiter would restore it."""
    start = Position.from_fen(START_FEN)
    after = start.play(Move.parse("h2e2"))
    knocked = after.squares().replace("r", ".", 1)  # a black rook gone: no legal move of Black's explains it
    ghost = after.squares()[:40] + "P" + after.squares()[41:]  # a red piece come from nowhere on e5
    outputs = _fold(_events(_stable(after.squares()), _stable(knocked), _stable(ghost)))
    held = [o for o in outputs if o.type == "AttentionNeeded"]
    assert outputs[0].type == "MoveMade" and len(held) == 2
    assert all(o.data["fen"] == after.fen() for o in held), [o.to_json() for o in held]
    # an attention that is no board change (a record, a clock) names none
    other = _fold(_events(("BoardStable", {"squares": "x" * 3, "frame_sha256": "0" * 64})))
    assert [o.data.get("fen") for o in other if o.type == "AttentionNeeded"] == [None]
