"""The values a tournament is made of: players, games (one pairing of a round on a board), the point scheme of
article 13 and the event itself. Pure values: nothing here reads a file, a clock or the ledger."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

RED_WINS = "1-0"
BLACK_WINS = "0-1"
DRAW = "1/2-1/2"
RESULTS = (RED_WINS, BLACK_WINS, DRAW)

System = Literal["swiss", "round_robin"]
# 18.1: a warning (警告), given by the game's arbiter (监局裁判); 18.2: disqualification from the game (取消当场比赛
# 资格), given by the chief arbiter (裁判长). 18.5 ranks those so penalised last among the equal on points.
WARNING, DISQUALIFICATION = "18.1", "18.2"
PENALTY_ARTICLES = (WARNING, DISQUALIFICATION)
# How team standings are ranked: 14.5 (round robin), 14.6 or 14.7 (Swiss), 14.8 (队员总分制, any system).
TEAM_METHODS = ("14.5", "14.6", "14.7", "14.8")
# 14.3 lets the organiser choose between two tie-break chains for a one-game Swiss (积分编排制).
SwissTiebreak = Literal["14.3.1", "14.3.2"]


class TournamentError(ValueError):
    """A tournament that cannot be what it says (an unknown player, a game played twice, a bad setting)."""


@dataclass(frozen=True)
class Player:
    """A player of the event, known by a start number (序号) unique within it."""

    no: int
    name: str
    rating: int | None = None  # 等级分: 11.1 orders team boards by it; pairing seeds by it
    club: str = ""  # club or province (单位)
    team: str = ""  # the team for team events (13.2), empty in an individual event

    def to_json(self) -> dict[str, object]:
        return {"no": self.no, "name": self.name, "rating": self.rating, "club": self.club, "team": self.team}


@dataclass(frozen=True)
class Game:
    """One pairing: `red` against `black` on `board` in `round`; `black` None is a bye (轮空, 14.4).

    `result` is None until the game ended; fouls (犯规, article 8) are counted per side for the tie-breaks."""

    round: int
    board: int
    red: int
    black: int | None
    result: str | None = None
    game_id: str = ""
    red_fouls: int = 0
    black_fouls: int = 0

    @property
    def is_bye(self) -> bool:
        return self.black is None

    def side_of(self, no: int) -> str | None:
        if no == self.red:
            return "red"
        if no == self.black:
            return "black"
        return None

    def opponent_of(self, no: int) -> int | None:
        return self.black if no == self.red else self.red

    def outcome_for(self, no: int) -> str | None:
        """"win", "draw" or "loss" for player `no`, None while the game has no result."""
        if self.result is None:
            return None
        if self.result == DRAW:
            return "draw"
        red_won = self.result == RED_WINS
        return "win" if red_won == (no == self.red) else "loss"

    def to_json(self) -> dict[str, object]:
        return {
            "round": self.round, "board": self.board, "red": self.red, "black": self.black,
            "result": self.result, "game_id": self.game_id,
            "red_fouls": self.red_fouls, "black_fouls": self.black_fouls,
        }  # fmt: skip


@dataclass(frozen=True)
class Penalty:
    """A penalty of article 18 given to a player (`player`, a start number) or to a team (`team`, player None):
    18.1 a warning, 18.2 disqualification from the game. `round` and `game_id` say where, where known."""

    article: str
    player: int | None = None
    team: str = ""
    round: int = 0
    game_id: str = ""
    note: str = ""

    def to_json(self) -> dict[str, object]:
        return {"article": self.article, "player": self.player, "team": self.team, "round": self.round,
                "game_id": self.game_id, "note": self.note}  # fmt: skip


@dataclass(frozen=True)
class PointScheme:
    """Points for one game (13.1, 13.3): a win, a loss, and a draw for each side, since 13.3 allows a scheme where
    the second mover's (Black's) draw is worth more than the first mover's."""

    win: int = 2
    loss: int = 0
    draw_red: int = 1
    draw_black: int = 1

    def points(self, game: Game, no: int) -> int:
        """Points player `no` scored in `game` (0 while it has no result)."""
        outcome = game.outcome_for(no)
        if outcome == "win":
            return self.win
        if outcome == "loss":
            return self.loss
        if outcome == "draw":
            return self.draw_red if no == game.red else self.draw_black
        return 0

    def to_json(self) -> dict[str, int]:
        return {"win": self.win, "loss": self.loss, "draw_red": self.draw_red, "draw_black": self.draw_black}


# 13.1: win 2, loss 0, draw 1 each.
CXA_2_1_0 = PointScheme(2, 0, 1, 1)
# 13.3, first example: win 3, loss 0, draw 1 each.
WIN_3_DRAW_1 = PointScheme(3, 0, 1, 1)
# 13.3, second example: win 3, loss 0, a draw 1 for the first mover (Red) and 2 for the second mover (Black).
WIN_3_BLACK_DRAW_2 = PointScheme(3, 0, 1, 2)
SCHEMES = {"2-1-0": CXA_2_1_0, "3-1-0": WIN_3_DRAW_1, "3-0-1/2": WIN_3_BLACK_DRAW_2}


