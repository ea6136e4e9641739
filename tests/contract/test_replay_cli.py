"""`xqarb replay FILE [--json]` (DESIGN: Command-line contract): PGN records in ICCS, traditional and simplified
Chinese, full-width and Arabic digits, several games a file; the JSON lines are the referee's output events."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .conftest import check_output_event, json_lines, load_games, pgn_games, schema_fields

N_CCPD = 6  # games 1-6 of ccpd_dev (the third has 前/後 moves)
N_LIU = 3

TRAD_TO_SIMP = str.maketrans({"馬": "马", "車": "车", "進": "进", "帥": "帅", "將": "将", "後": "后"})
FULL_TO_ARABIC = str.maketrans("０１２３４５６７８９", "0123456789")
WXF_RE = re.compile(r"^([KAEBRHNCP][1-9]|[+\-.][KAEBRHNCP]|[1-9+\-.][KAEBRHNCP]|[+\-.][1-9])[+\-=.][1-9]$")


def _normal(move: str) -> str:
    """Chinese notation with one character set: simplified, Arabic digits."""
    return move.translate(TRAD_TO_SIMP).translate(FULL_TO_ARABIC)


def _same_move_text(printed: str, written: str) -> bool:
    a, b = _normal(printed), _normal(written)
    if a == b:
        return True
    # 7.5: 前马退四 where the record says 马五退四: same piece type, same direction and target.
    return len(a) == 4 and len(b) == 4 and a[0] in "前中后" and a[1] == b[0] and a[2:] == b[2:]


def _pgn_moves(text: str) -> list[list[str]]:
    """The move texts of each game of a Chinese PGN (numbers and results dropped)."""
    games: list[list[str]] = []
    for block in re.split(r"(?:\A|\n\n)(?=\[)", text):
        if not block.strip():
            continue
        body = "\n".join(line for line in block.splitlines() if not line.startswith("["))
        tokens = [t for t in body.split() if not re.fullmatch(r"\d+\.|1-0|0-1|1/2-1/2|\*", t)]
        games.append(tokens)
    return games


@pytest.fixture(scope="module")
def schemas():
    return schema_fields()


def _replay_json(xq, path: Path) -> list[dict]:
    r = xq("replay", str(path), "--json")
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    return json_lines(r.stdout)


def _check_against_jsonl(events: list[dict], file_name: str, games: list[dict], schemas) -> None:
    """Each game's events carry "<file>#<n>"; moves are the reference moves, no ruling, the final position."""
    for e in events:
        check_output_event(e, schemas)
    ids = [e["game_id"] for e in events]
    assert sorted(set(ids)) == sorted(f"{file_name}#{n}" for n in range(1, len(games) + 1))
    assert ids == sorted(ids, key=lambda g: int(g.split("#")[1])), "games come out in file order"
    for n, game in enumerate(games, start=1):
        mine = [e for e in events if e["game_id"] == f"{file_name}#{n}"]
        moves = [e for e in mine if e["type"] == "MoveMade"]
        assert [m["iccs"] for m in moves] == game["iccs"], f"game {n}"
        assert [m["ply"] for m in moves] == list(range(1, len(moves) + 1))
        assert [m["side"] for m in moves] == [("red", "black")[i % 2] for i in range(len(moves))]
        assert moves[-1]["fen_after"] == game["final_fen"], f"game {n}"  # counters included
        # A repetition nobody claimed (23.2), a natural limit coming due (23.3): told to the arbiter, never ruled.
        rulings = [e for e in mine if e["type"] == "Ruling"
                   or (e["type"] == "AttentionNeeded" and e["kind"] not in ("repetition", "natural_limit"))]
        assert rulings == [], f"a clean real game drew {rulings}"
        for m in moves:
            assert WXF_RE.match(m["wxf"]), m["wxf"]


