"""Moves from vision: what a BoardStable snapshot says happened since the last accepted position.

`squares` (BoardStable) is 90 characters, rank 9 first, files a..i: a FEN letter where the piece type is known,
`X` / `x` a red / black piece of unknown type, `.` empty, `?` unsure. Occupancy and colour are enough to find a
move, and they decide: a type the camera reads differently from the piece the game has on that point is the
camera's misreading (a piece does not change its type; 5.8.2/5.9 changes come through PositionRestored), so it is
not a change; `?` is consistent with anything. The answer is never a guess: a change that is
exactly one legal move is a move; one that two or more legal moves explain is ambiguous; a single own piece moved
where it may not go is an illegal move; anything else (two moves, a knocked-over or displaced piece, a piece of
the side not to move) is for an arbiter.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from xqarb.alphabet import consistent
from xqarb.referee.rules import Move, Position

FILES = "abcdefghi"
VALID = frozenset("KABNRCPkabnrcpXx.?")
_NAMES = {"k": "king", "a": "advisor", "b": "elephant", "n": "horse", "r": "rook", "c": "cannon", "p": "pawn"}


class SquaresError(ValueError):
    """A BoardStable whose squares are not 90 characters of the catalogue's alphabet."""


def point_of(index: int) -> str:
    return f"{FILES[index % 9]}{9 - index // 9}"


def index_of(point: str) -> int:
    return (9 - int(point[1])) * 9 + FILES.index(point[0])


def describe(ch: str) -> str:
    if ch == ".":
        return "empty"
    if ch == "?":
        return "unsure"
    if ch in "Xx":
        return ("red" if ch == "X" else "black") + " piece"
    return ("red " if ch.isupper() else "black ") + _NAMES[ch.lower()]


def check_squares(squares: str) -> None:
    if not isinstance(squares, str) or len(squares) != 90:
        raise SquaresError(f"squares must be 90 characters (rank 9 first), got {len(squares)!r}")
    bad = set(squares) - VALID
    if bad:
        raise SquaresError(f"squares holds characters outside FEN letters, X, x, '.', '?': {''.join(sorted(bad))}")


@dataclass(frozen=True, slots=True)
class Inference:
    """kind: unchanged | move | ambiguous | illegal | unexplained."""

    kind: str
    moves: tuple[Move, ...] = ()
    reason: str = ""
    changes: tuple[str, ...] = ()


def changes_of(current: str, seen: str) -> list[int]:
    """Indices of the points where the snapshot contradicts the position (rank by rank: most ranks are equal)."""
    if current == seen:
        return []
    out = []
    for r in range(0, 90, 9):
        if current[r:r + 9] == seen[r:r + 9]:
            continue
        for i in range(r, r + 9):
            a, b = current[i], seen[i]
            if a != b and not consistent(a, b):
                out.append(i)
    return out


def squares_after(squares: str, move: Move) -> str:
    """The 90-point form after a piece moves (whatever stood on the target is gone)."""
    f, t = index_of(move.frm), index_of(move.to)
    cells = list(squares)
    cells[t], cells[f] = cells[f], "."
    return "".join(cells)


_EMPTY_RUN = re.compile(r"\.+")


@lru_cache(maxsize=65536)
def _fen_rank(rank: str) -> str:
    """One rank of the 90-point form in FEN (runs of empty points as digits); ranks repeat, so it is cached."""
    return _EMPTY_RUN.sub(lambda m: str(len(m.group(0))), rank)


def fen_of(squares: str, side: str, halfmove: int, fullmove: int) -> str:
    """FEN from the 90-point form, as `Position.fen()` writes it (checked by the tests), without building a board."""
    body = "/".join([_fen_rank(squares[r:r + 9]) for r in range(0, 90, 9)])
    return f"{body} {'w' if side == 'red' else 'b'} - - {halfmove} {fullmove}"


def describe_changes(current: str, seen: str, diff: Sequence[int]) -> tuple[str, ...]:
    return tuple(f"{point_of(i)}: {describe(current[i])} -> {describe(seen[i])}" for i in diff)


def _seen_made(move: Move, current: str, seen: str) -> bool:
    """Could the snapshot `seen` show `move` made on `current`: its point left empty, its piece on the target?"""
    f, t = index_of(move.frm), index_of(move.to)
    return consistent(".", seen[f]) and consistent(current[f], seen[t])


def moves_between(position: Position, current: str, seen: str, a: str, b: str) -> list[Move]:
    """The legal moves between points a and b (a to b, then b to a) that the snapshot `seen` allows. Each is
    checked alone, far cheaper than listing every legal move (this runs for every move of every game)."""
    return [mv for mv in (Move(a, b), Move(b, a)) if position.is_legal(mv) and _seen_made(mv, current, seen)]


def infer(position: Position, current: str, seen: str) -> Inference:
    """The move (or not) that turns `position` (whose squares are `current`) into what the camera `seen`."""
    diff = changes_of(current, seen)
    if not diff:
        return Inference("unchanged")
    if len(diff) > 2:
        return Inference("unexplained", reason=f"{len(diff)} points changed: no single move explains it",
                         changes=describe_changes(current, seen, diff))
    if len(diff) == 2:
        # Two points changed: the move can only be between them, one way or the other
        a, b = sorted(point_of(i) for i in diff)
        candidates = moves_between(position, current, seen, a, b)
    else:
        only = point_of(diff[0])  # one point changed (the other '?'-consistent): a move from or to it
        candidates = [m for m in position.legal_moves() if only in (m.frm, m.to) and _seen_made(m, current, seen)]
    if len(candidates) == 1:
        return Inference("move", (candidates[0],))
    changes = describe_changes(current, seen, diff)
    if candidates:
        return Inference("ambiguous", tuple(candidates),
                         reason="the change fits " + ", ".join(m.iccs for m in candidates), changes=changes)
    # A single piece of the side to move left one point and stands on another: an illegal move (2.2, 3.4).
    red = position.side == "red"
    if len(diff) == 2:
        a, b = diff
        for f, t in ((a, b), (b, a)):
            piece = current[f]
            if piece == "." or piece.isupper() != red or seen[f] not in ".?":
                continue
            target = current[t]
            if target != "." and target.isupper() == red:
                continue  # cannot land on an own piece
            if consistent(piece, seen[t]) and seen[t] != "?":
                mv = Move(point_of(f), point_of(t))
                why = position.illegal_reason(mv) or "not a legal move"
                return Inference("illegal", (mv,), reason=why, changes=changes)
    mover = "Red" if red else "Black"
    return Inference("unexplained", reason=f"no single legal move of {mover} explains the change", changes=changes)
