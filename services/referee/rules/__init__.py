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
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .board import Board
    from .limits import (
        NaturalLimitCount,
        insufficient_material,
        insufficient_material_reason,
        natural_limit_count,
        natural_limit_rule,
    )
    from .notation import NotationError, chinese, iccs, parse_move, wxf, wxf_and_chinese
    from .pgn import GameRecord, PgnError, Replay, read_pgn, replay
    from .position import START_FEN, FenError, IllegalMove, Move, Position, Side
    from .repetition import RepetitionVerdict, classify_move, find_cycle, judge_repetition

# Every public name, by the module that defines it. Loaded on first use (PEP 562): `xqarb rules ...` and the other
# command-line parts import `xqarb.referee.rules.cli` at start-up and must not pay for the tables; and limits.py
# and repetition.py import this package for their types, so loading them lazily avoids an import cycle.
_LAZY = {
    **dict.fromkeys(["Board"], "board"),
    **dict.fromkeys(["NotationError", "chinese", "iccs", "parse_move", "wxf", "wxf_and_chinese"], "notation"),
    **dict.fromkeys(["GameRecord", "PgnError", "Replay", "read_pgn", "replay"], "pgn"),
    **dict.fromkeys(["START_FEN", "FenError", "IllegalMove", "Move", "Position", "Side"], "position"),
    **dict.fromkeys(["natural_limit_count", "natural_limit_rule", "NaturalLimitCount", "insufficient_material",
                     "insufficient_material_reason"], "limits"),
    **dict.fromkeys(["judge_repetition", "RepetitionVerdict", "classify_move", "find_cycle"], "repetition"),
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [  # the same names as _LAZY (tests/rules/test_api.py checks it)
    "START_FEN",
    "Board",
    "FenError",
    "GameRecord",
    "IllegalMove",
    "Move",
    "NaturalLimitCount",
    "NotationError",
    "PgnError",
    "Position",
    "RepetitionVerdict",
    "Replay",
    "Side",
    "chinese",
    "classify_move",
    "find_cycle",
    "iccs",
    "insufficient_material",
    "insufficient_material_reason",
    "judge_repetition",
    "natural_limit_count",
    "natural_limit_rule",
    "parse_move",
    "read_pgn",
    "replay",
    "wxf",
    "wxf_and_chinese",
]
