"""A tournament derived from what was recorded, never kept beside it: the organiser's definition (players, settings,
pairings published ahead of play) and, for each game, the facts of its ledger (GameStarted's event, round and
board number and players; GameEnded's result; the fouls ruled). Pure: the adapter reads the ledger and the file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from xqarb.tournament.model import PENALTY_ARTICLES, Event, Game, Penalty, Player, TournamentError, scheme_named


@dataclass(frozen=True)
class GameFacts:
    """One game as its ledger tells it."""

    game_id: str
    event: str
    round: int
    board_no: int | None
    red_player: str
    black_player: str
    started_at: int  # GameStarted.occurred_at (microseconds): a pairing played again keeps the later game
    result: str | None = None
    red_fouls: int = 0
    black_fouls: int = 0
    # Penalties of article 18 the arbiters recorded in the game (ArbiterDecision, article 18.1 or 18.2): (side,
    # article, note) in ledger order.
    penalties: tuple[tuple[str, str, str], ...] = ()


@dataclass(frozen=True)
class Definition:
    """What the organiser set up (a JSON file): the event's name and settings, its players, published pairings."""

    name: str
    system: str = "swiss"
    rounds: int = 0
    scheme: str = "2-1-0"
    swiss_tiebreak: str = "14.3.1"
    cycles: int = 1
    players: tuple[Player, ...] = ()
    pairings: tuple[Game, ...] = ()
    # Penalties recorded by the organiser (given away from any recorded game, or to a team): 18.5.
    penalties: tuple[Penalty, ...] = ()
    team_method: str | None = None  # "14.7" or "14.8" where chosen (Event.team_method)
    team_counted: int = 0  # 14.8: each team's best N places counted, 0 all
    # The time control of the games a round start publishes (GameStarted.time_control, DESIGN), None: not set.
    time_control: dict[str, Any] | None = None
    # The venue's board id of each board number (台次) in order; empty: the venue's boards in its own order.
    boards: tuple[str, ...] = ()


def _field(obj: Mapping[str, Any], key: str, kind: type, default: Any) -> Any:
    value = obj.get(key, default)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise TournamentError(f"tournament definition: {key!r} must be a {kind.__name__}, not {value!r}")
    return value


def definition_from_json(obj: Any) -> Definition:
    """The organiser's definition from its JSON form; TournamentError names the first thing wrong."""
    if not isinstance(obj, Mapping):
        raise TournamentError("tournament definition: a JSON object is needed")
    players = []
    for i, p in enumerate(_field(obj, "players", list, []), start=1):
        if not isinstance(p, Mapping) or not isinstance(p.get("name"), str) or not p["name"]:
            raise TournamentError(f"tournament definition: player {i} has no name")
        rating = p.get("rating")
        if rating is not None and (not isinstance(rating, int) or isinstance(rating, bool)):
            raise TournamentError(f"tournament definition: player {p['name']!r} has rating {rating!r}")
        players.append(Player(int(p.get("no", i)), p["name"], rating, str(p.get("club", "")), str(p.get("team", ""))))
    pairings = []
    for q in _field(obj, "pairings", list, []):
        try:
            black = None if q.get("black") is None else int(q["black"])
            # A result given here (a game played away from the cameras, a round imported from another program)
            # stands until a recorded game of the pairing says otherwise.
            pairings.append(Game(int(q["round"]), int(q["board"]), int(q["red"]), black, q.get("result")))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise TournamentError(f"tournament definition: pairing {q!r} needs round, board, red, black") from exc
    team_method = obj.get("team_method")
    if team_method is not None and not isinstance(team_method, str):
        raise TournamentError(f"tournament definition: 'team_method' must be a string, not {team_method!r}")
    time_control = obj.get("time_control")
    if time_control is not None and not isinstance(time_control, Mapping):
        raise TournamentError(f"tournament definition: 'time_control' must be an object, not {time_control!r}")
    boards = _field(obj, "boards", list, [])
    if not all(isinstance(b, str) and b for b in boards):
        raise TournamentError(f"tournament definition: 'boards' must list the venue's board ids, not {boards!r}")
    definition = Definition(
        name=_field(obj, "name", str, ""), system=_field(obj, "system", str, "swiss"),
        rounds=_field(obj, "rounds", int, 0), scheme=_field(obj, "scheme", str, "2-1-0"),
        swiss_tiebreak=_field(obj, "swiss_tiebreak", str, "14.3.1"), cycles=_field(obj, "cycles", int, 1),
        players=tuple(players), pairings=tuple(pairings),
        penalties=tuple(_penalty(q) for q in _field(obj, "penalties", list, [])),
        team_method=team_method, team_counted=_field(obj, "team_counted", int, 0),
        time_control=None if time_control is None else dict(time_control), boards=tuple(boards),
    )  # fmt: skip
    if not definition.name:
        raise TournamentError("tournament definition: 'name' is required (GameStarted.event names it)")
    build_event(definition, [])  # every setting checked now, not at the first request
    return definition


