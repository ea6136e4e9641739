"""`xqarb referee run`, `xqarb replay` and the `verify` / `referee serve` wiring, through the real entry point."""

from __future__ import annotations

import json

from xqarb.cli import main

PGN = """[Event "test"]
[Red "甲"]
[Black "乙"]

1. 炮二平五 馬８進７ 2. 馬二進三 車９平８ *

[Event "mate"]
[FEN "3k5/9/9/9/9/9/9/9/R8/4K3R w - - 0 1"]

1. a1d1 1-0

[Event "illegal"]

1. h2e2 h9g7 2. b0b3 *
"""


def test_referee_run_prints_every_output_as_json_lines(scenario, tmp_path, capsys):
    s = scenario().moves("h2e2", "h9g7")
    s.stable(s.displaced("h0h5"))
    path = tmp_path / "board.jsonl"
    path.write_text(s.jsonl(), encoding="utf-8")
    assert main(["referee", "run", str(path)]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [x["type"] for x in lines] == ["MoveMade", "MoveMade", "GameEnded"]
    assert lines[0]["chinese"] == "炮二平五" and lines[2]["article"] == "4.1.8"
    # The same file again: the same bytes.
    first = json.dumps(lines)
    assert main(["referee", "run", str(path), "--json"]) == 0
    assert json.dumps([json.loads(x) for x in capsys.readouterr().out.splitlines()]) == first


def test_referee_run_reports_a_bad_line_and_goes_on(scenario, tmp_path, capsys):
    s = scenario().move("h2e2")
    text = s.jsonl().splitlines()
    text.insert(2, '{"type": "BoardStable", "board_id": "b1"}')  # no occurred_at, no squares
    text.insert(3, "not json")
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    assert main(["referee", "run", str(path)]) == 1
    out = capsys.readouterr()
    assert [json.loads(x)["type"] for x in out.out.splitlines()] == ["MoveMade"]
    assert "line 3" in out.err and "line 4" in out.err


def test_replay_prints_moves_in_three_notations_rulings_and_results(tmp_path, capsys):
    path = tmp_path / "games.pgn"
    path.write_text(PGN, encoding="utf-8")
    assert main(["replay", str(path)]) == 0
    out = capsys.readouterr().out
    assert "games.pgn#1" in out and "h2e2   C2=5    炮二平五" in out and "马8进7" in out
    assert "result: * as recorded" in out
    assert "result: 1-0 (4.1.1, cxa-2021)" in out
    assert "ruling:" not in out.split("games.pgn#3")[0] and "attention:" not in out
    third = out.split("games.pgn#3")[1]
    assert "game ended: 0-1, 4.1.8" in third  # the horse moved like a rook: national level, the first loses


def test_replay_json_carries_file_and_game_number(tmp_path, capsys):
    path = tmp_path / "games.pgn"
    path.write_text(PGN, encoding="utf-8")
    assert main(["replay", str(path), "--json", "--level", "junior"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert {x["game_id"] for x in lines} == {"games.pgn#1", "games.pgn#2", "games.pgn#3"}
    third = [x for x in lines if x["game_id"] == "games.pgn#3"]
    assert [(x["type"], x.get("article")) for x in third] == [("MoveMade", None), ("MoveMade", None),
                                                              ("Ruling", "8.1.8"), ("Ruling", "5.8.3")]


def test_replay_of_a_missing_file_and_of_a_record_that_cannot_be_read(tmp_path, capsys):
    assert main(["replay", str(tmp_path / "none.pgn")]) == 2
    path = tmp_path / "bad.pgn"
    path.write_text("1. h2e2 炮九平九 *\n", encoding="utf-8")
    assert main(["replay", str(path)]) == 1
    captured = capsys.readouterr()
    assert "h2e2" in captured.out and "ply 2" in captured.err


def test_verify_and_serve_are_wired(tmp_path, capsys):
    assert main(["verify", "--game", "g1", "--db", str(tmp_path / "missing.sqlite")]) == 2
    assert "missing.sqlite" in capsys.readouterr().err
