"""`xqarb vision render`: a rendered game as JPEG frames plus truth.jsonl, for people and the demo.

Light to import (argparse only): the vision cli registers these at start-up; the renderer (OpenCV, NumPy,
Pillow) is imported when the command runs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `xqarb vision render` (the vision cli adds them to its subparser)."""
    parser.add_argument("--game-index", type=int, default=0, help="game number in the games file (0-based)")
    parser.add_argument("--games", default=None,
                        help="games JSONL (start_fen, iccs); default ../shared/data/games/ccpd_dev.jsonl")
    parser.add_argument("--seed", type=int, default=0, help="scene and timing seed")
    parser.add_argument("--difficulty", choices=("plain", "easy", "hard"), default="hard")
    parser.add_argument("--hard", default=None, metavar="OPTIONS",
                        help="the renderer's hard options (render_hard.py): 'hard' (a preset drawn per seed) or names "
                             "separated by commas: tall pieces, plastic sheet, outdoor sun, dark inks, light on "
                             "dark, steep camera, turned picture, filling, small frame, busy background, real tops")
    parser.add_argument("--piece-crops", default=None, metavar="DIR",
                        help="for 'real tops': a piece_crops split folder (<colour>_<type>/ of real piece photos)")
    parser.add_argument("--fps", type=float, default=4.0)
    parser.add_argument("--frames", type=int, default=200, help="stop after this many frames (0 = whole game)")
    parser.add_argument("--out", required=True, help="directory for frame_NNNNN.jpg and truth.jsonl")


def _default_games() -> str:
    from xqarb.vision.render import RenderError

    env = os.environ.get("XQARB_SHARED")
    here = Path(__file__).resolve()  # services/vision/render_cli.py in a clone beside ../shared
    for base in ([Path(env)] if env else []) + [Path.cwd().parent / "shared", here.parents[2].parent / "shared"]:
        p = base / "data" / "games" / "ccpd_dev.jsonl"
        if p.is_file():
            return str(p)
    raise RenderError("no games file found: pass --games PATH (a JSONL with start_fen and iccs per line)")


def main_render(args: argparse.Namespace) -> int:
    """Write a rendered game video as JPEG frames plus truth.jsonl (one line per frame); a request the renderer
    cannot draw (no games file, a bad option) is said on stderr with exit status 2."""
    from xqarb.vision.render import RenderError

    try:
        return _write_video(args)
    except (RenderError, FileNotFoundError) as exc:
        print(f"xqarb vision render: {exc}", file=sys.stderr)
        return 2


def _write_video(args: argparse.Namespace) -> int:
    from xqarb.vision.render import RenderError, jpeg, random_scene, render_game

    path = args.games or _default_games()
    with open(path, encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            if i == args.game_index:
                game = json.loads(line)
                break
        else:
            raise RenderError(f"{path} has no game {args.game_index}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    scene = random_scene(args.seed, difficulty=args.difficulty)
    if getattr(args, "hard", None):
        from xqarb.vision.render_hard import harden, parse

        scene = harden(scene, parse(args.hard, args.seed, crops=getattr(args, "piece_crops", None)))
    count = 0
    with open(out / "truth.jsonl", "w", encoding="utf-8") as tf:
        for frame in render_game(game["start_fen"], game["iccs"], args.seed, fps=args.fps, scene=scene,
                                 jpeg_roundtrip=False):
            name = f"frame_{count:05d}.jpg"
            (out / name).write_bytes(jpeg(frame.image, scene.jpeg_quality))
            tr = frame.truth
            tf.write(json.dumps({
                "frame": name, "t_us": frame.t_us, "ply": tr.ply, "squares": tr.squares,
                "hand_present": tr.hand_present, "lifted": tr.lifted,
                "misaligned": list(tr.misaligned) if tr.misaligned else None, "nudged": tr.nudged,
                "stable": tr.stable, "event": tr.event, "corners": [[round(v, 2) for v in c] for c in tr.corners],
                "points": [[round(v, 2) for v in c] for c in tr.points],
                "game_index": args.game_index, "seed": args.seed,
            }, ensure_ascii=False) + "\n")
            count += 1
            if args.frames and count >= args.frames:
                break
    print(f"wrote {count} frames and truth.jsonl to {out} (game {args.game_index}, seed {args.seed})")
    return 0
