"""Game records: PGN with moves in ICCS, WXF or Chinese (simplified or traditional), one or many games a text.

`read_pgn` only splits and tokenizes (headers, the move tokens as written, the result); `replay` turns a record
into positions and moves with the rules core, naming the game and ply of the first move it cannot read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple

from .notation import NotationError, parse_move
from .position import START_FEN, FenError, Move, Position

_RESULTS = {"1-0", "0-1", "1/2-1/2", "½-½", "*"}
# Greedy value: real records contain unescaped quotes inside a value ([Event "象棋"棋王"賽"]).
_HEADER_RE = re.compile(r'^\s*\[\s*([A-Za-z0-9_]+)\s+"(.*)"\s*\]\s*$')
_MOVE_NUMBER_RE = re.compile(r"^[0-9０-９]+\s*(?:\.+|．+|、|…)")
_ANNOTATION_RE = re.compile(r"[!?]+$")


class PgnError(ValueError):
    """A record that cannot be read or replayed; the message names the game and the ply."""


@dataclass
class GameRecord:
    """One game of a PGN text: headers, start position, move tokens as written, result ('1-0', '0-1', '1/2-1/2')."""

    headers: dict[str, str] = field(default_factory=dict)
    start_fen: str = START_FEN
    moves: list[str] = field(default_factory=list)
    result: str | None = None


class Replay(NamedTuple):
    moves: list[Move]
    positions: list[Position]  # positions[0] is the start, positions[i + 1] follows moves[i]


def _strip_comments(text: str) -> str:
    """Remove {comments}, ; line comments, (variations, nested) and $NAGs: none of them are moves played."""
    out: list[str] = []
    depth = 0
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "{":
            j = text.find("}", i + 1)
            i = n if j < 0 else j + 1
            out.append(" ")
            continue
        if ch == ";" and depth == 0:
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if ch in "(（":
            depth += 1
        elif ch in ")）":
            depth = max(0, depth - 1)
            out.append(" ")
        elif depth == 0:
            out.append(ch)
        i += 1
    return re.sub(r"\$\d+", " ", "".join(out))


def _tokens(movetext: str) -> tuple[list[str], str | None]:
    moves: list[str] = []
    result: str | None = None
    for raw in _strip_comments(movetext).split():
        tok = raw
        while True:  # "1." / "1..." / "12.炮二平五": a move number, possibly glued to the move
            m = _MOVE_NUMBER_RE.match(tok)
            if not m:
                break
            tok = tok[m.end():]
        if not tok or tok in (".", "..", "..."):
            continue
        if tok in _RESULTS:
            result = tok
            continue
        tok = _ANNOTATION_RE.sub("", tok)
        if tok:
            moves.append(tok)
    return moves, result


def read_pgn(text: str) -> list[GameRecord]:
    """Every game of a PGN text, in order. Games are separated by their header blocks (or by a result)."""
    games: list[GameRecord] = []
    headers: dict[str, str] = {}
    movetext: list[str] = []
    in_moves = False

    def finish() -> None:
        nonlocal headers, movetext, in_moves
        if headers or any(line.strip() for line in movetext):
            moves, result = _tokens("\n".join(movetext))
            if result is None:
                result = headers.get("Result")
            if result in ("*", "", None):
                result = None
            elif result == "½-½":
                result = "1/2-1/2"
            fen = headers.get("FEN", "").strip() or START_FEN
            games.append(GameRecord(dict(headers), fen, moves, result))
        headers, movetext, in_moves = {}, [], False

    open_comment = open_variation = 0  # a result or a header inside a comment or a variation is not one
    for line in text.lstrip("\ufeff").splitlines():
        m = _HEADER_RE.match(line) if open_comment == 0 else None
        if m:
            if in_moves:
                finish()
            headers[m.group(1)] = m.group(2).replace('\\"', '"')
            continue
        if line.strip():
            in_moves = True
            movetext.append(line)
            open_comment = max(0, open_comment + line.count("{") - line.count("}"))
            if not open_comment:
                open_variation = max(0, open_variation + line.count("(") + line.count("（") - line.count(")")
                                     - line.count("）"))
            # A result closes a game even when the next one has no headers.
            if line.split()[-1] in _RESULTS and not open_comment and not open_variation:
                finish()
    finish()
    return games


def replay(record: GameRecord, game: int | str | None = None) -> Replay:
    """Play a record's moves from its start position; PgnError names the game, the ply and the reason on failure."""
    where = f"game {game}: " if game is not None else ""
    try:
        pos = Position.from_fen(record.start_fen)
    except FenError as exc:
        raise PgnError(f"{where}bad FEN header: {exc}") from exc
    positions = [pos]
    moves: list[Move] = []
    for i, text in enumerate(record.moves):
        try:
            mv = parse_move(pos, text)
        except NotationError as exc:
            raise PgnError(f"{where}ply {i + 1} ({text!r}): {exc}") from exc
        pos = pos.play(mv)
        moves.append(mv)
        positions.append(pos)
    return Replay(moves, positions)
