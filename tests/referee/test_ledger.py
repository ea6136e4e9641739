"""The ledger: append-only, hash-chained, deduplicated by event id, verification names the first bad entry.

The contract tests take `store` or `ledger` (tests/ledger_stores.py): they run against SQLite and PostgreSQL alike.
The tests of SQLite's own layouts and query plans take `sqlite_ledger` or a file.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.ledger_stores import Store, new_store
from xqarb.events import Event, make_event
from xqarb.referee.ledger import (
    GENESIS_HASH,
    Batch,
    Ledger,
    LedgerConflict,
    MalformedEntry,
    Origin,
    Pending,
    SqliteLedger,
    UnknownGame,
    chain_hash,
)


def _press(seq: int, board: str = "7") -> Event:
    return make_event(
        "ClockPressed", board, source="clock-7", source_seq=seq, occurred_at=1_700_000_000_000_000 + seq,
        received_at=1_700_000_000_000_100 + seq, side="red" if seq % 2 else "black", red_ms=None, black_ms=None,
    )


def _ruling(seq: int, board: str = "7") -> Event:
    return make_event(
        "Ruling", board, source="referee", source_seq=seq, occurred_at=1_700_000_000_000_000 + seq,
        received_at=1_700_000_000_000_000 + seq, game_id="g1", kind="foul", side="red", article="8.1.7",
        message="clock pressed without a move",
    )


def test_append_chains_hashes_and_reads_back(ledger: Ledger) -> None:
    written = ledger.append("g1", "7", [Pending("input", _press(1), Origin("xq.clock", 3, 41)),
                                         Pending("output", _ruling(1))])
    assert [e.seq for e in written] == [1, 2]
    assert written[0].prev_hash == GENESIS_HASH
    assert written[1].prev_hash == written[0].hash
    back = ledger.entries("g1")
    assert back == written
    assert back[0].origin == Origin("xq.clock", 3, 41)
    assert back[1].event == _ruling(1)
    assert ledger.head("g1") == (2, written[1].hash)
    assert ledger.entries("g1", after=1) == written[1:]
    assert ledger.entries("g1", limit=1) == written[:1]
    assert ledger.verify("g1").ok


def test_an_entrys_referee_versions_are_hashed_and_read_back(ledger: Ledger) -> None:
    """The referee's versions on the first entry it writes to a chain are part of the hashed entry in every store,
    so that an output stays tied to the fold that made it (and cannot be dropped or edited unseen)."""
    versions = {"fold": "2026.12.06-1", "ruleset": "cxa-2021", "ruleset_version": "1"}
    written = ledger.append("g1", "7", [Pending("input", _press(1), referee=versions), Pending("input", _press(2))])
    back = ledger.entries("g1")
    assert [e.referee for e in back] == [versions, None]
    assert back == written
    assert b'"referee"' in bytes(ledger.stored_rows("g1")[0].body)
    assert ledger.input_ids("g1") == {_press(1).event_id, _press(2).event_id}
    assert ledger.verify("g1").ok


def test_only_the_newest_snapshot_is_kept(store: Store) -> None:
    with store.open() as ledger:
        ledger.append("g1", "7", [Pending("input", _press(i)) for i in range(1, 5)])
        ledger.put_snapshot("g1", 2, b"after-2")
        ledger.put_snapshot("g1", 4, b"after-4")
        assert ledger.latest_snapshot("g1") == (4, b"after-4")
    assert store.sql("SELECT seq FROM snapshots WHERE game_id = ?", ("g1",)) == [(4,)]


def test_replayed_input_is_skipped_by_event_id(ledger: Ledger) -> None:
    ledger.append("g1", "7", [Pending("input", _press(1))])
    again = ledger.append("g1", "7", [Pending("input", _press(1)), Pending("input", _press(2))])
    assert [e.event.source_seq for e in again] == [2]
    assert [e.seq for e in ledger.entries("g1")] == [1, 2]
    assert ledger.has_event("g1", _press(1).event_id)
    assert not ledger.has_event("g1", _press(3).event_id)


def test_an_event_twice_in_one_call_is_written_once_or_refused(ledger: Ledger) -> None:
    """Skipping, a later batch of the same call skips what an earlier one wrote; the same event twice inside one
    batch fails the event key instead, and the whole call is refused (both stores alike)."""
    written = ledger.append_many([Batch("g1", "7", (Pending("input", _press(1)),)),
                                  Batch("g2", "8", (Pending("input", _press(1)), Pending("input", _press(2))))])
    assert [(e.game_id, e.event.source_seq) for e in written] == [("g1", 1), ("g2", 2)]
    with pytest.raises(LedgerConflict):
        ledger.append("g3", "7", [Pending("input", _press(3)), Pending("input", _press(3))])
    assert ledger.entries("g3") == [] and ledger.find_event(_press(3)) is None


def test_games_are_listed_per_board_in_creation_order(ledger: Ledger) -> None:
    ledger.append("g2", "8", [Pending("input", _press(1, "8"))])
    ledger.append("g1", "7", [Pending("input", _press(1)), Pending("input", _press(2))])
    assert [(g.game_id, g.board_id, g.entries) for g in ledger.games()] == [("g2", "8", 1), ("g1", "7", 2)]
    assert [g.game_id for g in ledger.games(board_id="7")] == ["g1"]
    assert ledger.games()[1].head_hash == ledger.head("g1")[1]


@pytest.mark.parametrize("column, value", [("body", None), ("hash", "f" * 64), ("prev_hash", "e" * 64)])
def test_an_entry_edited_by_hand_fails_verification_at_that_entry(store: Store, column: str, value) -> None:
    with store.open() as ledger:
        ledger.append("g1", "7", [Pending("input", _press(i)) for i in range(1, 6)])
        assert ledger.verify("g1").ok
    if column == "body":
        body = bytes(store.sql("SELECT body FROM entries WHERE game_id='g1' AND seq=3")[0][0])
        value = body.replace(b'"side":"red"', b'"side":"black"')
        assert value != body
    store.sql(f"UPDATE entries SET {column} = ? WHERE game_id = 'g1' AND seq = 3", (value,))
    with store.open() as ledger:
        result = ledger.verify("g1")
    assert not result.ok
    assert result.first_bad_seq == 3
    assert "entry 3" in (result.reason or "")


def test_a_body_rewritten_as_text_is_reported_not_crashed_on(tmp_path: Path) -> None:
    """A hand-run `UPDATE entries SET body = replace(body, ...)` stores text where the hashed bytes were: verification
    names that entry instead of failing with a TypeError (and the API's verify answering 500)."""
    path = tmp_path / "ledger.sqlite"
    with SqliteLedger(path) as store:
        store.append("g1", "7", [Pending("input", _press(i)) for i in range(1, 6)])
    with sqlite3.connect(path) as db:
        db.execute("UPDATE entries SET body = replace(body, 'red', 'black') WHERE game_id = 'g1' AND seq = 2")
        assert db.execute("SELECT typeof(body) FROM entries WHERE game_id='g1' AND seq=2").fetchone()[0] == "text"
    with SqliteLedger(path) as store:
        result = store.verify("g1")
    assert (result.ok, result.first_bad_seq) == (False, 2)
    assert "altered" in (result.reason or "")


def test_a_deleted_entry_is_found(store: Store) -> None:
    with store.open() as ledger:
        ledger.append("g1", "7", [Pending("input", _press(i)) for i in range(1, 6)])
    store.sql("DELETE FROM entries WHERE game_id = 'g1' AND seq = 4")
    with store.open() as ledger:
        result = ledger.verify("g1")
    assert (result.ok, result.first_bad_seq) == (False, 5)


def test_rehashing_an_edited_entry_breaks_the_next_link(store: Store) -> None:
    """Someone who edits an entry and recomputes its hash is caught by the entry after it."""
    with store.open() as ledger:
        ledger.append("g1", "7", [Pending("input", _press(i)) for i in range(1, 6)])
    body, prev = store.sql("SELECT body, prev_hash FROM entries WHERE game_id='g1' AND seq=2")[0]
    forged = bytes(body).replace(b'"side":"black"', b'"side":"red"')
    store.sql("UPDATE entries SET body = ?, hash = ? WHERE game_id='g1' AND seq=2", (forged, chain_hash(prev, forged)))
    with store.open() as ledger:
        result = ledger.verify("g1")
    assert (result.ok, result.first_bad_seq) == (False, 3)


def test_second_writer_cannot_fork_the_log(store: Store) -> None:
    """Two processes writing one game: the (game, seq) key refuses the second instead of forking."""
    first, second = store.open(), store.open()
    try:
        first.append("g1", "7", [Pending("input", _press(1))])
        second.append("g1", "7", [Pending("input", _press(2))])  # reads the head inside its transaction
        assert [e.seq for e in first.entries("g1")] == [1, 2]
        # a writer that bypasses the head read (a fork attempt) is refused by the unique key
        with pytest.raises(store.integrity_error):
            store.sql("INSERT INTO entries (game_id, seq, kind, event_id, occurred_at, body, prev_hash, hash) "
                      "VALUES ('g1', 2, 'input', 'x', 1, ?, ?, ?)", (b"\x00", GENESIS_HASH, GENESIS_HASH))
        assert first.verify("g1").ok
    finally:
        first.close()
        second.close()


_REFUSING_TRIGGER = {  # a unique key's refusal on the next insert, as another writer's row would give
    "sqlite": "CREATE TRIGGER refuse BEFORE INSERT ON entries BEGIN SELECT RAISE(ABORT, 'busy'); END",
    "postgres": "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS "
                "$$ BEGIN RAISE unique_violation USING MESSAGE = 'busy'; END $$; "
                "CREATE TRIGGER refuse BEFORE INSERT ON entries FOR EACH ROW EXECUTE FUNCTION refuse()",
}


def test_conflict_error_type_is_raised_on_integrity_failure(store: Store, ledger: Ledger) -> None:
    ledger.append("g1", "7", [Pending("input", _press(1))])
    store.sql(_REFUSING_TRIGGER[store.kind])
    with pytest.raises(LedgerConflict, match="another writer"):
        ledger.append("g1", "7", [Pending("input", _press(2))])
    assert [e.seq for e in ledger.entries("g1")] == [1]  # nothing half-written


def test_concurrent_appends_from_threads_keep_one_chain(ledger: Ledger) -> None:
    def worker(start: int) -> None:
        for i in range(start, start + 50):
            ledger.append("g1", "7", [Pending("input", _press(i))])

    threads = [threading.Thread(target=worker, args=(k * 100,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert ledger.head("g1")[0] == 200
    assert ledger.verify("g1").ok


def test_two_connections_appending_at_once_keep_one_chain(store: Store) -> None:
    """Two referees (two connections) appending to one game at the same time: each waits for the other's commit and
    continues the chain; none is refused, nothing forks."""
    first, second = store.open(), store.open()

    def worker(ledger: Ledger, start: int) -> None:
        for i in range(start, start + 30):
            ledger.append("g1", "7", [Pending("input", _press(i))])

    threads = [threading.Thread(target=worker, args=(ledger, k * 100)) for k, ledger in enumerate((first, second))]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert first.head("g1")[0] == 60 and second.head("g1") == first.head("g1")
        assert first.verify("g1").ok
    finally:
        first.close()
        second.close()


def test_a_writer_with_a_stale_head_is_refused_not_forked(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """A second writer that computed the same seq (its view of the head out of date) fails at the (game, seq) key:
    the whole append is refused and the chain stays as the first writer left it."""
    with store.open() as first, store.open() as second:
        first.append("g1", "7", [Pending("input", _press(1))])
        stale = first.head("g1")
        first.append("g1", "7", [Pending("input", _press(2))])
        monkeypatch.setattr(second, "_heads", lambda *args: {"g1": stale})
        with pytest.raises(LedgerConflict, match="another writer"):
            second.append("g1", "7", [Pending("input", _press(3)), Pending("output", _ruling(3))])
        assert [e.event.source_seq for e in first.entries("g1")] == [1, 2]
        assert first.verify("g1").ok and first.find_event(_press(3)) is None


def test_bad_kind_and_unknown_game_are_clear_errors(ledger: Ledger) -> None:
    with pytest.raises(MalformedEntry, match="kind"):
        ledger.append("g1", "7", [Pending("ruling", _press(1))])  # type: ignore[arg-type]
    with pytest.raises(UnknownGame, match="g9"):
        ledger.verify("g9")


def test_snapshots_are_ignored_once_their_entry_changed(store: Store) -> None:
    with store.open() as ledger:
        ledger.append("g1", "7", [Pending("input", _press(i)) for i in range(1, 4)])
        ledger.put_snapshot("g1", 2, b"state-after-1")
        ledger.put_snapshot("g1", 2, b"state-after-2")  # the same entry again: replaced
        assert ledger.latest_snapshot("g1") == (2, b"state-after-2")
        with pytest.raises(MalformedEntry):
            ledger.put_snapshot("g1", 9, b"x")
    store.sql("UPDATE entries SET hash = ? WHERE game_id='g1' AND seq=2", ("a" * 64,))
    with store.open() as ledger:
        assert ledger.latest_snapshot("g1") is None


@pytest.mark.parametrize("kinds", [("sqlite", "sqlite"), ("sqlite", "postgres")])
def test_same_inputs_give_byte_identical_ledgers(kinds: tuple[str, str], tmp_path: Path,
                                                 request: pytest.FixtureRequest) -> None:
    """Two ledgers, and the two stores, given the same inputs hold the same bytes under the same hashes."""
    files = []
    for kind in kinds:
        with new_store(kind, tmp_path, request).open() as ledger:
            for i in range(1, 20):
                ledger.append("g1", "7", [Pending("input", _press(i)), Pending("output", _ruling(i))])
            files.append([(r.seq, bytes(r.body), r.hash) for r in ledger.stored_rows("g1")])
    assert len(files[0]) == 38 and files[0] == files[1]


def test_find_event_looks_in_every_game(ledger: Ledger) -> None:
    ledger.append("board:7", "7", [Pending("input", _press(1))])
    ledger.append("g1", "7", [Pending("input", _press(2)), Pending("output", _ruling(2))])
    assert ledger.find_event(_press(1)) == ("board:7", 1)
    assert ledger.find_event(_ruling(2)) == ("g1", 2)
    assert ledger.find_event(_press(9)) is None
    assert ledger.find_events([_press(2), _press(9), _press(1), _press(2)]) == {_press(1).event_id: ("board:7", 1),
                                                                             _press(2).event_id: ("g1", 1)}


def test_two_connections_writing_in_turn_continue_each_others_chains(store: Store) -> None:
    """A connection keeps the heads it committed only until another connection writes to the file (a referee that
    took the board over, an arbiter's tool): then it reads them again, and the chain goes on unforked."""
    with store.open() as first, store.open() as second:
        first.append("g1", "7", [Pending("input", _press(1))])
        first.append("g1", "7", [Pending("input", _press(2))])  # its own head, kept
        second.append("g1", "7", [Pending("input", _press(3))])
        first.append("g1", "7", [Pending("input", _press(4))])
        assert [(e.seq, e.event.source_seq) for e in first.entries("g1")] == [(1, 1), (2, 2), (3, 3), (4, 4)]
        assert first.verify("g1").ok and second.verify("g1").ok


def test_events_are_keyed_by_time_then_id(sqlite_ledger: SqliteLedger) -> None:
    """The key that records an event once is (occurred_at, event id): in time order, so a batch's inserts fall on
    the index's last pages; a look-up by event is one search in that index, never a scan of the entries."""
    ledger = sqlite_ledger
    ledger.append("g1", "7", [Pending("input", _press(1))])
    again = _press(1)  # a retry or a redelivery: the same id and the same time
    assert ledger.append("g1", "7", [Pending("input", again)]) == []
    with pytest.raises(LedgerConflict):
        ledger.append_many([Batch("g1", "7", (Pending("input", again),))], skip_known=False)
    db = ledger._db
    indexes = [row[1] for row in db.execute("PRAGMA index_list(entries)") if row[2]]
    assert any([c[2] for c in db.execute(f"PRAGMA index_info('{name}')")] == ["occurred_at", "event_id"]
               for name in indexes)
    with ledger._lock:
        plans = []
        real_execute = db.execute

        class Spy:
            def execute(self, query: str, args: object = ()) -> object:
                plans.extend(row[3] for row in real_execute("EXPLAIN QUERY PLAN " + query, args))
                return real_execute(query, args)

        ledger._db = Spy()  # type: ignore[assignment]
        try:
            assert ledger.find_events([_press(1), _press(2)]) == {_press(1).event_id: ("g1", 1)}
        finally:
            ledger._db = db
    assert any("USING INDEX" in plan and "occurred_at" in plan for plan in plans), plans
    assert not any(plan.startswith("SCAN e") or plan == "SCAN entries" for plan in plans), plans


def test_an_edited_event_time_column_fails_verification(store: Store, ledger: Ledger) -> None:
    for i in range(1, 4):
        ledger.append("g1", "7", [Pending("input", _press(i))])
    store.sql("UPDATE entries SET occurred_at = occurred_at + 1 WHERE game_id = 'g1' AND seq = 2")
    result = ledger.verify("g1")
    assert not result.ok and result.first_bad_seq == 2 and "indexed columns" in (result.reason or "")


def test_append_many_is_one_transaction_over_games(ledger: Ledger) -> None:
    from xqarb.referee.ledger import Batch

    written = ledger.append_many([
        Batch("g1", "7", (Pending("input", _press(1)),)),
        Batch("g2", "8", (Pending("input", _press(1, "8")),)),
        Batch("g1", "7", (Pending("input", _press(2)), Pending("output", _ruling(2)))),
    ])  # fmt: skip
    assert [(e.game_id, e.seq) for e in written] == [("g1", 1), ("g2", 1), ("g1", 2), ("g1", 3)]
    assert ledger.verify("g1").ok and ledger.verify("g2").ok
    # Without the per-entry look-up, an input already there refuses the whole batch: nothing half-written.
    with pytest.raises(LedgerConflict):
        ledger.append_many([Batch("g2", "8", (Pending("input", _press(5, "8")),)),
                            Batch("g1", "7", (Pending("input", _press(1)),))], skip_known=False)
    assert ledger.head("g2")[0] == 1


def test_append_looked_up_writes_what_append_many_writes_and_counts_it(store: Store, tmp_path: Path,
                                                                       request: pytest.FixtureRequest) -> None:

    batches = [
        Batch("g1", "7", (Pending("input", _press(1)),)),
        Batch("g2", "8", (Pending("input", _press(1, "8")),)),
        Batch("g1", "7", (Pending("input", _press(2)), Pending("output", _ruling(2)))),
    ]
    with store.open() as many, new_store(store.kind, tmp_path, request).open() as counted:
        written = many.append_many(batches, skip_known=False)
        assert counted.append_looked_up(batches) == len(written) == 4
        for game in ("g1", "g2"):
            assert counted.entries(game) == many.entries(game)  # same bytes, same hashes
        with pytest.raises(LedgerConflict):  # an input already there refuses the batch, as append_many does
            counted.append_looked_up([Batch("g2", "8", (Pending("input", _press(5, "8")),)),
                                      Batch("g1", "7", (Pending("input", _press(1)),))])
        assert counted.head("g2")[0] == 1


def _json_dumps_of_entry(event: Event, origin: Origin | None) -> bytes:
    """The canonical form by its definition: json.dumps of the whole entry, sorted keys, compact, UTF-8 as is."""
    import json

    return json.dumps(
        {"game_id": "g1", "seq": 5, "kind": "input", "event": event.to_json_dict(),
         "origin": origin.to_json() if origin else None},
        sort_keys=True, separators=(",", ":"), ensure_ascii=False,
    ).encode("utf-8")


def test_canonical_bytes_are_the_sorted_json_form_of_the_entry() -> None:
    """The fast encoder writes exactly the sorted, compact JSON of `Event.to_json_dict` (bytes in base64, nested
    objects and lists included), so ledgers written before and after it hash alike."""
    from xqarb.referee.ledger import canonical_bytes

    started = make_event(
        "GameStarted", "7", source="arbiter", source_seq=1, occurred_at=1_700_000_000_000_000,
        received_at=1_700_000_000_000_000, game_id="g1",
        red_player="李来群", black_player="胡荣华", ruleset="cxa-2011", level="national",
        time_control={"scheme": "moves_in_time", "periods": [{"moves": 40, "minutes": 90}, {"minutes": 0.5}]},
    )
    events = [started, _press(3), _ruling(4)]
    frame = make_event("FrameCaptured", "7", source="cam-7", source_seq=9, occurred_at=1_700_000_000_000_009,
                       received_at=1, camera_id="cam-7", encoding="jpeg", width=1280, height=720,
                       image=b"\xff\xd8 not really a jpeg \x00\x01")
    events.append(frame)
    # Floats, which orjson would write in its own way (1e-05 as 0.00001): the json module writes this type.
    events.append(make_event(
        "BoardCalibrated", "7", source="cam-7", source_seq=10, occurred_at=1, received_at=1,
        homography=[1e-05, 2.5e-07, 1.0, -0.0, 3.0, 1e16, 0.1, 1234.5, 1.0],
        corners=[[0.5, 1e-05], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0]]))
    # An integer beyond 64 bits (no schema allows it, but an Event built directly can hold it): orjson refuses it,
    # the json module writes it.
    events.append(Event("Ruling", "e-big", "7", "referee", 1, 1, 1, {"game_id": "g1", "message": 2**70}))
    for event in events:
        for origin in (None, Origin("xq.clock", 2, 40)):
            assert canonical_bytes("g1", 5, "input", event, origin) == _json_dumps_of_entry(event, origin)


@settings(max_examples=300, deadline=None)
@given(message=st.text(), side=st.sampled_from(["red", "black"]), seq=st.integers(0, 2**63 - 1))
def test_canonical_bytes_of_any_text_are_json_dumps(message: str, side: str, seq: int) -> None:
    """Whatever an arbiter or the referee writes (control characters, quotes, backslashes, CJK, emoji, lone
    surrogates), both writers give json.dumps's bytes, or the same error."""
    from xqarb.referee.ledger import canonical_bytes

    event = make_event("Ruling", "7", source="referee", source_seq=seq, occurred_at=seq, received_at=seq,
                       game_id="g1", kind="foul", side=side, article="8.1.7", message=message)
    try:
        expected = _json_dumps_of_entry(event, None)
    except UnicodeEncodeError:  # a lone surrogate has no UTF-8 form
        with pytest.raises(UnicodeEncodeError):
            canonical_bytes("g1", 5, "input", event, None)
        return
    assert canonical_bytes("g1", 5, "input", event, None) == expected


def test_an_event_is_recorded_once_in_the_whole_ledger(ledger: Ledger) -> None:
    ledger.append("board:7", "7", [Pending("input", _press(1))])
    # skipping (the default): the input already stands in another chain, so nothing is written twice
    assert ledger.append("g1", "7", [Pending("input", _press(1)), Pending("input", _press(2))])[0].event.source_seq == 2
    assert [e.event.source_seq for e in ledger.entries("g1")] == [2]
    # a caller that looked its inputs up itself is refused, whole batch, instead of doubling the event
    with pytest.raises(LedgerConflict):
        ledger.append_many([Batch("g2", "7", (Pending("input", _press(3)), Pending("input", _press(1))))],
                           skip_known=False)
    assert ledger.entries("g2") == [] and ledger.find_events([_press(3)]) == {}


def _ledger_file(path: Path, entries_table: str) -> Path:
    """A ledger file as an earlier version laid it out: its games table and the given entries table."""
    db = sqlite3.connect(path)
    db.executescript("CREATE TABLE games (game_id TEXT PRIMARY KEY, board_id TEXT NOT NULL, created INTEGER NOT NULL);"
                     + entries_table)
    db.close()
    return path


def test_a_ledger_keyed_by_the_event_id_alone_still_appends_and_verifies(tmp_path: Path) -> None:
    """Ledgers written before the time key (a rowid table with a unique event id) keep working as they are."""
    path = _ledger_file(tmp_path / "rowid.sqlite", """
        CREATE TABLE entries (
            game_id TEXT NOT NULL REFERENCES games(game_id), seq INTEGER NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('input', 'output')), event_id TEXT NOT NULL UNIQUE, body BLOB NOT NULL,
            prev_hash TEXT NOT NULL, hash TEXT NOT NULL, UNIQUE (game_id, seq)
        );
    """)
    with SqliteLedger(path) as old:
        old.append("board:7", "7", [Pending("input", _press(1))])
        old.append_many([Batch("g1", "7", (Pending("input", _press(2)), Pending("output", _ruling(2)))),
                         Batch("g2", "8", (Pending("input", _press(1, "8")),))])
        assert old.head("g1")[0] == 2 and old.verify("g1").ok and old.verify("board:7").ok
        assert old.find_events([_press(1), _press(2)]) == {_press(1).event_id: ("board:7", 1),
                                                           _press(2).event_id: ("g1", 1)}
        assert old.append("g1", "7", [Pending("input", _press(1))]) == []  # found in the board's chain: skipped
        with pytest.raises(LedgerConflict):
            old.append_many([Batch("g1", "7", (Pending("input", _press(2)),))], skip_known=False)
    columns = [row[1] for row in sqlite3.connect(path).execute("PRAGMA table_info(entries)")]
    assert "occurred_at" not in columns  # its layout is left as it was


def test_a_ledger_written_with_the_earlier_layout_still_appends_and_verifies(tmp_path: Path) -> None:
    """Ledgers written before the rowid layout (WITHOUT ROWID, unique (game, event id)) keep working as they are."""
    path = _ledger_file(tmp_path / "old.sqlite", """
        CREATE TABLE entries (
            game_id TEXT NOT NULL REFERENCES games(game_id), seq INTEGER NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('input', 'output')), event_id TEXT NOT NULL, body BLOB NOT NULL,
            prev_hash TEXT NOT NULL, hash TEXT NOT NULL, PRIMARY KEY (game_id, seq), UNIQUE (game_id, event_id)
        ) WITHOUT ROWID;
        CREATE INDEX entries_by_event ON entries (event_id);
    """)
    with SqliteLedger(path) as old:
        old.append("g1", "7", [Pending("input", _press(1)), Pending("output", _ruling(1))])
        old.append_many([Batch("g1", "7", (Pending("input", _press(2)),)), Batch("g2", "8", (Pending("input",
                                                                                                  _press(1, "8")),))])
        assert old.head("g1")[0] == 3 and old.verify("g1").ok and old.verify("g2").ok
        assert old.find_events([_press(2)]) == {_press(2).event_id: ("g1", 3)}
        assert old.append("g1", "7", [Pending("input", _press(2))]) == []  # the replay is skipped
