"""Starting a round across all its boards: which pairings a round start publishes, or why the round cannot start.
Pure: the adapter (services/referee/tournament_start.py) reads the event and publishes the games.

A round's pairings are the organiser's (published in the definition, or already recorded by a game of the round);
a round nobody paired yet, the next one, is paired here by the event's system (Berger tables or the Swiss), the
same pairing the core gives anyone who asks. The previous round must be over first: a Swiss pairs by the results
(10.3), and a player cannot sit at two boards.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from dataclasses import dataclass

from xqarb.tournament.model import Event, Game, TournamentError
from xqarb.tournament.pairing import next_round


class RoundStartError(TournamentError):
    """A round that cannot start now; `error` is the API's error code."""

    error = "round_not_startable"


class UnknownRound(RoundStartError):
    error = "unknown_round"


class PreviousRoundUnfinished(RoundStartError):
    error = "previous_round_unfinished"


class RoundAlreadyStarted(RoundStartError):
    error = "round_already_started"


class ByeNotPublished(RoundStartError):
    error = "bye_not_published"


@dataclass(frozen=True)
class RoundStart:
    """The games to start (`to_start`), the round's pairings already started or with a result (`running`) and its
    byes."""

    round: int
    to_start: tuple[Game, ...]
    running: tuple[Game, ...]
    byes: tuple[Game, ...]


def round_pairings(event: Event, round_no: int) -> list[Game]:
    """The pairings of `round_no`: those known (definition or ledger), else, for the next round, the core's."""
    known = sorted((g for g in event.games if g.round == round_no), key=lambda g: g.board)
    if known:
        return known
    if round_no == event.rounds_paired() + 1:
        return next_round(event)
    raise PreviousRoundUnfinished(f"round {round_no - 1} of {event.name!r} has not been played: rounds start in order")


def plan_round_start(event: Event, round_no: int, started_boards: Collection[int] = ()) -> RoundStart:
    """What starting `round_no` publishes. `started_boards`: boards of this round whose game was started but is not
    in the event yet (published moments ago). RoundStartError says why the round cannot start."""
    # The rounds planned; where the organiser planned none, those paired and the next.
    last = max(event.rounds or event.rounds_paired() + 1, event.rounds_paired())
    if not 1 <= round_no <= last:
        raise UnknownRound(f"{event.name!r} has rounds 1 to {last}, not {round_no}")
    if round_no > 1:
        unfinished = sorted(g.board for g in event.games if g.round == round_no - 1 and not g.is_bye
                            and g.result is None)  # fmt: skip
        if unfinished:
            raise PreviousRoundUnfinished(
                f"round {round_no - 1} of {event.name!r} has no result yet on board(s) "
                f"{', '.join(map(str, unfinished))}: round {round_no} starts once every game of it ended")
    pairings = round_pairings(event, round_no)
    byes = tuple(g for g in pairings if g.is_bye)
    games = [g for g in pairings if not g.is_bye]
    if byes and not any(g.round == round_no for g in event.games):
        # 14.4: a bye scores as a won game: it must be on record, and only the organiser's definition records one.
        raise ByeNotPublished(f"round {round_no} pairs player {byes[0].red} with a bye: publish the round's pairings "
                              f"(with the bye) in the tournament definition, then start it")  # fmt: skip
    # A pairing with a game, or with a result entered by hand (a game away from the cameras), is not started again.
    running = tuple(g for g in games if g.game_id or g.result is not None or g.board in started_boards)
    if games and len(running) == len(games):
        raise RoundAlreadyStarted(f"round {round_no} of {event.name!r} is already started on every board "
                                  f"({', '.join(str(g.board) for g in running)})")  # fmt: skip
    return RoundStart(round_no, tuple(g for g in games if g not in running), running, byes)


def round_game_id(event_name: str, round_no: int, board: int) -> str:
    """The game id a round start gives a pairing: the same for the same event, round and board, so a start
    published twice (a retry) is one game (the ledger keeps an event id once)."""
    digest = hashlib.sha256(event_name.encode("utf-8")).hexdigest()[:12]
    return f"t{digest}-r{round_no}-b{board}"
