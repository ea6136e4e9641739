"""Record formats (xqarb.referee.formats): PGN tags and comments from a game's recorded facts, the three PGN
notations, DhtmlXQ/UBB and XQF written and read back; real games round-trip, and cchess (the oracle) reads our
DhtmlXQ and XQF files to the same moves."""

from __future__ import annotations

import json
import os
import re
import struct
from pathlib import Path
from typing import Any

import pytest

from xqarb.referee.formats import (
    FormatError,
    export,
    facts_from_entries,
    facts_from_record,
    read_dhtmlxq,
    read_xqf,
    time_control_tag,
    write_dhtmlxq,
    write_pgn,
    write_xqf,
)
from xqarb.referee.formats.dhtmlxq import STANDARD_BINIT, binit_of_fen, fen_of_binit, point_digits
from xqarb.referee.rules.pgn import read_pgn, replay
from xqarb.referee.rules.position import START_FEN, Position

GAMES = Path(os.environ.get("XQARB_SHARED", "/work/shared")) / "data" / "games"
MAY_DAY_US = 1_777_593_600_000_000  # 2026-05-01 00:00 UTC


def _entries(time_control: Any, start_fen: str | None = None) -> list[dict[str, Any]]:
    """A hand-built ledger: a game of the third round on board 5, three moves, an 8.1.7 ruling on ply 2, and
    Red losing on time (4.1.6)."""
    ev = [
        {"type": "GameStarted", "board_id": "12", "occurred_at": MAY_DAY_US + 3_600_000_000, "red_player": "许银川",
         "black_player": "吕钦", "event": "全国象棋个人赛", "round": 3, "board_no": 5, "start_fen": start_fen,
         "time_control": time_control},
        {"type": "MoveMade", "ply": 1, "side": "red", "iccs": "h2e2", "wxf": "C2=5", "chinese": "炮二平五",
         "red_ms": 3_590_000, "black_ms": 3_600_000},
        {"type": "MoveMade", "ply": 2, "side": "black", "iccs": "h9g7", "wxf": "H8+7", "chinese": "马8进7",
         "red_ms": 3_590_000, "black_ms": 3_580_000},
        {"type": "Ruling", "kind": "foul", "side": "black", "article": "8.1.7", "ply": 2,
         "message": "black pressed the clock before the move was complete"},
        {"type": "MoveMade", "ply": 3, "side": "red", "iccs": "h0g2", "wxf": "H2+3", "chinese": "马二进三",
         "red_ms": 0, "black_ms": None},
        {"type": "GameEnded", "result": "0-1", "article": "4.1.6", "reason": "Red's time ran out"},
    ]
    return [{"event": e} for e in ev]


INCREMENT = {"scheme": "increment", "base_ms": 3_600_000, "increment_ms": 30_000}


def _tags(text: str) -> dict[str, str]:
    return dict(re.findall(r'^\[(\w+) "(.*)"\]$', text, flags=re.M))


# --------------------------------------------------------------------------------------------------- PGN


@pytest.mark.parametrize(("tc", "tag"), [
    (INCREMENT, "3600+30"),
    ({"scheme": "sudden_death", "base_ms": 5_400_000}, "5400"),
    ({"scheme": "moves_in_time", "periods": [{"moves": 30, "ms": 3_600_000}, {"moves": None, "ms": 600_000}]},
     "30/3600:600"),
    ({"scheme": "moves_in_time", "periods": [{"moves": 40, "ms": 7_200_000},
                                             {"moves": 20, "ms": 3_600_000, "repeat": True}]}, "40/7200:20/3600*"),
    ({"scheme": "increment", "base_ms": 900_500, "increment_ms": 0}, "900.5+0"),
    (None, ""),
])
def test_time_control_tag_in_pgn_seconds(tc: Any, tag: str) -> None:
    assert time_control_tag(tc) == tag


def test_unknown_time_control_scheme_is_a_format_error() -> None:
    with pytest.raises(FormatError, match="unknown scheme"):
        time_control_tag({"scheme": "hourglass"})


def test_pgn_tags_from_the_recorded_facts() -> None:
    # GameStarted carries time_control as JSON text in Avro; the facts read either form.
    facts = facts_from_entries("g-42", _entries(json.dumps(INCREMENT)))
    text = write_pgn(facts)
    assert _tags(text) == {
        "Game": "Chinese Chess", "Event": "全国象棋个人赛", "Site": "board 12", "Date": "2026.05.01", "Round": "3",
        "Red": "许银川", "Black": "吕钦", "Result": "0-1", "Board": "5", "Format": "Chinese",
        "TimeControl": "3600+30", "Termination": "4.1.6: Red's time ran out", "GameId": "g-42",
    }
    assert "FEN" not in _tags(text)  # the standard start


