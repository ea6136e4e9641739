"""Standings by article 13 and the tie-breaks of 14.1 to 14.4, each on a small event worked by hand (the numbers
in the comments are the hand work; the code must agree with them)."""

from __future__ import annotations

import pytest

from xqarb.tournament.model import (
    CXA_2_1_0,
    DRAW,
    WIN_3_BLACK_DRAW_2,
    WIN_3_DRAW_1,
    Event,
    Game,
    Player,
    TournamentError,
)
from xqarb.tournament.standings import standings

D = DRAW


def players(n: int) -> tuple[Player, ...]:
    return tuple(Player(i, f"P{i}") for i in range(1, n + 1))


def rr4(results: list[str], **kw: object) -> Event:
    """A four-player one-game round robin on the Berger table: R1 1-4 2-3, R2 4-3 1-2, R3 2-4 3-1 (red first)."""
    pairs = [(1, 1, 1, 4), (1, 2, 2, 3), (2, 1, 4, 3), (2, 2, 1, 2), (3, 1, 2, 4), (3, 2, 3, 1)]
    games = tuple(Game(r, b, red, black, res) for (r, b, red, black), res in zip(pairs, results, strict=True))
    return Event("rr", players(4), games, system="round_robin", **kw)  # type: ignore[arg-type]


def table(event: Event) -> list[tuple[int, int, float, dict[str, float | None]]]:
    return [(r.rank, r.player.no, r.points, {c.key: v for c, v in r.tiebreaks}) for r in standings(event)]


def test_point_schemes_of_13_1_and_13_3() -> None:
    g_red_win, g_draw = Game(1, 1, 1, 2, "1-0"), Game(1, 1, 1, 2, D)
    # 13.1: win 2, loss 0, draw 1 each.
    assert (CXA_2_1_0.points(g_red_win, 1), CXA_2_1_0.points(g_red_win, 2)) == (2, 0)
    assert (CXA_2_1_0.points(g_draw, 1), CXA_2_1_0.points(g_draw, 2)) == (1, 1)
    # 13.3: win 3, loss 0, draw 1 each.
    assert (WIN_3_DRAW_1.points(g_red_win, 1), WIN_3_DRAW_1.points(g_draw, 2)) == (3, 1)
    # 13.3: win 3, loss 0, the first mover's (Red's) draw 1, the second mover's (Black's) draw 2.
    assert (WIN_3_BLACK_DRAW_2.points(g_draw, 1), WIN_3_BLACK_DRAW_2.points(g_draw, 2)) == (1, 2)
    assert WIN_3_BLACK_DRAW_2.points(Game(1, 1, 1, 2, "0-1"), 2) == 3
    assert CXA_2_1_0.points(Game(1, 1, 1, 2, None), 1) == 0  # not finished: nothing yet


def test_scheme_changes_the_order() -> None:
    # 1 beats 4, 2 beats 3; R2 4-3 draw, 1-2 draw; R3 2-4 draw, 3-1 draw.
    ev = rr4(["1-0", "1-0", D, D, D, D])
    # 2-1-0: 1 = 2+1+1 = 4, 2 = 2+1+1 = 4, 3 = 0+1+1 = 2, 4 = 0+1+1 = 2.
    assert [r[2] for r in table(ev)] == [4, 4, 2, 2]
    # 3 / Black's draw 2: 1 = 3 + (R2 red) 1 + (R3 black) 2 = 6; 2 = 3 + (R2 black) 2 + (R3 red) 1 = 6;
    # 3 = 0 + (R2 black) 2 + (R3 red) 1 = 3; 4 = 0 + (R2 red) 1 + (R3 black) 2 = 3.
    ev3 = Event("rr", ev.players, ev.games, system="round_robin", scheme=WIN_3_BLACK_DRAW_2)
    assert sorted(r[2] for r in table(ev3)) == [3, 3, 6, 6]


def test_14_1_xiaofen_decides() -> None:
    # R1 1-4 1-0, 2-3 draw; R2 4-3 0-1, 1-2 0-1; R3 2-4 draw, 3-1 draw.
    # Points: 1 = 2+0+1 = 3; 2 = 1+2+1 = 4; 3 = 1+2+1 = 4; 4 = 0+0+1 = 1.
    # 小分 2 = beat 1 (3) + half of 3 (2) + half of 4 (0.5) = 5.5; 小分 3 = beat 4 (1) + half 2 (2) + half 1 (1.5)
    # = 4.5: 2 before 3. 小分 1 = beat 4 (1) + half 3 (2) = 3; 小分 4 = half 2 = 2.
    rows = table(rr4(["1-0", D, "0-1", "0-1", D, D]))
    assert [(rank, no, pts) for rank, no, pts, _ in rows] == [(1, 2, 4), (2, 3, 4), (3, 1, 3), (4, 4, 1)]
    assert [tb["xiaofen"] for *_, tb in rows] == [5.5, 4.5, 3, 2]


