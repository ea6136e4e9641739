"""Black-box contract tests: the installed `xqarb` console script, run as a subprocess the way an outside check runs
it, against DESIGN.md's "Command-line contract", "HTTP contract" and the JSON form of the "Event catalogue".

Nothing here imports the product's internals to compute an expected value: positions are derived with pyffish
(Fairy-Stockfish, a test-only reference) and the real games of ../shared/data.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

START_FEN = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"
T0 = 1_767_225_600_000_000  # 2026-01-01T00:00:00Z in microseconds
ICCS_RE = re.compile(r"^[a-i][0-9][a-i][0-9]$")
COMMON_FIELDS = ("type", "event_id", "board_id", "source", "source_seq", "occurred_at", "received_at")
SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"


def xqarb_command() -> list[str]:
    """The console script beside this interpreter (the installed entry point), else `python -m xqarb.cli`."""
    script = Path(sys.executable).parent / "xqarb"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "xqarb.cli"]


def run_xqarb(args: Sequence[str], *, stdin: str | None = None, cwd: Path | None = None,
              timeout: float = 120, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONIOENCODING="utf-8", **(env or {}))
    return subprocess.run([*xqarb_command(), *map(str, args)], input=stdin, capture_output=True, text=True,
                          encoding="utf-8", cwd=cwd, env=env, timeout=timeout, check=False)


@pytest.fixture
def xq(tmp_path: Path):
    """`xq("rules", "legal", fen)` -> CompletedProcess, run in a scratch directory (no stray ./var in the tree)."""
    def call(*args: str, stdin: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return run_xqarb(args, stdin=stdin, cwd=tmp_path, timeout=timeout)
    return call


# ----------------------------------------------------------------------------------------------- positions


def fen_squares(fen: str) -> str:
    """The 90-character `squares` form (rank 9 first, files a..i) of a FEN's placement."""
    rows = fen.split()[0].split("/")
    assert len(rows) == 10, fen
    out = "".join(re.sub(r"\d", lambda m: "." * int(m.group()), r) for r in rows)
    assert len(out) == 90, fen
    return out


def iccs_to_sf(move: str) -> str:
    """ICCS (ranks 0-9) -> Fairy-Stockfish's coordinates (ranks 1-10)."""
    return f"{move[0]}{int(move[1]) + 1}{move[2]}{int(move[3]) + 1}"


def sf_to_iccs(move: str) -> str:
    m = re.fullmatch(r"([a-i])(\d+)([a-i])(\d+)", move)
    assert m, move
    return f"{m[1]}{int(m[2]) - 1}{m[3]}{int(m[4]) - 1}"


def sf_legal(fen: str) -> list[str]:
    import pyffish as sf
    return sorted(sf_to_iccs(m) for m in sf.legal_moves("xiangqi", fen, []))


def sf_after(fen: str, moves: Sequence[str]) -> str:
    import pyffish as sf
    return sf.get_fen("xiangqi", fen, [iccs_to_sf(m) for m in moves])


def board_part(fen: str) -> tuple[str, str]:
    """Placement and side to move (`r` and `w` both mean Red): what two FENs of one position share."""
    parts = fen.split()
    return parts[0], {"r": "w"}.get(parts[1], parts[1])


def load_games(shared_data: Path, name: str, count: int) -> list[dict[str, Any]]:
    out = []
    with open(shared_data / "games" / name, encoding="utf-8") as fh:
        for line in fh:
            out.append(json.loads(line))
            if len(out) == count:
                break
    return out


def pgn_games(shared_data: Path, name: str, count: int) -> str:
    """The first `count` games of a shared PGN file, verbatim."""
    text = (shared_data / "games" / name).read_text(encoding="utf-8").replace("\r\n", "\n")
    # A game starts with the first tag of a header block: a "[" line at the top or after a blank line.
    heads = [0 if m.group().startswith("[") else m.end() - 1 for m in re.finditer(r"\A\[|\n\n\[", text)]
    end = heads[count] if count < len(heads) else len(text)
    return text[:end]


