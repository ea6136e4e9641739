"""Where a running system keeps its files, shared by `xqarb up`, the services and `xqarb verify`.

The data directory is `$XQARB_DATA_DIR`, else `./var` (relative to where the command runs): it holds the
ledger (`ledger.sqlite`), the evidence frames (`evidence/`) and, where `xqarb up` made it, the venue's configuration
(`venue.json`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

DATA_DIR_ENV = "XQARB_DATA_DIR"
# A PostgreSQL URL (postgresql://user:password@host/db): the ledger shared by referees on several machines, used
# instead of the data directory's SQLite file wherever no --db is given.
LEDGER_URL_ENV = "XQARB_LEDGER_URL"


def data_dir(environ: Mapping[str, str] = os.environ) -> Path:
    return Path(environ.get(DATA_DIR_ENV) or "var")


def ledger_path(environ: Mapping[str, str] = os.environ) -> Path:
    return data_dir(environ) / "ledger.sqlite"


def ledger_target(db: str | None = None, environ: Mapping[str, str] = os.environ) -> str | Path:
    """The ledger a command opens: its --db (a file or a postgresql:// URL), else $XQARB_LEDGER_URL, else the file."""
    return db or environ.get(LEDGER_URL_ENV) or ledger_path(environ)


def venue_path(environ: Mapping[str, str] = os.environ) -> Path:
    """The venue's configuration that `xqarb up` writes when it is given none (boards, device tokens, roles)."""
    return data_dir(environ) / "venue.json"


def evidence_dir(environ: Mapping[str, str] = os.environ) -> Path:
    return data_dir(environ) / "evidence"
