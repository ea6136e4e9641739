"""The tournament over HTTP (DESIGN, HTTP contract), a Flask blueprint of its own:

- `GET /api/tournament[?event=NAME]`: the event (settings, players), its rounds and their pairings with results;
- `GET /api/tournament/standings[?event=NAME]`: every player in rank order with rank, name, points and the
  tie-break values in the order article 14 applies them (and, where players have teams, the teams' standings by
  13.2 and 14.5 / 14.6 under `teams`);
- `GET /api/tournament/rounds/<n>/pgn[?event=NAME][&notation=chinese|iccs|wxf]`: every game of a round in one PGN file;
- `GET /tournament.html[?event=NAME]`: the standings as a page (server-rendered, refreshing itself);
- `POST /api/tournament/rounds/<n>/start[?event=NAME]` (arbiter token): every pairing of round n started on its
  board (tournament_start.py).

Nothing about the tournament is stored here: each request derives it from the organiser's definition (a JSON file,
`$XQARB_TOURNAMENT` or `<data dir>/tournament.json`, optional) and the ledger's games (GameStarted's event, round
and board number; GameEnded's result; the fouls ruled). The definition may name CSV or TRF-like files to import
(`with_imports`). Without `?event=` the event is the definition's, else the one whose game started last.
"""

from __future__ import annotations

import html
import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flask import Blueprint, Response, current_app, request

from xqarb.referee.http_json import ApiError, error_response, json_response
from xqarb.referee.tournament_start import RoundStarter, StartRefused, request_body, require_arbiter
from xqarb.tournament.facts import Definition, GameFacts, build_event, definition_from_json, event_names
from xqarb.tournament.importing import parse_pairings_csv, parse_players_csv, parse_trf
from xqarb.tournament.model import PENALTY_ARTICLES, RESULTS, Event, Player, TournamentError
from xqarb.tournament.standings import criteria_for, standings
from xqarb.tournament.teams import team_criteria, team_method_of, team_standings

TOURNAMENT_ENV = "XQARB_TOURNAMENT"
# GameStarted is a game's first ledger entry; a few more are read in case an input was ordered before it.
FIRST_ENTRIES = 5
# The standings page reloads itself this often (seconds): results arrive as games end.
PAGE_REFRESH_S = 15


# A game's tail: (result, red fouls, black fouls, when the result was recorded (us), penalties (side, article, note,
# when recorded (us))).
Tail = tuple[str | None, int, int, int, tuple[tuple[str, str, str, int], ...]]


def penalised_side(decision: dict[str, Any]) -> str | None:
    """Who an ArbiterDecision of article 18.1 or 18.2 penalises: its `side`; for an 18.2 disqualification that
    names no side, the side it made lose (the result it gave). None where it says neither."""
    side = decision.get("side")
    if side in ("red", "black"):
        return side
    result = decision.get("result")
    if decision.get("article") == "18.2" and result in RESULTS and result != "1/2-1/2":
        return "black" if result == "1-0" else "red"
    return None


def default_definition_path() -> Path:
    from xqarb.config import data_dir

    return Path(os.environ.get(TOURNAMENT_ENV) or data_dir() / "tournament.json")