def test_14_1_direct_encounter_decides() -> None:
    # R1 1-4 1-0, 2-3 1-0; R2 4-3 draw, 1-2 draw; R3 2-4 1-0, 3-1 1-0.
    # Points: 1 = 2+1+0 = 3, 2 = 2+1+2 = 5, 3 = 0+1+2 = 3, 4 = 0+1+0 = 1.
    # 1 and 3: 小分 1 = beat 4 (1) + half of 2 (2.5) = 3.5; 小分 3 = beat 1 (3) + half of 4 (0.5) = 3.5;
    # one win each; 直胜: 3 beat 1, so 3 first.
    rows = table(rr4(["1-0", "1-0", D, D, "1-0", "1-0"]))
    assert [no for _, no, _, _ in rows] == [2, 3, 1, 4]
    assert rows[1][3]["xiaofen"] == rows[2][3]["xiaofen"] == 3.5 and rows[1][3]["wins"] == rows[2][3]["wins"] == 1
    assert (rows[1][3]["direct"], rows[2][3]["direct"]) == (2, 0)
    assert rows[0][3]["direct"] is None  # not tied with anyone: never compared


def test_14_1_wins_then_fouls_then_games_with_black() -> None:
    # R1 1-4 0-1, 2-3 draw; R2 4-3 0-1, 1-2 draw; R3 2-4 draw, 3-1 0-1.
    # Everyone 3 points: 1 = 0+1+2, 2 = 1+1+1, 3 = 1+2+0, 4 = 2+0+1; every 小分 4.5
    # (1: beat 3 (3) + half 2 (1.5); 2: three halves of 3; 3: beat 4 (3) + half 2; 4: beat 1 (3) + half 2).
    # 胜局: 2 has none, the others one: 2 last. 直胜 among 1, 3, 4 is a cycle (2 each). 犯规: 3 has one foul.
    # 后走局数 between 1 and 4: 1 played Black once (R3), 4 twice (R1, R3): 4 first.
    ev = rr4(["0-1", D, "0-1", D, D, "0-1"])
    games = tuple(g if g.round != 2 or g.board != 1 else Game(2, 1, 4, 3, "0-1", black_fouls=1) for g in ev.games)
    rows = table(Event("rr", ev.players, games, system="round_robin"))
    assert [(rank, no) for rank, no, _, _ in rows] == [(1, 4), (2, 1), (3, 3), (4, 2)]
    assert all(pts == 3 and tb["xiaofen"] == 4.5 for _, _, pts, tb in rows)
    assert [tb["wins"] for *_, tb in rows] == [1, 1, 1, 0]
    assert [tb["direct"] for *_, tb in rows[:3]] == [2, 2, 2]
    assert [tb["fouls"] for *_, tb in rows] == [0, 0, 1, 0]
    assert [tb["black_games"] for *_, tb in rows[:2]] == [2, 1]


def test_14_1_black_in_their_own_game_is_the_last_word() -> None:
    # Every game drawn: 3 points each, 小分 4.5, no wins, 直胜 3 each, no fouls.
    # 后走局数: 3 and 4 twice (3: R1, R2; 4: R1, R3), 1 and 2 once: {3, 4} before {1, 2}.
    # 对局时后走: 3 was Black in 4-3, 2 was Black in 1-2.
    rows = table(rr4([D] * 6))
    assert [(rank, no) for rank, no, _, _ in rows] == [(1, 3), (2, 4), (3, 2), (4, 1)]
    assert [tb["black_in_game"] for *_, tb in rows] == [1, 0, 1, 0]


def test_14_2_match_points_then_game_points() -> None:
    # Two cycles, three players. 1-2: two draws (场分 1 each). 1-3: 1 wins one, one drawn (game points 3:1, so
    # 场分 1: 2, 3: 0). 2-3: 2 wins both (4:0, 场分 2: 2).
    # 场分 1 = 1 + 2 = 3, 2 = 1 + 2 = 3, 3 = 0. 局分总和 1 = 2 + 3 = 5, 2 = 2 + 4 = 6: 2 first.
    games = (
        Game(1, 1, 1, 2, D), Game(2, 1, 3, 1, "0-1"), Game(3, 1, 2, 3, "1-0"),
        Game(4, 1, 2, 1, D), Game(5, 1, 1, 3, D), Game(6, 1, 3, 2, "0-1"),
    )  # fmt: skip
    rows = table(Event("rr2", players(3), games, system="round_robin", cycles=2))
    assert [(rank, no, pts) for rank, no, pts, _ in rows] == [(1, 2, 3), (2, 1, 3), (3, 3, 0)]
    assert [tb["game_points"] for *_, tb in rows] == [6, 5, 1]


