"""`xqarb up --demo --players N --rounds R`: a small tournament played on the demo boards, end to end: a round
robin (Berger tables) where R rounds let everyone meet everyone, else a Swiss.

The demo acts as the organiser, the arbiter and the players: before each round it reads the event back from
`GET /api/tournament` (the pairings and results the system recorded), pairs the next round with the tournament
core, publishes the round's pairings (a bye included) in the organiser's definition file, and the arbiter starts
the round on all its boards at once (`POST /api/tournament/rounds/<n>/start`: each board's GameStarted with the
event, round and board number). Each game is one of the shipped real games that has a result (with `--moves N`,
its first N plies), ended by that result (a resignation or an agreed draw). A result that has not reached the
ledger in time is given by the demo's arbiter (ArbiterDecision), so that the next round can be paired. Progress
lines are the same JSON as the plain demo's.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from xqarb.demo import ArbiterDesk, BoardStats, DemoBoard, DemoOptions, post, shipped_games
from xqarb.tournament.model import DRAW, RESULTS, Event, Game, Player, TournamentError
from xqarb.tournament.pairing import next_round

DEMO_EVENT = "xqarb 演示公开赛 Demo Open"
CLUBS = ("北京", "上海", "广东", "四川", "浙江", "湖北", "江苏", "河北")
# Ratings of the demo field: the first seed this, each next one this step lower (distinct seeds for pairing).
TOP_RATING, RATING_STEP = 2450, 30
# How long a round waits for every result to reach the ledger (the referee rules on the resignation or the draw
# agreement) before the demo's arbiter gives the result itself.
RESULT_WAIT_S = 90.0
# After an arbiter's decision, how long before the demo gives up on that round.
DECISION_WAIT_S = 60.0
POLL_S = 1.0


class DemoTournamentError(RuntimeError):
    """The demo tournament cannot go on (a round whose results never arrive, pairings that cannot be made)."""


def demo_definition(players: int, rounds: int, name: str = DEMO_EVENT) -> dict[str, Any]:
    """The organiser's definition of the demo event (what `xqarb up` writes to <data dir>/tournament.json)."""
    if players < 2:
        raise TournamentError(f"a tournament needs at least 2 players, not {players}")
    full = players - 1 + players % 2  # the rounds of a round robin (an odd field adds a bye to each round)
    if not 1 <= rounds <= full:
        raise TournamentError(f"{players} players can play 1 to {full} rounds without a rematch")
    # 10.1: where the rounds let everyone meet everyone, a round robin (Berger tables); otherwise a Swiss (10.3).
    system = "round_robin" if rounds == full else "swiss"
    return {
        "name": name, "system": system, "rounds": rounds, "scheme": "2-1-0", "swiss_tiebreak": "14.3.1",
        "players": [
            {"no": i, "name": f"选手{i:02d}", "rating": TOP_RATING - RATING_STEP * (i - 1),
             "club": CLUBS[(i - 1) % len(CLUBS)]}
            for i in range(1, players + 1)
        ],
        "pairings": [],
    }  # fmt: skip


def event_from_api(data: dict[str, Any]) -> Event:
    """The event as `GET /api/tournament` shows it, back as the core's value."""
    ev = data["event"]
    players = tuple(Player(p["no"], p["name"], p.get("rating"), p.get("club", ""), p.get("team", ""))
                    for p in data["players"])  # fmt: skip
    games = tuple(
        Game(r["round"], p["board"], p["red"]["no"], p["black"]["no"] if p["black"] else None, p["result"],
             p.get("game_id") or "")
        for r in data["rounds"] for p in r["pairings"]
    )  # fmt: skip
    return Event(ev["name"], players, games, system=ev["system"], rounds=ev["rounds"], cycles=ev.get("cycles", 1))


