"""The natural move limit (自然限着, 4.2.4 and 23.3) and insufficient material (4.2.2)."""

from __future__ import annotations

import pytest

from xqarb.referee.rules import START_FEN, Move, Position
from xqarb.referee.rules.limits import (
    HistoryError,
    UnknownRuleset,
    insufficient_material,
    insufficient_material_reason,
    natural_limit_count,
    natural_limit_rule,
)

sf = pytest.importorskip("pyffish")


def line(fen: str, moves: list[str]) -> tuple[list[Position], list[Move]]:
    positions = [Position.from_fen(fen)]
    played = []
    for text in moves:
        mv = Move.parse(text)
        played.append(mv)
        positions.append(positions[-1].play(mv))
    return positions, played


HORSES = ["h0g2", "h9g7", "g2h0", "g7h9"]  # four plies, no capture, no check
# Rook a8 and the black king e9: CHECKS has two red checks in four plies, IDLE none.
ROOK = "4k4/R8/9/9/9/9/9/9/9/3K5 w - - 0 1"
CHECKS = ["a8a9", "e9e8", "a9a8", "e8e9"]
IDLE = ["d0d1", "e9f9", "d1d0", "f9e9"]


def test_rules_of_the_rule_sets():
    assert (natural_limit_rule().rounds, natural_limit_rule().checks_cap) == (60, 10)
    rapid = natural_limit_rule("cxa-2021", rapid=True)
    assert (rapid.rounds, rapid.checks_cap) == (50, 8)
    assert natural_limit_rule("cxa-2011").article.startswith("4.2.4, 23.3")
    assert natural_limit_rule(rounds=40).rounds == 40  # 4.2.4: an event may lower it
    with pytest.raises(UnknownRuleset):
        natural_limit_rule("fide")
    with pytest.raises(ValueError):
        natural_limit_rule(rounds=0)


def test_rounds_without_capture_reach_the_limit_at_120_plies():
    positions, moves = line(START_FEN, HORSES * 30)  # 120 plies = 60 rounds
    count = natural_limit_count(positions, moves, "red")
    assert (count.plies, count.rounds, count.counted_rounds, count.reached) == (120, 60, 60, True)
    short = natural_limit_count(positions[:-1], moves[:-1], "red")
    assert (short.rounds, short.reached) == (59, False)
    assert "59 of 60 rounds count" in short.reason


def test_a_capture_resets_the_count():
    # Cannon b2xb9 takes the horse, rook a9xb9 takes the cannon back, then 116 quiet plies.
    quiet = ["h0g2", "h9g7", "g2h0", "g7h9"] * 29
    positions, moves = line(START_FEN, ["b2b9", "a9b9", *quiet])
    count = natural_limit_count(positions, moves, "black")
    assert count.stage_start == 2
    assert (count.plies, count.rounds, count.reached) == (116, 58, False)
    assert "since move 2 (the last capture)" in count.reason
    more, more_moves = line(START_FEN, ["b2b9", "a9b9", *quiet, *HORSES])
    assert natural_limit_count(more, more_moves, "black").reached


def test_claimants_checks_beyond_ten_do_not_count():
    # 23.3: 6 check cycles give Red 12 checks; with 25 idle cycles that is 62 rounds, of which 2 are discounted.
    positions, moves = line(ROOK, CHECKS * 6 + IDLE * 25)
    red = natural_limit_count(positions, moves, "red")
    assert red.checks == {"red": 12, "black": 0}
    assert (red.rounds, red.discounted_rounds, red.counted_rounds, red.reached) == (62, 2, 60, True)
    # Two more checks (7 cycles, 24 idle): 58 count, the claim is false.
    positions, moves = line(ROOK, CHECKS * 7 + IDLE * 24)
    red = natural_limit_count(positions, moves, "red")
    assert (red.rounds, red.discounted_rounds, red.counted_rounds, red.reached) == (62, 4, 58, False)
    assert "at most 10 count: 4 rounds not counted" in red.reason
    # Black gave no check: Black's claim counts every round.
    black = natural_limit_count(positions, moves, "black")
    assert (black.counted_rounds, black.reached) == (62, True)


def test_rapid_play_off_counts_fifty_rounds_and_eight_checks():
    # 50 rounds: 5 check cycles (10 red checks) + 20 idle cycles = 100 plies.
    positions, moves = line(ROOK, CHECKS * 5 + IDLE * 20)
    rapid = natural_limit_count(positions, moves, "red", rapid=True)
    assert (rapid.limit, rapid.rounds, rapid.discounted_rounds, rapid.counted_rounds) == (50, 50, 2, 48)
    assert not rapid.reached
    assert natural_limit_count(positions, moves, "black", rapid=True).reached
    assert not natural_limit_count(positions, moves, "black").reached  # 60 in a normal game


def test_arbiter_check_without_claimant_caps_both_sides():
    positions, moves = line(ROOK, CHECKS * 7 + IDLE * 24)
    count = natural_limit_count(positions, moves)
    assert count.claimant is None
    assert (count.discounted_rounds, count.counted_rounds, count.reached) == (4, 58, False)


def test_plies_before_the_recorded_moves_come_from_the_fen():
    # A game resumed from a FEN whose halfmove field says 100 plies without a capture: 20 more reach 60 rounds.
    fen = START_FEN.replace(" 0 1", " 100 51")
    positions, moves = line(fen, HORSES * 5)
    count = natural_limit_count(positions, moves, "red")
    assert (count.unverified_plies, count.plies, count.rounds, count.reached) == (100, 120, 60, True)
    assert "before the recorded moves" in count.reason


def test_history_must_fit():
    positions, moves = line(START_FEN, HORSES)
    with pytest.raises(HistoryError):
        natural_limit_count(positions[:-1], moves)
    with pytest.raises(ValueError):
        natural_limit_count(positions, moves, "white")  # type: ignore[arg-type]


# --- insufficient material (4.2.2) --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fen",
    [
        "4k4/9/9/9/9/9/9/9/9/3K5 w - - 0 1",  # bare kings
        "2bakab2/9/9/9/9/9/9/9/4A4/2BK1AB2 w - - 0 1",  # 士象全 against 士象全
        "3k5/4a4/9/9/9/9/9/9/9/2B1K4 b - - 0 1",
    ],
)
def test_only_kings_advisors_elephants_cannot_win(fen):
    pos = Position.from_fen(fen)
    assert insufficient_material(pos)
    assert "4.2.2" in (insufficient_material_reason(pos) or "")
    # pyffish agrees that neither side has mating material here.
    assert sf.has_insufficient_material("xiangqi", fen, []) == (True, True)


@pytest.mark.parametrize(
    "fen",
    [
        "4k4/9/9/9/9/9/9/9/9/3K1N3 w - - 0 1",  # a lone horse can mate a bare king
        "4k4/9/9/9/9/9/9/9/9/3K1C3 w - - 0 1",  # lone cannon: drawn in theory, but left to the arbiter
        "2P1k4/9/9/9/9/9/9/9/9/3K5 w - - 0 1",  # a pawn on the last rank: left to the arbiter
        "4k4/9/9/9/9/9/9/9/9/R2K5 w - - 0 1",
        START_FEN,
    ],
)
def test_anything_that_might_win_is_not_called_insufficient(fen):
    pos = Position.from_fen(fen)
    assert not insufficient_material(pos)
    assert insufficient_material_reason(pos) is None
