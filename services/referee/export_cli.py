"""`xqarb export`: a game written in one of the record formats (xqarb.referee.formats), a thin adapter.

- `xqarb export --game ID [--db PATH] [--format F] [--out FILE]`: the game from the ledger (players, event,
  round, time control, moves, rulings, result and why);
- `xqarb export --record FILE [--format F] [--out FILE]`: a game record (PGN, DhtmlXQ/UBB or XQF) converted,
  every game of it (XQF holds one: the first is written).
Formats: pgn (Chinese moves, 7.5), pgn-iccs, pgn-wxf, dhtmlxq, xqf. Output to standard output unless --out
(XQF is binary: written as bytes either way).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xqarb.referee.formats import GameFacts


# xqarb.referee.formats.FORMATS, spelled out: registering the command must not load the rules core's tables (every
# `xqarb` command registers every part's subcommands at start-up).
FORMAT_CHOICES = ("pgn", "pgn-iccs", "pgn-wxf", "dhtmlxq", "xqf")


def register_export(subparsers: argparse._SubParsersAction, handler: Callable[[argparse.Namespace], int]) -> None:
    e = subparsers.add_parser("export", help="write a game as PGN (Chinese, ICCS or WXF), DhtmlXQ/UBB or XQF")
    what = e.add_mutually_exclusive_group(required=True)
    what.add_argument("--game", help="the game id in the ledger")
    what.add_argument("--record", metavar="FILE", help="a game record file (PGN, DhtmlXQ/UBB or XQF) to convert")
    e.add_argument("--format", default="pgn", choices=FORMAT_CHOICES,
                   help="the output format (default: pgn, Chinese moves)")
    e.add_argument("--db", default=None, help="the SQLite ledger (default: the configured ledger path)")
    e.add_argument("--out", metavar="FILE", help="write to FILE instead of standard output")
    e.set_defaults(handler=handler)


def _fail(message: str) -> int:
    print(f"xqarb export: {message}", file=sys.stderr)
    return 2


def _from_ledger(args: argparse.Namespace) -> list[GameFacts] | str:
    from xqarb.config import ledger_path
    from xqarb.referee.formats import facts_from_entries
    from xqarb.referee.ledger import SqliteLedger

    path = Path(args.db) if args.db else ledger_path()
    if not path.exists():
        return f"no ledger at {path} (give --db PATH)"
    with SqliteLedger(path) as ledger:
        if ledger.board_of(args.game) is None:
            return f"no game {args.game!r} in the ledger {path}"
        entries = [e.to_json() for e in ledger.entries(args.game, 0, None)]
    return [facts_from_entries(args.game, entries)]


def _from_record(args: argparse.Namespace) -> list[GameFacts] | str:
    from xqarb.referee.cli import read_record_text
    from xqarb.referee.formats import FormatError, facts_from_record, is_dhtmlxq, read_dhtmlxq, read_xqf
    from xqarb.referee.rules import PgnError, read_pgn

    path = Path(args.record)
    try:
        data = path.read_bytes()
        if data[:2] == b"XQ":
            records = [read_xqf(data)]
        else:
            text = read_record_text(data)
            records = read_dhtmlxq(text) if is_dhtmlxq(text) else read_pgn(text)
        if not records:
            return f"no game found in {path}"
        return [facts_from_record(r, f"{path.name}#{n}") for n, r in enumerate(records, start=1)]
    except OSError as exc:
        return f"cannot read {path}: {exc.strerror}"
    except UnicodeDecodeError as exc:
        return f"{path} is neither UTF-8 nor GB18030 nor Big5 text: {exc}"
    except (FormatError, PgnError) as exc:
        return f"{path}: {exc}"


def cmd_export(args: argparse.Namespace) -> int:
    from xqarb.referee.formats import FormatError, export

    games = _from_ledger(args) if args.game else _from_record(args)
    if isinstance(games, str):
        return _fail(games)
    try:
        # XQF holds one game; the text formats hold them one after another, a blank line between.
        data = export(games[0], "xqf") if args.format == "xqf" else b"\n".join(export(g, args.format) for g in games)
    except FormatError as exc:
        return _fail(str(exc))
    if args.out:
        Path(args.out).write_bytes(data)
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    return 0
