"""Train the move model (`python -m xqarb.vision.movefit_train`): writes `xqarb/data/vision/movefit.npz`.

Data: real games (`../shared/data/games/ccpd_dev.jsonl`) rendered as hard camera video (`render_game`, scene seed
`--seed0` + the game's index, as `tests/vision/gamecheck.py` numbers them) and run through the tracker. At every
still board the tracker reads (its rules alone, no earlier model), each point's evidence (`movefit.point_features`)
is kept with what truly stands there (the renderer's truth), against what the tracker knew before. Games `--start`
.. `--start` + `--games` - 1 are used (default 900-959: apart from every set the vision figures are measured on,
which lie under 900).

Fit: two softmax regressions (a piece's point: stayed / left / taken; an empty point: stayed / red or black piece
arrived), L2-regularised, by Newton-free gradient descent in numpy. Then the bar a move must clear (`min_score`,
`min_margin`) is set on the same snapshots: the lowest that takes no wrong move where a move was made and none
where none was, with a safety factor. `--report` prints how the model ranks the true move.
Deterministic for its arguments.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
from collections.abc import Sequence
from multiprocessing import Pool
from pathlib import Path

import numpy as np

from . import movefit as M
from .grid import point_index

_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "games" / "ccpd_dev.jsonl"
_OUT = Path(__file__).resolve().parents[2] / "xqarb" / "data" / "vision" / "movefit.npz"


def _games(path: Path, start: int, n: int, max_moves: int) -> list[tuple[int, str, list[str]]]:
    out = []
    with path.open() as f:
        k = 0
        for line in f:
            g = json.loads(line)
            if len(g["iccs"]) < 4:
                continue  # (gamecheck's numbering skips these too)
            if start <= k < start + n:
                out.append((k, g["start_fen"], g["iccs"][:max_moves]))
            k += 1
    return out


def collect_game(args: tuple[int, str, list[str], int]) -> list[dict]:
    """One rendered game through the tracker: per still board read, the features and the truth."""
    k, fen, moves, seed = args
    from xqarb.vision import still_board as T  # (where the state machine looks interpret up)
    from xqarb.vision.board import fit_from_corners
    from xqarb.vision.render import render_game

    records: list[dict] = []
    original = T.interpret

    def recording(known, ref_view, ref_reading, view, reading, cfg, outlines=None, change=None):
        if ref_view is not None and ref_reading is not None and outlines is not None and change is not None:
            feats = M.point_features(known, change, T._change_level(change, cfg), reading, ref_reading,
                                     outlines.discs(), outlines.ref_discs(), M.unlike_then(ref_view, view))
            records.append({"known": known, "features": feats})
        return original(known, ref_view, ref_reading, view, reading, cfg, outlines, change)

    T.interpret = recording
    try:
        # (the rules alone: the snapshots must not depend on an earlier model, whose features may not be these)
        tracker = T.Tracker(move_model=None)
        state = None
        prev_truth: str | None = None
        for frame in render_game(fen, moves, seed, difficulty="hard"):
            if state is None:
                state = tracker.initial(fit_from_corners(frame.truth.corners, "given", 0.0))
            n = len(records)
            state, obs = tracker.step(state, frame.image, frame.t_us)
            stable = [o.fields["squares"] for o in obs if o.type == "BoardStable"]
            if len(records) > n:
                r = records[-1]
                r.update(truth=frame.truth.squares, prev_truth=prev_truth, hand=frame.truth.hand_present,
                         misaligned=list(frame.truth.misaligned or ()), game=k,
                         stable=stable[-1] if stable else None)
            if stable:
                prev_truth = frame.truth.squares
    finally:
        T.interpret = original
    return [r for r in records if "truth" in r]


def labelled(records: list[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rows for the two models: (piece X, piece y, empty X, empty y). Left out: snapshots with a hand in view, points
    where the tracker's known board was wrong already (no clean label), a piece left between two points."""
    px, py, ex, ey = [], [], [], []
    for r in records:
        if r["hand"] or r["prev_truth"] is None:
            continue
        known, truth, prev = r["known"], r["truth"], r["prev_truth"]
        skip = {point_index(p) for p in r["misaligned"]}
        for i in range(90):
            k, t, p = known[i], truth[i], prev[i]
            if i in skip or k == "?" or (k == ".") != (p == ".") or (k != "." and k.isupper() != p.isupper()):
                continue
            if k in M._CASED:
                y = 0 if t != "." and t.isupper() == k.isupper() else 1 if t == "." else 2
                px.append(r["features"][i])
                py.append(y)
            else:
                ex.append(r["features"][i])
                ey.append(0 if t == "." else 1 if t.isupper() else 2)
    return np.array(px), np.array(py, int), np.array(ex), np.array(ey, int)


