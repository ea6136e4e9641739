"""The synthetic camera renderer: truth coordinates, pieces, hands, half-way pieces, determinism, variety."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from xqarb.vision import render_assets
from xqarb.vision.render import (
    FILES,
    Hand,
    RenderError,
    game_truth,
    point_index,
    random_scene,
    render_game,
    render_position,
    squares_from_fen,
)
from xqarb.vision.render_cli import add_arguments, main_render

START_FEN = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"
START = squares_from_fen(START_FEN)
EMPTY = "." * 90
# The first moves of a real game (ccpd_dev.jsonl, game 0), with a capture at ply 10 (h4g4 takes the pawn).
MOVES = ["h2e2", "h9g7", "h0g2", "i9h9", "i0h0", "g6g5", "h0h4", "b9c7", "g3g4", "g5g4", "h4g4", "h7h8"]


def _sample(img: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Grey level at sub-pixel points (bilinear)."""
    grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY).astype(np.float32)
    mx = pts[:, 0].astype(np.float32).reshape(-1, 1)
    my = pts[:, 1].astype(np.float32).reshape(-1, 1)
    return cv2.remap(grey, mx, my, cv2.INTER_LINEAR).ravel()


def _apply(squares: str, moves: list[str]) -> str:
    sq = list(squares)
    for mv in moves:
        s, d = point_index(mv[:2]), point_index(mv[2:])
        sq[d], sq[s] = sq[s], "."
    return "".join(sq)


def _ink_mask(img: np.ndarray, red: bool) -> np.ndarray:
    b, g, r = (img[..., i].astype(int) for i in range(3))
    if red:
        return (r - np.maximum(g, b) > 60).astype(np.uint8)
    return (np.maximum(np.maximum(r, g), b) < 90).astype(np.uint8)


@pytest.fixture(scope="module")
def plain():
    return random_scene(3, difficulty="plain")


@pytest.fixture(scope="module")
def tilted():
    """An easy scene seen at an angle from a short side (so the grid is not axis-aligned in the image)."""
    for seed in range(200):
        sc = random_scene(seed, difficulty="easy")
        if sc.camera.tilt_deg > 12 and 60 < sc.camera.azimuth_deg % 180 < 120:
            return sc
    raise AssertionError("no tilted short-side easy scene in 200 seeds")


@pytest.fixture(scope="module")
def wavy():
    """A hard scene whose cloth/vinyl/paper sheet does not lie flat, with the camera's noise and light removed so
    that the lines can be measured."""
    for seed in range(200):
        sc = random_scene(seed, difficulty="hard")
        if sc.board.wave and sc.camera.width == 1280 and sc.board.frame_gap > 0:
            flat = random_scene(seed, difficulty="plain")
            return replace(sc, light=flat.light, noise=0.0, blur=0.0, jpeg_quality=95)
    raise AssertionError("no wavy hard scene in 200 seeds")


