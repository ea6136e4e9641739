"""Referee cost per input event in instructions (valgrind's callgrind), a figure a shared, loaded machine does not move.

CPU seconds on a shared machine vary by 10 % or more with the other work on it; the count of instructions
executed does not. For each mix of `bench/referee_throughput.py` (replay, camera; fold alone or with the SQLite
ledger) this runs the streams of N real games under callgrind twice, with and without the measured part, and
prints the difference per input event. Compare two versions of the code by running it in each (a few minutes per
mix). Needs `valgrind` on the PATH.

    .venv/bin/python bench/referee_instructions.py [--games 20] [--mix camera+ledger ...]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
MIXES = ("replay", "camera", "replay+ledger", "camera+ledger")


def _work(mix: str, games: int, measure: bool) -> int:
    """Load the streams (always) and run the mix (only when measuring); the number of input events."""
    sys.path.insert(0, str(HERE))
    import referee_throughput as rt

    from xqarb.collector import tune_for_service

    streams = rt.load_streams(games)
    if mix.startswith("camera"):
        streams = [rt.camera_mix(s) for s in streams]
    from xqarb.referee.ledger import SqliteLedger  # noqa: F401  (imported in both runs: not part of the figure)
    from xqarb.referee.service import Referee  # noqa: F401

    tune_for_service()  # as the throughput bench and the service (in both runs: not part of the figure)
    if measure:
        (rt.measure_with_ledger if mix.endswith("ledger") else rt.measure)(streams)
    return sum(len(s) for s in streams)


def _instructions(mix: str, games: int, measure: bool) -> int:
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, __file__, "--inner",
           mix, str(games), "1" if measure else "0"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stderr
    found = re.search(r"Collected : (\d+)", out)
    if found is None:
        raise SystemExit(f"no instruction count in valgrind's output:\n{out[-2000:]}")
    return int(found.group(1))


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--inner"]:
        print(_work(args[1], int(args[2]), args[3] == "1"))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--mix", choices=MIXES, nargs="+", default=list(MIXES))
    opts = parser.parse_args(args)
    if shutil.which("valgrind") is None:
        raise SystemExit("bench: valgrind is not installed (it counts the instructions)")
    for mix in opts.mix:
        events = _work(mix, opts.games, measure=False)
        per_input = (_instructions(mix, opts.games, True) - _instructions(mix, opts.games, False)) / events
        print(f"  {mix:<14} {per_input:>10,.0f} instructions per input event ({events} events, {opts.games} games)",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
