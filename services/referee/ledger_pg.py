"""The ledger in PostgreSQL: one store shared by referee processes on several machines (`--db postgresql://...`).

The same interface and guarantees as the SQLite store (ledger.py): entries keyed by (game, seq), so a second writer
fails instead of forking a chain; every event recorded once in the whole ledger by its (occurred_at, event id) key;
the body column (bytea) holds exactly the bytes that were hashed, so verification recomputes the chain from what is
stored. Canonical bytes, the chain and verification are ledger.py's pure functions: a game's entries hash alike in
both stores.

Writers serialise per game: a transaction locks the rows of its games (in game order, so two writers never wait on
each other in a cycle) before it reads their heads. Referees own disjoint partitions, so they rarely wait at all;
an arbiter's tool or a referee taking a board over queues behind the owner and continues its chain. A writer that
bypassed the lock would still be refused by the (game, seq) key.

psycopg is the optional extra `xqarb[postgres]` (in `[dev]`): a venue on one machine needs none of it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from xqarb.events import Event
from xqarb.referee.ledger import (
    GENESIS_HASH,
    KINDS,
    Batch,
    GameInfo,
    LedgerConflict,
    LedgerEntry,
    LedgerError,
    MalformedEntry,
    Pending,
    StoredRow,
    UnknownGame,
    Verification,
    _entry_from_body,
    canonical_bytes,
    chain_hash,
    verify_rows,
)

URL_SCHEMES: tuple[str, ...] = ("postgresql://", "postgres://")

# Any constant taken by every process that creates the tables: two referees starting together on an empty
# database would otherwise race in CREATE TABLE IF NOT EXISTS (PostgreSQL then fails one with a duplicate type).
_SCHEMA_LOCK_KEY = 0x78716172_62  # "xqarb"

# The layout of the SQLite store's current version, in PostgreSQL's types: seq and times are 64-bit (µs since the
# epoch), the body the hashed bytes, `created` an identity that orders games as they were first written.
_SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    game_id   TEXT PRIMARY KEY,
    board_id  TEXT NOT NULL,
    created   BIGINT GENERATED ALWAYS AS IDENTITY
);
CREATE TABLE IF NOT EXISTS entries (
    game_id     TEXT NOT NULL REFERENCES games(game_id),
    seq         BIGINT NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('input', 'output')),
    event_id    TEXT NOT NULL,
    occurred_at BIGINT NOT NULL,
    body        BYTEA NOT NULL,
    prev_hash   TEXT NOT NULL,
    hash        TEXT NOT NULL,
    PRIMARY KEY (game_id, seq),
    UNIQUE (occurred_at, event_id)
);
CREATE TABLE IF NOT EXISTS snapshots (
    game_id   TEXT NOT NULL REFERENCES games(game_id),
    seq       BIGINT NOT NULL,
    hash      TEXT NOT NULL,
    state     BYTEA NOT NULL,
    PRIMARY KEY (game_id, seq)
);
"""

_HEADS = ("SELECT g, h.seq, h.hash FROM unnest(%s::text[]) AS g "
          "CROSS JOIN LATERAL (SELECT seq, hash FROM entries WHERE game_id = g ORDER BY seq DESC LIMIT 1) h")
_FIND = ("SELECT e.event_id, e.game_id, e.seq FROM unnest(%s::bigint[], %s::text[]) AS k(occurred_at, event_id) "
         "JOIN entries e ON e.occurred_at = k.occurred_at AND e.event_id = k.event_id")
_FIND_KEYS = ("SELECT e.occurred_at, e.event_id FROM unnest(%s::bigint[], %s::text[]) AS k(occurred_at, event_id) "
              "JOIN entries e ON e.occurred_at = k.occurred_at AND e.event_id = k.event_id")
_NEW_GAMES = ("INSERT INTO games (game_id, board_id) SELECT * FROM unnest(%s::text[], %s::text[]) "
              "ON CONFLICT DO NOTHING")