class TournamentBoard(DemoBoard):
    """A demo board playing one pairing: its GameStarted names the event, round and board; after its plies (all,
    or the first N) the game ends with the shipped game's result, cut short or not."""

    def __init__(self, *args: Any, pairing: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.pairing = pairing

    def play(self) -> None:
        if self.pairing.get("game_id"):  # the round start published this game's GameStarted and named it
            self.game_id = self.pairing["game_id"]
        super().play()

    def start_game(self, now_us: int) -> None:
        if self.pairing.get("game_id"):
            return  # started with its round (POST /api/tournament/rounds/<n>/start)
        self._post_arbiter({
            "type": "GameStarted", "game_id": self.game_id, "occurred_at": now_us,
            "red_player": self.pairing["red"], "black_player": self.pairing["black"],
            "event": self.pairing["event"], "round": self.pairing["round"], "board_no": self.pairing["board"],
            "time_control": {"scheme": "increment", "base_ms": self.options.base_ms,
                             "increment_ms": self.options.increment_ms},
            # The demo has cameras and clocks but no e-scoresheets: no recording obligation (7.1).
            "recording_required": False,
        })  # fmt: skip

    def finish_game(self) -> None:
        # The plies played are this game's whole record: its result follows them (resignation or draw agreement);
        # a record without a result ends in an agreed draw, as a plain demo game cut short does.
        result = self.game.get("result") if self.game.get("result") in RESULTS else DRAW
        self.game = {**self.game, "iccs": list(self.moves), "result": result}
        super().finish_game()


class TournamentDemo:
    """Rounds one after another: pair, play every board at once, wait for the results."""

    def __init__(
        self, base_url: str, config: Any, boards: Sequence[str], options: DemoOptions, definition_path: Path,
        *, fetch: Callable[[str], dict[str, Any]] | None = None, result_wait_s: float = RESULT_WAIT_S,
    ) -> None:  # fmt: skip
        self.url = base_url.rstrip("/")
        self.config = config
        self.board_ids = list(boards)
        self.options = options
        self.definition_path = definition_path
        self.fetch = fetch or self._get
        self.result_wait_s = result_wait_s
        self.stop_event = threading.Event()
        # A tournament game ends with a result (13.1): the shipped records without one ("*") are left out.
        self.games = [g for g in shipped_games() if g.get("result") in RESULTS]
        arbiter = config.arbiter_token()
        if arbiter is None:
            raise DemoTournamentError("the venue configuration has no arbiter for all boards ('*'): the demo needs one")
        self.desk = ArbiterDesk(arbiter)
        self.boards: list[DemoBoard] = []
        self._sequences: dict[str, tuple[int, int]] = {}  # per board: the last frame and clock sequence numbers
        self.round = 0
        self.failed = ""
        self.thread = threading.Thread(target=self._run, name="xq-demo-tournament", daemon=True)

    def _get(self, path: str) -> dict[str, Any]:
        with urllib.request.urlopen(f"{self.url}{path}", timeout=30) as resp:
            return json.loads(resp.read())

    def event(self) -> Event:
        return event_from_api(self.fetch("/api/tournament"))

    def start(self) -> TournamentDemo:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stop_event.set()
        self.thread.join(10)

    @property
    def finished(self) -> bool:
        return not self.thread.is_alive()

    def _run(self) -> None:
        try:
            event = self.event()
            while not self.stop_event.is_set() and event.rounds_paired() < event.rounds:
                pairings = next_round(event)
                if pairings[0].round <= self.round:  # the ledger must show the round just played
                    raise DemoTournamentError(f"round {self.round} was played but the API does not show it")
                self.play_round(event, pairings)
                event = self.event()
        # HttpError and DemoTournamentError are RuntimeErrors: a refusal or a round that cannot finish is said in the
        # progress line, as the plain demo says a board's errors, and the demo stops.
        except (RuntimeError, TournamentError, OSError, KeyError, ValueError) as exc:
            self.failed = f"{type(exc).__name__}: {exc}"

    def play_round(self, event: Event, pairings: list[Game]) -> None:
        round_no = pairings[0].round
        self.round = round_no
        self._publish_round(pairings)
        games = [g for g in pairings if not g.is_bye]
        if len(games) > len(self.board_ids):
            raise DemoTournamentError(f"round {round_no} has {len(games)} games but the venue {len(self.board_ids)} "
                                      f"boards")  # fmt: skip
        names = {p.no: p.name for p in event.players}
        boards: list[TournamentBoard] = []
        for g in games:
            record = self.games[(self.options.seed + len(self.boards) + len(boards)) % len(self.games)]
            pairing = {"event": event.name, "round": round_no, "board": g.board, "red": names[g.red],
                       "black": names[g.black]}  # type: ignore[index]  # fmt: skip
            board = self._board(self.board_ids[g.board - 1], record, pairing, round_no)
            boards.append(board)
        started = {s["board"]: s["game_id"] for s in self._start_round(event.name, round_no)["started"]}
        for b in boards:
            b.pairing["game_id"] = started[b.pairing["board"]]
        for b in boards:
            if b.follower is not None:
                b.follower.thread.start()
            b.thread.start()
        self.boards += boards
        for b in boards:
            while b.thread.is_alive() and not self.stop_event.is_set():
                b.thread.join(0.5)
            # Devices number what they send without ever going back (ingest refuses it): the next game on this
            # board goes on from here.
            self._sequences[b.board_id] = (b._frame_seq, b._clock_seq)
        if not self.stop_event.is_set():
            self._await_results(round_no, {b.pairing["board"]: b for b in boards})

    def _board(self, board_id: str, record: dict[str, Any], pairing: dict[str, Any], round_no: int) -> TournamentBoard:
        devices = self.config.device_tokens_all().get(board_id)
        if not devices:
            raise DemoTournamentError(f"board {board_id} has no device token in the venue configuration")
        camera = next((d for d in devices if d[0].startswith("cam")), devices[0])
        clock = next((d for d in devices if d[0].startswith("clock")), None)
        from dataclasses import replace

        options = replace(self.options, games_per_board=1, run_id=f"{self.options.run_id}-r{round_no}")
        board = TournamentBoard(self.url, board_id, camera, clock, self.desk, [record], options, self.stop_event,
                                pairing=pairing)  # fmt: skip
        board._frame_seq, board._clock_seq = self._sequences.get(board_id, (0, 0))
        return board

    def _missing(self, round_no: int, boards: dict[int, TournamentBoard]) -> list[int]:
        """The boards of the round whose game has no result in the ledger yet (or is not in it at all yet)."""
        data = self.fetch("/api/tournament")
        done = {
            p["board"] for r in data["rounds"] if r["round"] == round_no for p in r["pairings"]
            if p["result"] is not None and p["game_id"] == boards[p["board"]].game_id
        }  # fmt: skip
        return sorted(set(boards) - done)

    def _await_results(self, round_no: int, boards: dict[int, TournamentBoard]) -> None:
        deadline = time.monotonic() + self.result_wait_s
        while (missing := self._missing(round_no, boards)) and time.monotonic() < deadline:
            if self.stop_event.wait(POLL_S):
                return
        for number in missing:  # the arbiter gives the result the game was heading for
            board = boards[number]
            result = board.game.get("result") if board.game.get("result") in RESULTS else DRAW
            board._post_arbiter({"type": "ArbiterDecision", "game_id": board.game_id, "result": result,
                                 "article": "4.1.12" if result != "1/2-1/2" else "4.2.1",
                                 "note": "demo: the result of the game record, given by the arbiter",
                                 "occurred_at": time.time_ns() // 1000})  # fmt: skip
        deadline = time.monotonic() + DECISION_WAIT_S
        while (missing := self._missing(round_no, boards)) and time.monotonic() < deadline:
            if self.stop_event.wait(POLL_S):
                return
        if missing:
            raise DemoTournamentError(f"round {round_no}: no result recorded for boards {missing}")

    def _start_round(self, name: str, round_no: int) -> dict[str, Any]:
        """The arbiter starts the round on all its boards (HttpError where the API refuses)."""
        body = {"time_control": {"scheme": "increment", "base_ms": self.options.base_ms,
                                 "increment_ms": self.options.increment_ms},
                # The demo has cameras and clocks but no e-scoresheets: no recording obligation (7.1).
                "recording_required": False}  # fmt: skip
        url = f"{self.url}/api/tournament/rounds/{round_no}/start?event={urllib.parse.quote(name)}"
        return post(url, self.desk.token, json.dumps(body).encode(), {"Content-Type": "application/json"})

    def _publish_round(self, pairings: list[Game]) -> None:
        """The organiser publishes the round's pairings (a bye, 14.4, can be recorded nowhere else)."""
        definition = json.loads(self.definition_path.read_text(encoding="utf-8"))
        definition.setdefault("pairings", []).extend(
            {"round": g.round, "board": g.board, "red": g.red, "black": g.black} for g in pairings
        )
        tmp = self.definition_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(definition, ensure_ascii=False, indent=1), encoding="utf-8")
        tmp.replace(self.definition_path)

    def summary(self) -> dict[str, Any]:
        stats: list[BoardStats] = [b.stats for b in self.boards]
        anomalies: dict[str, int] = {}
        for s in stats:
            for k, v in s.anomalies.items():
                anomalies[k] = anomalies.get(k, 0) + v
        errors = sum(s.errors for s in stats) + (1 if self.failed else 0)
        last = self.failed or next((s.last_error for s in stats if s.last_error), "")
        return {
            "games": sum(s.games for s in stats), "frames": sum(s.frames for s in stats),
            "moves": sum(s.moves for s in stats), "finished": sum(s.finished for s in stats), "errors": errors,
            "anomalies": anomalies, "last_error": last, "round": self.round, "tournament_done": self.finished,
        }  # fmt: skip


def write_definition(data_dir: Path, players: int, rounds: int, stamp: str) -> Path:
    """Write the demo event's definition into the data directory (where the API finds it). `stamp` (the start
    time) makes the event's name new each run, so games of an earlier run in the same ledger stay in theirs."""
    path = data_dir / "tournament.json"
    definition = demo_definition(players, rounds, f"{DEMO_EVENT} {stamp}")
    path.write_text(json.dumps(definition, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def run(args: Any, config: Any, options: DemoOptions) -> int:
    """`python -m xqarb.demo --players N --rounds R --tournament FILE`: the tournament, then a last progress line."""
    import signal
    import sys

    demo = TournamentDemo(args.url, config, list(config.boards), options, Path(args.tournament))
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: demo.stop_event.set())
    demo.start()
    while not demo.stop_event.wait(2.0):
        print(json.dumps(demo.summary(), ensure_ascii=False), flush=True)
        if demo.finished:
            break
    demo.stop()
    print(json.dumps(demo.summary(), ensure_ascii=False), flush=True)
    sys.stdout.flush()
    return 1 if demo.failed else 0