class TournamentSource:
    """Reads the facts a tournament is derived from: the ledger's games and the organiser's definition file.

    Caches only what cannot change: a game's GameStarted (its first entries are immutable), and a game's
    result and fouls per ledger head (a new entry changes the head)."""

    def __init__(
        self, ledger: Any, definition_path: Callable[[], Path] = default_definition_path,
        delay_for_board: Callable[[str], float] = lambda board: 0.0, clock: Callable[[], float] = time.time,
    ) -> None:  # fmt: skip
        self.ledger = ledger
        self.definition_path = definition_path
        self.delay_for_board = delay_for_board
        self.clock = clock
        self._started: dict[str, dict[str, Any] | None] = {}
        self._tails: dict[str, tuple[int, Tail]] = {}
        self._lock = threading.Lock()

    def definition(self) -> Definition | None:
        path = self.definition_path()
        if not path.is_file():
            return None
        try:
            return definition_from_json(with_imports(json.loads(path.read_text(encoding="utf-8")), path.parent))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ApiError(503, "bad_tournament_definition", f"{path}: not JSON: {exc}") from exc
        except (TournamentError, OSError) as exc:
            raise ApiError(503, "bad_tournament_definition", f"{path}: {exc}") from exc

    def _game_started(self, game_id: str) -> dict[str, Any] | None:
        if game_id in self._started:
            return self._started[game_id]
        found = None
        for entry in self.ledger.entries(game_id, 0, FIRST_ENTRIES):
            if entry.event.type == "GameStarted":
                found = {**entry.event.data, "occurred_at": entry.event.occurred_at}
                break
        if found is not None or self.ledger.head(game_id)[0] >= FIRST_ENTRIES:
            self._started[game_id] = found
        return found

    def _tail(self, game_id: str, head: int) -> Tail:
        """(result, red fouls, black fouls, when the result was recorded in microseconds, penalties) of a game."""
        cached = self._tails.get(game_id)
        if cached and cached[0] == head:
            return cached[1]
        result, ended_at, fouls = None, 0, {"red": 0, "black": 0}
        penalties: list[tuple[str, str, str, int]] = []
        for entry in self.ledger.entries(game_id, 0, None):
            ev = entry.event
            if ev.type == "GameEnded":
                result, ended_at = ev.data["result"], ev.received_at
            elif ev.type == "Ruling" and ev.data.get("kind") == "foul" and ev.data.get("side") in fouls:
                fouls[ev.data["side"]] += 1
            elif ev.type == "ArbiterDecision" and ev.data.get("article") in PENALTY_ARTICLES:
                side = penalised_side(ev.data)
                if side is not None:
                    penalties.append((side, ev.data["article"], ev.data.get("note") or "", ev.received_at))
        value = (result, fouls["red"], fouls["black"], ended_at, tuple(penalties))
        self._tails[game_id] = (head, value)
        return value

    def facts(self) -> list[GameFacts]:
        out = []
        with self._lock:
            for info in self.ledger.games():
                started = self._game_started(info.game_id)
                if not started or not started.get("event") or started.get("round") is None:
                    continue
                result, red_fouls, black_fouls, ended_at, penalties = self._tail(info.game_id, info.entries)
                # Public reads keep the board's broadcast delay (DESIGN): a result or a penalty shows once the
                # delay passed.
                shown_until = self.clock() - self.delay_for_board(info.board_id)
                if result is not None and ended_at / 1e6 > shown_until:
                    result = None
                shown = tuple((side, art, note) for side, art, note, at in penalties if at / 1e6 <= shown_until)
                out.append(GameFacts(
                    info.game_id, started["event"], int(started["round"]), started.get("board_no"),
                    started["red_player"], started["black_player"], int(started["occurred_at"]),
                    result, red_fouls, black_fouls, shown,
                ))  # fmt: skip
        return out

    def event(self, name: str | None) -> Event:
        definition = self.definition()
        facts = self.facts()
        if name is None:
            names = [definition.name] if definition else event_names(facts)
            if not names:
                raise ApiError(
                    404, "no_tournament",
                    "no tournament defined and no game recorded with an event (GameStarted.event and round)",
                )  # fmt: skip
            name = names[0]
        if definition is not None and definition.name != name:
            definition = None
        if definition is None and name not in event_names(facts):
            raise ApiError(404, "unknown_event", f"no tournament {name!r}")
        try:
            return build_event(definition, facts, name)
        except TournamentError as exc:
            raise ApiError(409, "inconsistent_tournament", str(exc)) from exc


def with_imports(obj: Any, base: Path) -> Any:
    """The definition with the files it names read in: `"players_csv"`, `"pairings_csv"` (CSV as exported by
    tournament programs) or `"trf"` (a TRF-like report: name, players and rounds with results), relative to the
    definition's folder. Players or pairings given inline stay as given."""
    if not isinstance(obj, dict):
        return obj
    out = dict(obj)
    players: tuple[Player, ...] = ()
    if isinstance(obj.get("trf"), str):
        name, players, games = parse_trf((base / obj["trf"]).read_text(encoding="utf-8"))
        out.setdefault("name", name)
        out.setdefault("pairings", [g.to_json() for g in games])
    if isinstance(obj.get("players_csv"), str):
        players = parse_players_csv((base / obj["players_csv"]).read_text(encoding="utf-8"))
    if players:
        out.setdefault("players", [p.to_json() for p in players])
    if isinstance(obj.get("pairings_csv"), str):
        inline = [p for p in out.get("players", []) if isinstance(p, dict)]
        known = players or tuple(Player(int(p.get("no", i)), str(p.get("name", ""))) for i, p in enumerate(inline, 1))
        games = parse_pairings_csv((base / obj["pairings_csv"]).read_text(encoding="utf-8"), known)
        out.setdefault("pairings", [g.to_json() for g in games])
    return out


