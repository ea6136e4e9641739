"""An operator's corners for a board (the venue file's `boards.N.corners`, or the calibration page's
BoardCalibrated on xq.arbiter): vision fits them through given.py, in any consistent turn, from the next frame."""

from __future__ import annotations

import cv2
import numpy as np
from synthetic import START_SQUARES, draw_board

from xqarb.events import make_event


def _frame(image: np.ndarray, k: int):
    ok, jpg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 92])
    assert ok
    return make_event("FrameCaptured", "7", source="cam-7", source_seq=k, occurred_at=1_000_000 + k * 250_000,
                      received_at=1_000_000 + k * 250_000, camera_id="cam-7", width=image.shape[1],
                      height=image.shape[0], encoding="jpeg", image=bytes(jpg))


def _two_boards():
    left = draw_board("....k" + "." * 43 + "P" + "." * 37 + "K...", seed=3, size=(640, 720), tilt=8, rotate=2,
                      clutter=False, glare=False)
    right = draw_board(START_SQUARES, seed=4, size=(640, 720), tilt=8, rotate=-3, clutter=False, glare=False)
    image = np.hstack([left.image, right.image])  # two boards side by side: only the corners say which is read
    return image, right.corners + np.array([640.0, 0.0])


def _read(core, image, frames: range) -> tuple[list, list]:
    out = [e for k in frames for e in core.handle(_frame(image, k))]
    return ([e for e in out if e.type == "BoardCalibrated"], [e for e in out if e.type == "BoardStable"])


def test_operator_corners_event_calibrates_the_board_from_the_next_frame(tmp_path) -> None:
    from xqarb.vision.evidence import DirectoryEvidenceStore
    from xqarb.vision.service import VisionCore

    image, corners = _two_boards()
    core = VisionCore(DirectoryEvidenceStore(tmp_path / "ev"), source="vision-test")
    # the operator starts at i0 and goes the other way round: i0 i9 a9 a0
    given = corners[[2, 1, 0, 3]].round(1).tolist()
    from xqarb.referee.calibrate_api import calibration_event

    event = calibration_event("7", "arbiter:chief", given, 1)  # what POST /api/boards/7/corners publishes
    own = make_event("BoardCalibrated", "7", source="vision-test", source_seq=1, occurred_at=1, received_at=1,
                     corners=given, homography=[1.0, 0, 0, 0, 1.0, 0, 0, 0, 1.0])
    assert not core.learn(own)  # vision's own report is not an operator's word
    assert core.learn(event)
    calibrated, stable = _read(core, image, range(8))
    assert calibrated, "no BoardCalibrated after the operator's corners"
    got = np.array(calibrated[0].data["corners"])
    # a9 i9 i0 a0 back in order, within a few pixels of where the board is drawn (given.py may pull onto the lines)
    assert np.abs(got - corners).max() < 6.0, (got, corners)
    assert stable and stable[0].data["squares"] == START_SQUARES


def test_new_operator_corners_move_the_calibration_mid_stream(tmp_path) -> None:
    from xqarb.vision.evidence import DirectoryEvidenceStore
    from xqarb.vision.service import VisionCore

    image, corners = _two_boards()
    wrong = (corners + np.array([[-640.0, 0.0]])).round(1).tolist()  # the neighbour's board: few pieces
    core = VisionCore(DirectoryEvidenceStore(tmp_path / "ev"), source="vision-test", corners={"7": wrong})
    first, _ = _read(core, image, range(3))
    assert first and np.array(first[0].data["corners"])[:, 0].max() < 640
    event = make_event("BoardCalibrated", "7", source="arbiter:chief", source_seq=2, occurred_at=2, received_at=2,
                       corners=corners.round(1).tolist(), homography=[1.0, 0, 0, 0, 1.0, 0, 0, 0, 1.0])
    assert core.learn(event)
    again, _ = _read(core, image, range(3, 5))
    assert again and np.array(again[0].data["corners"])[:, 0].min() > 640


def test_venue_corners_in_another_turn_read_the_start(tmp_path) -> None:
    from xqarb.ingest.config import parse_config
    from xqarb.vision.evidence import DirectoryEvidenceStore
    from xqarb.vision.service import VisionCore, corners_of

    image, corners = _two_boards()
    turned = corners[[1, 2, 3, 0]].round(1).tolist()  # starting at i9: a consistent turn, not a9 first
    config = parse_config({"boards": {"7": {"devices": {"cam-7": "cam-7-token-xyz"}, "corners": turned}}})
    core = VisionCore(DirectoryEvidenceStore(tmp_path / "ev"), source="vision-test", corners=corners_of(config.boards))
    _, stable = _read(core, image, range(8))
    assert stable and stable[0].data["squares"] == START_SQUARES
