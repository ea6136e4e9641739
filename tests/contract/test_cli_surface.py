"""The console script's surface (DESIGN: Command-line contract): subcommands listed, bad arguments exit 2."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from .conftest import START_FEN, run_xqarb

SUBCOMMANDS = ("up", "rules", "replay", "referee", "vision", "verify")


def test_help_lists_every_subcommand():
    r = run_xqarb(["--help"])
    assert r.returncode == 0, r.stderr
    listed = set(re.findall(r"^\s{2,}([a-z][a-z-]*)(?:\s|$)", r.stdout, flags=re.M))
    listed |= {n for group in re.findall(r"\{([a-z,-]+)\}", r.stdout) for n in group.split(",")}
    missing = [name for name in SUBCOMMANDS if name not in listed]
    assert not missing, f"{missing} not in --help:\n{r.stdout}"
    for name in SUBCOMMANDS:  # and each one answers --help itself
        sub = run_xqarb([name, "--help"])
        assert sub.returncode == 0 and "usage" in sub.stdout.lower(), (name, sub.stderr)


def test_module_entry_point_is_the_same_program():
    r = subprocess.run([sys.executable, "-m", "xqarb.cli", "rules", "perft", START_FEN, "1"], capture_output=True,
                       text=True, timeout=60, check=False)
    assert r.returncode == 0 and r.stdout == "44\n", (r.stdout, r.stderr)


@pytest.mark.parametrize("args", [
    ["no-such-command"],
    ["rules", "perft", START_FEN],  # DEPTH missing
    ["rules", "perft", START_FEN, "deep"],
    ["rules", "legal", "--no-such-option"],
    ["replay"],
    ["replay", "x.pgn", "--no-such-option"],
    ["referee", "run"],
    ["verify"],  # --game is required
    ["vision", "detect"],
    ["up", "--port", "eighty"],
])
def test_bad_arguments_exit_2_with_a_message(args):
    r = run_xqarb(args)
    assert r.returncode == 2, (args, r.returncode, r.stdout, r.stderr)
    assert r.stderr.strip() and "Traceback" not in r.stderr, r.stderr
