"""An operator's calibration of a fixed camera (issue 41): the board's latest frame, and its four corners saved.

- `GET /api/boards/<board>/calibration` (arbiter token): the board's latest evidence frame (`frame_sha256`, its
  `width` and `height`) and the corners in force: the venue file's (`source` "venue") or else the last ones vision
  reported (`source` "vision"), a9 i9 i0 a0 in image pixels; null where none is known.
- `GET /api/boards/<board>/frame` (arbiter token): that frame's JPEG bytes (the calibration page draws on it).
- `POST /api/boards/<board>/corners` (arbiter token), `{"corners": [[x, y] x 4]}` (and `width`, `height` where no
  frame of the board is held): the corners checked as given.py checks them (four points going round a board inside
  the picture, any consistent turn), saved in the venue file (a temporary file renamed over it: a crash leaves the
  old file or the new, never half of one), and published on xq.arbiter as a BoardCalibrated whose source is the
  arbiter; vision takes it from the board's next frame. 202 with the event id; 400 with the reason for corners
  that cannot be a board.

The page is /calibrate.html?board=B.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flask import Blueprint, Response

# How far back in a board's games the latest frame and calibration are looked for: the entries of its last few
# games (a board between games still shows its last frames; older ones are a camera that has moved since).
LOOKBACK_GAMES = 3
LOOKBACK_ENTRIES = 2000


class CalibrationError(Exception):
    """A request this API answers with a 4xx: `status`, `error` (a word), `detail` (for a person)."""

    def __init__(self, status: int, error: str, detail: str) -> None:
        super().__init__(detail)
        self.status, self.error, self.detail = status, error, detail


def _recent_entries(ledger: Any, board: str) -> list[Any]:
    """The board's recent ledger entries, newest first."""
    out: list[Any] = []
    for game in reversed(ledger.games(board)[-LOOKBACK_GAMES:]):
        seq, _ = ledger.head(game.game_id)
        out.extend(reversed(ledger.entries(game.game_id, max(0, seq - LOOKBACK_ENTRIES))))
    return out


def latest_frame(ledger: Any, load_frame: Callable[[str], bytes | None], board: str) -> tuple[str, bytes] | None:
    """(sha256, JPEG) of the newest evidence frame of the board's recent entries that the store holds."""
    for entry in _recent_entries(ledger, board):
        data = entry.event.data
        for sha in [data.get("frame_sha256"), *(data.get("evidence") or ())]:
            if sha and isinstance(sha, str):
                jpeg = load_frame(sha)
                if jpeg:
                    return sha, jpeg
    return None


def vision_corners(ledger: Any, board: str) -> list[list[float]] | None:
    """The corners of the board's newest BoardCalibrated in the ledger (vision's or an operator's)."""
    for entry in _recent_entries(ledger, board):
        if entry.event.type == "BoardCalibrated":
            return [[float(x), float(y)] for x, y in entry.event.data["corners"]]
    return None


def frame_size(jpeg: bytes) -> tuple[int, int]:
    """(width, height) of a JPEG; CalibrationError when it does not decode."""
    import cv2
    import numpy as np

    image = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_GRAYSCALE)
    if image is None:
        raise CalibrationError(409, "bad_frame", "the board's latest frame does not decode: give width and height")
    return int(image.shape[1]), int(image.shape[0])


def checked_corners(obj: Any, size: tuple[int, int] | None) -> list[list[float]]:
    """The posted corners when they can be a board in a picture of `size` (width, height); CalibrationError else."""
    import numpy as np

    from xqarb.vision.given import BadCorners, check_corners

    if not isinstance(obj, dict) or "corners" not in obj:
        raise CalibrationError(400, "bad_corners", 'give {"corners": [[x, y], [x, y], [x, y], [x, y]]}')
    raw = obj["corners"]
    if (not isinstance(raw, list) or len(raw) != 4
            or not all(isinstance(p, list) and len(p) == 2
                       and all(isinstance(v, int | float) and not isinstance(v, bool) for v in p) for p in raw)):
        raise CalibrationError(400, "bad_corners", f"corners must be four [x, y] pairs of numbers, not {raw!r:.200}")
    if size is None:
        w, h = obj.get("width"), obj.get("height")
        if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in (w, h)):
            raise CalibrationError(400, "no_frame", "no frame of this board is held: give the picture's width and "
                                                    "height (positive integers) with the corners")
        size = (int(w), int(h))  # type: ignore[arg-type]
    try:
        c = check_corners(np.array(raw, dtype=np.float64), (size[1], size[0]))
    except BadCorners as exc:
        raise CalibrationError(400, "bad_corners", exc.reason) from None
    return [[float(x), float(y)] for x, y in c]


