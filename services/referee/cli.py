"""`xqarb replay`, `xqarb referee run|serve` and `xqarb verify`: the referee's command line (DESIGN's contract).

- `xqarb referee run FILE.jsonl [--json]`: input events in the JSON form, one a line (`event_id`, `source`,
  `source_seq`, `received_at` may be omitted and are filled from the file name and line number), folded through
  the referee with no Kafka; every output event is printed as a JSON line. A line that is no valid event is
  reported on standard error with its number and the fold goes on (exit status 1 at the end).
  At the end of the input, what still waits for the camera is folded (`game.finish`): a clock press that no
  move followed is a press without a move (8.1.7).
- `xqarb replay FILE [--json]`: game records (PGN, one or many games, ICCS, WXF or Chinese moves; DhtmlXQ/UBB
  blocks; an XQF file) refereed without
  cameras: each game becomes the input events a camera board would give (GameStarted with the record's FEN, a
  BoardStable snapshot after each move and the mover's clock press) and goes through the same fold. Prints each
  move in the three notations, the rulings with their articles and the result; with `--json` the referee's
  output events as JSON lines, each with game_id "<file name>#<game number>".
  The end of each record is the end of its input, as for `referee run`.
- `xqarb export --game ID [--db PATH] [--format pgn|pgn-iccs|pgn-wxf|dhtmlxq|xqf]` (export_cli.py): the game in
  a record format; `--record FILE` converts a record file instead.
- `xqarb verify --game ID [--db PATH] [--json]`, `xqarb verify --proof FILE [--public-key KEY]` (proof_cli.py)
  and `xqarb referee serve ...` call the ledger's, the proofs' and the service's commands.
- `xqarb replay-ledger --game ID [--db PATH] [--json]`: a game's inputs folded again with the installed fold,
  every output that would differ listed (replay_ledger.py).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

REPLAY_T0 = 1_767_225_600_000_000  # 2026-01-01 00:00 UTC, µs: synthetic events need a fixed, repeatable time
REPLAY_PLY_US = 10_000_000  # ten seconds a move
REPLAY_TIME_CONTROL = {"scheme": "sudden_death", "base_ms": 4 * 3600 * 1000}


DB_HELP = "the ledger: a SQLite file or a postgresql:// URL (default: $XQARB_LEDGER_URL, else the data folder's file)"

def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("replay", help="referee game records (PGN, ICCS or Chinese) without cameras")
    p.add_argument("file", help="a PGN file (one or many games, moves in ICCS, WXF or Chinese notation), "
                                "DhtmlXQ/UBB text or an XQF file")
    p.add_argument("--json", action="store_true", help="the referee's output events as JSON lines")
    p.add_argument("--ruleset", default="cxa-2021", choices=("cxa-2021", "cxa-2011"))
    p.add_argument("--level", default="national", choices=("national", "provincial", "junior"))
    p.add_argument("--rapid", action="store_true", help="the rapid play-off rules")
    p.set_defaults(handler=cmd_replay)

    r = subparsers.add_parser("referee", help="referee tools: `referee run FILE.jsonl` folds input events, "
                                              "`referee serve` runs the Kafka service, `referee web` the API and pages")
    rsub = r.add_subparsers(dest="referee_command", metavar="SUBCOMMAND")
    r.set_defaults(handler=lambda args: (r.print_help(), 2)[1])
    run = rsub.add_parser("run", help="fold input events (JSON lines) through the referee, print its outputs")
    run.add_argument("file", help="input events in the JSON form, one a line ('-' for standard input)")
    run.add_argument("--json", action="store_true", help="JSON lines (the default and only output form)")
    run.set_defaults(handler=cmd_run)
    serve = rsub.add_parser("serve", help="the referee service: Kafka consumer group, ledger, xq.game-events")
    serve.add_argument("--bootstrap-servers", required=True, metavar="HOST:PORT")
    serve.add_argument("--group", default=None, help="consumer group id")
    serve.add_argument("--db", default=None, help=DB_HELP)
    serve.add_argument("--partitions", type=int, default=None, help="partitions of topics it creates")
    serve.add_argument("--config", default=None, help="venue configuration (its [alerts] flag_warning_s, its "
                       "camera boards; default: venue.json in the data directory, where there is one)")
    serve.set_defaults(handler=_delegate("xqarb.referee.service", "cmd_serve", "referee serve"))
    web = rsub.add_parser("web", help="the API, web pages, live stream and arbiter actions over a referee's ledger")
    web.add_argument("--bootstrap-servers", required=True, metavar="HOST:PORT")
    web.add_argument("--config", default=None, help="venue configuration (boards, tokens, broadcast delay)")
    web.add_argument("--host", default="127.0.0.1")
    web.add_argument("--port", type=int, default=8080)
    web.add_argument("--db", default=None, help=DB_HELP)
    web.add_argument("--evidence-dir", default=None, help="evidence frames (default: the configured directory)")
    web.set_defaults(handler=_delegate("xqarb.referee.api", "cmd_web", "referee web"))

    from xqarb.referee.export_cli import register_export

    register_export(subparsers, _delegate("xqarb.referee.export_cli", "cmd_export", "export"))

    v = subparsers.add_parser("verify", help="verify a game's hash-chained ledger, or a proof against signed heads")
    what = v.add_mutually_exclusive_group(required=True)
    what.add_argument("--game", help="the game id")
    what.add_argument("--proof", metavar="FILE", help="check a proof document without the server (proof_cli.py)")
    what.add_argument("--show-public-key", action="store_true", help="print the venue's public signing key")
    v.add_argument("--db", default=None, help=DB_HELP)
    v.add_argument("--export-proof", metavar="OUT", help="with --game: write the game's proof document to OUT")
    v.add_argument("--public-key", metavar="KEY", help="with --proof: the venue's public key (PEM file or hex)")
    v.add_argument("--head", action="append", metavar="FILE", help="signed tree heads kept when published "
                                                                  "(JSON, JSON list or the stream's JSON lines)")
    v.add_argument("--json", action="store_true")
    v.set_defaults(handler=_delegate("xqarb.referee.proof_cli", "cmd_verify", "verify"))

    rl = subparsers.add_parser("replay-ledger", help="fold a game's inputs from the ledger again with the installed "
                                                    "fold and list every output that would differ")
    rl.add_argument("--game", required=True, help="the game id")
    rl.add_argument("--db", default=None, help="the SQLite ledger (default: the configured ledger path)")
    rl.add_argument("--json", action="store_true")
    rl.set_defaults(handler=_delegate("xqarb.referee.replay_ledger", "cmd_replay_ledger", "replay-ledger"))


def _delegate(module: str, function: str, name: str) -> Callable[[argparse.Namespace], int]:
    """Call another part's command, imported only when run (keeps `xqarb --help` cheap)."""

    def handler(args: argparse.Namespace) -> int:
        try:
            fn = getattr(importlib.import_module(module), function)
        except (ModuleNotFoundError, AttributeError):
            print(f"xqarb {name}: not built yet ({module}.{function} is missing; issue #5)", file=sys.stderr)
            return 2
        return int(fn(args) or 0)

    return handler


