"""Position: FEN and BoardStable forms, the move rules of 2.2, check/mate/困毙 (3), and the arbiter's reasons."""

from __future__ import annotations

import pytest

from xqarb.referee.rules import START_FEN, FenError, IllegalMove, Move, Position

START = Position.from_fen(START_FEN)


def test_fen_round_trip_and_side_letters() -> None:
    assert START.fen() == START_FEN
    assert START.side == "red"
    assert Position.from_fen(START_FEN.replace(" w ", " r ")).fen() == START_FEN  # 'r' accepted for Red
    black = Position.from_fen("4k4/9/9/9/9/9/9/9/9/3K5 b - - 7 30")
    assert black.side == "black"
    assert black.plies_since_capture == 7
    assert black.fen() == "4k4/9/9/9/9/9/9/9/9/3K5 b - - 7 30"
    assert Position.from_fen("4k4/9/9/9/9/9/9/9/9/3K5 w").fen() == "4k4/9/9/9/9/9/9/9/9/3K5 w - - 0 1"


def test_squares_are_rank_9_first_files_a_to_i() -> None:
    sq = START.squares()
    assert len(sq) == 90
    assert sq[:9] == "rnbakabnr"  # rank 9
    assert sq[81:] == "RNBAKABNR"  # rank 0
    assert sq[2 * 9 + 1] == "c" and sq[7 * 9 + 7] == "C"  # b7 and h2
    assert Position.from_squares(sq, "red") == START
    after = START.play(Move("h2", "e2"))
    assert Position.from_squares(after.squares(), "black").fen().split()[:2] == after.fen().split()[:2]
    assert START.piece_at("e0") == "K" and START.piece_at("b7") == "c" and START.piece_at("e5") is None


@pytest.mark.parametrize(
    ("squares", "words"),
    [
        ("X" + "." * 89, "unknown type"),
        ("?" + "." * 89, "unsure"),
        ("." * 89, "90 characters"),
    ],
)
def test_from_squares_refuses_what_is_not_a_position(squares: str, words: str) -> None:
    with pytest.raises(FenError, match=words):
        Position.from_squares(squares, "red")


@pytest.mark.parametrize(
    ("fen", "words"),
    [
        ("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9 w", "10 ranks"),
        ("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABN w", "8 points"),
        ("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNX w", "unknown piece letter"),
        ("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR x", "side to move"),
        ("rnba1abnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w", "exactly one king"),
        ("4k4/9/9/9/9/9/9/9/9/K8 w", "outside its palace"),
        ("4k4/9/9/9/9/9/9/9/9/3KA4 w", "advisor cannot stand on e0"),
        ("4k4/9/9/9/9/9/1P7/9/9/3K5 w", "pawn cannot stand on b3"),  # it cannot move sideways before the river
        ("4k4/9/9/9/9/9/9/9/9/4K4 w", "not to move but its king is attacked"),  # kings facing, Black not to move
        ("", "empty FEN"),
    ],
)
def test_bad_fens_say_what_is_wrong(fen: str, words: str) -> None:
    with pytest.raises(FenError, match=words):
        Position.from_fen(fen)


def test_play_is_a_value_and_keeps_the_counters() -> None:
    after = START.play(Move("h2", "e2"))
    assert START.fen() == START_FEN  # unchanged
    assert after.side == "black" and after.plies_since_capture == 1 and after.fullmove == 1
    after2 = after.play(Move.parse("h9g7"))
    assert after2.fullmove == 2 and after2.plies_since_capture == 2
    # a capture resets the count (the FEN halfmove field; the 自然限着 count rests on it)
    p = Position.from_fen("5k3/9/9/9/9/9/9/9/9/3KR4 w - - 11 40")
    assert p.captured_by(Move("e0", "e4")) is None
    assert p.play(Move("e0", "e4")).plies_since_capture == 12
    q = Position.from_fen("5k3/9/9/9/9/4p4/9/9/9/3KR4 w - - 11 40")
    assert q.captured_by(Move("e0", "e4")) == "p"
    assert q.play(Move("e0", "e4")).plies_since_capture == 0


def test_key_is_the_position_not_the_path() -> None:
    a = START.play(Move("h2", "e2")).play(Move("h9", "g7")).play(Move("c3", "c4"))
    b = START.play(Move("c3", "c4")).play(Move("h9", "g7")).play(Move("h2", "e2"))
    assert a.key == b.key
    assert a.fen() == b.fen()
    # side to move is part of the key
    c = START.play(Move("h0", "g2")).play(Move("h9", "g7")).play(Move("g2", "h0")).play(Move("g7", "h9"))
    assert c.key == START.key and c.squares() == START.squares()
    assert START.play(Move("h0", "g2")).key != Position.from_squares(
        START.play(Move("h0", "g2")).squares(), "red").key


def test_start_position_moves() -> None:
    moves = START.legal_moves()
    assert len(moves) == 44
    assert [str(m) for m in moves] == sorted(str(m) for m in moves)
    assert Move("h2", "e2") in moves and Move("b0", "c2") in moves
    assert not START.in_check() and not START.is_checkmate() and not START.is_stalemate()