SWISS = (
    # R1: 1-4 1-0, 2-5 draw, 3-6 0-1
    Game(1, 1, 1, 4, "1-0"), Game(1, 2, 2, 5, D), Game(1, 3, 3, 6, "0-1"),
    # R2: 6-1 draw, 4-2 0-1, 5-3 1-0
    Game(2, 1, 6, 1, D), Game(2, 2, 4, 2, "0-1"), Game(2, 3, 5, 3, "1-0"),
    # R3: 1-2 1-0, 6-5 0-1, 3-4 draw
    Game(3, 1, 1, 2, "1-0"), Game(3, 2, 6, 5, "0-1"), Game(3, 3, 3, 4, D),
)  # fmt: skip
# Points by round: 1: 2,1,2 = 5; 2: 1,2,0 = 3; 3: 0,0,1 = 1; 4: 0,0,1 = 1; 5: 1,2,2 = 5; 6: 2,1,0 = 3.


def test_14_3_1_duishoufen_then_games_with_black() -> None:
    # 对手分 1 = 4 + 6 + 2 = 1+3+3 = 7; 5 = 2 + 3 + 6 = 3+1+3 = 7; two wins each; no fouls;
    # 后走局数 1 = 1 (R2), 5 = 2 (R1, R3): 5 first.
    # 对手分 2 = 5 + 4 + 1 = 5+1+5 = 11; 6 = 3 + 1 + 5 = 1+5+5 = 11; one win each; 后走局数 2 = 2, 6 = 1: 2 first.
    # 对手分 3 = 6 + 5 + 4 = 3+5+1 = 9; 4 = 1 + 2 + 3 = 5+3+1 = 9; no wins; 后走局数 3 = 1, 4 = 2: 4 first.
    rows = table(Event("sw", players(6), SWISS, system="swiss"))
    assert [(rank, no, pts) for rank, no, pts, _ in rows] == [
        (1, 5, 5), (2, 1, 5), (3, 2, 3), (4, 6, 3), (5, 4, 1), (6, 3, 1)
    ]
    assert [tb["duishoufen"] for *_, tb in rows] == [7, 7, 11, 11, 9, 9]
    assert [tb["black_games"] for *_, tb in rows] == [2, 1, 2, 1, 2, 1]


def test_14_3_1_fouls_come_before_games_with_black() -> None:
    games = tuple(Game(2, 3, 5, 3, "1-0", red_fouls=1) if (g.round, g.board) == (2, 3) else g for g in SWISS)
    rows = table(Event("sw", players(6), games, system="swiss"))
    assert [no for _, no, _, _ in rows[:2]] == [1, 5]  # 5 has a foul now: its Black games no longer count


def test_14_3_2_leijinfen() -> None:
    # 累进分 1 = 2 + 3 + 5 = 10; 5 = 1 + 3 + 5 = 9: 1 first (14.3.1 put 5 first).
    # 累进分 2 = 1 + 3 + 3 = 7; 6 = 2 + 3 + 3 = 8: 6 first. 3 = 4 = 0 + 0 + 1 = 1; 4 first by 后走局数.
    # Cut by one round (the first term dropped): 1 = 8, 5 = 8, 6 = 6, 2 = 6, 4 = 1, 3 = 1.
    rows = table(Event("sw", players(6), SWISS, system="swiss", swiss_tiebreak="14.3.2"))
    assert [no for _, no, _, _ in rows] == [1, 5, 6, 2, 4, 3]
    assert [tb["leijinfen"] for *_, tb in rows] == [10, 9, 8, 7, 1, 1]
    assert [tb["leijinfen_cut_1"] for *_, tb in rows] == [8, 8, 6, 6, 1, 1]


