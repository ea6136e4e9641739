"""`xqarb verify --game ID [--db PATH]` (DESIGN: Command-line contract, The ledger): exit 0 on an intact chain,
non-zero and the first bad entry named after the SQLite file is edited by hand.

`referee run` writes no ledger, so the ledger here is written through the ledger's own interface
(`SqliteLedger.append`) with the inputs and outputs of a real `referee run`; the HTTP test writes one through the
running service and verifies it the same way."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from .conftest import Board, json_lines, run_xqarb


def _write_ledger(tmp_path: Path) -> tuple[Path, int]:
    from xqarb.events import Event
    from xqarb.referee.ledger import Pending, SqliteLedger

    b = Board(game="g-ver").move("h2e2").move("h9g7").move("h0g2")
    path = tmp_path / "in.jsonl"
    path.write_text(b.jsonl(), encoding="utf-8")
    r = run_xqarb(["referee", "run", path], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    outputs = json_lines(r.stdout)
    assert len(outputs) == 3
    db = tmp_path / "ledger.sqlite"
    with SqliteLedger(db) as ledger:
        inputs = [Event.from_json_dict(x, defaults={"source": "test", "source_seq": i})
                  for i, x in enumerate(b.lines, start=1)]
        ledger.append("g-ver", "b1", [Pending("input", e) for e in inputs])
        ledger.append("g-ver", "b1", [Pending("output", Event.from_json_dict(x)) for x in outputs])
    return db, len(inputs) + len(outputs)


@pytest.fixture
def ledger_db(tmp_path) -> tuple[Path, int]:
    return _write_ledger(tmp_path)


def test_intact_ledger_verifies(xq, ledger_db):
    db, n = ledger_db
    r = xq("verify", "--game", "g-ver", "--db", str(db))
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert "g-ver" in r.stdout and str(n) in r.stdout
    r = xq("verify", "--game", "g-ver", "--db", str(db), "--json")
    assert r.returncode == 0
    data = json.loads(r.stdout)
    assert data["ok"] is True and data["entries"] == n


def _edit(db: Path, seq: int, old: bytes, new: bytes) -> None:
    con = sqlite3.connect(db)
    try:
        (body,) = con.execute("SELECT body FROM entries WHERE game_id = ? AND seq = ?", ("g-ver", seq)).fetchone()
        body = bytes(body)
        assert old in body, body[:200]
        con.execute("UPDATE entries SET body = ? WHERE game_id = ? AND seq = ?", (body.replace(old, new, 1),
                                                                                   "g-ver", seq))
        con.commit()
    finally:
        con.close()


def test_an_entry_edited_by_hand_is_named(xq, ledger_db):
    db, _ = ledger_db
    # Entry 2 is the first BoardStable (an input): change one character of what the camera saw.
    _edit(db, 2, b'"squares"', b'"squareZ"')
    r = xq("verify", "--game", "g-ver", "--db", str(db))
    assert r.returncode != 0
    said = re.sub(r"[0-9a-f]{16,}", "", r.stdout + r.stderr)  # hashes aside, entry 2 is named
    assert re.search(r"\b2\b", said), said
    r = xq("verify", "--game", "g-ver", "--db", str(db), "--json")
    assert r.returncode != 0
    data = json.loads(r.stdout)
    assert data["ok"] is False and data["first_bad_seq"] == 2


def test_an_output_edited_by_hand_is_named(xq, ledger_db):
    db, n = ledger_db
    _edit(db, n, b"h0g2", b"h0i2")  # the last entry, MoveMade h0g2 ... as someone wishes it had been
    r = xq("verify", "--game", "g-ver", "--db", str(db), "--json")
    assert r.returncode != 0
    assert json.loads(r.stdout)["first_bad_seq"] == n


def test_a_deleted_entry_is_found(xq, ledger_db):
    db, _ = ledger_db
    con = sqlite3.connect(db)
    con.execute("DELETE FROM entries WHERE game_id = 'g-ver' AND seq = 4")
    con.commit()
    con.close()
    r = xq("verify", "--game", "g-ver", "--db", str(db), "--json")
    assert r.returncode != 0
    assert json.loads(r.stdout)["first_bad_seq"] in (4, 5)


def test_a_rewritten_hash_chain_is_still_found(xq, ledger_db):
    """Editing a body and its own hash is not enough: the next entry's prev_hash no longer matches."""
    import hashlib

    db, _ = ledger_db
    con = sqlite3.connect(db)
    body, prev = con.execute("SELECT body, prev_hash FROM entries WHERE game_id = 'g-ver' AND seq = 3").fetchone()
    body = bytes(body).replace(b'"side"', b'"sidE"', 1)
    forged = hashlib.sha256(bytes.fromhex(prev) + body).hexdigest()
    con.execute("UPDATE entries SET body = ?, hash = ? WHERE game_id = 'g-ver' AND seq = 3", (body, forged))
    con.commit()
    con.close()
    r = xq("verify", "--game", "g-ver", "--db", str(db), "--json")
    assert r.returncode != 0
    assert json.loads(r.stdout)["first_bad_seq"] in (3, 4)


def test_unknown_game_and_missing_ledger(xq, ledger_db, tmp_path):
    db, _ = ledger_db
    r = xq("verify", "--game", "no-such-game", "--db", str(db))
    assert r.returncode != 0 and "no-such-game" in r.stderr and "Traceback" not in r.stderr
    r = xq("verify", "--game", "g-ver", "--db", str(tmp_path / "nowhere.sqlite"))
    assert r.returncode != 0 and "nowhere.sqlite" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "nowhere.sqlite").exists(), "verify must not create a ledger"
