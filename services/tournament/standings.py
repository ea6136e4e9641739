"""Standings of an individual event: points by article 13, then the tie-breaks of article 14 in the order it
gives them, named as the rules name them.

- 14.1, one-game round robin (一局循环制): 积分, then 小分 (the full points of every opponent beaten plus half the
  points of every opponent drawn), 胜局, 直胜, 犯规, 后走局数, 对局时后走.
- 14.2, two- or more-game round robin: 场分 (2/1/0 for each opponent by the game points scored against them, as
  13.2 scores a match), then 局分总和, 胜局, 直胜, 犯规, 后走胜局.
- 14.3.1, one-game Swiss (一局积分编排制): 积分, then 对手分 (the points of every opponent played), 胜局, 犯规,
  后走局数; still equal, the points after the round before the last, then the one before that, and so on.
- 14.3.2, the alternative: 积分, then 累进分 (the running total after each round, summed), 胜局, 犯规, 后走局数;
  still equal, 累进分 again without the first round's term, then without the first two, and so on.

直胜 and 对局时后走 compare only the players still tied: the points each scored, and the games each played with
Black, against the others of that group (for two players, their own game). Players that no criterion separates
share a rank (名次并列) and are listed by start number.

18.5: among the equal on points, players penalised under 18.1 (a warning) or 18.2 (disqualification from the
game) are placed last, by the weight of the penalties and then their number: two criteria before article 14's,
the 18.2 penalties (fewer first), then the 18.1 warnings (fewer first). They are in the chain only where the event
has penalties, so an event without any shows article 14's chain alone.

A bye (轮空) scores as a won game in a Swiss (14.4) and is no game at all in a round robin; it counts for points
only, not as a game won or played with Black; for 对手分 it counts as an opponent with the lowest score of any
player who has points (14.4).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from xqarb.tournament.model import DISQUALIFICATION, WARNING, Event, Game, Player

Values = dict[Any, float]


@dataclass(frozen=True)
class Criterion:
    key: str  # a stable ASCII name for programs
    name: str  # the rules' own name
    article: str
    values: Callable[[Any, Sequence[Any]], Values]  # for the players (or teams) of a tied group
    higher_is_better: bool = True
    group_relative: bool = False  # values that depend on which players are still tied (直胜, 对局时后走)


@dataclass(frozen=True)
class Row:
    rank: int
    player: Player
    points: float
    tiebreaks: tuple[tuple[Criterion, float | None], ...]

    def to_json(self) -> dict[str, object]:
        return {
            "rank": self.rank, "no": self.player.no, "name": self.player.name, "rating": self.player.rating,
            "club": self.player.club, "team": self.player.team, "points": _num(self.points),
            "tiebreaks": [
                {"key": c.key, "name": c.name, "article": c.article, "value": None if v is None else _num(v)}
                for c, v in self.tiebreaks
            ],
        }  # fmt: skip


def _num(v: float) -> int | float:
    return int(v) if float(v).is_integer() else v


class Stats:
    """What the tie-breaks are computed from: every finished game of the event, per player."""

    def __init__(self, event: Event) -> None:
        self.event = event
        self.numbers = [p.no for p in event.players]
        self.rounds = event.rounds_paired()
        self.finished: list[Game] = [g for g in event.games if g.result is not None and not g.is_bye]
        self.byes: list[Game] = [g for g in event.games if g.is_bye]
        # 14.4: a bye scores as a won game in a Swiss; a round robin's bye (an odd field) is no game.
        self.bye_points = event.scheme.win if event.system == "swiss" else 0
        self.round_points: dict[int, list[float]] = {no: [0.0] * self.rounds for no in self.numbers}
        for g in self.finished:
            for no in (g.red, g.black):
                assert no is not None
                self.round_points[no][g.round - 1] += event.scheme.points(g, no)
        for g in self.byes:
            self.round_points[g.red][g.round - 1] += self.bye_points
        self.points: Values = {no: float(sum(pts)) for no, pts in self.round_points.items()}

    def games(self, no: int) -> list[Game]:
        return [g for g in self.finished if no in (g.red, g.black)]

    def count(self, no: int, pred: Callable[[Game, int], bool]) -> float:
        return float(sum(1 for g in self.games(no) if pred(g, no)))

    def fouls(self, no: int) -> float:
        # 犯规 counts the fouls ruled in every game the player played, results or not (a forfeit still counts).
        return float(sum(g.red_fouls if g.red == no else g.black_fouls
                         for g in self.event.games if no in (g.red, g.black)))  # fmt: skip

    def points_after(self, no: int, last_round: int) -> float:
        return float(sum(self.round_points[no][:last_round]))

    def progressive(self, no: int, cut: int = 0) -> float:
        """累进分: the running totals after rounds 1..R summed, less the first `cut` of those terms."""
        running, terms = 0.0, []
        for pts in self.round_points[no]:
            running += pts
            terms.append(running)
        return float(sum(terms[cut:]))

    def match_points(self, no: int, among: Sequence[int] | None = None) -> float:
        """14.2's 场分: 2 for each opponent against whom the player scored more game points, 1 for equal, 0 less."""
        scored: dict[int, list[float]] = {}
        for g in self.games(no):
            opp = g.opponent_of(no)
            assert opp is not None
            if among is not None and opp not in among:
                continue
            mine_theirs = scored.setdefault(opp, [0.0, 0.0])
            mine_theirs[0] += self.event.scheme.points(g, no)
            mine_theirs[1] += self.event.scheme.points(g, opp)
        return float(sum(2 if m > t else 1 if m == t else 0 for m, t in scored.values()))


