"""Pairings: the Berger table, and Swiss rounds that never repeat a pairing, keep colours balanced and come out
the same every time."""

from __future__ import annotations

import itertools
import random

import pytest

from xqarb.tournament.model import DRAW, Event, Game, Player
from xqarb.tournament.pairing import PairingError, berger_round, next_round, round_robin_round, swiss_round


def players(n: int) -> tuple[Player, ...]:
    # Ratings descend with the start number except two, so the seeding order is not simply the start numbers.
    return tuple(Player(i, f"P{i}", rating=2400 - 10 * i + (25 if i in (5, 9) else 0)) for i in range(1, n + 1))


def test_berger_table_for_six_is_the_published_one() -> None:
    # The Berger table for six (red first): 1-6 2-5 3-4 / 6-4 5-3 1-2 / 2-6 3-1 4-5 / 6-5 1-4 2-3 / 3-6 4-2 5-1.
    assert [berger_round(6, r) for r in range(1, 6)] == [
        [(1, 6), (2, 5), (3, 4)], [(6, 4), (5, 3), (1, 2)], [(2, 6), (3, 1), (4, 5)],
        [(6, 5), (1, 4), (2, 3)], [(3, 6), (4, 2), (5, 1)],
    ]  # fmt: skip


@pytest.mark.parametrize("n", [3, 4, 5, 8, 9])
def test_round_robin_meets_everyone_once_with_colours_balanced(n: int) -> None:
    ps = players(n)
    rounds = n - 1 if n % 2 == 0 else n
    games = [g for r in range(1, rounds + 1) for g in round_robin_round(ps, r)]
    met = [frozenset((g.red, g.black)) for g in games if not g.is_bye]
    assert sorted(met, key=sorted) == sorted({frozenset(c) for c in itertools.combinations(range(1, n + 1), 2)},
                                             key=sorted)  # fmt: skip
    for p in ps:
        reds = sum(g.red == p.no for g in games if not g.is_bye)
        blacks = sum(g.black == p.no for g in games)
        assert abs(reds - blacks) <= 1, (p.no, reds, blacks)
    if n % 2:
        assert sorted(g.red for g in games if g.is_bye) == list(range(1, n + 1))  # one bye each


def test_second_cycle_exchanges_colours() -> None:
    ps = players(4)
    assert [(g.black, g.red) for g in round_robin_round(ps, 1, cycles=2)] == [
        (g.red, g.black) for g in round_robin_round(ps, 4, cycles=2)
    ]


def play_swiss(n: int, rounds: int, seed: int) -> Event:
    rng = random.Random(seed)
    event = Event("sw", players(n), system="swiss", rounds=rounds)
    for _ in range(rounds):
        new = [
            g if g.is_bye else Game(g.round, g.board, g.red, g.black, rng.choice(["1-0", "0-1", DRAW]))
            for g in next_round(event)
        ]
        event = Event("sw", event.players, (*event.games, *new), system="swiss", rounds=rounds)
    return event


@pytest.mark.parametrize("n, rounds, seed", [(8, 3, 0), (8, 5, 1), (7, 5, 2), (12, 7, 3), (30, 9, 4)])
def test_swiss_never_repeats_and_balances_colours(n: int, rounds: int, seed: int) -> None:
    event = play_swiss(n, rounds, seed)
    pairs = [frozenset((g.red, g.black)) for g in event.games if not g.is_bye]
    assert len(pairs) == len(set(pairs)), "a pairing repeated"
    byes = [g.red for g in event.games if g.is_bye]
    assert len(byes) == len(set(byes)) == (rounds if n % 2 else 0), "a second bye, or a bye in an even field"
    for p in event.players:
        colours = [g.side_of(p.no) for g in event.games_of(p.no) if not g.is_bye]
        # The hard limit is a surplus of 2; in an even field with no byes every player stays within 1.
        assert abs(colours.count("red") - colours.count("black")) <= (1 if n % 2 == 0 else 2), (p.no, colours)
        assert all(len(set(colours[i:i + 3])) > 1 for i in range(len(colours) - 2)), (p.no, colours)
    for r in range(1, rounds + 1):
        assert sorted(g.board for g in event.games if g.round == r) == list(range(1, n // 2 + n % 2 + 1))


def test_swiss_first_round_is_top_half_against_bottom_half() -> None:
    # Seeded by rating: 1 (2390), 2 (2380), 3, 4, 5 (2375) ... so the order is 1 2 5 3 4 6 7 8.
    games = swiss_round(Event("sw", players(8)), 1)
    assert [(g.red, g.black) for g in games] == [(1, 4), (6, 2), (5, 7), (8, 3)]


def test_swiss_pairs_within_score_groups() -> None:
    event = play_swiss(8, 1, seed=5)
    points = {p.no: 0 for p in event.players}
    for g in event.games:
        points[g.red] += {"1-0": 2, DRAW: 1}.get(g.result or "", 0)
        points[g.black] += {"0-1": 2, DRAW: 1}.get(g.result or "", 0)  # type: ignore[index]
    games = swiss_round(event, 2)
    # Pairs are formed from the top score down: differences stay as small as the field allows.
    diffs = [abs(points[g.red] - points[g.black]) for g in games]  # type: ignore[index]
    assert sum(diffs) <= 2, (points, [(g.red, g.black) for g in games])


def test_swiss_is_deterministic_whatever_order_players_come_in() -> None:
    a = play_swiss(12, 5, seed=7)
    shuffled = list(a.players)
    random.Random(1).shuffle(shuffled)
    b = Event("sw", tuple(shuffled), a.games[: len(a.games) - 6], system="swiss")
    again = [(g.board, g.red, g.black) for g in next_round(b)]
    assert again == [(g.board, g.red, g.black) for g in a.games if g.round == 5]
    assert next_round(b) == next_round(b)


def test_a_round_cannot_be_paired_before_results_or_when_everyone_met() -> None:
    ps = players(2)
    with pytest.raises(PairingError, match="has a result"):
        swiss_round(Event("sw", ps, (Game(1, 1, 1, 2),)), 2)
    with pytest.raises(PairingError, match="no pairing"):
        swiss_round(Event("sw", ps, (Game(1, 1, 1, 2, DRAW),)), 2)
