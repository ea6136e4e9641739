"""Board finding on the first frame of rendered games: is the calibration right, and is a failure honest?

For each difficulty, the first frame of N rendered games (the same games and seeds as gamecheck: game k of the
data file with seed `seed0 + k`, so a scene here is the scene gamecheck calibrates on) goes through `find_board`,
and the fit is compared with the renderer's truth:
- right: all 90 points within `--tol` (default 1/4) of the local point spacing of the truth, a9 where a9 is;
- flipped: the lattice is right but turned by a half-turn (Red's side taken for Black's); the totals say how many
  of these (and of the right ones) the fit itself said were not oriented (BoardFit.oriented false);
- wrong: any other fit reported as a success (shifted by a line, the neighbour's board, a checked table...);
- refused: NoBoardFound (honest; the tracker retries on later frames).
A wrong or flipped fit is the worst outcome: the tracker would watch the wrong points.

The finer figure is how exact a fit that found the lattice is (right or flipped, compared in its matching
orientation): per scene the worst and the mean point error in local point spacings, and the same for the best
homography through the true points (the floor: a wavy sheet's printed grid is no exact homography, so no
homography fit gets below it). Totals give the mean and worst of those, and how many fits are off by more than
1/8 of a spacing (a reading window of a point is about 0.4 spacing: 1/8 off already puts a piece's rim in it).

Run: `python tests/vision/boardcheck.py --scenes 100 --difficulty easy hard` (prints every failure and totals);
`--start 200` for scenes 200.. (held out from tuning when 0.. were tuned on, or the other way round), `--only 8 22`
for chosen scenes, `--json FILE` to keep every scene's figures for a before/after comparison.
"""

from __future__ import annotations

import argparse
import json
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
    mean_err: float = float("inf")  # mean point error in the matching orientation (inf when refused or wrong)
    max_err: float = float("inf")  # worst point error in the matching orientation (inf when refused or wrong)
    floor: float = float("nan")  # worst point error of the best homography through the true points
    oriented: bool = True  # the fit said it could tell which end is Red (BoardFit.oriented)


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


