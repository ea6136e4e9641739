"""`xqarb verify --proof`: a published head catches what the hash chain cannot (a real SQLite ledger, tampered
with by hand as an insider would), and bad input is refused with exit status 2."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from xqarb.cli import main
from xqarb.events import make_event
from xqarb.referee.head_publisher import TreeHeadPublisher
from xqarb.referee.ledger import Pending, SqliteLedger, chain_hash
from xqarb.referee.service import Referee
from xqarb.referee.venue_key import key_path, load_or_create_key, public_key_json

from .conftest import Scenario

MOVES = ("h2e2", "h9g7", "h0g2", "i9h9", "i0h0", "b9c7")
T_SIGN = 1_767_229_000_000_000


@pytest.fixture()
def venue(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A data directory with a venue key and a ledger of one game, and the head a broadcaster kept of it."""
    data = tmp_path / "data"
    monkeypatch.setenv("XQARB_DATA_DIR", str(data))
    monkeypatch.delenv("XQARB_VENUE_KEY", raising=False)
    key = load_or_create_key(key_path())
    db = data / "ledger.sqlite"
    with SqliteLedger(db) as ledger:
        Referee(ledger).handle_batch([(e, None) for e in Scenario(board="b1", game="g1").moves(*MOVES).events()])
        publisher = TreeHeadPublisher(ledger, key)
        publisher.touched(["g1"])
        (event,) = publisher.due(0.0, T_SIGN)
        size = ledger.head("g1")[0]
    kept = tmp_path / "kept-heads.jsonl"  # as saved from the live stream: one event a line
    kept.write_text(json.dumps(event.to_json_dict()) + "\n")
    pub = tmp_path / "venue.pub"
    pub.write_text(public_key_json(key.public_key())["public_key_pem"])
    return {"db": db, "kept": kept, "pub": pub, "size": size, "tmp": tmp_path}


def _verify_proof(venue: dict[str, Any], capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, dict]:
    out = venue["tmp"] / "proof.json"
    assert main(["verify", "--game", "g1", "--db", str(venue["db"]), "--export-proof", str(out)]) == 0
    capsys.readouterr()
    rc = main(["verify", "--proof", str(out), "--public-key", str(venue["pub"]), "--head", str(venue["kept"]),
               "--json", *extra])
    return rc, json.loads(capsys.readouterr().out)


