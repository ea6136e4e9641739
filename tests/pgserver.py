"""A throw-away PostgreSQL server for the tests and benchmarks: Debian's binaries, a temporary folder, a free port.

`initdb` and `postgres` refuse to run as root (the tests do in CI), so as root they run as the `postgres` user
(made by Debian's package) or else `nobody`, through runuser. The server listens on 127.0.0.1 only, trusts local
connections, and is removed with its folder when stopped.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

# How long a fresh server may take to accept connections (initdb plus start take 1-3 s on a loaded 2-core machine).
START_TIMEOUT_S = 60
# What a test server gives up for speed: no fsync and no waiting for the WAL at commit. A crash of the test machine
# loses the test's database, nothing else.
TEST_SETTINGS = ("-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")


class PostgresNotFound(RuntimeError):
    """No PostgreSQL server binaries on this machine."""


def bin_dir() -> Path | None:
    """The newest /usr/lib/postgresql/<version>/bin (Debian's layout), else the folder of an initdb on PATH."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("initdb")
    return Path(on_path).resolve().parent if on_path else None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_as() -> tuple[list[str], str | None]:
    """The command prefix that drops root, and the user it runs as (None: this user)."""
    if os.geteuid() != 0:
        return [], None
    for user in ("postgres", "nobody"):
        try:
            pwd.getpwnam(user)
        except KeyError:
            continue
        return ["runuser", "-u", user, "--"], user
    raise PostgresNotFound("running as root with neither a postgres nor a nobody user to run the server as")


class PostgresServer:
    """A running server; `url(dbname)` connects as its superuser `postgres` without a password."""

    def __init__(self, settings: tuple[str, ...] = TEST_SETTINGS) -> None:
        binaries = bin_dir()
        if binaries is None:
            raise PostgresNotFound("PostgreSQL's initdb is not installed (bash scripts/setup.sh --dev installs "
                                   "Debian's postgresql package)")
        self.bin = binaries
        self.prefix, user = _run_as()
        self.root = Path(tempfile.mkdtemp(prefix="xqarb-pg-"))
        if user is not None:
            entry = pwd.getpwnam(user)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        self.data = self.root / "data"
        self.port = _free_port()
        self._run(["initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C",
                   "--no-sync"])
        options = " ".join(["-p", str(self.port), "-h", "127.0.0.1", "-k", str(self.root), *settings])
        self._run(["pg_ctl", "-D", str(self.data), "-l", str(self.root / "server.log"), "-w",
                   "-t", str(START_TIMEOUT_S), "-o", options, "start"])

    def url(self, dbname: str = "postgres", **params: str) -> str:
        query = "&".join(f"{key}={value}" for key, value in params.items())
        return f"postgresql://postgres@127.0.0.1:{self.port}/{dbname}" + (f"?{query}" if query else "")

    def log(self) -> str:
        path = self.root / "server.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        try:
            self._run(["pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop"])
        except subprocess.CalledProcessError:
            pass  # already stopped: the folder goes all the same
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PostgresServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self, command: list[str]) -> None:
        started = time.monotonic()
        done = subprocess.run([*self.prefix, str(self.bin / command[0]), *command[1:]], capture_output=True,
                              text=True, cwd=self.root, timeout=START_TIMEOUT_S + 10)
        if done.returncode != 0:
            raise subprocess.CalledProcessError(
                done.returncode, command, done.stdout,
                f"{done.stderr}\n(after {time.monotonic() - started:.1f} s)\n{self.log()[-2000:]}")
