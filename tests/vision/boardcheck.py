"""Board finding on the first frame of rendered games: is the calibration right, and is a failure honest?

For each difficulty, the first frame of N rendered games (the same games and seeds as gamecheck: game k of the
data file with seed `seed0 + k`, so a scene here is the scene gamecheck calibrates on) goes through `find_board`,
and the fit is compared with the renderer's truth:
- right: all 90 points within `--tol` (default 1/4) of the local point spacing of the truth, a9 where a9 is;
- flipped: the lattice is right but turned by a half-turn (Red's side taken for Black's);
- wrong: any other fit reported as a success (shifted by a line, the neighbour's board, a checked table...);
- refused: NoBoardFound (honest; the tracker retries on later frames).
A wrong or flipped fit is the worst outcome: the tracker would watch the wrong points.

Run: `python tests/vision/boardcheck.py --scenes 100 --difficulty easy hard` (prints every failure and totals).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from gamecheck import load_games  # noqa: E402  (the same games and moves as gamecheck's videos)


@dataclass
class Outcome:
    kind: str  # right | flipped | wrong | refused
    err: float  # worst point error in point spacings (inf when refused)
    seconds: float
    detail: str = ""


@dataclass
class Totals:
    counts: dict[str, int] = field(default_factory=lambda: {"right": 0, "flipped": 0, "wrong": 0, "refused": 0})
    seconds: list[float] = field(default_factory=list)


def local_spacing(points: np.ndarray) -> np.ndarray:
    """Per point: the smallest distance to an orthogonal neighbour in the image (the spacing where it stands)."""
    p = points.reshape(10, 9, 2)
    big = np.full((10, 9), np.inf)
    dx = np.linalg.norm(np.diff(p, axis=1), axis=2)  # 10 x 8
    dy = np.linalg.norm(np.diff(p, axis=0), axis=2)  # 9 x 9
    sp = big.copy()
    sp[:, :-1] = np.minimum(sp[:, :-1], dx)
    sp[:, 1:] = np.minimum(sp[:, 1:], dx)
    sp[:-1, :] = np.minimum(sp[:-1, :], dy)
    sp[1:, :] = np.minimum(sp[1:, :], dy)
    return sp.reshape(90)


def compare(found: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    """(worst error as it is, worst error after a half-turn), both in local point spacings of the truth."""
    sp = local_spacing(truth)
    err = float((np.linalg.norm(found - truth, axis=1) / sp).max())
    err_rot = float((np.linalg.norm(found[::-1] - truth, axis=1) / sp).max())
    return err, err_rot


def describe_scene(scene) -> str:
    b, c = scene.board, scene.camera
    parts = [f"{b.material}/{b.table}", f"tilt {c.tilt_deg:.0f}", f"az {c.azimuth_deg:.0f}", f"fill {c.fill:.2f}",
             f"{c.width}x{c.height}"]
    if b.neighbour is not None:
        parts.append("neighbour board")
    if b.clutter:
        parts.append(f"clutter {b.clutter}")
    if b.wave:
        parts.append("wavy")
    return ", ".join(parts)


def check_scene(fen: str, moves: list[str], seed: int, difficulty: str, tol: float) -> tuple[Outcome, str]:
    from xqarb.vision.board import NoBoardFound, find_board
    from xqarb.vision.render import random_scene, render_game

    scene = random_scene(seed, difficulty=difficulty)
    frame = next(iter(render_game(fen, moves, seed, difficulty=difficulty, scene=scene)))
    truth = np.asarray(frame.truth.points, dtype=np.float64)
    t0 = time.perf_counter()
    try:
        fit = find_board(frame.image)
    except NoBoardFound as exc:
        return Outcome("refused", float("inf"), time.perf_counter() - t0, exc.reason), describe_scene(scene)
    dt = time.perf_counter() - t0
    err, err_rot = compare(fit.points, truth)
    sp = float(np.median(local_spacing(truth)))
    found_c = fit.points[[0, 8, 89, 81]]
    detail = (f"score {fit.score:.1f}, oriented {fit.oriented}, err {err:.2f} sp (spacing {sp:.0f} px), "
              f"centre off by {np.linalg.norm(fit.points.mean(0) - truth.mean(0)) / sp:.1f} sp, "
              f"a9 at {found_c[0].round().tolist()} truth {truth[0].round().tolist()}")
    if err <= tol:
        return Outcome("right", err, dt, detail), describe_scene(scene)
    if err_rot <= tol:
        return Outcome("flipped", err, dt, detail), describe_scene(scene)
    return Outcome("wrong", err, dt, detail), describe_scene(scene)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenes", type=int, default=100, help="scenes (first frames) per difficulty")
    ap.add_argument("--difficulty", nargs="+", default=["easy", "hard"])
    ap.add_argument("--moves", type=int, default=20, help="moves per game, as gamecheck's --moves (same frames)")
    ap.add_argument("--data", default=str(HERE.parents[1].parent / "shared" / "data" / "games" / "ccpd_dev.jsonl"))
    ap.add_argument("--seed0", type=int, default=1000)
    ap.add_argument("--start", type=int, default=0, help="first scene index k (seed seed0 + k)")
    ap.add_argument("--tol", type=float, default=0.25, help="allowed point error in point spacings")
    ap.add_argument("--verbose", action="store_true", help="print every scene, not only failures")
    args = ap.parse_args(argv)
    games = load_games(Path(args.data), args.start + args.scenes, args.moves)
    worst = 0
    for diff in args.difficulty:
        tot = Totals()
        for k in range(args.start, min(len(games), args.start + args.scenes)):
            fen, mv = games[k]
            out, scene_text = check_scene(fen, mv, args.seed0 + k, diff, args.tol)
            tot.counts[out.kind] += 1
            tot.seconds.append(out.seconds)
            if out.kind != "right" or args.verbose:
                print(f"{diff} k={k} seed={args.seed0 + k}: {out.kind.upper()} ({out.seconds:.2f}s) "
                      f"[{scene_text}] {out.detail}", flush=True)
        n = sum(tot.counts.values())
        secs = np.array(tot.seconds)
        print(f"TOTAL {diff}: {n} scenes: right {tot.counts['right']} ({100.0 * tot.counts['right'] / max(1, n):.1f}%),"
              f" refused {tot.counts['refused']}, flipped {tot.counts['flipped']}, wrong {tot.counts['wrong']}; "
              f"find_board mean {secs.mean():.2f}s, median {np.median(secs):.2f}s, max {secs.max():.2f}s", flush=True)
        worst = max(worst, tot.counts["flipped"] + tot.counts["wrong"])
    return 1 if worst else 0


if __name__ == "__main__":
    sys.exit(main())
