"""Team standings: matches scored by 13.2 and ranked by 14.5 (round robin), 14.6 or 14.7 (Swiss).

A team match is every game of a round between players of two teams (Player.team). 13.2: each game's points are
the match's 局分 (game points, by the event's point scheme); the team with more 局分 wins the match, 场分 2, a
tied match 1 each, a lost one 0. A match counts once every one of its games has a result.

- 14.5, one-game round robin: 场分, then 全队总局分, 全队胜场 (matches won), 全队胜局 (games won), 直胜 (the
  场分 of the matches among the tied teams), 全队犯规 (fewer first), then 后走胜局 and 后走局数.
- 14.6, one-game Swiss: 场分, then 团体对手分 (the 场分 of every team met), 全队总局分, 全队胜场, 全队胜局,
  全队犯规; still equal, the 场分 after the round before the last, then the one before that, and so on.
- 14.7, the Swiss alternative: 全队总局分 alone; teams it does not separate share the rank.
- 14.8, 队员总分制 (11.5: no boards; the team's result is its players' results in the individual event), in a
  round robin or a Swiss alike: the sum of the team's players' places in the individual standings, fewer first;
  equal sums, the better (smaller) best individual place; teams still equal share the rank. The organiser may
  count each team's best N places only (Event.team_counted); shared individual places count as shared.

18.5: among the teams equal on their primary score (场分, or 全队总局分 under 14.7), teams penalised under 18.1 or
18.2 come last, heavier penalties and then more of them further down. A team's penalties are those given to the
team and to its players. Under 14.8 the individual places already place penalised players last (18.5 in the
individual standings).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from xqarb.tournament.model import DISQUALIFICATION, WARNING, Event, Game
from xqarb.tournament.standings import Criterion, Values, _num, ranked, standings

TeamMethod = Literal["14.5", "14.6", "14.7", "14.8"]


@dataclass(frozen=True)
class TeamMatch:
    round: int
    teams: tuple[str, str]
    games: tuple[Game, ...]

    def complete(self) -> bool:
        return all(g.result is not None for g in self.games)


@dataclass(frozen=True)
class TeamRow:
    rank: int
    team: str
    points: float
    tiebreaks: tuple[tuple[Criterion, float | None], ...]

    def to_json(self) -> dict[str, object]:
        return {
            "rank": self.rank, "team": self.team, "points": _num(self.points),
            "tiebreaks": [
                {"key": c.key, "name": c.name, "article": c.article, "value": None if v is None else _num(v)}
                for c, v in self.tiebreaks
            ],
        }  # fmt: skip


def team_matches(event: Event) -> list[TeamMatch]:
    """The matches of the event: games grouped by round and the two teams playing (games within a team, byes and
    players without a team belong to no match)."""
    team = {p.no: p.team for p in event.players}
    grouped: dict[tuple[int, tuple[str, str]], list[Game]] = {}
    for g in event.games:
        if g.black is None or not team[g.red] or not team[g.black] or team[g.red] == team[g.black]:
            continue
        pair = tuple(sorted((team[g.red], team[g.black])))
        grouped.setdefault((g.round, pair), []).append(g)  # type: ignore[arg-type]
    return [TeamMatch(r, pair, tuple(sorted(gs, key=lambda g: g.board))) for (r, pair), gs in sorted(grouped.items())]


class TeamStats:
    def __init__(self, event: Event) -> None:
        self.event = event
        self.team_of = {p.no: p.team for p in event.players}
        self.teams = sorted({p.team for p in event.players if p.team})
        self.matches = [m for m in team_matches(event) if m.complete()]
        self.rounds = event.rounds_paired()

    def game_points(self, match: TeamMatch, team: str) -> float:
        """局分 of `team` in `match` (13.2)."""
        total = 0.0
        for g in match.games:
            no = g.red if self.team_of[g.red] == team else g.black
            total += self.event.scheme.points(g, no)  # type: ignore[arg-type]
        return total

    def match_points(self, match: TeamMatch, team: str) -> float:
        """场分 of `team` in `match` (13.2): 2 for more 局分, 1 for equal, 0 for fewer."""
        other = match.teams[1] if match.teams[0] == team else match.teams[0]
        mine, theirs = self.game_points(match, team), self.game_points(match, other)
        return 2.0 if mine > theirs else 1.0 if mine == theirs else 0.0

    def of(self, team: str, among: Sequence[str] | None = None, last_round: int | None = None) -> list[TeamMatch]:
        return [m for m in self.matches if team in m.teams and (among is None or set(m.teams) <= set(among))
                and (last_round is None or m.round <= last_round)]  # fmt: skip

    def total_match_points(self, team: str, last_round: int | None = None) -> float:
        return sum(self.match_points(m, team) for m in self.of(team, last_round=last_round))

    def games_of(self, team: str) -> list[tuple[Game, int]]:
        return [(g, g.red if self.team_of[g.red] == team else g.black)  # type: ignore[misc]
                for m in self.of(team) for g in m.games]  # fmt: skip


def _each(fn: Any) -> Any:
    return lambda s, group: {t: float(fn(s, t)) for t in group}


def _direct(s: TeamStats, group: Sequence[str]) -> Values:
    return {t: float(sum(s.match_points(m, t) for m in s.of(t, among=group))) for t in group}


MATCH_POINTS = Criterion("match_points", "场分", "13.2", _each(lambda s, t: s.total_match_points(t)))
TEAM_GAME_POINTS = Criterion("team_game_points", "全队总局分", "14.5",
                             _each(lambda s, t: sum(s.game_points(m, t) for m in s.of(t))))  # fmt: skip
MATCHES_WON = Criterion("matches_won", "全队胜场", "14.5",
                        _each(lambda s, t: sum(s.match_points(m, t) == 2 for m in s.of(t))))  # fmt: skip
TEAM_WINS = Criterion("team_wins", "全队胜局", "14.5",
                      _each(lambda s, t: sum(g.outcome_for(no) == "win" for g, no in s.games_of(t))))  # fmt: skip
TEAM_DIRECT = Criterion("direct", "直胜", "14.5", _direct, group_relative=True)
TEAM_FOULS = Criterion(
    "team_fouls", "全队犯规", "14.5",
    _each(lambda s, t: sum(g.red_fouls if g.red == no else g.black_fouls for g, no in s.games_of(t))),
    higher_is_better=False,
)  # fmt: skip
TEAM_BLACK_WINS = Criterion("black_wins", "后走胜局", "14.5", _each(
    lambda s, t: sum(g.black == no and g.outcome_for(no) == "win" for g, no in s.games_of(t))))  # fmt: skip
TEAM_BLACK_GAMES = Criterion("black_games", "后走局数", "14.5",
                             _each(lambda s, t: sum(g.black == no for g, no in s.games_of(t))))  # fmt: skip


def _opponents_match_points(s: TeamStats, team: str) -> float:
    """团体对手分 (14.6): the 场分 of every team met."""
    return sum(s.total_match_points(m.teams[1] if m.teams[0] == team else m.teams[0]) for m in s.of(team))


TEAM_OPPONENTS = Criterion("team_opponents", "团体对手分", "14.6", _each(_opponents_match_points))


def _after_round(k: int) -> Criterion:
    return Criterion(f"match_points_after_round_{k}", f"第{k}轮后场分", "14.6",
                     _each(lambda s, t: s.total_match_points(t, last_round=k)))  # fmt: skip


def _team_penalties(article: str) -> Any:
    def count(s: TeamStats, t: str) -> int:
        return sum(1 for p in s.event.penalties
                   if p.article == article and (p.team == t or (p.player is not None and s.team_of[p.player] == t)))
    return _each(count)


# 18.5 for teams: the heavier penalty first, then how many (as for players).
TEAM_DISQUALIFIED = Criterion("penalties_18_2", "取消当场比赛资格", "18.5", _team_penalties(DISQUALIFICATION),
                              higher_is_better=False)  # fmt: skip
TEAM_WARNED = Criterion("penalties_18_1", "警告", "18.5", _team_penalties(WARNING), higher_is_better=False)


# 14.8's values, for the rows: the places summed (the primary score, fewer first) and the best place.
# Their stats are each team's places, best first.
PLACE_SUM = Criterion("place_sum", "个人名次总和", "14.8", lambda s, group: {t: float(sum(s[t])) for t in group},
                      higher_is_better=False)  # fmt: skip
BEST_PLACE = Criterion("best_place", "最高个人名次", "14.8", lambda s, group: {t: float(s[t][0]) for t in group},
                       higher_is_better=False)  # fmt: skip


def team_criteria(event: Event, method: TeamMethod) -> tuple[Criterion, list[Criterion]]:
    """(the primary score, the tie-breaks in order) of the team ranking `method`: 18.5's where there are penalties
    (not under 14.8, whose individual places already apply it), then article 14's."""
    if method == "14.8":
        return PLACE_SUM, [BEST_PLACE]
    primary, chain = _article_14(event, method)
    if event.penalties:
        chain = [TEAM_DISQUALIFIED, TEAM_WARNED, *chain]
    return primary, chain


