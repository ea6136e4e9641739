"""A restart resumes a board from its snapshot and the entries after it, and the state is the one a full re-fold
of the game's inputs gives; a snapshot another fold made, or one that is damaged or names a foreign class, is not
used (the inputs are folded again, as before snapshots)."""

from __future__ import annotations

import pickle

import pytest

from xqarb.referee import snapshot, version
from xqarb.referee.board import fold, run
from xqarb.referee.ledger import Origin, SqliteLedger
from xqarb.referee.service import SNAPSHOT_AFTER_INPUTS, Referee


def _events(scenario):
    s = scenario().moves("h2e2", "h9g7", "h0g2", "i9h9")
    s.press("black").add("TouchReported", side="red", point="b0").moves("b0c2", "b9c7", "i0h0")
    s.add("DrawOffered", side="black").moves("c6c5", "c3c4")
    return s.events()


def _feed(referee: Referee, events, first: int = 0) -> None:
    for i, e in enumerate(events, start=first):
        referee.handle_batch([(e, Origin("xq.test", 0, i))])


def _full(ledger: SqliteLedger):
    return fold([e.event for e in ledger.entries("g1") if e.kind == "input"])


@pytest.mark.parametrize("cut", [1, 4, 9, 14])
def test_a_restart_resumes_from_the_snapshot_to_the_state_of_a_full_refold(scenario, tmp_path, cut):
    events = _events(scenario)
    middle = min(cut + 5, len(events) - 3)
    with SqliteLedger(tmp_path / "l.sqlite") as ledger:
        first = Referee(ledger)
        _feed(first, events[:cut])
        assert first.take_snapshots(min_inputs=1) == 1
        _feed(first, events[cut:middle], first=cut)  # the tail after the snapshot
        second = Referee(ledger)
        resumed = second.rebuild("b1")
        assert second.resumed == 1
        assert resumed.to_json() == _full(ledger).to_json() == first._boards["b1"].to_json()
        assert second._ids["b1"].ids == {e.event_id for e in events[:middle]}
        # ... and it goes on exactly as an uninterrupted referee: the same outputs, byte for byte.
        second._boards["b1"] = resumed
        _feed(second, events[middle:], first=middle)
        outputs = [e.event.to_json() for e in ledger.entries("g1") if e.kind == "output"]
    _, steps = run(events)
    assert outputs == [o.to_json() for _, st in steps for o in st.outputs]


def test_a_snapshot_records_the_versions_that_wrote_the_game(scenario, tmp_path, monkeypatch):
    events = _events(scenario)
    with SqliteLedger(tmp_path / "l.sqlite") as ledger:
        first = Referee(ledger)
        _feed(first, events[:6])
        first.take_snapshots(min_inputs=1)
        second = Referee(ledger)
        second._boards["b1"] = second.rebuild("b1")
        _feed(second, events[6:], first=6)  # same version: nothing new recorded
        assert [e.seq for e in ledger.entries("g1") if e.referee is not None] == [1]


def test_a_snapshot_of_another_fold_version_is_not_used(scenario, tmp_path, monkeypatch):
    events = _events(scenario)
    with SqliteLedger(tmp_path / "l.sqlite") as ledger:
        first = Referee(ledger)
        _feed(first, events)
        first.take_snapshots(min_inputs=1)
        monkeypatch.setattr(version, "FOLD_VERSION", "2099.01.01-1")
        monkeypatch.setattr(snapshot, "FOLD_VERSION", "2099.01.01-1")
        second = Referee(ledger)
        state = second.rebuild("b1")
        assert second.resumed == 0 and state.to_json() == _full(ledger).to_json()


class _Planted:
    def __reduce__(self):
        import os

        return os.system, ("echo planted",)


@pytest.mark.parametrize("blob", [b"not a snapshot", b"<header>" + b"\x80\x05garbage",
                                  b"<header>" + pickle.dumps((_Planted(), None))])
def test_a_damaged_or_foreign_snapshot_is_not_used(scenario, tmp_path, blob, capfd):
    events = _events(scenario)
    with SqliteLedger(tmp_path / "l.sqlite") as ledger:
        _feed(Referee(ledger), events)
        ledger.put_snapshot("g1", ledger.head("g1")[0], blob.replace(b"<header>", snapshot.header()))
        second = Referee(ledger)
        state = second.rebuild("b1")
        assert second.resumed == 0 and state.to_json() == _full(ledger).to_json()
    assert "planted" not in capfd.readouterr().out


def test_snapshots_are_taken_once_enough_inputs_were_folded_and_when_boards_are_given_away(scenario, tmp_path):
    events = _events(scenario)
    with SqliteLedger(tmp_path / "l.sqlite") as ledger:
        referee = Referee(ledger)
        _feed(referee, events)
        assert len(events) < SNAPSHOT_AFTER_INPUTS
        assert referee.take_snapshots() == 0 and ledger.latest_snapshot("g1") is None
        referee.release("xq.test", [0])  # a rebalance: the board goes to another process, with a snapshot
        seq, _ = ledger.latest_snapshot("g1")
        assert seq == ledger.head("g1")[0] and referee.snapshots == 1
        assert referee.take_snapshots(min_inputs=1) == 0  # nothing folded since


def test_the_ledger_keeps_only_a_games_newest_snapshot(scenario, tmp_path):
    events = _events(scenario)
    with SqliteLedger(tmp_path / "l.sqlite") as ledger:
        referee = Referee(ledger)
        _feed(referee, events[:5])
        referee.take_snapshots(min_inputs=1)
        _feed(referee, events[5:], first=5)
        referee.take_snapshots(min_inputs=1)
        rows = ledger._db.execute("SELECT seq FROM snapshots WHERE game_id = 'g1'").fetchall()
        assert rows == [(ledger.head("g1")[0],)]
