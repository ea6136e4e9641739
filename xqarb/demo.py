"""Simulated camera boards for `xqarb up --demo`: real games, rendered as camera video, sent to ingest over HTTP.

Each board plays one of the games shipped in `xqarb/data/games/` (real games, see its README) on the vision
renderer's synthetic board: it POSTs every JPEG frame to `/ingest/v1/boards/<board>/frames` in real time and, when
the mover's hand has left the board after a move, presses the clock (`/clock`, ClockPressed with both times as the
device shows them). Now and then, so that every alert can be seen: a piece touched and nudged (the renderer's
nudges), a piece left half-way between two points (5.10; the demo's "arbiter" then enters the point the opponent
designates), a clock pressed without a move (8.1.7). A nudge that would oblige a move the shipped game does not
make (5.1 / 5.2) is announced first as an adjustment (5.6, entered by the demo's arbiter), as a careful player
would: otherwise the referee rightly orders the move taken back and the recorded game could not go on.

A board plays one game after another, on one scene (camera, board, light): after a game's result the camera films
the last board a few seconds more, then the next game starts (GameStarted) from its start position. With
`max_moves` (`--moves N`) each game's first N plies, then its result as the record has it (an agreed draw where it
has none), then the board's next game.

Everything goes through the public HTTP endpoints with the configured tokens, exactly as real devices would.
"""

from __future__ import annotations

import json
import random
import threading
import time
import urllib.error
import urllib.request
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

START_FEN = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"


def adjustment_needed(squares: str, side: str, point: str, following: str | None) -> bool:
    """Whether `side` touching the piece on `point` (in its own time) obliges a move (5.1 own piece, 5.2 the
    opponent's) that the game's next move `following` does not make; a touch that only costs a foul (8.1.5: the
    piece cannot move or cannot be captured) or that the next move honours obliges nothing the game breaks."""
    from xqarb.referee.inference import index_of
    from xqarb.referee.rules import FenError, Move, Position
    from xqarb.referee.touch import Touch, obligation

    letter = squares[index_of(point)]
    if letter == ".":
        return False
    try:
        position = Position.from_squares(squares, side)
    except FenError:
        return True  # no position with that side to move: announce rather than guess
    touch = Touch(point, letter.isupper() == (side == "red"), letter, 0, "demo")
    needed = obligation(position, [touch])
    return needed is not None and (following is None or not needed.met_by(Move.parse(following)))


def shipped_games() -> list[dict[str, Any]]:
    """The real games shipped with the package (id, players, start_fen, iccs ...)."""
    text = resources.files("xqarb").joinpath("data", "games", "games.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@dataclass(frozen=True)
class DemoOptions:
    fps: float = 2.0
    max_moves: int | None = None  # play only the first N plies of each game
    difficulty: str = "easy"
    misplace_rate: float = 0.04  # a piece placed off its point; a share of those half-way between two (5.10)
    nudge_rate: float = 0.03  # a piece touched and moved a little without a move
    press_without_move_rate: float = 0.02  # a clock pressed without a move (8.1.7)
    games_per_board: int | None = None  # None: one game after another until stopped
    speed: float = 1.0  # > 1 plays faster than real time (tests)
    # Seconds each player thinks over a move, the board still, beyond the 1-3 s every move is left still: 0 plays
    # a ply every 6-8 s per board (a demo's pace, 4 times a rapid game's); about 25 is a rapid game's real pace.
    think_s: float = 0.0
    # A player presses the clock a moment after letting go of the piece; the camera needs a still board first.
    press_delay_s: float = 2.0
    # "seen": a player presses once the referee has shown the move on the stream (at least press_delay_s after
    # letting go, at most press_timeout_s): a busy demo machine whose vision lags then shows late moves, not
    # clock fouls (8.1.7) caused by the lag. "strict": at press_delay_s, whatever the referee has seen.
    clock_mode: str = "seen"
    press_timeout_s: float = 60.0
    # The camera watches the set-up board this long before the first move (as cameras run before a round starts),
    # so that vision has found the board when the game begins.
    preroll_s: float = 8.0
    between_games_s: float = 4.0  # the last board filmed after a game's result, before the next game starts
    base_ms: int = 15 * 60_000
    increment_ms: int = 10_000
    seed: int = 0
    run_id: str = ""
    # The first board's perpetual-check game (xqarb.demo_perpetual): its n-th game (0: never), then every k games.
    perpetual_first: int = 0
    perpetual_every: int = 0


class HttpError(RuntimeError):
    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"HTTP {status}: {body}")
        self.status = status


