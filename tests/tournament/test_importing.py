"""Players and pairings imported from CSV and from a TRF-like report, and the errors that name the bad line."""

from __future__ import annotations

import pytest

from xqarb.tournament.importing import TournamentFileError, parse_pairings_csv, parse_players_csv, parse_trf
from xqarb.tournament.model import DRAW, Event, Game
from xqarb.tournament.standings import standings

PLAYERS = "no,name,rating,club\n1,王天一,2700,杭州\n2,郑惟桐,2680,四川\n3,许银川,2650,广东\n"


def test_players_csv_english_and_chinese_headers() -> None:
    players = parse_players_csv(PLAYERS)
    assert [(p.no, p.name, p.rating, p.club) for p in players] == [
        (1, "王天一", 2700, "杭州"), (2, "郑惟桐", 2680, "四川"), (3, "许银川", 2650, "广东")
    ]  # fmt: skip
    chinese = parse_players_csv("\ufeff姓名,等级分,单位,队名\n甲,2000,北京,北京队\n乙,,上海,\n")
    assert [(p.no, p.name, p.rating, p.club, p.team) for p in chinese] == [
        (1, "甲", 2000, "北京", "北京队"), (2, "乙", None, "上海", "")
    ]  # fmt: skip


def test_pairings_csv_by_number_or_name_with_byes_and_results() -> None:
    players = parse_players_csv(PLAYERS)
    text = "round,board,red,black,result,game_id\n1,1,1,郑惟桐,1-0,g1\n1,2,3,BYE,,\n2,1,2,3,和,g3\n2,2,1,,,\n"
    games = parse_pairings_csv(text, players)
    assert games == (
        Game(1, 1, 1, 2, "1-0", "g1"), Game(1, 2, 3, None), Game(2, 1, 2, 3, DRAW, "g3"), Game(2, 2, 1, None)
    )  # fmt: skip
    # 2-1-0 with byes as wins (14.4): 1 = 2 + 2 = 4, 3 = 2 + 1 = 3, 2 = 0 + 1 = 1.
    rows = standings(Event("e", players, games))
    assert [(r.player.no, r.points) for r in rows] == [(1, 4), (3, 3), (2, 1)]


@pytest.mark.parametrize(
    "players_text, pairings_text, message",
    [
        ("name,rating\nA,strong\n", "", "line 2: rating 'strong'"),
        ("rating\n2000\n", "", "line 1: no column for name"),
        ("no,name\n1,A\n1,B\n", "", "start numbers repeat"),
        (PLAYERS, "round,red,black,result\n1,1,9,1-0\n", "line 2: no player '9'"),
        (PLAYERS, "round,red,black,result\n1,1,2,2-0\n", "line 2: result '2-0'"),
        (PLAYERS, "round,red,black\nfirst,1,2\n", "line 2: round 'first'"),
    ],
)
def test_bad_lines_are_named(players_text: str, pairings_text: str, message: str) -> None:
    with pytest.raises(TournamentFileError, match=message):
        parse_pairings_csv(pairings_text, parse_players_csv(players_text))


def trf_line(no: int, name: str, rating: int, fed: str, rounds: list[tuple[int, str, str]]) -> str:
    head = f"001 {no:4d} m    {name:<33} {rating:4d} {fed:<3} {0:11d} {'':10} {0:4.1f} {no:4d}"
    assert len(head) == 89
    return head + "  " + "  ".join(f"{opp:4d} {col} {res}" for opp, col, res in rounds)


def test_trf_players_and_games() -> None:
    text = "\n".join([
        "012 Demo Open",
        trf_line(1, "Wang Tianyi", 2700, "CHN", [(2, "w", "1"), (3, "b", "=")]),
        trf_line(2, "Zheng Weitong", 2680, "CHN", [(1, "b", "0"), (0, "-", "F")]),
        trf_line(3, "Xu Yinchuan", 2650, "CHN", [(0, "-", "F"), (1, "w", "=")]),
    ])  # fmt: skip
    name, players, games = parse_trf(text)
    assert name == "Demo Open"
    assert [(p.no, p.name, p.rating, p.club) for p in players] == [
        (1, "Wang Tianyi", 2700, "CHN"), (2, "Zheng Weitong", 2680, "CHN"), (3, "Xu Yinchuan", 2650, "CHN")
    ]  # fmt: skip
    assert sorted(games, key=lambda g: (g.round, g.red)) == [
        Game(1, 1, 1, 2, "1-0"), Game(1, 2, 3, None), Game(2, 2, 2, None), Game(2, 1, 3, 1, DRAW)
    ]  # fmt: skip
