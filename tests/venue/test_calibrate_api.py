"""The calibration endpoints over real HTTP: an operator's four corners checked, saved in the venue file (which
still loads) and published for vision on xq.arbiter; the board's latest frame served for the page."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from xqarb.events import make_event
from xqarb.ingest.server import ServerThread
from xqarb.referee.ledger import Origin, Pending, SqliteLedger

BOARD = "7"
CHIEF = "tok-chief-calibrate"
CAMERA = "tok-cam7-calibrate"
WIDTH, HEIGHT = 640, 480
GOOD = [[100.0, 60.0], [540.0, 70.0], [560.0, 430.0], [90.0, 420.0]]  # a9 i9 i0 a0


class RecordingPublisher:
    """What the endpoint publishes, acknowledged at once (no broker in this test)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []
        self.lock = threading.Lock()

    def publish(self, topic: str, event: Any, timeout: float) -> tuple[int, int]:
        with self.lock:
            self.sent.append((topic, event))
            return 0, len(self.sent) - 1

    def dead_letter(self, reason: str, payload: bytes, *, board_id: str, source: str, topic: str) -> None:
        pass


@pytest.fixture
def served(tmp_path: Path) -> Any:
    from xqarb.ingest.app import Ingest
    from xqarb.ingest.config import load_config
    from xqarb.referee.api import RefereeApi, StreamHub, create_app, frame_loader

    venue = tmp_path / "venue.json"
    venue.write_text(json.dumps({
        "boards": {BOARD: {"tournament": "open", "devices": {"cam-7": CAMERA}, "roles": {"cam-7": "camera"}},
                   "8": {"devices": {"cam-8": "tok-cam8-calibrate"}}},
        "arbiters": {"chief": {"token": CHIEF, "boards": ["*"]},
                     "eight": {"token": "tok-eight-calibrate", "boards": ["8"]}},
    }, indent=1))
    venue.chmod(0o600)
    evidence = tmp_path / "evidence"
    image = np.full((HEIGHT, WIDTH, 3), 200, np.uint8)
    jpeg = bytes(cv2.imencode(".jpg", image)[1])
    import hashlib

    sha = hashlib.sha256(jpeg).hexdigest()
    (evidence / sha[:2]).mkdir(parents=True)
    (evidence / sha[:2] / f"{sha}.jpg").write_bytes(jpeg)
    ledger = SqliteLedger(tmp_path / "ledger.sqlite")
    stable = make_event("BoardStable", BOARD, source="vision", source_seq=1, occurred_at=1, received_at=1,
                        squares="." * 90, frame_sha256=sha, game_id="g1")
    ledger.append("g1", BOARD, [Pending("input", stable, Origin("xq.observations", 0, 0))])
    config = load_config(venue)
    publisher = RecordingPublisher()
    api = RefereeApi(ledger=ledger, hub=StreamHub(), board_ids=list(config.boards),
                     load_frame=frame_loader([evidence]), ingest=Ingest(config, publisher))
    api.venue_path = venue
    server = ServerThread(create_app(api), port=0).start()
    try:
        yield {"url": server.url, "venue": venue, "publisher": publisher, "sha": sha, "jpeg": jpeg}
    finally:
        server.stop()
        ledger.close()


