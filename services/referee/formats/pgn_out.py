"""PGN export of a game's facts, moves in Chinese (7.5), ICCS or WXF notation.

Tags: the seven of the PGN standard (Event, Site, Date, Round, Red/Black in place of White/Black, Result), then
FEN where the game did not start from the standard position, Format (the move notation, as XiangQi PGN readers
expect it: "Chinese", "ICCS" or "WXF"), TimeControl, Termination and GameId.

- TimeControl follows the PGN standard's field (section 9.6.1), in seconds: "3600+30" for 6.1 (base + increment a
  move), "3600" for 6.3/6.4 sudden death, "30/3600:600" for 6.2 (30 moves in 3600 s, then 600 s for the rest),
  periods joined by ':'; a period that repeats is written once more after itself with a trailing '*'
  ("40/7200:20/3600*": 20 moves in 3600 s, again and again), which the standard cannot say otherwise. TimeControl
  gives Red's times; a 6.5 handicap (Black's other base time) goes into a second tag, BlackTimeControl (seconds).
- Termination: "<article>: <reason>" from GameEnded (e.g. "4.1.6: Red's time ran out"); absent while the game goes
  on.
- Each ruling is a comment `{<article>: <message>}` after the move it follows; the mover's clock after each move
  is `{[%clk h:mm:ss]}`, the form chess software reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .facts import FormatError, GameFacts, RecordedMove

NOTATIONS = ("chinese", "iccs", "wxf")
_FORMAT_TAG = {"chinese": "Chinese", "iccs": "ICCS", "wxf": "WXF"}
LINE_WIDTH = 78  # PGN export format: lines of at most 79 characters (standard 8.2.1)


def _seconds(ms: Any) -> str:
    if not isinstance(ms, int) or isinstance(ms, bool) or ms < 0:
        raise FormatError(f"time control: {ms!r} is not a number of milliseconds")
    return f"{ms // 1000}" if ms % 1000 == 0 else f"{ms / 1000:g}"


def time_control_tag(tc: Mapping[str, Any] | None) -> str:
    """The PGN TimeControl value of a GameStarted time control (Red's times; "" where there is none)."""
    if not tc:
        return ""
    scheme = tc.get("scheme")
    if scheme == "increment":  # 6.1
        return f"{_seconds(tc.get('base_ms'))}+{_seconds(tc.get('increment_ms', 0))}"
    if scheme == "sudden_death":  # 6.3 / 6.4
        return _seconds(tc.get("base_ms"))
    if scheme == "moves_in_time":  # 6.2
        parts = []
        for p in tc.get("periods") or ():
            text = _seconds(p.get("ms")) if p.get("moves") is None else f"{p['moves']}/{_seconds(p.get('ms'))}"
            parts.append(text + ("*" if p.get("repeat") else ""))
        return ":".join(parts)
    raise FormatError(f"time control: unknown scheme {scheme!r} (increment, moves_in_time or sudden_death)")


def black_time_control_tag(tc: Mapping[str, Any] | None) -> str:
    """6.5: Black's base (or first period) time in seconds where the organiser gave Black another; else ""."""
    if not tc or tc.get("black_base_ms") is None:
        return ""
    return _seconds(tc["black_base_ms"])


def termination_tag(facts: GameFacts) -> str:
    if facts.result == "*" or not (facts.article or facts.reason):
        return ""
    return f"{facts.article}: {facts.reason}" if facts.article and facts.reason else facts.article or facts.reason


def _tag_value(value: str) -> str:
    # PGN standard 8.1.1: a quote or backslash inside a tag value is escaped by a backslash.
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _comment(text: str) -> str:
    # A brace would end the comment early (PGN standard 8.2.5): written as the full-width forms instead.
    return "{" + text.replace("{", "｛").replace("}", "｝").replace("\n", " ") + "}"


def _clock_text(ms: int | None) -> str | None:
    if ms is None:
        return None
    s = max(0, ms) // 1000
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def move_text(move: RecordedMove, notation: str) -> str:
    if notation == "iccs":
        # ElephantEye's and XQStudio's ICCS form: H2-E2.
        return f"{move.iccs[:2].upper()}-{move.iccs[2:].upper()}"
    if notation == "wxf":
        return move.wxf or move.iccs
    return move.chinese or move.iccs


def pgn_tags(facts: GameFacts, notation: str = "chinese") -> list[tuple[str, str]]:
    tc = facts.time_control
    tags = [
        ("Game", "Chinese Chess"),
        ("Event", facts.event),
        ("Site", facts.site),
        ("Date", facts.date),
        ("Round", str(facts.round) if facts.round is not None else ""),
        ("Red", facts.red),
        ("Black", facts.black),
        ("Result", facts.result),
    ]
    if facts.board_no is not None:
        tags.append(("Board", str(facts.board_no)))
    if not facts.is_standard_start:
        tags.append(("FEN", facts.start_fen))
    tags.append(("Format", _FORMAT_TAG[notation]))
    optional = [("TimeControl", time_control_tag(tc)), ("BlackTimeControl", black_time_control_tag(tc)),
                ("Termination", termination_tag(facts)), ("GameId", facts.game_id)]
    tags.extend((k, v) for k, v in optional if v)
    return tags


def _wrap(tokens: list[str]) -> list[str]:
    lines, line = [], ""
    for token in tokens:
        if line and len(line) + len(token) + 1 > LINE_WIDTH:
            lines.append(line)
            line = token
        else:
            line = f"{line} {token}" if line else token
    lines.append(line)
    return lines


def write_pgn(facts: GameFacts, notation: str = "chinese") -> str:
    """The game as one PGN game text (ends with a newline)."""
    if notation not in NOTATIONS:
        raise FormatError(f"notation must be one of {', '.join(NOTATIONS)}, got {notation!r}")
    lines = [f'[{k} "{_tag_value(v)}"]' for k, v in pgn_tags(facts, notation)]
    lines.append("")
    rulings: dict[int, list[str]] = {}
    for r in facts.rulings:
        rulings.setdefault(r.after_ply, []).append(_comment(f"{r.article}: {r.message}" if r.article else r.message))
    body: list[str] = list(rulings.get(0, []))
    black_first = facts.start_fen.split()[1:2] == ["b"]
    for i, mv in enumerate(facts.moves):
        half = i + (1 if black_first else 0)  # half-moves from Red's first
        # A move number stays on the line of its move.
        number = f"{half // 2 + 1}. " if half % 2 == 0 else ("1. ... " if i == 0 else "")
        body.append(number + move_text(mv, notation))
        clk = _clock_text(mv.clock_ms)
        if clk:
            body.append(f"{{[%clk {clk}]}}")
        body.extend(rulings.get(i + 1, []))
    # Rulings after the last move recorded (a ruling naming a later ply than was played) still appear.
    for after, texts in sorted(rulings.items()):
        if after > len(facts.moves):
            body.extend(texts)
    body.append(facts.result)
    return "\n".join(lines + _wrap(body)) + "\n"
