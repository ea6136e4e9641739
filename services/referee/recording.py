"""Recording (记录), 7.1 / 7.2, and the recording fouls (2021 8.1.6, 2011 9.1.7), as pure functions.

Both players keep a scoresheet of every move (7.1: "双方应在对局过程中逐着认真记录"). A ScoresheetEntry (side =
the writer, ply, text) is valid when the text, read as Chinese, WXF or ICCS notation (`parse_move`) in the
position before that ply, is the move played at that ply. Illegible or duplicated entries (7.2, 2021) are invalid
and so count as missing. A writer is expected to have recorded everything up to its own previous move when it
moves again (one move of slack: the opponent's last move and one's own current one may still be written).
- 2021 7.1: every 4 unrecorded moves one foul, 8 or more two at once;
- 2011 7.1: every 4 *consecutive* missed moves one foul; 7.2: with under 3 minutes left a player may suspend
  recording until the next time period, and must fill in the missed moves then.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from xqarb.referee.rules import Move, NotationError, Position, parse_move


@dataclass(frozen=True, slots=True)
class RecordingState:
    red_valid: frozenset[int] = frozenset()
    black_valid: frozenset[int] = frozenset()
    entries: tuple[tuple[str, int, str], ...] = ()  # (side, ply, text), latest last
    red_excused: tuple[tuple[int, int], ...] = ()  # 2011 7.2: (ply, time period it was suspended in)
    black_excused: tuple[tuple[int, int], ...] = ()
    red_fouls: int = 0
    black_fouls: int = 0

    def valid(self, side: str) -> frozenset[int]:
        return self.red_valid if side == "red" else self.black_valid

    def fouls(self, side: str) -> int:
        return self.red_fouls if side == "red" else self.black_fouls

    def excused(self, side: str) -> tuple[tuple[int, int], ...]:
        return self.red_excused if side == "red" else self.black_excused

    def to_json(self) -> dict[str, object]:
        return {
            "red_recorded": sorted(self.red_valid), "black_recorded": sorted(self.black_valid),
            "red_fouls": self.red_fouls, "black_fouls": self.black_fouls,
        }


def entry_matches(position: Position, move: Move, text: str) -> tuple[bool, str]:
    """Does the entry read as the move? (True, "") or (False, why) for the arbiter."""
    try:
        read = parse_move(position, text)
    except NotationError as exc:
        return False, f"cannot be read: {exc}"
    if read != move:
        return False, f"reads as {read.iccs}, but {move.iccs} was played"
    return True, ""


def with_valid(rec: RecordingState, side: str, ply: int, ok: bool) -> RecordingState:
    cur = rec.valid(side)
    new = (cur | {ply}) if ok else (cur - {ply})
    return replace(rec, red_valid=new) if side == "red" else replace(rec, black_valid=new)


def add_entry(rec: RecordingState, side: str, ply: int, text: str, positions: Sequence[Position],
              moves: Sequence[Move]) -> tuple[RecordingState, str | None]:
    """Record an entry; (state, None) or (state, why it is invalid) when its ply has been played."""
    rec = replace(rec, entries=(*rec.entries, (side, ply, text)))
    if ply < 1 or ply > len(moves):
        return rec, None  # not played yet: checked when it is
    ok, why = entry_matches(positions[ply - 1], moves[ply - 1], text)
    return with_valid(rec, side, ply, ok), (None if ok else why)


def check_waiting(rec: RecordingState, ply: int, positions: Sequence[Position],
                  moves: Sequence[Move]) -> RecordingState:
    """A ply was just played: settle entries written for it in advance (the latest entry per writer counts)."""
    for side in ("red", "black"):
        texts = [t for s, p, t in rec.entries if s == side and p == ply]
        if texts:
            ok, _ = entry_matches(positions[ply - 1], moves[ply - 1], texts[-1])
            rec = with_valid(rec, side, ply, ok)
    return rec


def excuse(rec: RecordingState, side: str, ply: int, period: int) -> RecordingState:
    """2011 7.2: a move made with under 3 minutes left need not be recorded until the next time period."""
    if side == "red":
        return replace(rec, red_excused=(*rec.red_excused, (ply, period)))
    return replace(rec, black_excused=(*rec.black_excused, (ply, period)))


def missing(rec: RecordingState, side: str, required_upto: int, period: int) -> list[int]:
    """Plies 1..required_upto not validly on `side`'s scoresheet (and not excused in the current period)."""
    valid = rec.valid(side)
    excused = {p for p, per in rec.excused(side) if per == period}
    return [p for p in range(1, required_upto + 1) if p not in valid and p not in excused]


def fouls_due(missed: Sequence[int], consecutive_only: bool) -> int:
    """Recording fouls the missed plies are worth in total (7.1)."""
    if not consecutive_only:
        # 2021: every 4 one foul; 8 or more two at once (the same as counting by fours when they are reached).
        return len(missed) // 4
    runs, run, last = 0, 0, None
    for p in missed:
        run = run + 1 if last is not None and p == last + 1 else 1
        if run == 4:
            runs += 1
            run = 0
            last = None
            continue
        last = p
    return runs


def with_fouls(rec: RecordingState, side: str, n: int) -> RecordingState:
    return replace(rec, red_fouls=n) if side == "red" else replace(rec, black_fouls=n)
