"""The flag and camera-quiet alerts where the arbiter looks (issue 38 item 3): the game's state on the API lists
each open one with its id, the review page shows a card for each with an Acknowledge button, and the
acknowledgement (ArbiterDecision overrule naming the alert, through `POST /api/games/<id>/actions`) closes it
without ruling anything.

The game: 2 minutes sudden death (6.3); the service's ClockCheck came 61 s in with Red still to move (59 s left,
the warning at 60 s), and vision reported the camera quiet since 10 s in."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.referee.conftest import T0, Scenario
from tests.venue.test_alert_actions import _fold_posted, _get, _post
from xqarb.ingest.server import ServerThread
from xqarb.referee.ledger import Origin, SqliteLedger
from xqarb.referee.service import Referee


@pytest.fixture
def served(tmp_path: Path, venue: dict[str, Any], ingest_client: Any) -> Any:
    from xqarb.ingest.app import Ingest
    from xqarb.referee.api import RefereeApi, StreamHub, create_app

    board, token, game = venue["b7"], f"tok-chief-{venue['tag']}", f"g-watch-{venue['tag']}"
    s = Scenario(board=board, game=game, time_control={"scheme": "sudden_death", "base_ms": 120_000})
    s.add("ClockCheck", dt=61, game_id=game, side="red", warn_ms=60_000)
    s.add("CameraQuiet", dt=1, since=T0 + 10_000_000, quiet_ms=20_000, back=False)
    events = s.events()
    # Played just now: the acknowledgement the API stamps with the present time comes while Red's clock runs.
    shift = time.time_ns() // 1000 - 5_000_000 - events[-1].received_at
    events = [replace(e, occurred_at=e.occurred_at + shift, received_at=e.received_at + shift) for e in events]
    ledger = SqliteLedger(tmp_path / "ledger.sqlite")
    referee = Referee(ledger)
    referee.handle_batch([(e, Origin("xq.observations", 0, i)) for i, e in enumerate(events)])
    ingest = Ingest(venue["config"], ingest_client.application.extensions["xq_ingest"].publisher)
    api = RefereeApi(ledger=ledger, hub=StreamHub(), board_ids=venue["config"].boards, load_frame=lambda sha: None,
                     ingest=ingest)
    server = ServerThread(create_app(api), port=0).start()
    try:
        yield {"url": server.url, "referee": referee, "game": game, "token": token}
    finally:
        server.stop()
        ledger.close()


def _pending(s: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["kind"]: p for p in _get(f"{s['url']}/api/games/{s['game']}")["state"]["pending"] if p.get("alert")}


def test_the_api_lists_both_alerts_and_an_acknowledgement_closes_one(served: dict[str, Any], topics: str) -> None:
    s = served
    pending = _pending(s)
    assert set(pending) == {"flag", "camera_quiet"}
    flag = pending["flag"]
    assert (flag["side"], flag["remaining_ms"], flag["warn_ms"], flag["article"]) == ("red", 59_000, 60_000, "4.1.6")
    assert "0:59 left (2:00 for all moves (6.3))" in flag["reason"]
    assert "since 2026-01-01 00:00:10 UTC" in pending["camera_quiet"]["reason"]  # (`since` is not shifted)
    assert pending["camera_quiet"]["quiet_ms"] == 20_000
    body = {"type": "ArbiterDecision", "result": "", "article": "4.1.6", "action": "overrule", "alert": flag["alert"]}
    status, answer = _post(f"{s['url']}/api/games/{s['game']}/actions", body, s["token"])
    assert status == 202, answer
    assert _fold_posted(s, topics, flag["alert"]) == []  # acknowledged: nothing is ruled
    assert set(_pending(s)) == {"camera_quiet"}
    assert _get(f"{s['url']}/api/games/{s['game']}")["state"]["result"] is None


def test_the_review_page_shows_a_card_for_each_with_acknowledge(served: dict[str, Any], tmp_path: Path) -> None:
    from tests.venue.test_pages import CHROMIUM, browse, shot

    if CHROMIUM is None:
        pytest.skip("Chromium is not installed")
    s = served
    pending = _pending(s)
    dom = browse(f"{s['url']}/review.html?game={s['game']}", tmp_path, screenshot=shot("review-watch-alerts.png"))
    assert 'data-count="2"' in dom
    assert f'data-alert="{pending["flag"]["alert"]}" data-kind="flag"' in dom
    assert f'data-alert="{pending["camera_quiet"]["alert"]}" data-kind="camera_quiet"' in dom
    assert "red's flag is about to fall" in dom and "points to: red loses if its time runs out (4.1.6)" in dom
    assert "the camera went quiet" in dom and dom.count(">Acknowledge</button>") == 2
    assert 'data-action="confirm"' not in dom


def test_the_alert_cards_speak_the_pages_language(served: dict[str, Any], tmp_path: Path) -> None:
    from tests.venue.test_pages import CHROMIUM, browse

    if CHROMIUM is None:
        pytest.skip("Chromium is not installed")
    s = served
    hans = browse(f"{s['url']}/review.html?game={s['game']}&lang=zh-Hans", tmp_path)
    assert "红方即将超时" in hans and "时间用完则红方负" in hans and "摄像头已无画面" in hans
    assert hans.count(">知悉</button>") == 2 and "Acknowledge" not in hans
    hant = browse(f"{s['url']}/review.html?game={s['game']}&lang=zh-Hant", tmp_path)
    assert "紅方即將超時" in hant and "攝影機已無畫面" in hant and hant.count(">知悉</button>") == 2
