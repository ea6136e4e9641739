"""The event derived from the organiser's definition and the games' recorded facts."""

from __future__ import annotations

import pytest

from xqarb.tournament.facts import GameFacts, build_event, definition_from_json, event_names
from xqarb.tournament.model import DRAW, Game, TournamentError
from xqarb.tournament.standings import standings

DEFINITION = {
    "name": "Demo Open", "system": "swiss", "rounds": 2,
    "players": [{"no": 1, "name": "甲", "rating": 2100}, {"no": 2, "name": "乙"}, {"no": 3, "name": "丙"}],
    "pairings": [{"round": 1, "board": 1, "red": 1, "black": 2}, {"round": 1, "board": 2, "red": 3, "black": None}],
}  # fmt: skip


def facts(game_id: str, rnd: int, board: int | None, red: str, black: str, result: str | None, at: int,
          event: str = "Demo Open", **kw: int) -> GameFacts:  # fmt: skip
    return GameFacts(game_id, event, rnd, board, red, black, at, result, **kw)


def test_pairings_filled_in_from_the_games_that_were_played() -> None:
    d = definition_from_json(DEFINITION)
    ev = build_event(d, [facts("g1", 1, 1, "甲", "乙", "0-1", 10, black_fouls=1), facts("x", 1, 1, "A", "B", None, 5,
                                                                                   event="other")])
    assert ev.games == (Game(1, 1, 1, 2, "0-1", "g1", 0, 1), Game(1, 2, 3, None))
    # 乙 beat 甲 (2), 丙 had the bye (2 by 14.4), 甲 0.
    assert [(r.player.name, r.points) for r in standings(ev)] == [("丙", 2), ("乙", 2), ("甲", 0)]


def test_games_outside_the_definition_add_players_and_a_replayed_pairing_keeps_the_later_game() -> None:
    ev = build_event(None, [
        facts("g1", 1, None, "A", "B", "1-0", 10), facts("g2", 1, None, "C", "D", None, 11),
        facts("g3", 1, None, "D", "C", DRAW, 20),  # C-D started again with colours the other way
    ], name="Demo Open")  # fmt: skip
    assert [p.name for p in ev.players] == ["A", "B", "C", "D"]
    assert ev.games == (Game(1, 1, 1, 2, "1-0", "g1"), Game(1, 2, 4, 3, DRAW, "g3"))


def test_event_names_latest_first() -> None:
    assert event_names([facts("a", 1, 1, "A", "B", None, 5, event="x"), facts("b", 1, 1, "A", "B", None, 9)]) == [
        "Demo Open", "x"
    ]


@pytest.mark.parametrize(
    "change, message",
    [
        ({"name": ""}, "'name' is required"),
        ({"rounds": "three"}, "'rounds' must be a int"),
        ({"scheme": "5-0"}, "unknown point scheme"),
        ({"system": "knockout"}, "unknown system"),
        ({"players": [{"rating": 3}]}, "player 1 has no name"),
        ({"pairings": [{"round": 1}]}, "needs round, board, red, black"),
        ({"pairings": [{"round": 1, "board": 1, "red": 1, "black": 7}]}, "no player with start number 7"),
    ],
)
def test_bad_definitions_are_refused(change: dict[str, object], message: str) -> None:
    with pytest.raises(TournamentError, match=message):
        definition_from_json({**DEFINITION, **change})


def test_a_game_placed_in_no_round_is_left_out() -> None:
    ev = build_event(None, [facts("g1", 0, 1, "A", "B", "1-0", 1), facts("g2", 1, 0, "C", "D", None, 2),
                            facts("g3", 1, None, "E", "F", DRAW, 3)], name="Demo Open")  # fmt: skip
    assert [g.game_id for g in ev.games] == ["g3"]
