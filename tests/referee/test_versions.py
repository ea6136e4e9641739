"""Each ruling tied to the referee versions that made it: the ledger records the fold's and the rule set's version
when a game starts and when a referee of another version takes it over; `xqarb verify` and the rebuild say when
the installed fold is not the one that wrote a game; `xqarb replay-ledger` lists what an upgrade would change."""

from __future__ import annotations

import json
import logging

import pytest

from xqarb.cli import main
from xqarb.referee import game as game_mod
from xqarb.referee import version
from xqarb.referee.board import run
from xqarb.referee.ledger import Origin, SqliteLedger, canonical_bytes
from xqarb.referee.service import Referee

UPGRADE = "2099.01.01-1"


def _game(scenario):
    """A game with a foul: red presses the clock a second time without moving (8.1.7)."""
    s = scenario().moves("h2e2", "h9g7", "h0g2")
    s.press("black").moves("i9h9", "b0c2")
    return s


def _feed(referee: Referee, events, first: int = 0) -> None:
    for i, e in enumerate(events, start=first):
        referee.handle_batch([(e, Origin("xq.test", 0, i))])


def _without_press_fouls(monkeypatch):
    """An upgrade that changes one rule: pressing the clock without moving is no longer a foul (8.1.7)."""
    real = game_mod.apply

    def apply(state, event):
        new, outs = real(state, event)
        return new, tuple(o for o in outs if not (o.type == "Ruling" and o.get("article") == "8.1.7"))

    monkeypatch.setattr(game_mod, "apply", apply)
    monkeypatch.setattr(version, "FOLD_VERSION", UPGRADE)


def test_a_game_records_the_versions_on_its_first_entry_and_its_outputs_are_unchanged(scenario, tmp_path):
    events = _game(scenario).events()
    with SqliteLedger(tmp_path / "l.sqlite") as ledger:
        _feed(Referee(ledger), events)
        entries = ledger.entries("g1")
        rows = ledger.stored_rows("g1")
        assert ledger.verify("g1").ok
    first = entries[0]
    assert first.kind == "input" and first.event.type == "GameStarted"
    assert first.referee == {"fold_version": version.FOLD_VERSION, "ruleset": "cxa-2021",
                             "ruleset_version": version.RULESET_VERSIONS["cxa-2021"], "previous": None}
    assert [e.seq for e in entries if e.referee is not None] == [1]
    # The outputs are those of the fold, byte for byte, and every other entry has the bytes it always had.
    _, steps = run(events)
    assert [o.to_json() for o in (e.event for e in entries if e.kind == "output")] == [
        o.to_json() for _, st in steps for o in st.outputs]
    assert any(e.event.type == "Ruling" and e.event.data["article"] == "8.1.7" for e in entries)
    for entry, row in zip(entries[1:], rows[1:], strict=True):
        assert bytes(row.body) == canonical_bytes("g1", entry.seq, entry.kind, entry.event, entry.origin)
    assert b'"referee":{' in bytes(rows[0].body)


def test_a_restart_on_the_same_version_records_nothing_new(scenario, tmp_path):
    events = _game(scenario).events()
    with SqliteLedger(tmp_path / "l.sqlite") as ledger:
        _feed(Referee(ledger), events[:6])
        _feed(Referee(ledger), events[6:], first=6)
        assert [e.seq for e in ledger.entries("g1") if e.referee is not None] == [1]


def test_a_referee_of_another_version_taking_the_game_over_records_the_change(scenario, tmp_path, monkeypatch,
                                                                               caplog):
    events = _game(scenario).events()
    with SqliteLedger(tmp_path / "l.sqlite") as ledger:
        _feed(Referee(ledger), events[:6])
        before = ledger.head("g1")[0]
        monkeypatch.setattr(version, "FOLD_VERSION", UPGRADE)
        with caplog.at_level(logging.WARNING, logger="xqarb.referee"):
            _feed(Referee(ledger), events[6:], first=6)
        entries = ledger.entries("g1")
        assert ledger.verify("g1").ok
    assert "installed fold differs from the one that wrote game g1" in caplog.text
    assert f"fold {UPGRADE}" in caplog.text
    marked = [e for e in entries if e.referee is not None]
    assert [e.seq for e in marked] == [1, before + 1]
    assert marked[1].kind == "input" and marked[1].event == events[6]
    assert marked[1].referee["fold_version"] == UPGRADE
    assert marked[1].referee["previous"]["fold_version"] != UPGRADE


def test_a_boards_own_chain_records_the_versions_too(scenario, tmp_path):
    s = scenario(start=False).add("DrawOffered", side="red")
    with SqliteLedger(tmp_path / "l.sqlite") as ledger:
        _feed(Referee(ledger), s.events())
        (entry, *_) = ledger.entries("board:b1")
    assert entry.referee == {"fold_version": version.FOLD_VERSION, "ruleset": None, "ruleset_version": None,
                             "previous": None}