def fit_softmax(x: np.ndarray, y: np.ndarray, l2: float = 1e-3, steps: int = 3000, lr: float = 0.5) -> np.ndarray:
    """(F, 3) weights of a softmax regression on standardised `x` (its first column the bias). The classes keep their
    share (a point stays far more often than it changes): the log-odds a move is scored by are then the data's."""
    n, f = x.shape
    w = np.zeros((f, 3))
    onehot = np.eye(3)[y]
    for _ in range(steps):
        z = x @ w
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        g = x.T @ (p - onehot) / n + l2 * w
        w -= lr * g
    return w


def move_of(prev: str, truth: str) -> tuple[int, int] | None:
    """The one move between two true boards: the point left and the one arrived at (or taken on)."""
    diff = [i for i in range(90) if prev[i] != truth[i]]
    if len(diff) != 2:
        return None
    a, b = diff
    if truth[a] == "." and prev[a] != ".":
        return a, b
    if truth[b] == "." and prev[b] != ".":
        return b, a
    return None


def ranks(model: M.MoveModel, records: list[dict]) -> list[dict]:
    """Per clean snapshot (no hand, the known board as the last true one, no piece half-way): the true move (or
    none), the model's best, its score and margin, and whether the tracker's rules gave one move."""
    out = []
    for r in records:
        if r["hand"] or r["prev_truth"] is None:
            continue
        known, prev = r["known"], r["prev_truth"]
        if any((k == ".") != (p == ".") or (k not in ".?" and k.isupper() != p.isupper())
               for k, p in zip(known, prev, strict=True)):
            continue
        ranked = M.ranked_moves(model, known, r["features"])
        if not ranked:
            continue
        # (a piece left between two points: no one move is the answer, the pair is; the fit must take none)
        true = move_of(prev, r["truth"]) if not r["misaligned"] else None
        if true is None and prev != r["truth"] and not r["misaligned"]:
            continue  # two moves, or a piece lifted: not one move's snapshot
        score, src, dst = ranked[0]
        second = max(ranked[1][0] if len(ranked) > 1 else -np.inf, 0.0)
        rules = M.single_move(known, r["stable"]) if r["stable"] is not None else None
        out.append({"game": r["game"], "true": true, "best": (src, dst), "score": score, "margin": score - second,
                    "taken": M.best_move(model, known, r["features"]), "misaligned": bool(r["misaligned"]),
                    "rules": rules, "rules_ok": rules == true if true is not None else rules is None})
    return out


def choose_bar(rows: list[dict], safety: float = 1.5) -> tuple[float, float]:
    """The least (score, margin) that takes no wrong move on `rows`, each raised by `safety`: a wrong move is a best
    move that is not the true one, or any move on a still board. (Snapshots of a piece between two points are left
    to the end and other-point rules, `MoveModel.min_end` / `max_other`: their best move is often the pair's nominal
    point, plainly scored.)"""
    wrong = [r for r in rows if r["best"] != r["true"] and not r["misaligned"]]
    min_score = max([r["score"] for r in wrong if r["true"] is None] + [2.0])
    # (of the wrong ones that clear the score, the margin must stay under the bar)
    min_margin = max([r["margin"] for r in wrong if r["true"] is not None and r["score"] >= min_score] + [1.0])
    return safety * min_score, safety * min_margin