def _call(url: str, token: str | None, body: Any = None) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    req = urllib.request.Request(url, data=data, headers=headers, method="GET" if data is None else "POST")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            raw = r.read()
            return r.status, json.loads(raw) if r.headers.get_content_type() == "application/json" else raw
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_good_corners_are_saved_and_published(served: dict[str, Any]) -> None:
    from xqarb.ingest.config import load_config

    url = f"{served['url']}/api/boards/{BOARD}/corners"
    # the operator went round from i0 the other way: any consistent turn is a board
    turned = [GOOD[2], GOOD[1], GOOD[0], GOOD[3]]
    status, body = _call(url, CHIEF, {"corners": turned})
    assert status == 202, body
    assert body["corners"] == turned and body["saved"] == str(served["venue"])
    config = load_config(served["venue"])  # the file still loads, with the corners
    assert [list(p) for p in config.boards[BOARD].corners] == turned
    assert config.boards["8"].corners is None and served["venue"].stat().st_mode & 0o777 == 0o600
    assert not [p for p in served["venue"].parent.iterdir() if p.name.endswith(".tmp")]  # renamed over, none left
    [(topic, event)] = served["publisher"].sent
    assert topic == "xq.arbiter" and event.type == "BoardCalibrated" and event.source == "arbiter:chief"
    assert event.event_id == body["event_id"] and [list(p) for p in event.data["corners"]] == turned
    # read back: the page starts from the saved corners, on the latest frame
    status, cal = _call(f"{served['url']}/api/boards/{BOARD}/calibration", CHIEF)
    assert status == 200 and cal["corners"] == turned and cal["source"] == "venue"
    assert (cal["frame_sha256"], cal["width"], cal["height"]) == (served["sha"], WIDTH, HEIGHT)
    status, jpeg = _call(f"{served['url']}/api/boards/{BOARD}/frame", CHIEF)
    assert status == 200 and jpeg == served["jpeg"]


@pytest.mark.parametrize("corners, words", [
    ([[100, 60], [540, 70], [560, 430]], "four [x, y]"),
    ([[100, 60], [540, 70], [560, 430], [90, "x"]], "four [x, y]"),
    ([[100, 60], [540, 70], [1500, 430], [90, 420]], "outside the picture (640 x 480"),
    ([[100, 60], [560, 430], [540, 70], [90, 420]], "cross or fold"),
    ([[100, 60], [105, 60], [105, 65], [100, 65]], "pixels apart"),
])
def test_bad_corners_are_refused_with_the_reason(served: dict[str, Any], corners: Any, words: str) -> None:
    before = served["venue"].read_bytes()
    status, body = _call(f"{served['url']}/api/boards/{BOARD}/corners", CHIEF, {"corners": corners})
    assert status == 400 and body["error"] == "bad_corners" and words in body["detail"], body
    assert served["venue"].read_bytes() == before and not served["publisher"].sent


def test_only_an_arbiter_of_the_board_may_calibrate(served: dict[str, Any]) -> None:
    url = f"{served['url']}/api/boards/{BOARD}/corners"
    assert _call(url, None, {"corners": GOOD})[0] == 401
    assert _call(url, "tok-not-known-anywhere", {"corners": GOOD})[0] == 401
    assert _call(url, CAMERA, {"corners": GOOD}) == (403, {"error": "arbiter_only",
                                                            "detail": "calibrating a board needs an arbiter's token"})
    assert _call(url, "tok-eight-calibrate", {"corners": GOOD})[0] == 403  # an arbiter of another board
    assert _call(f"{served['url']}/api/boards/{BOARD}/frame", CAMERA)[0] == 403
    assert _call(f"{served['url']}/api/boards/99/corners", CHIEF, {"corners": GOOD})[0] == 404
    status, body = _call(url, CHIEF, b"{not json")
    assert status == 400 and body["error"] == "bad_json"
    assert not served["publisher"].sent


def test_a_board_without_frames_needs_the_picture_size(served: dict[str, Any]) -> None:
    url = f"{served['url']}/api/boards/8/corners"
    status, body = _call(url, CHIEF, {"corners": GOOD})
    assert status == 400 and body["error"] == "no_frame"
    status, body = _call(url, CHIEF, {"corners": GOOD, "width": 1280, "height": 720})
    assert status == 202, body
    assert _call(f"{served['url']}/api/boards/8/frame", CHIEF)[0] == 404


