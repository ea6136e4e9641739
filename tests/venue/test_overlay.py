"""The broadcast overlay in headless Chromium, in its live mode (the stream kept open, read in real time): players,
event and round, the clocks running from the last press, the side to move, the last moves, the result as it
comes; English and Chinese.

The game of gamedata.write_game as the referee publishes it (GameStarted, then per move the MoveMade and the
mover's ClockPressed, a Ruling): after Black's press of move 4 Red's clock runs from 59:46 (60 minutes less
2 x 7 s) and Black's stands at 59:42 (60 minutes less 2 x 9 s).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from tests.venue.gamedata import MOVES
from tests.venue.test_pages import CHROMIUM, shot
from xqarb.events import make_event
from xqarb.ingest.server import ServerThread
from xqarb.referee.service import STREAM_INPUTS

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed")

RED_AT_PRESS_MS = 3_586_000
BLACK_AT_PRESS_MS = 3_582_000
SIZE = (760, 420)
BOARD_BGR = (167, 217, 240)  # the board's colour (#f0d9a7 in style.css)


@pytest.fixture
def overlay(api_setup: dict[str, Any], venue: dict[str, Any], tmp_path: Path) -> Any:
    """An API whose stream holds the game as the referee publishes it, over real HTTP, and a browser."""
    from tests.venue.cdp import Browser
    from xqarb.referee.api import RefereeApi, StreamHub, create_app, frame_loader

    ledger, game = api_setup["ledger"], api_setup["game"]
    hub = StreamHub()
    published = [e.event for e in ledger.entries(game) if e.kind == "output" or e.event.type in STREAM_INPUTS]
    for i, event in enumerate(published):
        hub.add(0, i, event)
    api = RefereeApi(ledger=ledger, hub=hub, board_ids=venue["config"].boards,
                     load_frame=frame_loader([tmp_path / "frames"]))
    server = ServerThread(create_app(api), port=0).start()
    browser = Browser(tmp_path / "profile", *SIZE)
    try:
        yield {"url": f"{server.url}/overlay.html?board={api_setup['board']}", "browser": browser, "hub": hub,
               "board": api_setup["board"], "game": game, "next_offset": len(published)}
    finally:
        browser.close()
        server.stop()


def _body(b: Any, name: str) -> str:
    return b.evaluate(f"document.body.dataset.{name} || ''")


def test_live_overlay_runs_the_clock_of_the_side_to_move(overlay: dict[str, Any]) -> None:
    b = overlay["browser"]
    b.open(f"{overlay['url']}&event=Open%202026&round=3")
    b.wait_for(f"document.body.dataset.moves === '{len(MOVES)}'")
    assert _body(b, "lastMove") == MOVES[-1][0]
    # Black pressed last: Red is to move and Red's clock runs, in real time; Black's stands.
    assert _body(b, "toMove") == "red" and _body(b, "running") == "red"
    red_before = int(_body(b, "redMs"))
    time.sleep(1.5)
    red_after = int(_body(b, "redMs"))
    assert RED_AT_PRESS_MS - 15_000 < red_after < red_before - 1_000 < RED_AT_PRESS_MS, (red_before, red_after)
    assert int(_body(b, "blackMs")) == BLACK_AT_PRESS_MS
    text = b.evaluate("document.body.innerText")
    assert "湖北李智平" in text and "吉林胡慶陽" in text and "Open 2026 · Round 3" in text and "59:42" in text
    assert all(chinese in text for _, _, chinese in MOVES)  # the last moves, in Chinese notation (7.5)
    assert "waiting for the first move" not in text

    png = b.screenshot()
    where = shot("overlay-live.png")
    if where is not None:
        where.write_bytes(png)
    img = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
    assert img.shape[1] == SIZE[0] and img.shape[0] > 300  # the window's viewport
    board = np.all(np.abs(img.astype(int) - BOARD_BGR) < 12, axis=2).mean()
    dark = (img.max(axis=2) < 60).mean()
    assert board > 0.15 and dark > 0.15, (board, dark)  # the board drawn, on the dark overlay box

    # The result comes on the open stream: shown at once, and the clocks stop.
    hub = overlay["hub"]
    hub.add(0, overlay["next_offset"], make_event(
        "GameEnded", overlay["board"], source="referee", source_seq=99, occurred_at=1, received_at=1,
        game_id=overlay["game"], result="0-1", article="4.1.12", reason="red resigned", ruleset="cxa-2021"))
    b.wait_for("document.body.dataset.result === '0-1'")
    assert _body(b, "running") == "" and _body(b, "toMove") == ""
    stopped = _body(b, "redMs")
    time.sleep(0.5)
    assert _body(b, "redMs") == stopped
    assert "Black wins" in b.evaluate("document.body.innerText")


def test_overlay_in_chinese(overlay: dict[str, Any]) -> None:
    b = overlay["browser"]
    b.open(f"{overlay['url']}&lang=zh&round=3")
    b.wait_for(f"document.body.dataset.moves === '{len(MOVES)}'")
    assert b.evaluate("document.documentElement.lang") == "zh-Hans"
    text = b.evaluate("document.body.innerText")
    assert "第3轮" in text and "红方" not in text  # the players' names, not the placeholders
    assert "Round" not in text and _body(b, "running") == "red"
    # The board's next game starts on the open stream: the overlay follows it, with its event, round and table.
    overlay["hub"].add(0, overlay["next_offset"], make_event(
        "GameStarted", overlay["board"], source="arbiter:chief", source_seq=7, occurred_at=2, received_at=2,
        game_id=f"{overlay['game']}-next", red_player="王天一", black_player="郑惟桐", event="全国象棋甲级联赛",
        round=5, board_no=2, time_control={"scheme": "increment", "base_ms": 1_500_000, "increment_ms": 10_000}))
    b.wait_for("document.body.innerText.includes('王天一')")
    text = b.evaluate("document.body.innerText")
    assert "全国象棋甲级联赛 · 第5轮 · 第2台" in text and "等待第一步" in text
    assert _body(b, "moves") == "0" and _body(b, "running") == "red" and "25:00" in text
