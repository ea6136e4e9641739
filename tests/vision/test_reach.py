"""The tracker's reach of a known piece against the rules core's move generation (the oracle), on real games."""

from __future__ import annotations

import json
from pathlib import Path

from xqarb.referee.rules import Move, Position
from xqarb.referee.rules.board import BLACK, RED, Board, point, square
from xqarb.vision.grid import point_index, point_name
from xqarb.vision.reach import reach


def _positions(games: Path, n_games: int) -> list[Position]:
    out = []
    with games.open() as f:
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


def test_reach_is_the_rules_cores_pseudo_moves_on_real_positions(shared_data: Path):
    checked = 0
    for pos in _positions(shared_data / "games" / "ccpd_dev.jsonl", 30):
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


def test_a_cannon_screened_by_a_piece_between_two_points_reaches_beyond_it():
    """Two unsure points side by side may be one piece standing between them (5.10): a cannon screened by the first
    may be screened by that same piece at the second. Hard game 389: the black cannon b7 took the horse g7 over the
    bishop left between e7 and f7; counting the pair as two screens, the capture could not be found."""
    board = ["."] * 90
    board[point_index("b7")] = "c"
    board[point_index("e7")] = board[point_index("f7")] = "?"
    board[point_index("g7")] = "N"
    board[point_index("h7")] = "P"
    squares = "".join(board)
    row = {p for p in reach(squares, point_index("b7")) if p // 9 == point_index("b7") // 9}
    # c7 and d7 to move to, and e7 (the pair's empty half); f7 and g7 to take on (f7 if the pair is two pieces);
    # not h7, behind the horse
    assert row == {point_index(p) for p in ("a7", "c7", "d7", "e7", "f7", "g7")}
    # with a known piece on the first point, the second is the only one it may take on
    board[point_index("e7")] = "p"
    row = {p for p in reach("".join(board), point_index("b7")) if p // 9 == point_index("b7") // 9}
    assert row == {point_index(p) for p in ("a7", "c7", "d7", "f7")}


def test_a_cannon_may_move_onto_the_empty_half_of_a_piece_between_two_points():
    """Hard game 215: the black cannon h3 went to g3, beside the red pawn left between g3 and g4 (both unsure): an
    unsure point may be empty, and the cannon may move there (counting it a piece, the move was read as the cannon
    taking on g4, and the game was lost from there). A known piece there it cannot move onto nor take."""
    board = ["."] * 90
    board[point_index("h3")] = "c"
    board[point_index("g3")] = board[point_index("g4")] = "?"
    board[point_index("f3")] = "P"
    assert point_index("g3") in reach("".join(board), point_index("h3"))
    board[point_index("g3")] = "P"
    assert point_index("g3") not in reach("".join(board), point_index("h3"))


def test_a_piece_between_two_points_may_be_taken_on_either():
    """Hard game 90: the red cannon b2 took the black cannon left between b6 and b7, on b7 (over the rook b5): the
    pair is one piece, and a rook or cannon that meets it may take on either of its points."""
    board = ["."] * 90
    board[point_index("b2")] = "C"
    board[point_index("b5")] = "r"
    board[point_index("b6")] = board[point_index("b7")] = "?"
    board[point_index("a3")] = "R"
    board[point_index("a6")] = board[point_index("a7")] = "?"
    squares = "".join(board)
    files = {p for p in reach(squares, point_index("b2")) if p % 9 == point_index("b2") % 9}
    assert files == {point_index(p) for p in ("b0", "b1", "b3", "b4", "b6", "b7")}
    files = {p for p in reach(squares, point_index("a3")) if p % 9 == point_index("a3") % 9}
    assert files == {point_index(p) for p in ("a0", "a1", "a2", "a4", "a5", "a6", "a7")}


def test_an_unsure_leg_or_eye_may_be_empty() -> None:
    """Hard game 762: the black horse g7 took the rook h5 over g6, a point left unsure since the pawn g6-g5 and never
    seen again: a `?` on a horse's leg or an elephant's eye may be empty, and blocks neither; a piece there does."""
    board = ["."] * 90
    board[point_index("g7")] = "n"
    board[point_index("g6")] = "?"
    board[point_index("h5")] = "R"
    assert point_index("h5") in reach("".join(board), point_index("g7"))
    board[point_index("g6")] = "p"
    assert point_index("h5") not in reach("".join(board), point_index("g7"))
    board = ["."] * 90
    board[point_index("c9")] = "b"
    board[point_index("d8")] = "?"
    assert point_index("e7") in reach("".join(board), point_index("c9"))
    board[point_index("d8")] = "P"
    assert point_index("e7") not in reach("".join(board), point_index("c9"))


def test_a_rook_passes_the_empty_half_of_a_piece_between_two_points_across_its_line() -> None:
    """Hard game liu 68, ply 35: the black rook c8 took the red elephant c0 past the red rook left between b1 and c1
    (both unsure): the pair's piece may stand on b1, and c1 may be empty; the rook may also take it on c1. A pair
    along the rook's line, or one unsure point alone, still stops it."""
    board = ["."] * 90
    board[point_index("c8")] = "r"
    board[point_index("b1")] = board[point_index("c1")] = "?"
    board[point_index("c0")] = "B"
    file_c = {p for p in reach("".join(board), point_index("c8")) if p % 9 == point_index("c8") % 9}
    assert file_c == {point_index(f"c{r}") for r in (9, 7, 6, 5, 4, 3, 2, 1, 0)}
    board[point_index("b1")] = "."
    file_c = {p for p in reach("".join(board), point_index("c8")) if p % 9 == point_index("c8") % 9}
    assert point_index("c0") not in file_c and point_index("c1") in file_c
    board[point_index("c2")] = "?"
    file_c = {p for p in reach("".join(board), point_index("c8")) if p % 9 == point_index("c8") % 9}
    assert point_index("c0") not in file_c and point_index("c1") in file_c