def save_corners(path: Path, board: str, corners: list[list[float]]) -> None:
    """Write the board's corners into the venue file atomically (a temporary file beside it, renamed over it)."""
    from xqarb.ingest.config import ConfigError, parse_config

    if path.suffix != ".json":
        raise CalibrationError(409, "venue_not_json", f"{path} is not a JSON venue file: put the corners in it by hand")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CalibrationError(409, "venue_unreadable", f"{path}: {exc}") from None
    boards = raw.get("boards") if isinstance(raw, dict) else None
    if not isinstance(boards, dict) or not isinstance(boards.get(board), dict):
        raise CalibrationError(409, "board_not_in_file", f"board {board!r} is not in {path}")
    boards[board]["corners"] = corners
    try:
        parse_config(raw)  # the file must still load as a venue configuration
    except (ConfigError, TypeError, AttributeError) as exc:
        raise CalibrationError(400, "bad_corners", f"the venue file would not load with them: {exc}") from None
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    mode = path.stat().st_mode & 0o777
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(raw, f, indent=1)
        f.flush()
        os.fsync(f.fileno())
    os.chmod(tmp, mode)  # the file holds tokens: keep its permissions
    os.replace(tmp, path)


def venue_corners(path: Path | None, board: str) -> list[list[float]] | None:
    if path is None or path.suffix != ".json" or not path.is_file():
        return None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        corners = raw["boards"][board].get("corners")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return [[float(x), float(y)] for x, y in corners] if corners else None


def calibration_event(board: str, who: str, corners: list[list[float]], now_us: int) -> Any:
    """The operator's BoardCalibrated: the corners as given, the homography of the grid through them."""
    import numpy as np

    from xqarb.events import make_event
    from xqarb.vision.grid import board_to_image

    h = np.linalg.inv(board_to_image(np.array(corners, dtype=np.float64)))
    h = h / h[2, 2]
    return make_event("BoardCalibrated", board, source=who, source_seq=now_us, occurred_at=now_us,
                      received_at=now_us, corners=corners, homography=[float(v) for v in h.ravel()])


def calibrate_blueprint(api: Any) -> Blueprint:
    """The calibration endpoints of a RefereeApi (`api.venue_path`: the venue file; else the data dir's)."""
    from xqarb.ingest.app import json_error
    from xqarb.ingest.validate import TOPIC_ARBITER, Refusal

    bp = Blueprint("calibrate_api", __name__)

    def venue_path() -> Path | None:
        path = getattr(api, "venue_path", None)
        if path is None:
            from xqarb.config import data_dir

            path = data_dir() / "venue.json"
        return Path(path)

    def arbiter(board: str) -> Any:
        if api.ingest is None:
            raise CalibrationError(503, "no_ingest", "this API process has no venue configuration: no arbiters")
        who = api.ingest.authenticate(board)
        if not who.is_arbiter:
            raise Refusal(403, "arbiter_only", "calibrating a board needs an arbiter's token")
        return who

    def answer(fn: Callable[[], Response]) -> Response:
        try:
            return fn()
        except Refusal as refusal:
            return json_error(refusal.status, refusal.error, refusal.detail)
        except CalibrationError as exc:
            return json_error(exc.status, exc.error, exc.detail)

    @bp.get("/api/boards/<board>/calibration")
    def calibration(board: str) -> Response:
        def go() -> Response:
            arbiter(board)
            found = latest_frame(api.ledger, api.load_frame, board)
            body: dict[str, Any] = {"board_id": board, "frame_sha256": None, "width": None, "height": None}
            if found is not None:
                body["frame_sha256"] = found[0]
                body["width"], body["height"] = frame_size(found[1])
            corners, source = venue_corners(venue_path(), board), "venue"
            if corners is None:
                corners, source = vision_corners(api.ledger, board), "vision"
            body["corners"], body["source"] = corners, source if corners is not None else None
            return Response(json.dumps(body), mimetype="application/json")

        return answer(go)

    @bp.get("/api/boards/<board>/frame")
    def frame(board: str) -> Response:
        def go() -> Response:
            arbiter(board)
            found = latest_frame(api.ledger, api.load_frame, board)
            if found is None:
                raise CalibrationError(404, "no_frame", f"no evidence frame of board {board!r} is held yet")
            resp = Response(found[1], mimetype="image/jpeg")
            resp.headers["X-Frame-Sha256"] = found[0]
            resp.headers["Cache-Control"] = "no-store"  # the latest frame changes
            return resp

        return answer(go)

    @bp.post("/api/boards/<board>/corners")
    def corners(board: str) -> Response:
        def go() -> Response:
            who = arbiter(board)
            payload = api.ingest.read_body(api.ingest.config.limits.max_json_bytes)
            try:
                obj = json.loads(payload)
            except ValueError as exc:
                raise CalibrationError(400, "bad_json", f"the body is not JSON: {exc}") from None
            found = latest_frame(api.ledger, api.load_frame, board)
            good = checked_corners(obj, frame_size(found[1]) if found is not None else None)
            path = venue_path()
            if path is None or not path.is_file():
                raise CalibrationError(409, "no_venue_file", f"no venue file at {path} to keep the corners in")
            save_corners(path, board, good)
            event = calibration_event(board, who.id, good, time.time_ns() // 1000)
            resp = api.ingest.publish(TOPIC_ARBITER, event)
            if resp.status_code != 202:
                return resp  # saved, but vision hears of it only at its next start: the answer says why
            body = {**json.loads(resp.get_data()), "corners": good, "saved": str(path)}
            return Response(json.dumps(body), status=202, mimetype="application/json")

        return answer(go)

    return bp
