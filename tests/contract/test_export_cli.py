"""`xqarb export` (a game from the ledger, or a record file converted, as PGN in Chinese, ICCS or WXF notation,
DhtmlXQ/UBB or XQF) and `xqarb replay` reading DhtmlXQ and XQF files."""

from __future__ import annotations

from pathlib import Path

from xqarb.referee.formats import read_xqf

from .conftest import json_lines, load_games, pgn_games
from .test_verify_cli import _write_ledger


def test_export_a_ledger_game_in_each_format(xq, tmp_path: Path) -> None:
    db, _ = _write_ledger(tmp_path)  # g-ver: h2e2 h9g7 h0g2
    r = xq("export", "--game", "g-ver", "--db", str(db), "--format", "pgn-iccs")
    assert r.returncode == 0, r.stderr
    assert '[Format "ICCS"]' in r.stdout and "1. H2-E2" in r.stdout and "H9-G7" in r.stdout and "2. H0-G2" in r.stdout
    r = xq("export", "--game", "g-ver", "--db", str(db))  # default: Chinese notation (7.5)
    assert r.returncode == 0 and "1. 炮二平五" in r.stdout and "马8进7" in r.stdout
    r = xq("export", "--game", "g-ver", "--db", str(db), "--format", "pgn-wxf")
    assert r.returncode == 0 and "1. C2=5" in r.stdout
    r = xq("export", "--game", "g-ver", "--db", str(db), "--format", "dhtmlxq")
    assert r.returncode == 0 and "[DhtmlXQ_movelist]774770627967[/DhtmlXQ_movelist]" in r.stdout
    out = tmp_path / "g.xqf"
    r = xq("export", "--game", "g-ver", "--db", str(db), "--format", "xqf", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert read_xqf(out.read_bytes()).moves == ["h2e2", "h9g7", "h0g2"]


def test_export_choices_are_the_formats_written() -> None:
    from xqarb.referee.export_cli import FORMAT_CHOICES
    from xqarb.referee.formats import FORMATS

    assert FORMAT_CHOICES == FORMATS


def test_export_of_an_unknown_game_or_ledger_exits_2(xq, tmp_path: Path) -> None:
    db, _ = _write_ledger(tmp_path)
    r = xq("export", "--game", "nope", "--db", str(db))
    assert r.returncode == 2 and "no game 'nope'" in r.stderr
    r = xq("export", "--game", "g-ver", "--db", str(tmp_path / "missing.sqlite"))
    assert r.returncode == 2 and "no ledger" in r.stderr
    r = xq("export", "--game", "g-ver", "--format", "sgf")
    assert r.returncode == 2 and "invalid choice" in r.stderr


def test_replay_reads_wxf_pgn_dhtmlxq_and_xqf_made_from_real_games(xq, tmp_path: Path, shared_data: Path) -> None:
    (tmp_path / "two.pgn").write_text(pgn_games(shared_data, "ccpd_dev.pgn", 2), encoding="utf-8")
    expected = [g["iccs"] for g in load_games(shared_data, "ccpd_dev.jsonl", 2)]
    for fmt, name in (("pgn-wxf", "two-wxf.pgn"), ("dhtmlxq", "two.ubb"), ("xqf", "one.xqf")):
        r = xq("export", "--record", "two.pgn", "--format", fmt, "--out", name)
        assert r.returncode == 0, r.stderr
        r = xq("replay", name, "--json")
        assert r.returncode == 0, r.stderr
        games: dict[str, list[str]] = {}
        for e in json_lines(r.stdout):
            if e["type"] == "MoveMade":
                games.setdefault(e["game_id"], []).append(e["iccs"])
        # XQF holds one game: the first.
        assert list(games.values()) == (expected[:1] if fmt == "xqf" else expected), fmt


def test_replay_of_a_broken_xqf_says_what_is_wrong(xq, tmp_path: Path) -> None:
    (tmp_path / "bad.xqf").write_bytes(b"XQ\x0a" + b"\0" * 40)
    r = xq("replay", "bad.xqf")
    assert r.returncode == 2 and "not an XQF file" in r.stderr
