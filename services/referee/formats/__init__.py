"""Game record formats (pure: values in, values out, no I/O): a game's recorded facts written as PGN (Chinese,
ICCS or WXF moves), DhtmlXQ/UBB or XQF, and DhtmlXQ and XQF read back as game records for the rules core.

- `facts_from_entries(game_id, ledger entries)`, `facts_from_record(GameRecord)` -> `GameFacts`;
- `write_pgn(facts, notation)`, `write_dhtmlxq(facts)`, `write_xqf(facts)`, `export(facts, format)`;
- `read_dhtmlxq(text)`, `read_xqf(bytes)` -> `GameRecord`s (moves in ICCS), `read_records(bytes)` for any of
  them or PGN.
"""

from __future__ import annotations

from .dhtmlxq import is_dhtmlxq, read_dhtmlxq, write_dhtmlxq
from .facts import FormatError, GameFacts, RecordedMove, RecordedRuling, facts_from_entries, facts_from_record
from .pgn_out import NOTATIONS, time_control_tag, write_pgn
from .xqf import read_xqf, write_xqf

# Export formats by name, as `xqarb export --format` and the API name them.
FORMATS = ("pgn", "pgn-iccs", "pgn-wxf", "dhtmlxq", "xqf")


def export(facts: GameFacts, fmt: str) -> bytes:
    """The game in one of FORMATS, as the bytes of its file (text formats in UTF-8)."""
    if fmt == "xqf":
        return write_xqf(facts)
    if fmt == "dhtmlxq":
        return write_dhtmlxq(facts).encode("utf-8")
    if fmt in ("pgn", "pgn-chinese", "pgn-iccs", "pgn-wxf"):
        return write_pgn(facts, fmt[4:] or "chinese").encode("utf-8")
    raise FormatError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")


__all__ = [
    "FORMATS", "NOTATIONS", "FormatError", "GameFacts", "RecordedMove", "RecordedRuling", "export",
    "facts_from_entries", "facts_from_record", "is_dhtmlxq", "read_dhtmlxq", "read_xqf", "time_control_tag",
    "write_dhtmlxq", "write_pgn", "write_xqf",
]
