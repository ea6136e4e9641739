"""Evidence frames: JPEG bytes kept by their SHA-256 (content address), so an arbiter can look at them later.

`EvidenceStore` is the interface the tracker's adapter, the referee's API and the retention sweep
(`retention.py`) use: `put(jpeg) -> sha256`, `get(sha256) -> bytes | None`, and for the sweep `frames()` (what is
held: size, when stored, whether thinned), `thin(sha256, smaller)` (the frame replaced by a smaller rendering of
itself, still found under its name) and `drop(sha256)`. Three stores:

- `MemoryEvidenceStore`: a bounded number of frames in memory (tests, the pure core's callers);
- `DirectoryEvidenceStore`: files `<root>/<first 2 hex>/<sha256>.jpg`, a thinned one `<sha256>.thin.jpg` (the
  service on one machine);
- `PostgresEvidenceStore`: a table of the PostgreSQL the shared ledger uses (ledger_pg.py), reached by every
  machine of a venue beyond one (`open_evidence_store("postgresql://...")`).

Putting the same frame twice stores it once; putting a thinned frame's full bytes again makes it full again (a
replayed frame is the better copy). The name always stays the SHA-256 of the frame as captured: a thinned frame
is a lesser picture of that same frame, never another frame's.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

_SHA = re.compile(r"^[0-9a-f]{64}$")
THIN_SUFFIX = ".thin.jpg"  # a thinned frame's file: the name of the frame it renders, smaller
URL_SCHEMES: tuple[str, ...] = ("postgresql://", "postgres://")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def check_sha(sha256: str) -> str:
    if not isinstance(sha256, str) or not _SHA.match(sha256):
        raise ValueError(f"{sha256!r} is not a lower-case hex SHA-256")
    return sha256


class EvidenceUnavailable(RuntimeError):
    """The evidence store cannot be reached (a PostgreSQL server down, psycopg missing)."""


@dataclass(frozen=True, slots=True)
class FrameInfo:
    """One frame held: its name, the bytes held now, when it was first stored (µs since the epoch), thinned."""

    sha256: str
    size: int
    stored_at_us: int
    thinned: bool


class EvidenceStore(Protocol):
    def put(self, jpeg: bytes) -> str: ...

    def get(self, sha256: str) -> bytes | None: ...

    def info(self, sha256: str) -> FrameInfo | None: ...

    def frames(self) -> Iterator[FrameInfo]: ...

    def thin(self, sha256: str, smaller: bytes) -> bool: ...

    def drop(self, sha256: str) -> bool: ...


def _now_us() -> int:
    return time.time_ns() // 1000


class MemoryEvidenceStore:
    """In-memory store, oldest frames forgotten first beyond `capacity`."""

    def __init__(self, capacity: int = 1000, *, clock_us: Callable[[], int] = _now_us) -> None:
        self.capacity = capacity
        self._clock_us = clock_us
        self._frames: OrderedDict[str, tuple[bytes, int, bool]] = OrderedDict()  # sha -> (bytes, stored, thinned)

    def put(self, jpeg: bytes) -> str:
        key = sha256_hex(jpeg)
        held = self._frames.get(key)
        self._frames[key] = (jpeg, held[1] if held else self._clock_us(), False)
        self._frames.move_to_end(key)
        while len(self._frames) > self.capacity:
            self._frames.popitem(last=False)
        return key

    def get(self, sha256: str) -> bytes | None:
        held = self._frames.get(sha256)
        return held[0] if held else None

    def info(self, sha256: str) -> FrameInfo | None:
        held = self._frames.get(sha256)
        return FrameInfo(sha256, len(held[0]), held[1], held[2]) if held else None

    def frames(self) -> Iterator[FrameInfo]:
        for sha, (data, stored, thinned) in list(self._frames.items()):
            yield FrameInfo(sha, len(data), stored, thinned)

    def thin(self, sha256: str, smaller: bytes) -> bool:
        held = self._frames.get(sha256)
        if held is None or held[2]:
            return False
        self._frames[sha256] = (smaller, held[1], True)
        return True

    def drop(self, sha256: str) -> bool:
        return self._frames.pop(sha256, None) is not None

    def __contains__(self, sha256: str) -> bool:
        return sha256 in self._frames

    def __len__(self) -> int:
        return len(self._frames)


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class DirectoryEvidenceStore:
    """Frames as files under `root`, written atomically (temp file + rename). A frame's first storing time is its
    file's modification time, kept when it is thinned."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    def path_of(self, sha256: str) -> Path:
        check_sha(sha256)
        return self.root / sha256[:2] / f"{sha256}.jpg"

    def thin_path_of(self, sha256: str) -> Path:
        check_sha(sha256)
        return self.root / sha256[:2] / f"{sha256}{THIN_SUFFIX}"

    def put(self, jpeg: bytes) -> str:
        key = sha256_hex(jpeg)
        path = self.path_of(key)
        if path.exists():
            return key
        thin = self.thin_path_of(key)
        stat = thin.stat() if thin.exists() else None
        _write_atomic(path, jpeg)
        if stat is not None:  # full again: it keeps its first storing time
            os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
            thin.unlink(missing_ok=True)
        return key

    def get(self, sha256: str) -> bytes | None:
        for path in (self.path_of(sha256), self.thin_path_of(sha256)):
            try:
                return path.read_bytes()
            except FileNotFoundError:
                continue
        return None

    def info(self, sha256: str) -> FrameInfo | None:
        for path, thinned in ((self.path_of(sha256), False), (self.thin_path_of(sha256), True)):
            try:
                st = path.stat()
            except FileNotFoundError:
                continue
            return FrameInfo(sha256, st.st_size, st.st_mtime_ns // 1000, thinned)
        return None

    def frames(self) -> Iterator[FrameInfo]:
        for sub in sorted(self.root.iterdir()):
            if not sub.is_dir() or len(sub.name) != 2:
                continue
            with os.scandir(sub) as entries:
                for entry in entries:
                    thinned = entry.name.endswith(THIN_SUFFIX)
                    sha = entry.name[: -len(THIN_SUFFIX)] if thinned else entry.name.removesuffix(".jpg")
                    if not _SHA.match(sha) or not (thinned or entry.name.endswith(".jpg")):
                        continue  # a temporary file being written, or something not ours
                    if thinned and (sub / f"{sha}.jpg").exists():
                        continue  # (a put made it full again between the two steps of a thinning)
                    try:
                        st = entry.stat()
                    except FileNotFoundError:
                        continue  # thinned or dropped meanwhile
                    yield FrameInfo(sha, st.st_size, st.st_mtime_ns // 1000, thinned)

    def thin(self, sha256: str, smaller: bytes) -> bool:
        """The full frame replaced by `smaller`; False (nothing done) where no full frame is held."""
        path = self.path_of(sha256)
        try:
            st = path.stat()
        except FileNotFoundError:
            return False
        thin = self.thin_path_of(sha256)
        _write_atomic(thin, smaller)
        os.utime(thin, ns=(st.st_atime_ns, st.st_mtime_ns))
        path.unlink(missing_ok=True)
        return True

    def drop(self, sha256: str) -> bool:
        gone = False
        for path in (self.path_of(sha256), self.thin_path_of(sha256)):
            try:
                path.unlink()
                gone = True
            except FileNotFoundError:
                pass
        return gone


# Any constant taken by every process that creates the table (as ledger_pg.py does for its own): two processes
# starting together on an empty database would otherwise race in CREATE TABLE IF NOT EXISTS.
_SCHEMA_LOCK_KEY = 0x78716172_65  # "xqare"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS evidence_frames (
    sha256     TEXT PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    jpeg       BYTEA NOT NULL,
    stored_at  BIGINT NOT NULL,
    thinned    BOOLEAN NOT NULL DEFAULT FALSE
);
"""


class PostgresEvidenceStore:
    """Frames in a PostgreSQL table (bytea; frames are tens of kB, well inside what bytea is for), on one
    connection safe to share between threads; a broken connection is made again on the next call."""

    def __init__(self, url: str, *, clock_us: Callable[[], int] = _now_us) -> None:
        try:
            import psycopg
        except ImportError as exc:
            raise EvidenceUnavailable("a postgresql:// evidence store needs psycopg: pip install 'xqarb[postgres]'") \
                from exc
        self._psycopg = psycopg
        self._url = url
        self._clock_us = clock_us
        self._lock = threading.RLock()
        self._db: Any = None
        with self._lock:
            db = self._conn()
            with db.transaction():
                db.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK_KEY,))
                db.execute(_SCHEMA)

    def _conn(self) -> Any:
        if self._db is None or self._db.broken:
            try:
                self._db = self._psycopg.connect(self._url, autocommit=True)
            except self._psycopg.OperationalError as exc:
                raise EvidenceUnavailable(f"cannot reach the evidence store: {exc}") from exc
        return self._db

    def _run(self, query: str, args: tuple[Any, ...] = ()) -> Any:
        with self._lock:
            try:
                return self._conn().execute(query, args)
            except self._psycopg.OperationalError as exc:
                raise EvidenceUnavailable(f"the evidence store did not answer: {exc}") from exc

    def put(self, jpeg: bytes) -> str:
        key = sha256_hex(jpeg)
        # a frame held thinned is made full again; one held full is left as it is
        self._run("INSERT INTO evidence_frames (sha256, jpeg, stored_at) VALUES (%s, %s, %s) "
                  "ON CONFLICT (sha256) DO UPDATE SET jpeg = EXCLUDED.jpeg, thinned = FALSE "
                  "WHERE evidence_frames.thinned", (key, jpeg, self._clock_us()))
        return key

    def get(self, sha256: str) -> bytes | None:
        check_sha(sha256)
        row = self._run("SELECT jpeg FROM evidence_frames WHERE sha256 = %s", (sha256,)).fetchone()
        return bytes(row[0]) if row else None

    def info(self, sha256: str) -> FrameInfo | None:
        check_sha(sha256)
        row = self._run("SELECT octet_length(jpeg), stored_at, thinned FROM evidence_frames WHERE sha256 = %s",
                        (sha256,)).fetchone()
        return FrameInfo(sha256, int(row[0]), int(row[1]), bool(row[2])) if row else None

    def frames(self) -> Iterator[FrameInfo]:
        rows = self._run("SELECT sha256, octet_length(jpeg), stored_at, thinned FROM evidence_frames "
                         "ORDER BY stored_at, sha256").fetchall()
        for sha, size, stored, thinned in rows:
            yield FrameInfo(str(sha), int(size), int(stored), bool(thinned))

    def thin(self, sha256: str, smaller: bytes) -> bool:
        check_sha(sha256)
        cur = self._run("UPDATE evidence_frames SET jpeg = %s, thinned = TRUE WHERE sha256 = %s AND NOT thinned",
                        (smaller, sha256))
        return bool(cur.rowcount)

    def drop(self, sha256: str) -> bool:
        check_sha(sha256)
        return bool(self._run("DELETE FROM evidence_frames WHERE sha256 = %s", (sha256,)).rowcount)

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


def is_url(target: object) -> bool:
    return isinstance(target, str) and target.startswith(URL_SCHEMES)


def open_evidence_store(target: str | os.PathLike[str]) -> EvidenceStore:
    """The store a venue configures: a postgresql:// URL (shared by every machine), else a directory."""
    if is_url(target):
        return PostgresEvidenceStore(str(target))
    return DirectoryEvidenceStore(target)
