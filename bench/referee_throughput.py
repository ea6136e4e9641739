"""Referee throughput: input events per second per core through the fold (the game as a fold, board routing).

Two input mixes, both from the shared real games (../shared/data/games), replayed as a board would send them:
- `replay`: what `xqarb replay` synthesises: per move one BoardStable and the mover's ClockPressed;
- `camera`: what a camera board sends around a move: HandEntered, PieceLifted, PiecePlaced, HandLeft, the
  BoardStable snapshot twice (vision repeats a still board), the ClockPressed. Most of these change nothing, as
  in a venue, where the board is still far more often than a move is made.
Timing is CPU time of this process (time.process_time), so the figure is per core even on a shared machine;
wall time is printed beside it. With the ledger: the same streams through the referee's ledger adapter
(`xqarb.referee.service.Referee`: dedupe by event id, fold, hash-chained SQLite append), one transaction per
poll-sized batch as the Kafka service appends, on a real SQLite file in WAL mode. `camera+ledger, late in the
day` appends the same games `--day` times first (each time as other boards, a day later), so the figure is the one
a venue sees at its evening peak, with the day's entries already in the ledger.

    .venv/bin/python bench/referee_throughput.py [--games N] [--json]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from xqarb.collector import tune_for_service
from xqarb.events import Event, make_event
from xqarb.referee.board import BoardState, step
from xqarb.referee.cli import synthesize
from xqarb.referee.rules import read_pgn

ROOT = Path(__file__).resolve().parents[1]
GOAL = 20_000  # input events per second per core through fold + ledger (issue 5)


def shared_games() -> Path:
    for candidate in (ROOT.parent / "shared" / "data" / "games", ROOT.parent.parent / "shared" / "data" / "games"):
        if candidate.is_dir():
            return candidate
    raise SystemExit("bench: the shared real games (../shared/data/games) are not beside this clone")


def load_streams(games: int) -> list[list[Event]]:
    """One input stream per game (the `replay` mix), half from each shared PGN file."""
    folder = shared_games()
    streams = []
    for name in ("ccpd_dev", "liu_dahua_iccs"):
        records = read_pgn((folder / f"{name}.pgn").read_text(encoding="utf-8"))[: max(1, games // 2)]
        for number, record in enumerate(records, start=1):
            streams.append(synthesize(record, f"{name}#{number}").events)
    return streams


def camera_mix(stream: Sequence[Event]) -> list[Event]:
    """The same game as a camera board sends it: hand, lift, place, hand gone, the still board twice, the press."""
    out: list[Event] = [stream[0]]
    seq = 10_000_000
    prev: str | None = None
    for e in stream[1:]:
        if e.type != "BoardStable":
            out.append(e)
            continue
        squares = e.data["squares"]
        frm = to = "e5"
        if prev is not None:
            changed = [i for i in range(90) if prev[i] != squares[i]]
            pts = [f"{'abcdefghi'[i % 9]}{9 - i // 9}" for i in changed]
            frm = next((p for i, p in zip(changed, pts, strict=True) if squares[i] == "."), pts[0] if pts else "e5")
            to = next((p for p in pts if p != frm), frm)
        prev = squares
        extra = [("HandEntered", -3_000_000, {}), ("PieceLifted", -2_500_000, {"point": frm}),
                 ("PiecePlaced", -1_000_000, {"point": to}), ("HandLeft", -500_000, {}), None,
                 ("BoardStable", 200_000, {"squares": squares, "frame_sha256": e.data["frame_sha256"]})]
        for item in extra:
            if item is None:
                out.append(e)
                continue
            type_, dt, fields = item
            seq += 1
            out.append(make_event(type_, e.board_id, source="cam", source_seq=seq, occurred_at=e.occurred_at + dt,
                                  received_at=e.occurred_at + dt, **fields))
    return out


def measure(streams: Sequence[Sequence[Event]], repeat: int = 1) -> dict[str, float]:
    """Fold every stream (one board each) `repeat` times; events per CPU second and per wall second."""
    n = sum(len(s) for s in streams) * repeat
    outputs = 0
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for _ in range(repeat):
        for stream in streams:
            state: BoardState | None = None
            for e in stream:
                state, st = step(state, e)
                outputs += len(st.outputs)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    return {"events": n, "outputs": outputs, "cpu_s": round(cpu, 3), "wall_s": round(wall, 3),
            "events_per_cpu_s": round(n / cpu) if cpu else 0.0, "events_per_wall_s": round(n / wall) if wall else 0.0}


def another_day(events: Sequence[Event], day: int) -> list[Event]:
    """The same inputs as other boards' games `day` days later (new event ids, board ids, game ids and times)."""
    shift = day * 86_400_000_000
    out = []
    for e in events:
        data = dict(e.data)
        if data.get("game_id"):
            data["game_id"] = f"{data['game_id']}~{day}"
        out.append(dataclasses.replace(e, event_id=f"{e.event_id}~{day}", board_id=f"{e.board_id}~{day}", data=data,
                                       occurred_at=e.occurred_at + shift, received_at=e.received_at + shift))
    return out


