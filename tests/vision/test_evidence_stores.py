"""The evidence stores' contract, one suite run against the local directory and PostgreSQL alike (the server of
tests/pgserver.py, as the ledger's contract suite uses): frames by their SHA-256, stored once, listed for the
retention sweep, thinned under their own name, dropped, and made full again by a put of their full bytes."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.ledger_stores import postgres_url  # noqa: F401  (fixture: a PostgreSQL server for the session)
from xqarb.vision.evidence import (
    DirectoryEvidenceStore,
    PostgresEvidenceStore,
    open_evidence_store,
)

FULL = b"\xff\xd8" + b"a frame as the camera sent it" * 40 + b"\xff\xd9"
OTHER = b"\xff\xd8" + b"another frame" * 30 + b"\xff\xd9"
SMALL = b"\xff\xd8small\xff\xd9"


@pytest.fixture(params=["directory", "postgres"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """A function opening (again) one empty store: a folder, or a schema of its own on the session's server."""
    if request.param == "directory":
        yield lambda: open_evidence_store(tmp_path / "evidence")
        return
    import psycopg

    url = request.getfixturevalue("postgres_url")
    name = f"e_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(url, autocommit=True) as db:
        db.execute(f"CREATE SCHEMA {name}")
    opened: list[PostgresEvidenceStore] = []

    def make() -> Any:
        separator = "&" if "?" in url else "?"
        s = open_evidence_store(f"{url}{separator}options=-csearch_path%3D{name}")
        assert isinstance(s, PostgresEvidenceStore)
        opened.append(s)
        return s

    yield make
    for s in opened:
        s.close()


def test_a_frame_is_found_by_its_sha256_and_stored_once(make_store: Any) -> None:
    store = make_store()
    sha = store.put(FULL)
    assert sha == hashlib.sha256(FULL).hexdigest()
    assert store.put(FULL) == sha
    assert store.get(sha) == FULL
    assert store.get(hashlib.sha256(b"never stored").hexdigest()) is None
    held = list(store.frames())
    assert [(f.sha256, f.size, f.thinned) for f in held] == [(sha, len(FULL), False)]
    assert store.info(sha) == held[0]


def test_a_second_process_sees_what_the_first_stored(make_store: Any) -> None:
    sha = make_store().put(FULL)
    assert make_store().get(sha) == FULL


def test_a_thinned_frame_keeps_its_name_and_first_storing_time(make_store: Any) -> None:
    store = make_store()
    sha, other = store.put(FULL), store.put(OTHER)
    before = store.info(sha)
    assert store.thin(sha, SMALL)
    assert store.get(sha) == SMALL
    after = store.info(sha)
    assert (after.size, after.thinned, after.stored_at_us) == (len(SMALL), True, before.stored_at_us)
    assert not store.thin(sha, SMALL)  # (once: a thinned frame is not thinned again)
    assert store.get(other) == OTHER and not store.info(other).thinned
    assert sorted((f.sha256, f.thinned) for f in store.frames()) == sorted([(sha, True), (other, False)])


def test_putting_a_thinned_frame_again_makes_it_full(make_store: Any) -> None:
    store = make_store()
    sha = store.put(FULL)
    store.thin(sha, SMALL)
    assert store.put(FULL) == sha
    assert store.get(sha) == FULL and not store.info(sha).thinned
    assert len(list(store.frames())) == 1


def test_a_dropped_frame_is_gone_full_or_thinned(make_store: Any) -> None:
    store = make_store()
    sha, other = store.put(FULL), store.put(OTHER)
    store.thin(other, SMALL)
    assert store.drop(sha) and store.drop(other)
    assert not store.drop(sha)
    assert store.get(sha) is None and store.get(other) is None and store.info(sha) is None
    assert list(store.frames()) == []


def test_a_name_that_is_no_sha256_is_refused(make_store: Any) -> None:
    store = make_store()
    for bad in ("../../etc/passwd", "A" * 64, "abc"):
        with pytest.raises(ValueError):
            store.get(bad)


def test_the_directory_store_ignores_files_being_written(tmp_path: Path) -> None:
    store = DirectoryEvidenceStore(tmp_path / "ev")
    sha = store.put(FULL)
    (store.root / sha[:2] / "tmpabc.tmp").write_bytes(b"half")
    assert [f.sha256 for f in store.frames()] == [sha]
