"""`POST /api/tournament/rounds/<n>/start` over real HTTP and a real broker: every pairing of the round started
on its board (GameStarted on xq.arbiter with the event, round, board number, players and time control), refused
while the previous round is unfinished, once the round is started, for an unknown round and without an arbiter's
token for every board."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.venue.conftest import read_topic
from tests.venue.test_tournament_api import record
from xqarb.ingest.server import ServerThread

TC = {"scheme": "increment", "base_ms": 900_000, "increment_ms": 10_000}


def definition(venue: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {
        "name": f"Round Start Open {venue['tag']}", "system": "swiss", "rounds": 2, "time_control": TC,
        "boards": [venue["b7"], venue["b8"]],
        "players": [{"no": 1, "name": "甲", "rating": 2300}, {"no": 2, "name": "乙", "rating": 2200},
                    {"no": 3, "name": "丙", "rating": 2100}, {"no": 4, "name": "丁", "rating": 2000}],
        **more,
    }  # fmt: skip


@pytest.fixture
def served(tmp_path: Path, venue: dict[str, Any], topics: str, monkeypatch: Any) -> Iterator[dict[str, Any]]:
    """The whole API app (with ingest on the session broker) served on a free port."""
    from xqarb.ingest.app import Ingest
    from xqarb.ingest.publish import BusPublisher
    from xqarb.referee.api import RefereeApi, StreamHub, create_app, frame_loader
    from xqarb.referee.ledger import SqliteLedger

    config = venue["config"]
    publisher = BusPublisher.connect(topics, ack_timeout_s=config.limits.ack_timeout_s)
    ledger = SqliteLedger(tmp_path / "ledger.sqlite")
    path = tmp_path / "tournament.json"
    path.write_text(json.dumps(definition(venue), ensure_ascii=False), encoding="utf-8")
    api = RefereeApi(ledger=ledger, hub=StreamHub(), board_ids=list(config.boards),
                     load_frame=frame_loader([tmp_path]), ingest=Ingest(config, publisher))  # fmt: skip
    monkeypatch.setenv("XQARB_TOURNAMENT", str(path))  # where the app's tournament routes find the definition
    server = ServerThread(create_app(api), port=0).start()
    try:
        yield {"url": server.url, "ledger": ledger, "path": path, "topics": topics, **venue}
    finally:
        server.stop()
        publisher.close()
        ledger.close()


def start(s: dict[str, Any], round_no: str, token: str | None, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    data = json.dumps(body).encode() if body is not None else b""
    req = urllib.request.Request(f"{s['url']}/api/tournament/rounds/{round_no}/start", data=data, headers=headers,
                                 method="POST")  # fmt: skip
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_a_round_starts_on_all_its_boards_in_order_and_once(served: dict[str, Any]) -> None:
    s, chief, floor = served, f"tok-chief-{served['tag']}", f"tok-floor-{served['tag']}"
    assert start(s, "1", None)[0] == 401
    # Nothing about the round is said without an arbiter's token (live results are behind the broadcast delay).
    assert [start(s, "2", tok)[1]["error"] for tok in (None, "nope", f"tok-cam-{s['b7']}")] == [
        "unauthorized", "unauthorized", "arbiter_only"]
    status, answer = start(s, "1", floor)  # the floor arbiter may act on the second board only
    assert status == 403 and answer["error"] == "wrong_board"
    status, answer = start(s, "2", chief)
    assert (status, answer["error"]) == (409, "previous_round_unfinished") and "round 1" in answer["detail"]

    status, first = start(s, "1", chief)
    assert status == 202, first
    # Swiss round 1 (appendix 3): the top half by rating meets the bottom half, 甲-丙 and 乙-丁, colours alternating.
    started = [(g["board"], g["board_id"], g["red"], g["black"]) for g in first["started"]]
    assert started == [(1, s["b7"], "甲", "丙"), (2, s["b8"], "丁", "乙")]
    ids = {g["game_id"] for g in first["started"]}
    events = read_topic(s["topics"], "xq.arbiter", lambda item: item[1].data.get("game_id") in ids, count=2)
    published = sorted((e.board_id, e.data["event"], e.data["round"], e.data["board_no"], e.data["red_player"],
                        e.data["black_player"], dict(e.data["time_control"]))
                       for _, e in events)  # fmt: skip
    name = f"Round Start Open {s['tag']}"
    assert published == sorted([(s["b7"], name, 1, 1, "甲", "丙", TC), (s["b8"], name, 1, 2, "丁", "乙", TC)])
    assert all(e.type == "GameStarted" and e.source == "arbiter:chief" for _, e in events)

    # Before the referee wrote the games to the ledger, and after: started once.
    status, answer = start(s, "1", chief)
    assert (status, answer["error"]) == (409, "round_already_started")
    now = time.time_ns() // 1000
    games = {g["board"]: g["game_id"] for g in first["started"]}
    record(s["ledger"], games[1], s["b7"], 1, 1, "甲", "丙", now, "1-0", event=name)
    record(s["ledger"], games[2], s["b8"], 1, 2, "丁", "乙", now, event=name)  # board 2 still playing
    assert start(s, "1", chief)[1]["error"] == "round_already_started"
    status, answer = start(s, "2", chief)
    assert (status, answer["error"]) == (409, "previous_round_unfinished") and "board(s) 2" in answer["detail"]

    record(s["ledger"], games[2] + "-end", s["b8"], 1, 2, "丁", "乙", now + 1, "0-1", event=name)  # replayed, ended
    status, answer = start(s, "2", chief)
    assert status == 202, answer
    # After round 1 甲 and 乙 have 2 points, 丙 and 丁 none: 甲-乙 and 丙-丁, no rematch.
    assert {frozenset((g["red"], g["black"])) for g in answer["started"]} == {frozenset("甲乙"), frozenset("丙丁")}

    for bad in ("3", "0", "x", "%D9%A1"):  # past the 2 rounds planned; not a round; an Arabic-Indic one
        status, answer = start(s, bad, chief)
        assert (status, answer["error"]) == (404, "unknown_round"), (bad, answer)


def test_a_round_needs_a_time_control_and_a_board_for_every_pairing(served: dict[str, Any]) -> None:
    s, chief = served, f"tok-chief-{served['tag']}"
    s["path"].write_text(json.dumps({**definition(s), "time_control": None}), encoding="utf-8")
    status, answer = start(s, "1", chief)
    assert (status, answer["error"]) == (422, "no_time_control")
    s["path"].write_text(json.dumps({**definition(s), "time_control": None, "boards": [s["b7"]]}), encoding="utf-8")
    status, answer = start(s, "1", chief, {"time_control": TC})
    assert (status, answer["error"]) == (409, "no_such_board") and "board(s) 2" in answer["detail"]
    s["path"].write_text(json.dumps({**definition(s), "time_control": None}), encoding="utf-8")
    status, answer = start(s, "1", chief, {"time_control": {"scheme": "sudden_death"}})
    assert status == 400 and "time_control" in answer["detail"], answer  # ingest's own check of the time control
    status, answer = start(s, "1", chief, {"time_control": TC, "rapid": True})
    assert status == 202 and len(answer["started"]) == 2
