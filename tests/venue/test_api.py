"""The referee API over HTTP: every endpoint with a real ledger, real evidence files and a real stream."""

from __future__ import annotations

import http.client
import json
import time
from pathlib import Path
from typing import Any

from tests.venue.gamedata import MOVES
from xqarb.events import make_event
from xqarb.referee.api import StreamHub, decode_position, encode_position


def test_position_ids_round_trip() -> None:
    assert decode_position(encode_position({0: 15, 3: 27, 5: 0})) == {0: 15, 3: 27}
    assert decode_position(None) == {}


def test_boards_lists_every_board_with_alerts_first(api_setup: dict[str, Any], venue: dict[str, Any]) -> None:
    boards = api_setup["client"].get("/api/boards").get_json()["boards"]
    assert [b["board_id"] for b in boards] == [venue["b7"], venue["b8"]]
    b7 = boards[0]
    assert b7["game_id"] == api_setup["game"] and b7["ply"] == len(MOVES)
    assert b7["fen"] == api_setup["final_fen"] and b7["fouls"] == {"red": 0, "black": 1}
    assert b7["red_player"] == "湖北李智平" and b7["alerts"][0]["article"] == "5.3"
    assert b7["red_ms"] == 3_600_000 - 2 * 7_000 and b7["black_ms"] == 3_600_000 - 2 * 9_000


def test_events_after_and_limit(api_setup: dict[str, Any]) -> None:
    c, g = api_setup["client"], api_setup["game"]
    all_entries = c.get(f"/api/games/{g}/events").get_json()["entries"]
    assert [e["seq"] for e in all_entries] == list(range(1, api_setup["entries"] + 1))
    page = c.get(f"/api/games/{g}/events?after=3&limit=2").get_json()["entries"]
    assert [e["seq"] for e in page] == [4, 5] and page[0]["prev_hash"] == all_entries[2]["hash"]
    for bad in ("after=x", "after=-1", "limit=0"):
        r = c.get(f"/api/games/{g}/events?{bad}")
        assert r.status_code == 400 and r.get_json()["error"] == "bad_parameter"
    r = c.get("/api/games/nope/events")
    assert r.status_code == 404 and r.get_json()["error"] == "unknown_game"


def test_verify_and_tamper(api_setup: dict[str, Any]) -> None:
    c, g, ledger = api_setup["client"], api_setup["game"], api_setup["ledger"]
    v = c.get(f"/api/games/{g}/verify").get_json()
    assert v["ok"] and v["entries"] == api_setup["entries"]
    # Alter entry 9 (a move) behind the ledger's back, in the file itself: verification must name it.
    import sqlite3

    db = sqlite3.connect(ledger.path)
    (body,) = db.execute("SELECT body FROM entries WHERE game_id = ? AND seq = 9", (g,)).fetchone()
    assert b"H2+3" in body
    db.execute("UPDATE entries SET body = ? WHERE game_id = ? AND seq = 9", (body.replace(b"H2+3", b"H2+4"), g))
    db.commit()
    db.close()
    v = c.get(f"/api/games/{g}/verify").get_json()
    assert not v["ok"] and v["first_bad_seq"] == 9


def test_evidence_frames(api_setup: dict[str, Any], tmp_path: Path) -> None:
    c, g, sha = api_setup["client"], api_setup["game"], api_setup["shas"][0]
    r = c.get(f"/api/games/{g}/frames/{sha}")
    assert r.status_code == 200 and r.mimetype == "image/jpeg"
    assert r.data == (tmp_path / "frames" / sha[:2] / f"{sha}.jpg").read_bytes()
    assert c.get(f"/api/games/{g}/frames/{'0' * 64}").get_json()["error"] == "unknown_frame"
    r = c.get(f"/api/games/{g}/frames/../../etc")
    assert r.status_code in (400, 404)
    assert c.get(f"/api/games/{g}/frames/XYZ").get_json()["error"] == "bad_sha256"


def test_pgn_export_has_moves_and_clock_times(api_setup: dict[str, Any]) -> None:
    r = api_setup["client"].get(f"/api/games/{api_setup['game']}/pgn")
    text = r.get_data(as_text=True)
    assert r.status_code == 200 and '[Red "湖北李智平"]' in text and '[Result "*"]' in text
    assert "1. 炮二平五 {[%clk 0:59:53]} 馬８進７ {[%clk 0:59:51]}" in text


