"""Game records: PGN with ICCS, WXF or Chinese moves, one or many games a text."""

from __future__ import annotations

import pytest

from xqarb.referee.rules import START_FEN, PgnError, read_pgn, replay

TWO_GAMES = """\ufeff[Event "第一局 "象棋"棋王"賽"]
[Red "甲"]
[Black "乙"]
[Result "1-0"]

1. 炮二平五 {中炮} 馬８進７ 2. 馬二進三 (2. 兵七進一 卒７進１ (2... 車９平８)) 車９平８ $1
3. 車一平二; the rest of the line is a comment
卒７進１ 1-0

[Event "second"]
[FEN "4k4/9/9/9/9/9/9/9/4A4/3K5 b - - 0 1"]
[Result "*"]

1... e9e8 2.d0d1 e8e9 *
"""


def test_two_games_with_comments_variations_and_a_fen_header() -> None:
    games = read_pgn(TWO_GAMES)
    assert len(games) == 2
    first, second = games
    assert first.headers["Event"] == '第一局 "象棋"棋王"賽'  # unescaped quotes inside a value, as real records have
    assert first.headers["Red"] == "甲"
    assert first.start_fen == START_FEN
    assert first.moves == ["炮二平五", "馬８進７", "馬二進三", "車９平８", "車一平二", "卒７進１"]
    assert first.result == "1-0"
    assert second.start_fen == "4k4/9/9/9/9/9/9/9/4A4/3K5 b - - 0 1"
    assert second.moves == ["e9e8", "d0d1", "e8e9"]
    assert second.result is None  # '*': unknown
    played = replay(first)
    assert [str(m) for m in played.moves] == ["h2e2", "h9g7", "h0g2", "i9h9", "i0h0", "g6g5"]
    assert len(played.positions) == 7
    assert played.positions[-1].side == "red"
    assert [str(m) for m in replay(second).moves] == ["e9e8", "d0d1", "e8e9"]


def test_games_without_headers_or_results() -> None:
    games = read_pgn("1. h2e2 h9g7 2. h0g2 0-1\n1. b0c2 b9c7 1/2-1/2\n")
    assert [g.moves for g in games] == [["h2e2", "h9g7", "h0g2"], ["b0c2", "b9c7"]]
    assert [g.result for g in games] == ["0-1", "1/2-1/2"]
    only_headers = read_pgn('[Event "a"]\n1. h2e2\n[Event "b"]\n1. c3c4\n')
    assert [g.headers["Event"] for g in only_headers] == ["a", "b"]
    assert [g.moves for g in only_headers] == [["h2e2"], ["c3c4"]]
    assert read_pgn("") == []
    (fullwidth,) = read_pgn("１．炮二平五 馬８進７ ２、馬二進三 1...車９平８")
    assert fullwidth.moves == ["炮二平五", "馬８進７", "馬二進三", "車９平８"]


def test_wxf_moves_and_annotations() -> None:
    (game,) = read_pgn("1. C2=5! H8+7 2. H2+3?! R9=8 1-0")
    assert game.moves == ["C2=5", "H8+7", "H2+3", "R9=8"]
    assert [str(m) for m in replay(game).moves] == ["h2e2", "h9g7", "h0g2", "i9h9"]


def test_replay_names_the_game_and_ply_of_a_bad_move() -> None:
    (game,) = read_pgn("1. 炮二平五 馬８進７ 2. 車一進四 *")
    with pytest.raises(PgnError, match=r"game 7: ply 3 \('車一進四'\)"):
        replay(game, 7)
    (bad_fen,) = read_pgn('[FEN "not a fen"]\n1. h2e2\n')
    with pytest.raises(PgnError, match="bad FEN header"):
        replay(bad_fen)


def test_results_and_headers_inside_comments_or_variations_do_not_split_games() -> None:
    text = """[Event "x"]
1. h2e2 {a long note,
[Event "not a header"] ends with 1-0
} h9g7 (1... b9c7 2. h0g2
0-1) 2. h0g2 1-0
"""
    (game,) = read_pgn(text)
    assert game.moves == ["h2e2", "h9g7", "h0g2"]
    assert game.result == "1-0"
    assert game.headers == {"Event": "x"}