def _all(fn: Callable[[Stats, int], float]) -> Callable[[Stats, Sequence[int]], Values]:
    return lambda s, group: {no: fn(s, no) for no in group}


def _xiaofen(s: Stats, no: int) -> float:
    """小分 (14.1): the points of every opponent beaten, plus half the points of every opponent drawn."""
    total = 0.0
    for g in s.games(no):
        opp = g.opponent_of(no)
        assert opp is not None
        outcome = g.outcome_for(no)
        if outcome == "win":
            total += s.points[opp]
        elif outcome == "draw":
            total += s.points[opp] / 2
    return total


def _duishoufen(s: Stats, no: int) -> float:
    """对手分 (14.3.1): the points of every opponent played; a bye's "opponent" has the lowest score of any player
    who has points (14.4)."""
    total = sum(s.points[g.opponent_of(no)] for g in s.games(no))  # type: ignore[index]
    byes = sum(1 for g in s.byes if g.red == no)
    if byes:
        scored = [p for p in s.points.values() if p > 0]
        total += byes * (min(scored) if scored else 0.0)
    return float(total)


def _direct(s: Stats, group: Sequence[int]) -> Values:
    """直胜: the points each scored in the games among the tied players."""
    out = {no: 0.0 for no in group}
    for g in s.finished:
        if g.red in out and g.black in out:
            out[g.red] += s.event.scheme.points(g, g.red)
            out[g.black] += s.event.scheme.points(g, g.black)  # type: ignore[index]
    return out


def _black_among(s: Stats, group: Sequence[int]) -> Values:
    """对局时后走: the games each played with Black against the other tied players (for two, their own game)."""
    out = {no: 0.0 for no in group}
    for g in s.finished:
        if g.red in out and g.black in out:
            out[g.black] += 1  # type: ignore[index]
    return out


WINS = Criterion("wins", "胜局", "14", _all(lambda s, no: s.count(no, lambda g, n: g.outcome_for(n) == "win")))
FOULS = Criterion("fouls", "犯规", "14", _all(lambda s, no: s.fouls(no)), higher_is_better=False)
BLACK_GAMES = Criterion("black_games", "后走局数", "14", _all(lambda s, no: s.count(no, lambda g, n: g.black == n)))
BLACK_WINS = Criterion(
    "black_wins", "后走胜局", "14.2",
    _all(lambda s, no: s.count(no, lambda g, n: g.black == n and g.outcome_for(n) == "win")),
)  # fmt: skip
DIRECT = Criterion("direct", "直胜", "14", _direct, group_relative=True)
XIAOFEN = Criterion("xiaofen", "小分", "14.1", _all(_xiaofen))
BLACK_AMONG = Criterion("black_in_game", "对局时后走", "14.1", _black_among, group_relative=True)
GAME_POINTS = Criterion("game_points", "局分总和", "14.2", _all(lambda s, no: s.points[no]))
DUISHOUFEN = Criterion("duishoufen", "对手分", "14.3.1", _all(_duishoufen))
LEIJINFEN = Criterion("leijinfen", "累进分", "14.3.2", _all(lambda s, no: s.progressive(no)))


def _after_round(k: int) -> Criterion:
    return Criterion(f"points_after_round_{k}", f"第{k}轮后积分", "14.3.1",
                     _all(lambda s, no: s.points_after(no, k)))  # fmt: skip