def post(url: str, token: str, body: bytes, headers: dict[str, str], timeout: float = 30.0) -> dict[str, Any]:
    """POST; retries 503 (backpressure) after its Retry-After; raises HttpError for any other refusal."""
    for _attempt in range(20):
        req = urllib.request.Request(
            url, data=body, method="POST", headers={**headers, "Authorization": f"Bearer {token}"}
        )
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                return json.loads(resp.read() or b"{}")
        except urllib.error.HTTPError as exc:
            text = exc.read().decode("utf-8", "replace")
            if exc.code == 503:
                time.sleep(float(exc.headers.get("Retry-After") or 1))
                continue
            raise HttpError(exc.code, text) from None
    raise HttpError(503, "still refused after 20 retries")


@dataclass
class SimClock:
    """A clock as the device shows it (6.1 increment scheme): the side to move's time runs."""

    red_ms: int
    black_ms: int
    increment_ms: int
    running: str = "red"
    since_us: int = 0

    def press(self, side: str, now_us: int) -> None:
        if side != self.running:
            return  # a button whose clock is not running does nothing, as on a real device
        elapsed = (now_us - self.since_us) // 1000 if self.since_us else 0
        if side == "red":
            self.red_ms = self.red_ms - elapsed + self.increment_ms
        else:
            self.black_ms = self.black_ms - elapsed + self.increment_ms
        self.running = "black" if side == "red" else "red"
        self.since_us = now_us


@dataclass
class BoardStats:
    games: int = 0
    frames: int = 0
    moves: int = 0
    presses: int = 0
    anomalies: dict[str, int] = field(default_factory=dict)
    errors: int = 0
    finished: bool = False
    last_error: str = ""


class StreamFollower:
    """What the referee has shown of one board on /api/stream: the plies seen and the games ended, per game."""

    def __init__(self, base_url: str, board_id: str, stop: threading.Event) -> None:
        self.url = base_url
        self.board_id = board_id
        self.stop = stop
        self.plies: dict[str, int] = {}
        self.ended: set[str] = set()
        self._lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, name=f"xq-demo-follow-{board_id}", daemon=True)

    def ply(self, game_id: str) -> int:
        with self._lock:
            return self.plies.get(game_id, 0)

    def has_ended(self, game_id: str) -> bool:
        with self._lock:
            return game_id in self.ended

    def _run(self) -> None:
        import http.client
        from urllib.parse import urlparse

        target = urlparse(self.url)
        last_id = None
        while not self.stop.is_set():
            try:
                conn = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
                conn.request(
                    "GET", f"/api/stream?board={self.board_id}", headers={"Last-Event-ID": last_id} if last_id else {}
                )
                resp = conn.getresponse()
                kind = None
                while not self.stop.is_set():
                    line = resp.fp.readline().decode("utf-8")
                    if not line:
                        break
                    if line.startswith("id: "):
                        last_id = line[4:].strip()
                    elif line.startswith("event: "):
                        kind = line[7:].strip()
                    elif line.startswith("data: ") and kind in ("MoveMade", "GameEnded"):
                        event = json.loads(line[6:])
                        with self._lock:
                            if kind == "MoveMade":
                                gid = event["game_id"]
                                self.plies[gid] = max(self.plies.get(gid, 0), event["ply"])
                            else:
                                self.ended.add(event["game_id"])
                conn.close()
            except (OSError, http.client.HTTPException, json.JSONDecodeError):
                pass
            self.stop.wait(1.0)