@pytest.mark.parametrize("which", ["plain", "tilted", "wavy"])
def test_truth_points_lie_on_the_printed_lines(which, request):
    scene = request.getfixturevalue(which)
    r = render_position(EMPTY, scene)
    pts = r.points.reshape(10, 9, 2)
    # Corners are the outer intersections in the order a9, i9, i0, a0.
    assert np.allclose(r.corners, [pts[0, 0], pts[0, 8], pts[9, 8], pts[9, 0]])
    # Halfway between neighbouring points the line is darkest exactly on the segment joining them: sample
    # across the segment and find the darkest offset.
    segs = [(pts[i, j], pts[i, j + 1]) for i in range(10) for j in range(8)]
    segs += [(pts[i, j], pts[i + 1, j]) for i in range(9) for j in range(9) if i != 4]  # files break at the river
    offs = np.linspace(-6, 6, 97)
    errors = []
    for p, q in segs:
        m = (p + q) / 2
        d = (q - p) / np.linalg.norm(q - p)
        n = np.array([-d[1], d[0]])
        prof = _sample(r.image, m + offs[:, None] * n)
        assert prof.min() < np.median(prof) - 30, "no printed line near the truth segment"
        w = np.clip(np.median(prof) - prof, 0, None)  # darkness across the segment; its centre is the line's
        errors.append((offs * w).sum() / w.sum())
    errors = np.abs(errors)
    assert errors.max() <= 0.4, f"truth off the line by {errors.max():.2f} px"
    assert errors.mean() <= 0.12, f"truth off the lines by {errors.mean():.2f} px on average"
    if which == "wavy":
        # the printed grid is bowed: the points are not a homography of the corners, and the truth follows the print
        H, _ = cv2.findHomography(np.float32([[0, 9], [8, 9], [8, 0], [0, 0]]), np.float32(r.corners))
        idx = np.arange(90)
        flat = cv2.perspectiveTransform(np.float32(np.stack([idx % 9, 9 - idx // 9], 1))[None], H)[0]
        assert np.abs(flat - r.points).max() > 0.4
    # A point a quarter spacing off the grid diagonally is not on a line.
    spacing = np.linalg.norm(pts[0, 1] - pts[0, 0])
    on = _sample(r.image, r.points)
    off = _sample(r.image, r.points + spacing * 0.25)
    assert np.median(off) - np.median(on) > 40


def test_pieces_stand_on_their_points_with_the_ink_of_their_colour(plain):
    r = render_position(START, plain)
    spacing = np.linalg.norm(r.points[1] - r.points[0])
    red, black = _ink_mask(r.image, True), _ink_mask(r.image, False)
    for i, ch in enumerate(START):
        x, y = np.round(r.points[i]).astype(int)
        k = int(spacing * 0.3)
        win_r = red[y - k:y + k, x - k:x + k].mean()
        win_b = black[y - k:y + k, x - k:x + k].mean()
        if ch == ".":
            assert win_r < 0.01, f"red ink at empty {i}"
        elif ch.isupper():
            assert win_r > 0.05 and win_b < 0.03, f"red piece {ch} at {i}: red {win_r:.3f} black {win_b:.3f}"
        else:
            assert win_b > 0.05 and win_r < 0.01, f"black piece {ch} at {i}: red {win_r:.3f} black {win_b:.3f}"


def test_offsets_move_a_piece_half_way(plain):
    sq = list(EMPTY)
    sq[point_index("e3")] = "R"
    squares = "".join(sq)
    r0 = render_position(squares, plain, offsets={"e3": (0.0, 0.0)})
    r1 = render_position(squares, plain, offsets={"e3": (0.5, 0.0)})
    r2 = render_position(squares, plain, offsets={"e3": (0.0, 0.5)})
    e3, f3, e4 = (r0.points[point_index(p)] for p in ("e3", "f3", "e4"))

    def centroid(img):
        ys, xs = np.nonzero(_ink_mask(img, True))
        return np.array([xs.mean(), ys.mean()])

    spacing = np.linalg.norm(f3 - e3)
    assert np.linalg.norm(centroid(r0.image) - e3) < 0.08 * spacing
    assert np.linalg.norm(centroid(r1.image) - (e3 + f3) / 2) < 0.08 * spacing
    assert np.linalg.norm(centroid(r2.image) - (e3 + e4) / 2) < 0.08 * spacing


def test_hand_covers_pieces_and_lifted_piece_leaves_its_point(plain):
    base = render_position(START, plain)
    hand = render_position(START, plain, hand=Hand((4.0, 2.0), "red", 1.0))
    changed = np.abs(hand.image.astype(int) - base.image.astype(int)).max(2) > 40
    # the hand covers a patch of several points around its target and the arm reaches the image edge (Red's side)
    pts = base.points
    covered = [i for i in range(90) if changed[int(pts[i, 1]), int(pts[i, 0])]]
    assert point_index("e2") in covered or point_index("e1") in covered
    assert len(covered) >= 2
    assert changed[-5:, :].any(), "the arm should come from Red's side, the bottom of an overhead image"
    assert not changed[:100, :].any(), "nothing should change at Black's end"
    lifted = render_position(START, plain, lifted="b2")
    x, y = np.round(pts[point_index("b2")]).astype(int)
    k = int(np.linalg.norm(pts[1] - pts[0]) * 0.3)
    assert _ink_mask(base.image, True)[y - k:y + k, x - k:x + k].mean() > 0.05
    assert _ink_mask(lifted.image, True)[y - k:y + k, x - k:x + k].mean() < 0.01


def test_unknown_types_and_captured_pieces_beside_the_board(plain):
    sq = list(EMPTY)
    sq[point_index("c4")], sq[point_index("g7")] = "X", "x"
    r = render_position("".join(sq), plain, offsets={"c4": (0.0, 0.0), "g7": (0.0, 0.0)})
    spacing = np.linalg.norm(r.points[1] - r.points[0])
    k = int(spacing * 0.3)
    for p, red in (("c4", True), ("g7", False)):
        x, y = np.round(r.points[point_index(p)]).astype(int)
        assert _ink_mask(r.image, red)[y - k:y + k, x - k:x + k].mean() > 0.05, p
    # captured pieces lie outside the grid, black ones (taken by Red) on file i's side, red ones on file a's side
    cap = render_position(EMPTY, plain, beside="pppP")
    bare = render_position(EMPTY, plain)
    black = _ink_mask(cap.image, False) * (1 - _ink_mask(bare.image, False))  # new dark ink, not the board's
    red = _ink_mask(cap.image, True) * (1 - _ink_mask(bare.image, True))
    right, left = black[:, int(cap.corners[1, 0]):].sum(), black[:, :int(cap.corners[0, 0])].sum()
    assert right > 50 and left < 0.2 * right  # (the red piece's shadow is dark too)
    assert red[:, :int(cap.corners[0, 0])].sum() > 20 and red[:, int(cap.corners[1, 0]):].sum() == 0


def test_lifted_piece_is_drawn_in_the_hand(plain):
    hand = Hand((1.0, 2.5), "red", 1.0)
    implicit = render_position(START, plain, hand=hand, lifted="b2")
    explicit = render_position(START, plain, hand=replace(hand, holding="C"), lifted="b2")
    assert np.array_equal(implicit.image, explicit.image)
    sq = list(START)
    sq[point_index("b2")] = "."
    empty_handed = render_position("".join(sq), plain, hand=hand)
    assert not np.array_equal(empty_handed.image, implicit.image)


def test_motion_blur_smears_the_hand(plain):
    # The hand beside the board (putting a captured piece down), over the plain table: its outline is the only edge.
    base = render_position(EMPTY, plain)
    still = render_position(EMPTY, plain, hand=Hand((10.5, 2.0), "red", 1.0))
    moving = render_position(EMPTY, plain, hand=Hand((10.5, 2.0), "red", 1.0, motion=(0.6, 0.0, 0.0)))
    spacing = np.linalg.norm(base.points[1] - base.points[0])
    x_grid = int(base.corners[1, 0] + (plain.board.sheet_margin + 0.2) * spacing)  # right of the sheet
    region = cv2.absdiff(still.image, base.image).max(2)[:, x_grid:] > 40
    rows = np.nonzero(region.sum(1) > 5)[0]
    assert len(rows) > 20, "the hand should be in the picture beside the board"

    def sharpness(im: np.ndarray) -> tuple[float, float]:
        g = cv2.cvtColor(im, cv2.COLOR_BGR2GRAY).astype(np.float32)[rows, x_grid:]
        return float(np.abs(np.diff(g, axis=1)).max(1).mean()), float(np.abs(np.diff(g, axis=0)).max(0).mean())

    (sx0, sy0), (sx1, sy1) = sharpness(still.image), sharpness(moving.image)
    assert sx1 < 0.5 * sx0  # edges across the motion are smeared
    assert sx1 / sx0 < 0.7 * (sy1 / sy0)  # much more than edges along it


def test_a_hands_shadow_falling_wholly_past_the_pictures_edge_is_no_error():
    # A hand just reaching in by the picture's lower edge, below a corner point: it and its shadow on the board's
    # plane lie wholly below the picture, so there is nothing of them to draw (OpenCV refused the empty region
    # before).
    from xqarb.vision.render_hard import harden, parse

    scene = harden(random_scene(1627, difficulty="hard"), parse("hard", 1627, crops=None))
    hand = Hand((8.0, 0.0), "red", 0.2, height=1.2, angle=0.584)
    bare = render_position(START, scene)
    reaching = render_position(START, scene, hand=hand)
    assert reaching.image.shape == bare.image.shape
    assert not (cv2.absdiff(reaching.image, bare.image).max(2) > 40).any(), "a hand out of the picture drew in it"


def test_bad_input_is_refused(plain):
    with pytest.raises(RenderError):
        render_position("rnb", plain)
    with pytest.raises(RenderError):
        render_position(START, plain, lifted="z9")
    with pytest.raises(RenderError):
        random_scene(1, difficulty="impossible")
    with pytest.raises(RenderError):
        list(render_game(START_FEN, ["e5e6"], 1, difficulty="plain"))  # no piece on e5


def test_same_seed_same_pixels_across_processes():
    code = (
        "import hashlib, sys; from xqarb.vision.render import random_scene, render_position, squares_from_fen;"
        f"sq = squares_from_fen({START_FEN!r}); sc = random_scene(11, difficulty='hard');"
        "print(hashlib.sha256(render_position(sq, sc, beside='pP').image.tobytes()).hexdigest())"
    )
    outs = set()
    for hashseed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=hashseed)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120,
                             check=True).stdout.strip()
        outs.add(out)
    assert len(outs) == 1
    other = render_position(START, random_scene(12, difficulty="hard"), beside="pP").image
    import hashlib
    assert hashlib.sha256(other.tobytes()).hexdigest() not in outs


def test_scenes_vary_like_real_venues():
    scenes = [random_scene(s) for s in range(40)]
    assert len({s.board.material for s in scenes}) == 4
    assert len({round(s.camera.azimuth_deg / 90) % 4 for s in scenes}) == 4  # all four sides of the board
    tilts = [s.camera.tilt_deg for s in scenes]
    assert min(tilts) < 8 and max(tilts) > 28 and max(tilts) <= 36
    assert len({(s.pieces.font.path, s.pieces.font.index) for s in scenes}) >= 3
    assert len({s.glyphs for s in scenes}) >= 3
    assert len({(s.camera.width, s.camera.height) for s in scenes}) >= 2
    assert sum(bool(s.light.glare) for s in scenes) >= 8
    assert min(s.jpeg_quality for s in scenes) < 60 and max(s.noise for s in scenes) > 4
    assert sum(s.board.line[2] > 120 and s.board.line[2] > 2 * s.board.line[1] for s in scenes) >= 8  # red lines
    assert sum(s.board.clutter > 0 for s in scenes) >= 20
    assert sum(bool(s.board.wave) for s in scenes) >= 5  # sheets that do not lie flat
    assert sum(s.board.neighbour is not None for s in scenes) >= 3  # the next table's board in view
    # different seeds give different pictures of the same position
    a, b = (render_position(START, sc).image for sc in scenes[:2])
    assert a.shape != b.shape or np.abs(a.astype(int) - b.astype(int)).mean() > 10


def test_some_sets_have_dark_inks_or_light_characters_on_dark_discs():
    """Real sets print Black in black, dark green or blue-black ink, and some sets and diagrams draw light
    characters on dark (and red) discs: the renderer draws all of them in a share of its scenes."""
    looks = [random_scene(s, light_on_dark=True).pieces for s in range(60)]
    dark = [lk for lk in looks if lk.black_face is not None]
    assert 5 <= len(dark) <= 25
    assert any(lk.red_face is not None for lk in dark) and any(lk.red_face is None for lk in dark)
    assert all(random_scene(s, difficulty="plain", light_on_dark=True).pieces.black_face is None for s in range(20))
    # asked for or not, the other scenes are the same, and without asking there are none (the tracker's games)
    assert [replace(lk, red_face=None, black_face=None, light_ink=looks[0].light_ink) for lk in looks] == [
        replace(random_scene(s).pieces, light_ink=looks[0].light_ink) for s in range(60)]
    light = [lk.black_ink for lk in looks if lk.black_face is None]
    assert sum(g > r + 30 for _b, g, r in light) >= 3  # dark green
    assert sum(b > r + 40 and b > g + 20 for b, g, r in light) >= 2  # blue-black
    # a dark disc's face is dark and its character light
    sprite = render_assets.piece_sprite(dark[0], "將", False, 64)
    grey = sprite[..., :3].mean(axis=2)
    yy, xx = np.mgrid[0:64, 0:64]
    rim = np.abs(np.hypot(xx - 31.5, yy - 31.5) - 0.66 * 32) < 1.5  # between the character and the ring
    assert np.median(grey[rim]) < 110 and np.percentile(grey[np.hypot(xx - 31.5, yy - 31.5) < 12], 95) > 150


def test_same_seed_same_video():
    a = [f.image for f in render_game(START_FEN, MOVES[:2], 5, difficulty="easy")]
    b = [f.image for f in render_game(START_FEN, MOVES[:2], 5, difficulty="easy")]
    c = [f.image for f in render_game(START_FEN, MOVES[:2], 6, difficulty="easy")]
    assert len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert len(a) != len(c) or any(x.shape != y.shape or not np.array_equal(x, y) for x, y in zip(a, c, strict=False))


@pytest.fixture(scope="module")
def game():
    frames = list(render_game(START_FEN, MOVES, 21, difficulty="plain", misplace_rate=1.0, half_way_share=1.0,
                              nudge_rate=0.5, jpeg_roundtrip=False))
    return frames


def test_game_truth_follows_the_moves(game):
    truths = [f.truth for f in game]
    events = [t.event for t in truths]
    c = Counter(events)
    assert c["lift"] == c["place"] == len(MOVES)
    assert c["hand_enter"] == c["hand_leave"] == len(MOVES) + c["nudge"]
    assert c["capture_removed"] == 2  # g5g4 takes the pawn on g4; h4g4 takes it back
    assert c["nudge"] >= 1
    # ply counts placed moves; squares after each place equal the moves applied so far
    for t in truths:
        assert t.squares == _apply(START, MOVES[:t.ply]) or t.lifted is not None or t.event == "capture_removed"
    assert truths[-1].ply == len(MOVES) and truths[-1].squares == _apply(START, MOVES)
    # frames 4 per second, time stamps strictly increasing
    ts = [f.t_us for f in game]
    assert ts[1] - ts[0] == 250_000 and all(b > a for a, b in itertools.pairwise(ts))
    # hand frames are never stable; after each hand leaves, the board stays still at least 1 s (4 frames)
    for t in truths:
        assert t.stable == (not t.hand_present)
    runs, run = [], 0
    for t in truths:
        if t.stable:
            run += 1
        else:
            if run:
                runs.append(run)
            run = 0
    runs.append(run)
    assert min(runs) >= 4
    # lift: the lifted point is empty in the truth while the hand holds it
    for t in truths:
        if t.lifted is not None:
            assert t.hand_present and t.squares[point_index(t.lifted)] == "."


def test_game_images_show_hands_and_half_way_pieces_as_the_truth_says(game):
    imgs = [f.image for f in game]
    truths = [f.truth for f in game]
    for k in range(1, len(game)):
        b, g, r = cv2.split(cv2.absdiff(imgs[k], imgs[k - 1]))
        changed = cv2.countNonZero(cv2.threshold(cv2.max(cv2.max(b, g), r), 40, 255, cv2.THRESH_BINARY)[1])
        share = changed / b.size
        if truths[k].stable and truths[k - 1].stable:
            assert share < 0.0005, f"frame {k}: still board changed"
        if truths[k].event == "hand_enter":
            assert share > 0.005, f"frame {k}: hand entered but nothing changed"
    # Every placement is off its point (misplace_rate 1); those left half-way are reported with both points and
    # the piece's ink centre is between them.
    half = [t for t in truths if t.misaligned is not None and t.stable]
    assert half, "expected a piece left half-way"
    t = half[-1]
    frame = game[truths.index(t)]
    p, q = t.misaligned
    assert t.squares[point_index(p)] != "." and t.squares[point_index(q)] == "."
    assert abs(FILES.index(p[0]) - FILES.index(q[0])) + abs(int(p[1]) - int(q[1])) == 1
    corners = np.array(frame.truth.corners)
    # points from the corners (the grid is planar: the homography of the 4 corners maps it exactly)
    Hm = cv2.getPerspectiveTransform(np.float32([[0, 9], [8, 9], [8, 0], [0, 0]]), np.float32(corners))

    def img_pt(name: str) -> np.ndarray:
        v = Hm @ np.array([FILES.index(name[0]), int(name[1]), 1.0])
        return v[:2] / v[2]

    mid = (img_pt(p) + img_pt(q)) / 2
    spacing = np.linalg.norm(img_pt("a0") - img_pt("b0"))
    red = t.squares[point_index(p)].isupper()
    mask = _ink_mask(frame.image, red)
    x, y = np.round(mid).astype(int)
    k = int(spacing * 0.45)
    ys, xs = np.nonzero(mask[y - k:y + k, x - k:x + k])
    centre = np.array([xs.mean() + x - k, ys.mean() + y - k])
    assert np.linalg.norm(centre - mid) < 0.12 * spacing


def test_main_render_writes_frames_and_truth(tmp_path: Path):
    games = tmp_path / "games.jsonl"
    games.write_text(json.dumps({"start_fen": START_FEN, "iccs": MOVES[:3]}) + "\n", encoding="utf-8")
    import argparse

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["--games", str(games), "--seed", "4", "--difficulty", "easy", "--frames", "10",
                              "--out", str(tmp_path / "out")])
    assert main_render(args) == 0
    files = sorted((tmp_path / "out").glob("frame_*.jpg"))
    assert len(files) == 10
    lines = [json.loads(x) for x in (tmp_path / "out" / "truth.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [x["frame"] for x in lines] == [f.name for f in files]
    img = cv2.imread(str(files[0]))
    assert img is not None and img.shape[0] >= 720
    assert len(lines[0]["corners"]) == 4 and lines[0]["squares"] == START


def test_missing_fonts_error_names_the_setup_script(monkeypatch):
    monkeypatch.setattr(render_assets, "_faces_from_fc_list", list)
    monkeypatch.setattr(render_assets, "_KNOWN_FONT_FILES", ())
    render_assets.cjk_fonts.cache_clear()
    try:
        with pytest.raises(render_assets.FontsMissing, match=r"scripts/setup\.sh"):
            render_assets.cjk_fonts()
    finally:
        monkeypatch.undo()
        render_assets.cjk_fonts.cache_clear()
    assert render_assets.cjk_fonts()


def test_hard_video_keeps_its_truth_consistent():
    frames = list(render_game(START_FEN, MOVES[:4], 8, difficulty="hard"))
    ts = [f.t_us for f in frames]
    assert all(b > a for a, b in itertools.pairwise(ts))
    assert any((b - a) != 250_000 for a, b in itertools.pairwise(ts)), "hard videos jitter their time stamps"
    assert max(abs(t - 250_000 * i) for i, t in enumerate(ts)) <= 6000
    plies = [f.truth.ply for f in frames]
    assert plies == sorted(plies) and plies[-1] == 4
    assert frames[-1].truth.squares == _apply(START, MOVES[:4])
    shape = frames[0].image.shape
    assert all(f.image.shape == shape and f.image.dtype == np.uint8 for f in frames)
    assert all(len(f.truth.points) == 90 and len(f.truth.corners) == 4 for f in frames)


def test_game_truth_is_the_videos_truth():
    video = [(f.t_us, f.truth) for f in render_game(START_FEN, MOVES[:3], 9, difficulty="hard")]
    assert video == game_truth(START_FEN, MOVES[:3], 9, difficulty="hard")


def test_real_games_end_in_their_recorded_position(shared_data: Path):
    """100 real games played through the video timeline (no pixels): the truth after the last move is the game's
    final position as Fairy-Stockfish computed it, and the truth never breaks its own rules on the way."""
    lines = (shared_data / "games" / "ccpd_dev.jsonl").read_text(encoding="utf-8").splitlines()[:100]
    scene = random_scene(1, difficulty="hard")
    halfway = 0
    for k, line in enumerate(lines):
        g = json.loads(line)
        truths = [t for _, t in game_truth(g["start_fen"], g["iccs"], k, scene=scene, misplace_rate=0.1)]
        assert truths[-1].squares == squares_from_fen(g["final_fen"]), f"game {k}"
        assert truths[-1].ply == len(g["iccs"]) and truths[-1].stable
        assert sum(t.event == "place" for t in truths) == len(g["iccs"])
        for t in truths:
            if t.misaligned:
                p, q = t.misaligned
                assert t.squares[point_index(p)] != "." and t.squares[point_index(q)] == ".", f"game {k}"
        halfway += sum(1 for a, b in itertools.pairwise(truths) if b.misaligned and b.misaligned != a.misaligned)
    assert halfway > 25  # 10% misplaced, about a third of those left half-way


def test_players_think_with_the_board_still_and_nothing_else_changes():
    """think_s adds still frames after each move's 1-3 s: the same frames otherwise, the moves later by that."""
    base = game_truth(START_FEN, MOVES[:3], 5, fps=2.0, difficulty="easy")
    slow = game_truth(START_FEN, MOVES[:3], 5, fps=2.0, difficulty="easy", think_s=20.0)
    assert game_truth(START_FEN, MOVES[:3], 5, fps=2.0, difficulty="easy", think_s=0.0) == base
    extra = len(slow) - len(base)
    assert extra == 3 * 40  # 20 s at 2 fps after each of the 3 moves
    # The board is still (no hand) through every added frame, and each move's frames are the same but for time.
    assert [t.hand_present for _, t in slow].count(True) == [t.hand_present for _, t in base].count(True)
    assert [t.squares for _, t in slow if t.event] == [t.squares for _, t in base if t.event]
    first_lift = [t_us for t_us, t in slow if t.event == "lift"]
    assert first_lift[1] - first_lift[0] >= 20e6 + 1e6  # the think, plus at least the 1 s left still


def test_a_think_beyond_the_videos_bounds_is_refused():
    with pytest.raises(RenderError, match="think_s"):
        game_truth(START_FEN, MOVES[:1], 5, think_s=-1.0)
