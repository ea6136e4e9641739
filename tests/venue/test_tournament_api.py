"""`/api/tournament`, `/api/tournament/standings`, a round's PGN and the standings page, derived from a real
ledger and the organiser's definition file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from xqarb.events import make_event
from xqarb.referee.ledger import Pending, SqliteLedger
from xqarb.referee.tournament_api import TournamentSource, tournament_blueprint

T0 = 1_760_000_000_000_000
DEFINITION = {
    "name": "Demo Open", "system": "swiss", "rounds": 2,
    "players": [
        {"no": 1, "name": "甲", "rating": 2300, "club": "北京"}, {"no": 2, "name": "乙", "rating": 2200},
        {"no": 3, "name": "丙", "rating": 2100}, {"no": 4, "name": "丁", "rating": 2000},
    ],
}  # fmt: skip


def record(ledger: SqliteLedger, game: str, board: str, rnd: int, board_no: int, red: str, black: str, at: int,
           result: str | None = None, black_fouls: int = 0, event: str | None = "Demo Open") -> None:  # fmt: skip
    def ev(type_: str, seq: int, **fields: Any) -> Any:
        return make_event(type_, board, source="test", source_seq=seq, occurred_at=at + seq, received_at=at + seq,
                          game_id=game, **fields)  # fmt: skip

    tournament = {"event": event, "round": rnd, "board_no": board_no} if event else {}
    entries = [Pending("input", ev(
        "GameStarted", 1, red_player=red, black_player=black, **tournament,
        time_control={"scheme": "increment", "base_ms": 900_000, "increment_ms": 10_000},
    ))]  # fmt: skip
    for i in range(black_fouls):
        entries.append(Pending("output", ev("Ruling", 10 + i, kind="foul", side="black", article="8.1.7",
                                            message="clock pressed without a move")))  # fmt: skip
    if result:
        entries.append(Pending("output", ev("GameEnded", 50, result=result, article="4.1.12", reason="resigned")))
    ledger.append(game, board, entries)


@pytest.fixture
def tournament_app(tmp_path: Path) -> Any:
    """A Flask app with only the tournament blueprint, over a ledger with two rounds of a four-player Swiss."""
    from flask import Flask

    ledger = SqliteLedger(tmp_path / "ledger.sqlite")
    path = tmp_path / "tournament.json"
    path.write_text(json.dumps(DEFINITION, ensure_ascii=False), encoding="utf-8")
    # Round 1: 甲-丁 1-0 (丁 one foul), 丙-乙 drawn; round 2: 甲-乙 under way.
    record(ledger, "r1b1", "1", 1, 1, "甲", "丁", T0, "1-0", black_fouls=1)
    record(ledger, "r1b2", "2", 1, 2, "丙", "乙", T0, "1/2-1/2")
    record(ledger, "r2b1", "1", 2, 1, "乙", "甲", T0 + 10**9)
    record(ledger, "other", "3", 1, 1, "X", "Y", T0, "0-1", event="Another Cup")
    record(ledger, "plain", "4", 1, 1, "P", "Q", T0, event=None)  # a game with no event is in no tournament
    app = Flask("test")
    app.register_blueprint(tournament_blueprint(ledger, lambda: path))
    app.config["definition_path"] = path
    app.config["ledger"] = ledger
    yield app
    ledger.close()


@pytest.fixture
def client(tournament_app: Any) -> Any:
    c = tournament_app.test_client()
    c.definition_path = tournament_app.config["definition_path"]
    return c


def test_tournament_gives_event_rounds_and_pairings(client: Any) -> None:
    data = client.get("/api/tournament").get_json()
    assert data["event"]["name"] == "Demo Open" and data["event"]["rounds"] == 2
    assert data["event"]["scheme"] == {"win": 2, "loss": 0, "draw_red": 1, "draw_black": 1}
    ranking = [r["name"] for r in data["event"]["ranking"]]
    assert ranking == ["积分", "对手分", "胜局", "犯规", "后走局数", "第1轮后积分"]
    assert [p["name"] for p in data["players"]] == ["甲", "乙", "丙", "丁"] and data["players"][0]["club"] == "北京"
    r1, r2 = data["rounds"]
    assert [(p["board"], p["red"]["name"], p["black"]["name"], p["result"], p["game_id"]) for p in r1["pairings"]] == [
        (1, "甲", "丁", "1-0", "r1b1"), (2, "丙", "乙", "1/2-1/2", "r1b2")
    ]  # fmt: skip
    assert [(p["red"]["no"], p["black"]["no"], p["result"]) for p in r2["pairings"]] == [(2, 1, None)]


def test_standings_in_order_with_tiebreaks(client: Any) -> None:
    data = client.get("/api/tournament/standings").get_json()
    # After round 1 (2-1-0): 甲 2; 乙 and 丙 1 each, 对手分 1 each (each other), no wins, no fouls; 乙 played
    # Black, 丙 did not: 乙 first (后走局数). 丁 0, with one foul.
    assert data["after_round"] == 1
    assert [(r["rank"], r["name"], r["points"]) for r in data["standings"]] == [
        (1, "甲", 2), (2, "乙", 1), (3, "丙", 1), (4, "丁", 0)
    ]  # fmt: skip
    values = {r["name"]: {t["key"]: t["value"] for t in r["tiebreaks"]} for r in data["standings"]}
    assert values["乙"] == {"duishoufen": 1, "wins": 0, "fouls": 0, "black_games": 1, "points_after_round_1": 1}
    assert values["丁"]["fouls"] == 1 and values["甲"]["duishoufen"] == 0
    assert [t["name"] for t in data["tiebreaks"]] == ["对手分", "胜局", "犯规", "后走局数", "第1轮后积分"]
    assert "teams" not in data  # no player has a team


def test_team_standings_where_players_have_teams(client: Any) -> None:
    teams = {"甲": "北京队", "乙": "上海队", "丙": "北京队", "丁": "上海队"}
    definition = {**DEFINITION, "players": [{**p, "team": teams[p["name"]]} for p in DEFINITION["players"]]}
    client.definition_path.write_text(json.dumps(definition, ensure_ascii=False), encoding="utf-8")
    data = client.get("/api/tournament/standings").get_json()
    # Round 1 is one match, 北京 (甲, 丙) against 上海 (丁, 乙): 局分 北京 2 + 1 = 3, 上海 0 + 1 = 1: 场分 2 : 0.
    assert [(t["rank"], t["team"], t["points"]) for t in data["teams"]] == [(1, "北京队", 2), (2, "上海队", 0)]


def test_another_event_by_name_and_unknown_ones(client: Any) -> None:
    other = client.get("/api/tournament/standings?event=Another Cup").get_json()
    assert [(r["name"], r["points"]) for r in other["standings"]] == [("Y", 2), ("X", 0)]
    r = client.get("/api/tournament?event=Nope")
    assert r.status_code == 404 and r.get_json()["error"] == "unknown_event"
    assert client.get("/api/tournament?event=").status_code == 400


def test_without_definition_the_latest_event_is_served(client: Any) -> None:
    client.definition_path.unlink()
    data = client.get("/api/tournament").get_json()
    assert data["event"]["name"] == "Demo Open"  # its round-2 game started last
    assert [p["name"] for p in data["players"]] == ["甲", "丁", "丙", "乙"]  # in the order the games name them


def test_a_broken_definition_is_a_clear_error(client: Any) -> None:
    client.definition_path.write_text('{"name": "x", "scheme": "5-0"}')
    r = client.get("/api/tournament")
    assert r.status_code == 503 and "unknown point scheme" in r.get_json()["detail"]


def test_round_pgn_has_every_game_with_event_and_round(client: Any) -> None:
    r = client.get("/api/tournament/rounds/1/pgn")
    assert r.status_code == 200 and r.mimetype == "application/x-chess-pgn"
    text = r.get_data(as_text=True)
    assert text.count('[Event "Demo Open"]') == 2 and text.count('[Round "1"]') == 2
    assert '[Red "甲"]' in text and '[Black "乙"]' in text and '[Result "1/2-1/2"]' in text
    assert client.get("/api/tournament/rounds/3/pgn").status_code == 404


def test_standings_page(client: Any) -> None:
    r = client.get("/tournament.html")
    page = r.get_data(as_text=True)
    assert r.status_code == 200 and "<h1>Demo Open</h1>" in page
    assert page.index("甲") < page.index("乙") < page.index("丙") < page.index("丁")
    assert "<th title='14.3.1'>对手分</th>" in page


def test_no_tournament_at_all(tmp_path: Path) -> None:
    from flask import Flask

    app = Flask("empty")
    with SqliteLedger(tmp_path / "l.sqlite") as ledger:
        app.register_blueprint(tournament_blueprint(ledger, lambda: tmp_path / "none.json"))
        r = app.test_client().get("/api/tournament/standings")
    assert r.status_code == 404 and r.get_json()["error"] == "no_tournament"


def test_definition_imports_players_and_pairings_from_csv(client: Any) -> None:
    folder = client.definition_path.parent
    players = "序号,姓名,等级分,单位\n1,甲,2300,北京\n2,乙,2200,上海\n3,丙,2100,\n4,丁,2000,\n"
    (folder / "players.csv").write_text(players, encoding="utf-8")
    # Round 1 as the organiser's program exported it, with a result entered by hand for board 2 (no camera);
    # the ledger's own games of round 1 still decide board 1 and fill board 2's game in.
    (folder / "pairings.csv").write_text("round,board,red,black,result\n1,1,甲,丁,\n1,2,丙,乙,1-0\n",
                                         encoding="utf-8")  # fmt: skip
    client.definition_path.write_text(json.dumps({"name": "Demo Open", "rounds": 2, "players_csv": "players.csv",
                                                  "pairings_csv": "pairings.csv"}), encoding="utf-8")  # fmt: skip
    data = client.get("/api/tournament").get_json()
    assert data["players"][0] == {"no": 1, "name": "甲", "rating": 2300, "club": "北京", "team": ""}
    r1 = data["rounds"][0]["pairings"]
    # Both boards were played under the cameras: the recorded results replace the file's.
    assert [(p["board"], p["result"], p["game_id"]) for p in r1] == [(1, "1-0", "r1b1"), (2, "1/2-1/2", "r1b2")]
    (folder / "pairings.csv").write_text("round,board,red,black,result\n3,1,甲,丙,0-1\n", encoding="utf-8")
    data = client.get("/api/tournament").get_json()
    assert data["rounds"][2]["pairings"][0]["result"] == "0-1"  # a hand-entered result with no game stands
    (folder / "pairings.csv").write_text("round,board,red,black,result\n1,1,甲,戊,\n", encoding="utf-8")
    r = client.get("/api/tournament")
    assert r.status_code == 503 and "line 2: no player '戊'" in r.get_json()["detail"]


def test_results_keep_the_broadcast_delay(tournament_app: Any) -> None:
    ledger, path = tournament_app.config["ledger"], tournament_app.config["definition_path"]
    ended = (T0 + 50) / 1e6  # when the round-1 games' GameEnded were recorded
    delays = {"1": 60.0, "2": 0.0}  # board 1's tournament is broadcast 60 s late

    def results(now: float) -> list[str | None]:
        source = TournamentSource(ledger, lambda: path, lambda board: delays.get(board, 0.0), clock=lambda: now)
        return [g.result for g in source.event(None).games if g.round == 1]

    assert results(ended + 30) == [None, "1/2-1/2"]  # board 1's result is not public yet
    assert results(ended + 61) == ["1-0", "1/2-1/2"]


def test_penalties_the_arbiter_recorded_place_the_penalised_last_among_equals(client: Any,
                                                                            tournament_app: Any) -> None:  # fmt: skip
    from xqarb.referee.tournament_api import penalised_side

    ledger = tournament_app.config["ledger"]
    # 18.1: the game's arbiter warns 乙 (Black on board 2 of round 1) during the game.
    warning = make_event("ArbiterDecision", "2", source="arbiter:floor", source_seq=7, occurred_at=T0 + 40,
                         received_at=T0 + 40, game_id="r1b2", result="", article="18.1", side="black",
                         note="talked to a spectator")  # fmt: skip
    ledger.append("r1b2", "2", [Pending("input", warning)])
    data = client.get("/api/tournament/standings").get_json()
    # 乙 and 丙 on 1 point: 乙 was ahead by 后走局数; warned, 乙 now comes after 丙 (18.5).
    assert [(r["rank"], r["name"]) for r in data["standings"]] == [(1, "甲"), (2, "丙"), (3, "乙"), (4, "丁")]
    assert [t["key"] for t in data["tiebreaks"]][:3] == ["penalties_18_2", "penalties_18_1", "duishoufen"]
    values = {r["name"]: {t["key"]: t["value"] for t in r["tiebreaks"]} for r in data["standings"]}
    assert values["乙"]["penalties_18_1"] == 1 and values["丙"]["penalties_18_1"] == 0
    penalties = client.get("/api/tournament").get_json()["penalties"]
    assert penalties == [{"article": "18.1", "player": 2, "team": "", "round": 1, "game_id": "r1b2",
                          "note": "talked to a spectator"}]  # fmt: skip
    # 18.2 names the side, or else the side its result made lose; a decision naming neither penalises no one.
    assert penalised_side({"article": "18.2", "result": "1-0"}) == "black"
    assert penalised_side({"article": "18.1", "result": ""}) is None

    # 14.8 chosen by the organiser: 北京 (甲 1st, 丙 2nd) 3, 上海 (乙 3rd, 丁 4th) 7.
    teams = {"甲": "北京队", "乙": "上海队", "丙": "北京队", "丁": "上海队"}
    definition = {**DEFINITION, "team_method": "14.8",
                  "players": [{**p, "team": teams[p["name"]]} for p in DEFINITION["players"]]}  # fmt: skip
    client.definition_path.write_text(json.dumps(definition, ensure_ascii=False), encoding="utf-8")
    data = client.get("/api/tournament/standings").get_json()
    assert data["team_ranking"]["article"] == "14.8" and data["team_ranking"]["points"]["name"] == "个人名次总和"
    assert [(t["rank"], t["team"], t["points"], t["tiebreaks"][0]["value"]) for t in data["teams"]] == [
        (1, "北京队", 3, 1), (2, "上海队", 7, 3)]
