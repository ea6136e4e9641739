"""`xqarb verify`: the ledger's own chain, and the tamper evidence anchored outside it.

- `xqarb verify --game ID [--db PATH] [--json]`: recompute the game's hash chain (ledger.cmd_verify);
- `xqarb verify --game ID --export-proof OUT [--db PATH]`: write the game's proof document (proof_file.py): its
  entries, a head over them signed now with the venue's key (when this machine has it) and the public key;
- `xqarb verify --proof FILE [--public-key KEY] [--head HEADS]... [--json]`: check a proof document without our
  server, against the venue's public key and the heads the checker kept when they were published;
- `xqarb verify --show-public-key [--json]`: print the venue's public key (to hand to broadcasters).
Exit status: 0 verified, 1 does not verify, 2 cannot check (missing or malformed input).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from xqarb.config import ledger_target
from xqarb.referee.proof_file import (
    ProofFileError,
    check_document,
    entry_bytes,
    export_document,
    read_heads,
)
from xqarb.referee.tree_head import SignedTreeHead, head_of, sign_head
from xqarb.referee.venue_key import (
    VenueKeyError,
    key_path,
    load_private_key,
    parse_public_key,
    public_key_json,
    raw_public,
    read_public_key,
)


def _fail(message: str) -> int:
    print(f"xqarb verify: {message}", file=sys.stderr)
    return 2


def cmd_verify(args: argparse.Namespace) -> int:
    if getattr(args, "show_public_key", False):
        return _show_public_key(args)
    if getattr(args, "proof", None):
        return _check(args)
    if getattr(args, "export_proof", None):
        return _export(args)
    from xqarb.referee.ledger import cmd_verify as verify_chain

    return verify_chain(args)


def _show_public_key(args: argparse.Namespace) -> int:
    path = key_path()
    if not path.exists():
        return _fail(f"no venue key at {path} (it is made on the first `xqarb up`; set XQARB_DATA_DIR)")
    try:
        shown = public_key_json(load_private_key(path).public_key())
    except VenueKeyError as exc:
        return _fail(str(exc))
    print(json.dumps(shown) if args.json else shown["public_key_pem"], end="\n" if args.json else "")
    return 0


def _export(args: argparse.Namespace) -> int:
    from xqarb.referee.ledger import LedgerError, open_ledger
    from xqarb.referee.ledger_pg import is_url

    path = ledger_target(args.db)  # a file, or a postgresql:// URL
    if not is_url(path) and not Path(path).exists():
        return _fail(f"no ledger at {path} (give --db PATH)")
    try:
        ledger = open_ledger(path)
    except LedgerError as exc:
        return _fail(str(exc))
    with ledger:
        board = ledger.board_of(args.game)
        if board is None:
            return _fail(f"no game {args.game!r} in the ledger {ledger.path}")
        bodies = [entry_bytes(row.body) for row in ledger.stored_rows(args.game)]
    heads: list[SignedTreeHead] = []
    public_hex = None
    key_file = key_path()
    if key_file.exists():
        try:
            key = load_private_key(key_file)
        except VenueKeyError as exc:
            return _fail(str(exc))
        heads.append(sign_head(head_of(args.game, board, bodies, time.time_ns() // 1000), key))
        public_hex = raw_public(key.public_key()).hex()
    else:
        print(f"xqarb verify: no venue key at {key_file}: the export holds no head signed now", file=sys.stderr)
    try:
        heads.extend(_kept_heads(args.head or []))
    except (ProofFileError, OSError) as exc:
        return _fail(str(exc))
    document = export_document(args.game, board, bodies, heads, public_hex)
    Path(args.export_proof).write_text(json.dumps(document, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"game {args.game}: {len(bodies)} entries and {len(heads)} signed head(s) written to {args.export_proof}")
    return 0


def _kept_heads(files: list[str]) -> list[SignedTreeHead]:
    heads: list[SignedTreeHead] = []
    for name in files:
        heads.extend(read_heads(Path(name).read_text(encoding="utf-8")))
    return heads


def _check(args: argparse.Namespace) -> int:
    try:
        document: Any = json.loads(Path(args.proof).read_text(encoding="utf-8"))
    except OSError as exc:
        return _fail(f"cannot read {args.proof}: {exc.strerror or exc}")
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return _fail(f"{args.proof} is not a JSON proof document: {exc}")
    warnings: list[str] = []
    try:
        if args.public_key:
            public = read_public_key(args.public_key)
        elif isinstance(document, dict) and isinstance(document.get("public_key"), str):
            public = parse_public_key(document["public_key"])
            warnings.append("the public key was taken from the proof file itself, which proves only that whoever "
                            "made the file signed it: give --public-key with the key the venue published")
        else:
            return _fail("no public key: give --public-key KEY (a PEM file, or 64 hex digits)")
        kept = _kept_heads(args.head or [])
        report = check_document(document, public, kept)
    except VenueKeyError as exc:
        return _fail(f"public key: {exc}")
    except OSError as exc:
        return _fail(f"cannot read a head file: {exc.strerror or exc}")
    except ProofFileError as exc:
        return _fail(f"{args.proof}: {exc}")
    report.warnings[:0] = warnings
    if args.json:
        print(json.dumps(report.to_json(), ensure_ascii=False))
    else:
        verdict = "verifies" if report.ok else "FAILS"
        print(f"game {report.game_id}: proof {verdict}")
        for line in report.checked:
            print(f"  ok: {line}")
        for line in report.problems:
            print(f"  FAIL: {line}")
        for line in report.warnings:
            print(f"  note: {line}")
    return 0 if report.ok else 1
