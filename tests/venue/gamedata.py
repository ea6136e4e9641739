"""A short real game written into a ledger the way the referee writes it (inputs and its outputs)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from tests.venue.conftest import jpeg
from xqarb.events import Event, make_event
from xqarb.referee.ledger import Origin, Pending, SqliteLedger

# The first moves of the first shipped game (ccpd_dev-1), with their WXF and Chinese forms (7.5).
MOVES = [
    ("h2e2", "C2=5", "炮二平五"),
    ("h9g7", "H8+7", "馬８進７"),
    ("h0g2", "H2+3", "馬二進三"),
    ("i9h9", "R9=8", "車９平８"),
]


def ev(type_: str, board: str, seq: int, at: int, **fields: Any) -> Event:
    return make_event(type_, board, source="test", source_seq=seq, occurred_at=at, received_at=at, **fields)


START_FEN = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"


def play(fen: str, iccs: str) -> tuple[str, str]:
    """(FEN after, 90 squares after) of a move played from `fen` (moves here are legal; no rules checked)."""
    rows = []
    for row in fen.split()[0].split("/"):
        cells: list[str] = []
        for ch in row:
            cells.extend("." * int(ch) if ch.isdigit() else ch)
        rows.append(cells)

    def at(pt: str) -> tuple[int, int]:
        return 9 - int(pt[1]), ord(pt[0]) - 97

    (r0, f0), (r1, f1) = at(iccs[:2]), at(iccs[2:])
    rows[r1][f1], rows[r0][f0] = rows[r0][f0], "."
    parts = fen.split()
    side = "b" if parts[1] == "w" else "w"
    full = int(parts[5]) + (1 if side == "w" else 0)
    text = "/".join("".join(str(len(run)) if run[0] == "." else run for run in _runs("".join(r))) for r in rows)
    return f"{text} {side} - - 0 {full}", "".join("".join(r) for r in rows)


def _runs(row: str) -> list[str]:
    out: list[str] = []
    for ch in row:
        if out and ch == "." and out[-1][0] == ".":
            out[-1] += ch
        else:
            out.append(ch)
    return out


def write_game(ledger: SqliteLedger, frames_dir: Path, board: str, game: str, t0: int) -> dict[str, Any]:
    """GameStarted, then per move: a BoardStable with its evidence frame, the MoveMade, a ClockPressed; one Ruling."""
    fen = START_FEN
    ledger.append(
        game,
        board,
        [
            Pending(
                "input",
                ev(
                    "GameStarted",
                    board,
                    1,
                    t0,
                    game_id=game,
                    red_player="湖北李智平",
                    black_player="吉林胡慶陽",
                    time_control={"scheme": "increment", "base_ms": 3_600_000, "increment_ms": 30_000},
                ),
                Origin("xq.arbiter", 0, 1),
            )
        ],
    )
    red, black = 3_600_000, 3_600_000
    shas = []
    for i, (iccs, wxf, chinese) in enumerate(MOVES, start=1):
        at = t0 + i * 10_000_000
        fen, squares = play(fen, iccs)
        image = jpeg(seed=i)
        sha = hashlib.sha256(image).hexdigest()
        (frames_dir / sha[:2]).mkdir(parents=True, exist_ok=True)
        (frames_dir / sha[:2] / f"{sha}.jpg").write_bytes(image)
        shas.append(sha)
        side = "red" if i % 2 else "black"
        if side == "red":
            red -= 7_000
        else:
            black -= 9_000
        stable = ev("BoardStable", board, 10 + i, at, squares=squares, frame_sha256=sha, game_id=game)
        move = ev(
            "MoveMade",
            board,
            100 + i,
            at,
            game_id=game,
            ply=i,
            side=side,
            iccs=iccs,
            wxf=wxf,
            chinese=chinese,
            fen_after=fen,
            red_ms=red,
            black_ms=black,
        )
        press = ev("ClockPressed", board, 200 + i, at + 1, side=side, red_ms=red, black_ms=black, game_id=game)
        ledger.append(
            game,
            board,
            [
                Pending("input", stable, Origin("xq.observations", 0, i)),
                Pending("output", move),
                Pending("input", press, Origin("xq.clock", 0, i)),
            ],
        )
    ruling = ev(
        "Ruling",
        board,
        300,
        t0 + 60_000_000,
        game_id=game,
        kind="foul",
        side="black",
        article="5.3",
        message="touched piece not moved",
    )
    ledger.append(game, board, [Pending("output", ruling)])
    return {"shas": shas, "final_fen": fen, "entries": 1 + 3 * len(MOVES) + 1}
