"""Property tests: FEN and squares round trips, make/unmake restoring board and hash, incremental = fresh hash."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from xqarb.referee.rules import START_FEN, Board, Move, NotationError, Position, parse_move
from xqarb.referee.rules.board import ZOBRIST_SIDE


@st.composite
def games(draw: st.DrawFn) -> tuple[Position, list[int]]:
    """A position reached by legal moves chosen by hypothesis, and the moves."""
    board = Position.from_fen(START_FEN).board()
    played = []
    for _ in range(draw(st.integers(0, 80))):
        moves = board.legal_moves()
        if not moves:
            break
        m = moves[draw(st.integers(0, len(moves) - 1))]
        board.make(m)
        played.append(m)
    return Position._trusted(board), played


@settings(max_examples=150, deadline=None)
@given(games())
def test_fen_and_squares_round_trip(game: tuple[Position, list[int]]) -> None:
    pos, _ = game
    again = Position.from_fen(pos.fen())
    assert again == pos and again.fen() == pos.fen() and again.key == pos.key
    assert Position.from_squares(pos.squares(), pos.side, halfmove=pos.plies_since_capture,
                                 fullmove=pos.fullmove) == pos
    assert again.legal_moves() == pos.legal_moves()


@settings(max_examples=150, deadline=None)
@given(games())
def test_make_unmake_restores_everything_and_hash_is_incremental(game: tuple[Position, list[int]]) -> None:
    pos, played = game
    board = Position.from_fen(START_FEN).board()
    states = []
    for m in played:
        states.append((list(board.b), board.hash, board.side, board.halfmove, board.fullmove,
                       (set(board.pieces[0]), set(board.pieces[1])), list(board.kings)))
        board.make(m)
        fresh = Board(board.b, board.side)
        assert board.hash == fresh.hash  # the incremental hash equals the hash computed from scratch
        assert board.pieces == fresh.pieces and board.kings == fresh.kings
    assert board.hash == pos.key
    # Position.play updates placement, hash and counters on its own: it must land on the same value
    value = Position.from_fen(START_FEN)
    for m in played:
        value = value.play(Move._from_int(m))
    assert value == pos and value.key == pos.key == Position.from_fen(value.fen()).key
    for m, state in zip(reversed(played), reversed(states), strict=True):
        board.unmake()
        assert (list(board.b), board.hash, board.side, board.halfmove, board.fullmove,
                (set(board.pieces[0]), set(board.pieces[1])), list(board.kings)) == state, m
    assert board.hash == Position.from_fen(START_FEN).key


@settings(max_examples=100, deadline=None)
@given(games())
def test_side_to_move_is_in_the_key_and_every_other_move_has_a_reason(game: tuple[Position, list[int]]) -> None:
    pos, _ = game
    if not pos.in_check():  # else the flipped position is impossible (the side not to move would be in check)
        flipped = Position(pos._cells, -pos._side)
        assert flipped.key == pos.key ^ ZOBRIST_SIDE
    legal = set(pos.legal_moves())
    assert all(pos.illegal_reason(mv) is None for mv in legal)
    mine = [pt for pt, letter in pos.pieces().items() if letter.isupper() == (pos.side == "red")]
    for frm in mine:
        for to in ("a0", "e4", "e5", "i9", "d2", "f7", "e1", "e8"):
            mv = Move(frm, to)
            if mv not in legal:
                reason = pos.illegal_reason(mv)
                assert reason, (pos.fen(), str(mv))
                assert not pos.is_legal(mv)


_ALPHABET = (
    "车車俥马馬傌炮砲包相象仕士帅帥将將兵卒进進退平前中后後"
    "一二三四五六七八九１２３４５６７８９123456789+-=.abcdefghiKAEHRCPBN "
)


@settings(max_examples=400, deadline=None)
@given(games(), st.text(alphabet=_ALPHABET, min_size=0, max_size=6))
def test_any_text_is_a_legal_move_or_a_notation_error(game: tuple[Position, list[int]], text: str) -> None:
    pos, _ = game
    try:
        mv = parse_move(pos, text)
    except NotationError as exc:
        assert str(exc)
    else:
        assert pos.is_legal(mv)


def _fresh(pos: Position) -> Position:
    """The same position with nothing listed yet (a position keeps its legal moves once listed)."""
    return Position._trusted(pos.board())


@settings(max_examples=150, deadline=None)
@given(games())
def test_one_move_checked_alone_agrees_with_the_list_of_legal_moves(game: tuple[Position, list[int]]) -> None:
    # The referee checks the one move it saw without listing every move (Position._legal_alone): for every
    # from-to pair of the side to move's pieces (and a few of the opponent's), both ways must agree.
    pos, _ = game
    legal = {m.iccs for m in pos.legal_moves()}
    points = [f"{f}{r}" for f in "abcdefghi" for r in range(10)]
    pieces = pos.pieces()
    agreed = 0
    for frm in pieces:
        for to in points:
            alone = _fresh(pos).is_legal(Move(frm, to))
            assert alone == (frm + to in legal), f"{frm}{to} in {pos.fen()}: alone says {alone}"
            agreed += alone
    assert agreed == len(legal)
    for frm in pieces:  # a touched piece's moves (5.1), listed alone or from the whole list
        from_list = [m for m in pos.legal_moves() if m.frm == frm]
        assert _fresh(pos).legal_moves_from(frm) == from_list == pos.legal_moves_from(frm)
        assert _fresh(pos).has_legal_move_from(frm) == bool(from_list) == pos.has_legal_move_from(frm)
        assert Position.from_fen(pos.fen()).has_legal_move_from(frm) == bool(from_list)  # the parse's own board
    assert _fresh(pos).has_legal_move() == bool(legal)
    assert _fresh(pos).is_game_over() == (not legal)