# --------------------------------------------------------------------------------------------- referee run


def read_events(lines: Iterator[str] | list[str], source: str, errors: list[str]) -> Iterator[Any]:
    """Events from JSON lines; a bad line is reported in `errors` (with its number) and skipped."""
    from xqarb.events import Event, EventError

    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        defaults = {"source": source, "source_seq": number}
        try:
            yield Event.from_json(text, defaults=defaults)
        except EventError as exc:
            if exc.problem != EventError.UNKNOWN_FIELD:
                errors.append(f"line {number}: {exc}")
                continue
            # DESIGN lets producers add fields: fields this referee does not know are dropped, and said so.
            try:
                event = Event.from_json_dict(_known_fields(json.loads(text)), defaults=defaults)
            except (EventError, ValueError) as again:
                errors.append(f"line {number}: {again}")
                continue
            print(f"xqarb referee run: line {number}: {exc}; those fields are ignored", file=sys.stderr)
            yield event


def _known_fields(obj: dict[str, Any]) -> dict[str, Any]:
    from xqarb.events import ENVELOPE_FIELDS, data_fields

    known = {"type", *ENVELOPE_FIELDS, *(f["name"] for f in data_fields(obj["type"]))}
    return {k: v for k, v in obj.items() if k in known}


def cmd_run(args: argparse.Namespace) -> int:
    from xqarb.referee.board import end_of_input, step
    from xqarb.referee.ordering import Arrival, EventTimeOrder

    if args.file == "-":
        lines: Any = sys.stdin
        source = "stdin"
    else:
        path = Path(args.file)
        try:
            lines = path.read_text(encoding="utf-8-sig").splitlines()
        except OSError as exc:
            print(f"xqarb referee run: cannot read {path}: {exc.strerror}", file=sys.stderr)
            return 2
        source = path.name
    errors: list[str] = []
    boards: dict[str, Any] = {}
    out = sys.stdout
    # As the service does: a clock or arbiter input is folded once the board's camera has reported at or after
    # its time (or at the end of the input), in event time; inputs already in time order fold as they come.
    order = EventTimeOrder(frozenset({"camera"}), hold_s=float("inf"))

    def fold(arrivals: list[Arrival]) -> None:
        for arrival in arrivals:
            event = arrival.event
            boards[event.board_id], st = step(boards.get(event.board_id), event)
            for o in st.outputs:
                out.write(o.to_json() + "\n")

    for number, event in enumerate(read_events(lines, source, errors)):
        order.add([Arrival.of(event, number)], now=0.0)
        fold(order.release(now=0.0))
    fold(order.release(now=float("inf")))
    for board_id in list(boards):  # the end of the input: nothing more will be seen (game.finish)
        boards[board_id], st = end_of_input(boards[board_id])
        for o in st.outputs:
            out.write(o.to_json() + "\n")
    for e in errors:
        print(f"xqarb referee run: {source} {e}; skipped", file=sys.stderr)
    return 1 if errors else 0