def event_json(event: Event) -> dict[str, Any]:
    names = {p.no: p.name for p in event.players}

    def side(no: int | None) -> dict[str, Any] | None:
        return None if no is None else {"no": no, "name": names[no]}

    rounds = []
    for r in range(1, event.rounds_paired() + 1):
        games = sorted((g for g in event.games if g.round == r), key=lambda g: g.board)
        rounds.append({
            "round": r,
            "pairings": [{"board": g.board, "red": side(g.red), "black": side(g.black), "bye": g.is_bye,
                          "result": g.result, "game_id": g.game_id or None} for g in games],
        })  # fmt: skip
    primary, chain = criteria_for(event)
    return {
        "event": {
            "name": event.name, "system": event.system, "rounds": event.rounds or event.rounds_paired(),
            "rounds_paired": event.rounds_paired(), "scheme": event.scheme.to_json(),
            "swiss_tiebreak": event.swiss_tiebreak if event.system == "swiss" else None, "cycles": event.cycles,
            "ranking": [{"key": c.key, "name": c.name, "article": c.article} for c in (primary, *chain)],
        },
        "players": [p.to_json() for p in sorted(event.players, key=lambda p: p.no)],
        "rounds": rounds,
        "penalties": [p.to_json() for p in event.penalties],  # 18.1, 18.2: ranked by 18.5
    }  # fmt: skip


def standings_json(event: Event) -> dict[str, Any]:
    primary, chain = criteria_for(event)
    out: dict[str, Any] = {
        "event": event.name,
        "after_round": max((g.round for g in event.games if g.result is not None or g.is_bye), default=0),
        "points": {"key": primary.key, "name": primary.name, "article": primary.article},
        "tiebreaks": [{"key": c.key, "name": c.name, "article": c.article} for c in chain],
        "standings": [row.to_json() for row in standings(event)],
    }
    if any(p.team for p in event.players):  # a team event (13.2, 14.5 to 14.8): the teams' standings too
        method = team_method_of(event)
        primary, chain = team_criteria(event, method)
        out["team_ranking"] = {
            "article": method, "points": {"key": primary.key, "name": primary.name, "article": primary.article},
            "tiebreaks": [{"key": c.key, "name": c.name, "article": c.article} for c in chain],
        }  # fmt: skip
        out["teams"] = [row.to_json() for row in team_standings(event)]
    return out


def standings_page(data: dict[str, Any]) -> str:
    esc = html.escape
    heads = "".join(f"<th title='{esc(t['article'])}'>{esc(t['name'])}</th>" for t in data["tiebreaks"])
    rows = []
    for row in data["standings"]:
        cells = "".join(f"<td>{'' if t['value'] is None else t['value']}</td>" for t in row["tiebreaks"])
        rows.append(f"<tr><td>{row['rank']}</td><td class='name'>{esc(row['name'])}</td><td>{esc(row['club'])}</td>"
                    f"<td>{row['rating'] or ''}</td><td class='pts'>{row['points']}</td>{cells}</tr>")  # fmt: skip
    return f"""<!doctype html>
<html lang="zh"><head><meta charset="utf-8"><meta http-equiv="refresh" content="{PAGE_REFRESH_S}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{esc(data['event'])} · 名次 Standings</title>
<style>
body {{ font-family: "Noto Sans CJK SC", "Noto Sans SC", sans-serif; margin: 1.5em; color: #222; }}
table {{ border-collapse: collapse; }}
th, td {{ padding: .3em .7em; border-bottom: 1px solid #ccc; text-align: right; }}
td.name, th.name {{ text-align: left; }} td.pts {{ font-weight: bold; }} th {{ background: #f3ede0; }}
</style></head><body>
<h1>{esc(data['event'])}</h1>
<p>名次 Standings · 第{data['after_round']}轮后 after round {data['after_round']}</p>
<table id="standings"><thead><tr><th>名次</th><th class="name">棋手</th><th>单位</th><th>等级分</th>
<th>{esc(data['points']['name'])}</th>{heads}</tr></thead>
<tbody>{''.join(rows)}</tbody></table>
</body></html>
"""