# ----------------------------------------------------------------------------------------------- events


class Board:
    """Input events of one board in DESIGN's JSON form (`event_id`, `source`, `source_seq`, `received_at` left
    out, as the contract allows), with the position tracked by pyffish."""

    def __init__(self, board: str = "b1", game: str = "g1", fen: str = START_FEN, **game_fields: Any) -> None:
        self.board = board
        self.game = game
        self.fen = fen
        self.t = 0.0
        self.lines: list[dict[str, Any]] = []
        fields: dict[str, Any] = {
            "game_id": game, "red_player": "Red", "black_player": "Black",
            "time_control": {"scheme": "increment", "base_ms": 3_600_000, "increment_ms": 30_000},
            "recording_required": False,
        }
        if fen != START_FEN:
            fields["start_fen"] = fen
        fields.update(game_fields)
        self.add("GameStarted", dt=0, **fields)

    @property
    def side(self) -> str:
        return "red" if self.fen.split()[1] in ("w", "r") else "black"

    def add(self, type_: str, dt: float = 1.0, **fields: Any) -> Board:
        self.t += dt
        self.lines.append({"type": type_, "board_id": self.board, "occurred_at": T0 + round(self.t * 1e6),
                           **fields})
        return self

    def stable(self, squares: str | None = None, dt: float = 1.0) -> Board:
        sq = squares if squares is not None else fen_squares(self.fen)
        return self.add("BoardStable", dt=dt, squares=sq, frame_sha256=f"{len(self.lines):064x}")

    def press(self, side: str, dt: float = 0.5) -> Board:
        return self.add("ClockPressed", dt=dt, side=side)

    def move(self, iccs: str) -> Board:
        """The side to move plays: the camera sees the new position, then the mover presses the clock."""
        side = self.side
        self.fen = sf_after(self.fen, [iccs])
        self.stable(dt=5.0)
        return self.press(side)

    def jsonl(self) -> str:
        return "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in self.lines)


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def schema_fields() -> dict[str, dict[str, Any]]:
    """Record name -> {field name: field} from schemas/*.avsc."""
    out = {}
    for path in sorted(SCHEMAS.glob("*.avsc")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        out[schema["name"]] = {f["name"]: f for f in schema["fields"]}
    return out


def check_output_event(event: dict[str, Any], schemas: dict[str, dict[str, Any]]) -> None:
    """An output event in the JSON form: the common fields, and every schema field without a default present
    with a value of the right JSON kind; no field the schema does not know."""
    for name in COMMON_FIELDS:
        assert name in event, f"{name} missing from {event}"
    assert event["type"] in schemas, f"unknown event type {event['type']}"
    fields = schemas[event["type"]]
    for name, field in fields.items():
        if "default" not in field:
            assert name in event, f"{event['type']}: required field {name} missing from {event}"
    extra = set(event) - set(fields) - {"type"}
    assert not extra, f"{event['type']}: fields not in the schema: {extra}"
    assert isinstance(event["event_id"], str) and event["event_id"]
    assert isinstance(event["board_id"], str) and isinstance(event["source"], str)
    for name in ("source_seq", "occurred_at", "received_at"):
        assert isinstance(event[name], int) and not isinstance(event[name], bool), (name, event)
    assert event["occurred_at"] > 10**15, "times are microseconds since the epoch"
    if event["type"] == "MoveMade":
        assert ICCS_RE.match(event["iccs"]) and event["side"] in ("red", "black")
        assert isinstance(event["ply"], int) and event["ply"] >= 1
        assert event["wxf"] and event["chinese"] and len(event["fen_after"].split("/")) == 10
    if event["type"] == "Ruling":
        assert event["kind"] in ("foul", "loss", "draw", "obligation", "correction", "warning"), event
        assert re.fullmatch(r"\d+(\.\d+)*", event["article"]), event
    if event["type"] == "GameEnded":
        assert event["result"] in ("1-0", "0-1", "1/2-1/2"), event
        assert re.fullmatch(r"\d+(\.\d+)*", event["article"]), event
