"""The tracker's reach of a known piece against the rules core's move generation (the oracle), on real games."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from xqarb.referee.rules import Move, Position
from xqarb.referee.rules.board import BLACK, RED, Board, point, square
from xqarb.vision.grid import point_index, point_name
from xqarb.vision.reach import reach

GAMES = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "games" / "ccpd_dev.jsonl"


def _positions(n_games: int) -> list[Position]:
    out = []
    with GAMES.open() as f:
        for line, _ in zip(f, range(n_games), strict=False):
            g = json.loads(line)
            pos = Position.from_fen(g["start_fen"])
            out.append(pos)
            for m in g["iccs"][:60]:
                pos = pos.play(Move.parse(m))
                out.append(pos)
    return out


def _pseudo_targets(pos: Position, src: int) -> set[int]:
    """Where the rules core lets the piece on `src` go, own king's safety aside (pseudo-legal moves)."""
    # the position's board with the piece's side to move, whichever side the position has to move
    board = Board(pos.board().b, RED if pos.squares()[src].isupper() else BLACK)
    return {point_index(point(m & 127)) for m in board.pseudo_moves(only=square(point_name(src)))}


@pytest.mark.skipif(not GAMES.exists(), reason="the shared games data is not here")
def test_reach_is_the_rules_cores_pseudo_moves_on_real_positions():
    checked = 0
    for pos in _positions(30):
        squares = pos.squares()
        for src, piece in enumerate(squares):
            if piece == ".":
                continue
            assert reach(squares, src) == _pseudo_targets(pos, src), (squares, point_name(src))
            checked += 1
    assert checked > 20000  # 30 games of up to 60 moves, about 28 pieces each


def test_unknown_pieces_reach_anywhere_and_block_like_pieces():
    empty = ["."] * 90
    rook = empty.copy()
    rook[point_index("a0")] = "R"
    rook[point_index("a3")] = "?"
    rook[point_index("a5")] = "p"
    squares = "".join(rook)
    # the `?` may hold a piece: the rook may take it, and goes no further
    assert reach(squares, point_index("a0")) == {point_index(p) for p in ("a1", "a2", "a3")} | {
        point_index(f + "0") for f in "bcdefghi"}
    assert reach(squares, point_index("a3")) is None
    unknown = squares.replace("?", "X")
    assert reach(unknown, point_index("a3")) is None
    # an `X` is a red piece: the red rook cannot take it
    assert point_index("a3") not in reach(unknown, point_index("a0"))
    assert reach(squares, point_index("e4")) == set()