def _leijinfen_cut(k: int) -> Criterion:
    return Criterion(f"leijinfen_cut_{k}", f"累进分(去除前{k}轮)", "14.3.2",
                     _all(lambda s, no: s.progressive(no, k)))  # fmt: skip


def _penalties(article: str) -> Callable[[Stats, int], float]:
    return lambda s, no: float(sum(1 for p in s.event.penalties if p.player == no and p.article == article))


# 18.5: "按其轻重程度和次数": the heavier penalty first (any 18.2 places lower than any number of 18.1), then how many.
DISQUALIFIED = Criterion("penalties_18_2", "取消当场比赛资格", "18.5", _all(_penalties(DISQUALIFICATION)),
                         higher_is_better=False)  # fmt: skip
WARNED = Criterion("penalties_18_1", "警告", "18.5", _all(_penalties(WARNING)), higher_is_better=False)


def criteria_for(event: Event) -> tuple[Criterion, list[Criterion]]:
    """(the primary score, the tie-breaks in order) for this event's system and settings: 18.5's where the event
    has penalties, then article 14's."""
    primary, chain = _article_14(event)
    if any(p.player is not None for p in event.penalties):
        chain = [DISQUALIFIED, WARNED, *chain]
    return primary, chain


def _article_14(event: Event) -> tuple[Criterion, list[Criterion]]:
    rounds = event.rounds_paired()
    if event.system == "round_robin" and event.cycles > 1:
        primary = Criterion("match_points", "场分", "14.2", _all(lambda s, no: s.match_points(no)))
        return primary, [GAME_POINTS, WINS, DIRECT, FOULS, BLACK_WINS]
    primary = Criterion("points", "积分", "13", _all(lambda s, no: s.points[no]))
    if event.system == "round_robin":
        return primary, [XIAOFEN, WINS, DIRECT, FOULS, BLACK_GAMES, BLACK_AMONG]
    if event.swiss_tiebreak == "14.3.1":
        # "如无法区分，则比较前一轮成绩，以此类推": the points after round R-1, then R-2, ...
        return primary, [DUISHOUFEN, WINS, FOULS, BLACK_GAMES] + [_after_round(k) for k in range(rounds - 1, 0, -1)]
    # "去除第一轮得分进行比较 ... 再去除第二轮": the progressive sum without its first term, then its first two ...
    return primary, [LEIJINFEN, WINS, FOULS, BLACK_GAMES] + [_leijinfen_cut(k) for k in range(1, rounds)]


def _split(values: Values, group: Sequence[Any], higher_is_better: bool) -> list[list[Any]]:
    ordered = sorted(set(values[no] for no in group), reverse=higher_is_better)
    return [sorted(no for no in group if values[no] == v) for v in ordered]


def ranked(
    ids: Sequence[Any], primary: Values, chain: Sequence[Criterion], stats: Any
) -> list[tuple[int, Any, dict[str, float | None]]]:
    """(rank, id, the tie-break values shown) in rank order: by `primary`, then each criterion of `chain` in turn
    among the ids still tied; ids nothing separates share a rank. Shared by individual and team standings."""
    shown: dict[Any, dict[str, float | None]] = {i: {} for i in ids}
    for c in chain:
        if not c.group_relative:
            for i, v in c.values(stats, ids).items():
                shown[i][c.key] = v

    def order(group: list[Any], rest: Sequence[Criterion]) -> list[list[Any]]:
        if len(group) == 1 or not rest:
            return [group]
        c = rest[0]
        values = c.values(stats, group)
        if c.group_relative:
            for i, v in values.items():
                shown[i][c.key] = v
        out: list[list[Any]] = []
        for part in _split(values, group, c.higher_is_better):
            out += order(part, rest[1:])
        return out

    out: list[tuple[int, Any, dict[str, float | None]]] = []
    rank = 1
    for tier in _split(primary, ids, True):
        for tied in order(tier, chain):
            out += [(rank, i, shown[i]) for i in tied]
            rank += len(tied)
    return out


def standings(event: Event) -> list[Row]:
    """Every player in rank order: rank (shared where nothing separates them), points, tie-break values."""
    stats = Stats(event)
    primary, chain = criteria_for(event)
    primary_values = primary.values(stats, stats.numbers)
    return [
        Row(rank, event.player(no), primary_values[no], tuple((c, shown.get(c.key)) for c in chain))
        for rank, no, shown in ranked(stats.numbers, primary_values, chain, stats)
    ]
