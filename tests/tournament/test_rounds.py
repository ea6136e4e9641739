"""Which pairings a round start publishes, and why a round cannot start (xqarb.tournament.rounds)."""

from __future__ import annotations

import pytest

from xqarb.tournament.model import Event, Game, Player
from xqarb.tournament.rounds import (
    ByeNotPublished,
    PreviousRoundUnfinished,
    RoundAlreadyStarted,
    UnknownRound,
    plan_round_start,
    round_game_id,
)

FOUR = tuple(Player(i, f"P{i}", rating=2400 - 100 * i) for i in range(1, 5))


def test_the_next_round_is_paired_by_the_core_and_started_whole() -> None:
    plan = plan_round_start(Event("E", FOUR, rounds=3), 1)
    # Swiss round 1 by rating: 1 meets 3, 2 meets 4 (colours alternating by board).
    assert [(g.board, g.red, g.black) for g in plan.to_start] == [(1, 1, 3), (2, 4, 2)]
    assert plan.running == () and plan.byes == ()


def test_a_round_starts_after_the_previous_ended_and_only_the_boards_not_yet_started() -> None:
    r1 = (Game(1, 1, 1, 3, "1-0", "g1"), Game(1, 2, 4, 2, None, "g2"))
    event = Event("E", FOUR, r1, rounds=3)
    with pytest.raises(PreviousRoundUnfinished, match=r"board\(s\) 2"):
        plan_round_start(event, 2)
    with pytest.raises(RoundAlreadyStarted):
        plan_round_start(event, 1)
    with pytest.raises(PreviousRoundUnfinished, match=r"round 2 .* has not been played"):
        plan_round_start(Event("E", FOUR, (r1[0], Game(1, 2, 4, 2, "0-1", "g2")), rounds=3), 3)
    # The organiser published round 1; board 1's game started by hand: the start publishes board 2 only, and a
    # board started moments ago (not in the ledger yet) counts as started.
    published = Event("E", FOUR, (Game(1, 1, 1, 3, None, "g1"), Game(1, 2, 4, 2)), rounds=3)
    plan = plan_round_start(published, 1)
    assert [g.board for g in plan.to_start] == [2] and [g.game_id for g in plan.running] == ["g1"]
    with pytest.raises(RoundAlreadyStarted):
        plan_round_start(published, 1, started_boards={2})
    # A result the organiser entered by hand (played away from the cameras): that pairing is not started.
    by_hand = Event("E", FOUR, (Game(1, 1, 1, 3, "0-1"), Game(1, 2, 4, 2)), rounds=3)
    assert [g.board for g in plan_round_start(by_hand, 1).to_start] == [2]


def test_unknown_rounds_and_an_unpublished_bye() -> None:
    for bad in (0, 4):
        with pytest.raises(UnknownRound):
            plan_round_start(Event("E", FOUR, rounds=3), bad)
    with pytest.raises(ByeNotPublished, match="player 5 with a bye"):  # five players: the lowest seed sits out
        plan_round_start(Event("E", (*FOUR, Player(5, "P5", rating=1800)), rounds=3), 1)


def test_a_round_start_names_its_games_the_same_way_every_time() -> None:
    assert round_game_id("E", 2, 3) == round_game_id("E", 2, 3) != round_game_id("F", 2, 3)
    assert round_game_id("E", 2, 3).endswith("-r2-b3")
