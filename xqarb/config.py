"""Where a running system keeps its files, shared by `xqarb up`, the services and `xqarb verify`.

The data directory is `$XQARB_DATA_DIR`, else `./var` (relative to where the command runs): it holds the
ledger (`ledger.sqlite`) and the evidence frames (`evidence/`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

DATA_DIR_ENV = "XQARB_DATA_DIR"


def data_dir(environ: Mapping[str, str] = os.environ) -> Path:
    return Path(environ.get(DATA_DIR_ENV) or "var")


def ledger_path(environ: Mapping[str, str] = os.environ) -> Path:
    return data_dir(environ) / "ledger.sqlite"


def evidence_dir(environ: Mapping[str, str] = os.environ) -> Path:
    return data_dir(environ) / "evidence"
