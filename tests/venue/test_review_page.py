"""The review page for disputes, in headless Chromium over real HTTP: the evidence frame at full size with the
touched, disputed and moved points marked where the camera saw them, move-by-move navigation and a link to one
moment, the table's filters, the rule set and dates, and a tablet's width.

The game of gamedata.write_game (entries 1..14: GameStarted, four moves each as BoardStable, MoveMade,
ClockPressed; a 5.3 Ruling), then the camera's view of a dispute: the board calibrated (entry 15), a 1280x720
frame (16), a hand (17), Black's cannon lifted from b7 (18) and a piece between e6 and e5 (19).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from tests.venue.gamedata import MOVES, ev, write_game
from tests.venue.test_pages import CHROMIUM, shot
from xqarb.ingest.server import ServerThread

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed")

# The camera's view: the board's corners a9, i9, i0, a0 in a 1280x720 frame, a little in perspective.
CORNERS = [[402.0, 62.0], [878.0, 70.0], [930.0, 660.0], [350.0, 650.0]]
FRAME_SIZE = (1280, 720)
TOUCHED = "b7"  # Black's cannon, lifted (PieceLifted)
DISPUTED = ("e6", "e5")  # a piece between two points (PieceMisaligned)
ORANGE_BGR = (0, 116, 227)  # #e37400, a touched point's ring (style.css)
SHOWN = "[...document.querySelectorAll('#timeline tr')].filter(t => !t.hidden)"  # the table's rows shown


def image_of(point: str) -> tuple[float, float]:
    """Where the camera sees a board point, by OpenCV's own perspective transform (not the page's)."""
    uv = np.float32([[0, 0], [8, 0], [8, 9], [0, 9]])
    h = cv2.getPerspectiveTransform(uv, np.float32(CORNERS))
    q = h @ np.array([ord(point[0]) - 97, 9 - int(point[1]), 1.0])
    return float(q[0] / q[2]), float(q[1] / q[2])


def dispute_frame() -> bytes:
    """A grey 1280x720 frame with the board's outline drawn where the corners say."""
    img = np.full((FRAME_SIZE[1], FRAME_SIZE[0], 3), 90, np.uint8)
    cv2.polylines(img, [np.int32(CORNERS)], True, (40, 40, 40), 3)
    ok, buf = cv2.imencode(".jpg", img)
    assert ok
    return buf.tobytes()


@pytest.fixture
def review(tmp_path: Path) -> Any:
    from tests.venue.cdp import Browser
    from xqarb.ingest.config import parse_config
    from xqarb.referee.api import RefereeApi, StreamHub, create_app, frame_loader
    from xqarb.referee.ledger import Origin, Pending, SqliteLedger

    board, game = "b1", "game-review"
    ledger = SqliteLedger(tmp_path / "ledger.sqlite")
    t0 = 1_780_000_000_000_000
    write_game(ledger, tmp_path / "frames", board, game, t0)
    image = dispute_frame()
    sha = hashlib.sha256(image).hexdigest()
    (tmp_path / "frames" / sha[:2]).mkdir(parents=True, exist_ok=True)
    (tmp_path / "frames" / sha[:2] / f"{sha}.jpg").write_bytes(image)
    at = t0 + 70_000_000
    homography = cv2.getPerspectiveTransform(np.float32(CORNERS), np.float32([[0, 0], [8, 0], [8, 9], [0, 9]]))
    seen = [
        ev("BoardCalibrated", board, 50, at, corners=CORNERS, homography=[float(v) for v in homography.ravel()]),
        ev("BoardStable", board, 51, at + 1, squares="." * 90, frame_sha256=sha, game_id=game),
        ev("HandEntered", board, 52, at + 2),
        ev("PieceLifted", board, 53, at + 3, point=TOUCHED, game_id=game),
        ev("PieceMisaligned", board, 54, at + 4, points=list(DISPUTED), game_id=game),
    ]
    ledger.append(game, board, [Pending("input", e, Origin("xq.observations", 0, 50 + i)) for i, e in enumerate(seen)])
    config = parse_config({"tournaments": {"open": {"broadcast_delay_s": 0}},
                           "boards": {board: {"tournament": "open", "devices": {}}}})
    api = RefereeApi(ledger=ledger, hub=StreamHub(), board_ids=config.boards,
                     load_frame=frame_loader([tmp_path / "frames"]))
    server = ServerThread(create_app(api), port=0).start()
    browsers: list[Any] = []

    def browser(width: int = 1280, height: int = 900) -> Any:
        b = Browser(tmp_path / f"profile-{len(browsers)}", width, height)
        browsers.append(b)
        return b

    try:
        yield {"url": f"{server.url}/review.html?game={game}", "browser": browser, "sha": sha,
               "frames": tmp_path / "frames"}
    finally:
        for b in browsers:
            b.close()
        server.stop()


