"""What real files look like: a BOM, GBK/Big5 game records, fields a producer added."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from xqarb.cli import main

PGN = """[Event "test"]
[Red "甲"]
[Black "乙"]
[Result "*"]

1. 炮二平五 馬８進７
2. 馬二進三 車９平８
*
"""


@pytest.mark.parametrize("encoding", ["utf-8-sig", "gb18030", "big5"])
def test_replay_reads_chinese_records_in_their_usual_encodings(
    tmp_path: Path, encoding: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "game.pgn"
    path.write_bytes(PGN.encode(encoding))
    assert main(["replay", str(path), "--json"]) == 0
    moves = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [m["iccs"] for m in moves if m["type"] == "MoveMade"] == ["h2e2", "h9g7", "h0g2", "i9h9"]


def _game_started(**extra: object) -> dict:
    return {"type": "GameStarted", "board_id": "1", "occurred_at": 1_764_460_800_000_000, "game_id": "g1",
            "red_player": "A", "black_player": "B",
            "time_control": {"scheme": "sudden_death", "base_ms": 900_000}, **extra}


def test_referee_run_reads_a_file_with_a_bom_and_ignores_unknown_fields_aloud(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [
        _game_started(table_colour="green"),
        {"type": "Resigned", "board_id": "1", "occurred_at": 1_764_460_900_000_000, "side": "black"},
    ]
    path = tmp_path / "in.jsonl"
    path.write_bytes("\n".join(json.dumps(x, ensure_ascii=False) for x in lines).encode("utf-8-sig"))
    assert main(["referee", "run", str(path)]) == 0
    captured = capsys.readouterr()
    out = [json.loads(line) for line in captured.out.splitlines()]
    assert [(e["type"], e.get("result"), e.get("article")) for e in out] == [("GameEnded", "1-0", "4.1.12")]
    assert "table_colour" in captured.err and "ignored" in captured.err
