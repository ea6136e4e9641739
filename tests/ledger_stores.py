"""The ledger's stores as test fixtures: one contract suite runs against SQLite and PostgreSQL alike.

`store` is parametrized over both; each test gets an empty ledger (a file in tmp_path, or a schema of its own on a
PostgreSQL server started once per test session from Debian's binaries, tests/pgserver.py). Without those binaries
the PostgreSQL cases are skipped, except in CI (CI=true), where they fail: CI installs them (scripts/setup.sh --dev)
and a missing server must not pass for a green run. $XQARB_TEST_POSTGRES_URL points the suite at a running server.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.pgserver import PostgresNotFound, PostgresServer
from xqarb.referee.ledger import SqliteLedger, open_ledger

# Attempts at starting the server: its free port is chosen before it binds, so another process may take it first.
START_ATTEMPTS = 3


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
        pytest.fail(f"PostgreSQL is required in CI: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """The URL of a PostgreSQL server for this test session (each xdist worker starts its own)."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _unavailable("psycopg is not installed (pip install -e '.[dev]')")
    external = os.environ.get("XQARB_TEST_POSTGRES_URL")
    if external:
        yield external
        return
    server = None
    for attempt in range(START_ATTEMPTS):
        try:
            server = PostgresServer()
            break
        except PostgresNotFound as exc:
            _unavailable(str(exc))
        except subprocess.CalledProcessError as exc:
            if attempt == START_ATTEMPTS - 1:
                raise RuntimeError(f"PostgreSQL did not start: {exc.stderr}") from exc
    assert server is not None
    with server:
        yield server.url()


class Store:
    """One empty ledger in one of the stores, and the means to tamper with it as someone with the database would."""

    def __init__(self, kind: str, target: str | Path) -> None:
        self.kind = kind
        self.target = target

    def open(self) -> Any:
        """A new connection to this ledger (a second referee, a reopened file)."""
        return open_ledger(self.target)

    def sql(self, query: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Run SQL on a connection of its own and commit it; `?` placeholders in both stores."""
        if self.kind == "sqlite":
            with sqlite3.connect(self.target) as db:
                return db.execute(query, args).fetchall()
        import psycopg

        with psycopg.connect(str(self.target), autocommit=True) as db:
            cur = db.execute(query.replace("?", "%s"), args)
            return cur.fetchall() if cur.description else []

    @property
    def integrity_error(self) -> type[Exception]:
        """What the database raises when a unique key refuses a row."""
        if self.kind == "sqlite":
            return sqlite3.IntegrityError
        import psycopg

        return psycopg.IntegrityError


def new_store(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> Store:
    """An empty ledger: a new file, or a new schema (its name in the URL's search_path) on the session's server."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    if kind == "sqlite":
        return Store(kind, tmp_path / f"{name}.sqlite")
    import psycopg

    url = request.getfixturevalue("postgres_url")
    with psycopg.connect(url, autocommit=True) as db:
        db.execute(f"CREATE SCHEMA {name}")
    separator = "&" if "?" in url else "?"
    return Store(kind, f"{url}{separator}options=-csearch_path%3D{name}")


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    return new_store(request.param, tmp_path, request)


@pytest.fixture()
def ledger(store: Store) -> Iterator[Any]:
    with store.open() as opened:
        yield opened


@pytest.fixture()
def sqlite_ledger(tmp_path: Path) -> Iterator[SqliteLedger]:
    with SqliteLedger(tmp_path / "ledger.sqlite") as opened:
        yield opened
