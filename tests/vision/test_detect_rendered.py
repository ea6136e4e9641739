"""bench/detect_rendered.py's composed positions: legal boards no game reached, as photos of studies and puzzles
show them, for measuring detect away from the positions games make."""

from __future__ import annotations

import importlib
import sys
from collections import Counter
from pathlib import Path

from xqarb.referee.rules import Position
from xqarb.vision.detect import ALLOWED, LIMITS

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
bench = importlib.import_module("detect_rendered")


def test_composed_positions_are_legal_boards_within_the_counts_and_placements():
    positions = bench.composed_positions(120, seed=3)
    assert len(positions) == 120
    for squares in positions:
        Position.from_squares(squares, "red")  # raises FenError on a board the rules reject
        counts = Counter(ch for ch in squares if ch != ".")
        assert counts["K"] == 1 and counts["k"] == 1, squares
        for letter, n in counts.items():
            assert n <= LIMITS[letter.upper()], (letter, squares)
        for i, ch in enumerate(squares):
            if ch != ".":
                assert i in ALLOWED[(ch.upper(), ch.isupper())], (ch, i, squares)


def test_composed_positions_vary_and_repeat_for_a_seed():
    positions = bench.composed_positions(120, seed=3)
    assert bench.composed_positions(10, seed=3) == positions[:10]
    assert bench.composed_positions(10, seed=4) != positions[:10]
    sizes = [sum(ch != "." for ch in sq) for sq in positions]
    assert len(set(positions)) == 120
    assert min(sizes) <= 10 and max(sizes) >= 22  # sparse studies and crowded boards both
    for letter in "ABNRCPabnrcp":  # every type is sometimes missing and sometimes at its full count
        per_board = [sq.count(letter) for sq in positions]
        assert 0 in per_board and LIMITS[letter.upper()] in per_board, letter
