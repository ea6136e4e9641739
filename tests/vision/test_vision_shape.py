"""The shape of the vision code: no function over 150 lines, and no bare threshold in the tracker's modules (every
threshold a named `TrackerConfig` field with its meaning)."""

from __future__ import annotations

import ast
from pathlib import Path

VISION = Path(__file__).resolve().parents[2] / "services" / "vision"
MOST_LINES = 150
# functions over the limit in files another piece of work owns; each entry must still be over it (remove it once
# the function is split)
LONG_ELSEWHERE: set[tuple[str, str]] = set()
# the tracker's modules (tracker.py's docstring names them): their thresholds live in settings.py
TRACKER = ("tracker.py", "still_board.py", "hand.py", "frames.py", "point_evidence.py", "move_checks.py",
           "interpret.py", "squares.py", "still_clear.py")
# numbers that are no threshold: nothing, one, halves and doubles of geometry (a midpoint, a half-scale shift)
PLAIN = {0, 1, 2}
# whole numbers a count may be compared with that are no threshold: a pair, the board's files, ranks and points
COUNTS = {0, 1, 2, 9, 10, 90}


def _functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]


def long_functions(path: Path) -> dict[str, int]:
    """The functions of `path` over `MOST_LINES` lines (decorators aside, docstring included), with their lengths."""
    tree = ast.parse(path.read_text())
    return {f.name: f.end_lineno - f.lineno + 1 for f in _functions(tree)
            if f.end_lineno is not None and f.end_lineno - f.lineno + 1 > MOST_LINES}


def _number(node: ast.AST) -> float | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    return None


def _counts(node: ast.AST) -> bool:
    """`node` counts something: len(...) or an array's .sum()."""
    return isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Name) and node.func.id == "len")
        or (isinstance(node.func, ast.Attribute) and node.func.attr == "sum"))


def bare_thresholds(source: str) -> list[str]:
    """Where `source` weighs evidence against a bare number: a fraction compared with something, multiplying
    something or handed to a call (0, 1 and 2 aside: nothing, one, a midpoint), or a count compared with a whole
    number (a pair, the board's files, ranks and points aside). As "line: text"."""
    tree = ast.parse(source)
    lines = source.splitlines()
    found = []

    def flag(node: ast.AST) -> None:
        found.append(f"{node.lineno}: {lines[node.lineno - 1].strip()}")

    for n in ast.walk(tree):
        if isinstance(n, ast.Compare):
            sides = [n.left, *n.comparators]
            counting = any(_counts(side) for side in sides)
            for side in sides:
                v = _number(side)
                if v is None:
                    continue
                if (isinstance(v, float) and v not in PLAIN) or (isinstance(v, int) and counting and v not in COUNTS):
                    flag(n)
        elif isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult):
            for side in (n.left, n.right):
                v = _number(side)
                if v is not None and isinstance(v, float) and v not in PLAIN:
                    flag(n)
        elif isinstance(n, ast.Call):
            for arg in [*n.args, *(k.value for k in n.keywords)]:
                v = _number(arg)
                if v is not None and isinstance(v, float) and v not in PLAIN:
                    flag(n)
    return found


def test_no_function_in_vision_is_over_150_lines() -> None:
    long = {(p.name, f): n for p in sorted(VISION.glob("*.py")) for f, n in long_functions(p).items()}
    assert {k: n for k, n in long.items() if k not in LONG_ELSEWHERE} == {}
    # (an exemption no longer needed is removed, so that the function cannot grow back unseen)
    assert long.keys() >= LONG_ELSEWHERE


def test_the_length_check_counts_a_long_function() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MOST_LINES))
    tmp = ast.parse(f"def f():\n{body}\n")
    f = _functions(tmp)[0]
    assert f.end_lineno - f.lineno + 1 == MOST_LINES + 1


def test_the_tracker_modules_compare_evidence_with_named_settings_only() -> None:
    found = {name: bare_thresholds((VISION / name).read_text()) for name in TRACKER}
    assert {k: v for k, v in found.items() if v} == {}


def test_a_bare_threshold_is_found() -> None:
    assert bare_thresholds("if occ[i] > 0.8:\n    pass\n")
    assert bare_thresholds("x = [k for k in ks if change[k] > 0.5 * lvl]\n")
    assert bare_thresholds("y = _clearly_most(fell, 0.3)\n")
    assert bare_thresholds("z = d > -0.15\n")
    assert bare_thresholds("if len(pieces) < 5:\n    pass\n")
    assert not bare_thresholds("if occ[i] > cfg.ink_plain and len(pair) == 2:\n    pass\n")
    assert not bare_thresholds("mid = (a + b) / 2.0\n")


def test_a_named_setting_reaches_the_rule_that_uses_it() -> None:
    """The settings are the rules' thresholds, not copies of them: a piece's colour read 0.85 red is surely red at
    the default `red_sure` (0.8), unsure where a venue asks for 0.9; and a point reading 0.45 occupied holds no
    piece at the default `ink_piece` (0.5), one at 0.4 (33 such points are then no Xiangqi position)."""
    from dataclasses import replace

    import numpy as np

    from xqarb.vision.occupancy import PointReading
    from xqarb.vision.point_evidence import _implausible, _ink_letter
    from xqarb.vision.settings import DEFAULTS

    red = np.zeros(90)
    red[4] = 0.85
    reading = PointReading(occupied=np.ones(90), red=red, offset=np.zeros((90, 2)), density=np.ones(90),
                           redness=red)
    assert _ink_letter(reading, 4) == "X"
    assert _ink_letter(reading, 4, cfg=replace(DEFAULTS, red_sure=0.9)) == "?"
    occ = np.zeros(90)
    occ[:33] = 0.45  # 33 points: more than a Xiangqi position's 32 pieces, where they read as pieces
    many = PointReading(occupied=occ, red=np.full(90, 0.5), offset=np.zeros((90, 2)), density=occ, redness=occ)
    assert _implausible(many) is None
    assert "33 points read as pieces" in (_implausible(many, cfg=replace(DEFAULTS, ink_piece=0.4)) or "")
