"""Restart time of a long game's referee: the board's state rebuilt from the ledger, with and without a snapshot.

After a restart or a rebalance the referee rebuilds a board's state the first time one of its events arrives
(`Referee.rebuild`: read the latest game's entries, fold its inputs again). This measures that, on the longest
shared real game (342 plies), written through the referee into a real SQLite ledger in both input mixes of
bench/referee_throughput.py (`replay`: a BoardStable and a press per ply; `camera`: what a camera board sends,
seven inputs per ply), with the referee's snapshot taken TAIL inputs before the end (`Referee.take_snapshots`)
and without it: `Referee.rebuild` then loads the snapshot, reads and folds the entries after it and reads the
game's input ids (kept to refuse a reused id). Times are medians of REPEATS, CPU time of this process.

    .venv/bin/python bench/referee_restart.py [--json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from referee_throughput import camera_mix, shared_games

from xqarb.referee.cli import synthesize
from xqarb.referee.ledger import Origin, SqliteLedger
from xqarb.referee.rules import read_pgn
from xqarb.referee.service import Referee

REPEATS = 7
TAIL = 50  # inputs after the snapshot: a snapshot every 100 inputs leaves 50 on average
BATCH = 64  # inputs per append, as a poll batch


def _median_ms(fn: Callable[[], Any]) -> float:
    times = []
    for _ in range(REPEATS):
        start = time.process_time()
        fn()
        times.append((time.process_time() - start) * 1000)
    return statistics.median(times)


def measure(events: list[Any], folder: Path) -> dict[str, Any]:
    """Write the game through the referee, a snapshot TAIL inputs before its end; time both restarts."""
    db, bare = folder / "ledger.sqlite", folder / "bare.sqlite"
    board = events[0].board_id

    def feed(referee: Referee, part: list[Any], first: int) -> None:
        for start in range(0, len(part), BATCH):
            referee.handle_batch([(e, Origin("xq.bench", 0, first + start + i))
                                  for i, e in enumerate(part[start:start + BATCH])])

    cut = len(events) - TAIL
    with SqliteLedger(db) as ledger:
        referee = Referee(ledger)
        feed(referee, events[:cut], 0)
        start = time.process_time()
        referee.take_snapshots(min_inputs=1)
        snapshot_ms = (time.process_time() - start) * 1000
        feed(referee, events[cut:], cut)
        game = ledger.games(board_id=board)[-1].game_id
        entries = len(ledger.entries(game))
        snapshot_bytes = len(ledger.latest_snapshot(game)[1])
    shutil.copy(db, bare)
    with sqlite3.connect(bare) as raw:
        raw.execute("DELETE FROM snapshots")

    def restart(path: Path) -> Callable[[], Any]:
        def run() -> Any:
            with SqliteLedger(path) as fresh:
                referee = Referee(fresh)
                state = referee.rebuild(board)
                assert referee.resumed == (1 if path == db else 0)
                return state
        return run

    def read_only() -> Any:
        with SqliteLedger(bare) as fresh:
            return fresh.entries(game)

    full_state = restart(bare)()
    assert restart(db)().to_json() == full_state.to_json(), "the snapshot + tail is not the full re-fold"
    full_ms, snap_ms, read_ms = _median_ms(restart(bare)), _median_ms(restart(db)), _median_ms(read_only)
    return {"inputs": len(events), "entries": entries, "plies": len(full_state.game.moves),
            "full_rebuild_ms": round(full_ms, 1), "of_which_reading_entries_ms": round(read_ms, 1),
            "snapshot_plus_tail_ms": round(snap_ms, 1), "speedup": round(full_ms / snap_ms, 1),
            "taking_the_snapshot_ms": round(snapshot_ms, 1), "snapshot_bytes": snapshot_bytes}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    records = read_pgn((shared_games() / "ccpd_dev.pgn").read_text(encoding="utf-8"))
    longest = max(records, key=lambda r: len(r.moves))
    replay = synthesize(longest, "long-game").events
    results = {}
    for mix, events in (("replay", replay), ("camera", camera_mix(replay))):
        with tempfile.TemporaryDirectory() as tmp:
            results[mix] = measure(events, Path(tmp))
    if args.json:
        print(json.dumps(results))
        return 0
    for mix, r in results.items():
        print(f"{mix:>6}: {r['plies']} plies, {r['inputs']} inputs ({r['entries']} entries): full rebuild "
              f"{r['full_rebuild_ms']} ms (reading the entries {r['of_which_reading_entries_ms']} ms); snapshot + "
              f"{TAIL}-input tail {r['snapshot_plus_tail_ms']} ms ({r['speedup']}x; the snapshot: "
              f"{r['snapshot_bytes']} B, taken in {r['taking_the_snapshot_ms']} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
