"""The ledger: per game, an append-only, hash-chained sequence of entries (inputs and rulings).

Each entry holds one event, where it came from (topic, partition, offset for inputs read from Kafka), the hash of
the entry before it and its own hash = SHA-256(prev_hash || canonical bytes). The canonical bytes are stored as
they were hashed, so verification recomputes the chain from what is on disk and names the first entry that does
not match. A unique (game, seq) key makes a second writer fail instead of forking the log; a unique (time, event
id) key over the whole ledger makes a replayed input a no-op (exactly-once comes from here, not from Kafka).

The store sits behind the small `Ledger` interface; SQLite (WAL) is the embedded default, PostgreSQL
(ledger_pg.py, `--db postgresql://...`) the store shared by referees on several machines (`open_ledger`).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import sqlite3
import sys
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import orjson

from xqarb.config import ledger_target
from xqarb.events import EVENT_TYPES, JSON_FIELD_ATTRIBUTE, Event, data_fields

if TYPE_CHECKING:
    from xqarb.referee.ledger_pg import PostgresLedger

GENESIS_HASH = "0" * 64
EntryKind = Literal["input", "output"]
KINDS: tuple[str, ...] = ("input", "output")


class LedgerError(Exception):
    """Base of the ledger's errors."""


class LedgerConflict(LedgerError):
    """Another writer appended to the same game first: the (game, seq) key refused a fork."""


class MalformedEntry(LedgerError):
    """An entry to append is not well formed (unknown kind, event of another board ...)."""


@dataclass(frozen=True, slots=True)
class Origin:
    """Where an input was read: its Kafka coordinates."""

    topic: str
    partition: int
    offset: int

    def to_json(self) -> dict[str, Any]:
        return {"topic": self.topic, "partition": self.partition, "offset": self.offset}


@dataclass(frozen=True, slots=True)
class Pending:
    """One entry to append: what it is, the event, and (for inputs from Kafka) where it came from."""

    kind: EntryKind
    event: Event
    origin: Origin | None = None
    # The versions of the referee that appends this entry (version.py), on the first entry a referee of a version
    # writes to a chain: a JSON object, hashed with the entry. None on every other entry.
    referee: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Batch:
    """What to append to one game's ledger."""

    game_id: str
    board_id: str
    pending: tuple[Pending, ...]


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    game_id: str
    seq: int
    kind: EntryKind
    event: Event
    origin: Origin | None
    prev_hash: str
    hash: str
    referee: Mapping[str, Any] | None = None  # the referee's versions, where this entry records them (Pending)

    def to_json(self) -> dict[str, Any]:
        out = {
            "game_id": self.game_id,
            "seq": self.seq,
            "kind": self.kind,
            "event": self.event.to_json_dict(),
            "origin": self.origin.to_json() if self.origin else None,
            "prev_hash": self.prev_hash,
            "hash": self.hash,
        }
        if self.referee is not None:
            out["referee"] = dict(self.referee)
        return out


@dataclass(frozen=True, slots=True)
class GameInfo:
    game_id: str
    board_id: str
    entries: int
    head_hash: str


@dataclass(frozen=True, slots=True)
class Verification:
    """The outcome of recomputing a game's chain."""

    game_id: str
    ok: bool
    entries: int
    head_hash: str
    first_bad_seq: int | None = None
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "game_id": self.game_id,
            "ok": self.ok,
            "entries": self.entries,
            "head_hash": self.head_hash,
            "first_bad_seq": self.first_bad_seq,
            "reason": self.reason,
        }


# --- the pure part: canonical bytes and the chain ---------------------------------------------------------------