def _article_14(event: Event, method: TeamMethod) -> tuple[Criterion, list[Criterion]]:
    if method == "14.5":
        return MATCH_POINTS, [TEAM_GAME_POINTS, MATCHES_WON, TEAM_WINS, TEAM_DIRECT, TEAM_FOULS, TEAM_BLACK_WINS,
                              TEAM_BLACK_GAMES]  # fmt: skip
    if method == "14.6":
        rounds = event.rounds_paired()
        return MATCH_POINTS, [TEAM_OPPONENTS, TEAM_GAME_POINTS, MATCHES_WON, TEAM_WINS, TEAM_FOULS] + [
            _after_round(k) for k in range(rounds - 1, 0, -1)
        ]
    return TEAM_GAME_POINTS, []


def member_places(event: Event) -> dict[str, list[int]]:
    """Each team's players' places in the individual standings, best first (14.8 counts them)."""
    places: dict[str, list[int]] = {}
    for row in standings(event):
        if row.player.team:
            places.setdefault(row.player.team, []).append(row.rank)
    counted = event.team_counted or None
    return {t: sorted(ps)[:counted] for t, ps in sorted(places.items())}


def member_total_standings(event: Event) -> list[TeamRow]:
    """14.8 (队员总分制): teams by the sum of their players' individual places, fewer first; equal sums by the
    best individual place (smaller first); still equal, a shared rank."""
    places = member_places(event)
    sums = PLACE_SUM.values(places, list(places))
    # `ranked` puts higher primary values first: the sums are negated for the order, and shown as they are.
    rows = ranked(list(places), {t: -v for t, v in sums.items()}, [BEST_PLACE], places)
    return [TeamRow(rank, t, sums[t], ((BEST_PLACE, shown["best_place"]),)) for rank, t, shown in rows]


def team_method_of(event: Event, method: str | None = None) -> TeamMethod:
    """The team ranking used: the one asked for, else the event's setting, else 14.5 (round robin) or 14.6."""
    chosen = method or event.team_method or ("14.5" if event.system == "round_robin" else "14.6")
    return chosen  # type: ignore[return-value]


def team_standings(event: Event, method: TeamMethod | None = None) -> list[TeamRow]:
    """Teams in rank order by `method`, else the event's team ranking (14.5 for a round robin, 14.6 for a Swiss
    unless the organiser chose 14.7 or 14.8)."""
    method = team_method_of(event, method)
    if method == "14.8":
        return member_total_standings(event)
    stats = TeamStats(event)
    primary, chain = team_criteria(event, method)
    values = primary.values(stats, stats.teams)
    return [
        TeamRow(rank, team, values[team], tuple((c, shown.get(c.key)) for c in chain))
        for rank, team, shown in ranked(stats.teams, values, chain, stats)
    ]