def report(rows: list[dict]) -> str:
    """How the fit (`rows[...]["taken"]`: best_move with the model's whole bar) does on the snapshots."""
    moved = [r for r in rows if r["true"] is not None]
    still = [r for r in rows if r["true"] is None and not r["misaligned"]]
    half = [r for r in rows if r["misaligned"]]

    def took(r: dict) -> tuple[int, int] | None:
        return (r["taken"].src, r["taken"].dst) if r["taken"] is not None else None

    right = sum(r["best"] == r["true"] for r in moved)
    taken = [r for r in moved if took(r) is not None]
    taken_ok = sum(took(r) == r["true"] for r in taken)
    rules_bad = [r for r in moved if not r["rules_ok"]]
    rescued = [r for r in rules_bad if took(r) is not None]
    return (f"move snapshots {len(moved)}: best is the true move {right} ({100 * right / max(1, len(moved)):.2f} %), "
            f"taken {len(taken)}, of them right {taken_ok}; still boards {len(still)}, a move taken on "
            f"{sum(took(r) is not None for r in still)}; a piece between two points {len(half)}, a move taken on "
            f"{sum(took(r) is not None for r in half)}; the rules' reading no single right move on {len(rules_bad)}, "
            f"of those taken {len(rescued)} (right {sum(took(r) == r['true'] for r in rescued)})")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--start", type=int, default=900)
    ap.add_argument("--games", type=int, default=60)
    ap.add_argument("--moves", type=int, default=40)
    ap.add_argument("--seed0", type=int, default=1000)
    ap.add_argument("--data", type=Path, default=_DATA)
    ap.add_argument("--out", type=Path, default=_OUT)
    ap.add_argument("--cache", type=Path, help="keep the collected snapshots here (pickle) and reuse them")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--report", action="store_true", help="measure the model at --out on the games, no training")
    args = ap.parse_args(argv)
    t0 = time.time()
    if args.cache is not None and args.cache.exists():
        records = pickle.loads(args.cache.read_bytes())
    else:
        games = [(k, fen, mv, args.seed0 + k) for k, fen, mv in _games(args.data, args.start, args.games, args.moves)]
        with Pool(args.jobs) as pool:
            records = [r for rs in pool.imap(collect_game, games) for r in rs]
        if args.cache is not None:
            args.cache.write_bytes(pickle.dumps(records))
    print(f"{len(records)} still boards read from {args.games} games in {time.time() - t0:.0f} s", flush=True)
    if args.report:
        model = M.MoveModel.load(args.out)
        print(f"bar: score {model.min_score:.2f}, margin {model.min_margin:.2f}, ends {model.min_end:.2f}, "
              f"others under {model.max_other:.2f}")
    else:
        px, py, ex, ey = labelled(records)
        allx = np.concatenate([px, ex])
        mean, scale = allx.mean(axis=0), allx.std(axis=0) + 1e-6
        mean[0], scale[0] = 0.0, 1.0
        pw = fit_softmax((px - mean) / scale, py)
        ew = fit_softmax((ex - mean) / scale, ey)
        print(f"rows: pieces {len(py)} ({np.bincount(py, minlength=3).tolist()}), empty {len(ey)} "
              f"({np.bincount(ey, minlength=3).tolist()})")
        model = M.MoveModel(pw, ew, mean, scale, 0.0, 0.0)
        s, m = choose_bar(ranks(model, records))
        model = M.MoveModel(pw, ew, mean, scale, s, m)
        model.save(args.out)
        print(f"wrote {args.out}: bar score {s:.2f}, margin {m:.2f}, ends {model.min_end:.2f}, others under "
              f"{model.max_other:.2f}")
    print(report(ranks(model, records)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