def test_rulings_are_comments_after_the_move_they_follow_in_each_notation() -> None:
    facts = facts_from_entries("g-42", _entries(INCREMENT))
    ruling = "{8.1.7: black pressed the clock before the move was complete}"
    assert write_pgn(facts, "iccs").split("\n\n", 1)[1] == (
        f"1. H2-E2 {{[%clk 0:59:50]}} H9-G7 {{[%clk 0:59:40]}}\n{ruling} 2. H0-G2\n{{[%clk 0:00:00]}} 0-1\n")
    assert f"1. 炮二平五 {{[%clk 0:59:50]}} 马8进7 {{[%clk 0:59:40]}}\n{ruling} 2." in write_pgn(facts, "chinese")
    assert "1. C2=5 {[%clk 0:59:50]} H8+7" in write_pgn(facts, "wxf")
    assert _tags(write_pgn(facts, "wxf"))["Format"] == "WXF"
    for notation in ("chinese", "iccs", "wxf"):
        [record] = read_pgn(write_pgn(facts, notation))
        assert [m.iccs for m in replay(record).moves] == ["h2e2", "h9g7", "h0g2"]
        assert record.result == "0-1"


def test_game_in_progress_has_no_termination_and_a_handicap_its_black_time() -> None:
    entries = [e for e in _entries({**INCREMENT, "black_base_ms": 3_000_000}) if e["event"]["type"] != "GameEnded"]
    tags = _tags(write_pgn(facts_from_entries("g", entries)))
    assert tags["Result"] == "*" and "Termination" not in tags
    assert tags["TimeControl"] == "3600+30" and tags["BlackTimeControl"] == "3000"


def test_braces_and_quotes_cannot_break_the_pgn() -> None:
    entries = _entries(INCREMENT)
    entries[0]["event"]["red_player"] = 'Li "the cannon"'
    entries[3]["event"]["message"] = "a } brace"
    text = write_pgn(facts_from_entries("g", entries))
    [record] = read_pgn(text)
    assert record.headers["Red"] == 'Li "the cannon"' and "{8.1.7: a ｝ brace}" in text
    assert len(replay(record).moves) == 3


def test_unknown_notation_is_refused() -> None:
    with pytest.raises(FormatError, match="notation"):
        write_pgn(facts_from_entries("g", _entries(INCREMENT)), "san")


# --------------------------------------------------------------------------------------------------- DhtmlXQ


def test_dhtmlxq_coordinates_columns_from_the_left_rows_from_blacks_side() -> None:
    assert point_digits("h2") + point_digits("e2") == "7747"  # 炮二平五
    assert point_digits("a9") == "00" and point_digits("i0") == "89"
    assert fen_of_binit(STANDARD_BINIT).split()[:2] == START_FEN.split()[:2]
    # Red's a3 pawn (its last pawn slot) and Black's i9 rook (its second rook slot) gone: each slot '99'.
    fen = "rnbakabn1/9/1c5c1/p1p1p1p1p/9/9/2P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"
    binit = binit_of_fen(fen)
    assert binit[30:32] == "99" and binit[48:50] == "99"
    assert binit[:30] + binit[32:48] + binit[50:] == STANDARD_BINIT[:30] + STANDARD_BINIT[32:48] + STANDARD_BINIT[50:]
    assert fen_of_binit(binit).split()[0] == fen.split()[0]


def test_dhtmlxq_block_of_a_game_and_back() -> None:
    facts = facts_from_entries("g-42", _entries(INCREMENT))
    text = write_dhtmlxq(facts)
    assert "[DhtmlXQ_movelist]774770627967[/DhtmlXQ_movelist]" in text  # h2e2 h9g7 h0g2
    assert "[DhtmlXQ_red]许银川[/DhtmlXQ_red]" in text and "[DhtmlXQ_result]黑胜[/DhtmlXQ_result]" in text
    assert "[DhtmlXQ_comment2]8.1.7: black pressed" in text and "[DhtmlXQ_timerule]3600+30[" in text
    [record] = read_dhtmlxq("forum text before\n" + text + "after")
    assert record.moves == ["h2e2", "h9g7", "h0g2"] and record.result == "0-1"
    assert record.headers["Red"] == "许银川" and record.headers["Round"] == "3"


