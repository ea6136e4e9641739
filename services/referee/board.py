"""A board's events routed to its current game: `step(board_state, event) -> (board_state, Step)`.

A board (one camera, one clock, one table) plays one game after another. `BoardState` holds the game in play (or
the last one, until the next GameStarted); `step` is pure and deterministic: the outputs' envelopes are derived
from the input and the state (see `outputs`), never from a clock or a random source. `fold(events)` is the state
after a sequence of one board's events. Bad input never stops the fold: it gives AttentionNeeded and the state goes
on unchanged (an event for a board with no game, a game id that is not the board's, an input type the referee does
not take); the camera's own reports on a board with no game are simply not about any game.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from xqarb.events import Event
from xqarb.referee import game as game_mod
from xqarb.referee.game import GameStartError, GameState
from xqarb.referee.game_evolve import OutputsNumbered
from xqarb.referee.outputs import Out, materialize

# What cameras and vision report whether or not a game is on: no game, no business of the referee.
OBSERVATIONS = frozenset({
    "FrameCaptured", "BoardCalibrated", "HandEntered", "HandLeft", "PieceLifted", "PiecePlaced", "PieceNudged",
    "PieceMisaligned", "BoardStable", "CameraFault", "CameraQuiet",
})
# The referee's own outputs: never an input.
OUTPUT_TYPES = frozenset({"MoveMade", "Ruling", "GameEnded", "AttentionNeeded"})


@dataclass(frozen=True, slots=True)
class BoardState:
    board_id: str
    game: GameState | None = None
    games_started: int = 0

    def to_json(self) -> dict[str, object]:
        return {"board_id": self.board_id, "game": None if self.game is None else self.game.to_json()}


@dataclass(frozen=True, slots=True)
class Step:
    """What one input did: the game it belongs to (for the ledger; None: no game) and the outputs it caused."""

    game_id: str | None
    outputs: tuple[Event, ...]


def _out(event: Event, board: BoardState, game_id: str | None, outs: tuple[Out, ...],
         first_seq: int) -> tuple[BoardState, Step]:
    return board, Step(game_id, materialize(event, outs, first_seq, game_id))


def _attention(game_id: str | None, reason: str, event: Event) -> tuple[Out, ...]:
    return (Out.of("AttentionNeeded", game_id=game_id, reason=reason, evidence=[event.event_id]),)


def step(board_state: BoardState | None, event: Event) -> tuple[BoardState, Step]:
    """The board's next state and what the event did (see the module docstring)."""
    board = board_state if board_state is not None else BoardState(event.board_id)
    if event.board_id != board.board_id:
        outs = _attention(None, f"event {event.event_id} of board {event.board_id} was given to board "
                                f"{board.board_id}'s state; not applied", event)
        return _out(event, board, None, outs, 0)
    current = board.game
    if event.type == "GameStarted":
        return _game_started(board, event)
    if event.type in OUTPUT_TYPES:
        gid = current.game_id if current is not None else None
        outs = _attention(gid, f"{event.type} is an output of the referee, not an input; not applied", event)
        return _counted(board, event, gid, outs)
    named = event.data.get("game_id")
    if current is None:
        if event.type in OBSERVATIONS:
            return board, Step(None, ())
        # It belongs to no game (even if it names one): the board's own chain keeps it.
        named_words = f" (it names game {named})" if named else ""
        outs = _attention(None, f"{event.type} on board {event.board_id}, where no game has started{named_words}; "
                                f"not applied", event)
        return _out(event, board, None, outs, 0)
    if named and named != current.game_id:
        outs = _attention(current.game_id, f"{event.type} names game {named}, but board {board.board_id} plays "
                                           f"{current.game_id}; not applied", event)
        return _counted(board, event, current.game_id, outs)
    new_game, outs = game_mod.apply(current, event)
    first = current.out_count + 1
    board = BoardState(board.board_id, new_game, board.games_started)
    return board, Step(new_game.game_id, materialize(event, outs, first, new_game.game_id))


def _counted(board: BoardState, event: Event, game_id: str | None, outs: tuple[Out, ...]) -> tuple[BoardState, Step]:
    """Outputs about the current game that do not go through its fold still take its output numbers."""
    g = board.game
    if g is None or game_id != g.game_id:
        return _out(event, board, game_id, outs, 0)
    first = g.out_count + 1
    board = BoardState(board.board_id, game_mod.evolve(g, OutputsNumbered(len(outs))), board.games_started)
    return board, Step(game_id, materialize(event, outs, first, game_id))


def _game_started(board: BoardState, event: Event) -> tuple[BoardState, Step]:
    gid = event.data["game_id"]
    current = board.game
    if not gid or not gid.strip():
        return _out(event, board, None, _attention(None, "GameStarted without a game id; no game started", event), 0)
    if current is not None and current.game_id == gid:
        return _counted(board, event, gid, _attention(gid, f"game {gid} has already started on this board; the "
                                                           f"second GameStarted is not applied", event))
    try:
        new = game_mod.start(event)
    except GameStartError as exc:
        return _out(event, board, gid, _attention(gid, f"game {gid} cannot start: {exc}", event), 0)
    outs: tuple[Out, ...] = ()
    if current is not None and current.result is None:
        outs = _attention(gid, f"game {gid} starts on board {board.board_id} while game {current.game_id} has no "
                               f"result; that game is left unfinished", event)
    board = BoardState(board.board_id, new, board.games_started + 1)
    # Numbered 0 and not counted in the new game: a referee that rebuilds the game from its own inputs (the ledger)
    # does not see the earlier game, and the game's later outputs must be numbered the same either way.
    return board, Step(gid, materialize(event, outs, 0, gid))


def end_of_input(board: BoardState) -> tuple[BoardState, Step]:
    """The end of a finite input (`referee run`, `replay`): the game folds what still waits for the camera
    (`game.finish`). The outputs' envelopes come from a stand-in cause named after the game, at the last input's
    time, so the same inputs give the same outputs."""
    g = board.game
    if g is None:
        return board, Step(None, ())
    new_game, outs = game_mod.finish(g)
    cause = Event(type=game_mod.END_OF_INPUT, event_id=f"{g.game_id}#end-of-input", board_id=board.board_id,
                  source="referee", source_seq=0, occurred_at=g.last_at, received_at=g.last_at, data={})
    board = BoardState(board.board_id, new_game, board.games_started)
    return board, Step(g.game_id, materialize(cause, outs, g.out_count + 1, g.game_id))


def fold(events: Iterable[Event], board_state: BoardState | None = None) -> BoardState:
    """The state after one board's events (outputs dropped; use `run` to keep them)."""
    state = board_state
    for e in events:
        state, _ = step(state, e)
    if state is None:
        raise ValueError("fold of no events: there is no board")
    return state


def run(events: Iterable[Event]) -> tuple[dict[str, BoardState], list[tuple[Event, Step]]]:
    """Every board's state and every input with its step, for events of many boards interleaved."""
    boards: dict[str, BoardState] = {}
    steps: list[tuple[Event, Step]] = []
    for e in events:
        new, st = step(boards.get(e.board_id), e)
        boards[e.board_id] = new
        steps.append((e, st))
    return boards, steps