def _ready(b: Any, url: str) -> None:
    b.open(url)
    b.wait_for("document.body.dataset.ready === '1'")


def _selected(b: Any) -> int:
    return int(b.evaluate("document.body.dataset.selected"))


def test_a_frame_opens_full_size_with_the_points_marked_where_the_camera_saw_them(review: dict[str, Any]) -> None:
    b = review["browser"]()
    _ready(b, f"{review['url']}&seq=19")
    assert _selected(b) == 19
    thumb = "#frames figure[data-seq='16']"
    assert b.evaluate(f"!!document.querySelector(\"{thumb}\")")
    b.evaluate(f"document.querySelector(\"{thumb}\").click()")
    b.wait_for("document.body.dataset.viewerMarks === '3' && document.body.dataset.viewer === '16'")
    assert b.evaluate("document.getElementById('viewer').open") is True
    size = b.evaluate("(i => [i.naturalWidth, i.naturalHeight])(document.getElementById('viewer-img'))")
    assert size == list(FRAME_SIZE)
    shown = b.evaluate("document.getElementById('viewer-img').getBoundingClientRect().width")
    assert shown > 600  # full size, not a 200-pixel thumbnail
    marks = json.loads(b.evaluate("""JSON.stringify([...document.querySelectorAll('#viewer-frame circle.xq-mark')]
        .map(c => [c.dataset.point, c.getAttribute('class'), +c.getAttribute('cx'), +c.getAttribute('cy'),
                   (r => [r.left + r.width / 2, r.top + r.height / 2])(c.getBoundingClientRect())]))"""))
    kinds = {p: cls.split()[-1] for p, cls, *_ in marks}
    assert kinds == {TOUCHED: "xq-mark-touched", DISPUTED[0]: "xq-mark-disputed", DISPUTED[1]: "xq-mark-disputed"}
    img = b.evaluate("(r => [r.left, r.top, r.width])(document.getElementById('viewer-img').getBoundingClientRect())")
    scale = img[2] / FRAME_SIZE[0]
    for point, _, cx, cy, (sx, sy) in marks:
        ex, ey = image_of(point)
        assert abs(cx - ex) < 0.5 and abs(cy - ey) < 0.5, (point, cx, cy, ex, ey)  # in the frame's pixels
        assert abs(sx - (img[0] + ex * scale)) < 2 and abs(sy - (img[1] + ey * scale)) < 2  # and on screen
    # The same points on the board drawn beside the frame.
    beside = b.evaluate("[...document.querySelectorAll('#viewer-board circle.xq-mark')].map(c => c.dataset.point)")
    beside.sort()
    assert beside == sorted([TOUCHED, *DISPUTED])
    # On the screenshot: the touched point's ring is orange, where the camera saw b7.
    png = b.screenshot()
    where = shot("review-viewer.png")
    if where is not None:
        where.write_bytes(png)
    pic = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
    (_, _, cx, cy, (sx, sy)) = next(m for m in marks if m[0] == TOUCHED)
    ring_at = f"#viewer-frame circle[data-point={TOUCHED}]"
    r = float(b.evaluate(f"document.querySelector('{ring_at}').getBoundingClientRect().width")) / 2
    ring = pic[round(sy), round(sx - r) - 3 : round(sx - r) + 4].astype(int)
    assert (np.abs(ring - ORANGE_BGR).max(axis=1) < 40).any(), ring
    b.evaluate("document.getElementById('viewer-close').click()")
    assert b.evaluate("document.getElementById('viewer').open") is False