def test_state_at_any_entry(api_setup: dict[str, Any]) -> None:
    """The referee's own fold of the ledger's inputs up to entry N: the disputed moment's position and clocks."""
    from tests.venue.gamedata import START_FEN, play

    c, g = api_setup["client"], api_setup["game"]
    at_start = c.get(f"/api/games/{g}/state?seq=1").get_json()
    assert at_start["seq"] == 1 and at_start["state"]["fen"] == START_FEN and at_start["state"]["ply"] == 0
    # Entries 2-4: the camera's still board after 炮二平五, the referee's MoveMade, red's clock press.
    s = c.get(f"/api/games/{g}/state?seq=4").get_json()["state"]
    assert (
        s["fen"].split()[:2] == play(START_FEN, "h2e2")[0].split()[:2]
        and s["ply"] == 1
        and s["side_to_move"] == "black"
    )
    assert s["red_player"] == "湖北李智平" and "fouls" in s and "pending" in s
    assert isinstance(s["red_ms"], int) and isinstance(s["black_ms"], int)
    current = c.get(f"/api/games/{g}").get_json()
    assert current["state"]["fen"].split()[0] == api_setup["final_fen"].split()[0] and current["state"]["ply"] == len(
        MOVES
    )
    assert c.get(f"/api/games/{g}/state?seq=999").status_code == 404
    assert c.get(f"/api/games/{g}/state?seq=abc").status_code == 400


def test_openapi_describes_every_route(api_setup: dict[str, Any]) -> None:
    doc = api_setup["client"].get("/api/openapi.json").get_json()
    assert doc["openapi"].startswith("3.")
    routes = {
        str(r.rule).replace("<", "{").replace(">", "}").replace("{path:name}", "")
        for r in api_setup["app"].url_map.iter_rules()
    }
    for route in routes:
        if route.startswith("/api") or route.startswith("/ingest") or route == "/metrics":
            assert route in doc["paths"], f"{route} is not in the OpenAPI description"


def test_metrics_endpoint(api_setup: dict[str, Any]) -> None:
    text = api_setup["client"].get("/metrics").get_data(as_text=True)
    assert "xq_rulings_total" in text and 'article="5.3"' in text and "xq_ledger_appends_total" in text


def test_arbiter_action(api_setup: dict[str, Any], venue: dict[str, Any], topics: str) -> None:
    from tests.venue.conftest import read_topic

    c, g, tag = api_setup["client"], api_setup["game"], venue["tag"]
    body = {"type": "ArbiterDecision", "result": "1-0", "article": "8.1.7", "note": f"flag fell {tag}"}
    r = c.post(f"/api/games/{g}/actions", json=body, headers={"Authorization": f"Bearer tok-chief-{tag}"})
    assert r.status_code == 202, r.get_json()
    [(_, event)] = read_topic(topics, "xq.arbiter", lambda it: it[1].event_id == r.get_json()["event_id"])
    assert event.game_id == g and event.board_id == api_setup["board"] and event.source == "arbiter:chief"
    # A device token, a missing token and a bad body are refused; the API goes on.
    r = c.post(f"/api/games/{g}/actions", json=body, headers={"Authorization": f"Bearer tok-cam-{venue['b7']}"})
    assert r.status_code == 403
    assert c.post(f"/api/games/{g}/actions", json=body).status_code == 401
    r = c.post(f"/api/games/{g}/actions", data="nope", headers={"Authorization": f"Bearer tok-chief-{tag}"})
    assert r.status_code == 400 and r.get_json()["error"] == "bad_json"
    r = c.post(
        f"/api/games/{g}/actions", json={"type": "MoveMade"}, headers={"Authorization": f"Bearer tok-chief-{tag}"}
    )
    assert r.status_code == 422
    assert c.get("/api/boards").status_code == 200


def test_unknown_path_is_a_json_error(api_setup: dict[str, Any]) -> None:
    r = api_setup["client"].get("/api/nothing-here")
    assert r.status_code == 404 and "error" in r.get_json()


def test_pages_are_served(api_setup: dict[str, Any]) -> None:
    c = api_setup["client"]
    for page in ("/", "/review.html", "/overlay.html", "/board.js", "/style.css"):
        assert c.get(page).status_code == 200, page


# --- the live stream over real HTTP ------------------------------------------------------------------------------