# --------------------------------------------------------------------------------------------- replay


class Synthesized(NamedTuple):
    events: list[Any]
    note: str | None  # why the events stop before the record's end (None: they follow it to the end)
    unreadable: bool  # the record has a move that cannot be read (an error, unlike an illegal move)


class ReplayError(ValueError):
    """A game record that cannot be turned into input events (bad FEN, a move that cannot be read)."""


def synthesize(record: Any, game_id: str, *, ruleset: str = "cxa-2021", level: str = "national",
               rapid: bool = False) -> Synthesized:
    """The input events a camera board would give for a game record, and why they stop early (None: they don't).

    GameStarted (the record's FEN and players), then per move a BoardStable of the position after it and the
    mover's ClockPressed. A move token that names a single piece moving illegally (ICCS only) is still shown to
    the referee as the board after it, so that it rules on it; a token that cannot be read ends the game there.
    """
    from xqarb.events import make_event
    from xqarb.referee.inference import index_of
    from xqarb.referee.rules import Move, NotationError, Position, parse_move

    seq = 0
    events = []

    def ev(t: int, type_: str, **fields: Any) -> None:
        nonlocal seq
        seq += 1
        events.append(make_event(type_, game_id, source="replay", source_seq=seq, occurred_at=t, received_at=t,
                                 **fields))

    h = record.headers
    try:
        pos = Position.from_fen(record.start_fen)
    except ValueError as exc:
        raise ReplayError(f"{game_id}: bad FEN: {exc}") from None
    ev(REPLAY_T0, "GameStarted", game_id=game_id, red_player=h.get("Red", ""), black_player=h.get("Black", ""),
       ruleset=ruleset, rapid=rapid, level=level, time_control=REPLAY_TIME_CONTROL, start_fen=pos.fen(),
       recording_required=False)
    for i, token in enumerate(record.moves, start=1):
        t = REPLAY_T0 + i * REPLAY_PLY_US
        side = pos.side
        try:
            move = parse_move(pos, token)
            after = pos.play(move)
            squares = after.squares()
        except (NotationError, ValueError) as exc:
            try:
                move = Move.parse(token)
            except ValueError:
                return Synthesized(events, f"ply {i} {token!r} cannot be read: {exc}", True)
            sq = list(pos.squares())
            f, to = index_of(move.frm), index_of(move.to)
            sq[to], sq[f] = sq[f], "."
            squares = "".join(sq)
            ev(t, "BoardStable", squares=squares, frame_sha256=hashlib.sha256(squares.encode()).hexdigest())
            ev(t + 1_000_000, "ClockPressed", side=side)
            rest = len(record.moves) - i
            return Synthesized(events, f"ply {i} {token!r} is not a legal move" + (
                f"; the {rest} moves after it cannot be followed" if rest else ""), False)
        ev(t, "BoardStable", squares=squares, frame_sha256=hashlib.sha256(squares.encode()).hexdigest())
        ev(t + 1_000_000, "ClockPressed", side=side)
        pos = after
    return Synthesized(events, None, False)


