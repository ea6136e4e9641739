"""Scenario building for the referee's tests: input events written as JSON lines, folded, outputs inspected."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import pytest

from tests.ledger_stores import ledger, postgres_url, sqlite_ledger, store  # noqa: F401  (fixtures: the ledger's stores)
from xqarb.events import Event
from xqarb.referee.board import BoardState, step
from xqarb.referee.rules import START_FEN, Move, Position

T0 = 1_767_225_600_000_000  # µs


class Scenario:
    """A board's input events as the JSON form of `referee run` (times in seconds from the start), a tracker of
    the position the players have on the board, and the outputs of folding them."""

    def __init__(self, board: str = "b1", game: str = "g1", *, start: bool = True, **game_fields: Any) -> None:
        self.board = board
        self.game = game
        self.lines: list[dict[str, Any]] = []
        self.t = 0.0
        fen = game_fields.get("start_fen") or START_FEN
        self.position = Position.from_fen(fen)
        if start:
            fields = {
                "game_id": game, "red_player": "Red", "black_player": "Black",
                "time_control": {"scheme": "increment", "base_ms": 3_600_000, "increment_ms": 30_000},
                "recording_required": False,
            }
            fields.update(game_fields)
            self.add("GameStarted", dt=0, **fields)

    # ---------------------------------------------------------------- writing inputs
    def add(self, type_: str, dt: float = 1.0, **fields: Any) -> Scenario:
        self.t += dt
        self.lines.append({"type": type_, "board_id": self.board,
                           "occurred_at": T0 + round(self.t * 1_000_000), **fields})
        return self

    def stable(self, squares: str, dt: float = 1.0) -> Scenario:
        return self.add("BoardStable", dt=dt, squares=squares, frame_sha256="f" * 64)

    def press(self, side: str | None = None, dt: float = 0.5, **fields: Any) -> Scenario:
        return self.add("ClockPressed", dt=dt, side=side or _other(self.position.side), **fields)

    def move(self, iccs: str, *, press: bool = True, dt: float = 5.0) -> Scenario:
        """The side to move plays a legal move: the camera sees the board, then the mover presses the clock."""
        side = self.position.side
        self.position = self.position.play(Move.parse(iccs))
        self.stable(self.position.squares(), dt=dt)
        if press:
            self.press(side)
        return self

    def moves(self, *iccs: str) -> Scenario:
        for m in iccs:
            self.move(m)
        return self

    def displaced(self, iccs: str, dt: float = 5.0) -> str:
        """The board after a piece is moved from one point to another regardless of the rules (what it shows)."""
        sq = list(self.position.squares())
        m = Move.parse(iccs)
        f, t = _index(m.frm), _index(m.to)
        sq[t], sq[f] = sq[f], "."
        return "".join(sq)

    def jsonl(self) -> str:
        return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in self.lines)

    # ---------------------------------------------------------------- folding
    def events(self) -> list[Event]:
        return [Event.from_json_dict(d, defaults={"source": "test", "source_seq": i})
                for i, d in enumerate(self.lines, start=1)]

    def run(self) -> Result:
        state: BoardState | None = None
        outs: list[Event] = []
        game_ids: list[str | None] = []
        for e in self.events():
            state, st = step(state, e)
            outs.extend(st.outputs)
            game_ids.append(st.game_id)
        assert state is not None
        return Result(state, outs, game_ids)


class Result:
    def __init__(self, state: BoardState, outputs: list[Event], game_ids: list[str | None]) -> None:
        self.state = state
        self.outputs = outputs
        self.game_ids = game_ids

    @property
    def game(self) -> Any:
        return self.state.game

    def of(self, type_: str) -> list[dict[str, Any]]:
        return [dict(o.data) for o in self.outputs if o.type == type_]

    def rulings(self, kind: str | None = None, article: str | None = None) -> list[dict[str, Any]]:
        return [r for r in self.of("Ruling")
                if (kind is None or r["kind"] == kind) and (article is None or r["article"] == article)]

    @property
    def moves(self) -> list[str]:
        return [m["iccs"] for m in self.of("MoveMade")]

    @property
    def ended(self) -> dict[str, Any] | None:
        ends = self.of("GameEnded")
        assert len(ends) <= 1, f"a game ended more than once: {ends}"
        return ends[0] if ends else None

    @property
    def attention(self) -> list[str]:
        return [a["reason"] for a in self.of("AttentionNeeded")]

    def quiet(self) -> bool:
        """No ruling, no attention, no end: nothing but moves."""
        return all(o.type == "MoveMade" for o in self.outputs)

    def describe(self) -> str:
        return "\n".join(o.to_json() for o in self.outputs)


def _other(side: str) -> str:
    return "black" if side == "red" else "red"


def _index(point: str) -> int:
    return (9 - int(point[1])) * 9 + "abcdefghi".index(point[0])


def fold_outputs(events: Iterable[Event]) -> list[Event]:
    state: BoardState | None = None
    outs: list[Event] = []
    for e in events:
        state, st = step(state, e)
        outs.extend(st.outputs)
    return outs


@pytest.fixture
def scenario() -> type[Scenario]:
    return Scenario