def point_errors(found: np.ndarray, truth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per point error in local point spacings of the truth: (as it is, after a half-turn of the found lattice)."""
    sp = local_spacing(truth)
    return np.linalg.norm(found - truth, axis=1) / sp, np.linalg.norm(found[::-1] - truth, axis=1) / sp


def compare(found: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    """(worst error as it is, worst error after a half-turn), both in local point spacings of the truth."""
    e, e_rot = point_errors(found, truth)
    return float(e.max()), float(e_rot.max())


def homography_floor(truth: np.ndarray) -> float:
    """Worst point error (local spacings) of the least-squares homography through the true points."""
    import cv2

    from xqarb.vision.grid import POINTS_UV, apply_h

    h, _ = cv2.findHomography(POINTS_UV, truth, 0)
    return float((np.linalg.norm(apply_h(h, POINTS_UV) - truth, axis=1) / local_spacing(truth)).max())


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
    e, e_rot = point_errors(fit.points, truth)
    err, err_rot = float(e.max()), float(e_rot.max())
    matched = e if err <= err_rot else e_rot
    fine = {"mean_err": float(matched.mean()), "max_err": float(matched.max()), "floor": homography_floor(truth),
            "oriented": bool(fit.oriented)}
    sp = float(np.median(local_spacing(truth)))
    found_c = fit.points[[0, 8, 89, 81]]
    detail = (f"score {fit.score:.1f}, oriented {fit.oriented}, err {err:.2f} sp (spacing {sp:.0f} px), "
              f"centre off by {np.linalg.norm(fit.points.mean(0) - truth.mean(0)) / sp:.1f} sp, "
              f"a9 at {found_c[0].round().tolist()} truth {truth[0].round().tolist()}; "
              f"matching orientation: mean {fine['mean_err']:.3f} max {fine['max_err']:.3f} sp "
              f"(homography floor {fine['floor']:.3f})")
    if err <= tol:
        return Outcome("right", err, dt, detail, **fine), describe_scene(scene)
    if err_rot <= tol:
        return Outcome("flipped", err, dt, detail, **fine), describe_scene(scene)
    return Outcome("wrong", err, dt, detail, oriented=bool(fit.oriented)), describe_scene(scene)


def fine_summary(outcomes: list[tuple[int, Outcome]], worst: int = 5) -> str:
    """The finer figure over the fits that found the lattice (right or flipped)."""
    found = [(k, o) for k, o in outcomes if o.kind in ("right", "flipped")]
    if not found:
        return "no lattice found"
    mx = np.array([o.max_err for _, o in found])
    mean = np.array([o.mean_err for _, o in found])
    floor = np.array([o.floor for _, o in found])
    top = sorted(found, key=lambda t: -t[1].max_err)[:worst]
    return (f"{len(found)} lattices found: point error mean {mean.mean():.3f} sp, worst per fit median "
            f"{np.median(mx):.3f} / 95th pct {np.percentile(mx, 95):.3f} / max {mx.max():.3f} sp; "
            f"off by > 1/8: {int((mx > 0.125).sum())}, > 1/16: {int((mx > 0.0625).sum())}; "
            f"homography floor median {np.median(floor):.3f}, max {floor.max():.3f}; worst: "
            + ", ".join(f"k={k} {o.max_err:.3f} (floor {o.floor:.3f})" for k, o in top))


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
    ap.add_argument("--only", type=int, nargs="+", help="only these scene indices k (printed whatever the outcome)")
    ap.add_argument("--json", help="write every scene's outcome and figures to this file")
    args = ap.parse_args(argv)
    ks = sorted(args.only) if args.only else list(range(args.start, args.start + args.scenes))
    games = load_games(Path(args.data), max(ks) + 1, args.moves)
    worst = 0
    records = []
    for diff in args.difficulty:
        tot = Totals()
        outcomes: list[tuple[int, Outcome]] = []
        for k in [k for k in ks if k < len(games)]:
            fen, mv = games[k]
            out, scene_text = check_scene(fen, mv, args.seed0 + k, diff, args.tol)
            tot.counts[out.kind] += 1
            tot.seconds.append(out.seconds)
            outcomes.append((k, out))
            records.append({"difficulty": diff, "k": k, "kind": out.kind, "seconds": out.seconds,
                            "mean_err": out.mean_err, "max_err": out.max_err, "floor": out.floor,
                            "oriented": out.oriented, "detail": out.detail})
            if out.kind != "right" or args.verbose or args.only:
                print(f"{diff} k={k} seed={args.seed0 + k}: {out.kind.upper()} ({out.seconds:.2f}s) "
                      f"[{scene_text}] {out.detail}", flush=True)
        n = sum(tot.counts.values())
        secs = np.array(tot.seconds)
        print(f"TOTAL {diff}: {n} scenes: right {tot.counts['right']} ({100.0 * tot.counts['right'] / max(1, n):.1f}%),"
              f" refused {tot.counts['refused']}, flipped {tot.counts['flipped']}, wrong {tot.counts['wrong']}; "
              f"find_board mean {secs.mean():.2f}s, median {np.median(secs):.2f}s, max {secs.max():.2f}s", flush=True)
        unsure = {kind: sum(1 for _, o in outcomes if o.kind == kind and not o.oriented)
                  for kind in ("right", "flipped")}
        # a fit that says it could not tell which end is Red leaves that to the tracker (the start position) or an
        # operator: a half-turn said so is less bad than one claimed
        print(f"ORIENTATION {diff}: said not oriented: {unsure['right']} of the right, {unsure['flipped']} of the "
              f"flipped", flush=True)
        print(f"FINE {diff}: {fine_summary(outcomes)}", flush=True)
        worst = max(worst, tot.counts["flipped"] + tot.counts["wrong"])
    if args.json:
        Path(args.json).write_text(json.dumps(records, indent=1, default=float))
    return 1 if worst else 0


if __name__ == "__main__":
    sys.exit(main())