# One statement for a whole batch, its columns as arrays.
_INSERT = ("INSERT INTO entries (game_id, seq, kind, event_id, body, prev_hash, hash, occurred_at) "
           "SELECT * FROM unnest(%s::text[], %s::bigint[], %s::text[], %s::text[], %s::bytea[], %s::text[], "
           "%s::text[], %s::bigint[])")


class PostgresUnavailable(LedgerError):
    """The PostgreSQL ledger cannot be used now: the driver is not installed, or the server does not answer (the
    next call connects again, so a server that restarts is taken up again without restarting the referee)."""


def is_url(target: object) -> bool:
    """Whether a `--db` value names a PostgreSQL server rather than a SQLite file."""
    return isinstance(target, str) and target.startswith(URL_SCHEMES)


def redact(url: str) -> str:
    """The URL without its password, for logs and error messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


class PostgresLedger:
    """The shared ledger: one connection to PostgreSQL. Safe to share between threads of one process."""

    def __init__(self, url: str) -> None:
        try:
            import psycopg
        except ImportError as exc:
            raise PostgresUnavailable(
                "a postgresql:// ledger needs psycopg: pip install 'xqarb[postgres]'") from exc
        self._psycopg = psycopg
        self._url = url
        self.path = redact(url)  # what messages show (the SQLite store's attribute of the same use)
        self._lock = threading.RLock()
        self._db = self._connect()
        with self._lock, self._failures(), self._db.transaction():
            self._db.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK_KEY,))
            self._db.execute(_SCHEMA)

    # writing ---------------------------------------------------------------------------------------------------

    def append(self, game_id: str, board_id: str, pending: Sequence[Pending]) -> list[LedgerEntry]:
        """Append entries atomically, skipping events already in the ledger; LedgerConflict if a writer forked."""
        return self.append_many([Batch(game_id, board_id, tuple(pending))])

    def append_many(self, batches: Sequence[Batch], *, skip_known: bool = True) -> list[LedgerEntry]:
        """Append several games' entries in ONE transaction (all or nothing), in the order given (ledger.py)."""
        return [LedgerEntry(*fields) for fields in self._append(batches, skip_known)]

    def append_looked_up(self, batches: Sequence[Batch]) -> int:
        """`append_many(batches, skip_known=False)`, counting the entries written."""
        return len(self._append(batches, skip_known=False))

    def _append(self, batches: Sequence[Batch], skip_known: bool) -> list[tuple[Any, ...]]:
        for batch in batches:
            for item in batch.pending:
                if item.kind not in KINDS:
                    raise MalformedEntry(f"entry kind must be one of {KINDS}, not {item.kind!r}")
        errors = self._psycopg.errors
        with self._lock, self._failures():
            try:
                # Five statements, each one round trip (psycopg's pipeline mode measured slower here); the heads
                # are read (a new snapshot) only once the games' rows are locked.
                with self._conn().transaction(), self._db.cursor() as cur:
                    games = sorted({(b.game_id, b.board_id) for b in batches})
                    cur.execute(_NEW_GAMES, ([g for g, _ in games], [b for _, b in games]))
                    ids = sorted({b.game_id for b in batches})
                    # The games' rows locked, in game order, before their heads are read: no other writer moves them
                    # before this commit, and two writers never wait on each other in a cycle.
                    cur.execute("SELECT 1 FROM games WHERE game_id = ANY(%s) ORDER BY game_id FOR UPDATE", (ids,))
                    heads = self._heads(cur, ids)
                    known = None
                    if skip_known:  # one look-up for the whole call; later batches also skip what earlier ones wrote
                        cur.execute(_FIND_KEYS, _key_arrays(item.event for batch in batches for item in batch.pending))
                        known = set(cur.fetchall())
                    rows, written = _chain(batches, heads, known)
                    if rows:
                        cur.execute(_INSERT, [list(column) for column in zip(*rows, strict=True)])
                return written
            except (errors.UniqueViolation, errors.DeadlockDetected) as exc:
                raise LedgerConflict(f"another writer appended first ({exc})") from exc

    def put_snapshot(self, game_id: str, seq: int, state: bytes) -> None:
        """Keep a serialised state after entry `seq` in place of the game's older ones; it only speeds up loading
        (the entries stay the truth)."""
        with self._lock, self._failures(), self._conn().transaction():
            row = self._db.execute("SELECT hash FROM entries WHERE game_id = %s AND seq = %s",
                                   (game_id, seq)).fetchone()
            if row is None:
                raise MalformedEntry(f"game {game_id} has no entry {seq} to snapshot after")
            self._db.execute("DELETE FROM snapshots WHERE game_id = %s AND seq < %s", (game_id, seq))
            self._db.execute(
                "INSERT INTO snapshots (game_id, seq, hash, state) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (game_id, seq) DO UPDATE SET hash = EXCLUDED.hash, state = EXCLUDED.state",
                (game_id, seq, row[0], state))

    # reading ---------------------------------------------------------------------------------------------------

    def entries(self, game_id: str, after: int = 0, limit: int | None = None) -> list[LedgerEntry]:
        return [_entry_from_body(r.body, r.prev_hash, r.hash) for r in self._rows(game_id, after, limit)]

    def games(self, board_id: str | None = None) -> list[GameInfo]:
        query = ("SELECT g.game_id, g.board_id, (SELECT COUNT(*) FROM entries e WHERE e.game_id = g.game_id), "
                 "COALESCE((SELECT hash FROM entries x WHERE x.game_id = g.game_id ORDER BY seq DESC LIMIT 1), %s) "
                 "FROM games g ")
        args: list[Any] = [GENESIS_HASH]
        if board_id is not None:
            query += "WHERE g.board_id = %s "
            args.append(board_id)
        query += "ORDER BY g.created"
        return [GameInfo(*row) for row in self._query(query, args)]

    def has_event(self, game_id: str, event_id: str) -> bool:
        return bool(self._query("SELECT 1 FROM entries WHERE game_id = %s AND event_id = %s LIMIT 1",
                                (game_id, event_id)))

    def find_event(self, event: Event) -> tuple[str, int] | None:
        """(game, seq) of the entry holding this event, in any game: a replayed input is found wherever it went."""
        return self.find_events([event]).get(event.event_id)

    def find_events(self, events: Sequence[Event]) -> dict[str, tuple[str, int]]:
        """For each of these events already in the ledger, (game, seq) of its entry, by event id."""
        found: dict[str, tuple[str, int]] = {}
        for event_id, game_id, seq in self._query(_FIND, _key_arrays(events)):
            found.setdefault(event_id, (game_id, seq))
        return found

    def head(self, game_id: str) -> tuple[int, str]:
        rows = self._query("SELECT seq, hash FROM entries WHERE game_id = %s ORDER BY seq DESC LIMIT 1", (game_id,))
        return (rows[0][0], rows[0][1]) if rows else (0, GENESIS_HASH)

    def verify(self, game_id: str) -> Verification:
        if self.board_of(game_id) is None:
            raise UnknownGame(f"no game {game_id!r} in the ledger {self.path}")
        return verify_rows(game_id, self._iter_rows(game_id))

    def stored_rows(self, game_id: str, after: int = 0, limit: int | None = None) -> list[StoredRow]:
        """The entries as stored, hashed bytes included: the leaves of the game's Merkle tree (merkle.py)."""
        return self._rows(game_id, after, limit)

    def board_of(self, game_id: str) -> str | None:
        """The board the games table gives for a game (None: no such game); signed tree heads bind it."""
        rows = self._query("SELECT board_id FROM games WHERE game_id = %s", (game_id,))
        return rows[0][0] if rows else None

    def input_ids(self, game_id: str) -> set[str]:
        """The event ids of a game's inputs, without reading the entries themselves."""
        return {row[0] for row in self._query(
            "SELECT event_id FROM entries WHERE game_id = %s AND kind = 'input'", (game_id,))}

    def latest_snapshot(self, game_id: str) -> tuple[int, bytes] | None:
        """The newest snapshot whose entry still has the hash it had when the snapshot was taken."""
        rows = self._query(
            "SELECT s.seq, s.state FROM snapshots s JOIN entries e ON e.game_id = s.game_id AND e.seq = s.seq "
            "WHERE s.game_id = %s AND e.hash = s.hash ORDER BY s.seq DESC LIMIT 1", (game_id,))
        return (rows[0][0], bytes(rows[0][1])) if rows else None

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> PostgresLedger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # internals -------------------------------------------------------------------------------------------------

    def _connect(self) -> Any:
        try:
            return self._psycopg.connect(self._url, autocommit=True)
        except self._psycopg.OperationalError as exc:
            raise PostgresUnavailable(f"cannot reach the ledger at {self.path}: {exc}") from exc

    def _conn(self) -> Any:
        """The connection, made again if the last one broke (a server restart, a network cut)."""
        if self._db.broken:
            self._db = self._connect()
        return self._db

    @contextmanager
    def _failures(self) -> Iterator[None]:
        """A server that stopped answering is a PostgresUnavailable, like a server that never did."""
        try:
            yield
        except self._psycopg.OperationalError as exc:
            if isinstance(exc, self._psycopg.errors.DeadlockDetected):
                raise
            raise PostgresUnavailable(f"the ledger at {self.path} did not answer: {exc}") from exc

    def _query(self, query: str, args: Sequence[Any]) -> list[tuple[Any, ...]]:
        with self._lock, self._failures():
            return self._conn().execute(query, args).fetchall()

    def _heads(self, cur: Any, game_ids: list[str]) -> dict[str, tuple[int, str]]:
        """(last seq, its hash) of each of these games that has entries: one index look-up per game."""
        cur.execute(_HEADS, (game_ids,))
        return {game: (seq, digest) for game, seq, digest in cur.fetchall()}

    def _rows(self, game_id: str, after: int, limit: int | None) -> list[StoredRow]:
        query = ("SELECT game_id, seq, kind, event_id, body, prev_hash, hash, occurred_at "
                 "FROM entries WHERE game_id = %s AND seq > %s ORDER BY seq")
        args: list[Any] = [game_id, after]
        if limit is not None:
            query += " LIMIT %s"
            args.append(limit)
        return [StoredRow(*row) for row in self._query(query, args)]

    def _iter_rows(self, game_id: str, page: int = 5000) -> Iterator[StoredRow]:
        after = 0
        while True:
            rows = self._rows(game_id, after, page)
            yield from rows
            if len(rows) < page:
                return
            after = rows[-1].seq


