"""Notation (7.5): ICCS, WXF and Chinese, generated and read back, in simplified and traditional characters."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from xqarb.referee.rules import (
    START_FEN,
    FenError,
    Move,
    NotationError,
    Position,
    chinese,
    iccs,
    parse_move,
    read_pgn,
    replay,
    wxf,
    wxf_and_chinese,
)

START = Position.from_fen(START_FEN)


def _play(pos: Position, *texts: str) -> Position:
    for t in texts:
        pos = pos.play(parse_move(pos, t))
    return pos


def test_opening_in_every_form() -> None:
    mv = Move("h2", "e2")
    assert iccs(mv) == "h2e2"
    assert chinese(START, mv) == "炮二平五"
    assert chinese(START, mv, traditional=True) == "炮二平五"
    assert wxf(START, mv) == "C2=5"
    after = START.play(mv)
    reply = Move("h9", "g7")
    assert chinese(after, reply) == "马8进7"  # DESIGN: Arabic digits for Black
    assert chinese(after, reply, traditional=True) == "馬８進７"  # as printed records: full-width digits
    assert chinese(after, reply, traditional=False, fullwidth=True) == "马８进７"
    assert wxf(after, reply) == "H8+7"


def test_the_7_5_examples_full_and_abbreviated() -> None:
    # 7.5's own example, as printed (Chinese numerals for both sides), then in its abbreviated form.
    full = ["炮二平五", "马八进七", "马二进三", "车九平八", "车一平二", "炮八进四"]
    short = ["炮25", "马87", "马23", "车98", "车12", "炮84"]
    expected = ["h2e2", "h9g7", "h0g2", "i9h9", "i0h0", "h7h3"]
    pos = START
    for text, abbreviated, want in zip(full, short, expected, strict=True):
        mv = parse_move(pos, text)
        assert str(mv) == want, text
        if abbreviated == "车12":
            # The abbreviated form drops the direction, and here 车一进二 (i0i2) is as legal as 车一平二: the
            # reader must not guess (an entry that cannot be identified counts as not recorded, 7.2).
            with pytest.raises(NotationError, match=r"ambiguous.*i0h0, i0i2"):
                parse_move(pos, abbreviated)
        else:
            assert parse_move(pos, abbreviated) == mv, abbreviated
        pos = pos.play(mv)


@pytest.mark.parametrize(
    "text",
    ["马8进7", "馬８進７", "马八进七", "馬8進7", "马８进7", "H8+7", "h8+7", "Ｈ８＋７", "h9g7", "H9-G7", "h9 g7",
     "ｈ９ｇ７", " 马 8 进 7 "],
)
def test_every_spelling_of_one_move(text: str) -> None:
    after = START.play(Move("h2", "e2"))
    assert parse_move(after, text) == Move("h9", "g7")


@pytest.mark.parametrize(
    ("text", "move"),
    [
        ("傌二進三", "h0g2"), ("馬二进三", "h0g2"), ("俥一進一", "i0i1"), ("車一进一", "i0i1"),
        ("炮2平5", "h2e2"),  # Arabic digits for Red are read too
        ("相三進五", "g0e2"), ("仕四進五", "f0e1"), ("帥五進一", "e0e1"), ("帅五进一", "e0e1"),
        ("兵七進一", "c3c4"), ("兵七进一", "c3c4"),
    ],
)
def test_traditional_and_variant_characters_for_red(text: str, move: str) -> None:
    assert parse_move(START, text) == Move.parse(move)


@pytest.mark.parametrize(
    ("text", "move"),
    [("砲8平5", "h7e7"), ("包８平５", "h7e7"), ("炮8平5", "h7e7"), ("將5進1", "e9e8"), ("将５进１", "e9e8"),
     ("象3進5", "c9e7"), ("士4進5", "d9e8"), ("卒3進1", "c6c5"), ("車1進1", "a9a8")],
)
def test_black_moves_any_digits(text: str, move: str) -> None:
    after = START.play(Move("b0", "c2"))
    assert parse_move(after, text) == Move.parse(move)


def test_front_and_rear_of_two_on_a_file() -> None:
    pos = Position.from_fen("5k3/9/9/9/9/3R5/9/3R5/9/4K4 w")  # red rooks on d4 and d2 (file 六)
    front, rear = Move("d4", "a4"), Move("d2", "d3")
    assert chinese(pos, front) == "前车平九" and chinese(pos, front, True) == "前車平九"
    assert chinese(pos, rear) == "后车进一" and chinese(pos, rear, True) == "後車進一"
    assert wxf(pos, front) == "+R=9" and wxf(pos, rear) == "-R+1"
    for text in ("前车平九", "前車平九", "車前平九", "+R=9", "R+=9", "前车9"):
        assert parse_move(pos, text) == front, text
    for text in ("后车进一", "後車進一", "-R+1", "R-+1"):
        assert parse_move(pos, text) == rear, text
    # 7.5's example 前马退四 for Black horses: the front one is the one nearer Red
    black = Position.from_fen("3k5/9/9/9/5n3/9/5n3/9/9/4K4 b")  # black horses f5 and f3 (Black's file 6)
    assert chinese(black, Move("f3", "g1")) == "前马进7"
    assert chinese(black, Move("f5", "g7")) == "后马退7"


def test_three_four_and_five_pawns_on_a_file() -> None:
    three = Position.from_fen("4k4/9/4P4/4P4/4P4/9/9/9/9/3K5 w")  # e7 e6 e5
    assert chinese(three, Move("e7", "e8")) == "前兵进一"
    assert chinese(three, Move("e6", "d6")) == "中兵平六"
    assert chinese(three, Move("e5", "f5")) == "后兵平四"
    assert wxf(three, Move("e6", "d6")) == "=P=6"
    four = Position.from_fen("3k5/4P4/4P4/4P4/4P4/9/9/9/9/5K3 w")  # e8 e7 e6 e5
    assert chinese(four, Move("e8", "d8")) == "一兵平六"
    assert chinese(four, Move("e6", "d6")) == "三兵平六"
    assert chinese(four, Move("e5", "f5")) == "四兵平四"
    assert wxf(four, Move("e6", "d6")) == "3P=6"
    assert parse_move(four, "二兵平四") == Move("e7", "f7")
    assert parse_move(four, "2P=4") == Move("e7", "f7")


def test_pawns_doubled_on_several_files_name_the_file() -> None:
    pos = Position.from_fen("4k4/9/9/2P3P2/2P3P2/9/9/9/9/3K5 w")  # c6 c5 and g6 g5
    assert chinese(pos, Move("c6", "c7")) == "前七进一"
    assert chinese(pos, Move("g5", "h5")) == "后三平二"
    assert wxf(pos, Move("c6", "c7")) == "+7+1"
    assert parse_move(pos, "前七进一") == Move("c6", "c7")
    assert parse_move(pos, "后三平二") == Move("g5", "h5")
    with pytest.raises(NotationError, match="ambiguous"):
        parse_move(pos, "前兵进一")  # which file? both front pawns can advance
    bpos = Position.from_fen("4k4/9/9/9/9/2p3p2/2p3p2/9/9/3K5 b")  # black pawns c4 c3, g4 g3
    assert chinese(bpos, Move("c3", "c2")) == "前3进1"
    assert chinese(bpos, Move("g4", "f4"), traditional=True) == "後７平６"


def test_errors_say_what_was_wrong() -> None:
    with pytest.raises(NotationError, match="not a character"):
        parse_move(START, "hello")
    with pytest.raises(NotationError, match="no legal move of Red fits"):
        parse_move(START, "车五进一")
    with pytest.raises(NotationError, match="ambiguous"):
        parse_move(START.play(Move("h0", "g2")).play(Move("h9", "g7")), "车12")  # 车一进二 or 车一平二
    pinned = Position.from_fen("3k5/4r4/9/9/9/9/9/9/4N4/4K4 w")
    with pytest.raises(NotationError) as err:
        parse_move(pinned, "马五进七")
    assert err.value.move == Move("e1", "c2")
    assert err.value.reason is not None and "check from the rook on e8" in err.value.reason
    with pytest.raises(NotationError, match="blocked at a3") as err2:
        parse_move(START, "a0a4")
    assert err2.value.move == Move("a0", "a4")
    with pytest.raises(NotationError, match="empty"):
        parse_move(START, "  ")
    with pytest.raises(NotationError):
        chinese(START, Move("a0", "a4"))  # only legal moves are notated


def _crowded_position(rng: random.Random) -> Position | None:
    """Kings, crossed pawns piled on few files, and doubled pieces: the hard cases of 7.5."""
    cells = [0] * 90
    cells[rng.choice([3, 4, 5, 12, 13, 14])] = 1
    cells[rng.choice([84, 85, 86, 75, 76, 77])] = -1
    for side in (1, -1):
        files = rng.sample(range(9), 2)
        for _ in range(5):
            f = rng.choice(files)
            r = rng.randrange(5, 9) if side == 1 else rng.randrange(1, 5)
            if not cells[r * 9 + f]:
                cells[r * 9 + f] = 7 * side
        for code in (4, 4, 5, 5, 6, 6):
            sq = rng.randrange(90)
            if not cells[sq] and rng.random() < 0.5:
                cells[sq] = code * side
    try:
        return Position(tuple(cells), rng.choice([1, -1]))
    except FenError:
        return None


def test_every_move_of_crowded_positions_reads_back() -> None:
    rng = random.Random(5)
    checked = doubled = 0
    while checked < 3000:
        pos = _crowded_position(rng)
        if pos is None:
            continue
        for mv in pos.legal_moves():
            texts = (chinese(pos, mv), chinese(pos, mv, traditional=True), wxf(pos, mv),
                     chinese(pos, mv, fullwidth=True))
            for text in texts:
                assert parse_move(pos, text) == mv, (text, str(mv), pos.fen())
            assert wxf_and_chinese(pos, mv) == (texts[2], texts[0])  # the recorded move's two notations at once
            doubled += texts[0][0] in "前中后一二三四五12345"
            checked += 1
    assert doubled > 300


def test_wxf_agrees_with_fairy_stockfish() -> None:
    sf = pytest.importorskip("pyffish")
    cases = [
        (START_FEN, "h2e2"), (START_FEN, "b0c2"), (START_FEN, "c0e2"), (START_FEN, "f0e1"), (START_FEN, "e0e1"),
        (START_FEN, "c3c4"), (START_FEN, "b2b9"),
        ("5k3/9/9/9/9/3R5/9/3R5/9/4K4 w", "d4a4"),
        ("5k3/9/9/9/9/3R5/9/3R5/9/4K4 w", "d2d3"),
        ("3k5/9/9/9/5n3/9/5n3/9/9/4K4 b", "f3g1"),
        ("3k5/9/9/9/5n3/9/5n3/9/9/4K4 b", "f5g7"),
        # two advisors / elephants on a file keep the file (the direction tells them apart)
        ("3ak1b2/4a4/4b4/6p1p/2p1N2r1/p5P2/2c1P2cP/R2AB1NR1/nr6C/2BAK4 w - - 18 25", "d2e1"),
        ("4kab2/4a4/n2c5/p1p6/1r4b1N/P1P6/R3P3P/4BC3/4A4/2B1KA3 b - - 0 28", "g5i7"),
    ]
    for fen, move in cases:
        pos = Position.from_fen(fen)
        mv = Move.parse(move)
        ref = sf.get_san("xiangqi", fen, f"{move[0]}{int(move[1]) + 1}{move[2]}{int(move[3]) + 1}", False,
                         sf.NOTATION_XIANGQI_WXF)
        ours = wxf(pos, mv)
        # Fairy-Stockfish writes the front/rear sign after the letter (C++1); we write it first (+C+1), as the
        # WXF examples do; both are read.
        if ours[0] in "+-":
            ours = ours[1] + ours[0] + ours[2:]
        assert ours == ref, (fen, move)
        assert parse_move(pos, ref) == mv


def test_chinese_agrees_with_the_cchess_library_on_real_games(shared_data: Path) -> None:
    # cchess (a pure-Python Xiangqi library, test-only) writes simplified characters with full-width digits.
    cchess = pytest.importorskip("cchess")
    games = read_pgn((shared_data / "games" / "ccpd_dev.pgn").read_text(encoding="utf-8"))
    compared = 0
    for i in range(0, 500, 25):
        played = replay(games[i], i)
        board = cchess.ChessBoard(games[i].start_fen)
        for pos, mv in zip(played.positions, played.moves, strict=False):
            theirs = board.move_iccs(str(mv)).to_text()
            assert chinese(pos, mv, fullwidth=True) == theirs, (i, str(mv), pos.fen())
            board.next_turn()
            compared += 1
    assert compared > 1000


def test_two_advisors_or_elephants_on_a_file_keep_the_file() -> None:
    pos = Position.from_fen("3ak1b2/4a4/4b4/6p1p/2p1N2r1/p5P2/2c1P2cP/R2AB1NR1/nr6C/2BAK4 w - - 18 25")
    assert chinese(pos, Move("d2", "e1")) == "仕六退五"
    assert parse_move(pos, "前仕退五") == Move("d2", "e1")  # the 前/后 form is read as well