def measure_with_ledger(streams: Sequence[Sequence[Event]], batch: int = 500, days_before: int = 0
                        ) -> dict[str, float]:
    """Fold + ledger: boards interleaved as a partition delivers them, appended `batch` inputs a transaction.
    `days_before`: append the same inputs that many times first (other boards, earlier), not measured."""
    from xqarb.referee.ledger import SqliteLedger
    from xqarb.referee.service import Referee

    interleaved: list[Event] = []
    longest = max(len(s) for s in streams)
    for i in range(longest):  # many boards play at once: round-robin over the games
        interleaved.extend(s[i] for s in streams if i < len(s))
    n = len(interleaved)
    with tempfile.TemporaryDirectory(prefix="xqarb-bench-") as folder:
        ledger = SqliteLedger(Path(folder) / "ledger.sqlite")
        referee = Referee(ledger)

        def append_all(events: Sequence[Event]) -> int:
            """The events appended `batch` at a time, as the Kafka service polls them; the outputs' count."""
            return sum(len(referee.handle_batch([(e, None) for e in events[start : start + batch]]))
                       for start in range(0, len(events), batch))

        for day in range(days_before):
            append_all(another_day(interleaved, day - days_before))
        before = referee.appended
        cpu0, wall0 = time.process_time(), time.perf_counter()
        outputs = append_all(interleaved)
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        entries = referee.appended - before
        ledger.close()
    return {"events": n, "outputs": outputs, "ledger_entries": entries, "entries_before": before,
            "cpu_s": round(cpu, 3),
            "wall_s": round(wall, 3), "events_per_cpu_s": round(n / cpu) if cpu else 0.0,
            "events_per_wall_s": round(n / wall) if wall else 0.0}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100, help="real games to fold (half from each file)")
    parser.add_argument("--day", type=int, default=5,
                        help="times the games are appended before the late-in-the-day figure (0: no such figure)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    streams = load_streams(args.games)
    camera = [camera_mix(s) for s in streams]
    # The service's collector settings (`xqarb referee serve` and `xqarb up` make them once started): the loaded
    # inputs are frozen with the start-up objects, as a service holds only a poll's worth of inputs at a time.
    tune_for_service()
    results = {
        "replay": measure(streams),
        "camera": measure(camera),
        "replay+ledger": measure_with_ledger(streams),
        "camera+ledger": measure_with_ledger(camera),
    }
    if args.day:
        results["camera+ledger, late in the day"] = measure_with_ledger(camera, days_before=args.day)
    moves = sum(sum(1 for e in s if e.type == "ClockPressed") for s in streams)
    if args.json:
        print(json.dumps({"games": len(streams), "moves": moves, "goal": GOAL, **results}))
        return 0
    print(f"referee fold throughput: {len(streams)} real games, {moves} moves (CPU time of one process)")
    for mix, r in results.items():
        print(f"  {mix:<14} {r['events']:>8} input events  {r['events_per_cpu_s']:>8,.0f} events/s per core "
              f"({r['events_per_cpu_s'] / GOAL:.2f} x the {GOAL:,}/s goal; wall {r['events_per_wall_s']:,.0f}/s)"
              + (f" after {r['entries_before']:,} entries" if r.get("entries_before") else ""))
    venue = results["camera+ledger"]["events_per_cpu_s"] / GOAL
    worst = results["replay+ledger"]["events_per_cpu_s"] / GOAL
    print(f"goal, a venue's input (camera+ledger): {venue:.2f} x ({'met' if venue >= 1 else 'NOT met'}); "
          f"every input a move (replay+ledger, the worst case, as `xqarb replay` feeds it): {worst:.2f} x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
