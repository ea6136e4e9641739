"""One action answers an alert (issue 38, item 3): the review page shows each open repetition alert with its
classification (25.2), the ruling it points to and its article, and Confirm / Overrule post an ArbiterDecision
naming the alert through `POST /api/games/<id>/actions`; a one-sided perpetual check so confirmed ends the game
by 4.1.4 (the loss of the side that checks).

The game: Red's rook checks from i9 and i8 by turns while Black's king steps e9-e8 and back; after the position
came round the third time the referee raised the alert: red 长将, black 闲, pointing to 0-1 by 4.1.4.
"""

from __future__ import annotations

import json
import time
import urllib.request
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.referee.conftest import Scenario
from tests.venue.conftest import read_topic
from xqarb.ingest.server import ServerThread
from xqarb.referee.ledger import Origin, SqliteLedger
from xqarb.referee.service import Referee

CHECKS_FEN = "4k4/8R/9/9/9/9/9/9/9/3K5 w - - 0 1"
CHECKS = ["i8i9", "e9e8", "i9i8", "e8e9"]


@pytest.fixture
def serve_game(tmp_path: Path, venue: dict[str, Any], ingest_client: Any) -> Any:
    """`serve_game(fen, moves, name)`: the API over real HTTP on a ledger holding that game, played just now."""
    from xqarb.ingest.app import Ingest
    from xqarb.referee.api import RefereeApi, StreamHub, create_app

    board, token = venue["b7"], f"tok-chief-{venue['tag']}"
    ledger = SqliteLedger(tmp_path / "ledger.sqlite")
    servers: list[Any] = []

    def serve(fen: str, moves: list[str], name: str) -> dict[str, Any]:
        game = f"g-{name}-{venue['tag']}"
        events = Scenario(board=board, game=game, start_fen=fen).moves(*moves).events()
        # Played just now: the decision the API stamps with the present time comes while the clocks still run.
        shift = time.time_ns() // 1000 - 5_000_000 - events[-1].received_at
        events = [replace(e, occurred_at=e.occurred_at + shift, received_at=e.received_at + shift) for e in events]
        referee = Referee(ledger)
        referee.handle_batch([(e, Origin("xq.observations", 0, i)) for i, e in enumerate(events)])
        ingest = Ingest(venue["config"], ingest_client.application.extensions["xq_ingest"].publisher)
        api = RefereeApi(ledger=ledger, hub=StreamHub(), board_ids=venue["config"].boards,
                         load_frame=lambda sha: None, ingest=ingest)
        app = create_app(api)
        app.add_url_rule("/test-harness.html", "harness", lambda: HARNESS % {"token": token, "game": game})
        server = ServerThread(app, port=0).start()
        servers.append(server)
        return {"url": server.url, "app": app, "ledger": ledger, "referee": referee, "game": game, "board": board,
                "token": token}

    try:
        yield serve
    finally:
        for server in servers:
            server.stop()
        ledger.close()


@pytest.fixture
def served_alert(serve_game: Any) -> dict[str, Any]:
    """The perpetual-check game with its open alert."""
    return serve_game(CHECKS_FEN, CHECKS * 2, "checks")


