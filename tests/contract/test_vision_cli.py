"""`xqarb vision detect IMAGE [--json]` (DESIGN: Command-line contract) on boards drawn by the project's renderer
(`xqarb.vision.render`), written to JPEG files the way a camera would give them."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from .conftest import START_FEN, fen_squares, run_xqarb

cv2 = pytest.importorskip("cv2")
render = pytest.importorskip("xqarb.vision.render")

SQUARE_CHARS = set(".?XxKABNRCPkabnrcp")
TEXT_CHARS = set(".?KABNRCPkabnrcp")  # DESIGN: "FEN letters or `.`, `?` where unsure"
SPARSE_FEN = "3k5/4a4/4b4/9/2p6/9/6P2/4B4/4A4/2R1K4 w - - 0 1"


def _photo(path: Path, fen: str, seed: int, difficulty: str) -> np.ndarray:
    """Render `fen` in a scene and write it as a JPEG; return the true corners (a9, i9, i0, a0)."""
    shot = render.render_position(fen_squares(fen), render.random_scene(seed, difficulty=difficulty))
    assert cv2.imwrite(str(path), shot.image, [cv2.IMWRITE_JPEG_QUALITY, 90])
    return np.asarray(shot.corners, dtype=float)


@pytest.fixture(scope="module")
def start_photo(tmp_path_factory) -> tuple[Path, np.ndarray, subprocess.CompletedProcess, subprocess.CompletedProcess]:
    """A plain rendered start position, and `vision detect` run on it once as text and once with --json."""
    folder = tmp_path_factory.mktemp("vision")
    path = folder / "start.jpg"
    corners = _photo(path, START_FEN, seed=1, difficulty="plain")
    return path, corners, run_xqarb(["vision", "detect", path], cwd=folder), run_xqarb(
        ["vision", "detect", path, "--json"], cwd=folder)


def _grid(stdout: str) -> list[str]:
    return [ln for ln in stdout.splitlines() if re.fullmatch(r"\S{9}", ln)]


def test_detect_text_is_a_ten_line_grid_rank_9_first_plus_corners(start_photo):
    r = start_photo[2]
    assert r.returncode == 0, r.stderr
    grid = _grid(r.stdout)
    assert len(grid) == 10, r.stdout
    assert all(len(row) == 9 and set(row) <= SQUARE_CHARS for row in grid), grid
    truth = fen_squares(START_FEN)
    # Rank 9 first: Black's back rank is the first line, Red's the last; the river ranks are empty.
    assert all(ch in "?" or ch.islower() for ch in grid[0]), grid[0]
    assert all(ch in "?" or ch.isupper() for ch in grid[9]), grid[9]
    assert set(grid[4]) <= {".", "?"} and set(grid[5]) <= {".", "?"}
    assert sum(ch not in ".?" for ch in "".join(grid)) >= 28
    assert "".join(grid).count(".") >= truth.count(".") - 4
    rest = "\n".join(ln for ln in r.stdout.splitlines() if ln not in grid)
    numbers = [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", rest)]
    assert "corner" in rest.lower() and len(numbers) >= 8, rest


def test_detect_json_squares_and_corners(start_photo):
    corners, text, r = start_photo[1:]
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert set(data) >= {"squares", "corners"}
    sq = data["squares"]
    assert isinstance(sq, str) and len(sq) == 90 and set(sq) <= SQUARE_CHARS
    truth = fen_squares(START_FEN)
    for i, (want, got) in enumerate(zip(truth, sq, strict=True)):
        if got == "?":
            continue
        assert (want == ".") == (got == "."), f"point {i}: {got!r} where the board has {want!r}"
        if want != ".":
            assert want.isupper() == got.isupper(), f"point {i}: colour of {got!r}, truth {want!r}"
    found = np.asarray(data["corners"], dtype=float)
    assert found.shape == (4, 2)
    # The corners in the documented order a9, i9, i0, a0 (BoardCalibrated), within a few pixels.
    assert np.abs(found - corners).max() < 6, (found.tolist(), corners.tolist())
    # The text form reads the same squares.
    assert "".join(_grid(text.stdout)) == sq


def test_detect_text_grid_uses_fen_letters(start_photo):
    r = start_photo[2]
    assert r.returncode == 0, r.stderr
    grid = "".join(_grid(r.stdout))
    assert len(grid) == 90 and set(grid) <= TEXT_CHARS, grid
    assert sum(ch.isalpha() for ch in grid) >= 28


def test_detect_reads_plain_boards_right_or_says_unsure(xq, tmp_path):
    problems = []
    for seed, fen in ((2, START_FEN), (3, SPARSE_FEN)):
        path = tmp_path / f"b{seed}_{len(problems)}.jpg"
        corners = _photo(path, fen, seed, "plain")
        r = xq("vision", "detect", str(path), "--json")
        if r.returncode != 0:
            problems.append(f"{path.name}: exit {r.returncode}: {r.stderr.strip()}")
            continue
        data = json.loads(r.stdout)
        truth = fen_squares(fen)
        wrong = [i for i, (a, b) in enumerate(zip(truth, data["squares"], strict=True))
                 if b != "?" and ((a == ".") != (b == ".") or (a != "." and a.isupper() != b.isupper())
                                  or (b not in ".Xx" and a != b))]
        err = float(np.abs(np.asarray(data["corners"], dtype=float) - corners).max())
        if wrong or err > 6:
            problems.append(f"seed {seed} {fen.split()[0]}: {len(wrong)} wrong points, corner error {err:.0f}px")
    assert not problems, problems


def test_photo_without_a_board_exits_2_with_a_reason(xq, tmp_path):
    rng = np.random.default_rng(7)
    noise = rng.integers(0, 256, (720, 1280, 3), dtype=np.uint8)
    path = tmp_path / "noise.jpg"
    assert cv2.imwrite(str(path), noise)
    for extra in (["--json"],):
        r = xq("vision", "detect", str(path), *extra)
        assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
        assert "board" in r.stderr.lower() and "Traceback" not in r.stderr, r.stderr
        assert not _grid(r.stdout)


def test_plain_wall_and_unreadable_file(xq, tmp_path):
    wall = tmp_path / "wall.jpg"
    assert cv2.imwrite(str(wall), np.full((720, 1280, 3), 180, dtype=np.uint8))
    r = xq("vision", "detect", str(wall))
    assert r.returncode == 2 and "board" in r.stderr.lower(), r.stderr
    junk = tmp_path / "junk.jpg"
    junk.write_bytes(b"not a jpeg at all")
    r = xq("vision", "detect", str(junk))
    assert r.returncode != 0 and "junk.jpg" in r.stderr and "Traceback" not in r.stderr