# Chinese game files come in UTF-8 (with or without a BOM) and, from older software, GB2312/GBK or Big5.
RECORD_ENCODINGS = ("utf-8-sig", "gb18030", "big5")
# Characters every Chinese game record is full of: the decoding that shows the most of them is the right one
# (GB18030 decodes almost any bytes, Big5 bytes included, into nonsense).
_NOTATION_CHARS = frozenset("车車俥马馬傌炮砲包相象仕士帅帥将將兵卒进進退平一二三四五六七八九前中后後红紅黑")


def read_record_text(data: bytes) -> str:
    """The text of a game record file in UTF-8, GB18030 or Big5."""
    try:
        return data.decode(RECORD_ENCODINGS[0])
    except UnicodeDecodeError:
        pass
    texts = []
    for encoding in RECORD_ENCODINGS[1:]:
        try:
            texts.append(data.decode(encoding))
        except UnicodeDecodeError:
            continue
    if not texts:
        return data.decode(RECORD_ENCODINGS[-1])  # raises, naming the first byte that fits no encoding
    return max(texts, key=lambda text: sum(ch in _NOTATION_CHARS for ch in text))


def cmd_replay(args: argparse.Namespace) -> int:
    from xqarb.referee.board import end_of_input, step
    from xqarb.referee.formats import FormatError, is_dhtmlxq, read_dhtmlxq, read_xqf
    from xqarb.referee.rules import read_pgn

    path = Path(args.file)
    try:
        data = path.read_bytes()
        if data[:2] == b"XQ":  # XQF (XQStudio's binary game file)
            records = [read_xqf(data)]
        else:
            text = read_record_text(data)
            records = read_dhtmlxq(text) if is_dhtmlxq(text) else read_pgn(text)
    except OSError as exc:
        print(f"xqarb replay: cannot read {path}: {exc.strerror}", file=sys.stderr)
        return 2
    except UnicodeDecodeError as exc:
        print(f"xqarb replay: {path} is neither UTF-8 nor GB18030 nor Big5 text: {exc}", file=sys.stderr)
        return 2
    except FormatError as exc:
        print(f"xqarb replay: {path}: {exc}", file=sys.stderr)
        return 2
    if not records:
        print(f"xqarb replay: no game found in {path}", file=sys.stderr)
        return 2
    status = 0
    out = sys.stdout
    for number, record in enumerate(records, start=1):
        game_id = f"{path.name}#{number}"
        try:
            events, stopped, unreadable = synthesize(record, game_id, ruleset=args.ruleset, level=args.level,
                                                     rapid=args.rapid)
        except ReplayError as exc:
            print(f"xqarb replay: {exc}", file=sys.stderr)
            status = 1
            continue
        board = None
        outputs = []
        for e in events:
            board, st = step(board, e)
            outputs.extend(st.outputs)
        if board is not None:  # the end of the record: what still waits for the camera is folded
            board, st = end_of_input(board)
            outputs.extend(st.outputs)
        if args.json:
            for o in outputs:
                out.write(o.to_json() + "\n")
        else:
            out.write(_describe_game(game_id, record, outputs, stopped))
        if unreadable:
            print(f"xqarb replay: {game_id}: {stopped}", file=sys.stderr)
            status = 1
    return status


def _describe_game(game_id: str, record: Any, outputs: list[Any], stopped: str | None) -> str:
    h = record.headers
    lines = [f"{game_id}  {h.get('Red', '?')} (red) - {h.get('Black', '?')} (black)"
             + (f"  [{h['Event']}]" if h.get("Event") else "")]
    ended = None
    for o in outputs:
        d = o.data
        if o.type == "MoveMade":
            lines.append(f"{d['ply']:>4}. {d['side']:<5}  {d['iccs']:<5}  {d['wxf']:<6}  {d['chinese']}")
        elif o.type == "Ruling":
            who = f" {d['side']}" if d["side"] else ""
            lines.append(f"      ruling: {d['kind']}{who}, {d['article']} ({d['ruleset']}): {d['message']}")
        elif o.type == "AttentionNeeded":
            lines.append(f"      attention: {d['reason']}")
        elif o.type == "GameEnded":
            ended = d
            lines.append(f"      game ended: {d['result']}, {d['article']} ({d['ruleset']}): {d['reason']}")
    if stopped:
        lines.append(f"      record: {stopped}")
    if ended is not None:
        lines.append(f"result: {ended['result']} ({ended['article']}, {ended['ruleset']})"
                     + ("" if record.result in (None, ended["result"]) else f"; the record says {record.result}"))
    else:
        lines.append(f"result: {record.result or '*'} as recorded (no ruling ended the game)")
    return "\n".join(lines) + "\n\n"

