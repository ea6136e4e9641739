"""The broadcast delay on every public read, and an arbiter's token that sees live (issue 38, item 5).

The game of gamedata.write_game: GameStarted at t0 (entry 1), move i at t0 + 10 s * i (entries 3i-1..3i+1: the
BoardStable with its frame, the MoveMade, the ClockPressed), a Ruling at t0 + 60 s (entry 14). With a 900 s delay
and the clock at t0 + 915 s, the public sees entries 1..4: the game with its first move only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.venue.gamedata import MOVES
from xqarb.referee.public_reads import public_prefix

DELAY_S = 900.0


def test_public_prefix_stops_at_the_first_entry_not_yet_public() -> None:
    assert public_prefix([1, 2, 3], 2) == 2
    assert public_prefix([1, 5, 2], 2) == 1  # a prefix: entry 3 waits for entry 2
    assert public_prefix([], 9) == 0
    assert public_prefix([1, 2], 9) == 2


@pytest.fixture
def delayed(api_setup: dict[str, Any], venue: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    """The API of api_setup with board 7 under a 900 s broadcast delay and a clock the test sets."""
    from xqarb.referee.api import RefereeApi, StreamHub, create_app, frame_loader

    ledger, game, board = api_setup["ledger"], api_setup["game"], api_setup["board"]
    t0 = ledger.entries(game, 0, 1)[0].event.received_at
    now = [t0 / 1e6 + DELAY_S + 15]
    old = api_setup["app"].extensions["xq_api"]
    api = RefereeApi(
        ledger=ledger, hub=StreamHub(), board_ids=venue["config"].boards,
        load_frame=frame_loader([tmp_path / "frames"]), ingest=old.ingest,
        delay_for_board=lambda b: DELAY_S if b == board else 0.0,
    )
    api.public.clock = lambda: now[0]
    for i, entry in enumerate(e for e in ledger.entries(game) if e.kind == "output"):
        api.hub.add(0, i, entry.event)
    app = create_app(api)
    return {"client": app.test_client(), "app": app, "now": now, "t0": t0, "game": game, "board": board,
            "shas": api_setup["shas"], "chief": {"Authorization": f"Bearer tok-chief-{venue['tag']}"},
            "floor": {"Authorization": f"Bearer tok-floor-{venue['tag']}"}}


def test_events_state_and_game_show_the_public_prefix_and_the_arbiter_all(delayed: dict[str, Any]) -> None:
    c, g = delayed["client"], delayed["game"]
    public = c.get(f"/api/games/{g}/events").get_json()
    assert public["head_seq"] == 4 and [e["seq"] for e in public["entries"]] == [1, 2, 3, 4]
    assert c.get(f"/api/games/{g}/events?after=4").get_json()["entries"] == []
    live = c.get(f"/api/games/{g}/events", headers=delayed["chief"]).get_json()
    assert live["head_seq"] == 14 and len(live["entries"]) == 14
    # An arbiter of other boards sees this one as the public does.
    assert c.get(f"/api/games/{g}/events", headers=delayed["floor"]).get_json()["head_seq"] == 4

    assert c.get(f"/api/games/{g}").get_json()["seq"] == 4
    assert c.get(f"/api/games/{g}", headers=delayed["chief"]).get_json()["seq"] == 14
    assert c.get(f"/api/games/{g}/state").get_json()["seq"] == 4
    r = c.get(f"/api/games/{g}/state?seq=7")
    assert r.status_code == 404 and r.get_json()["error"] == "unknown_entry"
    assert c.get(f"/api/games/{g}/state?seq=7", headers=delayed["chief"]).status_code == 200

    # Once the delay passed for the whole game, the public sees all of it.
    delayed["now"][0] = delayed["t0"] / 1e6 + DELAY_S + 61
    assert c.get(f"/api/games/{g}/events").get_json()["head_seq"] == 14


def test_a_game_with_nothing_public_yet_is_unknown_to_the_public(delayed: dict[str, Any]) -> None:
    c, g = delayed["client"], delayed["game"]
    delayed["now"][0] = delayed["t0"] / 1e6 + DELAY_S - 1
    for path in ("", "/events", "/state", "/pgn"):
        r = c.get(f"/api/games/{g}{path}")
        assert r.status_code == 404 and "broadcast delay" in r.get_json()["detail"], path
        assert c.get(f"/api/games/{g}{path}", headers=delayed["chief"]).status_code == 200, path


def test_pgn_has_only_public_moves(delayed: dict[str, Any]) -> None:
    c, g = delayed["client"], delayed["game"]
    public = c.get(f"/api/games/{g}/pgn").get_data(as_text=True)
    assert MOVES[0][2] in public and MOVES[1][2] not in public
    live = c.get(f"/api/games/{g}/pgn", headers=delayed["chief"]).get_data(as_text=True)
    assert all(chinese in live for _, _, chinese in MOVES)


def test_evidence_frames_wait_for_the_entry_naming_them(delayed: dict[str, Any]) -> None:
    c, g, shas = delayed["client"], delayed["game"], delayed["shas"]
    assert c.get(f"/api/games/{g}/frames/{shas[0]}").status_code == 200
    r = c.get(f"/api/games/{g}/frames/{shas[1]}")
    assert r.status_code == 404 and r.get_json()["error"] == "unknown_frame"
    assert c.get(f"/api/games/{g}/frames/{shas[1]}", headers=delayed["chief"]).status_code == 200
    delayed["now"][0] = delayed["t0"] / 1e6 + DELAY_S + 25
    assert c.get(f"/api/games/{g}/frames/{shas[1]}").status_code == 200


def test_boards_are_delayed_for_the_public_and_live_for_the_arbiter(delayed: dict[str, Any]) -> None:
    c, board = delayed["client"], delayed["board"]

    def b7(headers: dict[str, str] | None = None) -> dict[str, Any]:
        boards = c.get("/api/boards", headers=headers or {}).get_json()["boards"]
        return next(b for b in boards if b["board_id"] == board)

    assert b7()["ply"] == 1 and b7()["last_iccs"] == MOVES[0][0]
    assert b7(delayed["chief"])["ply"] == 4 and b7(delayed["chief"])["last_iccs"] == MOVES[-1][0]
    assert b7(delayed["floor"])["ply"] == 1
    delayed["now"][0] = delayed["t0"] / 1e6 + DELAY_S + 35
    assert b7()["ply"] == 3


def test_an_unknown_token_is_refused_not_served_the_delayed_view(delayed: dict[str, Any]) -> None:
    c, g = delayed["client"], delayed["game"]
    bad = {"Authorization": "Bearer not-a-token-of-this-venue"}
    for path in ("/api/boards", f"/api/games/{g}/events", f"/api/games/{g}/state"):
        r = c.get(path, headers=bad)
        assert r.status_code == 401 and r.get_json()["error"] == "unauthorized", path


def test_the_scoresheet_shows_the_public_moves_only(delayed: dict[str, Any]) -> None:
    c, g = delayed["client"], delayed["game"]
    public = c.get(f"/api/games/{g}/scoresheet").get_json()
    assert public["rounds"] == [[1, MOVES[0][2], ""]]  # Red's first move; Black's not public yet
    live = c.get(f"/api/games/{g}/scoresheet", headers=delayed["chief"]).get_json()
    assert len(live["rounds"]) == 2  # four moves: two rounds


def test_the_games_list_shows_public_heads_and_hides_games_not_yet_public(delayed: dict[str, Any]) -> None:
    c, g = delayed["client"], delayed["game"]

    def listed(headers: dict[str, str] | None = None) -> dict[str, Any] | None:
        games = c.get("/api/games", headers=headers or {}).get_json()["games"]
        return next((x for x in games if x["game_id"] == g), None)

    public, live = listed(), listed(delayed["chief"])
    assert public is not None and live is not None
    assert (public["entries"], live["entries"]) == (4, 14)
    assert public["head_hash"] == c.get(f"/api/games/{g}/events").get_json()["entries"][-1]["hash"]
    delayed["now"][0] = delayed["t0"] / 1e6 + DELAY_S - 1
    assert listed() is None and listed(delayed["chief"]) == live


def test_review_page_is_delayed_without_the_token_and_live_with_it(delayed: dict[str, Any], tmp_path: Path) -> None:
    """In headless Chromium: the review page without a token shows the public prefix; with the arbiter's token
    (kept by the page) every entry, and the evidence frames inside the delay load too (fetched with the token)."""
    from tests.venue.test_pages import CHROMIUM

    if CHROMIUM is None:
        pytest.skip("Chromium is not installed")
    from tests.venue.cdp import Browser
    from xqarb.ingest.server import ServerThread

    server = ServerThread(delayed["app"], port=0).start()
    browser = Browser(tmp_path / "profile")
    rows = "document.querySelectorAll('#timeline tr').length"
    frames_loaded = ("[...document.querySelectorAll('#frames img')].length > 0 && "
                     "[...document.querySelectorAll('#frames img')].every(i => i.complete && i.naturalWidth > 0)")
    try:
        browser.open(f"{server.url}/review.html?game={delayed['game']}")
        browser.wait_for("document.body.dataset.ready === '1'")
        assert browser.evaluate(rows) == 4
        browser.wait_for(frames_loaded)
        token = delayed["chief"]["Authorization"].split()[1]
        browser.evaluate(f"sessionStorage.setItem('xq-arbiter-token', '{token}'); location.reload()")
        browser.wait_for(f"document.body.dataset.ready === '1' && {rows} === 14")
        browser.wait_for(frames_loaded)
        srcs = browser.evaluate("[...document.querySelectorAll('#frames img')].map(i => i.dataset.src).join(' ')")
        assert delayed["shas"][-1] in srcs  # the last move's frame, not public yet, shown to the arbiter
    finally:
        browser.close()
        server.stop()


def test_a_rounds_pgn_keeps_each_boards_delay(tmp_path: Path) -> None:
    import json

    from flask import Flask

    from tests.venue.test_tournament_api import DEFINITION, T0, record
    from xqarb.referee.ledger import SqliteLedger
    from xqarb.referee.tournament_api import tournament_blueprint

    ledger = SqliteLedger(tmp_path / "ledger.sqlite")
    path = tmp_path / "tournament.json"
    path.write_text(json.dumps(DEFINITION, ensure_ascii=False), encoding="utf-8")
    record(ledger, "r1b1", "1", 1, 1, "甲", "丁", T0, "1-0")  # GameEnded received at T0 + 50 µs
    record(ledger, "r1b2", "2", 1, 2, "丙", "乙", T0, "1/2-1/2")
    now = [(T0 + 50) / 1e6 + 30]
    app = Flask("test")
    app.register_blueprint(tournament_blueprint(ledger, lambda: path, lambda b: 60.0 if b == "1" else 0.0,
                                                clock=lambda: now[0]))
    pgn = app.test_client().get("/api/tournament/rounds/1/pgn").get_data(as_text=True)
    assert '[Red "甲"]' in pgn and '[Result "*"]' in pgn and '[Result "1/2-1/2"]' in pgn and "1-0" not in pgn
    now[0] += 31
    pgn = app.test_client().get("/api/tournament/rounds/1/pgn").get_data(as_text=True)
    assert '[Result "1-0"]' in pgn
    ledger.close()