def test_dhtmlxq_with_an_odd_movelist_is_refused() -> None:
    with pytest.raises(FormatError, match="four a move"):
        read_dhtmlxq("[DhtmlXQ][DhtmlXQ_movelist]77471[/DhtmlXQ_movelist][/DhtmlXQ]")


# --------------------------------------------------------------------------------------------------- XQF


def test_xqf_header_and_moves() -> None:
    facts = facts_from_entries("g-42", _entries(INCREMENT))
    data = write_xqf(facts)
    assert data[:3] == b"XQ\x0a" and len(data) > 0x400
    assert data[51] == 2  # Black won
    assert data[305:305 + data[304]].decode("gb18030") == "许银川"
    assert data[16:25] == bytes([0, 10, 20, 30, 40, 50, 60, 70, 80])  # Red's back rank, files a..i, rank 0
    record = read_xqf(data)
    assert record.moves == ["h2e2", "h9g7", "h0g2"] and record.result == "0-1"
    assert record.headers["Comment2"].startswith("8.1.7: black pressed") and record.headers["Red"] == "许银川"


def test_not_an_xqf_file_is_refused() -> None:
    with pytest.raises(FormatError, match="not an XQF"):
        read_xqf(b"[Event]")
    with pytest.raises(FormatError, match="ends inside a record"):
        read_xqf(write_xqf(facts_from_entries("g", _entries(INCREMENT)))[:-3])


def _encrypt(plain: bytes, version: int, key_bytes: bytes) -> bytes:
    """An XQF 1.0 file of ours re-written as an encrypted version (1.1-1.8), the inverse of what readers do."""
    from xqarb.referee.formats.xqf import _keys

    keys = _keys(key_bytes)
    header = bytearray(plain[:0x400])
    header[2], header[3:16] = version, key_bytes
    pieces = [(p + keys.xy) & 0xFF for p in plain[16:48]]
    if version >= 12:
        pieces = [pieces[(keys.xy + i + 1) & 0x1F] for i in range(32)]
    header[16:48] = bytes(pieces)
    out, at = bytearray(), 0x400
    while at < len(plain):
        frm, to, flags = plain[at] - 0x18, plain[at + 1] - 0x20, plain[at + 2]
        (length,) = struct.unpack("<i", plain[at + 4:at + 8])
        comment = plain[at + 8:at + 8 + length]
        new_flags = (0x80 if flags & 0xF0 else 0) | (0x20 if length else 0)
        out += bytes([(frm + 0x18 + keys.xyf) & 0xFF, (to + 0x20 + keys.xyt) & 0xFF, new_flags, 0])
        if length:
            out += struct.pack("<i", length + keys.rmk_size) + comment
        at += 8 + length
    body = bytes((c + keys.f32[(0x400 + i) % 32]) & 0xFF for i, c in enumerate(out))
    return bytes(header) + body


@pytest.mark.parametrize("version", [11, 18])
def test_encrypted_xqf_reads_as_cchess_reads_it(tmp_path: Path, version: int) -> None:
    cchess_xqf = pytest.importorskip("cchess.read_xqf")
    facts = facts_from_entries("g-42", _entries(INCREMENT))
    data = _encrypt(write_xqf(facts), version, bytes([0xE3, 1, 2, 3, 4, 5, 0x11, 0x22, 0x33, 0x44, 0x5A, 0x6B, 0x7C,
                                                      0x8D][:13]))
    path = tmp_path / "enc.xqf"
    path.write_bytes(data)
    oracle = cchess_xqf.read_from_xqf(str(path))
    assert oracle.dump_iccs_moves()[0] == ["h2e2", "h9g7", "h0g2"]
    record = read_xqf(data)
    assert record.moves == ["h2e2", "h9g7", "h0g2"] and record.start_fen.split()[:2] == START_FEN.split()[:2]
    assert record.headers["Comment2"].startswith("8.1.7")


# --------------------------------------------------------------------------------------------------- real games


def _real_games() -> list[Any]:
    games = []
    pgn = read_pgn((GAMES / "ccpd_dev.pgn").read_text(encoding="utf-8"))
    liu = read_pgn((GAMES / "liu_dahua_iccs.pgn").read_text(encoding="utf-8"))
    for n, record in enumerate(pgn[:4] + liu[:2]):  # every one of these starts from the standard position
        games.append(facts_from_record(record, f"real-{n}"))
    return games