def round_pgn(event: Event, round_no: int, entries: Callable[[str], list[dict[str, Any]]],
              notation: str = "chinese") -> str:
    """Every game of the round as PGN (moves in Chinese, ICCS or WXF notation), board by board; a pairing without a
    game yet is left out."""
    from xqarb.referee.api import pgn_of

    games = sorted((g for g in event.games if g.round == round_no and g.game_id), key=lambda g: g.board)
    return "\n".join(pgn_of(g.game_id, entries(g.game_id), notation) for g in games)


def tournament_blueprint(
    ledger: Any, definition_path: Callable[[], Path] = default_definition_path,
    delay_for_board: Callable[[str], float] = lambda board: 0.0, clock: Callable[[], float] = time.time,
    ingest: Any | None = None,
) -> Blueprint:  # fmt: skip
    """The routes; `delay_for_board` is the venue's broadcast delay (seconds) of each board's tournament; `ingest`
    (xqarb.ingest.app.Ingest) publishes a round's games, by default the app's RefereeApi's."""
    source = TournamentSource(ledger, definition_path, delay_for_board, clock)
    bp = Blueprint("tournament_api", __name__)

    bp.register_error_handler(ApiError, error_response)

    def wanted() -> str | None:
        name = request.args.get("event")
        if name is not None and not name.strip():
            raise ApiError(400, "bad_parameter", "event must name a tournament")
        return name

    @bp.get("/api/tournament")
    def tournament() -> Response:
        return json_response(event_json(source.event(wanted())))

    @bp.get("/api/tournament/standings")
    def tournament_standings() -> Response:
        return json_response(standings_json(source.event(wanted())))

    @bp.get("/api/tournament/rounds/<round_no>/pgn")
    def tournament_round_pgn(round_no: str) -> Response:
        event = source.event(wanted())
        if not (round_no.isascii() and round_no.isdigit()) or not 1 <= int(round_no) <= event.rounds_paired():
            raise ApiError(404, "unknown_round", f"{event.name!r} has rounds 1 to {event.rounds_paired()}")

        def entries(game_id: str) -> list[dict[str, Any]]:
            from xqarb.referee.public_reads import public_prefix

            rows = ledger.entries(game_id, 0, None)
            delay = delay_for_board(rows[0].event.board_id) if rows else 0.0
            if delay > 0:  # public reads keep the board's broadcast delay (DESIGN): what was received by then
                cutoff = int((source.clock() - delay) * 1e6)
                # At least GameStarted: the pairing (players, round, board) is public already.
                rows = rows[: max(1, public_prefix([e.event.received_at for e in rows], cutoff))]
            return [e.to_json() for e in rows]

        notation = request.args.get("notation", "chinese")
        if notation not in ("chinese", "iccs", "wxf"):
            raise ApiError(400, "bad_parameter", f"notation must be chinese, iccs or wxf, not {notation!r}")
        resp = Response(round_pgn(event, int(round_no), entries, notation), mimetype="application/x-chess-pgn")
        resp.headers["Content-Disposition"] = f'attachment; filename="round-{int(round_no)}.pgn"'
        return resp

    starter = RoundStarter()
    live = TournamentSource(ledger, definition_path)  # the arbiter's view: no broadcast delay

    @bp.post("/api/tournament/rounds/<round_no>/start")
    def tournament_round_start(round_no: str) -> Response:
        api = current_app.extensions.get("xq_api")
        the_ingest = ingest if ingest is not None else getattr(api, "ingest", None)
        if the_ingest is None:
            raise ApiError(503, "no_ingest", "this API process does not accept arbiter actions")
        try:
            if not (round_no.isascii() and round_no.isdigit()):
                raise StartRefused(404, "unknown_round", f"round {round_no[:20]!r} is not a round number")
            require_arbiter(the_ingest)
            body = request_body(the_ingest.config.limits.max_json_bytes)
            event = live.event(wanted())
            definition = live.definition()
            mine = definition if definition is not None and definition.name == event.name else None
            boards = list(mine.boards) if mine and mine.boards else list(the_ingest.config.boards)
            answer = starter.start(the_ingest, event, int(round_no), boards, mine.time_control if mine else None,
                                   body)  # fmt: skip
        except StartRefused as exc:
            return json_response({"error": exc.error, "detail": exc.detail, **exc.body}, exc.status)
        return json_response(answer, 202)

    @bp.get("/tournament.html")
    def tournament_page() -> Response:
        return Response(standings_page(standings_json(source.event(wanted()))), mimetype="text/html")

    return bp