def test_replay_traditional_chinese_real_games(xq, tmp_path, shared_data, schemas):
    text = pgn_games(shared_data, "ccpd_dev.pgn", N_CCPD)
    path = tmp_path / "trad.pgn"
    path.write_text(text, encoding="utf-8")
    events = _replay_json(xq, path)
    games = load_games(shared_data, "ccpd_dev.jsonl", N_CCPD)
    _check_against_jsonl(events, "trad.pgn", games, schemas)
    # The Chinese notation it prints names the same moves as the record (script and digits aside). Where two
    # pieces of a kind share a file it says 前/中/后 (7.5) and the record may give the file number instead.
    printed_games = []
    for n, written in enumerate(_pgn_moves(text), start=1):
        printed = [e["chinese"] for e in events if e["game_id"] == f"trad.pgn#{n}" and e["type"] == "MoveMade"]
        assert len(printed) == len(written)
        for mine, theirs in zip(printed, written, strict=True):
            assert _same_move_text(mine, theirs), (n, mine, theirs)
        printed_games.append(printed)
    # ... and what it prints reads back as the same moves.
    again = tmp_path / "printed.pgn"
    again.write_text("".join(f'[Event "{n}"]\n\n{" ".join(g)} *\n\n' for n, g in enumerate(printed_games, 1)),
                     encoding="utf-8")
    reread = _replay_json(xq, again)
    assert [e["iccs"] for e in reread if e["type"] == "MoveMade"] == [
        e["iccs"] for e in events if e["type"] == "MoveMade"]


def test_replay_simplified_characters_and_arabic_digits(xq, tmp_path, shared_data, schemas):
    text = pgn_games(shared_data, "ccpd_dev.pgn", N_CCPD).translate(TRAD_TO_SIMP).translate(FULL_TO_ARABIC)
    assert "馬" not in text and "８" not in text and "马" in text
    path = tmp_path / "simp.pgn"
    path.write_text(text, encoding="utf-8")
    events = _replay_json(xq, path)
    _check_against_jsonl(events, "simp.pgn", load_games(shared_data, "ccpd_dev.jsonl", N_CCPD), schemas)


def test_replay_simplified_characters_full_width_digits(xq, tmp_path, shared_data, schemas):
    text = pgn_games(shared_data, "ccpd_dev.pgn", 2).translate(TRAD_TO_SIMP)
    assert "８" in text or "７" in text
    path = tmp_path / "fw.pgn"
    path.write_text(text, encoding="utf-8")
    events = _replay_json(xq, path)
    _check_against_jsonl(events, "fw.pgn", load_games(shared_data, "ccpd_dev.jsonl", 2), schemas)


def test_replay_iccs_real_games(xq, tmp_path, shared_data, schemas):
    path = tmp_path / "liu.pgn"
    path.write_text(pgn_games(shared_data, "liu_dahua_iccs.pgn", N_LIU), encoding="utf-8")
    events = _replay_json(xq, path)
    _check_against_jsonl(events, "liu.pgn", load_games(shared_data, "liu_dahua_iccs.jsonl", N_LIU), schemas)


HANDMADE = """[Event "simplified, Arabic digits"]
[Red "甲"]
[Black "乙"]
[Result "1-0"]

1. 炮二平五 马8进7 2. 马二进三 车9平8 3. 车一平二 卒7进1 4. 兵七进一 马2进3 1-0

[Event "traditional, full-width digits"]
[Result "0-1"]

1. 炮二平五 馬８進７ 2. 馬二進三 車９平８ 0-1

[Event "ICCS"]
[Result "1/2-1/2"]

1. h2e2 h9g7 2. h0g2 1/2-1/2
"""


def test_replay_several_handmade_games_in_one_file(xq, tmp_path, schemas):
    path = tmp_path / "mine.pgn"
    path.write_text(HANDMADE, encoding="utf-8")
    events = _replay_json(xq, path)
    for e in events:
        check_output_event(e, schemas)
    by_game: dict[str, list[str]] = {}
    for e in events:
        if e["type"] == "MoveMade":
            by_game.setdefault(e["game_id"], []).append(e["iccs"])
    assert by_game == {
        "mine.pgn#1": ["h2e2", "h9g7", "h0g2", "i9h9", "i0h0", "g6g5", "c3c4", "b9c7"],
        "mine.pgn#2": ["h2e2", "h9g7", "h0g2", "i9h9"],
        "mine.pgn#3": ["h2e2", "h9g7", "h0g2"],
    }
    assert not [e for e in events if e["type"] in ("Ruling", "AttentionNeeded")]

    # The text form: every move in all three notations, in order, and each game's result.
    r = xq("replay", str(path))
    assert r.returncode == 0, r.stderr
    out = r.stdout
    pos = 0
    for e in (e for e in events if e["type"] == "MoveMade"):
        line = next((ln for ln in out[pos:].splitlines() if e["iccs"] in ln), None)
        assert line is not None, f"{e['iccs']} missing after offset {pos}"
        assert e["wxf"] in line and e["chinese"] in line, line
        pos = out.index(line, pos) + len(line)
    for n in (1, 2, 3):
        assert f"mine.pgn#{n}" in out
    results = re.findall(r"result[^\n]*", out, flags=re.I)
    assert len(results) == 3 and "1-0" in results[0] and "0-1" in results[1] and "1/2-1/2" in results[2], results