def test_a_thinned_frame_has_its_points_marked_where_the_full_frame_has_them(review: dict[str, Any]) -> None:
    from xqarb.vision.evidence import DirectoryEvidenceStore
    from xqarb.vision.retention import thin_jpeg

    store = DirectoryEvidenceStore(review["frames"])  # the retention sweep thinned the frame (0.25 of each side)
    assert store.thin(review["sha"], thin_jpeg(store.get(review["sha"]) or b"", 0.25, 50))
    b = review["browser"]()
    _ready(b, f"{review['url']}&seq=19")
    b.evaluate("document.querySelector(\"#frames figure[data-seq='16']\").click()")
    b.wait_for("document.body.dataset.viewerMarks === '3' && document.body.dataset.viewer === '16'")
    size = b.evaluate("(i => [i.naturalWidth, i.naturalHeight])(document.getElementById('viewer-img'))")
    assert size == [FRAME_SIZE[0] // 4, FRAME_SIZE[1] // 4]
    marks = json.loads(b.evaluate("""JSON.stringify([...document.querySelectorAll('#viewer-frame circle.xq-mark')]
        .map(c => [c.dataset.point,
                   (r => [r.left + r.width / 2, r.top + r.height / 2])(c.getBoundingClientRect())]))"""))
    img = b.evaluate("(r => [r.left, r.top, r.width])(document.getElementById('viewer-img').getBoundingClientRect())")
    scale = img[2] / FRAME_SIZE[0]
    assert len(marks) == 3
    for point, (sx, sy) in marks:
        ex, ey = image_of(point)
        assert abs(sx - (img[0] + ex * scale)) < 2 and abs(sy - (img[1] + ey * scale)) < 2, point  # on screen


def test_a_frame_the_retention_policy_dropped_is_not_shown_among_the_frames(review: dict[str, Any]) -> None:
    from xqarb.vision.evidence import DirectoryEvidenceStore

    b = review["browser"]()
    _ready(b, f"{review['url']}&seq=12")
    shown = "[...document.querySelectorAll('#frames figure')].filter(f => !f.hidden).map(f => +f.dataset.seq)"
    b.wait_for("document.querySelectorAll('#frames img').length === 3 && "
               "[...document.querySelectorAll('#frames img')].every(i => i.complete)")
    assert b.evaluate(shown) == [8, 11, 16]
    src = b.evaluate("document.querySelector(\"#frames figure[data-seq='8'] img\").dataset.src")
    assert DirectoryEvidenceStore(review["frames"]).drop(src.rsplit("/", 1)[1])
    b = review["browser"]()  # (a browser that had the frame keeps it: its bytes never change, it is cached)
    _ready(b, f"{review['url']}&seq=12")
    b.wait_for("document.querySelector(\"#frames figure[data-seq='8']\")?.hidden === true")
    assert b.evaluate(shown) == [11, 16]


def test_moves_step_by_buttons_and_arrows_and_the_address_names_the_moment(review: dict[str, Any]) -> None:
    b = review["browser"]()
    _ready(b, review["url"])
    assert _selected(b) == 12  # the last move (entry 12: MoveMade of ply 4)
    assert "seq=" not in b.evaluate("location.search")  # a reload follows the game to its latest move
    assert b.evaluate("document.getElementById('moment').getAttribute('href')").endswith("seq=12")
    b.evaluate("document.getElementById('prev-move').click()")
    b.wait_for("document.body.dataset.selected === '9'")
    assert b.evaluate("location.search").endswith("seq=9")
    assert b.evaluate("document.getElementById('moment').getAttribute('href')").endswith("seq=9")
    for key, want in (("ArrowLeft", 6), ("ArrowLeft", 3), ("ArrowLeft", 3), ("ArrowRight", 6)):
        b.evaluate(f"document.dispatchEvent(new KeyboardEvent('keydown', {{key: '{key}'}}))")
        b.wait_for(f"document.body.dataset.selected === '{want}'")
    b.wait_for("document.body.dataset.drawn === '6'")
    assert MOVES[1][2] in b.evaluate("document.querySelector('#timeline tr.selected').innerText")  # 馬８進７
    moved = b.evaluate("[...document.querySelectorAll('#board circle.xq-mark')].map(c => c.dataset.point).sort()")
    assert moved == ["g7", "h9"]
    # Entry by entry among the rows shown: the hidden camera rows (BoardStable) are skipped.
    b.evaluate("document.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowDown'}))")
    b.wait_for("document.body.dataset.selected === '7'")
    b.evaluate("document.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowDown'}))")
    b.wait_for("document.body.dataset.selected === '9'")
    # A link to one moment opens the state after that entry.
    _ready(b, f"{review['url']}&seq=3")
    # after 炮二平五 (MOVES[0]), as the referee's fold has it after entry 3
    assert _selected(b) == 3 and b.evaluate("document.body.dataset.drawn") == "3"
    assert b.evaluate("document.body.dataset.fen").startswith("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/")
    assert MOVES[0][2] in b.evaluate("document.querySelector('#timeline tr.selected').innerText")


def test_filters_rule_set_dates_and_a_clock_placeholder_in_ascii(review: dict[str, Any]) -> None:
    b = review["browser"]()
    _ready(b, f"{review['url']}&seq=1")
    total = 19
    # Hand and camera rows hidden by default: 4 BoardStable + BoardCalibrated + BoardStable + HandEntered.
    assert b.evaluate("document.body.dataset.shown") == str(total - 7)
    b.evaluate("document.getElementById('f-hide-camera').click()")
    assert b.evaluate("document.body.dataset.shown") == str(total)
    b.evaluate("document.getElementById('f-rulings').click()")
    assert b.evaluate(f"{SHOWN}.map(t => t.dataset.seq)") == ["1", "14"]  # the selected entry stays shown
    b.evaluate("document.getElementById('f-rulings').click()")
    b.evaluate("(s => { s.value = 'black'; s.dispatchEvent(new Event('change')); })(document.getElementById('f-side'))")
    sides = b.evaluate(f"{SHOWN}.filter(t => t.dataset.seq !== '1').map(t => t.dataset.side)")
    assert sides and set(sides) == {"black"}
    rulings = b.evaluate("document.getElementById('rulings').innerText")
    assert "5.3" in rulings and "cxa-2021" in rulings
    when = b.evaluate("document.querySelector('#timeline td.when').textContent")
    expect = b.evaluate("(d => [d.getFullYear(), d.getMonth() + 1, d.getDate()].map(n => String(n).padStart(2, '0'))"
                        ".join('-'))(new Date(1780000000000))")
    assert when.startswith(expect + " ") and len(when) == len("2026-05-28 20:26:40")
    # A clock not known: the placeholder is ASCII, never en dashes (–:–– reads as 一:—— in a CJK font).
    assert b.evaluate("XQ.clock(null)") == "--:--"
    assert "–" not in b.evaluate("document.querySelector('.clocks').innerText")


@pytest.mark.parametrize("width", [820, 1024])
def test_on_a_tablet_the_board_fits_its_panel(review: dict[str, Any], width: int) -> None:
    b = review["browser"](width, 1180)
    _ready(b, review["url"])
    board, panel = b.evaluate("""[document.querySelector('#board svg'),
        document.querySelector('#board').closest('.panel')]
        .map(e => (r => [r.left, r.right])(e.getBoundingClientRect()))""")
    assert panel[0] <= board[0] and board[1] <= panel[1], (board, panel)
    assert board[1] - board[0] > 250  # still a board one can read
    where = shot(f"review-{width}.png")
    if where is not None:
        where.write_bytes(b.screenshot())
    page = b.evaluate("document.documentElement.scrollWidth")
    assert page <= width, page  # nothing runs out of the page sideways


def test_the_pages_in_simplified_and_traditional_chinese_and_english(review: dict[str, Any]) -> None:
    b = review["browser"]()
    _ready(b, f"{review['url']}&lang=zh-Hant")
    assert b.evaluate("document.documentElement.lang") == "zh-Hant"
    text = b.evaluate("document.body.innerText")
    assert "對局審查" in text and "裁決" in text and "紅方 0" in text and "顯示 12 / 19 條" in text
    assert "Game review" not in text and "Rulings" not in text
    # Every word the pages use exists in both Chinese dictionaries.
    missing = b.evaluate("(d => Object.keys(d.en).filter(k => !(k in d['zh-Hans'] && k in d['zh-Hant'])))(XQI.DICT)")
    assert missing == []
    # The language from the browser's when none is asked for; Chinese by script or region.
    picks = b.evaluate("""[XQI.pick(null, ['zh-TW', 'en']), XQI.pick(null, ['zh-CN']), XQI.pick(null, ['fr', 'zh-HK']),
        XQI.pick('zh', ['en-GB']), XQI.pick('zh-Hant', []), XQI.pick(null, ['de']), XQI.pick('en', ['zh-CN'])]""")
    assert picks == ["zh-Hant", "zh-Hans", "zh-Hant", "zh-Hans", "zh-Hant", "en", "en"]
    _ready(b, review["url"])  # headless Chromium's language is English
    assert b.evaluate("document.documentElement.lang") == "en"
    assert "Game review" in b.evaluate("document.body.innerText")
    # The venue page shares the dictionary.
    venue = review["url"].split("/review.html")[0] + "/?lang=zh-Hans"
    b.open(venue)
    b.wait_for("document.querySelectorAll('[data-board]').length === 1")
    text = b.evaluate("document.body.innerText")
    assert "赛场总览" in text and "棋台 b1" in text and "无对局" in text and "1 台 · 0 台对局中 · 0 个警示" in text
