"""Perft: the number of leaf nodes of the legal move tree, the standard check of a move generator."""

from __future__ import annotations

import pytest

from xqarb.referee.rules import START_FEN, Position

# Published figures for the start position (e.g. the Chess Programming Wiki's Xiangqi perft table and
# Fairy-Stockfish's test suite): 44 / 1,920 / 79,666 / 3,290,240 / 133,312,995.
START_PERFT = {1: 44, 2: 1920, 3: 79666, 4: 3290240}


@pytest.mark.parametrize("depth", [0, 1, 2, 3])
def test_start_position_perft(depth: int) -> None:
    expected = 1 if depth == 0 else START_PERFT[depth]
    assert Position.from_fen(START_FEN).board().perft(depth) == expected


@pytest.mark.slow
def test_start_position_perft_4() -> None:
    assert Position.from_fen(START_FEN).board().perft(4) == START_PERFT[4]
