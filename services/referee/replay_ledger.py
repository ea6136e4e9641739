"""`xqarb replay-ledger --game ID [--db PATH] [--json]`: what the installed fold would rule differently.

An appeal can come after an upgrade. The ledger holds a game's inputs and the outputs the referee of its time
gave (with the versions that gave them, version.py); this command folds the same inputs again with the installed
fold and lists every output that would now differ: which input it follows, its ply and article, the old output and
the new one. Each input's outputs are compared by what they say (type and fields, without the envelope's id and
number, which shift when an output before them comes or goes): an output that would no longer be given, or a new
one, shows with one side empty; outputs that only moved are counted apart.
Exit status: 0 every output is the same, 1 some would differ, 2 cannot check (no ledger, no such game).
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xqarb.config import ledger_path
from xqarb.events import Event
from xqarb.referee.board import BoardState, fold, step
from xqarb.referee.ledger import LedgerEntry, SqliteLedger
from xqarb.referee.service import UNASSIGNED_PREFIX
from xqarb.referee.version import Versions, differs, installed_for, recorded_in


@dataclass(frozen=True, slots=True)
class Difference:
    """One output the installed fold would give otherwise (old or new is None where it gives none)."""

    input_seq: int  # the ledger entry of the input the output follows
    input_type: str
    ply: int | None  # the output's own ply, else the game's ply after the input
    article: str | None  # the new output's article, else the old one's (None: the output names none)
    type: str
    old: dict[str, Any] | None
    new: dict[str, Any] | None
    written_by: Versions | None  # the versions the ledger records for the old output (None: none recorded)

    def to_json(self) -> dict[str, Any]:
        return {"input_seq": self.input_seq, "input_type": self.input_type, "ply": self.ply, "article": self.article,
                "type": self.type, "old": self.old, "new": self.new,
                "written_by": None if self.written_by is None else self.written_by.to_json()}


def _article(out: Event | None) -> str | None:
    return (out.data.get("article") or None) if out is not None else None


def _content(out: Event) -> str:
    """What an output says, without its envelope (ids and numbers shift when an output before it comes or goes)."""
    return json.dumps({"type": out.type, **out.to_json_dict(), "event_id": None, "source_seq": None},
                      sort_keys=True, ensure_ascii=False)


def _compare(seq: int, cause: Event, old: Sequence[Event], new: Sequence[Event], state: BoardState,
             written_by: Versions | None) -> tuple[list[Difference], int]:
    """The outputs of one input that say something else now, and how many say the same under another number."""
    game_ply = state.game.ply if state.game is not None else None
    found: list[Difference] = []
    renumbered = 0

    def differ(a: Event | None, b: Event | None) -> None:
        shown = b if b is not None else a
        assert shown is not None
        ply = shown.data.get("ply")
        found.append(Difference(seq, cause.type, ply if isinstance(ply, int) else game_ply,
                                _article(b) or _article(a), shown.type,
                                a.to_json_dict() if a is not None else None,
                                b.to_json_dict() if b is not None else None, written_by))

    matcher = difflib.SequenceMatcher(a=[_content(o) for o in old], b=[_content(o) for o in new], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            renumbered += sum(old[i] != new[j] for i, j in zip(range(i1, i2), range(j1, j2), strict=True))
            continue
        olds, news = list(old[i1:i2]), list(new[j1:j2])
        for k in range(max(len(olds), len(news))):
            differ(olds[k] if k < len(olds) else None, news[k] if k < len(news) else None)
    return found, renumbered


@dataclass(frozen=True, slots=True)
class Replayed:
    differences: tuple[Difference, ...]
    renumbered: int  # outputs that say the same but under another id and number (an output before them changed)


def differences(entries: Sequence[LedgerEntry], before: BoardState | None = None) -> Replayed:
    """Every output of these entries (one chain, in order) that the installed fold would give otherwise.

    `before` is the board's state before the chain's first input (the board's previous game, whose result a
    GameStarted looks at); None for a board's first game.
    """
    found: list[Difference] = []
    renumbered = 0
    state = before
    written_by: Versions | None = None
    i = 0
    while i < len(entries):
        entry = entries[i]
        i += 1
        if entry.referee is not None:
            written_by = Versions.from_json(entry.referee)
        if entry.kind != "input":
            continue  # outputs before any input: nothing to re-fold them from
        old: list[Event] = []
        while i < len(entries) and entries[i].kind != "input":
            old.append(entries[i].event)
            i += 1
        state, st = step(state, entry.event)
        diffs, moved = _compare(entry.seq, entry.event, old, st.outputs, state, written_by)
        found.extend(diffs)
        renumbered += moved
    return Replayed(tuple(found), renumbered)


def _board_before(ledger: SqliteLedger, game_id: str, board_id: str) -> BoardState | None:
    """The board's state before the game: its previous game's inputs folded (None: the board's first game)."""
    games = [g.game_id for g in ledger.games(board_id=board_id) if not g.game_id.startswith(UNASSIGNED_PREFIX)]
    if game_id.startswith(UNASSIGNED_PREFIX) or game_id not in games or games.index(game_id) == 0:
        return None
    previous = games[games.index(game_id) - 1]
    inputs = [e.event for e in ledger.entries(previous) if e.kind == "input"]
    return fold(inputs) if inputs else None


def _describe(v: Versions | None) -> str:
    return v.describe() if v is not None else "no recorded version"


def _text(game_id: str, inputs: int, recorded: list[tuple[int, Versions]], now: Versions,
          replayed: Replayed) -> str:
    found = replayed.differences
    lines = [f"game {game_id}: {inputs} inputs folded again with the installed {now.describe()}"]
    lines.append("written by: " + ("; ".join(f"{v.describe()} (from entry {seq})" for seq, v in recorded)
                                   if recorded else "no recorded version (a ledger from before versions)"))
    if not found and not replayed.renumbered:
        lines.append("every output is the same")
        return "\n".join(lines) + "\n"
    lines.append(f"{len(found)} output(s) would differ:")
    for d in found:
        ply = f"ply {d.ply}" if d.ply is not None else "no ply"
        lines.append(f"- {d.type} at {ply}, article {d.article or '-'}, after input #{d.input_seq} ({d.input_type}); "
                     f"written by {_describe(d.written_by)}")
        lines.append(f"    old: {json.dumps(d.old, ensure_ascii=False) if d.old else '(none)'}")
        lines.append(f"    new: {json.dumps(d.new, ensure_ascii=False) if d.new else '(none)'}")
    if replayed.renumbered:
        lines.append(f"{replayed.renumbered} other output(s) say the same under another id and number (an output "
                     "before them came or went)")
    return "\n".join(lines) + "\n"


def cmd_replay_ledger(args: argparse.Namespace) -> int:
    path = Path(args.db) if getattr(args, "db", None) else ledger_path()
    if not path.exists():
        print(f"xqarb replay-ledger: no ledger at {path} (give --db PATH)", file=sys.stderr)
        return 2
    with SqliteLedger(path) as ledger:
        board = ledger.board_of(args.game)
        if board is None:
            print(f"xqarb replay-ledger: no game {args.game!r} in the ledger {path}", file=sys.stderr)
            return 2
        entries = ledger.entries(args.game)
        before = _board_before(ledger, args.game, board)
    replayed = differences(entries, before)
    recorded = recorded_in(entries)
    now = installed_for(entries)
    inputs = sum(1 for e in entries if e.kind == "input")
    if getattr(args, "json", False):
        print(json.dumps({
            "game_id": args.game, "inputs": inputs, "installed": now.to_json(),
            "recorded": [{"seq": seq, **v.to_json()} for seq, v in recorded],
            "installed_differs": differs(recorded[-1][1] if recorded else None, now),
            "differences": [d.to_json() for d in replayed.differences],
            "renumbered": replayed.renumbered,
        }, ensure_ascii=False))
    else:
        sys.stdout.write(_text(args.game, inputs, recorded, now, replayed))
    return 1 if replayed.differences or replayed.renumbered else 0