def _get(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


def _post(url: str, body: dict[str, Any], token: str) -> tuple[int, dict[str, Any]]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _open_alert(url: str, game: str) -> dict[str, Any]:
    pending = _get(f"{url}/api/games/{game}")["state"]["pending"]
    [rep] = [p for p in pending if p["kind"] == "repetition"]
    return rep["alert"]


def _fold_posted(s: dict[str, Any], topics: str, alert_id: str) -> list[Any]:
    """The referee's fold of the decision the API published on xq.arbiter (as the referee service would)."""
    [(rec, event)] = read_topic(
        topics, "xq.arbiter", lambda it: it[1].game_id == s["game"] and it[1].data.get("alert") == alert_id
    )
    return list(s["referee"].handle_batch([(event, Origin("xq.arbiter", rec.partition, rec.offset))]))


def test_a_confirmed_perpetual_check_alert_ends_the_game_by_4_1_4(served_alert: dict[str, Any], topics: str) -> None:
    s = served_alert
    alert = _open_alert(s["url"], s["game"])
    assert alert["patterns"] == {"red": "长将", "black": "闲"}
    assert (alert["outcome"], alert["side"], alert["result"]) == ("loss", "red", "0-1")
    # The body the review page's Confirm sends; without the arbiter's token it is refused.
    body = {"type": "ArbiterDecision", "result": "", "article": alert["article"], "action": "confirm",
            "alert": alert["alert"]}
    assert _post(f"{s['url']}/api/games/{s['game']}/actions", body, "not-a-token")[0] == 401
    status, answer = _post(f"{s['url']}/api/games/{s['game']}/actions", body, s["token"])
    assert status == 202, answer
    outputs = _fold_posted(s, topics, alert["alert"])
    [ended] = [o for o in outputs if o.type == "GameEnded"]
    assert ended.data["result"] == "0-1" and ended.data["article"].startswith("4.1.4")
    state = _get(f"{s['url']}/api/games/{s['game']}")["state"]
    assert state["result"]["result"] == "0-1"
    assert not [p for p in state["pending"] if p.get("alert")]  # the alert is answered


def test_overrule_lets_play_go_on(served_alert: dict[str, Any], topics: str) -> None:
    s = served_alert
    alert = _open_alert(s["url"], s["game"])
    body = {"type": "ArbiterDecision", "result": "", "article": alert["article"], "action": "overrule",
            "alert": alert["alert"]}
    assert _post(f"{s['url']}/api/games/{s['game']}/actions", body, s["token"])[0] == 202
    outputs = _fold_posted(s, topics, alert["alert"])
    assert [o.type for o in outputs] == ["Ruling"] and outputs[0].data["kind"] == "correction"
    state = _get(f"{s['url']}/api/games/{s['game']}")["state"]
    assert state["result"] is None and not [p for p in state["pending"] if p.get("alert")]


# --- in the browser ----------------------------------------------------------------------------------------------

# A page of the test's own (same origin): it keeps the arbiter's token as the review page does, opens the review
# page in a frame, clicks the alert's Confirm button once the page is ready, and shows what the page answered.
HARNESS = """<!doctype html><html><body><div id="done">waiting</div><script>
sessionStorage.setItem("xq-arbiter-token", "%(token)s");
const f = document.createElement("iframe");
f.src = "/review.html?game=%(game)s";
document.body.append(f);
let clicked = false;
const iv = setInterval(() => {
  const d = f.contentDocument;
  if (!d || !d.body) return;
  if (d.body.dataset.ready === "1" && !clicked) {
    const button = d.querySelector('#open-alerts button[data-action="confirm"]');
    if (button) { clicked = true; button.click(); }
  }
  if (d.body.dataset.answered) {
    document.getElementById("done").textContent = "answered " + d.body.dataset.answered;
    clearInterval(iv);
  }
}, 50);
</script></body></html>"""


def test_review_page_shows_the_alert_and_its_confirm_button_posts_the_decision(
    served_alert: dict[str, Any], topics: str, tmp_path: Path
) -> None:
    from tests.venue.test_pages import CHROMIUM, browse, shot

    if CHROMIUM is None:
        pytest.skip("Chromium is not installed")
    s = served_alert
    alert = _open_alert(s["url"], s["game"])
    dom = browse(f"{s['url']}/review.html?game={s['game']}", tmp_path, screenshot=shot("review-alert.png"))
    assert 'data-count="1"' in dom and f'data-alert="{alert["alert"]}"' in dom
    assert "red 长将 · black 闲" in dom and "points to: red loses: 0-1 (4.1.4" in dom
    assert 'data-action="confirm"' in dom and 'data-action="overrule"' in dom and 'data-action="vary"' not in dom

    dom = browse(f"{s['url']}/test-harness.html", tmp_path, budget_ms=8000)
    assert "answered confirm" in dom
    outputs = _fold_posted(s, topics, alert["alert"])
    assert [(o.data["result"], o.data["article"][:5]) for o in outputs if o.type == "GameEnded"] == [("0-1", "4.1.4")]


# Red's rook follows an elephant: 27.3 may make it idle (a key defensive point), so the referee refers the cycle.
ELEPHANT_FEN = "2bakab2/9/9/9/9/9/8R/9/9/3K5 w - - 0 1"
ELEPHANT = ["i3g3", "g9i7", "g3i3", "i7g9"]
# The start position with 106 plies (53 rounds) played without a capture; 14 more plies reach 60 rounds (4.2.4).
NEAR_FEN = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 106 54"
SHUFFLE = ["h0g2", "h9g7", "b0c2", "b9c7", "g2h0", "g7h9", "c2b0", "c7b9", "h0i2", "h9i7", "i2h0", "i7h9", "b0a2",
           "b9a7"]


def test_a_referred_cycle_offers_vary_and_the_order_is_an_obligation(
    serve_game: Any, topics: str, tmp_path: Path
) -> None:
    from tests.venue.test_pages import CHROMIUM, browse

    s = serve_game(ELEPHANT_FEN, ELEPHANT * 2, "elephant")
    alert = _open_alert(s["url"], s["game"])
    assert alert["outcome"] == "judgment"
    if CHROMIUM is not None:
        dom = browse(f"{s['url']}/review.html?game={s['game']}", tmp_path)
        assert "points to: referred: the arbiter must judge" in dom
        assert 'data-action="vary"' in dom and 'data-action="overrule"' in dom and 'data-action="confirm"' not in dom
        assert f'id="vary-{alert["alert"]}"' in dom
    body = {"type": "ArbiterDecision", "result": "", "article": alert["article"], "action": "vary", "side": "red",
            "alert": alert["alert"]}
    assert _post(f"{s['url']}/api/games/{s['game']}/actions", body, s["token"])[0] == 202
    outputs = _fold_posted(s, topics, alert["alert"])
    [ruling] = [o for o in outputs if o.type == "Ruling"]
    assert (ruling.data["kind"], ruling.data["side"]) == ("obligation", "red") and "vary" in ruling.data["message"]


def test_a_reached_natural_limit_is_confirmed_drawn_4_2_4(serve_game: Any, topics: str, tmp_path: Path) -> None:
    from tests.venue.test_pages import CHROMIUM, browse

    s = serve_game(NEAR_FEN, SHUFFLE, "limit")
    pending = _get(f"{s['url']}/api/games/{s['game']}")["state"]["pending"]
    [limit] = [p for p in pending if p["kind"] == "natural_limit"]
    assert limit["reached"] is True
    if CHROMIUM is not None:
        dom = browse(f"{s['url']}/review.html?game={s['game']}", tmp_path)
        assert "natural move limit (自然限着) reached" in dom and "points to: draw: 1/2-1/2 (4.2.4)" in dom
        assert 'data-action="confirm"' in dom and f'data-alert="{limit["alert"]}"' in dom
    body = {"type": "ArbiterDecision", "result": "", "article": "4.2.4", "action": "confirm", "alert": limit["alert"]}
    assert _post(f"{s['url']}/api/games/{s['game']}/actions", body, s["token"])[0] == 202
    [ended] = [o for o in _fold_posted(s, topics, limit["alert"]) if o.type == "GameEnded"]
    assert (ended.data["result"], ended.data["article"]) == ("1/2-1/2", "4.2.4")
