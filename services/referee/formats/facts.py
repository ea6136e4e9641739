"""A game's recorded facts, the one input of every export format: players, event, round, start position, time
control, moves in the three notations with the clock after each, rulings with their ply, result and why.

Built from a game's ledger entries (`facts_from_entries`) or from a game record read from a file
(`facts_from_record`); both are pure: values in, a value out.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from xqarb.referee.rules.notation import wxf_and_chinese
from xqarb.referee.rules.pgn import GameRecord, replay
from xqarb.referee.rules.position import START_FEN

RESULTS = ("1-0", "0-1", "1/2-1/2", "*")


class FormatError(ValueError):
    """A game that cannot be written, or a file that cannot be read, in one of the export formats."""


@dataclass(frozen=True, slots=True)
class RecordedMove:
    ply: int  # 1 = Red's first move (from the standard start)
    side: str  # "red" or "black"
    iccs: str  # h2e2
    wxf: str  # C2=5
    chinese: str  # 炮二平五 (7.5)
    clock_ms: int | None = None  # the mover's remaining time after the move, as the device showed it


@dataclass(frozen=True, slots=True)
class RecordedRuling:
    after_ply: int  # the ruling follows this many moves (0: before the first)
    article: str
    message: str
    kind: str = ""
    side: str | None = None


@dataclass(frozen=True, slots=True)
class GameFacts:
    game_id: str
    red: str = ""
    black: str = ""
    event: str = ""
    round: int | None = None
    board_no: int | None = None  # the organiser's board number within the round (台次)
    site: str = ""
    date: str = ""  # YYYY.MM.DD, PGN's form; "" when unknown
    start_fen: str = START_FEN
    time_control: Mapping[str, Any] | None = None  # GameStarted.time_control (6.1-6.5)
    moves: tuple[RecordedMove, ...] = ()
    rulings: tuple[RecordedRuling, ...] = ()
    result: str = "*"
    article: str = ""  # GameEnded.article: the article that ended the game
    reason: str = ""  # GameEnded.reason

    @property
    def is_standard_start(self) -> bool:
        return self.start_fen.split()[:2] == START_FEN.split()[:2]


def _time_control(raw: Any) -> Mapping[str, Any] | None:
    """GameStarted carries the time control as JSON text in Avro and as an object in the JSON form."""
    if isinstance(raw, Mapping):
        return raw
    if isinstance(raw, str) and raw.strip():
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            return None
        return value if isinstance(value, Mapping) else None
    return None


def _date_of(occurred_at_us: int | None) -> str:
    if occurred_at_us is None:
        return ""
    return datetime.fromtimestamp(occurred_at_us / 1e6, tz=UTC).strftime("%Y.%m.%d")


def facts_from_entries(game_id: str, entries: Iterable[Mapping[str, Any]]) -> GameFacts:
    """The facts of a game from its ledger entries (`LedgerEntry.to_json()` dicts, in ledger order)."""
    started: Mapping[str, Any] = {}
    ended: Mapping[str, Any] = {}
    moves: list[RecordedMove] = []
    rulings: list[RecordedRuling] = []
    for entry in entries:
        ev = entry["event"]
        kind = ev.get("type")
        if kind == "GameStarted":
            started = ev
        elif kind == "MoveMade":
            side = ev["side"]
            clock = ev.get("red_ms") if side == "red" else ev.get("black_ms")
            moves.append(RecordedMove(ev["ply"], side, ev["iccs"], ev.get("wxf") or "", ev.get("chinese") or "",
                                      clock))
        elif kind == "Ruling":
            # A ruling names the ply it concerns where there is one; otherwise it follows the moves made so far.
            ply = ev.get("ply")
            rulings.append(RecordedRuling(ply if isinstance(ply, int) and ply >= 0 else len(moves),
                                          ev.get("article", ""), ev.get("message", ""), ev.get("kind", ""),
                                          ev.get("side")))
        elif kind == "GameEnded":
            ended = ev
    return GameFacts(
        game_id=game_id,
        red=started.get("red_player") or "",
        black=started.get("black_player") or "",
        event=started.get("event") or "",
        round=started.get("round"),
        board_no=started.get("board_no"),
        site=f"board {started['board_id']}" if started.get("board_id") else "",
        date=_date_of(started.get("occurred_at")),
        start_fen=started.get("start_fen") or START_FEN,
        time_control=_time_control(started.get("time_control")),
        moves=tuple(moves),
        rulings=tuple(rulings),
        result=ended.get("result") or "*",
        article=ended.get("article") or "",
        reason=ended.get("reason") or "",
    )


def facts_from_record(record: GameRecord, game_id: str = "") -> GameFacts:
    """The facts of a game record read from a file: its moves replayed by the rules core in all three notations
    (a move it cannot read raises the rules core's PgnError naming the ply)."""
    played = replay(record, game_id or None)
    moves = []
    first_ply = 1 if played.positions[0].side == "red" else 2
    for i, (pos, mv) in enumerate(zip(played.positions, played.moves, strict=False)):
        w, c = wxf_and_chinese(pos, mv)
        moves.append(RecordedMove(first_ply + i, pos.side, mv.iccs, w, c))
    h = record.headers
    rnd = h.get("Round", "").strip()
    return GameFacts(
        game_id=game_id or h.get("GameId", ""),
        red=h.get("Red", ""),
        black=h.get("Black", ""),
        event=h.get("Event", ""),
        round=int(rnd) if rnd.isdigit() else None,
        site=h.get("Site", ""),
        date=h.get("Date", ""),
        start_fen=record.start_fen,
        moves=tuple(moves),
        result=record.result or "*",
    )
