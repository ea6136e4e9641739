"""Perft: the number of leaf nodes of the legal move tree, the standard check of a move generator."""

from __future__ import annotations

import pytest

from xqarb.referee.rules import START_FEN, Position

# Published figures: the start position 44 / 1,920 / 79,666 / 3,290,240 (Chess Programming Wiki, Fairy-Stockfish's
# tests/perft.sh), and the two further Xiangqi positions of Fairy-Stockfish's tests/perft.sh at depth 4.
START_PERFT = {1: 44, 2: 1920, 3: 79666, 4: 3290240}
MIDGAME = "1rbaka2R/5r3/6n2/2p1p1p2/4P1bP1/PpC3Bc1/1nPR2P2/2N2AN2/1c2K1p2/2BAC4 w - - 0 1"  # perft 4 = 4,485,547
ENDING = "4kcP1N/8n/3rb4/9/9/9/9/3p1A3/4K4/5CB2 w - - 0 1"  # perft 4 = 92,741


@pytest.mark.parametrize("depth", [0, 1, 2, 3])
def test_start_position_perft(depth: int) -> None:
    expected = 1 if depth == 0 else START_PERFT[depth]
    assert Position.from_fen(START_FEN).board().perft(depth) == expected


def test_published_ending_perft_4() -> None:
    assert Position.from_fen(ENDING).board().perft(4) == 92741


def test_perft_leaves_the_board_as_it_found_it() -> None:
    board = Position.from_fen(MIDGAME).board()
    before = (list(board.b), board.hash, board.side, set(board.pieces[0]), set(board.pieces[1]))
    assert board.perft(1) == len(board.legal_moves()) == 49
    board.perft(3)
    assert (list(board.b), board.hash, board.side, set(board.pieces[0]), set(board.pieces[1])) == before


@pytest.mark.slow
def test_start_position_perft_4() -> None:
    assert Position.from_fen(START_FEN).board().perft(4) == START_PERFT[4]


@pytest.mark.slow
def test_published_midgame_perft_4() -> None:
    assert Position.from_fen(MIDGAME).board().perft(4) == 4485547
