"""The `xqarb` command line: one console script, one subcommand per contract of DESIGN.

Each part of the system owns its subcommands in its own `cli` module with a function
`register(subparsers) -> None` that adds them; the handler of each subcommand is set with
`parser.set_defaults(handler=fn)` where `fn(args) -> int` returns the exit code.
This module only wires the parts together, so that `xqarb --help` lists every subcommand of the
contract even while a part is still being built: a part whose module is missing gets a placeholder
that says so plainly and exits 2.

Keep the `cli` modules light to import (no OpenCV, Kafka or Flask at module level): `xqarb rules legal`
must not pay for the vision stack.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Part:
    module: str
    commands: tuple[tuple[str, str], ...]  # (subcommand, one-line help)
    issue: int


# The command-line contract of DESIGN.md, by the part that implements it.
PARTS: tuple[Part, ...] = (
    Part(
        "xqarb.up",
        (("up", "run the whole system on this machine (embedded broker unless --bootstrap-servers)"),),
        6,
    ),
    Part(
        "xqarb.referee.rules.cli",
        (("rules", "the rules core: perft and legal move listing"),),
        3,
    ),
    Part(
        "xqarb.referee.cli",
        (
            ("replay", "referee game records (PGN, ICCS or Chinese) without cameras"),
            ("referee", "referee tools: `referee run FILE.jsonl` folds input events, `referee serve`"),
            ("verify", "verify a game's hash-chained ledger"),
            ("export", "write a game as PGN (Chinese, ICCS or WXF), DhtmlXQ/UBB or XQF"),
        ),
        5,
    ),
    Part(
        "xqarb.vision.cli",
        (("vision", "vision tools: `vision detect IMAGE`, `vision serve`, `vision render`"),),
        4,
    ),
    Part(
        "xqarb.ingest.cli",
        (("ingest", "the ingest HTTP service for devices and people"),),
        6,
    ),
    Part(
        "xqarb.broker",
        (("broker", "run the embedded Kafka-compatible development broker in the foreground"),),
        2,
    ),
)


def _placeholder(name: str, issue: int):
    def handler(args: argparse.Namespace) -> int:
        print(
            f"xqarb {name}: not built yet; this subcommand belongs to issue #{issue}.",
            file=sys.stderr,
        )
        return 2

    return handler


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="xqarb",
        description="Xiangqi venue arbitration: cameras and clocks in, CXA rulings and a verifiable ledger out.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for part in PARTS:
        try:
            module = importlib.import_module(part.module)
        except ModuleNotFoundError as exc:
            if exc.name is None or not part.module.startswith(exc.name):
                raise  # a real missing dependency inside the part: say so, do not hide it
            module = None
        if module is not None:
            module.register(sub)
            continue
        for name, help_text in part.commands:
            p = sub.add_parser(name, help=f"{help_text} [not built yet: issue #{part.issue}]")
            p.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
            p.set_defaults(handler=_placeholder(name, part.issue))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    try:
        return int(handler(args) or 0)
    except BrokenPipeError:
        # `xqarb rules legal ... | head` closes the pipe early; that is not an error.
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
