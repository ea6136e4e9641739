"""The demo tournament's organiser: its definition, the event read back from the API, a game cut short still ending
with a result, and a round that waits for every result of its own games."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from xqarb.demo import ArbiterDesk, DemoOptions
from xqarb.demo_tournament import (
    TournamentBoard,
    TournamentDemo,
    demo_definition,
    event_from_api,
    write_definition,
)
from xqarb.ingest.config import generate_config, parse_config
from xqarb.referee.tournament_api import event_json
from xqarb.tournament.facts import build_event, definition_from_json
from xqarb.tournament.model import Game, TournamentError
from xqarb.tournament.pairing import next_round


def test_definition_is_a_valid_swiss_of_distinct_seeds(tmp_path: Path) -> None:
    d = definition_from_json(json.loads(write_definition(tmp_path, 8, 3, "2026-01-01 00:00:00").read_text()))
    assert d.name.endswith("2026-01-01 00:00:00") and d.system == "swiss" and d.rounds == 3
    assert len({p.rating for p in d.players}) == 8
    with pytest.raises(TournamentError, match="1 to 3 rounds"):
        demo_definition(4, 4)


def test_event_read_back_from_the_api_pairs_the_same_next_round() -> None:
    event = build_event(definition_from_json(demo_definition(6, 3)), [])
    r1 = [Game(g.round, g.board, g.red, g.black, "1-0") for g in next_round(event)]
    played = type(event)(event.name, event.players, tuple(r1), system="swiss", rounds=3)
    again = event_from_api(json.loads(json.dumps(event_json(played))))
    assert again.games == played.games and again.players == played.players
    assert next_round(again) == next_round(played)


class Recorder:
    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, endpoint: str, token: str, obj: dict[str, Any]) -> dict[str, Any]:
        self.sent.append((endpoint, obj))
        return {}


def board(max_moves: int, record: dict[str, Any]) -> tuple[TournamentBoard, Recorder]:
    b = TournamentBoard("http://x", "1", ("cam-1", "t"), None, ArbiterDesk("a"), [record],
                        DemoOptions(max_moves=max_moves, clock_mode="strict"), threading.Event(),
                        pairing={"event": "E", "round": 2, "board": 1, "red": "甲", "black": "乙"})  # fmt: skip
    rec = Recorder()
    b._post_json = rec  # type: ignore[method-assign]
    b.game, b.moves, b.game_id = record, record["iccs"][:max_moves], "g"
    return b, rec


def test_a_game_cut_short_still_ends_with_its_result_and_names_its_pairing() -> None:
    b, rec = board(2, {"id": "x", "iccs": ["h2e2", "h9g7", "h0g2"], "result": "0-1"})
    b.start_game(1)
    b.finish_game()
    (_, started), (_, resigned) = rec.sent
    assert (started["event"], started["round"], started["board_no"]) == ("E", 2, 1)
    assert (started["red_player"], started["black_player"]) == ("甲", "乙")
    assert resigned["type"] == "Resigned" and resigned["side"] == "red"
    b, rec = board(2, {"id": "y", "iccs": ["h2e2", "h9g7", "h0g2"], "result": "1/2-1/2"})
    b.finish_game()
    assert [o["type"] for _, o in rec.sent] == ["DrawOffered", "DrawAnswered"]


def test_a_round_waits_for_the_results_of_its_own_games(tmp_path: Path) -> None:
    config = parse_config(generate_config(["1", "2"]))
    views: list[dict[str, Any]] = []
    demo = TournamentDemo("http://x", config, ["1", "2"], DemoOptions(), tmp_path / "t.json",
                          fetch=lambda path: views.pop(0) if len(views) > 1 else views[0])  # fmt: skip
    b1, _ = board(2, {"id": "a", "iccs": ["h2e2"], "result": "1-0"})
    b1.game_id = "new"

    def view(game_id: str | None, result: str | None) -> dict[str, Any]:
        pairing = {"board": 1, "red": {"no": 1}, "black": {"no": 2}, "bye": False, "result": result,
                   "game_id": game_id}  # fmt: skip
        return {"rounds": [{"round": 1, "pairings": [pairing]}] if game_id else []}

    views[:] = [view(None, None)]  # the round is not in the ledger yet: its board is missing, not done
    assert demo._missing(1, {1: b1}) == [1]
    views[:] = [view("older", "1-0")]  # an earlier game of that pairing has a result; this one has not
    assert demo._missing(1, {1: b1}) == [1]
    views[:] = [view("new", "1-0")]
    assert demo._missing(1, {1: b1}) == []


def test_the_round_with_its_bye_is_published_in_the_definition(tmp_path: Path) -> None:
    path = write_definition(tmp_path, 5, 2, "s")
    config = parse_config(generate_config(["1", "2"]))
    demo = TournamentDemo("http://x", config, ["1", "2"], DemoOptions(), path)
    event = build_event(definition_from_json(json.loads(path.read_text())), [])
    pairings = next_round(event)
    assert [g.red for g in pairings if g.is_bye] == [5]  # the lowest seed of an odd field (14.4)
    demo._publish_round(pairings)
    again = build_event(definition_from_json(json.loads(path.read_text())), [])
    assert list(again.games) == pairings and Game(1, 3, 5, None) in again.games
    # The organiser's published round is what the next pairing starts from: round 2 is paired next.
    assert again.rounds_paired() == 1


def test_only_records_with_a_result_are_tournament_games_and_a_missing_one_is_a_draw(tmp_path: Path) -> None:
    config = parse_config(generate_config(["1"]))
    demo = TournamentDemo("http://x", config, ["1"], DemoOptions(), tmp_path / "t.json")
    assert demo.games and all(g["result"] in ("1-0", "0-1", "1/2-1/2") for g in demo.games)
    b, rec = board(2, {"id": "z", "iccs": ["h2e2", "h9g7", "h0g2"], "result": "*"})
    b.finish_game()  # cut short with no result on record: an agreed draw, so the round can end
    assert [o["type"] for _, o in rec.sent] == ["DrawOffered", "DrawAnswered"]


def test_a_board_started_with_its_round_posts_no_game_start_of_its_own() -> None:
    b, rec = board(2, {"id": "x", "iccs": ["h2e2"], "result": "1-0"})
    b.pairing["game_id"] = "t123-r2-b1"
    b.start_game(1)
    assert rec.sent == []


def test_when_the_rounds_let_everyone_meet_the_demo_is_a_round_robin() -> None:
    assert demo_definition(4, 3)["system"] == "round_robin" and demo_definition(5, 5)["system"] == "round_robin"
    assert demo_definition(8, 3)["system"] == "swiss"
    event = build_event(definition_from_json(demo_definition(4, 3)), [])
    # Berger round 1 for four (12.1: the first-listed has Red): 1-4, 2-3.
    assert [(g.red, g.black) for g in next_round(event)] == [(1, 4), (2, 3)]
