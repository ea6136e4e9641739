"""The ledger's two stores side by side: entries appended per second, SQLite file against PostgreSQL server.

The referee's write pattern: per poll, look the batch's inputs up (`find_events`), then append them and their
outputs in one transaction (`append_looked_up`), `--batch` inputs over `--games` games; and one entry per call
(`append`, a commit each), which is what an arbiter's action costs. PostgreSQL runs as a throw-away server from
Debian's binaries (tests/pgserver.py) on this machine, over TCP on 127.0.0.1, in two settings:
- `synchronous_commit=off`: a crash of the server may lose the last transactions but never corrupts the ledger,
  the guarantee of the SQLite store (WAL, synchronous=NORMAL); the inputs are still in Kafka and read again;
- `synchronous_commit=on`, PostgreSQL's default: each commit waits for the WAL on disk.
`--writers 2` adds two processes appending to one PostgreSQL ledger at once (disjoint games, as two referees with
their own partitions), for the total. CPU time is this process's only; the server's is not in it (wall rates are).

    .venv/bin/python bench/ledger_stores.py [--batches N] [--batch N] [--games N] [--json]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.pgserver import PostgresServer  # noqa: E402
from xqarb.events import Event, make_event  # noqa: E402
from xqarb.referee.ledger import Batch, Pending, open_ledger  # noqa: E402

T0 = 1_767_225_600_000_000  # µs


def _input(game: int, n: int, writer: int) -> Event:
    return make_event("ClockPressed", f"b{writer}-{game}", source=f"clock-{writer}-{game}", source_seq=n,
                      occurred_at=T0 + n * 1000 + game, received_at=T0 + n * 1000 + game + 50,
                      side="red" if n % 2 else "black", red_ms=None, black_ms=None)


def _batches(count: int, size: int, games: int, writer: int = 0) -> list[list[Batch]]:
    """`count` polls of `size` inputs spread over `games` games (each input appended alone, as an input that
    changes nothing is)."""
    polls = []
    n = 0
    for _ in range(count):
        poll = []
        for _ in range(size):
            n += 1
            game = n % games
            poll.append(Batch(f"g{writer}-{game}", f"b{writer}-{game}", (Pending("input", _input(game, n, writer)),)))
        polls.append(poll)
    return polls


def _timed(work: Callable[[], int]) -> dict[str, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    entries = work()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"entries": entries, "per_s_wall": entries / wall, "cpu_us_per_entry": cpu / entries * 1e6}


def measure(target: str | Path, polls: list[list[Batch]], singles: int, writer: int = 0) -> dict[str, Any]:
    with open_ledger(target) as ledger:
        def batched() -> int:
            total = 0
            for poll in polls:
                ledger.find_events([item.event for batch in poll for item in batch.pending])
                total += ledger.append_looked_up(poll)
            return total

        def one_by_one() -> int:
            for i in range(singles):
                ledger.append(f"s{writer}", "s", [Pending("input", _input(10_000, 10_000_000 + i, writer))])
            return singles

        return {"batched": _timed(batched), "single": _timed(one_by_one) if singles else None}


def _writer(url: str, count: int, size: int, games: int, writer: int, out: Any) -> None:
    polls = _batches(count, size, games, writer)
    started = time.monotonic()  # the system's monotonic clock: comparable between the processes
    entries = measure(url, polls, 0, writer)["batched"]["entries"]
    out.put((started, time.monotonic(), entries))


def concurrent(url: str, count: int, size: int, games: int, writers: int) -> dict[str, float]:
    queue: Any = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=_writer, args=(url, count, size, games, 100 + w, queue))
             for w in range(writers)]
    for p in procs:
        p.start()
    results = [queue.get() for _ in procs]
    for p in procs:
        p.join()
    wall = max(end for _, end, _ in results) - min(start for start, _, _ in results)
    entries = sum(n for _, _, n in results)
    return {"entries": entries, "per_s_wall": entries / wall, "writers": writers}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=100, help="polls appended (default 100)")
    parser.add_argument("--batch", type=int, default=100, help="inputs per poll (default 100)")
    parser.add_argument("--games", type=int, default=25, help="games the inputs are spread over (default 25)")
    parser.add_argument("--singles", type=int, default=500, help="one-entry appends (default 500)")
    parser.add_argument("--writers", type=int, default=2, help="concurrent PostgreSQL writers (default 2; 0: none)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    polls = _batches(args.batches, args.batch, args.games)
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as folder:
        results["sqlite"] = measure(Path(folder) / "ledger.sqlite", polls, args.singles)
    for name, commit in (("postgres sync off", "off"), ("postgres sync on", "on")):
        with PostgresServer(("-c", f"synchronous_commit={commit}")) as server:
            results[name] = measure(server.url(), polls, args.singles)
            if args.writers and commit == "off":
                results[f"postgres sync off, {args.writers} writers"] = concurrent(
                    server.url(), args.batches, args.batch, args.games, args.writers)
    if args.json:
        print(json.dumps(results, indent=1))
        return 0
    print(f"{args.batches} polls of {args.batch} inputs over {args.games} games; {args.singles} one-entry appends")
    for name, r in results.items():
        if "batched" not in r:
            print(f"  {name:34} batched {r['per_s_wall']:>9,.0f} entries/s in total")
            continue
        b, s = r["batched"], r["single"]
        print(f"  {name:34} batched {b['per_s_wall']:>9,.0f} entries/s ({b['cpu_us_per_entry']:.0f} us CPU each)"
              f"   one by one {s['per_s_wall']:>7,.0f}/s ({s['cpu_us_per_entry']:.0f} us CPU each)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