def _ledger_with_game(scenario, tmp_path):
    db = tmp_path / "l.sqlite"
    with SqliteLedger(db) as ledger:
        _feed(Referee(ledger), _game(scenario).events())
    return db


def test_verify_says_when_the_installed_fold_is_not_the_one_that_wrote_the_game(scenario, tmp_path, monkeypatch,
                                                                                 capsys):
    db = _ledger_with_game(scenario, tmp_path)
    assert main(["verify", "--game", "g1", "--db", str(db)]) == 0
    assert "differs" not in capsys.readouterr().out
    monkeypatch.setattr(version, "FOLD_VERSION", UPGRADE)
    assert main(["verify", "--game", "g1", "--db", str(db)]) == 0
    text = capsys.readouterr().out
    assert "entries verify" in text and "the installed fold differs" in text and f"installed: fold {UPGRADE}" in text
    assert "xqarb replay-ledger --game g1" in text
    assert main(["verify", "--game", "g1", "--db", str(db), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] and report["versions"]["installed"]["fold_version"] == UPGRADE
    assert report["versions"]["recorded"][0]["seq"] == 1 and report["versions"]["installed_differs"]


def test_replay_ledger_with_the_same_fold_finds_every_output_the_same(scenario, tmp_path, capsys):
    db = _ledger_with_game(scenario, tmp_path)
    assert main(["replay-ledger", "--game", "g1", "--db", str(db)]) == 0
    assert "every output is the same" in capsys.readouterr().out


def test_replay_ledger_names_the_ruling_an_upgrade_would_change(scenario, tmp_path, monkeypatch, capsys):
    db = _ledger_with_game(scenario, tmp_path)
    with SqliteLedger(db) as ledger:
        entries = ledger.entries("g1")
    foul = next(e for e in entries if e.event.type == "Ruling")
    assert foul.event.data["article"] == "8.1.7"
    cause = max(e.seq for e in entries if e.kind == "input" and e.seq < foul.seq)
    _without_press_fouls(monkeypatch)
    assert main(["replay-ledger", "--game", "g1", "--db", str(db), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["installed"]["fold_version"] == UPGRADE
    (diff,) = report["differences"]
    assert diff["type"] == "Ruling" and diff["article"] == "8.1.7" and diff["input_seq"] == cause
    assert diff["old"]["event_id"] == foul.event.event_id and diff["new"] is None
    assert diff["ply"] == foul.event.data["ply"] == 3  # black pressed without moving after red's third ply
    assert report["renumbered"] > 0  # the outputs after it keep what they say, under other numbers
    assert diff["written_by"]["fold_version"] == report["recorded"][0]["fold_version"] != UPGRADE
    assert main(["replay-ledger", "--game", "g1", "--db", str(db)]) == 1
    text = capsys.readouterr().out
    assert "1 output(s) would differ" in text and "Ruling at ply 3, article 8.1.7" in text
    assert "new: (none)" in text


def test_replay_ledger_says_what_is_wrong_with_its_arguments(tmp_path, capsys):
    assert main(["replay-ledger", "--game", "g1", "--db", str(tmp_path / "none.sqlite")]) == 2
    assert "no ledger at" in capsys.readouterr().err
    with SqliteLedger(tmp_path / "l.sqlite"):
        pass
    assert main(["replay-ledger", "--game", "g1", "--db", str(tmp_path / "l.sqlite")]) == 2
    assert "no game 'g1'" in capsys.readouterr().err


@pytest.mark.parametrize("cut", [1, 5, 9])
def test_a_takeover_changes_no_output(scenario, tmp_path, monkeypatch, cut):
    """Determinism across a takeover: the outputs in the ledger are the fold's, whoever appended them."""
    events = _game(scenario).events()
    with SqliteLedger(tmp_path / "l.sqlite") as ledger:
        _feed(Referee(ledger), events[:cut])
        monkeypatch.setattr(version, "FOLD_VERSION", UPGRADE)
        _feed(Referee(ledger), events[cut:], first=cut)
        outputs = [e.event.to_json() for e in ledger.entries("g1") if e.kind == "output"]
    _, steps = run(events)
    assert outputs == [o.to_json() for _, st in steps for o in st.outputs]


def test_a_game_that_starts_only_at_its_second_gamestarted_records_its_rule_set_then(scenario, tmp_path):
    s = scenario(ruleset="cxa-1999")  # refused: no such rule set, the game does not start
    s.add("GameStarted", game_id="g1", red_player="R", black_player="B", ruleset="cxa-2011",
          time_control={"scheme": "increment", "base_ms": 600_000, "increment_ms": 5_000}, recording_required=False)
    s.moves("h2e2", "h9g7")
    with SqliteLedger(tmp_path / "l.sqlite") as ledger:
        _feed(Referee(ledger), s.events())
        marked = [(e.seq, e.referee["ruleset"]) for e in ledger.entries("g1") if e.referee is not None]
    assert marked[0] == (1, None) and marked[1][1] == "cxa-2011" and len(marked) == 2
