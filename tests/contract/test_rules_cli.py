"""`xqarb rules legal [FEN ...]` and `xqarb rules perft FEN DEPTH` (DESIGN: Command-line contract)."""

from __future__ import annotations

import pytest

from .conftest import START_FEN, load_games, sf_after, sf_legal

# Positions from the first real games of ccpd_dev.jsonl: every 7th ply of 12 games (about 150 positions).
N_GAMES = 12


@pytest.fixture(scope="module")
def real_positions(shared_data) -> list[str]:
    fens = []
    for game in load_games(shared_data, "ccpd_dev.jsonl", N_GAMES):
        moves = game["iccs"]
        for ply in range(0, len(moves) + 1, 7):
            fens.append(sf_after(game["start_fen"], moves[:ply]))
        fens.append(game["final_fen"])
    return fens


def test_legal_start_position_is_sorted_iccs_space_separated(xq):
    r = xq("rules", "legal", START_FEN)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split("\n")
    assert lines[-1] == "" and len(lines) == 2, repr(r.stdout)  # exactly one line, newline-terminated
    moves = lines[0].split(" ")
    assert moves == sorted(moves) and len(moves) == 44
    assert moves == sf_legal(START_FEN)
    assert "h2e2" in moves and "b0c2" in moves and "e0e1" in moves


def test_legal_agrees_with_fairy_stockfish_on_real_games_one_line_per_fen_in_order(xq, real_positions):
    fens = real_positions
    r = xq("rules", "legal", *fens)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == len(fens)
    for fen, line in zip(fens, lines, strict=True):
        assert line == " ".join(sf_legal(fen)), fen


def test_legal_reads_fens_from_stdin_when_none_given(xq, real_positions):
    fens = real_positions[:40]
    r = xq("rules", "legal", stdin="".join(f + "\n" for f in fens))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines == [" ".join(sf_legal(f)) for f in fens]


@pytest.mark.parametrize("letter,expect_side", [("w", "red"), ("r", "red"), ("b", "black")])
def test_legal_side_letters(xq, letter, expect_side):
    fen = START_FEN.replace(" w ", f" {letter} ")
    r = xq("rules", "legal", fen)
    assert r.returncode == 0, r.stderr
    moves = r.stdout.split()
    assert len(moves) == 44
    # Red moves start on ranks 0-3, Black moves on ranks 6-9.
    ranks = {int(m[1]) for m in moves}
    assert ranks <= ({0, 2, 3} if expect_side == "red" else {6, 7, 9}), ranks
    if letter != "r":
        assert moves == sf_legal(fen)


def test_position_without_a_legal_move_gives_an_empty_line(xq):
    mated = "3k5/4R4/4R4/9/9/9/9/9/9/4K4 b - - 0 1"  # Black king d9: rooks on e8/e7 and the facing rule
    stalemate_like = "3k5/9/9/9/9/9/9/9/4R4/3R1K3 b - - 0 1"  # no legal move: 困毙 counts as a loss (4.1.2)
    assert sf_legal(mated) == [] and sf_legal(stalemate_like) == []
    r = xq("rules", "legal", START_FEN, mated, stalemate_like, START_FEN)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split("\n")
    assert lines[1] == "" and lines[2] == "" and len(lines) == 5  # 4 lines + trailing newline
    assert lines[0] == lines[3] and len(lines[0].split()) == 44


@pytest.mark.parametrize("bad", [
    "bad fen",
    "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9 w - - 0 1",  # 9 ranks
    "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR x - - 0 1",  # bad side letter
    "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNZ w - - 0 1",  # unknown piece letter
    "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNRR w - - 0 1",  # 10 files in a rank
])
def test_a_bad_fen_is_a_clear_error(xq, bad):
    r = xq("rules", "legal", bad)
    assert r.returncode != 0
    assert "Traceback" not in r.stderr
    assert "FEN" in r.stderr or "fen" in r.stderr, r.stderr
    assert r.stderr.strip(), "an error needs a message on stderr"


def test_a_bad_fen_on_stdin_is_a_clear_error(xq):
    r = xq("rules", "legal", stdin=START_FEN + "\nnot a fen\n")
    assert r.returncode != 0 and "Traceback" not in r.stderr and r.stderr.strip()


@pytest.mark.parametrize("depth,nodes", [(1, 44), (2, 1920), (3, 79666)])
def test_perft_start_position(xq, depth, nodes):
    r = xq("rules", "perft", START_FEN, str(depth))
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"{nodes}\n"


def test_perft_real_position_agrees_with_fairy_stockfish(xq, shared_data):
    game = load_games(shared_data, "ccpd_dev.jsonl", 1)[0]
    fen = sf_after(game["start_fen"], game["iccs"][:20])
    expected = sum(len(sf_legal(sf_after(fen, [m]))) for m in sf_legal(fen))
    r = xq("rules", "perft", fen, "2")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(expected)


def test_perft_bad_arguments(xq):
    assert xq("rules", "perft", START_FEN, "two").returncode == 2
    assert xq("rules", "perft", START_FEN).returncode == 2
    r = xq("rules", "perft", "nonsense", "1")
    assert r.returncode != 0 and "Traceback" not in r.stderr and r.stderr.strip()


def test_legal_agrees_with_fairy_stockfish_on_random_playouts(xq):
    """Seeded random games from the start reach checks, pins, facing kings and bare endings real games rarely
    show; every 4th position of 4 playouts (up to 90 plies each) is compared (pyffish takes ~10 ms a call here)."""
    import random

    rng = random.Random(20260101)
    fens = []
    for _ in range(4):
        fen = START_FEN
        for ply in range(90):
            moves = sf_legal(fen)
            if not moves:
                break
            if ply % 4 == 0:
                fens.append(fen)
            fen = sf_after(fen, [rng.choice(moves)])
        fens.append(fen)
    r = xq("rules", "legal", stdin="\n".join(fens) + "\n")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split("\n")[:-1]
    assert len(lines) == len(fens)
    for fen, line in zip(fens, lines, strict=True):
        assert line == " ".join(sf_legal(fen)), fen