def scheme_named(name: str) -> PointScheme:
    try:
        return SCHEMES[name]
    except KeyError:
        raise TournamentError(f"unknown point scheme {name!r}; known: {', '.join(SCHEMES)} (13.1, 13.3)") from None


@dataclass(frozen=True)
class Event:
    """A tournament: its players, the games paired so far (with results where known) and its settings."""

    name: str
    players: tuple[Player, ...]
    games: tuple[Game, ...] = ()
    system: System = "swiss"
    rounds: int = 0  # rounds planned (0: as many as have been paired)
    scheme: PointScheme = CXA_2_1_0
    swiss_tiebreak: SwissTiebreak = "14.3.1"
    # 10.1: a round robin is usually one game a pairing, two where the field is small (14.2 then applies).
    cycles: int = 1
    penalties: tuple[Penalty, ...] = ()
    # Team standings: None for the system's own (14.5 round robin, 14.6 Swiss); "14.7" or "14.8" where chosen.
    team_method: str | None = None
    # 14.8 sums each team's individual places: the organiser's rules (竞赛规程) may count only each team's best N;
    # 0 counts every member (then every team must have as many members, or the sums would not compare).
    team_counted: int = 0
    extra: dict[str, object] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        numbers = [p.no for p in self.players]
        if len(set(numbers)) != len(numbers):
            raise TournamentError(f"event {self.name!r}: start numbers repeat: {sorted(numbers)}")
        known = set(numbers)
        seen: set[tuple[int, int]] = set()
        for g in self.games:
            if g.round < 1 or g.board < 1:
                raise TournamentError(f"round {g.round} board {g.board}: rounds and boards count from 1")
            for no in (g.red, g.black):
                if no is not None and no not in known:
                    raise TournamentError(f"round {g.round} board {g.board}: no player with start number {no}")
            if g.red == g.black:
                raise TournamentError(f"round {g.round} board {g.board}: player {g.red} paired with themself")
            for no in (g.red, g.black):
                if no is not None and (g.round, no) in seen:
                    raise TournamentError(f"round {g.round}: player {no} is paired twice")
                if no is not None:
                    seen.add((g.round, no))
            if g.result is not None and g.result not in RESULTS:
                raise TournamentError(f"round {g.round} board {g.board}: result {g.result!r} is not one of {RESULTS}")
        if self.system not in ("swiss", "round_robin"):
            raise TournamentError(f"unknown system {self.system!r}: 'swiss' (10.3) or 'round_robin' (10.1)")
        if self.swiss_tiebreak not in ("14.3.1", "14.3.2"):
            raise TournamentError(f"unknown Swiss tie-break {self.swiss_tiebreak!r}: '14.3.1' or '14.3.2'")
        teams = {p.team for p in self.players if p.team}
        for pen in self.penalties:
            if pen.article not in PENALTY_ARTICLES:
                raise TournamentError(f"penalty {pen.article!r}: article 18.5 ranks only 18.1 (warning) and 18.2 "
                                      f"(disqualification from the game)")  # fmt: skip
            if (pen.player is None) == (not pen.team):
                raise TournamentError(f"a penalty ({pen.article}) names either a player or a team")
            if pen.player is not None and pen.player not in known:
                raise TournamentError(f"penalty {pen.article}: no player with start number {pen.player}")
            if pen.team and pen.team not in teams:
                raise TournamentError(f"penalty {pen.article}: no team {pen.team!r}")
        self._check_team_method(teams)

    def _check_team_method(self, teams: set[str]) -> None:
        if self.team_method is not None and self.team_method not in TEAM_METHODS:
            raise TournamentError(f"unknown team ranking {self.team_method!r}: one of {', '.join(TEAM_METHODS)}")
        if self.team_counted < 0:
            raise TournamentError(f"team_counted {self.team_counted}: the members counted, 0 for all")
        if self.team_method != "14.8" or not teams:
            return
        sizes = {t: sum(1 for p in self.players if p.team == t) for t in sorted(teams)}
        if self.team_counted and min(sizes.values()) < self.team_counted:
            short = ", ".join(f"{t} ({n})" for t, n in sizes.items() if n < self.team_counted)
            raise TournamentError(f"14.8 counts each team's best {self.team_counted} places; too few members: {short}")
        if not self.team_counted and len(set(sizes.values())) > 1:
            raise TournamentError(
                "14.8 sums each team's places: teams of different sizes "
                f"({', '.join(f'{t} {n}' for t, n in sizes.items())}) need team_counted (the places counted)")

    def player(self, no: int) -> Player:
        for p in self.players:
            if p.no == no:
                return p
        raise TournamentError(f"no player with start number {no}")

    def rounds_paired(self) -> int:
        return max((g.round for g in self.games), default=0)

    def games_of(self, no: int) -> list[Game]:
        return sorted((g for g in self.games if no in (g.red, g.black)), key=lambda g: g.round)
