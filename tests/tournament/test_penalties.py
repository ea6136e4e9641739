"""Article 18.5: among the equal on points, players (teams) penalised under 18.1 (warning) and 18.2
(disqualification from the game) are placed last, the heavier penalty and then more of them further down; worked
by hand."""

from __future__ import annotations

import pytest

from xqarb.tournament.facts import GameFacts, build_event, definition_from_json, definition_to_json
from xqarb.tournament.model import DRAW, Event, Game, Penalty, Player, TournamentError
from xqarb.tournament.standings import standings
from xqarb.tournament.teams import team_standings

FOUR = tuple(Player(i, f"P{i}") for i in range(1, 5))
# 1-2 and 3-4 drawn (2/1/0, one-game Swiss, 14.3.1): all on 1 point, 对手分 1, no wins, no fouls; 2 and 4 had
# Black (后走局数 1). Without penalties 2 and 4 share the first place, 1 and 3 the third.
DRAWS = (Game(1, 1, 1, 2, DRAW), Game(1, 2, 3, 4, DRAW))


def order(event: Event) -> list[tuple[int, int]]:
    return [(r.rank, r.player.no) for r in standings(event)]


def test_without_penalties_article_14_alone() -> None:
    event = Event("t", FOUR, DRAWS)
    assert order(event) == [(1, 2), (1, 4), (3, 1), (3, 3)]
    assert standings(event)[0].tiebreaks[0][0].article == "14.3.1"


def test_a_warned_player_goes_below_the_others_on_equal_points() -> None:
    # 2 warned (18.1): 1, 3 and 4 before 2; among them 4 first by 后走局数, 1 and 3 share.
    event = Event("t", FOUR, DRAWS, penalties=(Penalty("18.1", 2),))
    assert order(event) == [(1, 4), (2, 1), (2, 3), (4, 2)]
    values = {r.player.no: {c.key: v for c, v in r.tiebreaks} for r in standings(event)}
    assert values[2]["penalties_18_1"] == 1 and values[2]["penalties_18_2"] == 0 and values[4]["penalties_18_1"] == 0
    assert [c.key for c, _ in standings(event)[0].tiebreaks][:3] == ["penalties_18_2", "penalties_18_1", "duishoufen"]


def test_the_heavier_penalty_then_the_number_of_them() -> None:
    # 1 disqualified from a game once (18.2); 3 warned twice; 2 warned once; 4 never. Heavier first: 1 last
    # although 3 has more penalties; then more warnings further down: 3 below 2.
    pens = (Penalty("18.2", 1), Penalty("18.1", 3), Penalty("18.1", 3), Penalty("18.1", 2))
    assert order(Event("t", FOUR, DRAWS, penalties=pens)) == [(1, 4), (2, 2), (3, 3), (4, 1)]


def test_penalties_do_not_cross_points() -> None:
    # 1 beats 2 and is warned; 3-4 drawn. 1 (2 points) stays first; 2 (0) stays last.
    games = (Game(1, 1, 1, 2, "1-0"), Game(1, 2, 3, 4, DRAW))
    event = Event("t", FOUR, games, penalties=(Penalty("18.1", 1), Penalty("18.1", 3)))
    # 3 and 4 on 1 point: 3 warned goes below 4.
    assert order(event) == [(1, 1), (2, 4), (3, 3), (4, 2)]


def test_a_penalty_must_be_of_18_1_or_18_2_and_name_someone_known() -> None:
    with pytest.raises(TournamentError, match=r"18\.5 ranks only"):
        Event("t", FOUR, DRAWS, penalties=(Penalty("18.3", 1),))
    with pytest.raises(TournamentError, match="no player with start number 9"):
        Event("t", FOUR, DRAWS, penalties=(Penalty("18.1", 9),))
    with pytest.raises(TournamentError, match="either a player or a team"):
        Event("t", FOUR, DRAWS, penalties=(Penalty("18.1"),))


TEAMS = tuple(Player(i, f"P{i}", team=t) for i, t in [(1, "A"), (2, "A"), (3, "B"), (4, "B"), (5, "C"), (6, "C")])
# Three teams, every match tied (as tests/tournament/test_teams.py): 场分 2 each; 14.5 ranks B, A, C (B more games
# won; A before C by fouls).
TIED = (
    Game(1, 1, 1, 3, "1-0"), Game(1, 2, 4, 2, "1-0"),
    Game(2, 1, 1, 5, DRAW), Game(2, 2, 6, 2, DRAW),
    Game(3, 1, 3, 5, "1-0", black_fouls=1), Game(3, 2, 6, 4, "1-0"),
)  # fmt: skip


def test_18_5_for_teams_a_players_penalty_is_the_teams() -> None:
    def teams(*pens: Penalty) -> list[str]:
        return [r.team for r in team_standings(Event("t", TEAMS, TIED, system="round_robin", penalties=pens))]

    assert teams() == ["B", "A", "C"]
    assert teams(Penalty("18.1", 3)) == ["A", "C", "B"]  # B's player 3 warned: B last
    # C warned as a team, A's player 2 disqualified from a game: the heavier penalty last.
    assert teams(Penalty("18.1", team="C"), Penalty("18.2", 2)) == ["B", "C", "A"]


def test_penalties_come_from_the_games_ledger_facts_and_the_definition() -> None:
    definition = definition_from_json({
        "name": "E", "players": [{"no": i, "name": f"P{i}"} for i in range(1, 5)],
        "penalties": [{"article": "18.1", "player": 4, "round": 1, "note": "phone rang"}],
    })  # fmt: skip
    facts = [
        GameFacts("g1", "E", 1, 1, "P1", "P2", 10, DRAW, penalties=(("black", "18.2", "left the hall"),)),
        GameFacts("g2", "E", 1, 2, "P3", "P4", 10, DRAW),
    ]
    event = build_event(definition, facts)
    assert sorted((p.article, p.player, p.game_id) for p in event.penalties) == [("18.1", 4, ""), ("18.2", 2, "g1")]
    # 1 and 3 unpenalised first (sharing: neither played Black), 4 warned, 2 disqualified from a game last.
    assert order(event) == [(1, 1), (1, 3), (3, 4), (4, 2)]
    again = definition_from_json(definition_to_json(definition))
    assert again == definition
    with pytest.raises(TournamentError, match=r"18\.1 or 18\.2"):
        definition_from_json({"name": "E", "penalties": [{"article": "18.4", "player": 1}]})
