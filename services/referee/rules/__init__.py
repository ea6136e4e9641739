"""The rules core: pure Xiangqi rules (board, moves, notation, 棋例). No I/O.

Public API (agreed with the referee and the 棋例 parts):

- `Position` (immutable; FEN in/out, the 90-point BoardStable form, legal moves, check, mate, 困毙, the reason a
  move is illegal), `Move` (ICCS points), `START_FEN`, `Side`, `FenError`, `IllegalMove`.
- Notation (7.5): `iccs`, `wxf`, `chinese` and `parse_move` (ICCS, WXF, Chinese in simplified or traditional
  characters, full or abbreviated), `NotationError`.
- Game records: `GameRecord`, `read_pgn`, `replay`.
- `Board`: the fast mutable board for search and perft.
- From the 棋例 engineer's modules (imported on first use, so that either half can be imported alone):
  `natural_limit_count`, `insufficient_material` (`limits`), `judge_repetition`, `RepetitionVerdict`
  (`repetition`).
"""

from __future__ import annotations

import importlib
from typing import Any

from .board import Board
from .notation import NotationError, chinese, iccs, parse_move, wxf
from .pgn import GameRecord, PgnError, read_pgn, replay
from .position import START_FEN, FenError, IllegalMove, Move, Position, Side

_LAZY = {
    "natural_limit_count": "limits",
    "natural_limit_rule": "limits",
    "NaturalLimitCount": "limits",
    "insufficient_material": "limits",
    "insufficient_material_reason": "limits",
    "judge_repetition": "repetition",
    "RepetitionVerdict": "repetition",
    "classify_move": "repetition",
    "find_cycle": "repetition",
}


def __getattr__(name: str) -> Any:
    # limits.py and repetition.py import this package for their types; loading them lazily avoids an import cycle.
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "START_FEN",
    "Board",
    "FenError",
    "GameRecord",
    "IllegalMove",
    "Move",
    "NotationError",
    "PgnError",
    "Position",
    "Side",
    "chinese",
    "iccs",
    "parse_move",
    "read_pgn",
    "replay",
    "wxf",
    *_LAZY,
]