def _plain(value: Any) -> Any:
    """What json cannot write by itself inside an event: frozen mappings (read-only dicts) and bytes (base64)."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    raise TypeError(f"an event field of type {type(value).__name__} has no canonical JSON form")


# Sorted keys, no spaces, UTF-8 as is: the same bytes for the same entry on every machine and every run. These are
# the bytes of `json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`, which every ledger
# has been written with (tests/referee/test_ledger.py checks both writers against it).
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_plain)


def _may_hold_float(spec: Any) -> bool:
    """Whether an Avro type (or a JSON-text field, whose object may hold anything) can carry a float."""
    if isinstance(spec, str):
        return spec in ("float", "double")
    if isinstance(spec, list):
        return any(_may_hold_float(branch) for branch in spec)
    if isinstance(spec, Mapping):
        if spec.get(JSON_FIELD_ATTRIBUTE):
            return True
        return any(_may_hold_float(spec.get(key)) for key in ("type", "items", "values")) or any(
            _may_hold_float(field) for field in spec.get("fields", ()))
    return False


# orjson writes the same bytes as the json module six times faster (an entry is encoded once per append, the hot
# path of the referee: about an eighth of its time per input went to the json module), except for floats, which it
# writes in its own way (1e-05 as 0.00001). Types whose schema can carry a float (BoardCalibrated's homography,
# JSON-object fields such as the time control) are therefore written by the json module, as is anything orjson
# refuses (an integer beyond 64 bits).
_JSON_MODULE_TYPES: frozenset[str] = frozenset(
    t for t in EVENT_TYPES if any(_may_hold_float(field) for field in data_fields(t)))
_ORJSON_OPTIONS = orjson.OPT_SORT_KEYS


def canonical_bytes(game_id: str, seq: int, kind: str, event: Event, origin: Origin | None,
                    referee: Mapping[str, Any] | None = None) -> bytes:
    """The bytes an entry's hash covers: sorted-key, compact, UTF-8 JSON of everything the entry says.

    The event is written in its JSON form (`Event.to_json_dict`), without building that dict's deep copy first:
    the encoder reads the frozen fields directly, which gives the same bytes. `referee` (the referee's versions)
    is written only where an entry records them, so every other entry has the bytes it always had.
    """
    fields = {"type": event.type, "event_id": event.event_id, "board_id": event.board_id, "source": event.source,
              "source_seq": event.source_seq, "occurred_at": event.occurred_at, "received_at": event.received_at,
              **event.data}
    document = {"event": fields, "game_id": game_id, "kind": kind,
                "origin": origin.to_json() if origin else None, "seq": int(seq)}
    if referee is not None:
        document["referee"] = dict(referee)
    if event.type not in _JSON_MODULE_TYPES:
        try:
            return orjson.dumps(document, default=_plain, option=_ORJSON_OPTIONS)
        except orjson.JSONEncodeError:
            pass  # e.g. an integer beyond 64 bits: the json module writes it (or says what is wrong with it)
    return _CANONICAL.encode(document).encode()


def chain_hash(prev_hash: str, body: bytes) -> str:
    return hashlib.sha256(bytes.fromhex(prev_hash) + body).hexdigest()


def _entry_from_body(body: bytes, prev_hash: str, hash_: str) -> LedgerEntry:
    document = json.loads(body)
    origin = document["origin"]
    return LedgerEntry(
        game_id=document["game_id"],
        seq=document["seq"],
        kind=document["kind"],
        event=Event.from_json_dict(document["event"]),
        origin=Origin(**origin) if origin else None,
        prev_hash=prev_hash,
        hash=hash_,
        referee=document.get("referee"),
    )


@dataclass(frozen=True, slots=True)
class StoredRow:
    """One entry as a store keeps it: the columns a query uses, and the hashed body."""

    game_id: str
    seq: int
    kind: str
    event_id: str
    body: bytes
    prev_hash: str
    hash: str
    occurred_at: int | None = None  # None in a ledger written by an earlier version (no such column)


def _row_problem(row: StoredRow, expected_seq: int, prev: str) -> str | None:
    """What is wrong with one stored entry given the chain so far, or None."""
    if row.seq != expected_seq:
        return f"entry {row.seq} stands where entry {expected_seq} should: an entry is missing or moved"
    if not isinstance(row.body, bytes | bytearray) or not isinstance(row.hash, str):
        # The store writes the body as the bytes that were hashed and the hash as hex text; anything else (a body
        # rewritten as text by a hand-run UPDATE, a number where the hash was) was put there afterwards.
        return (f"entry {row.seq} is stored as {type(row.body).__name__} / {type(row.hash).__name__}, not the "
                "bytes and hex hash the ledger writes: it was altered after it was written")
    if row.prev_hash != prev:
        return f"entry {row.seq} names previous hash {str(row.prev_hash)[:12]}..., the chain has {prev[:12]}..."
    recomputed = chain_hash(prev, bytes(row.body))
    if recomputed != row.hash:
        return (f"entry {row.seq}'s content does not match its hash (stored {row.hash[:12]}..., "
                f"recomputed {recomputed[:12]}...): it was altered after it was written")
    try:
        document = json.loads(row.body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return f"entry {row.seq}'s content is not valid JSON: {exc}"
    event = document.get("event") or {}
    claimed = (document.get("game_id"), document.get("seq"), document.get("kind"), event.get("event_id"),
               event.get("occurred_at") if row.occurred_at is not None else None)
    if claimed != (row.game_id, row.seq, row.kind, row.event_id, row.occurred_at):
        return f"entry {row.seq}'s indexed columns disagree with its hashed content"
    return None


def verify_rows(game_id: str, rows: Iterable[StoredRow]) -> Verification:
    """Recompute a game's chain from stored rows (in seq order) and name the first entry that does not match."""
    prev = GENESIS_HASH
    count = 0
    for expected_seq, row in enumerate(rows, start=1):
        count = expected_seq
        problem = _row_problem(row, expected_seq, prev)
        if problem is not None:
            return Verification(game_id, False, row.seq, prev, first_bad_seq=row.seq, reason=problem)
        prev = row.hash
    return Verification(game_id, True, count, prev)


# --- the interface and the SQLite store -------------------------------------------------------------------------


class Ledger(Protocol):
    def append(self, game_id: str, board_id: str, pending: Sequence[Pending]) -> list[LedgerEntry]: ...

    def append_many(self, batches: Sequence[Batch], *, skip_known: bool = True) -> list[LedgerEntry]: ...

    def append_looked_up(self, batches: Sequence[Batch]) -> int: ...

    def find_events(self, events: Sequence[Event]) -> dict[str, tuple[str, int]]: ...

    def entries(self, game_id: str, after: int = 0, limit: int | None = None) -> list[LedgerEntry]: ...

    def games(self, board_id: str | None = None) -> list[GameInfo]: ...

    def has_event(self, game_id: str, event_id: str) -> bool: ...

    def find_event(self, event: Event) -> tuple[str, int] | None: ...

    def head(self, game_id: str) -> tuple[int, str]: ...

    def verify(self, game_id: str) -> Verification: ...

    def put_snapshot(self, game_id: str, seq: int, state: bytes) -> None: ...

    def latest_snapshot(self, game_id: str) -> tuple[int, bytes] | None: ...

    def stored_rows(self, game_id: str, after: int = 0, limit: int | None = None) -> list[StoredRow]: ...

    def board_of(self, game_id: str) -> str | None: ...

    def input_ids(self, game_id: str) -> set[str]: ...

    def close(self) -> None: ...


# Entries sit in a rowid table (appended at the end of its B-tree) with two unique keys: (game, seq), which makes a
# second writer fail instead of forking a chain, and (occurred_at, event id), which records every event once in the
# whole ledger (a replayed input is found wherever it went). A retry or a redelivery carries the event unchanged,
# its time included, so the time adds nothing to what counts as the same event; it puts the key in time order.
# Keyed by the event id alone (random UUIDs), each batch's inserts fell on pages all over that index and every
# commit rewrote most of them: over a day's ledger the commit's cost per input grew from 6 to 27 us. Keyed by time
# first, a batch's inserts fall on the index's last pages, as the entries themselves do: after 353,705 entries
# (bench/referee_throughput.py, late in the day) 11,600-12,000 -> 19,700-20,300 inputs/s per core.
# Ledgers written by earlier versions keep their layout (keyed by the event id alone: a unique event id, or a
# WITHOUT ROWID table keyed by (game, seq) with unique (game, event id) and an index on the event id): every query
# here works on all three (`_time_keyed` says which).
_SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    game_id   TEXT PRIMARY KEY,
    board_id  TEXT NOT NULL,
    created   INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS entries (
    game_id   TEXT NOT NULL REFERENCES games(game_id),
    seq       INTEGER NOT NULL,
    kind      TEXT NOT NULL CHECK (kind IN ('input', 'output')),
    event_id  TEXT NOT NULL,
    occurred_at INTEGER NOT NULL,
    body      BLOB NOT NULL,
    prev_hash TEXT NOT NULL,
    hash      TEXT NOT NULL,
    UNIQUE (game_id, seq),
    UNIQUE (occurred_at, event_id)
);
CREATE TABLE IF NOT EXISTS snapshots (
    game_id   TEXT NOT NULL REFERENCES games(game_id),
    seq       INTEGER NOT NULL,
    hash      TEXT NOT NULL,
    state     BLOB NOT NULL,
    PRIMARY KEY (game_id, seq)
);
"""


class SqliteLedger:
    """The embedded ledger: one SQLite file in WAL mode. Safe to share between threads of one process."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        # 16 KB pages for a new file (an existing one keeps its own): each batch's inserts into the event-id index
        # fall on random pages, and fewer, larger pages cut the pages rewritten per commit (about 25 % less CPU
        # per entry on a 150,000-entry ledger, measured). It only takes effect before the first table exists.
        self._db.execute("PRAGMA page_size=16384")
        self._db.execute("PRAGMA journal_mode=WAL")
        # NORMAL in WAL mode: a power cut may lose the last transactions but never corrupts the file; the
        # inputs are still in Kafka (offsets are committed only after the append), so they are read again.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        # 64 MB of page cache (SQLite's default is 2 MB): the event-id index takes inserts at random places, and
        # a day's ledger of a large venue keeps its pages in memory instead of reading them back for every batch.
        self._db.execute("PRAGMA cache_size=-65536")
        self._db.executescript(_SCHEMA)
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(entries)")}
        self._time_keyed = "occurred_at" in columns  # False: a ledger written by an earlier version
        # The heads this connection committed last, valid while no other connection has written to the file
        # (`_heads`): a batch's games are most often the same as the last batch's.
        self._own_heads: dict[str, tuple[int, str]] = {}
        self._data_version: int | None = None

    # writing ---------------------------------------------------------------------------------------------------

    def append(self, game_id: str, board_id: str, pending: Sequence[Pending]) -> list[LedgerEntry]:
        """Append entries atomically, skipping events already in the ledger (by event id, in any game).

        Returns the entries written (the skipped ones are not returned). Raises LedgerConflict when another
        writer took a sequence number first.
        """
        return self.append_many([Batch(game_id, board_id, tuple(pending))])

    def append_many(self, batches: Sequence[Batch], *, skip_known: bool = True) -> list[LedgerEntry]:
        """Append several games' entries in ONE transaction (all or nothing), in the order given.

        A referee appends a whole poll batch this way: one commit per batch instead of one per input is what
        lets a process keep up with a venue's peak (bench/referee_throughput.py). `skip_known=False` is for a
        caller that already looked its inputs up (`find_events`): an event already there then fails the ledger's
        unique event key and the whole batch is refused (LedgerConflict) instead of being skipped.
        """
        return [LedgerEntry(*fields) for fields in self._append(batches, skip_known)]

    def append_looked_up(self, batches: Sequence[Batch]) -> int:
        """`append_many(batches, skip_known=False)` for the referee's hot path, which needs only how many entries
        were written: no entry objects are built (about 0.75 us an entry, one to two entries per input)."""
        return len(self._append(batches, skip_known=False))

    def _append(self, batches: Sequence[Batch], skip_known: bool) -> list[tuple[Any, ...]]:
        """Append in one transaction; the fields of each entry written, in LedgerEntry's order."""
        for batch in batches:
            for item in batch.pending:
                if item.kind not in KINDS:
                    raise MalformedEntry(f"entry kind must be one of {KINDS}, not {item.kind!r}")
        with self._lock:
            db = self._db
            try:
                db.execute("BEGIN IMMEDIATE")
                # The heads are read inside the write transaction (once per game of the batch), so no other writer
                # can move them before the commit.
                heads = self._heads({batch.game_id for batch in batches})
                new_games = [(b.game_id, b.board_id) for b in batches if b.game_id not in heads]
                if new_games:
                    db.executemany(
                        "INSERT OR IGNORE INTO games (game_id, board_id, created) "
                        "VALUES (?, ?, (SELECT COUNT(*) FROM games))",
                        list(dict.fromkeys(new_games)),
                    )
                written: list[tuple[Any, ...]] = []
                rows: list[tuple[Any, ...]] = []
                for batch in batches:
                    game_id = batch.game_id
                    seq, prev = heads.get(game_id, (0, GENESIS_HASH))
                    for item in batch.pending:
                        event = item.event
                        if skip_known and self._find((event,)):
                            continue  # a replayed input after a crash or a rebalance: already in the ledger
                        seq += 1
                        body = canonical_bytes(game_id, seq, item.kind, event, item.origin, item.referee)
                        digest = chain_hash(prev, body)
                        rows.append((game_id, seq, item.kind, event.event_id, body, prev, digest, event.occurred_at))
                        written.append((game_id, seq, item.kind, event, item.origin, prev, digest, item.referee))
                        prev = digest
                    heads[game_id] = (seq, prev)
                    if skip_known:  # later items of this batch must see these rows
                        self._insert(rows)
                        rows.clear()
                self._insert(rows)
                db.execute("COMMIT")
                self._own_heads.update(heads)
                return written
            except sqlite3.IntegrityError as exc:
                self._own_heads.clear()
                db.execute("ROLLBACK")
                raise LedgerConflict(f"another writer appended first ({exc})") from exc
            except BaseException:
                self._own_heads.clear()
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise

    def put_snapshot(self, game_id: str, seq: int, state: bytes) -> None:
        """Keep a serialised state after entry `seq` in place of the game's older ones; it only speeds up loading
        (the entries stay the truth)."""
        with self._lock:
            row = self._db.execute(
                "SELECT hash FROM entries WHERE game_id = ? AND seq = ?", (game_id, seq)
            ).fetchone()
            if row is None:
                raise MalformedEntry(f"game {game_id} has no entry {seq} to snapshot after")
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute("DELETE FROM snapshots WHERE game_id = ? AND seq < ?", (game_id, seq))
                self._db.execute(
                    "INSERT OR REPLACE INTO snapshots (game_id, seq, hash, state) VALUES (?, ?, ?, ?)",
                    (game_id, seq, row[0], state),
                )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    # reading ---------------------------------------------------------------------------------------------------

    def entries(self, game_id: str, after: int = 0, limit: int | None = None) -> list[LedgerEntry]:
        return [_entry_from_body(r.body, r.prev_hash, r.hash) for r in self._rows(game_id, after, limit)]

    def games(self, board_id: str | None = None) -> list[GameInfo]:
        query = (
            "SELECT g.game_id, g.board_id, COUNT(e.seq), "
            "COALESCE((SELECT hash FROM entries x WHERE x.game_id = g.game_id ORDER BY seq DESC LIMIT 1), ?) "
            "FROM games g LEFT JOIN entries e ON e.game_id = g.game_id "
        )
        args: list[Any] = [GENESIS_HASH]
        if board_id is not None:
            query += "WHERE g.board_id = ? "
            args.append(board_id)
        query += "GROUP BY g.game_id ORDER BY g.created"
        with self._lock:
            return [GameInfo(*row) for row in self._db.execute(query, args)]

    def has_event(self, game_id: str, event_id: str) -> bool:
        with self._lock:
            return self._has_event(game_id, event_id)

    def find_event(self, event: Event) -> tuple[str, int] | None:
        """(game, seq) of the entry holding this event, in any game: a replayed input is found wherever it went."""
        return self.find_events([event]).get(event.event_id)

    def find_events(self, events: Sequence[Event]) -> dict[str, tuple[str, int]]:
        """For each of these events already in the ledger, (game, seq) of its entry, by event id."""
        with self._lock:
            return self._find(events)

    def head(self, game_id: str) -> tuple[int, str]:
        with self._lock:
            return self._head(game_id)

    def verify(self, game_id: str) -> Verification:
        with self._lock:
            known = self._db.execute("SELECT 1 FROM games WHERE game_id = ?", (game_id,)).fetchone()
        if known is None:
            raise UnknownGame(f"no game {game_id!r} in the ledger {self.path}")
        return verify_rows(game_id, self._iter_rows(game_id))

    def stored_rows(self, game_id: str, after: int = 0, limit: int | None = None) -> list[StoredRow]:
        """The entries as stored, hashed bytes included: the leaves of the game's Merkle tree (merkle.py)."""
        return self._rows(game_id, after, limit)

    def board_of(self, game_id: str) -> str | None:
        """The board the games table gives for a game (None: no such game); signed tree heads bind it."""
        with self._lock:
            row = self._db.execute("SELECT board_id FROM games WHERE game_id = ?", (game_id,)).fetchone()
        return row[0] if row else None

    def latest_snapshot(self, game_id: str) -> tuple[int, bytes] | None:
        """The newest snapshot whose entry still has the hash it had when the snapshot was taken."""
        with self._lock:
            row = self._db.execute(
                "SELECT s.seq, s.state FROM snapshots s JOIN entries e ON e.game_id = s.game_id AND e.seq = s.seq "
                "WHERE s.game_id = ? AND e.hash = s.hash ORDER BY s.seq DESC LIMIT 1",
                (game_id,),
            ).fetchone()
        return (row[0], row[1]) if row else None

    def input_ids(self, game_id: str) -> set[str]:
        """The event ids of a game's inputs, without reading the entries themselves."""
        with self._lock:
            return {row[0] for row in self._db.execute(
                "SELECT event_id FROM entries WHERE game_id = ? AND kind = 'input'", (game_id,))}

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> SqliteLedger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # internals -------------------------------------------------------------------------------------------------

    def _insert(self, rows: Sequence[tuple[Any, ...]]) -> None:
        """Insert rows of (game_id, seq, kind, event_id, body, prev_hash, hash, occurred_at)."""
        if self._time_keyed:
            self._db.executemany(
                "INSERT INTO entries (game_id, seq, kind, event_id, body, prev_hash, hash, occurred_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
        else:
            self._db.executemany(
                "INSERT INTO entries (game_id, seq, kind, event_id, body, prev_hash, hash) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)", [row[:7] for row in rows])

    def _head(self, game_id: str) -> tuple[int, str]:
        row = self._db.execute(
            "SELECT seq, hash FROM entries WHERE game_id = ? ORDER BY seq DESC LIMIT 1", (game_id,)
        ).fetchone()
        return (row[0], row[1]) if row else (0, GENESIS_HASH)

    def _heads(self, game_ids: Iterable[str]) -> dict[str, tuple[int, str]]:
        """(last seq, its hash) of each of these games that has entries. Called inside the write transaction."""
        # SQLite's data_version changes when another connection has committed to the file since this one last
        # asked; until then the heads this connection committed are still the heads (nobody else can write while
        # the transaction holds the write lock). Otherwise one indexed look-up per game (a few microseconds each;
        # one grouped query over all the games reads every entry of each game and is far slower on long games).
        version = self._db.execute("PRAGMA data_version").fetchone()[0]
        if version != self._data_version:
            self._own_heads.clear()
            self._data_version = version
        own = self._own_heads
        heads: dict[str, tuple[int, str]] = {}
        for game_id in game_ids:
            head = own.get(game_id)
            if head is None:
                head = self._head(game_id)
            if head[0]:
                heads[game_id] = head
        return heads

    def _has_event(self, game_id: str, event_id: str) -> bool:
        """Whether this event is in the game's ledger."""
        query = "SELECT 1 FROM entries WHERE game_id = ? AND event_id = ?"
        return self._db.execute(query, (game_id, event_id)).fetchone() is not None

    def _find(self, events: Iterable[Event]) -> dict[str, tuple[str, int]]:
        """(game, seq) of each of these events already in the ledger, by the ledger's event key."""
        found: dict[str, tuple[str, int]] = {}
        if self._time_keyed:
            keys = list(dict.fromkeys((event.occurred_at, event.event_id) for event in events))
            for start in range(0, len(keys), 250):  # two bound parameters a key, under SQLite's limit of 999
                chunk = keys[start : start + 250]
                # The keys drive the join (CROSS JOIN keeps that order), each one a look-up in the unique index.
                query = (f"WITH k(occurred_at, event_id) AS (VALUES {','.join(['(?, ?)'] * len(chunk))}) "
                         "SELECT e.event_id, e.game_id, e.seq FROM k CROSS JOIN entries e "
                         "ON e.occurred_at = k.occurred_at AND e.event_id = k.event_id")
                for event_id, game_id, seq in self._db.execute(query, [v for key in chunk for v in key]):
                    found.setdefault(event_id, (game_id, seq))
            return found
        ids = list(dict.fromkeys(event.event_id for event in events))
        for start in range(0, len(ids), 500):  # SQLite's limit on bound parameters
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for event_id, game_id, seq in self._db.execute(
                f"SELECT event_id, game_id, seq FROM entries WHERE event_id IN ({marks})", chunk
            ):
                found.setdefault(event_id, (game_id, seq))
        return found

    def _rows(self, game_id: str, after: int, limit: int | None) -> list[StoredRow]:
        occurred_at = "occurred_at" if self._time_keyed else "NULL"
        query = (
            f"SELECT game_id, seq, kind, event_id, body, prev_hash, hash, {occurred_at} "
            "FROM entries WHERE game_id = ? AND seq > ? ORDER BY seq"
        )
        args: list[Any] = [game_id, after]
        if limit is not None:
            query += " LIMIT ?"
            args.append(limit)
        with self._lock:
            return [StoredRow(*row) for row in self._db.execute(query, args)]

    def _iter_rows(self, game_id: str, page: int = 5000) -> Iterator[StoredRow]:
        after = 0
        while True:
            rows = self._rows(game_id, after, page)
            yield from rows
            if len(rows) < page:
                return
            after = rows[-1].seq


class UnknownGame(LedgerError):
    """The ledger has no entries for that game."""


def open_ledger(target: str | Path) -> SqliteLedger | PostgresLedger:
    """The store a `--db` value names: a postgresql:// URL (ledger_pg.py), else a SQLite file."""
    from xqarb.referee.ledger_pg import PostgresLedger, is_url

    return PostgresLedger(str(target)) if is_url(target) else SqliteLedger(target)


# --- `xqarb verify` ------------------------------------------------------------------------------------------------

def cmd_verify(args: argparse.Namespace) -> int:
    """`xqarb verify --game ID [--db PATH] [--json]`: recompute a game's chain; exit 1 if it does not verify."""
    from xqarb.referee.ledger_pg import is_url

    target = ledger_target(getattr(args, "db", None))
    if not is_url(target) and not Path(target).exists():
        print(f"xqarb verify: no ledger at {target} (give --db PATH)", file=sys.stderr)
        return 2
    try:
        ledger = open_ledger(target)
    except LedgerError as exc:
        print(f"xqarb verify: {exc}", file=sys.stderr)
        return 2
    with ledger:
        try:
            result = ledger.verify(args.game)
        except UnknownGame as exc:
            print(f"xqarb verify: {exc}", file=sys.stderr)
            return 2
        versions = _versions_of(ledger.entries(args.game)) if result.ok else None
    if getattr(args, "json", False):
        print(json.dumps({**result.to_json(), **({"versions": versions} if versions else {})}, ensure_ascii=False))
    elif result.ok:
        print(f"game {result.game_id}: {result.entries} entries verify; head {result.head_hash}")
        if versions and versions["installed_differs"]:
            print(f"game {result.game_id}: the installed fold differs from the one that wrote it: "
                  f"{versions['installed_differs']}; `xqarb replay-ledger --game {result.game_id}` lists every "
                  "output it would change")
    else:
        print(f"game {result.game_id}: FAILS at entry {result.first_bad_seq}: {result.reason}")
    return 0 if result.ok else 1


def _versions_of(entries: Sequence[LedgerEntry]) -> dict[str, Any]:
    """The referee versions a game's ledger records (version.py), the installed ones, and whether they differ."""
    from xqarb.referee.version import differs, installed_for, recorded_in

    recorded = recorded_in(entries)
    now = installed_for(entries)
    return {
        "recorded": [{"seq": seq, **v.to_json()} for seq, v in recorded],
        "installed": now.to_json(),
        "installed_differs": differs(recorded[-1][1] if recorded else None, now),
    }
