"""The referee's position followed through still boards whose rules' reading is one point off it.

A point read otherwise than it stands (a piece read gone where the view at it did not change, a piece read where
none is) makes every snapshot after it fit no legal move, though each move is read plainly: the referee would call
an arbiter for the rest of the game. Where the move fit (`movefit.follow`) cannot tell the moves apart either (the
evidence of each point alone too faint), the rules' readings of the still boards since the last one the referee
followed are matched against its legal moves, one still board after another: a move is taken where its two points
read as it leaves them and the board agrees with it everywhere else but at `MISREAD_MAX` point, one whose view
shows no plain change (the reading changed where the board did not: the camera's, not a move), and no other legal
move (nor none) agrees as well. A point once so misread and read the same since is the same misreading, not a new
disagreement (`read_over`).

Pure: the referee's rules position (`legal_moves`, `play`, `squares`), the readings and the change tables in, the
boards after each move out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .grid import point_index
from .movefit import gone_odds, side_index

# Points of a still board's reading that may disagree with the position a move leaves: one (a second misread point
# is as likely to be a second move's, and two moves are the move fit's to weigh)
MISREAD_MAX = 1


@dataclass(frozen=True)
class ReadOver:
    """The boards after each move taken, in turn, and the points the last still board read otherwise than the last
    of them holds (the camera's misreading, their view unchanged since)."""

    boards: tuple[str, ...]
    misread: frozenset[int]


def _ends(move: Any) -> frozenset[int]:
    return frozenset((point_index(move.frm), point_index(move.to)))


def _disagree(reading: str, board: str) -> frozenset[int]:
    """The points where the reading's side is another than the board's (an unsure point agrees with any)."""
    return frozenset(i for i in range(90) if reading[i] != "?" and side_index(reading[i]) != side_index(board[i]))


def _quiet_at(table: np.ndarray, board: str, points: frozenset[int], plain: float) -> bool:
    """Whether each of `points` shows no change from its side on `board` as plainly as `plain` (log-odds)."""
    for i in points:
        a = side_index(board[i])
        if max(float(table[i, a, b]) for b in range(3) if b != a) >= plain:
            return False
    return True


def _step(position: Any, reading: str, table: np.ndarray, misread: frozenset[int], plain: float,
          gone: float) -> tuple[Any, frozenset[int]] | None:
    """The one legal move (None: no move) that a still board's reading shows from `position`, with the points it
    reads otherwise (see the module); None where none, or more than one, does. A move's two points must read as it
    leaves them, its source show its piece gone from it by `gone` log-odds (left or another read in its place);
    the other points read otherwise must show no change as plain as `plain`. Ranked by the points newly misread,
    then by all; a tie is no answer."""
    before = position.squares()
    best: list[tuple[tuple[int, int], Any, frozenset[int]]] = []
    for move in [None, *position.legal_moves()]:
        after = before if move is None else position.play(move).squares()
        off = _disagree(reading, after)
        if len(off) > MISREAD_MAX:
            continue
        if move is not None:
            ends = _ends(move)
            src = point_index(move.frm)
            side = side_index(before[src])
            if off & ends or any(reading[i] == "?" for i in ends):
                continue
            if gone_odds(table, src, side) < gone:
                continue
        if not _quiet_at(table, after, off, plain):
            continue
        best.append(((len(off - misread), len(off)), move, off))
    if not best:
        return None
    best.sort(key=lambda t: t[0])
    if len(best) > 1 and best[1][0] == best[0][0]:
        return None
    _, move, off = best[0]
    if move is None and off - misread:
        return None  # (a point newly read otherwise and no move: a move missed is as likely)
    return move, off


def read_over(position: Any, readings: list[str], tables: list[np.ndarray], plain: float,
              gone: float) -> ReadOver | None:
    """The legal moves from the referee's `position` that the still boards' rules readings (`readings`, each with
    its change from the one before, `tables`: `movefit.change_table`) show, one still board after another, each
    with at most `MISREAD_MAX` point read otherwise (see `_step`); None where a still board shows none clearly, or
    no move is taken at all."""
    boards: list[str] = []
    misread: frozenset[int] = frozenset()
    for reading, table in zip(readings, tables, strict=True):
        step = _step(position, reading, table, misread, plain, gone)
        if step is None:
            return None
        move, misread = step
        if move is not None:
            position = position.play(move)
            boards.append(position.squares())
    return ReadOver(tuple(boards), misread) if boards else None
