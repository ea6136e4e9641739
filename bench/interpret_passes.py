"""What each of the tracker's correction passes is worth: the still boards whose reading it changes on rendered games.

`interpret` (services/vision/interpret.py) runs a chain of correction passes (`interpret._PASSES`) over what the
change between two still boards shows; the state machine then applies `_settled_from_between`,
`_set_onto_by_outline` and `as_seen_twice`. A pass whose removal changes nothing on the benchmark is a branch to
remove (issue 41).

Two modes, both over tests/vision/gamecheck.py (its arguments after `--`):
- `shadow` (default): the games run as they are; at each still board `interpret` is also run once without each pass
  (on copies of its inputs), and each later step is compared with leaving its input as it was. Printed: for each
  pass, the still boards whose result (squares, placed, nudged, pairs between two points) it changed. A pass that
  changed none on the sample can go with no effect there at all: with every result the same, the whole run is.
- `--skip NAME ...`: the games run without those passes (the figures of gamecheck, to compare with a plain run),
  for passes that did change results: whether the move fit or a later still board makes up for them.

Run: `.venv/bin/python bench/interpret_passes.py [--skip _by_outlines ...] -- --games 4 --moves 20 --truth-fit
--adopt moves [--difficulty plain] [--hard hard --start K]`. Slow (the games' rendering): 15-60 s a game.
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from xqarb.vision import interpret as I
from xqarb.vision import still_board as T  # (where the state machine looks its steps up)

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "vision"))

import gamecheck  # noqa: E402  (after the path set-up)

# the steps applied after `interpret`, each measured by whether it changed what it was given
LATER = ("_settled_from_between", "_set_onto_by_outline", "as_seen_twice")
# interpret's steps that bind what the later ones share, corrections of nothing: never left out
CORE = ("_vacated", "_fresh", "_touched_or_taken")


def pass_names() -> list[str]:
    return [step.__name__ for step in I._PASSES if step.__name__ not in CORE]


def without(names: set[str]) -> tuple[Callable[..., Any], ...]:
    unknown = names - set(pass_names()) - set(LATER)
    if unknown:
        raise SystemExit(f"no such pass: {sorted(unknown)}; the passes: {pass_names() + list(LATER)}")
    return tuple(step for step in I._PASSES if step.__name__ not in names)


def skip(names: set[str]) -> None:
    """Run the tracker without the passes `names` (the later steps among them leave their input as it was)."""
    I._PASSES = without(names)
    if "_settled_from_between" in names:
        T._settled_from_between = lambda known, squares, placed, unsure_of: squares
    if "_set_onto_by_outline" in names:
        T._set_onto_by_outline = lambda known, squares, placed, *rest: (squares, placed)
    if "as_seen_twice" in names:
        real = T.as_seen_twice

        def unchanged(known: str, squares: str, *args: Any, **kw: Any) -> Any:
            return (squares, *real(known, squares, *args, **kw)[1:])

        T.as_seen_twice = unchanged


def earlier(path: str) -> Callable[..., Any]:
    """`interpret` of another version of interpret.py (e.g. `git show main:services/vision/interpret.py`)."""
    spec = importlib.util.spec_from_file_location("xqarb.vision._interpret_earlier", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.interpret


def shadow(changed: Counter[str], calls: Counter[str], examples: dict[str, list[str]],
           against: Callable[..., Any] | None = None) -> None:
    """Wrap the state machine's steps so that each still board also counts what each pass changed (and where
    `against`, another version's `interpret`, reads it otherwise: counted as "against")."""
    interpret, passes = T.interpret, I._PASSES

    def shadowed(*args: Any) -> Any:
        calls["interpret"] += 1
        real = None
        outs = {}
        for step in passes:
            if step.__name__ in CORE:
                continue
            I._PASSES = tuple(s for s in passes if s is not step)
            try:
                outs[step.__name__] = interpret(*copy.deepcopy(args))
            finally:
                I._PASSES = passes
        if against is not None:
            outs["against"] = against(*copy.deepcopy(args))
        real = interpret(*args)
        for name, out in outs.items():
            if _norm(out) != _norm(real):
                changed[name] += 1
                if len(examples[name]) < 3:
                    examples[name].append(f"{_brief(real)} without: {_brief(out)}")
        return real

    def measured(name: str, step: Callable[..., Any], same: Callable[..., bool]) -> Callable[..., Any]:
        def run(*args: Any, **kw: Any) -> Any:
            calls[name] += 1
            out = step(*args, **kw)
            if not same(args, out):
                changed[name] += 1
            return out
        return run

    T.interpret = shadowed
    T._settled_from_between = measured("_settled_from_between", T._settled_from_between,
                                       lambda a, out: out == a[1])
    T._set_onto_by_outline = measured("_set_onto_by_outline", T._set_onto_by_outline,
                                      lambda a, out: out[0] == a[1] and list(out[1]) == list(a[2]))
    T.as_seen_twice = measured("as_seen_twice", T.as_seen_twice, lambda a, out: out[0] == a[1])


def _norm(out: Any) -> Any:
    squares, placed, nudged, misaligned = out
    return squares, [int(p) for p in placed], [int(p) for p in nudged], [(int(a), int(b)) for a, b in misaligned]


def _brief(out: Any) -> str:
    squares, placed, nudged, misaligned = _norm(out)
    return f"placed {placed} nudged {nudged} pairs {misaligned} squares {squares}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--skip", nargs="*", default=None, metavar="PASS", help="run without these passes")
    ap.add_argument("--against", default=None, metavar="FILE",
                    help="shadow: also count the still boards another version of interpret.py reads otherwise")
    ap.add_argument("rest", nargs=argparse.REMAINDER, help="-- gamecheck's arguments")
    args = ap.parse_args(argv)
    rest = args.rest[1:] if args.rest[:1] == ["--"] else args.rest
    if args.skip is not None:
        skip(set(args.skip))
        print(f"without {sorted(args.skip)}", flush=True)
        return gamecheck.main(rest)
    changed: Counter[str] = Counter()
    calls: Counter[str] = Counter()
    examples: dict[str, list[str]] = {n: [] for n in [*pass_names(), *LATER, "against"]}
    shadow(changed, calls, examples, earlier(args.against) if args.against else None)
    rc = gamecheck.main(rest)
    print(f"still boards interpreted: {calls['interpret']}")
    for name in [*pass_names(), *LATER, *(["against"] if args.against else [])]:
        print(f"PASS {name}: changed {changed[name]} of {calls[name] or calls['interpret']}", flush=True)
        for e in examples.get(name, []):
            print(f"    {e}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