def test_every_move_in_three_notations_in_text_output_of_a_real_game(xq, tmp_path, shared_data):
    path = tmp_path / "one.pgn"
    path.write_text(pgn_games(shared_data, "ccpd_dev.pgn", 1), encoding="utf-8")
    r = xq("replay", str(path))
    assert r.returncode == 0, r.stderr
    game = load_games(shared_data, "ccpd_dev.jsonl", 1)[0]
    written = _pgn_moves(path.read_text(encoding="utf-8"))[0]
    lines = [ln for ln in r.stdout.splitlines() if re.search(r"\b[a-i][0-9][a-i][0-9]\b", ln)]
    assert len(lines) == len(game["iccs"])
    for line, iccs, chinese in zip(lines, game["iccs"], written, strict=True):
        assert iccs in line
        assert any(WXF_RE.match(tok) for tok in line.split()), line
        assert any(_normal(tok) == _normal(chinese) for tok in line.split()), (line, chinese)


@pytest.mark.parametrize("record,what", [
    ("1. h2e2 h9g7 2. b0b3 *", "a horse moving like a rook (ICCS)"),
    ("1. 马二进四 *", "a blocked horse (Chinese)"),
    ("1. 炮二平五 馬８進７ 2. zz99 *", "a move that cannot be read"),
    ("1. h2e2 h2e2 *", "Black moving a Red piece"),
])
def test_an_illegal_or_unreadable_move_is_a_ruling_or_a_clear_error_never_a_crash(xq, tmp_path, record, what):
    path = tmp_path / "bad.pgn"
    path.write_text(f'[Event "{what}"]\n\n{record}\n', encoding="utf-8")
    for args in ([], ["--json"]) if record.startswith("1. h2e2 h9g7") else (["--json"],):
        r = xq("replay", str(path), *args)
        assert "Traceback" not in r.stderr, r.stderr
        assert r.returncode in (0, 1), (r.returncode, r.stderr)
        if args:
            events = json_lines(r.stdout)  # whatever it prints is still JSON lines
            ruled = [e for e in events if e["type"] in ("Ruling", "GameEnded", "AttentionNeeded")]
        else:
            ruled = [ln for ln in r.stdout.splitlines() if re.search(r"\d+\.\d+", ln) and "ply" not in ln]
        if r.returncode == 0:
            assert ruled, f"{what}: exit 0 without a ruling: {r.stdout}"
        else:
            assert "bad.pgn" in r.stderr and "ply" in r.stderr, r.stderr


def test_replay_missing_file_and_empty_file(xq, tmp_path):
    r = xq("replay", str(tmp_path / "none.pgn"))
    assert r.returncode != 0 and "none.pgn" in r.stderr and "Traceback" not in r.stderr
    (tmp_path / "empty.pgn").write_text("", encoding="utf-8")
    r = xq("replay", str(tmp_path / "empty.pgn"))
    assert r.returncode != 0 and r.stderr.strip() and "Traceback" not in r.stderr


@pytest.mark.slow
@pytest.mark.parametrize("name", ["ccpd_dev", "liu_dahua_iccs"])
def test_replay_every_shared_game(xq, shared_data, schemas, name):
    """All of a shared file (1,000+ games, about 3 minutes here): the reference moves and final FEN for every
    game, and nothing but moves, except a game that ends in mate or 困毙 on its last move, with the record's
    result (or a record that left the result open)."""
    r = xq("replay", str(shared_data / "games" / f"{name}.pgn"), "--json", timeout=1200)
    assert r.returncode == 0, r.stderr[-2000:]
    games = load_games(shared_data, f"{name}.jsonl", 10**6)
    by_game: dict[str, list[dict]] = {}
    for e in json_lines(r.stdout):
        by_game.setdefault(e["game_id"], []).append(e)
    assert len(by_game) == len(games)
    for n, game in enumerate(games, start=1):
        events = by_game[f"{name}.pgn#{n}"]
        moves = [e for e in events if e["type"] == "MoveMade"]
        assert [m["iccs"] for m in moves] == game["iccs"], n
        if moves:
            assert moves[-1]["fen_after"] == game["final_fen"], n
        others = [e for e in events if e["type"] != "MoveMade"]
        for e in others:
            check_output_event(e, schemas)
            assert e["type"] == "GameEnded" and e["article"] in ("4.1.1", "4.1.2"), (n, e)
            assert game["result"] in (e["result"], "*", ""), (n, e, game["result"])
            assert e is events[-1]