def test_the_page_draws_handles_drags_a_corner_and_saves(served: dict[str, Any], tmp_path: Path) -> None:
    from tests.venue.test_pages import CHROMIUM

    if CHROMIUM is None:
        pytest.skip("Chromium is not installed")
    from tests.venue.cdp import Browser

    b = Browser(tmp_path / "profile", 1280, 900)
    try:
        b.open(f"{served['url']}/calibrate.html?board={BOARD}")
        b.wait_for("document.getElementById('load') !== null")
        b.evaluate(f"document.getElementById('token').value = {CHIEF!r}; document.getElementById('load').click()")
        b.wait_for("document.getElementById('canvas').dataset.ready === '1'")
        # no corners saved yet and none from vision: handles at a tenth of the picture in from its corners
        corners = json.loads(b.evaluate("document.getElementById('canvas').dataset.corners"))
        assert corners == [[48, 48], [592, 48], [592, 432], [48, 432]]
        # the a9 handle is drawn (dark over the grey frame), and the grid between the handles
        handle = b.evaluate("Array.from(document.getElementById('canvas').getContext('2d')"
                            ".getImageData(48, 48, 1, 1).data)")
        assert handle[0] < 150, handle
        box = b.evaluate("(() => { const r = document.getElementById('canvas').getBoundingClientRect();"
                         " return [r.left, r.top, r.width / 640]; })()")
        x0, y0 = box[0] + 48 * box[2], box[1] + 48 * box[2]
        for kind, x, y in (("mousePressed", x0, y0), ("mouseMoved", x0 + 15, y0 + 10),
                           ("mouseMoved", x0 + 30, y0 + 20), ("mouseReleased", x0 + 30, y0 + 20)):
            b.call("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left",
                                                "buttons": 0 if kind == "mouseReleased" else 1, "clickCount": 1})
        moved = json.loads(b.evaluate("document.getElementById('canvas').dataset.corners"))
        assert abs(moved[0][0] - (48 + 30 / box[2])) < 1.5 and abs(moved[0][1] - (48 + 20 / box[2])) < 1.5, moved
        assert moved[1:] == corners[1:]
        b.evaluate("document.getElementById('save').click()")
        b.wait_for("document.getElementById('answer').textContent.includes('event')")
        [(_, event)] = served["publisher"].sent
        assert [list(p) for p in event.data["corners"]][1:] == corners[1:]
        assert abs(event.data["corners"][0][0] - moved[0][0]) < 0.1
    finally:
        b.close()


def test_the_api_of_referee_web_reads_and_keeps_corners_in_the_venue_file_it_was_given(
        tmp_path: Path, topics: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """`xqarb referee web --config PATH` builds its API through build_api_app: the calibration endpoints must use
    that file, not the data directory's venue.json (which, here, does not exist)."""
    from xqarb.ingest.config import load_config
    from xqarb.referee.api import build_api_app

    monkeypatch.setenv("XQARB_DATA_DIR", str(tmp_path / "data"))
    venue = tmp_path / "elsewhere" / "venue.json"
    venue.parent.mkdir()
    venue.write_text(json.dumps({
        "boards": {BOARD: {"devices": {"cam-7": CAMERA}, "corners": GOOD}},
        "arbiters": {"chief": {"token": CHIEF, "boards": ["*"]}},
    }))
    from xqarb.ingest.app import Ingest

    config = load_config(venue)
    ledger = SqliteLedger(tmp_path / "ledger.sqlite")
    app, hub = build_api_app(topics, ledger, config=config, evidence_dir=tmp_path / "evidence",
                             ingest=Ingest(config, RecordingPublisher()), venue_path=venue)
    try:
        answer = app.test_client().get(f"/api/boards/{BOARD}/calibration",
                                       headers={"Authorization": f"Bearer {CHIEF}"})
        assert answer.status_code == 200, answer.get_data(as_text=True)
        assert (answer.get_json()["source"], answer.get_json()["corners"]) == ("venue", GOOD)
    finally:
        hub.stop()
        ledger.close()
