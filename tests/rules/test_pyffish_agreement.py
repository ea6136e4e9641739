"""Legal move sets, check and mate agree with Fairy-Stockfish (pyffish, the C++ reference) on >= 10,000 positions.

pyffish writes moves UCI-style with ranks 1-10 (`h3e3`); ICCS ranks are 0-9 (`h2e2`). The positions come from
seeded random playouts (every kind of odd position: pins, discovered cannon screens, facing kings, checks, 困毙)
and from the shared real games. Each pyffish call costs several milliseconds (it builds its position from scratch),
so the default run asks it for the legal moves of every position, and whether the side to move is in check for
every position where we say so and one in twenty of the others; the slow test covers far more positions.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from xqarb.referee.rules import START_FEN, FenError, Position, read_pgn, replay
from xqarb.referee.rules.board import point

sf = pytest.importorskip("pyffish")


def _uci(iccs: str) -> str:
    return f"{iccs[0]}{int(iccs[1]) + 1}{iccs[2]}{int(iccs[3]) + 1}"


def _reference(fen: str) -> list[str]:
    return sorted(sf.legal_moves("xiangqi", fen, []))


def _playouts(n_positions: int, seed: int) -> tuple[int, int, int]:
    """Compare every position of seeded random games until `n_positions`; returns (positions, checks, ends)."""
    rng = random.Random(seed)
    positions = checks = ends = 0
    while positions < n_positions:
        board = Position.from_fen(START_FEN).board()
        for _ in range(rng.randint(10, 200)):
            fen = Position._trusted(board).fen()
            moves = board.legal_moves()
            ours = sorted(_uci(point(m >> 7) + point(m & 127)) for m in moves)
            assert ours == _reference(fen), fen
            in_check = board.in_check()
            if in_check or positions % 20 == 0:
                assert in_check == sf.gives_check("xiangqi", fen, []), fen
            positions += 1
            checks += in_check
            if not moves:
                ends += 1
                # 3.2 / 3.3: no legal move loses (checkmate or 困毙): pyffish scores it as mate for the opponent
                assert sf.game_result("xiangqi", fen, []) == -sf.VALUE_MATE, fen
                break
            board.make(rng.choice(moves))
    return positions, checks, ends


def _sparse_position(rng: random.Random) -> Position | None:
    """Kings and a few random pieces on points they can reach: endings full of checks, mates and 困毙."""
    cells = [0] * 90
    cells[rng.choice([3, 4, 5, 12, 13, 14, 21, 22, 23])] = 1
    cells[rng.choice([84, 85, 86, 75, 76, 77, 66, 67, 68])] = -1
    for _ in range(rng.randint(1, 7)):
        code = rng.choice([2, 3, 4, 5, 6, 7, 4, 5, 6, 7]) * rng.choice([1, -1])
        sq = rng.randrange(90)
        if not cells[sq]:
            cells[sq] = code
    try:
        return Position(tuple(cells), rng.choice([1, -1]))
    except FenError:
        return None  # a piece on a point it can never reach, or the side not to move in check


def _sparse(n_positions: int, seed: int) -> tuple[int, int, int]:
    rng = random.Random(seed)
    positions = checks = ends = 0
    while positions < n_positions:
        pos = _sparse_position(rng)
        if pos is None:
            continue
        fen = pos.fen()
        assert sorted(_uci(str(m)) for m in pos.legal_moves()) == _reference(fen), fen
        in_check = pos.in_check()
        if in_check or positions % 20 == 0:
            assert in_check == sf.gives_check("xiangqi", fen, []), fen
        if not pos.legal_moves():
            ends += 1
            assert pos.is_checkmate() != pos.is_stalemate()
            assert sf.game_result("xiangqi", fen, []) == -sf.VALUE_MATE, fen
        positions += 1
        checks += in_check
    return positions, checks, ends


def test_legal_moves_of_random_playouts_match_pyffish() -> None:
    positions, checks, _ = _playouts(5000, seed=20260301)
    assert positions >= 5000
    assert checks > 50  # the sample must really contain the hard cases


def test_legal_moves_of_random_endings_match_pyffish() -> None:
    positions, checks, ends = _sparse(2500, seed=99)
    assert positions >= 2500
    assert checks > 200
    assert ends > 10


@pytest.mark.slow
@pytest.mark.timeout(3600)  # ~40,000 pyffish calls of a few milliseconds each
def test_legal_moves_of_many_more_random_playouts_match_pyffish() -> None:
    assert _playouts(30000, seed=7)[1] > 300
    assert _sparse(10000, seed=8)[2] > 30


def test_legal_moves_of_real_game_positions_match_pyffish(shared_data: Path) -> None:
    text = (shared_data / "games" / "ccpd_dev.pgn").read_text(encoding="utf-8")
    games = read_pgn(text)
    positions = 0
    for i in range(0, len(games), 24):  # every 24th game: openings, middlegames and endings of 42 games
        for pos in replay(games[i], i).positions:
            fen = pos.fen()
            assert sorted(_uci(str(m)) for m in pos.legal_moves()) == _reference(fen), fen
            if positions % 20 == 0 or pos.in_check():
                assert pos.in_check() == sf.gives_check("xiangqi", fen, []), fen
            positions += 1
    assert positions >= 3000