def test_swiss_tie_after_everything_falls_back_to_earlier_rounds_then_shares_the_rank() -> None:
    # R1 1-2 1-0, 3-4 draw; R2 4-1 1-0, 2-3 0-1. Points 1 = 2+0 = 2, 2 = 0, 3 = 1+2 = 3, 4 = 1+2 = 3.
    # 对手分 3 = 4's 3 + 2's 0 = 3; 4 = 3's 3 + 1's 2 = 5: 4 first.
    games = (Game(1, 1, 1, 2, "1-0"), Game(1, 2, 3, 4, D), Game(2, 1, 4, 1, "1-0"), Game(2, 2, 2, 3, "0-1"))
    rows = table(Event("sw", players(4), games, system="swiss"))
    assert [(rank, no, pts) for rank, no, pts, _ in rows] == [(1, 4, 3), (2, 3, 3), (3, 1, 2), (4, 2, 0)]
    # A tie nothing separates: two players who only drew each other share first place.
    shared = table(Event("sw", players(2), (Game(1, 1, 1, 2, D), Game(2, 1, 2, 1, D)), system="swiss"))
    assert [(rank, no) for rank, no, _, _ in shared] == [(1, 1), (1, 2)]
    assert shared[0][3]["points_after_round_1"] == 1


def test_14_3_1_earlier_round_decides_when_all_else_is_equal() -> None:
    # 1 and 2 never meet, and each played Black once.
    # R1 1-3 1-0 (1 wins, red), 2-4 0-1 (2 loses, red); R2 3-2 0-1 (2 wins, black), 4-1 1-0 (1 loses, black).
    # Points 1 = 2+0 = 2, 2 = 0+2 = 2, 3 = 0+0 = 0, 4 = 2+2 = 4. 对手分 1 = 3 + 4 = 0+4 = 4; 2 = 4 + 3 = 4;
    # one win each, no fouls, one Black game each. After round 1: 1 had 2, 2 had 0: 1 first.
    games = (Game(1, 1, 1, 3, "1-0"), Game(1, 2, 2, 4, "0-1"), Game(2, 1, 3, 2, "0-1"), Game(2, 2, 4, 1, "1-0"))
    rows = table(Event("sw", players(4), games, system="swiss"))
    assert [(rank, no, pts) for rank, no, pts, _ in rows] == [(1, 4, 4), (2, 1, 2), (3, 2, 2), (4, 3, 0)]
    assert (rows[1][3]["points_after_round_1"], rows[2][3]["points_after_round_1"]) == (2, 0)


def test_14_4_bye_scores_a_win_and_its_opponent_the_lowest_score() -> None:
    # Three players, one round: 1 beats 2, 3 has the bye: 1 = 2, 3 = 2 (a bye is a won game), 2 = 0.
    # 对手分 1 = 2's 0; 3's bye counts as the lowest score of a player with points, 2: 3 first.
    rows = table(Event("sw", players(3), (Game(1, 1, 1, 2, "1-0"), Game(1, 2, 3, None)), system="swiss"))
    assert [(rank, no, pts) for rank, no, pts, _ in rows] == [(1, 3, 2), (2, 1, 2), (3, 2, 0)]
    assert [tb["duishoufen"] for *_, tb in rows] == [2, 0, 2]
    assert rows[0][3]["wins"] == 0  # a bye is not a game won


def test_unfinished_games_score_nothing_yet() -> None:
    rows = table(Event("sw", players(2), (Game(1, 1, 1, 2, None),), system="swiss"))
    assert [(rank, pts) for rank, _, pts, _ in rows] == [(1, 0), (1, 0)]


@pytest.mark.parametrize(
    "games, message",
    [
        ((Game(1, 1, 1, 9, None),), "no player with start number 9"),
        ((Game(1, 1, 1, 2, None), Game(1, 2, 2, 3, None)), "paired twice"),
        ((Game(1, 1, 1, 2, "2-0"),), "result"),
        ((Game(0, 1, 1, 2, None),), "count from 1"),
    ],
)
def test_impossible_events_are_refused(games: tuple[Game, ...], message: str) -> None:
    with pytest.raises(TournamentError, match=message):
        Event("bad", players(3), games)


def test_standings_do_not_depend_on_the_order_of_players_or_games() -> None:
    import random

    ev = Event("sw", players(6), SWISS, system="swiss")
    rng = random.Random(3)
    ps, gs = list(ev.players), list(ev.games)
    rng.shuffle(ps)
    rng.shuffle(gs)
    again = Event("sw", tuple(ps), tuple(gs), system="swiss")
    assert [r.to_json() for r in standings(again)] == [r.to_json() for r in standings(ev)]


def test_a_round_robin_bye_is_no_game() -> None:
    # Three players, Berger with a dummy: R1 3 has the bye, 1-2 1-0. In a round robin the bye scores nothing.
    games = (Game(1, 1, 1, 2, "1-0"), Game(1, 2, 3, None))
    rows = table(Event("rr", players(3), games, system="round_robin"))
    assert [(no, pts) for _, no, pts, _ in rows] == [(1, 2), (2, 0), (3, 0)]
