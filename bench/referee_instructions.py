"""Referee cost per input event in instructions (valgrind's callgrind), a figure a shared, loaded machine does not move.

CPU seconds on a shared machine vary by 10 % or more with the other work on it; the count of instructions
executed does not. For each mix of `bench/referee_throughput.py` (replay, camera; fold alone or with the SQLite
ledger) this runs the streams of N real games under callgrind, counting only inside the measured call (it is made
through `exec`, and callgrind dumps its count after each `exec`: the last dump is the measured part, the ones
before it the imports'), and prints that count per input event. Compare two versions of the code by running it in
each (a few minutes per mix). Needs `valgrind` on the PATH.

    .venv/bin/python bench/referee_instructions.py [--games 20] [--mix camera+ledger ...]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
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

    tune_for_service()  # as the throughput bench and the service (not part of the figure)
    if measure:
        run = rt.measure_with_ledger if mix.endswith("ledger") else rt.measure
        exec("run(streams)", {"run": run, "streams": streams})  # the one call counted (see the docstring)
    return sum(len(s) for s in streams)


def _instructions(mix: str, games: int) -> int:
    """The instructions of the measured call alone: the count of the last of callgrind's dumps."""
    with tempfile.TemporaryDirectory(prefix="xqarb-callgrind-") as folder:
        out_file = Path(folder) / "cg.out"
        cmd = ["valgrind", "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=builtin_exec",
               "--dump-after=builtin_exec", f"--callgrind-out-file={out_file}", sys.executable, __file__, "--inner",
               mix, str(games), "1"]
        run = subprocess.run(cmd, capture_output=True, text=True, check=False)
        dumps = sorted(Path(folder).glob("cg.out.*"), key=lambda p: int(p.suffix[1:]))
        found = re.search(r"^(?:summary|totals): (\d+)", dumps[-1].read_text(), re.M) if dumps else None
        if run.returncode != 0 or found is None:
            raise SystemExit(f"no instruction count from callgrind:\n{run.stderr[-2000:]}")
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
        per_input = _instructions(mix, opts.games) / events
        print(f"  {mix:<14} {per_input:>10,.0f} instructions per input event ({events} events, {opts.games} games)",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
