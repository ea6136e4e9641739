"""`xqarb rules perft` and `xqarb rules legal` as DESIGN's command-line contract says."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from xqarb.cli import main
from xqarb.referee.rules import START_FEN

MATE = "3k5/4R4/3R5/9/9/9/9/9/9/4K4 b - - 0 1"


def test_perft_prints_the_node_count(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "perft", START_FEN, "3"]) == 0
    assert capsys.readouterr().out == "79666\n"
    assert main(["rules", "perft", "startpos", "0"]) == 0
    assert capsys.readouterr().out == "1\n"


def test_perft_divide(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "perft", START_FEN, "2", "--divide"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 45 and lines[-1] == "1920"
    rows = [line.split() for line in lines[:-1]]
    assert [r[0] for r in rows] == sorted(r[0] for r in rows)
    assert sum(int(r[1]) for r in rows) == 1920
    assert "h2e2" in [r[0] for r in rows]
    assert all(int(r[1]) > 0 for r in rows)


def test_perft_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "perft", "nonsense", "2"]) == 2
    err = capsys.readouterr().err
    assert "bad FEN" in err and "nonsense" in err
    assert main(["rules", "perft", START_FEN, "-1"]) == 2


def test_legal_from_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "legal", START_FEN, MATE]) == 0
    out = capsys.readouterr().out.split("\n")
    assert out[1] == "" and out[2] == ""  # the mated side has no move: an empty line
    moves = out[0].split(" ")
    assert len(moves) == 44 and moves == sorted(moves) and "h2e2" in moves


def test_legal_from_stdin_keeps_going_past_a_bad_fen(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(f"{START_FEN}\n\nbad fen here\n{MATE}\n{START_FEN}\n"))
    assert main(["rules", "legal"]) == 2
    captured = capsys.readouterr()
    lines = captured.out.split("\n")
    # one line per FEN, in order: the bad one an empty line, blank input lines skipped
    assert lines[:4] == [lines[0], "", "", lines[0]] and len(lines[0].split()) == 44
    assert "bad fen here" in captured.err


def test_console_script_end_to_end() -> None:
    # the real process: `xqarb rules legal` reading standard input, as scripts call it
    run = subprocess.run(
        [sys.executable, "-m", "xqarb.cli", "rules", "legal"], input=MATE + "\n" + START_FEN + "\n",
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split("\n")[0] == ""
    assert len(run.stdout.split("\n")[1].split()) == 44


def test_cli_module_is_light_to_import() -> None:
    code = "import sys, xqarb.referee.rules.cli; print(sorted(m for m in sys.modules if m.startswith('xqarb')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True).stdout
    assert "xqarb.referee.rules.board" not in out  # the rules core loads only when a subcommand runs


def test_unquoted_fens_are_read_whole(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "perft", *START_FEN.split(), "2"]) == 0
    assert capsys.readouterr().out == "1920\n"
    assert main(["rules", "legal", *MATE.split(), "4k4/9/9/9/9/9/9/9/4A4/3K5", "b"]) == 0
    assert capsys.readouterr().out == "\ne9e8 e9f9\n"
