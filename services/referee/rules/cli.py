"""`xqarb rules perft FEN DEPTH [--divide]` and `xqarb rules legal [FEN ...]` (DESIGN, command-line contract).

perft: prints the number of leaf nodes `DEPTH` plies deep; with --divide first one line per legal move,
"<iccs> <nodes>", sorted, then the total alone on the last line. The FEN may be quoted or not ('startpos' names
the start position); DEPTH is the last word.

legal: for each FEN (the arguments, quoted or not, or standard input one per line when none are given; blank
input lines are skipped) exactly one output line: its legal moves in ICCS, sorted, separated by spaces; an empty
line when there is none (checkmate or 困毙). A FEN that cannot be read also gets an empty line, so output line N
always belongs to input FEN N, and an error naming it on standard error; the other FENs are still answered and the
exit code is then 2.

Kept cheap to import: the rules core is loaded inside the handlers.
"""

from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    rules = subparsers.add_parser("rules", help="the rules core: perft and legal move listing")
    sub = rules.add_subparsers(dest="rules_command", metavar="SUBCOMMAND")

    perft = sub.add_parser("perft", help="count the leaf nodes of the legal move tree (move generator check)")
    perft.add_argument("words", nargs="+", metavar="FEN DEPTH",
                       help="position in FEN, quoted or not ('startpos': the start position), then plies (0 or more)")
    perft.add_argument("--divide", action="store_true", help="also print the count below each legal move")
    perft.set_defaults(handler=_perft, usage=perft.format_usage())

    legal = sub.add_parser("legal", help="legal moves in ICCS, one line per FEN (standard input when none given)")
    legal.add_argument("fens", metavar="FEN", nargs="*", help="positions in FEN")
    legal.set_defaults(handler=_legal)

    rules.set_defaults(handler=lambda args: _usage(rules))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def _position(fen: str):
    from xqarb.referee.rules.position import START_FEN, Position

    return Position.from_fen(START_FEN if fen.strip() == "startpos" else fen)


def _group_fens(words: list[str]) -> list[str]:
    """FEN arguments, quoted or not: an unquoted FEN arrives as several words, the first holding the '/'s."""
    fens: list[str] = []
    for word in words:
        if fens and "/" not in word and " " not in word and word != "startpos":
            fens[-1] += " " + word  # a further field (side to move, counters) of the FEN before
        else:
            fens.append(word)
    return fens


def _perft(args: argparse.Namespace) -> int:
    from xqarb.referee.rules.position import FenError

    if len(args.words) < 2 or not args.words[-1].lstrip("-").isdigit() or int(args.words[-1]) < 0:
        print(f"{args.usage}xqarb rules perft: expected FEN DEPTH with DEPTH a whole number 0 or more, "
              f"got {args.words}", file=sys.stderr)
        return 2
    depth = int(args.words[-1])
    fen = " ".join(args.words[:-1])
    try:
        board = _position(fen).board()
    except FenError as exc:
        print(f"xqarb rules perft: bad FEN: {exc}", file=sys.stderr)
        return 2
    if args.divide and depth >= 1:
        from xqarb.referee.rules.board import point

        rows = []
        total = 0
        for m in board.legal_moves():
            board.make(m)
            n = board.perft(depth - 1)
            board.unmake()
            rows.append((point(m >> 7) + point(m & 127), n))
            total += n
        for text, n in sorted(rows):
            print(f"{text} {n}")
        print(total)
    else:
        print(board.perft(depth))
    return 0


def _legal(args: argparse.Namespace) -> int:
    from xqarb.referee.rules.position import FenError

    fens = _group_fens(args.fens) if args.fens else (line.strip() for line in sys.stdin if line.strip())
    status = 0
    for fen in fens:
        try:
            moves = _position(fen).legal_moves()
        except FenError as exc:
            print(f"xqarb rules legal: bad FEN: {exc}", file=sys.stderr)
            print("", flush=True)
            status = 2
            continue
        print(" ".join(str(m) for m in moves), flush=not args.fens)
    return status