class ArbiterDesk:
    """The one arbiter device all demo boards send through (`arbiter:chief` for every board): its events must reach
    ingest in the order of their sequence numbers, which ingest checks per source. The boards' threads each read the
    time and posted on their own, so one board's GameStarted could arrive after a later-numbered one of another
    board's and be refused (409 sequence_backwards), and that board stopped playing. Here each event gets the next
    number (at least the time in microseconds, ingest's own default) and is posted before the next one is numbered."""

    def __init__(self, token: str) -> None:
        self.token = token
        self._lock = threading.Lock()
        self._last = 0

    def send(self, post_event: Any, obj: dict[str, Any]) -> dict[str, Any]:
        """`post_event(token, obj)` with `obj["source_seq"]` set, one event at a time."""
        with self._lock:
            self._last = max(self._last + 1, time.time_ns() // 1000)
            return post_event(self.token, {**obj, "source_seq": self._last})


class DemoBoard:
    """One simulated board: a camera and a clock playing `game` in real time."""

    def __init__(
        self,
        base_url: str,
        board_id: str,
        device: tuple[str, str],
        clock_device: tuple[str, str] | None,
        arbiter: ArbiterDesk,
        games: Sequence[dict[str, Any]],
        options: DemoOptions,
        stop: threading.Event,
    ) -> None:
        self.url = base_url.rstrip("/")
        self.board_id = board_id
        self.camera_id, self.camera_token = device
        self.clock_id, self.clock_token = clock_device or device
        self.arbiter = arbiter
        self.games = list(games)
        self.game: dict[str, Any] = {}
        self.moves: list[str] = []
        self.game_id = ""
        self.options = options
        self.stop = stop
        self.stats = BoardStats()
        # A stable seed (str hashes differ between processes): the same board plays the same way every run.
        self.rng = random.Random(zlib.crc32(f"{options.seed}/{board_id}".encode()))
        self._clock_seq = 0
        self._frame_seq = 0
        self.thread = threading.Thread(target=self._run, name=f"xq-demo-{board_id}", daemon=True)
        self.follower = StreamFollower(self.url, board_id, stop) if options.clock_mode == "seen" else None

    def _post_json(self, endpoint: str, token: str, obj: dict[str, Any]) -> dict[str, Any]:
        return post(
            f"{self.url}/ingest/v1/boards/{self.board_id}/{endpoint}",
            token,
            json.dumps(obj).encode(),
            {"Content-Type": "application/json"},
        )

    def _post_arbiter(self, obj: dict[str, Any]) -> dict[str, Any]:
        return self.arbiter.send(lambda token, event: self._post_json("events", token, event), obj)

    def start_game(self, now_us: int) -> None:
        self._post_arbiter(
            {
                "type": "GameStarted",
                "game_id": self.game_id,
                "occurred_at": now_us,
                "red_player": self.game.get("red") or "Red",
                "black_player": self.game.get("black") or "Black",
                "time_control": {
                    "scheme": "increment",
                    "base_ms": self.options.base_ms,
                    "increment_ms": self.options.increment_ms,
                },
                # The demo has cameras and clocks but no e-scoresheets: no recording obligation (7.1).
                "recording_required": False,
                **({"start_fen": self.game["start_fen"]} if self.game.get("start_fen", START_FEN) != START_FEN else {}),
            },
        )

    def press(self, clock: SimClock, side: str) -> None:
        now = time.time_ns() // 1000
        clock.press(side, now)
        seq = self._seq()
        self._post_json(
            "clock",
            self.clock_token,
            {
                "type": "ClockPressed",
                "side": side,
                "red_ms": clock.red_ms,
                "black_ms": clock.black_ms,
                "source_seq": seq,
                "occurred_at": now,
                "game_id": self.game_id,
            },
        )
        self.stats.presses += 1

    def frames(self) -> Iterator[Any]:
        from xqarb.vision.render import random_scene, render_game

        o = self.options
        # One board, one camera and one light for all its games: only the pieces are set up again between games.
        scene = random_scene(zlib.crc32(f"{o.seed}/{self.board_id}/scene".encode()), difficulty=o.difficulty)
        yield from render_game(
            self.game.get("start_fen") or START_FEN,
            self.moves,
            seed=o.seed * 1000 + int(self.rng.random() * 1e6),
            fps=o.fps,
            difficulty=o.difficulty,
            misplace_rate=o.misplace_rate,
            nudge_rate=o.nudge_rate,
            scene=scene,
            think_s=o.think_s,
        )

    def _run(self) -> None:
        try:
            for number, game in enumerate(self.games, start=1):
                if self.stop.is_set() or (self.options.games_per_board and number > self.options.games_per_board):
                    break
                self.game = game
                moves = list(game["iccs"])
                cut = self.options.max_moves and not game.get("perpetual")  # the cycle must come round in full
                self.moves = moves[: self.options.max_moves] if cut else moves
                self.game_id = f"demo-{self.options.run_id}-b{self.board_id}-{number}-{game['id']}"
                self.play()
                self.stats.games += 1
        except HttpError as exc:
            self.stats.errors += 1
            self.stats.last_error = str(exc)
        except OSError as exc:  # the server went away (shutting down)
            self.stats.errors += 1
            self.stats.last_error = f"{type(exc).__name__}: {exc}"
        finally:
            self.stats.finished = True

    def finish_game(self) -> None:
        """After the record's last move, the game ends as it did: the loser resigns, or a draw is agreed. A game cut
        short (`max_moves`) ends the same way after its first plies, or by an agreed draw where the record has no
        result, so that the board goes on to its next game."""
        result = self.game.get("result")
        if self.game.get("perpetual"):
            from xqarb.demo_perpetual import confirm_perpetual

            if confirm_perpetual(self):
                return
            result = "1/2-1/2"  # no alert came: the players agree a draw, so that the board goes on
        if self.options.max_moves and len(self.game["iccs"]) > len(self.moves) and result not in ("1-0", "0-1"):
            result = "1/2-1/2"
        now = time.time_ns() // 1000
        if result in ("1-0", "0-1"):
            loser = "black" if result == "1-0" else "red"
            self._post_json(
                "events",
                self.clock_token,
                {
                    "type": "Resigned",
                    "side": loser,
                    "game_id": self.game_id,
                    "source_seq": self._seq(),
                    "occurred_at": now,
                },
            )
        elif result == "1/2-1/2":
            offerer = "red" if len(self.moves) % 2 == 0 else "black"
            self._post_json(
                "events",
                self.clock_token,
                {
                    "type": "DrawOffered",
                    "side": offerer,
                    "game_id": self.game_id,
                    "source_seq": self._seq(),
                    "occurred_at": now,
                },
            )
            self._post_json(
                "events",
                self.clock_token,
                {
                    "type": "DrawAnswered",
                    "side": "black" if offerer == "red" else "red",
                    "accepted": True,
                    "game_id": self.game_id,
                    "source_seq": self._seq(),
                    "occurred_at": now + 1,
                },
            )

    def _seq(self) -> int:
        # One sequence for everything the clock device sends (presses, resignations, offers): monotonic.
        self._clock_seq += 1
        return self._clock_seq

    def play(self) -> None:
        from xqarb.vision.render import jpeg

        started = time.time_ns() // 1000
        self.start_game(started)
        # The arbiter starts the clocks with the game (6.1): Red's time runs from then, through the pre-roll.
        clock = SimClock(self.options.base_ms, self.options.base_ms, self.options.increment_ms, since_us=started)
        step = 1 / self.options.fps / self.options.speed  # seconds between frames
        t0 = time.monotonic()
        ply_done = 0
        # The next press: (earliest, mover, misaligned points, ply, latest).
        pending: tuple[float, str, Any, int, float] | None = None
        designated = None
        last_body = b""
        preroll = max(0, round(self.options.preroll_s * self.options.fps))
        for index, frame in enumerate(self.frames()):
            if self.stop.is_set():
                return
            body = jpeg(frame.image)
            for _ in range(preroll if index == 0 else 0):  # the first (still) frame, shown for the pre-roll
                self._send_frame(body)
                t0 += step
                if self.stop.wait(step):
                    return
            truth = frame.truth
            if pending is not None and truth.hand_present and self.follower is not None:
                # "seen": the players think until the referee has shown the last move (the camera keeps filming
                # the still board), so that a busy machine shows the game slower, not wrong.
                while not self._press_due(pending, time.monotonic(), False) and not self.stop.is_set():
                    self._send_frame(last_body)
                    t0 += step
                    self.stop.wait(step)
            if pending is not None and (truth.hand_present or self._press_due(pending, time.monotonic(), False)):
                # The mover presses, then, 5.10, the opponent designates the point of a piece left half-way.
                self._press(clock, pending, designated)
                designated = pending[2] or designated
                pending = None
            delay = t0 + frame.t_us / 1e6 / self.options.speed - time.monotonic()
            if delay > 0 and self.stop.wait(delay):
                return
            if truth.event == "nudge" and truth.nudged:
                self._nudge(truth)
            self._send_frame(body)
            last_body = body
            if self.follower is not None and self.follower.has_ended(self.game_id):
                return  # the referee ended the game (a result, a loss by rule): on to the next one
            if truth.event == "hand_leave" and truth.ply > ply_done:
                now = time.monotonic()
                ply_done = truth.ply
                self.stats.moves += 1
                mover = "red" if ply_done % 2 == 1 else "black"
                pending = (
                    now + self.options.press_delay_s / self.options.speed,
                    mover,
                    truth.misaligned,
                    ply_done,
                    now + self.options.press_timeout_s / self.options.speed,
                )
        while pending is not None and not self.stop.is_set():
            if self._press_due(pending, time.monotonic(), False):
                self._press(clock, pending, designated)
                break
            self._send_frame(last_body)
            self.stop.wait(step)
        if not self.stop.is_set():
            self.finish_game()
            # the players sign and set the pieces up again: the camera films the last board a while longer
            for _ in range(max(0, round(self.options.between_games_s * self.options.fps))):
                if not last_body or self.stop.wait(step):
                    break
                self._send_frame(last_body)

    def _nudge(self, truth: Any) -> None:
        """A piece is about to be nudged: announced as an adjustment where a plain touch would derail the game."""
        start_red = (self.game.get("start_fen") or START_FEN).split()[1] in ("w", "r")
        side = "red" if (truth.ply % 2 == 0) == start_red else "black"
        following = self.moves[truth.ply] if truth.ply < len(self.moves) else None
        if not adjustment_needed(truth.squares, side, truth.nudged, following):
            self._count("touched piece")
            return
        self._count("adjustment announced")
        self._post_arbiter({
            "type": "TouchReported", "side": side, "point": truth.nudged, "adjust": True, "game_id": self.game_id,
            "occurred_at": time.time_ns() // 1000,
        })

    def _press(self, clock: SimClock, pending: tuple[float, str, Any, int, float], designated: Any) -> None:
        _, mover, misaligned, _, _ = pending
        self.press(clock, mover)
        if misaligned and misaligned != designated:  # a piece left half-way stays there: designated once
            self._count("piece between points")
            self._post_arbiter(
                {
                    "type": "PointDesignated",
                    "point": misaligned[0],
                    "game_id": self.game_id,
                    "occurred_at": time.time_ns() // 1000,
                },
            )
        if self.rng.random() < self.options.press_without_move_rate:
            # 8.1.7: the player to move presses the clock without having moved.
            self._count("clock pressed without a move")
            self.press(clock, "black" if mover == "red" else "red")

    def _press_due(self, pending: tuple[float, str, Any, int, float], now: float, hand_coming: bool) -> bool:
        earliest, _, _, ply, latest = pending
        if now < earliest:
            return False
        if self.follower is None:
            return True
        # "seen": once the referee showed the move, or after the timeout (then it is a press the referee judges).
        return self.follower.ply(self.game_id) >= ply or hand_coming or now >= latest

    def _send_frame(self, body: bytes) -> None:
        self._frame_seq += 1  # per camera, across games: never goes backwards
        post(
            f"{self.url}/ingest/v1/boards/{self.board_id}/frames",
            self.camera_token,
            body,
            {
                "Content-Type": "image/jpeg",
                "X-Capture-Time": str(time.time_ns() // 1000),
                "X-Sequence": str(self._frame_seq),
                "X-Camera-Id": self.camera_id,
                "X-Game-Id": self.game_id,
            },
        )
        self.stats.frames += 1

    def _count(self, what: str) -> None:
        self.stats.anomalies[what] = self.stats.anomalies.get(what, 0) + 1


class DemoBoards:
    """N simulated boards, each in its own thread."""

    def __init__(
        self,
        base_url: str,
        config: Any,
        boards: Sequence[str],
        options: DemoOptions,
        games: Sequence[dict[str, Any]] | None = None,
    ) -> None:
        self.stop_event = threading.Event()
        games = list(games or shipped_games())
        tokens = config.device_tokens_all()
        arbiter = config.arbiter_token()
        if arbiter is None:
            raise ValueError("the venue configuration has no arbiter for all boards ('*'): the demo needs one")
        self.boards = []
        desk = ArbiterDesk(arbiter)
        for i, board_id in enumerate(boards):
            devices = tokens.get(board_id)
            if not devices:
                raise ValueError(f"board {board_id} has no device token in the venue configuration")
            camera = next((d for d in devices if d[0].startswith("cam")), devices[0])
            clock = next((d for d in devices if d[0].startswith("clock")), None)
            first = (i + options.seed) % len(games)
            rotation = games[first:] + games[:first]
            if i == 0:
                from xqarb.demo_perpetual import with_perpetual

                rotation = with_perpetual(rotation, options.perpetual_first, options.perpetual_every)
            self.boards.append(
                DemoBoard(base_url, board_id, camera, clock, desk, rotation, options, self.stop_event)
            )

    def start(self) -> DemoBoards:
        for b in self.boards:
            if b.follower is not None:
                b.follower.thread.start()
            b.thread.start()
        return self

    def stop(self) -> None:
        self.stop_event.set()
        for b in self.boards:
            b.thread.join(5)

    def summary(self) -> dict[str, Any]:
        stats = [b.stats for b in self.boards]
        anomalies: dict[str, int] = {}
        for s in stats:
            for k, v in s.anomalies.items():
                anomalies[k] = anomalies.get(k, 0) + v
        return {
            "games": sum(s.games for s in stats),
            "frames": sum(s.frames for s in stats),
            "moves": sum(s.moves for s in stats),
            "finished": sum(s.finished for s in stats),
            "errors": sum(s.errors for s in stats),
            "anomalies": anomalies,
            "last_error": next((s.last_error for s in stats if s.last_error), ""),
        }


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m xqarb.demo --url URL --config VENUE.json [...]`: the demo boards as a process of their own (what
    `xqarb up --demo` starts: rendering is CPU work that should not take turns with the services). Prints one JSON
    line of progress every two seconds; SIGTERM or SIGINT stops it."""
    import argparse
    import signal
    import sys

    from xqarb.ingest.config import load_config

    p = argparse.ArgumentParser(prog="python -m xqarb.demo", description=main.__doc__)
    p.add_argument("--url", required=True, help="the ingest base URL, e.g. http://127.0.0.1:8080")
    p.add_argument("--config", required=True, help="the venue configuration (device and arbiter tokens)")
    p.add_argument("--boards", type=int, default=4)
    p.add_argument("--fps", type=float, default=2.0)
    p.add_argument("--moves", type=int, default=None)
    p.add_argument("--calm", action="store_true")
    p.add_argument("--think", type=float, default=0.0, help="seconds each player thinks over a move")
    p.add_argument("--perpetual", action="store_true", help="board 1 starts with the perpetual-check game")
    p.add_argument("--strict-clock", action="store_true", help="press 2 s after each move, seen or not")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--run-id", default=str(int(time.time())))
    p.add_argument("--players", type=int, default=None, help="a tournament of N players (xqarb.demo_tournament)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--tournament", help="the tournament's definition file (with --players)")
    args = p.parse_args(argv)
    from xqarb.demo_perpetual import perpetual_options

    config = load_config(args.config)
    calm = {"misplace_rate": 0.0, "nudge_rate": 0.0, "press_without_move_rate": 0.0} if args.calm else {}
    options = DemoOptions(
        fps=args.fps, max_moves=args.moves, seed=args.seed, run_id=args.run_id, think_s=args.think,
        # One game after another until stopped (with --moves, each its first N plies, then its result).
        games_per_board=None, clock_mode="strict" if args.strict_clock else "seen", **calm,
        **perpetual_options(args.perpetual, args.calm),
    )  # fmt: skip
    if args.players:
        from xqarb.demo_tournament import run as run_tournament

        return run_tournament(args, config, options)
    demo = DemoBoards(args.url, config, list(config.boards)[: args.boards], options)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    demo.start()
    while not stop.wait(2.0):
        print(json.dumps(demo.summary(), ensure_ascii=False), flush=True)
        if all(b.stats.finished for b in demo.boards):
            break
    demo.stop()
    print(json.dumps(demo.summary(), ensure_ascii=False), flush=True)
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