def _key_arrays(events: Iterable[Event]) -> tuple[list[int], list[str]]:
    """The ledger's event keys as two parallel arrays (one round trip for any number of events)."""
    keys = list(dict.fromkeys((event.occurred_at, event.event_id) for event in events))
    return [k[0] for k in keys], [k[1] for k in keys]


def _chain(batches: Sequence[Batch], heads: dict[str, tuple[int, str]],
           known: set[tuple[int, str]] | None) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The rows to insert and the entries they are, continuing each game's chain from its head.

    `known`: the event keys to skip (already in the ledger), grown after each batch with what it wrote, as the
    SQLite store sees a batch's rows from the next one (an event twice in one batch fails the unique key there as
    here); None writes every item (a caller that looked its inputs up: an event already there then fails the unique
    key, whole call refused).
    """
    rows: list[tuple[Any, ...]] = []
    written: list[tuple[Any, ...]] = []
    for batch in batches:
        game_id = batch.game_id
        seq, prev = heads.get(game_id, (0, GENESIS_HASH))
        chained = len(rows)
        for item in batch.pending:
            event = item.event
            if known is not None and (event.occurred_at, event.event_id) in known:
                continue  # a replayed input after a crash or a rebalance: already in the ledger
            seq += 1
            body = canonical_bytes(game_id, seq, item.kind, event, item.origin, item.referee)
            digest = chain_hash(prev, body)
            rows.append((game_id, seq, item.kind, event.event_id, body, prev, digest, event.occurred_at))
            written.append((game_id, seq, item.kind, event, item.origin, prev, digest, item.referee))
            prev = digest
        heads[game_id] = (seq, prev)
        if known is not None:
            known.update((row[7], row[3]) for row in rows[chained:])
    return rows, written
