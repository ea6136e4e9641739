"""A board calibrated by the venue configuration (`boards.N.corners`, for a fixed camera): vision starts from
those corners instead of looking for the board, so the right board is read even with a second one in view."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest
from synthetic import START_SQUARES, draw_board

from xqarb.events import make_event

SPARSE = ("....k" + "." * 43 + "P" + "." * 37 + "K...")  # e9 black king, d4 red soldier, f0 red king


def _frame(image: np.ndarray, k: int):
    ok, jpg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 92])
    assert ok
    return make_event("FrameCaptured", "7", source="cam-7", source_seq=k, occurred_at=1_000_000 + k * 250_000,
                      received_at=1_000_000 + k * 250_000, camera_id="cam-7", width=image.shape[1],
                      height=image.shape[0], encoding="jpeg", image=bytes(jpg))


def test_the_configured_corners_pick_the_board_among_two(tmp_path) -> None:
    from xqarb.ingest.config import parse_config
    from xqarb.vision.evidence import DirectoryEvidenceStore
    from xqarb.vision.service import VisionCore, calibrations_of

    left = draw_board(SPARSE, seed=3, size=(640, 720), tilt=8, rotate=2, clutter=False, glare=False)
    right = draw_board(START_SQUARES, seed=4, size=(640, 720), tilt=8, rotate=-3, clutter=False, glare=False)
    image = np.hstack([left.image, right.image])  # two whole boards side by side, as at a crowded venue table
    corners = (right.corners + np.array([640.0, 0.0])).round(1).tolist()
    config = parse_config({"boards": {"7": {"devices": {"cam-7": "cam-7-token-xyz"}, "corners": corners}}})
    calibrations = calibrations_of(config.boards)
    assert list(calibrations) == ["7"] and calibrations["7"].method == "operator"

    core = VisionCore(DirectoryEvidenceStore(tmp_path / "evidence"), source="vision-test",
                      calibrations=calibrations)
    stable = []
    for k in range(8):
        stable += [e for e in core.handle(_frame(image, k)) if e.type == "BoardStable"]
    assert stable, "no still board reported from the configured calibration"
    # the game's start on the calibrated (right) board, not the few pieces of its neighbour
    assert stable[0].data["squares"] == START_SQUARES


@pytest.mark.parametrize("corners, words", [
    ([[0, 0], [10, 0], [10, 10]], "four [x, y] points"),
    ([[0, 0], [10, 0], [10, "ten"], [0, 10]], "non-negative numbers"),
    ([[0, 0], [10, 10], [10, 0], [0, 10]], "go round the board in order"),
])
def test_bad_corners_in_the_venue_file_say_where(corners, words) -> None:
    from xqarb.ingest.config import ConfigError, parse_config

    with pytest.raises(ConfigError, match=r"boards\.7\.corners") as err:
        parse_config({"boards": {"7": {"corners": corners}}})
    assert words in str(err.value)


def test_vision_serve_refuses_a_bad_venue_file_with_the_reason(tmp_path) -> None:
    import subprocess
    import sys

    bad = tmp_path / "venue.json"
    bad.write_text(json.dumps({"boards": {"7": {"corners": [[0, 0]]}}}))
    r = subprocess.run([sys.executable, "-m", "xqarb.cli", "vision", "serve", "--bootstrap-servers", "127.0.0.1:1",
                        "--config", str(bad)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "boards.7.corners" in r.stderr, (r.returncode, r.stderr)
