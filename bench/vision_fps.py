"""Vision throughput: frames per second per core on 1280x720 JPEG frames, decode included.

Two figures, measured in one run on the same rendered video (one process, one core):
- changing frames: every frame is decoded at full size and goes through the whole tracker (warp to the top view,
  hand and change maps, point reading when the board is still); the "unchanged" shortcut is switched off;
- unchanged frames: a still board (a new JPEG of the same scene each frame, with sensor noise): the service
  decodes each at 1/8 scale, finds it the same as the last, and skips the rest.
plus, for reference, the cost of a full-size JPEG decode alone and of one board calibration (find_board).
DESIGN's goal: one core keeps up with 25 boards at 4 frames/s, about 100 frames/s.

Run: `.venv/bin/python bench/vision_fps.py [--frames 120] [--write]` (--write records the figures in
bench/RESULTS.md under "## vision").
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import time
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

from xqarb.vision.board import find_board
from xqarb.vision.render import jpeg, random_scene, render_game, render_position, squares_from_fen
from xqarb.vision.tracker import Tracker, TrackerConfig

START = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"
MOVES = ["h2e2", "h9g7", "h0g2", "i9h9", "i0h0", "g6g5", "b0c2", "b9c7", "c3c4", "c6c5"]
ROOT = Path(__file__).resolve().parents[1]


def scene_1280x720(seed: int):
    scene = random_scene(seed, difficulty="hard")
    return replace(scene, camera=replace(scene.camera, width=1280, height=720))


def video(seed: int, frames: int) -> list[bytes]:
    scene = scene_1280x720(seed)
    out = []
    for f in render_game(START, MOVES, seed, scene=scene):
        out.append(jpeg(f.image, scene.jpeg_quality))
        if len(out) >= frames:
            break
    return out


def still(seed: int, frames: int) -> list[bytes]:
    scene = scene_1280x720(seed)
    base = render_position(squares_from_fen(START), scene).image
    rng = np.random.default_rng(seed)
    return [jpeg(np.clip(base + rng.normal(0, 2.0, base.shape), 0, 255).astype(np.uint8), scene.jpeg_quality)
            for _ in range(frames)]


def run(tracker: Tracker, frames: list[bytes], *, reduced_first: bool) -> tuple[float, int]:
    """Seconds for all frames through decode + tracker, as the service does it; and frames skipped."""
    state = tracker.initial()
    t_us = 0
    # calibrate outside the timing (once per board)
    buf = np.frombuffer(frames[0], np.uint8)
    state, _ = tracker.step(state, cv2.imdecode(buf, cv2.IMREAD_COLOR), t_us)
    t0 = time.perf_counter()
    for data in frames:
        t_us += 250_000
        buf = np.frombuffer(data, np.uint8)
        small = cv2.imdecode(buf, cv2.IMREAD_REDUCED_GRAYSCALE_8) if reduced_first else None
        image = None
        if small is None or tracker.needs_image(state, small):
            image = cv2.imdecode(buf, cv2.IMREAD_COLOR)
        state, _ = tracker.step(state, image, t_us, small=small)
    return time.perf_counter() - t0, state.skipped


def profile(frames: list[bytes], top: int = 18) -> None:
    """The tracker's time on changing frames by function (internal time), the frames decoded beforehand."""
    import cProfile
    import io
    import pstats

    tracker = Tracker(TrackerConfig(unchanged_level=-1.0))
    images = [cv2.imdecode(np.frombuffer(d, np.uint8), cv2.IMREAD_COLOR) for d in frames]
    state, _ = tracker.step(tracker.initial(), images[0], 0)  # calibration, not profiled
    prof = cProfile.Profile()
    prof.enable()
    for k, image in enumerate(images):
        state, _ = tracker.step(state, image, (k + 1) * 250_000)
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    print(f"tracker alone: {1000 * stats.total_tt / len(images):.2f} ms per changing frame (under the profiler)")
    stats.sort_stats("tottime").print_stats(top)
    print(out.getvalue())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--frames", type=int, default=120)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--write", action="store_true", help="record the figures in bench/RESULTS.md")
    ap.add_argument("--profile", action="store_true",
                    help="also print where a changing frame's time goes (cProfile of the tracker, decode excluded)")
    args = ap.parse_args()
    cv2.setNumThreads(1)  # per core
    changing = video(args.seed, args.frames)
    if args.profile:
        profile(changing)
    unchanged = still(args.seed, args.frames)
    w_h = cv2.imdecode(np.frombuffer(changing[0], np.uint8), cv2.IMREAD_COLOR).shape[1::-1]

    t0 = time.perf_counter()
    for data in changing:
        cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    decode_fps = len(changing) / (time.perf_counter() - t0)

    img0 = cv2.imdecode(np.frombuffer(changing[0], np.uint8), cv2.IMREAD_COLOR)
    t0 = time.perf_counter()
    find_board(img0)
    calib_s = time.perf_counter() - t0

    full = Tracker(TrackerConfig(unchanged_level=-1.0))  # never skip
    secs, _ = run(full, changing, reduced_first=False)
    changing_fps = len(changing) / secs
    secs, skipped = run(Tracker(), unchanged, reduced_first=True)
    unchanged_fps = len(unchanged) / secs
    secs_game, skipped_game = run(Tracker(), changing, reduced_first=True)
    game_fps = len(changing) / secs_game

    kb = np.mean([len(d) for d in changing]) / 1024
    lines = [
        f"frames {w_h[0]}x{w_h[1]} JPEG, {kb:.0f} KB average, {len(changing)} per run, one core (cv2 threads = 1)",
        f"JPEG decode alone (full size):           {decode_fps:7.1f} frames/s",
        f"changing frames (full decode + tracker): {changing_fps:7.1f} frames/s",
        f"unchanged frames (1/8 decode, skipped):  {unchanged_fps:7.1f} frames/s "
        f"({skipped} of {len(unchanged)} skipped)",
        f"a rendered game as it comes:             {game_fps:7.1f} frames/s "
        f"({skipped_game} of {len(changing)} skipped)",
        f"calibration (find_board, once per board): {calib_s * 1000:.0f} ms",
        f"ratios: unchanged / changing = {unchanged_fps / changing_fps:.1f}x; changing / goal 100 = "
        f"{changing_fps / 100:.2f}; unchanged / goal 100 = {unchanged_fps / 100:.2f}",
    ]
    print("\n".join(lines))
    if args.write:
        stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
        machine = f"{platform.machine()}, {os.cpu_count()} cores, {platform.processor() or platform.platform()}"
        # a dated block at the top of the vision section: the sessions' measurements below it are kept
        block = (f"### `bench/vision_fps.py`, {stamp}\n{machine} (a shared machine: absolute figures move with its "
                 f"load; the ratios are measured in one run).\n\n```\n" + "\n".join(lines) + "\n```\n\n")
        path = ROOT / "bench" / "RESULTS.md"
        text = path.read_text() if path.exists() else "# Benchmark results\n"
        if "## vision\n" in text:
            head, rest = text.split("## vision\n", 1)
            text = head + "## vision\n\n" + block + rest.lstrip("\n")
        else:
            text = text.rstrip("\n") + "\n\n## vision\n\n" + block
        path.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
