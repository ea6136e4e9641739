"""The scoresheet over real HTTP, and the arbiter's sign-off round trip: POST /api/games/<id>/actions -> xq.arbiter
(the session broker) -> the referee's fold and a real SQLite ledger -> GET /api/games/<id>/scoresheet."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.referee.conftest import T0, Scenario
from tests.venue.conftest import read_topic
from xqarb.referee.ledger import Origin


def http(url: str, body: dict[str, Any] | None = None, token: str | None = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method="GET" if body is None else "POST")
    req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            raw, status, kind = resp.read(), resp.status, resp.headers.get("Content-Type", "")
    except urllib.error.HTTPError as err:
        raw, status, kind = err.read(), err.code, err.headers.get("Content-Type", "")
    return status, json.loads(raw) if "json" in kind else raw.decode()


@pytest.fixture
def served(tmp_path: Path, venue: dict[str, Any], ingest_client: Any) -> Iterator[dict[str, Any]]:
    """A referee over a fresh SQLite ledger, its API served over HTTP, the game played into the ledger by the
    referee's own fold: three moves, then the arbiter reports Black's foul (8.1.5)."""
    from xqarb.ingest.app import Ingest
    from xqarb.ingest.server import ServerThread
    from xqarb.referee.api import RefereeApi, StreamHub, create_app, frame_loader
    from xqarb.referee.ledger import SqliteLedger
    from xqarb.referee.service import Referee

    ledger = SqliteLedger(tmp_path / "ledger.sqlite")
    board, game = venue["b7"], f"sheet-{venue['tag']}"
    s = Scenario(board=board, game=game, red_player="王天一", black_player="郑惟桐", event="全国个人赛", round=2,
                 board_no=4, time_control={"scheme": "increment", "base_ms": 600_000, "increment_ms": 10_000})
    s.moves("h2e2", "h9g7", "h0g2").add("FoulReported", side="black", article="8.1.5", note="touched 車 it cannot move")
    shift = time.time_ns() // 1000 - 120_000_000 - T0  # the game was played in the last two minutes
    for line in s.lines:
        line["occurred_at"] += shift
    referee = Referee(ledger)
    referee.handle_batch([(e, Origin("xq.arbiter", 0, i)) for i, e in enumerate(s.events())])
    ingest = Ingest(venue["config"], ingest_client.application.extensions["xq_ingest"].publisher)
    api = RefereeApi(ledger=ledger, hub=StreamHub(), board_ids=venue["config"].boards,
                     load_frame=frame_loader([tmp_path]), ingest=ingest)
    server = ServerThread(create_app(api), port=0).start()
    try:
        yield {"url": server.url, "game": game, "board": board, "ledger": ledger, "referee": referee,
               "chief": f"tok-chief-{venue['tag']}", "floor": f"tok-floor-{venue['tag']}"}
    finally:
        server.stop()
        ledger.close()


def post_and_fold(served: dict[str, Any], topics: str, body: dict[str, Any]) -> Any:
    """POST an arbiter action, read it back from xq.arbiter and fold it as the referee service does."""
    status, answer = http(f"{served['url']}/api/games/{served['game']}/actions", body, served["chief"])
    assert status == 202, answer
    [(rec, event)] = read_topic(topics, "xq.arbiter", lambda it: it[1].event_id == answer["event_id"])
    outputs = served["referee"].handle_batch([(event, Origin("xq.arbiter", rec.partition, rec.offset))])
    return event, outputs


def test_sign_off_round_trip(served: dict[str, Any], topics: str) -> None:
    base, game, chief = served["url"], served["game"], served["chief"]
    actions = f"{base}/api/games/{game}/actions"
    status, sheet = http(f"{base}/api/games/{game}/scoresheet")
    assert status == 200 and sheet["result"] is None and sheet["sign_off"] is None
    assert (sheet["red_player"], sheet["event"], sheet["round"], sheet["board_no"]) == ("王天一", "全国个人赛", 2, 4)
    assert sheet["rounds"] == [[1, "炮二平五", "马8进7"], [2, "马二进三", ""]]
    assert [(f["side"], f["article"]) for f in sheet["fouls"]] == [("black", "8.1.5")]

    # 9: the sheet is signed once the game has ended; before that the sign-off is refused, saying why.
    status, answer = http(actions, {"type": "ArbiterDecision", "action": "sign_off"}, chief)
    assert status == 409 and answer["error"] == "game_in_progress" and "has not ended" in answer["detail"]

    _, outputs = post_and_fold(served, topics, {"type": "ArbiterDecision", "result": "0-1", "article": "4.1.12",
                                                "note": "red resigned"})
    assert [o.type for o in outputs] == ["GameEnded"]
    status, answer = http(actions, {"type": "ArbiterDecision", "action": "sign_off", "result": "1-0"}, chief)
    assert status == 409 and answer["error"] == "result_mismatch"
    status, answer = http(actions, {"type": "ArbiterDecision", "action": "sign_off"}, served["floor"])
    assert status == 403  # the floor arbiter has no token for this board

    event, outputs = post_and_fold(served, topics, {"type": "ArbiterDecision", "action": "sign_off",
                                                    "note": "both players signed"})
    assert (event.data["result"], event.data["article"], event.source) == ("0-1", "9", "arbiter:chief")
    assert outputs == ()  # the sign-off changes nothing in the game and raises no attention
    head_seq, head_hash = served["ledger"].head(game)
    status, sheet = http(f"{base}/api/games/{game}/scoresheet")
    assert sheet["result"] == "0-1" and sheet["result_article"] == "4.1.12"
    # The referee's clock, stopped at the result: Red thought 5.5 s over each of its two moves (increments are
    # given back); Black's clock ran from Red's last press until the arbiter's decision, at least its own 5.5 s.
    assert sheet["red_used_ms"] == 11_000 and sheet["black_used_ms"] > 5_500
    signed = sheet["sign_off"]
    assert (signed["by"], signed["seq"], signed["hash"], signed["event_id"]) == (
        "arbiter:chief", head_seq, head_hash, event.event_id)
    assert signed["at_us"] == event.occurred_at and signed["note"] == "both players signed"
    assert http(f"{base}/api/games/{game}/verify")[1]["ok"] is True
    status, page = http(f"{base}/games/{game}/scoresheet.html")
    assert status == 200 and f"ledger seq {head_seq} · hash {head_hash}" in page and "size: A4" in page
    assert "王天一" in page and "8.1.5" in page and "监局裁判签字" in page

    status, answer = http(actions, {"type": "ArbiterDecision", "action": "sign_off"}, chief)
    assert status == 409 and answer["error"] == "already_signed" and f"seq {head_seq}" in answer["detail"]


def test_scoresheet_of_an_unknown_game_is_a_404(served: dict[str, Any]) -> None:
    status, answer = http(f"{served['url']}/api/games/nope/scoresheet")
    assert status == 404 and answer["error"] == "unknown_game"
    assert http(f"{served['url']}/games/nope/scoresheet.html")[0] == 404
