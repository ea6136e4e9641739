"""Team events: matches scored by 13.2, ranked by 14.5, 14.6 and 14.7, on a three-team event worked by hand."""

from __future__ import annotations

import pytest

from xqarb.tournament.model import DRAW, Event, Game, Player, TournamentError
from xqarb.tournament.teams import team_matches, team_standings

PLAYERS = tuple(Player(i, f"P{i}", team=t) for i, t in [(1, "A"), (2, "A"), (3, "B"), (4, "B"), (5, "C"), (6, "C")])
# 12.2: the first-listed team has Red on odd boards and Black on even ones.
GAMES = (
    # R1 A-B: 1 beats 3; 4 beats 2. 局分 A 2, B 2: a tied match, 场分 1 each.
    Game(1, 1, 1, 3, "1-0"), Game(1, 2, 4, 2, "1-0"),
    # R2 A-C: both drawn. 局分 2-2, 场分 1 each.
    Game(2, 1, 1, 5, DRAW), Game(2, 2, 6, 2, DRAW),
    # R3 B-C: 3 beats 5 (5 with one foul); 6 beats 4. 局分 2-2, 场分 1 each.
    Game(3, 1, 3, 5, "1-0", black_fouls=1), Game(3, 2, 6, 4, "1-0"),
)  # fmt: skip


def table(event: Event, method: str | None = None) -> list[tuple[int, str, float, dict[str, float | None]]]:
    return [(r.rank, r.team, r.points, {c.key: v for c, v in r.tiebreaks})
            for r in team_standings(event, method)]  # type: ignore[arg-type]  # fmt: skip


def test_13_2_a_match_is_won_by_game_points() -> None:
    games = (Game(1, 1, 1, 3, "1-0"), Game(1, 2, 4, 2, DRAW))  # A 局分 2 + 1 = 3, B 0 + 1 = 1: A wins the match
    rows = table(Event("t", PLAYERS, games, system="round_robin"))
    # B and C both 场分 0; B's 全队总局分 1 (the draw) against C's 0 (no game yet) puts B second.
    assert [(rank, team, pts) for rank, team, pts, _ in rows] == [(1, "A", 2), (2, "B", 0), (3, "C", 0)]
    assert [m.teams for m in team_matches(Event("t", PLAYERS, GAMES))] == [("A", "B"), ("A", "C"), ("B", "C")]


def test_14_5_round_robin_chain() -> None:
    # 场分 2 each, 全队总局分 4 each, no match won. 全队胜局: B 2 (4 in R1, 3 in R3), A 1, C 1: B first.
    # A and C: 直胜 1 each (their match tied); 全队犯规 A 0, C 1: A second.
    rows = table(Event("t", PLAYERS, GAMES, system="round_robin"))
    assert [(rank, team, pts) for rank, team, pts, _ in rows] == [(1, "B", 2), (2, "A", 2), (3, "C", 2)]
    assert [tb["team_game_points"] for *_, tb in rows] == [4, 4, 4]
    assert [tb["matches_won"] for *_, tb in rows] == [0, 0, 0]
    assert [tb["team_wins"] for *_, tb in rows] == [2, 1, 1]
    assert [tb["direct"] for *_, tb in rows] == [None, 1, 1]
    assert [tb["team_fouls"] for *_, tb in rows] == [0, 0, 1]


def test_14_6_swiss_chain_and_14_7_game_points_only() -> None:
    ev = Event("t", PLAYERS, GAMES, system="swiss")
    # 团体对手分: every team met two teams of 2 场分 each: 4. Then as above: B by games won, A before C by fouls.
    rows = table(ev)
    assert [(rank, team) for rank, team, _, _ in rows] == [(1, "B"), (2, "A"), (3, "C")]
    assert [tb["team_opponents"] for *_, tb in rows] == [4, 4, 4]
    # 14.7: 全队总局分 alone, 4 each: one shared first place.
    assert [(rank, team, pts) for rank, team, pts, _ in table(ev, "14.7")] == [(1, "A", 4), (1, "B", 4), (1, "C", 4)]


def test_an_unfinished_match_does_not_count_yet() -> None:
    games = (Game(1, 1, 1, 3, "1-0"), Game(1, 2, 4, 2, None))
    rows = table(Event("t", PLAYERS, games, system="round_robin"))
    assert all(pts == 0 for _, _, pts, _ in rows)