def sse_read(port: int, path: str, count: int, last_id: str | None = None, timeout: float = 10) -> list[dict[str, str]]:
    """Read `count` events from a server-sent-event stream, then drop the connection (a disconnect)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    conn.request("GET", path, headers={"Last-Event-ID": last_id} if last_id else {})
    resp = conn.getresponse()
    assert resp.status == 200 and resp.getheader("Content-Type").startswith("text/event-stream")
    events: list[dict[str, str]] = []
    current: dict[str, str] = {}
    while len(events) < count:
        line = resp.fp.readline().decode("utf-8")
        if line == "":
            break
        line = line.rstrip("\n")
        if not line:
            if "data" in current:
                events.append(current)
            current = {}
        elif not line.startswith(":"):
            key, _, value = line.partition(": ")
            current[key] = value
    conn.close()
    return events


def test_stream_resumes_after_a_disconnect_without_losing_an_event(api_setup: dict[str, Any]) -> None:
    from xqarb.ingest.server import ServerThread

    hub: StreamHub = api_setup["hub"]
    board = api_setup["board"]
    server = ServerThread(api_setup["app"], port=0).start()
    try:
        before = len(hub.items)
        first = sse_read(server.port, "/api/stream", 3)
        assert [json.loads(e["data"])["event_id"] for e in first] == [i.event.event_id for i in hub.items[:3]]
        # While the client is away, more events arrive on several partitions.
        for n in range(6):
            hub.add(
                n % 3,
                100 + n,
                make_event(
                    "AttentionNeeded",
                    board,
                    source="t",
                    source_seq=n,
                    occurred_at=n,
                    received_at=n,
                    game_id="g",
                    reason=f"r{n}",
                ),
            )
        rest = sse_read(server.port, "/api/stream", before + 6 - 3, last_id=first[-1]["id"])
        got = [json.loads(e["data"])["event_id"] for e in first + rest]
        assert got == [i.event.event_id for i in hub.items], "events lost or repeated across the reconnect"
        bad = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        bad.request("GET", "/api/stream", headers={"Last-Event-ID": "garbage"})
        assert bad.getresponse().status == 400
    finally:
        server.stop()


def test_stream_from_kafka_with_broadcast_delay(topics: str, unique_topic: Any, venue: dict[str, Any]) -> None:
    from xqarb import bus
    from xqarb.referee.api import kafka_game_events

    topic = unique_topic("game-events")
    bus.ensure_topics(topics, [topic], partitions=3)
    events = [
        make_event(
            "AttentionNeeded",
            f"b{i}",
            source="t",
            source_seq=i,
            occurred_at=i,
            received_at=i,
            game_id=f"g{i}",
            reason="look",
        )
        for i in range(5)
    ]
    with bus.Producer(topics) as producer:
        for e in events:
            producer.send(topic, e)
    hub = StreamHub()
    thread = hub.start(kafka_game_events(topics, topic))
    deadline = time.monotonic() + 15
    while len(hub.items) < 5 and time.monotonic() < deadline:
        time.sleep(0.1)
    hub.stop()
    thread.join(5)
    assert sorted(i.event.event_id for i in hub.items) == sorted(e.event_id for e in events)
    # Per partition the order is Kafka's.
    for p in {i.partition for i in hub.items}:
        offs = [i.offset for i in hub.items if i.partition == p]
        assert offs == sorted(offs)


def test_pgn_export_reads_back_with_the_rules_core(api_setup: dict[str, Any]) -> None:
    """The exported PGN is a game record the rules core (and `xqarb replay`) reads back to the same moves."""
    from xqarb.referee.rules.pgn import read_pgn, replay

    text = api_setup["client"].get(f"/api/games/{api_setup['game']}/pgn").get_data(as_text=True)
    [record] = read_pgn(text)
    assert record.headers["Red"] == "湖北李智平"
    assert [m.iccs for m in replay(record).moves] == [iccs for iccs, _, _ in MOVES]


def test_hub_capacity_and_resume_positions() -> None:
    """A bounded buffer: a client resuming inside it continues exactly; one whose events were dropped must reload."""
    hub = StreamHub(capacity=4)
    events = [
        make_event(
            "AttentionNeeded", "b", source="t", source_seq=n, occurred_at=n, received_at=n, game_id="g", reason=str(n)
        )
        for n in range(6)
    ]
    for n, e in enumerate(events):
        hub.add(n % 2, n // 2, e)  # partition 0: offsets 0,1,2; partition 1: offsets 0,1,2
    assert hub.dropped == 2 and [i.event.event_id for i in hub.items] == [e.event_id for e in events[2:]]
    assert hub.add(0, 1, events[2]) is None  # read again after a reader reconnect: not buffered twice
    # A client that saw up to and including event 3 (partition 1, offset 1) resumes at event 4.
    seen = decode_position(hub.items[1].position)
    assert seen == {0: 2, 1: 2} and hub.start_index(seen) == 4
    assert hub.start_index({0: 0, 1: 0}) is None  # it missed events 0 and 1, which are gone
    assert hub.start_index(hub.position()) == 6  # up to date: waits for the next one
