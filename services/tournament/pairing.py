"""Pairings: the round robin's Berger table (appendix 2, 12.1: the first-listed of each pair plays Red) and a Swiss
(积分编排制, 10.3) by score groups with no rematch and balanced colours.

Everything is deterministic: the same players and games give the same pairings, byte for byte.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xqarb.tournament.model import Event, Game, Player, TournamentError

# A Swiss pairing never gives a player more than this many games more with one colour than with the other, nor the
# same colour this many times plus one in a row: the second mover's disadvantage is what 后走局数 (14) repays.
MAX_COLOUR_SURPLUS = 2
# The backtracking search of a Swiss round gives up (PairingError) after this many tries: far more than a field of
# a few hundred needs when a pairing exists, and a bound on the time when none does.
MAX_SEARCH_STEPS = 200_000


class PairingError(TournamentError):
    """No pairing of the round satisfies the rules (every opponent already met, or colours cannot be balanced)."""


def berger_round(n: int, round_no: int) -> list[tuple[int, int]]:
    """Round `round_no` (1-based) of the Berger table for `n` players (n even; an odd field adds a dummy n+1 that
    stands for the bye): (red, black) pairs of start numbers, board 1 first."""
    if n % 2:
        n += 1
    if not 1 <= round_no <= n - 1:
        raise PairingError(f"a round robin of {n} has rounds 1 to {n - 1}, not {round_no}")
    k = ((round_no - 1) * (n // 2)) % (n - 1)
    ring = [(k + j) % (n - 1) + 1 for j in range(n - 1)]
    # The last number is fixed; it plays the ring's first, as Black in odd rounds and as Red in even ones.
    pairs = [(ring[0], n) if round_no % 2 else (n, ring[0])]
    pairs += [(ring[i], ring[n - 1 - i]) for i in range(1, n // 2)]
    return pairs


def round_robin_round(players: Sequence[Player], round_no: int, cycles: int = 1) -> list[Game]:
    """The games of a round robin's round: players take Berger numbers in start-number order; a second cycle
    repeats the first with colours exchanged. A player facing the dummy has the bye (listed last)."""
    ordered = sorted(players, key=lambda p: p.no)
    n = len(ordered)
    per_cycle = n - 1 if n % 2 == 0 else n
    if not 1 <= round_no <= per_cycle * cycles:
        raise PairingError(f"{cycles} cycle(s) of {n} players have {per_cycle * cycles} rounds, not {round_no}")
    cycle, within = divmod(round_no - 1, per_cycle)
    games: list[Game] = []
    bye: int | None = None
    for red, black in berger_round(n, within + 1):
        if cycle % 2:
            red, black = black, red
        if red > n or black > n:
            bye = ordered[min(red, black) - 1].no
            continue
        games.append(Game(round_no, len(games) + 1, ordered[red - 1].no, ordered[black - 1].no))
    if bye is not None:
        games.append(Game(round_no, len(games) + 1, bye, None))
    return games


@dataclass(frozen=True)
class _Standing:
    no: int
    points: float
    rating: int
    colours: tuple[str, ...]  # "red" / "black" in round order (byes left out)
    opponents: frozenset[int]
    had_bye: bool

    def surplus(self) -> int:
        return self.colours.count("red") - self.colours.count("black")

    def can_take(self, colour: str) -> bool:
        after = (*self.colours, colour)
        surplus = after.count("red") - after.count("black")
        streak = len(after) > MAX_COLOUR_SURPLUS and len(set(after[-MAX_COLOUR_SURPLUS - 1:])) == 1
        return abs(surplus) <= MAX_COLOUR_SURPLUS and not streak

    def wants(self) -> tuple[int, str | None]:
        """(how strongly, which colour): the colour owed for balance, else the one not played last."""
        s = self.surplus()
        if s:
            return abs(s) + 1, "black" if s > 0 else "red"
        if self.colours:
            return 1, "black" if self.colours[-1] == "red" else "red"
        return 0, None


def _standings_for_pairing(event: Event) -> list[_Standing]:
    points = {p.no: 0.0 for p in event.players}
    colours: dict[int, list[str]] = {p.no: [] for p in event.players}
    opponents: dict[int, set[int]] = {p.no: set() for p in event.players}
    byes: set[int] = set()
    for g in sorted(event.games, key=lambda g: (g.round, g.board)):
        if g.is_bye:
            byes.add(g.red)
            points[g.red] += event.scheme.win  # 14.4: a bye scores as a won game
            continue
        assert g.black is not None
        colours[g.red].append("red")
        colours[g.black].append("black")
        opponents[g.red].add(g.black)
        opponents[g.black].add(g.red)
        points[g.red] += event.scheme.points(g, g.red)
        points[g.black] += event.scheme.points(g, g.black)
    out = [
        _Standing(p.no, points[p.no], p.rating or 0, tuple(colours[p.no]), frozenset(opponents[p.no]), p.no in byes)
        for p in event.players
    ]
    # Seeded by score, then rating, then start number (the order of the pairing table).
    return sorted(out, key=lambda s: (-s.points, -s.rating, s.no))


def _colours(a: _Standing, b: _Standing, board: int) -> tuple[_Standing, _Standing] | None:
    """(red, black) for a pair, `a` seeded higher: the stronger colour wish wins, then the higher seed's; with no
    wishes (round 1) the higher seed has Red on odd boards and Black on even ones. None if no order is allowed."""
    (sa, ca), (sb, cb) = a.wants(), b.wants()
    if ca is None and cb is None:
        first = (a, b) if board % 2 else (b, a)
    elif ca == cb and ca is not None:
        winner = a if sa >= sb else b
        loser = b if winner is a else a
        first = (winner, loser) if ca == "red" else (loser, winner)
    elif ca is not None:
        first = (a, b) if ca == "red" else (b, a)
    else:
        first = (b, a) if cb == "red" else (a, b)
    for red, black in (first, (first[1], first[0])):
        if red.can_take("red") and black.can_take("black"):
            return red, black
    return None


def _colour_cost(a: _Standing, b: _Standing) -> int:
    """0 if both players can have the colour they want, 1 if one cannot."""
    (_, ca), (_, cb) = a.wants(), b.wants()
    return 1 if ca is not None and ca == cb else 0


def _pair(rest: list[_Standing], steps: list[int]) -> list[tuple[_Standing, _Standing]] | None:
    if not rest:
        return []
    steps[0] += 1
    if steps[0] > MAX_SEARCH_STEPS:
        return None
    top, others = rest[0], rest[1:]
    group = [s for s in rest if s.points == top.points]
    ideal = len(group) // 2  # top half against bottom half of the score group
    candidates = sorted(
        (i for i, s in enumerate(others) if s.no not in top.opponents),
        key=lambda i: (abs(top.points - others[i].points), _colour_cost(top, others[i]), abs(i + 1 - ideal), i),
    )
    for i in candidates:
        if _colours(top, others[i], 1) is None:
            continue
        tail = _pair(others[:i] + others[i + 1:], steps)
        if tail is not None:
            return [(top, others[i]), *tail]
    return None


def swiss_round(event: Event, round_no: int) -> list[Game]:
    """The next round of a Swiss: pairs within score groups (top half against bottom half), the lowest-placed
    player who has not had one gets the bye of an odd field (14.4); no two players meet twice; colours by
    `_colours`. Boards are numbered from the top score down; the bye is listed last."""
    if any(g.round >= round_no for g in event.games):
        raise PairingError(f"round {round_no} cannot be paired: games of round {round_no} or later exist")
    if any(g.result is None and not g.is_bye for g in event.games):
        raise PairingError(f"round {round_no} cannot be paired before every game of the earlier rounds has a result")
    table = _standings_for_pairing(event)
    bye_options: list[_Standing | None] = [None]
    if len(table) % 2:
        bye_options = [s for s in reversed(table) if not s.had_bye] or list(reversed(table))
    steps = [0]
    for bye in bye_options:
        rest = [s for s in table if s is not bye]
        pairs = _pair(rest, steps)
        if pairs is None:
            continue
        games = []
        for board, (a, b) in enumerate(pairs, start=1):
            colours = _colours(a, b, board)
            assert colours is not None  # _pair only keeps pairs that have one
            games.append(Game(round_no, board, colours[0].no, colours[1].no))
        if bye is not None:
            games.append(Game(round_no, len(games) + 1, bye.no, None))
        return games
    raise PairingError(
        f"round {round_no}: no pairing of {len(table)} players avoids a rematch with colours balanced "
        f"(searched {steps[0]} steps)"
    )


def next_round(event: Event) -> list[Game]:
    """The pairings of the round after the last one paired, by the event's system."""
    round_no = event.rounds_paired() + 1
    if event.rounds and round_no > event.rounds:
        raise PairingError(f"event {event.name!r} has {event.rounds} rounds; all are paired")
    if event.system == "round_robin":
        return round_robin_round(event.players, round_no, event.cycles)
    return swiss_round(event, round_no)