# 14.8 (队员总分制): a three-round Swiss of six, worked by hand (2/1/0, 14.3.1).
# R1: 1 beats 2, 3 beats 4, 5 beats 6. R2: 1 beats 3, 5 and 2 draw, 4 beats 6. R3: 1 beats 5, 3 beats 6, 2 beats 4.
# Points: 1 6, 3 4, 2 3, 5 3, 4 2, 6 0. 2 and 5 on 3: 对手分 2 met 1, 5, 4 (6 + 3 + 2 = 11), 5 met 6, 2, 1 (0 + 3 + 6
# = 9): 2 before 5. Places: 1 first, 3 second, 2 third, 5 fourth, 4 fifth, 6 sixth.
SWISS6 = (
    Game(1, 1, 1, 2, "1-0"), Game(1, 2, 3, 4, "1-0"), Game(1, 3, 5, 6, "1-0"),
    Game(2, 1, 1, 3, "1-0"), Game(2, 2, 5, 2, DRAW), Game(2, 3, 4, 6, "1-0"),
    Game(3, 1, 1, 5, "1-0"), Game(3, 2, 3, 6, "1-0"), Game(3, 3, 2, 4, "1-0"),
)  # fmt: skip


def member_event(teams: dict[int, str], **settings: object) -> Event:
    players = tuple(Player(i, f"P{i}", team=teams.get(i, "")) for i in range(1, 7))
    return Event("t", players, SWISS6, system="swiss", rounds=3, team_method="14.8", **settings)  # type: ignore[arg-type]


def test_14_8_teams_by_the_sum_of_their_players_places() -> None:
    # A = 1 and 4: places 1 + 5 = 6; B = 2 and 5: 3 + 4 = 7; C = 3 and 6: 2 + 6 = 8. Fewer first.
    rows = team_standings(member_event({1: "A", 4: "A", 2: "B", 5: "B", 3: "C", 6: "C"}))
    assert [(r.rank, r.team, r.points, r.tiebreaks[0][1]) for r in rows] == [
        (1, "A", 6, 1), (2, "B", 7, 3), (3, "C", 8, 2)]
    assert [c.key for c, _ in rows[0].tiebreaks] == ["best_place"]


def test_14_8_equal_sums_go_by_the_best_individual_place() -> None:
    # A = 1 and 6: 1 + 6 = 7, best 1; B = 2 and 5: 3 + 4 = 7, best 3; C = 3 and 4: 2 + 5 = 7, best 2.
    rows = team_standings(member_event({1: "A", 6: "A", 2: "B", 5: "B", 3: "C", 4: "C"}))
    assert [(r.rank, r.team, r.points) for r in rows] == [(1, "A", 7), (2, "C", 7), (3, "B", 7)]


def test_14_8_counts_each_teams_best_places_where_the_organiser_says_so() -> None:
    teams = {1: "A", 4: "A", 6: "A", 2: "B", 5: "B", 3: "C"}
    with pytest.raises(TournamentError, match="different sizes"):
        member_event(teams)
    # The best one place of each: A 1 (player 1), B 3 (player 2), C 2 (player 3).
    rows = team_standings(member_event(teams, team_counted=1))
    assert [(r.rank, r.team, r.points) for r in rows] == [(1, "A", 1), (2, "C", 2), (3, "B", 3)]
    with pytest.raises(TournamentError, match="too few members: C"):
        member_event(teams, team_counted=2)


def test_14_8_teams_equal_in_sum_and_best_place_share_the_rank() -> None:
    # 1-2 and 3-4 drawn: all on 1 point, 对手分 1, no wins, no fouls; 2 and 4 played Black (后走局数 1): places
    # 2 and 4 share the first, 1 and 3 the third. X = 1 and 2: 3 + 1 = 4, best 1; Y = 3 and 4 the same.
    players = tuple(Player(i, f"P{i}", team="X" if i <= 2 else "Y") for i in range(1, 5))
    event = Event("t", players, (Game(1, 1, 1, 2, DRAW), Game(1, 2, 3, 4, DRAW)), team_method="14.8")
    assert [(r.rank, r.team, r.points) for r in team_standings(event)] == [(1, "X", 4), (1, "Y", 4)]


def test_a_team_method_the_rules_do_not_have_is_refused() -> None:
    with pytest.raises(TournamentError, match="unknown team ranking"):
        Event("t", PLAYERS, GAMES, team_method="14.9")