@pytest.mark.parametrize(
    ("fen", "move", "reason"),
    [
        (START_FEN, "a0a4", "the rook's path is blocked at a3"),
        (START_FEN, "h2h7", "the cannon captures only by jumping exactly one piece, and none stands between"),
        (START_FEN, "h2h5", None),
        (START_FEN, "e0e2", "the king moves one point along a file or rank"),
        (START_FEN, "d0d1", "the advisor moves one point diagonally"),
        (START_FEN, "a3a2", "a pawn never moves backwards"),
        (START_FEN, "a3b3", "a pawn may move sideways only after crossing the river"),
        (START_FEN, "a3a5", "a pawn moves one point at a time"),
        (START_FEN, "e6e5", "the pawn on e6 is Black's and Red is to move"),
        (START_FEN, "e4e5", "no piece on e4"),
        (START_FEN, "c0e2", None),
        (START_FEN, "b0b1", "the horse moves one point straight then one diagonally"),
        (START_FEN, "b0d1", "horse leg blocked at c0"),
        (START_FEN, "a0b0", "own horse on b0"),
        # 蹩马腿: the point next to the horse in the direction of its long step
        ("4k4/9/9/9/9/9/9/9/5p3/3K1N3 w", "f0g2", "horse leg blocked at f1"),
        ("4k4/9/9/9/9/9/9/9/5p3/3K1N3 w", "f0d1", None),
        # 塞象眼 and the river
        ("3k5/9/9/9/9/9/9/9/3p5/2B1K4 w", "c0e2", "elephant eye blocked at d1"),
        ("3k5/9/9/9/9/2B6/9/9/9/4K4 w", "c4e6", "the elephant may not cross the river"),
        ("3k5/9/9/9/9/9/9/9/4A4/4K4 w", "e1e2", "the advisor moves one point diagonally"),
        ("3k5/9/9/9/9/9/9/5A3/9/4K4 w", "f2g3", "the advisor may not leave the palace"),
        ("3k5/9/9/9/9/9/9/4K4/9/9 w", "e2e3", "the king may not leave the palace"),
        # 炮打隔子 with two screens
        ("4k4/9/4r4/9/4p4/9/9/4p4/4C4/3K5 w", "e1e7", "and 2 stand between e1 and e7"),
        ("4k4/9/4r4/9/4p4/9/9/9/4C4/3K5 w", "e1e7", None),
        ("5k3/9/9/9/4p4/9/9/9/4C4/3K5 w", "e1e6", "the cannon's path is blocked at e5"),
        # 3.4 自杀: flying general, exposing the king, not answering check
        ("4k4/9/9/9/9/9/9/9/4r4/4K4 w", "e0e1", "kings would face each other on file e"),
        ("4k4/9/9/9/9/9/9/9/4N4/4K4 w", "e1g2", "kings would face each other on file e"),
        ("4k4/4r4/9/9/9/9/9/9/4N4/4K4 w", "e1g2", "would leave the king in check from the rook on e8"),
        ("3k5/9/9/9/9/9/9/9/9/4K1r2 w", "e0f0", "does not answer the check from the rook on g0"),
        ("3k5/9/9/9/9/9/9/9/9/4K1r2 w", "e0e1", None),
        ("3k5/9/9/9/5R3/9/9/9/9/4K1r2 w", "f5f4", "does not answer the check from the rook on g0"),
        ("3k5/9/9/9/5R3/9/9/9/9/4K1r2 w", "f5f0", None),
    ],
)
def test_illegal_reasons_in_arbiter_words(fen: str, move: str, reason: str | None) -> None:
    pos = Position.from_fen(fen)
    mv = Move.parse(move)
    got = pos.illegal_reason(mv)
    if reason is None:
        assert got is None
        assert pos.is_legal(mv)
    else:
        assert got is not None and reason in got
        assert not pos.is_legal(mv)
        with pytest.raises(IllegalMove) as err:
            pos.play(mv)
        assert err.value.reason == got


def test_checkmate_and_stalemate_both_leave_no_move() -> None:
    mate = Position.from_fen("3k5/4R4/3R5/9/9/9/9/9/9/4K4 b")
    assert mate.in_check() and mate.is_checkmate() and not mate.is_stalemate() and mate.is_game_over()
    assert mate.checkers() == ["d7"]
    # 困毙 (3.3): not in check, no legal move; a loss under 4.1.2, unlike chess
    stale = Position.from_fen("3k5/R8/9/9/9/9/9/4R4/9/4K4 b")
    assert not stale.in_check() and stale.is_stalemate() and not stale.is_checkmate() and stale.is_game_over()
    assert stale.legal_moves() == []


def test_gives_check_including_the_cannon_screen_and_discovered_checks() -> None:
    p = Position.from_fen("3k5/9/9/9/9/9/9/9/2C6/4K4 w")
    assert p.gives_check(Move("c1", "d1")) is False  # no screen
    p2 = Position.from_fen("3k5/9/3a5/9/9/9/9/9/2C6/4K4 w")
    assert p2.gives_check(Move("c1", "d1")) is True  # the black advisor on d7 is the screen (炮打隔子)
    p3 = Position.from_fen("3k5/9/9/9/9/9/3N5/9/3R5/4K4 w")
    assert p3.gives_check(Move("d3", "b4")) is True  # the horse unmasks the rook
    assert p3.gives_check(Move("d3", "e5")) is True
    assert p3.gives_check(Move("d1", "e1")) is False


def test_illegal_moves_never_generated_for_pinned_pieces() -> None:
    # the red horse on e1 is pinned by the rook on e8: none of its moves is legal
    pinned = Position.from_fen("3k5/4r4/9/9/9/9/9/9/4N4/4K4 w")
    assert all(m.frm != "e1" for m in pinned.legal_moves())
    # a piece between the kings may not leave the file
    between = Position.from_fen("4k4/9/9/9/4N4/9/9/9/9/4K4 w")
    assert [m for m in between.legal_moves() if m.frm == "e5"] == []
    assert set(between.legal_moves()) == {Move("e0", "e1"), Move("e0", "d0"), Move("e0", "f0")}