def _penalty(q: Any) -> Penalty:
    """A penalty as the definition lists it: {"article": "18.1" or "18.2", "player": start number, or "team": name,
    "round", "note"}."""
    if not isinstance(q, Mapping) or q.get("article") not in PENALTY_ARTICLES:
        raise TournamentError(f"tournament definition: penalty {q!r} needs an article, 18.1 or 18.2 (18.5)")
    player, team, rnd = q.get("player"), q.get("team", ""), q.get("round", 0)
    if player is not None and (not isinstance(player, int) or isinstance(player, bool)):
        raise TournamentError(f"tournament definition: penalty {q!r}: 'player' is a start number")
    if not isinstance(team, str) or not isinstance(rnd, int) or isinstance(rnd, bool):
        raise TournamentError(f"tournament definition: penalty {q!r}: 'team' is a name, 'round' a number")
    return Penalty(q["article"], player, team, rnd, "", str(q.get("note", "")))


def definition_to_json(d: Definition) -> dict[str, Any]:
    return {
        "name": d.name, "system": d.system, "rounds": d.rounds, "scheme": d.scheme,
        "swiss_tiebreak": d.swiss_tiebreak, "cycles": d.cycles, "players": [p.to_json() for p in d.players],
        "pairings": [{"round": g.round, "board": g.board, "red": g.red, "black": g.black, "result": g.result}
                     for g in d.pairings],
        "penalties": [{"article": p.article, **({"player": p.player} if p.player is not None else {"team": p.team}),
                       "round": p.round, "note": p.note} for p in d.penalties],
        "team_method": d.team_method, "team_counted": d.team_counted, "time_control": d.time_control,
        "boards": list(d.boards),
    }  # fmt: skip


def event_names(facts: Iterable[GameFacts]) -> list[str]:
    """The events games were recorded for, the one with the latest game first."""
    latest: dict[str, int] = {}
    for f in facts:
        latest[f.event] = max(latest.get(f.event, 0), f.started_at)
    return sorted(latest, key=lambda name: (-latest[name], name))


def build_event(definition: Definition | None, facts: Sequence[GameFacts], name: str | None = None) -> Event:
    """The event: the definition's players and pairings, each pairing that was played filled in from its game's
    facts. A game whose players the definition does not list adds them (by name, next start numbers): what was
    played is never dropped. A pairing played twice in a round (a game started again) keeps the later game."""
    d = definition or Definition(name=name or "")
    # A round or board below 1 places a game nowhere (ingest refuses it; an older ledger may hold one): left out.
    mine = sorted((f for f in facts if f.event == d.name and f.round >= 1 and (f.board_no is None or f.board_no >= 1)),
                  key=lambda f: (f.round, f.started_at, f.game_id))  # fmt: skip
    players = list(d.players)
    by_name = {p.name: p.no for p in players}

    def number(player_name: str) -> int:
        if player_name not in by_name:
            no = max((p.no for p in players), default=0) + 1
            players.append(Player(no, player_name))
            by_name[player_name] = no
        return by_name[player_name]

    played: dict[tuple[int, frozenset[int]], Game] = {}
    penalties = list(d.penalties)
    for f in mine:
        red, black = number(f.red_player), number(f.black_player)
        # 18.5: a penalty was given to a person; it stands even where the game was replaced by a later one.
        penalties += [Penalty(article, red if side == "red" else black, "", f.round, f.game_id, note)
                      for side, article, note in f.penalties]  # fmt: skip
        key = (f.round, frozenset((red, black)))
        played.pop(key, None)
        # The same player in another game of the round: that earlier game was replaced by this one.
        for other in [k for k in played if k[0] == f.round and k[1] & {red, black}]:
            del played[other]
        played[key] = Game(f.round, f.board_no or 0, red, black, f.result, f.game_id, f.red_fouls, f.black_fouls)
    games: list[Game] = []
    for p in d.pairings:
        busy = any(k[0] == p.round and k[1] & {p.red, p.black} for k in played)
        if not busy:
            games.append(p)
    games += played.values()
    games = _number_boards(games)
    scheme = scheme_named(d.scheme)
    return Event(
        d.name, tuple(players), tuple(games), system=d.system, rounds=d.rounds,  # type: ignore[arg-type]
        scheme=scheme, swiss_tiebreak=d.swiss_tiebreak, cycles=d.cycles,  # type: ignore[arg-type]
        penalties=tuple(penalties), team_method=d.team_method, team_counted=d.team_counted,
    )


def _number_boards(games: list[Game]) -> list[Game]:
    """Games sorted by round and board; a game with no board number (0) takes the next free one of its round."""
    out: list[Game] = []
    for g in sorted(games, key=lambda g: (g.round, g.board == 0, g.board, g.red)):
        if g.board == 0:
            taken = {o.board for o in out if o.round == g.round}
            board = next(b for b in range(1, len(taken) + 2) if b not in taken)
            g = Game(g.round, board, g.red, g.black, g.result, g.game_id, g.red_fouls, g.black_fouls)
        out.append(g)
    return out
