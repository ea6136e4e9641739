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
def served_alert(tmp_path: Path, venue: dict[str, Any], ingest_client: Any) -> Any:
    """The API over real HTTP on a ledger holding the perpetual-check game with its open alert."""
    from xqarb.ingest.app import Ingest
    from xqarb.referee.api import RefereeApi, StreamHub, create_app

    board, game = venue["b7"], f"g-checks-{venue['tag']}"
    ledger = SqliteLedger(tmp_path / "ledger.sqlite")
    events = Scenario(board=board, game=game, start_fen=CHECKS_FEN).moves(*CHECKS * 2).events()
    # Played just now: the decision the API stamps with the present time comes while the clocks still run.
    shift = time.time_ns() // 1000 - 5_000_000 - events[-1].received_at
    events = [replace(e, occurred_at=e.occurred_at + shift, received_at=e.received_at + shift) for e in events]
    referee = Referee(ledger)
    referee.handle_batch([(e, Origin("xq.observations", 0, i)) for i, e in enumerate(events)])
    ingest = Ingest(venue["config"], ingest_client.application.extensions["xq_ingest"].publisher)
    api = RefereeApi(ledger=ledger, hub=StreamHub(), board_ids=venue["config"].boards, load_frame=lambda sha: None,
                     ingest=ingest)
    app = create_app(api)
    token = f"tok-chief-{venue['tag']}"
    app.add_url_rule("/test-harness.html", "harness", lambda: HARNESS % {"token": token, "game": game})
    server = ServerThread(app, port=0).start()
    try:
        yield {"url": server.url, "app": app, "ledger": ledger, "referee": referee, "game": game, "board": board,
               "token": token}
    finally:
        server.stop()
        ledger.close()


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
