"""How well `xqarb vision detect` reads rendered photos: per-point accuracy, '?' share, time per photo.

    OPENBLAS_NUM_THREADS=1 python bench/detect_rendered.py [--boards 20] [--difficulties plain,easy,hard]
                                                           [--positions game|composed]
    OPENBLAS_NUM_THREADS=1 python bench/detect_rendered.py --real   # the parts that real piece photos can check
    OPENBLAS_NUM_THREADS=1 python bench/detect_rendered.py --difficulties easy --boards 20 --corners \
        --hard "none;tall pieces;plastic sheet;...;hard"     # the renderer's hard options, each alone, and the preset

There are no labelled photos of whole real boards here. `--real` measures what the real piece crops
(../shared/data/piece_crops/valid, 1,548 crops of 50 photos) can tell about detect: the disc score of each real
piece put at the top view's scale, and the classifier read as detect reads it (six crop variants, geometric mean)
with detect's thresholds: how many crops it would print a letter for, and how many of those letters are wrong.

By default the positions are real: a random ply of a random game among the first 400 of
../shared/data/games/ccpd_dev.jsonl (moves applied to the 90-character board, captures overwrite). With
`--positions composed` they are positions no game reached, as a photo of a study, a puzzle or a board being set up
shows them: each side a king and from none to the full count of every other type, each piece on a point the rules
let it stand on, kept only when the rules core accepts the whole (`Position.from_squares`: kings not facing, Black
not in check with Red to move). Each is drawn by the renderer (`render_position`, scene `random_scene(seed,
difficulty, light_on_dark=True)`: a share of the sets light characters on dark discs), JPEG-compressed at quality
90, and read as the command reads it: `find_board` then `detect.read_board`. A board whose fitted corners lie more
than 0.3 grid spacings from the renderer's truth (either way round) is counted as "board not found right" and not
read: that is the board finder's figure, not the reader's.
With `--hard`, each item (separated by ';') is run on the same boards: "none" (the scenes as drawn), an option
of render_hard.HARD_OPTIONS alone, options joined by '+', or the preset "hard" (drawn per seed); "real tops"
cuts the pieces' tops from ../shared/data/piece_crops/valid (photos the classifier was not trained on). With
`--corners` each board is also read from its four grid corners given, as `xqarb vision detect --corners` reads
them (the truth's corners moved by CORNER_NOISE_PX, a hand's clicks), so that finding the board and reading the
pieces are measured apart. Each item's line names its failure classes: no board found, board found wrong,
occupancy (empties read as pieces, pieces read as empty), wrong colour, wrong type.
Everything else is counted per point: a point is right, X / x (a piece of the right colour, its type not given),
'?', or wrong; wrong points are split into empties read as pieces, pieces read as empty, wrong colour, wrong type.
With `--guesses`, the points whose evidence was not sure are also counted by cause (detect's
`BestReadings.causes`): how many were printed as their best reading and how many of those were right, and how many
kept '?' or X / x would have been right as their best reading.
Deterministic: the same arguments give the same boards.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

import cv2
import numpy as np

from xqarb.referee.rules import Position
from xqarb.referee.rules.position import FenError
from xqarb.vision import render
from xqarb.vision.board import NoBoardFound, find_board
from xqarb.vision.detect import ALLOWED, LIMITS, read_board
from xqarb.vision.given import BadCorners, fit_given_corners
from xqarb.vision.grid import point_index
from xqarb.vision.pieces import PieceClassifier

# Crowded boards (--positions opening): a ply among a game's first this many, 28..32 pieces on the board.
OPENING_PLIES = 12


def game_positions(games_file: Path, n: int, seed: int, most_plies: int | None = None) -> list[str]:
    rng = np.random.default_rng(seed)
    with open(games_file, encoding="utf-8") as fh:
        games = [json.loads(line) for _, line in zip(range(400), fh, strict=False)]
    out = []
    for g in rng.choice(len(games), n, replace=len(games) < n):
        game = games[int(g)]
        sq = list(render.squares_from_fen(game["start_fen"]))
        last = len(game["iccs"]) if most_plies is None else min(most_plies, len(game["iccs"]))
        for move in game["iccs"][:int(rng.integers(0, last + 1))]:
            a, b = point_index(move[:2]), point_index(move[2:])
            sq[b], sq[a] = sq[a], "."
        out.append("".join(sq))
    return out


def composed_positions(n: int, seed: int) -> list[str]:
    """`n` legal positions that need not come from a game (see the module's docstring), the same for a seed."""
    rng = np.random.default_rng(seed)
    out: list[str] = []
    while len(out) < n:
        squares = ["."] * 90
        for red in (True, False):
            for kind, most in LIMITS.items():
                free = sorted(i for i in ALLOWED[(kind, red)] if squares[i] == ".")
                count = 1 if kind == "K" else int(rng.integers(0, most + 1))
                for i in rng.choice(free, min(count, len(free)), replace=False):
                    squares[int(i)] = kind if red else kind.lower()
        board = "".join(squares)
        try:
            Position.from_squares(board, "red")
        except FenError:  # kings facing, or Black in check with Red to move: not a position a board can show
            continue
        out.append(board)
    return out


def tally(truth: str, got: str) -> Counter:
    """Per point: right, '?' (unsure), typeless (X / x on a piece of that colour: occupancy and colour right, the
    type not given) or wrong (an X / x on an empty point or on the other colour's piece is wrong)."""
    c: Counter = Counter()
    for a, b in zip(truth, got, strict=True):
        c["points"] += 1
        kind = "empties" if a == "." else "pieces"
        c[kind] += 1
        if b == "?":
            c["unsure"] += 1
            c[f"{kind} unsure"] += 1
        elif b in "Xx" and a != "." and a.isupper() == b.isupper():
            c["typeless"] += 1
            c[f"{kind} typeless"] += 1
        elif a == b:
            c["right"] += 1
            c[f"{kind} right"] += 1
        else:
            c["wrong"] += 1
            if a == ".":
                c["empty read as piece"] += 1
            elif b == ".":
                c["piece read as empty"] += 1
            elif a.isupper() != b.isupper():
                c["wrong colour"] += 1
            else:
                c["wrong type"] += 1
    return c


def breakdown(c: Counter) -> list[str]:
    """The two lines under a `tally` total: the empties and the pieces, right, '?' and how they went wrong."""
    return [f"  empties {c['empties']}: right {c['empties right'] / max(c['empties'], 1):.2%}, '?' "
            f"{c['empties unsure']}, read as a piece {c['empty read as piece']}",
            f"  pieces {c['pieces']}: right (colour and type) {c['pieces right'] / max(c['pieces'], 1):.2%}, "
            f"X/x (colour right, type not given) {c['pieces typeless']}, '?' {c['pieces unsure']}, read as empty "
            f"{c['piece read as empty']}, wrong colour {c['wrong colour']}, wrong type {c['wrong type']}",
            f"  occupancy and colour right: {(c['right'] + c['typeless']) / max(c['points'], 1):.2%} of points, "
            f"{(c['pieces right'] + c['pieces typeless']) / max(c['pieces'], 1):.2%} of pieces"]


def guess_tally(truth: str, reading) -> Counter:
    """Per cause of doubt (`detect.BestReadings.causes`, first clause): points whose evidence was not sure, how many
    were printed as their best reading, and how many of those were right (occupancy and colour; and the type, where
    one was printed); and how many of those kept '?' or X / x would have been right as their best reading."""
    c: Counter = Counter()
    best = reading.best
    if best is None:
        return c
    for i, (why, g, out) in enumerate(zip(best.causes, best.guess, reading.squares, strict=True)):
        if not why:
            continue
        key = why.split(";")[0].split(" (")[0].split(" 0.")[0].split(" 1.")[0]
        a = truth[i]
        occ = g != "?" and (g == ".") == (a == ".") and (g == "." or g.isupper() == a.isupper())
        typed = occ and g == a
        c[(key, "points")] += 1
        if out in "?":
            c[(key, "'?'")] += 1
            c[(key, "'?' whose best reading was right")] += occ
        elif out in "Xx":
            c[(key, "X/x")] += 1
            c[(key, "X/x whose best type was right")] += typed
        else:
            c[(key, "printed")] += 1
            c[(key, "printed right")] += typed if g != "." else occ
    return c


def print_guesses(c: Counter) -> None:
    for key in sorted({k for k, _ in c}, key=lambda k: -c[(k, "points")]):
        parts = ", ".join(f"{what} {c[(key, what)]}" for what in ("printed", "printed right", "'?'",
                          "'?' whose best reading was right", "X/x", "X/x whose best type was right")
                          if c[(key, what)])
        print(f"    {key}: {c[(key, 'points')]} points; {parts}")


# Given corners are clicked by hand: off the true intersections by a pixel or two (sigma, image pixels).
CORNER_NOISE_PX = 1.5


def hard_scene(scene: render.Scene, item: str, seed: int, crops: str | None) -> tuple[render.Scene, bool]:
    """`scene` with one --hard item's options on ("none": as drawn), and whether they cut the picture through the
    board on purpose ("cut picture": such boards are measured, not left out)."""
    from xqarb.vision.render_hard import draw_options, harden, preset

    if item == "none":
        return scene, False
    opts = (preset(item, seed, crops=crops) if item in ("hard",)
            else draw_options(item.split("+"), seed, crops=crops))
    return harden(scene, opts), opts.cut is not None


def read_one(image: np.ndarray, squares: str, truth_corners: np.ndarray, clf: PieceClassifier,
             given: np.ndarray | None) -> tuple[Counter, float, float]:
    """One photo read as the command reads it (find_board, or the given corners), tallied; (counts, find s, read s)."""
    c: Counter = Counter()
    t0 = time.perf_counter()
    try:
        fit = find_board(image) if given is None else fit_given_corners(image, given)
    except (NoBoardFound, BadCorners):
        c["no board"] += 1
        return c, time.perf_counter() - t0, 0.0
    t1 = time.perf_counter()
    reading = read_board(image, fit, clf)
    t2 = time.perf_counter()
    if np.abs(reading.fit.corners - truth_corners).max() > 0.3 * fit.spacing_px():
        c["board not found right"] += 1
        return c, t1 - t0, 0.0
    c["boards read"] += 1
    c += tally(squares, reading.squares)
    c += guess_tally(squares, reading)
    return c, t1 - t0, t2 - t1


def hard_report(args: argparse.Namespace, positions: list[str], clf: PieceClassifier, crops: str | None) -> None:
    """One line per (difficulty, --hard item, found / corners given): boards found, per point occupancy and
    colour (a board not found or found wrong as 90 wrong), piece types, failure classes."""
    for diff in args.difficulties.split(","):
        j = render.DIFFICULTIES.index(diff)
        for item in args.hard.split(";"):
            modes = ("found", "corners given") if args.corners else ("found",)
            counts = {m: Counter() for m in modes}
            times: dict[str, list[float]] = {m: [] for m in modes}
            finds: dict[str, list[float]] = {m: [] for m in modes}
            cut = 0
            for k in range(args.boards):
                seed = 1000 + 37 * k + j
                squares = positions[j * args.boards + k]
                scene = render.random_scene(seed, difficulty=diff, light_on_dark=not args.no_light_on_dark)
                hardened, cut_on_purpose = hard_scene(scene, item, seed, crops)
                shot = render.render_position(squares, hardened)
                image = cv2.imdecode(cv2.imencode(".jpg", shot.image, [cv2.IMWRITE_JPEG_QUALITY, 90])[1],
                                     cv2.IMREAD_COLOR)
                h_img, w_img = image.shape[:2]
                if not cut_on_purpose and not ((shot.points >= 0).all() and (shot.points[:, 0] < w_img).all()
                                               and (shot.points[:, 1] < h_img).all()):
                    cut += 1
                    continue
                noise = np.random.default_rng([seed, 0x434F52]).normal(0, CORNER_NOISE_PX, (4, 2))
                for m in modes:
                    one, tf, tr = read_one(image, squares, shot.corners, clf,
                                           None if m == "found" else shot.corners + noise)
                    counts[m] += one
                    finds[m].append(tf)
                    if one["boards read"]:
                        times[m].append(tf + tr)
                    if args.verbose and (one["no board"] or one["board not found right"] or one["wrong"]):
                        print(f"    {item} seed {seed} ({m}): no board {one['no board']}, found wrong "
                              f"{one['board not found right']}, wrong points {one['wrong']}")
            boards = args.boards - cut
            for m in modes:
                c = counts[m]
                oc = (c["right"] + c["typeless"]) / (90 * max(boards, 1))
                typed = c["pieces right"] / max(c["pieces"], 1)
                ms = f"{np.median(times[m]) * 1000:.0f} ms" if times[m] else "-"
                ms += f" (finding {np.median(finds[m]) * 1000:.0f} ms)" if finds[m] else ""
                print(f"| {diff} | {item} | {m} | {c['boards read']}/{boards}{f' ({cut} cut)' if cut else ''} | "
                      f"{oc:.1%} | {(c['right'] + c['typeless']) / max(c['points'], 1):.1%} | {typed:.1%} | "
                      f"{c['no board']} | {c['board not found right']} | "
                      f"{c['empty read as piece']} + {c['piece read as empty']} | {c['wrong colour']} | "
                      f"{c['wrong type']} | {c['unsure']} | {ms} |")
                if args.guesses:
                    print_guesses(Counter({k: v for k, v in c.items() if isinstance(k, tuple)}))
                sys.stdout.flush()


def real_report(crops_dir: Path) -> None:
    from xqarb.vision import detect as D
    from xqarb.vision.pieces_train import load_real

    valid = load_real(crops_dir)
    clf = PieceClassifier.load()
    scores, offsets = [], []
    for s in valid:
        im = s.image
        h, w = im.shape[:2]
        k = 0.9 * D.PX / max(h, w)  # a bounding box is about the disc: make the disc 0.9 spacing across
        im = cv2.resize(im, (max(4, round(w * k)), max(4, round(h * k))), interpolation=cv2.INTER_AREA)
        h, w = im.shape[:2]
        n = 2 * D.PX
        canvas = cv2.copyMakeBorder(im, (n - h) // 2, n - h - (n - h) // 2, (n - w) // 2, n - w - (n - w) // 2,
                                    cv2.BORDER_REPLICATE)
        found, val = D.find_discs(D.circle_score(canvas), np.array([[1.0 - D.MARGIN] * 2]), reach=0.25)
        scores.append(val[0])
        offsets.append(float(np.hypot(*(found[0] - (1.0 - D.MARGIN)))))
    sc = np.array(scores)
    print(f"real valid crops (n={len(sc)}): disc score median {np.median(sc):.2f}, 1st percentile "
          f"{np.percentile(sc, 1):.2f}; >= EMPTY_BELOW ({D.EMPTY_BELOW}) {np.mean(sc >= D.EMPTY_BELOW):.1%}, >= "
          f"PIECE_ABOVE ({D.PIECE_ABOVE}) {np.mean(sc >= D.PIECE_ABOVE):.1%}; disc centre off the box centre: median "
          f"{np.median(offsets):.3f}, 95th percentile {np.percentile(offsets, 95):.3f} spacing")
    y = np.array([s.type_index for s in valid])
    red = np.array([s.red for s in valid])
    logp, reds = 0.0, 0.0
    for side, dx, dy in D.VARIANTS:  # the crop as a square about its centre, scaled and shifted as detect does
        crops = []
        for s in valid:
            h, w = s.image.shape[:2]
            n = max(h, w)
            m = side * n
            cx, cy = (w - 1) / 2 + dx * n, (h - 1) / 2 + dy * n
            M = np.array([[m / 48, 0, cx - m / 2], [0, m / 48, cy - m / 2]], np.float32)
            crops.append(cv2.warpAffine(s.image, M, (48, 48), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                                        borderMode=cv2.BORDER_REPLICATE))
        reads = clf.read(crops)
        logp = logp + np.log(np.stack([r.type_probs for r in reads]) + 1e-9)
        reds = reds + np.array([r.red for r in reads])
    probs = np.exp(logp / len(D.VARIANTS))
    probs /= probs.sum(axis=1, keepdims=True)
    reds = reds / len(D.VARIANTS)
    right = (probs.argmax(axis=1) == y) & ((reds >= 0.5) == red)
    colour_sure = np.abs(reds - 0.5) >= D.COLOUR_SURE - 0.5
    for th in sorted({0.75, D.TYPE_SURE, 0.95}):
        sure = (probs.max(axis=1) >= th) & colour_sure
        print(f"  letters printed at type p >= {th}: {sure.mean():.1%} of crops, wrong among them "
              f"{1 - right[sure].mean():.2%} (all crops: letter right {right.mean():.1%})")


def _default_games() -> Path:
    here = Path(__file__).resolve().parents[1]
    for cand in (os.environ.get("XQARB_SHARED", ""), here.parent / "shared", here / "shared"):
        if cand and (Path(cand) / "data" / "games" / "ccpd_dev.jsonl").is_file():
            return Path(cand) / "data" / "games" / "ccpd_dev.jsonl"
    raise FileNotFoundError("../shared/data/games/ccpd_dev.jsonl not found; set XQARB_SHARED")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boards", type=int, default=20, help="boards per difficulty")
    ap.add_argument("--difficulties", default="plain,easy,hard")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--games", type=Path, default=None)
    ap.add_argument("--positions", choices=("game", "composed", "opening"), default="game",
                    help="game: a random ply of a real game; composed: legal positions no game reached; opening: "
                         "a ply among a game's first OPENING_PLIES (crowded boards: many lines hidden by pieces)")
    ap.add_argument("--settings", default="as drawn",
                    help="board-finding settings, comma separated, of render.FINDING_SETTINGS (as drawn, turned, "
                         "filling, small, hidden lines, clutter): each scene changed that way")
    ap.add_argument("--verbose", action="store_true", help="one line per board")
    ap.add_argument("--no-light-on-dark", action="store_true",
                    help="no sets of light characters on dark discs (render.LIGHT_ON_DARK: 10%% of easy, 20%% of "
                         "hard scenes by default)")
    ap.add_argument("--real", action="store_true", help="measure on the real piece photos instead (see above)")
    ap.add_argument("--hard", default=None,
                    help="';'-separated items: none, a hard option, options joined by '+', or the preset hard "
                         "(see above); prints a table row per item")
    ap.add_argument("--guesses", action="store_true",
                    help="per cause of doubt: points printed as their best reading and how many were right, and "
                         "how many kept '?' or X / x would have been right")
    ap.add_argument("--corners", action="store_true", help="with --hard: also read from the given corners")
    ap.add_argument("--reader", choices=("detect", "points"), default="detect",
                    help="points: the tracker's occupancy.read_points with the classifier, what detect used before")
    args = ap.parse_args(argv)
    if args.real:
        real_report((args.games or _default_games()).parents[1] / "piece_crops" / "valid")
        return 0
    diffs = args.difficulties.split(",")
    clf = PieceClassifier.load()
    n_positions = args.boards * len(render.DIFFICULTIES)
    if args.positions == "composed":
        positions = composed_positions(n_positions, args.seed)
    else:
        positions = game_positions(args.games or _default_games(), n_positions, args.seed,
                                   OPENING_PLIES if args.positions == "opening" else None)
    if args.hard:
        print("| difficulty | hard options | board | boards read | occupancy+colour per point (not found = 90 "
              "wrong) | on boards read | piece type right | no board | found wrong | occupancy (empty->piece + "
              "piece->empty) | wrong colour | wrong type | '?' | time |")
        print("|" + "---|" * 14)
        crops = (args.games or _default_games()).parents[1] / "piece_crops" / "valid"
        hard_report(args, positions, clf, str(crops) if crops.is_dir() else None)
        return 0
    for diff, setting in [(d, s) for d in diffs for s in args.settings.split(",")]:
        j = render.DIFFICULTIES.index(diff)  # the same boards for a difficulty whichever others are asked for
        c: Counter = Counter()
        t_find, t_read, reasons, guesses = [], [], Counter(), Counter()
        for k in range(args.boards):
            squares = positions[j * args.boards + k]
            scene = render.random_scene(1000 + 37 * k + j, difficulty=diff, light_on_dark=not args.no_light_on_dark)
            shot = render.render_position(squares, render.finding_scene(scene, setting, 1000 + 37 * k + j))
            image = cv2.imdecode(cv2.imencode(".jpg", shot.image, [cv2.IMWRITE_JPEG_QUALITY, 90])[1],
                                 cv2.IMREAD_COLOR)
            h_img, w_img = image.shape[:2]
            if not ((shot.points >= 0).all() and (shot.points[:, 0] < w_img).all()
                    and (shot.points[:, 1] < h_img).all()):
                c["grid cut by the picture's edge"] += 1  # not a board in view: no finder can give its corners
                continue
            t0 = time.perf_counter()
            try:
                fit = find_board(image)
            except NoBoardFound as exc:
                c["no board"] += 1
                if args.verbose:
                    print(f"    seed {1000 + 37 * k + j}: no board found: {exc.reason}")
                continue
            t1 = time.perf_counter()
            if args.reader == "points":
                from xqarb.vision.occupancy import read_points

                got, used = read_points(image, fit, clf).squares(), fit
                reasons_of: tuple[str, ...] = ("",) * 90
            else:
                reading = read_board(image, fit, clf)
                got, used, reasons_of = reading.squares, reading.fit, reading.reasons
            t2 = time.perf_counter()
            err = np.abs(used.corners - shot.corners).max()
            if err > 0.3 * fit.spacing_px():
                c["board not found right"] += 1
                if args.verbose:
                    print(f"    seed {1000 + 37 * k + j}: board found wrong, a corner {err / fit.spacing_px():.2f} "
                          "spacing off")
                continue
            t_find.append(t1 - t0)
            t_read.append(t2 - t1)
            c["boards read"] += 1
            one = tally(squares, got)
            c += one
            if args.reader == "detect":
                guesses += guess_tally(squares, reading)
            if args.verbose:
                whys = Counter(w.split(" (")[0] for w in reasons_of if w)
                print(f"    seed {1000 + 37 * k + j}: {one['pieces']} pieces, right {one['right']}, "
                      f"'?' {one['unsure']}, wrong {one['wrong']}; {dict(whys.most_common(3))}")
            for i, why in enumerate(reasons_of):
                if why:
                    reasons[("piece: " if squares[i] != "." else "empty: ") + why.split(" (")[0].split(" 0.")[0]] += 1
        n = max(c["points"], 1)
        label = diff if setting == "as drawn" else f"{diff}, {setting}"
        boards = args.boards - c["grid cut by the picture's edge"]
        cut = f", {args.boards - boards} left out: the grid cut by the picture's edge" if boards < args.boards else ""
        print(f"{label}: {c['boards read']}/{boards} boards read ({c['no board']} no board found, "
              f"{c['board not found right']} board not found right{cut}); {c['points']} points: right "
              f"{c['right'] / n:.2%}, X/x {c['typeless'] / n:.2%}, '?' {c['unsure'] / n:.2%}, "
              f"wrong {c['wrong']} ({c['wrong'] / n:.2%}); "
              f"per point with a board not found or found wrong as 90 wrong: "
              f"{c['right'] / (90 * max(boards, 1)):.2%}")
        print("\n".join(breakdown(c)))
        if t_read:
            print(f"  time per photo (median): find_board {np.median(t_find) * 1000:.0f} ms, read_board "
                  f"{np.median(t_read) * 1000:.0f} ms")
        print(f"  why '?': {dict(reasons.most_common(8))}")
        if args.guesses:
            print("  points whose evidence was not sure, by cause (detect's best readings):")
            print_guesses(guesses)
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