def _chain_verifies(venue: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> bool:
    rc = main(["verify", "--game", "g1", "--db", str(venue["db"])])
    capsys.readouterr()
    return rc == 0


def test_an_untouched_ledger_verifies_against_the_kept_head(venue: dict, capsys: pytest.CaptureFixture) -> None:
    rc, report = _verify_proof(venue, capsys)
    assert rc == 0 and report["ok"], report
    assert any(f"entries 1..{venue['size']} have its root" in line for line in report["checked"])


def test_a_ledger_that_grew_after_the_head_still_verifies(venue: dict, capsys: pytest.CaptureFixture) -> None:
    press = make_event("ClockPressed", "b1", source="clock-b1", source_seq=500, occurred_at=T_SIGN,
                       received_at=T_SIGN, side="red", red_ms=None, black_ms=None)
    with SqliteLedger(venue["db"]) as ledger:
        ledger.append("g1", "b1", [Pending("input", press)])
    rc, report = _verify_proof(venue, capsys)
    assert rc == 0, report
    for size in (venue["size"], venue["size"] + 1):  # the kept head, and the export's own head signed now
        assert any(f"entries 1..{size} have its root" in line for line in report["checked"]), report


def test_deleting_the_last_entries_is_caught(venue: dict, capsys: pytest.CaptureFixture) -> None:
    db = sqlite3.connect(venue["db"])
    db.execute("DELETE FROM entries WHERE game_id = 'g1' AND seq > ?", (venue["size"] - 3,))
    db.commit()
    db.close()
    assert _chain_verifies(venue, capsys)  # the chain alone cannot see it
    rc, report = _verify_proof(venue, capsys)
    assert rc == 1
    assert any(f"the ledger has only {venue['size'] - 3}" in p and "removed from its end" in p
               for p in report["problems"]), report


def test_rewriting_the_chain_from_an_entry_to_the_end_is_caught(venue: dict, capsys: pytest.CaptureFixture) -> None:
    db = sqlite3.connect(venue["db"])
    rows = db.execute("SELECT seq, body, prev_hash FROM entries WHERE game_id = 'g1' ORDER BY seq").fetchall()
    start = 5
    prev = rows[start - 1][2]
    for seq, body, _ in rows[start - 1:]:
        if seq == start:  # the forged entry: another source, every hash after it recomputed
            document = json.loads(body)
            document["event"]["source"] = "forged"
            body = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
        digest = chain_hash(prev, body)
        db.execute("UPDATE entries SET body = ?, prev_hash = ?, hash = ? WHERE game_id = 'g1' AND seq = ?",
                   (body, prev, digest, seq))
        prev = digest
    db.commit()
    db.close()
    assert _chain_verifies(venue, capsys)
    rc, report = _verify_proof(venue, capsys)
    assert rc == 1
    assert any(f"an entry among 1..{venue['size']} was changed" in p for p in report["problems"]), report


def test_a_head_kept_before_the_change_narrows_where_it_is(venue: dict, capsys: pytest.CaptureFixture,
                                                           tmp_path: Path) -> None:
    with SqliteLedger(venue["db"]) as ledger:
        ledger.append("g1", "b1", [Pending("input", _press(n)) for n in range(4)])
        publisher = TreeHeadPublisher(ledger, load_or_create_key(key_path()))
        publisher.touched(["g1"])
        (later,) = publisher.due(0.0, T_SIGN + 1)
    with venue["kept"].open("a") as kept:
        kept.write(json.dumps(later.to_json_dict()) + "\n")
    db = sqlite3.connect(venue["db"])
    last = venue["size"] + 2
    (body,) = db.execute("SELECT body FROM entries WHERE game_id = 'g1' AND seq = ?", (last,)).fetchone()
    db.execute("UPDATE entries SET body = ? WHERE game_id = 'g1' AND seq = ?", (body.replace(b'"red"', b'"xxx"'),
                                                                             last))
    db.commit()
    db.close()
    rc, report = _verify_proof(venue, capsys)
    assert rc == 1
    assert any(f"an entry among {venue['size'] + 1}..{venue['size'] + 4} was changed" in p
               for p in report["problems"]), report
    assert any(f"entries 1..{venue['size']} have its root" in line for line in report["checked"])


def _press(n: int) -> Any:
    return make_event("ClockPressed", "b1", source="clock-b1", source_seq=700 + n, occurred_at=T_SIGN + n,
                      received_at=T_SIGN + n, side="red", red_ms=None, black_ms=None)


def test_moving_the_game_to_another_board_is_caught(venue: dict, capsys: pytest.CaptureFixture) -> None:
    db = sqlite3.connect(venue["db"])
    db.execute("UPDATE games SET board_id = 'b9' WHERE game_id = 'g1'")
    db.commit()
    db.close()
    assert _chain_verifies(venue, capsys)
    rc, report = _verify_proof(venue, capsys)
    assert rc == 1
    assert any("signed for board 'b1'; the ledger now gives board 'b9'" in p for p in report["problems"]), report


def test_a_head_signed_by_another_key_is_refused(venue: dict, capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    other = load_or_create_key(tmp_path / "other.pem")
    (tmp_path / "other.pub").write_text(public_key_json(other.public_key())["public_key_hex"])
    venue = {**venue, "pub": tmp_path / "other.pub"}
    rc, report = _verify_proof(venue, capsys)
    assert rc == 1 and all("names key" in p for p in report["problems"]) and report["problems"]


def test_the_text_report_says_what_was_checked(venue: dict, capsys: pytest.CaptureFixture) -> None:
    out = venue["tmp"] / "proof.json"
    assert main(["verify", "--game", "g1", "--db", str(venue["db"]), "--export-proof", str(out)]) == 0
    capsys.readouterr()
    assert main(["verify", "--proof", str(out), "--head", str(venue["kept"])]) == 0  # key from the file: a note
    text = capsys.readouterr().out
    assert text.startswith("game g1: proof verifies") and "signature verifies" in text
    assert "taken from the proof file itself" in text


def test_the_public_key_is_printed(venue: dict, capsys: pytest.CaptureFixture) -> None:
    assert main(["verify", "--show-public-key"]) == 0
    assert capsys.readouterr().out == venue["pub"].read_text()
    assert main(["verify", "--show-public-key", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["algorithm"] == "Ed25519"


@pytest.mark.parametrize(("content", "message"), [
    (None, "cannot read"),
    ("{not json", "not a JSON proof document"),
    ('{"format": "other"}', "unknown proof format"),
    ('{"format": "xqarb-proof/1", "game_id": "g1", "board_id": "b1", "entries": ["%%%"]}', "not base64"),
    ('{"format": "xqarb-proof/1", "game_id": "g1", "board_id": "b1", "heads": [{"game_id": "g1"}]}', "lacks"),
])
def test_a_malformed_proof_exits_2_with_its_reason(venue: dict, capsys: pytest.CaptureFixture, content: str | None,
                                                   message: str) -> None:
    path = venue["tmp"] / "bad.json"
    if content is not None:
        path.write_text(content)
    assert main(["verify", "--proof", str(path), "--public-key", str(venue["pub"])]) == 2
    assert message in capsys.readouterr().err


def test_a_bad_public_key_or_none_exits_2(venue: dict, capsys: pytest.CaptureFixture) -> None:
    path = venue["tmp"] / "p.json"
    path.write_text('{"format": "xqarb-proof/1", "game_id": "g1", "board_id": "b1"}')
    assert main(["verify", "--proof", str(path), "--public-key", "abcd"]) == 2
    assert "public key" in capsys.readouterr().err
    assert main(["verify", "--proof", str(path)]) == 2
    assert "give --public-key" in capsys.readouterr().err