@pytest.fixture(scope="module")
def real_games() -> list[Any]:
    if not (GAMES / "ccpd_dev.pgn").exists():
        pytest.skip("the shared game data is not here (XQARB_SHARED)")
    return _real_games()


def test_real_games_round_trip_through_every_format(real_games: list[Any]) -> None:
    for facts in real_games:
        moves = [m.iccs for m in facts.moves]
        start = facts.start_fen.split()[:2]
        for fmt in ("pgn", "pgn-iccs", "pgn-wxf"):
            [record] = read_pgn(export(facts, fmt).decode("utf-8"))
            assert [m.iccs for m in replay(record).moves] == moves, (facts.game_id, fmt)
            assert record.start_fen.split()[:2] == start and record.headers["Red"] == facts.red
        [record] = read_dhtmlxq(export(facts, "dhtmlxq").decode("utf-8"))
        assert [m.iccs for m in replay(record).moves] == moves and record.start_fen.split()[:2] == start
        record = read_xqf(export(facts, "xqf"))
        assert [m.iccs for m in replay(record).moves] == moves and record.start_fen.split()[:2] == start
        assert record.headers.get("Red", "") == facts.red[:7] or facts.red.startswith(record.headers.get("Red", ""))


def test_cchess_reads_our_dhtmlxq_and_xqf_to_the_same_game(real_games: list[Any], tmp_path: Path) -> None:
    read_txt = pytest.importorskip("cchess.read_txt")
    read_xqf_oracle = pytest.importorskip("cchess.read_xqf")
    for n, facts in enumerate(real_games):
        moves = [m.iccs for m in facts.moves]
        ubb = write_dhtmlxq(facts)
        binit = re.search(r"\[DhtmlXQ_binit\](\d+)", ubb).group(1)  # type: ignore[union-attr]
        movelist = re.search(r"\[DhtmlXQ_movelist\](\d*)", ubb).group(1)  # type: ignore[union-attr]
        game = read_txt.read_from_txt(movelist, binit)
        assert game.dump_iccs_moves()[0] == moves, facts.game_id
        assert game.init_board.to_fen().split()[0] == facts.start_fen.split()[0]
        path = tmp_path / f"{n}.xqf"
        path.write_bytes(write_xqf(facts))
        game = read_xqf_oracle.read_from_xqf(str(path))
        assert game.dump_iccs_moves()[0] == moves and game.info.get("red", "") in facts.red
        assert game.init_board.to_fen().split()[0] == facts.start_fen.split()[0]


def test_a_game_from_a_position_with_black_to_move(tmp_path: Path) -> None:
    fen = "4k4/4a4/9/9/9/9/9/9/4A4/3K2R2 b - - 0 1"
    pos = Position.from_fen(fen)
    first = sorted(m.iccs for m in pos.legal_moves())[0]
    second = sorted(m.iccs for m in pos.play(pos.legal_moves()[0]).legal_moves())[0]
    [record] = read_pgn(f'[FEN "{fen}"]\n\n1. ... {first} 2. {second} *\n')
    facts = facts_from_record(record, "endgame")
    assert facts.moves[0].side == "black"
    text = write_pgn(facts, "iccs")
    assert _tags(text)["FEN"] == fen and f"1. ... {first[:2].upper()}-{first[2:].upper()}" in text
    for back in (read_pgn(text)[0], read_dhtmlxq(write_dhtmlxq(facts))[0], read_xqf(write_xqf(facts))):
        assert back.start_fen.split()[:2] == fen.split()[:2] and [m.iccs for m in replay(back).moves] == [
            m.iccs for m in facts.moves]
    read_xqf_oracle = pytest.importorskip("cchess.read_xqf")
    path = tmp_path / "endgame.xqf"
    path.write_bytes(write_xqf(facts))
    game = read_xqf_oracle.read_from_xqf(str(path))
    assert game.init_board.to_fen().split()[0] == fen.split()[0]
    assert game.dump_iccs_moves()[0] == [m.iccs for m in facts.moves]


def test_cchess_reads_our_iccs_pgn_to_the_same_moves(real_games: list[Any], tmp_path: Path) -> None:
    read_pgn_oracle = pytest.importorskip("cchess.read_pgn")
    for n, facts in enumerate(real_games):
        path = tmp_path / f"{n}.pgn"
        path.write_text(write_pgn(facts, "iccs"), encoding="utf-8")
        game = read_pgn_oracle.read_from_pgn(str(path))
        assert game.dump_iccs_moves()[0] == [m.iccs for m in facts.moves], facts.game_id
