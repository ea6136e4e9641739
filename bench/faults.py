"""Faults with many boards: nothing acknowledged lost, the same ledgers as without the faults, the time to recover.

    .venv/bin/python bench/faults.py [--boards 50] [--camera-boards 4] [--plies 10] [--fps 2] [--ply-s 6]

Two runs of the same inputs, each on a fresh `xqarb up --boards N+probes --vision-processes 2` (embedded broker,
ingest with its outbox, the API, one referee in `up`, two vision processes in group xq-vision, all supervised by
`up`) plus a second referee process (`xqarb referee serve`, group xq-referee, the same SQLite ledger):
  * clean:  no fault;
  * faults: SIGKILL of vision-1 (up restarts it), SIGKILL of the second referee (restarted by this script 1 s
    later, as a supervisor would), SIGSTOP of that referee for longer than its session timeout (10 s) then
    SIGCONT, SIGKILL of the embedded broker (up restarts it, empty: its storage is in memory); with `--faults
    stall` (not among the default ones) instead, every vision process paused (SIGSTOP) for STALL_S, past the end
    of a frames period (the vision group a whole period behind, as on a machine loaded by an install beside it).

Inputs, identical in both runs (event ids derived from board, device and sequence number): on each of N boards a
GameStarted (arbiter, /events), then per ply a clock press (/clock) after the move, and a resignation after the
last ply. On `--camera-boards` of them the moves come from camera frames (/frames, a rendered real game at
`--fps`) through the vision processes; on the others from a BoardStable per ply that this script publishes on
xq.observations itself, with a CameraProgress of each board every second and the observations the broker lost
sent again, as vision does (a perfect camera, StandInCameras: it keeps the CPU for the faults, not for rendering
50 boards); the venue file configures a camera on the camera boards and the probe boards only (the stand-in
boards are known as cameras from their progress reports). A ply every `--ply-s` seconds per board, boards
staggered.

Reported per run: acknowledged inputs (202) by type, and those not in the ledger at the end (lost: must be 0);
per game, the moves, rulings and result against the clean run's (differing games: must be 0), and the input
event ids acknowledged; per fault, the time until every partition works again: a probe posted on a probe board
of each partition (boards without games) every second, vision: a probe frame committed by xq-vision, referee and
broker: a probe clock press in the ledger, and for the broker also a probe frame committed by xq-vision ("broker
SIGKILL (vision)"); beside the probes' latency without a fault.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

from probe import free_port, request, until

PROBES = 12  # probe boards (no games): enough that every partition of 4 has one (keys hash to partitions)
PARTITIONS = 4
PROBE_EVERY_S = 2.0  # a probe frame and press per partition this often (the probe frames cost vision CPU too)
SESSION_TIMEOUT_S = 10.0  # bus.Consumer's default session timeout: a member paused longer is dropped from its group
STOP_S = SESSION_TIMEOUT_S + 5.0  # the referee paused this long: past its session timeout
BENCH_NS = uuid.UUID("5d7e0c64-3f0a-4b7e-9a47-2b3c1e4f6a80")
FIRST_FAULT_S = 10.0  # the first fault this long after the games began
# The vision group paused this long (--faults stall): past the end of the frames period it began in, whatever its
# phase (bus.FRAMES_ROLL_S, 60 s), and well within the referee's hold of a camera board's presses (120 s).
STALL_S = 65.0
GAP_S = 30.0  # between the end of one fault and the next: each recovers (or not) on its own




# --- inputs ------------------------------------------------------------------------------------------------------

def camera_video(plies: int, fps: float) -> tuple[list[tuple[float, bytes, int, bool]], list[str]]:
    """(t seconds, JPEG, moves completed, still) per frame of the first shipped game's first plies."""
    from xqarb.demo import shipped_games
    from xqarb.vision.render import jpeg, render_game

    game = shipped_games()[0]
    moves = game["iccs"][:plies]
    frames = [(f.t_us / 1e6, jpeg(f.image), f.truth.ply, f.truth.stable and not f.truth.hand_present)
              for f in render_game(game["start_fen"], moves, seed=7, fps=fps, difficulty="easy", misplace_rate=0.0,
                                   nudge_rate=0.0)]
    return frames, moves


def board_games(count: int, plies: int) -> list[tuple[str | None, list[str]]]:
    """(start FEN or None, the squares after each ply) of `count` real games' first plies, cycling."""
    from xqarb.demo import shipped_games
    from xqarb.referee.rules import START_FEN, Move, Position

    out = []
    games = [g for g in shipped_games() if len(g["iccs"]) >= plies]
    for k in range(count):
        g = games[k % len(games)]
        position = Position.from_fen(g.get("start_fen") or START_FEN)
        squares = []
        for move in g["iccs"][:plies]:
            position = position.play(Move.parse(move))
            squares.append(position.squares())
        out.append((None if (g.get("start_fen") or START_FEN) == START_FEN else g["start_fen"], squares))
    return out


class Venue:
    """A running `xqarb up` and the second referee process."""

    def __init__(self, data: Path, boards: int, fps: float, cameras: set[str]) -> None:
        self.data, self.port = data, free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        write_venue(data, boards, cameras)
        self.log = (data / "up.log").open("wb")
        self.up = subprocess.Popen(
            [sys.executable, "-m", "xqarb.cli", "up", "--boards", str(boards), "--port", str(self.port),
             "--data-dir", str(data), "--vision-processes", "2", "--partitions", str(PARTITIONS), "--fps", str(fps)],
            stdout=self.log, stderr=subprocess.STDOUT)
        until(lambda: request(self.base + "/readyz")[0] == 200, timeout=120, step=0.2)
        found = re.search(r"broker: (\S+) \(embedded\)", (data / "up.log").read_text())
        assert found, "up did not say where its broker is"
        self.bootstrap = found.group(1)
        self.venue = json.loads((data / "venue.json").read_text())
        self.referee2: subprocess.Popen | None = None
        self.start_referee2()

    def start_referee2(self) -> None:
        log = (self.data / "referee2.log").open("ab")
        self.referee2 = subprocess.Popen(
            [sys.executable, "-m", "xqarb.cli", "referee", "serve", "--bootstrap-servers", self.bootstrap,
             "--db", str(self.data / "ledger.sqlite")], stdout=log, stderr=subprocess.STDOUT,
            env={**os.environ, "XQARB_DATA_DIR": str(self.data)})  # (up's venue key signs its tree heads too)

    def parts(self) -> dict[str, dict[str, Any]]:
        status, body = request(self.base + "/api/venue/parts")
        return {p["part"]: p for p in json.loads(body)["parts"]} if status == 200 else {}

    def offset_holes(self) -> dict[str, float]:
        """xq_offset_holes_total in `up`'s process (its referee, the API's stream reader), by outcome: records a
        reader found missing from a partition's offsets and read again once they came, or passed over."""
        status, body = request(self.base + "/metrics")
        text = body.decode(errors="replace") if status == 200 else ""
        return {outcome: float(n) for outcome, n in
                re.findall(r'^xq_offset_holes_total\{outcome="(\w+)"\} ([0-9.e+]+)$', text, re.M)}

    def token(self, board: str, kind: str) -> str:
        devices = self.venue["boards"][board]["devices"]
        return next(t for name, t in devices.items() if name.startswith(kind))

    def arbiter(self) -> str:
        return next(iter(self.venue["arbiters"].values()))["token"]

    def post(self, board: str, endpoint: str, token: str, body: bytes, headers: dict[str, str]) -> tuple[int, dict]:
        status, raw = request(f"{self.base}/ingest/v1/boards/{board}/{endpoint}", body,
                              {**headers, "Authorization": f"Bearer {token}"})
        try:
            return status, json.loads(raw) if raw else {}
        except ValueError:
            return status, {}

    def stop(self) -> None:
        for proc in (self.referee2,):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGCONT)
                proc.terminate()
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()
        self.up.send_signal(signal.SIGTERM)
        try:
            self.up.wait(90)
        except subprocess.TimeoutExpired:
            self.up.kill()


def write_venue(data: Path, boards: int, cameras: set[str]) -> None:
    """The venue file `up` keeps (data/venue.json, read by the second referee too): a camera on the boards in
    `cameras` only. The others' observations come from this script on xq.observations (StandInCameras), not from
    frames: boards without a camera device, which the referee knows as boards with a camera from their progress
    reports (services/referee/ordering.py)."""
    from xqarb.ingest.config import generate_config

    raw = generate_config([str(i) for i in range(1, boards + 1)])
    for board_id, board in raw["boards"].items():
        if board_id not in cameras:
            del board["devices"][f"cam-{board_id}"], board["roles"][f"cam-{board_id}"]
    path = data / "venue.json"
    path.write_text(json.dumps(raw, indent=1))
    path.chmod(0o600)



class Inputs:
    """The bench's inputs to one venue, with what ingest acknowledged."""

    def __init__(self, venue: Venue, args: argparse.Namespace, video: list, games: list) -> None:
        self.venue, self.args, self.video, self.games = venue, args, video, games
        self.acked: dict[str, str] = {}  # event id -> type (202)
        self.refused: Counter[str] = Counter()  # "type status"
        self.frames_acked = self.frames_refused = 0
        self.cameras = StandInCameras(venue.bootstrap)
        self.lock = threading.Lock()
        self.seq: Counter[str] = Counter()

    def _send(self, board: str, endpoint: str, kind: str, obj: dict[str, Any]) -> None:
        """Posted until answered 202 (a device retries what was not acknowledged, with the same sequence)."""
        with self.lock:
            self.seq[f"{board}/{kind}"] += 1
            seq = self.seq[f"{board}/{kind}"]
        obj = {**obj, "source_seq": seq, "occurred_at": time.time_ns() // 1000}
        token = self.venue.arbiter() if kind == "arbiter" else self.venue.token(board, kind)
        for _ in range(120):
            status, body = self.venue.post(board, endpoint, token, json.dumps(obj).encode(),
                                           {"Content-Type": "application/json"})
            if status == 202:
                with self.lock:
                    self.acked[body["event_id"]] = obj["type"]
                return
            with self.lock:
                self.refused[f"{obj['type']} {status}"] += 1
            if status not in (0, 503):
                return
            time.sleep(0.5)

    def game_id(self, board: str) -> str:
        return f"faults-{board}"

    def start(self, board: str, start_fen: str | None) -> None:
        self._send(board, "events", "arbiter", {
            "type": "GameStarted", "game_id": self.game_id(board), "red_player": "R", "black_player": "B",
            "recording_required": False,
            "time_control": {"scheme": "increment", "base_ms": 900_000, "increment_ms": 10_000},
            **({"start_fen": start_fen} if start_fen else {})})

    def press(self, board: str, ply: int) -> None:
        self._send(board, "clock", "clock", {"type": "ClockPressed", "side": "red" if ply % 2 else "black",
                                             "red_ms": None, "black_ms": None, "game_id": self.game_id(board)})

    def resign(self, board: str, plies: int) -> None:
        self._send(board, "events", "arbiter", {"type": "Resigned", "side": "black" if plies % 2 else "red",
                                                "game_id": self.game_id(board)})

    def run_board(self, board: str, k: int, t0: float, stop: threading.Event) -> None:
        if k < self.args.camera_boards:
            self.run_camera_board(board, t0 + 1 + k * 0.3, stop)
            return
        start_fen, positions = self.games[k]
        begin = t0 + 1 + (k % 20) * self.args.ply_s / 20
        if stop.wait(max(0.0, begin - time.time())):
            return
        self.start(board, start_fen)
        for ply, squares in enumerate(positions, start=1):
            if stop.wait(max(0.0, begin + ply * self.args.ply_s - time.time())):
                return
            self.cameras.observe(board, ply, squares, stop)
            time.sleep(0.3)  # the mover's hand back to the clock
            self.press(board, ply)
        self.resign(board, len(positions))

    def run_camera_board(self, board: str, begin: float, stop: threading.Event) -> None:
        if stop.wait(max(0.0, begin - time.time())):
            return
        self.start(board, None)
        token = self.venue.token(board, "cam")
        pressed = 0
        for seq, (t, image, ply, still) in enumerate(self.video, start=1):
            if stop.wait(max(0.0, begin + 1 + t - time.time())):
                return
            status, _ = self.venue.post(board, "frames", token, image, {
                "Content-Type": "image/jpeg", "X-Capture-Time": str(time.time_ns() // 1000), "X-Sequence": str(seq),
                "X-Game-Id": self.game_id(board)})
            with self.lock:
                if status == 202:
                    self.frames_acked += 1
                else:
                    self.frames_refused += 1
            if still and ply > pressed:
                pressed = ply
                self.press(board, ply)
        self.resign(board, pressed)


class StandInCameras(threading.Thread):
    """The perfect cameras of the boards without frames, publishing what a vision process would publish for them,
    the way it does (services/vision/service.py): each still board as a BoardStable, acknowledged before the clock
    press that follows it is posted; every PROGRESS_EVERY_S a CameraProgress of each board seen (its frames read up
    to now), so that the referee holds a board's presses until its camera has seen past them, as it does a camera
    board's; and the observations the broker acknowledged but the referee group had not read, kept and sent again
    once the broker lost them (ObservationReplay). The referee thus meets on these boards what it meets on a camera
    board: a press that ingest sends again after a broker restart waits for the still board sent again before it."""

    PROGRESS_EVERY_S = 1.0  # vision reports a board's progress about once a second of its frames
    ACK_WAIT_S = 120.0  # a board's still board waited for this long at most (the broker down and restarted)

    def __init__(self, bootstrap: str) -> None:
        super().__init__(daemon=True)
        self.bootstrap = bootstrap
        self.published = 0  # BoardStables acknowledged
        self.sent_again = 0  # observations sent again after the broker lost them (ObservationReplay)
        self._queue: list[tuple[Any, threading.Event]] = []
        self._lock = threading.Condition()
        self._seen: dict[str, int] = {}  # board -> its CameraProgress reports so far
        self._stop_when = threading.Event()

    def observe(self, board: str, ply: int, squares: str, stop: threading.Event) -> None:
        """A still board (`squares`, after `ply` moves), returned once the broker acknowledged it."""
        from xqarb.events import make_event

        now = time.time_ns() // 1000
        event = make_event("BoardStable", board, source=f"bench-camera-{board}", source_seq=ply * 1000,
                           occurred_at=now, received_at=now, squares=squares, frame_sha256="0" * 64,
                           event_id=str(uuid.uuid5(BENCH_NS, f"{board}/observation/{ply}")))
        done = threading.Event()
        with self._lock:
            self._queue.append((event, done))
            self._lock.notify()
        deadline = time.monotonic() + self.ACK_WAIT_S
        while not done.wait(0.5) and not stop.is_set() and time.monotonic() < deadline:
            pass

    def stop(self) -> None:
        self._stop_when.set()
        with self._lock:
            self._lock.notify()

    def run(self) -> None:
        from xqarb import bus
        from xqarb.vision.observations_kept import ObservationReplay
        from xqarb.vision.service import deliver

        producer = bus.Producer(self.bootstrap, client_id="bench-cameras")
        replay = ObservationReplay.connect(self.bootstrap, bus.REFEREE_GROUP)
        next_progress = 0.0
        try:
            while not self._stop_when.is_set():
                with self._lock:
                    if not self._queue:
                        self._lock.wait(0.2)
                    taken, self._queue = self._queue, []
                events = [event for event, _ in taken]
                for event in events:
                    self._seen.setdefault(event.board_id, 0)
                if time.monotonic() >= next_progress:
                    next_progress = time.monotonic() + self.PROGRESS_EVERY_S
                    events += self._progress()
                sent = producer.send_soon(bus.OBSERVATIONS, events)
                replay.kept(events, deliver(producer, sent, events, self._stop_when.is_set,
                                            before_resend=lambda: replay.check(producer, now=True)))
                self.published += len(taken)
                for _, done in taken:
                    done.set()
                replay.check(producer)
                self.sent_again = replay.replayed
        finally:
            replay.close()
            producer.close()

    def _progress(self) -> list[Any]:
        from xqarb.events import make_event

        now = time.time_ns() // 1000
        out = []
        for board in sorted(self._seen):
            self._seen[board] += 1
            n = self._seen[board]
            out.append(make_event("CameraProgress", board, source=f"bench-camera-{board}", source_seq=n,
                                  occurred_at=now, received_at=now, frames=1,
                                  event_id=str(uuid.uuid5(BENCH_NS, f"{board}/progress/{n}"))))
        return out


# --- probes ------------------------------------------------------------------------------------------------------

class Probes(threading.Thread):
    """Every second, a probe frame and a probe clock press on one probe board of each partition; notes when each
    was acknowledged, when xq-vision committed the frame and when the press reached the ledger."""

    def __init__(self, venue: Venue, boards: list[str], stop: threading.Event) -> None:
        super().__init__(daemon=True, name="probes")
        self.venue, self.boards, self.stop_ = venue, boards, stop
        self.by_partition: dict[int, str] = {}
        # (sent, partition, offset, topic): the embedded broker rolls frames between xq.frames and xq.frames.roll
        self.frames: list[tuple[float, int, int, str]] = []
        self.presses: list[tuple[float, int, str]] = []  # (sent, partition, event id)
        self.seq: Counter[str] = Counter()

    def _frame(self, board: str) -> tuple[int, int, str] | None:
        import cv2
        import numpy as np

        image = cv2.imencode(".jpg", np.full((48, 64, 3), 180, dtype=np.uint8))[1].tobytes()
        self.seq[board + "f"] += 1
        status, body = self.venue.post(board, "frames", self.venue.token(board, "cam"), image, {
            "Content-Type": "image/jpeg", "X-Capture-Time": str(time.time_ns() // 1000),
            "X-Sequence": str(self.seq[board + "f"])})
        if status != 202 or "partition" not in body:
            return None
        return int(body["partition"]), int(body["offset"]), str(body.get("topic", "xq.frames"))

    def _press(self, board: str) -> str | None:
        self.seq[board + "c"] += 1
        status, body = self.venue.post(board, "clock", self.venue.token(board, "clock"), json.dumps({
            "type": "ClockPressed", "side": "red", "red_ms": None, "black_ms": None,
            "source_seq": self.seq[board + "c"], "occurred_at": time.time_ns() // 1000}).encode(),
            {"Content-Type": "application/json"})
        return body.get("event_id") if status == 202 else None

    def run(self) -> None:
        for board in self.boards:  # one probe board per partition
            where = self._frame(board)
            if where is not None:
                self.by_partition.setdefault(where[0], board)
        while not self.stop_.wait(PROBE_EVERY_S):
            for partition, board in sorted(self.by_partition.items()):
                sent = time.time()
                where = self._frame(board)
                if where is not None:
                    self.frames.append((sent, *where))
                event_id = self._press(board)
                if event_id is not None:
                    self.presses.append((sent, partition, event_id))


def committed(bootstrap: str, group: str, partitions: int) -> dict[tuple[str, int], int]:
    """The group's committed offsets on both frames topics ((topic, partition) -> offset)."""
    from kafka import KafkaConsumer, TopicPartition
    from kafka.errors import KafkaError

    try:
        probe = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    except (KafkaError, OSError):
        return {}
    try:
        return {(t, p): c for t in ("xq.frames", "xq.frames.roll") for p in range(partitions)
                if (c := probe.committed(TopicPartition(t, p))) is not None}
    except (KafkaError, OSError):
        return {}
    finally:
        probe.close()


class Watch(threading.Thread):
    """Samples, every 0.5 s: xq-vision's committed offsets on xq.frames, and the event ids in the ledger."""

    def __init__(self, venue: Venue, stop: threading.Event) -> None:
        super().__init__(daemon=True, name="watch")
        self.venue, self.stop_ = venue, stop
        self.vision: list[tuple[float, dict[tuple[str, int], int]]] = []
        self.ledger_seen: dict[str, float] = {}  # event id -> first time seen in the ledger

    def run(self) -> None:
        while not self.stop_.wait(0.5):
            now = time.time()
            self.vision.append((now, committed(self.venue.bootstrap, "xq-vision", PARTITIONS)))
            try:
                with sqlite3.connect(self.venue.data / "ledger.sqlite", timeout=5) as db:
                    for (event_id,) in db.execute("select event_id from entries where kind = 'input'"):
                        self.ledger_seen.setdefault(event_id, now)
            except sqlite3.Error:
                pass


def recovery(fault_at: float, probes: Probes, watch: Watch, what: str) -> float | None:
    """Seconds from the fault until, on every partition, a probe sent after the fault worked (vision: its frame
    committed by xq-vision; otherwise: its press in the ledger): the slowest partition's; None: one never did."""
    worst = 0.0
    for partition in probes.by_partition:
        if what == "vision":
            sent = [(topic, off) for t, p, off, topic in probes.frames if p == partition and t >= fault_at]
            times = [t for t, offs in watch.vision if t >= fault_at and any(offs.get((topic, partition), -1) > off
                                                                            for topic, off in sent)]
        else:
            times = [watch.ledger_seen[e] for t, p, e in probes.presses
                     if p == partition and t >= fault_at and e in watch.ledger_seen]
        if not times:
            return None
        worst = max(worst, min(times) - fault_at)
    return worst


def probe_latency(probes: Probes, watch: Watch, start: float, end: float) -> dict[str, float | None]:
    """The probes' latency between `start` and `end` (no fault then): press to ledger, frame to committed."""
    ledger = sorted(watch.ledger_seen[e] - t for t, p, e in probes.presses
                    if start <= t < end and e in watch.ledger_seen)
    vision = []
    for t, p, off, topic in probes.frames:
        if start <= t < end:
            done = [s_t for s_t, offs in watch.vision if s_t >= t and offs.get((topic, p), -1) > off]
            if done:
                vision.append(min(done) - t)
    vision.sort()

    def pick(xs: list[float], q: float) -> float | None:
        return round(xs[min(len(xs) - 1, int(q * len(xs)))], 1) if xs else None

    return {"press_to_ledger_p50_s": pick(ledger, 0.5), "press_to_ledger_max_s": pick(ledger, 1.0),
            "frame_committed_p50_s": pick(vision, 0.5), "frame_committed_max_s": pick(vision, 1.0)}


# --- the ledger --------------------------------------------------------------------------------------------------

def game_records(ledger: Path, games: list[str]) -> dict[str, dict[str, Any]]:
    """Per game: the referee's outputs that make its record (moves, rulings, result) and its input event ids."""
    out: dict[str, dict[str, Any]] = {}
    with sqlite3.connect(ledger) as db:
        for game in games:
            rows = db.execute("select kind, event_id, body from entries where game_id = ? order by seq",
                              (game,)).fetchall()
            record: dict[str, Any] = {"moves": [], "rulings": [], "result": None, "inputs": set(), "attention": []}
            for kind, event_id, body in rows:
                if kind == "input":
                    record["inputs"].add(event_id)
                    continue
                data = json.loads(body)["event"]
                type_ = data.get("type")
                if type_ == "MoveMade":
                    record["moves"].append(data.get("iccs"))
                elif type_ == "Ruling":
                    record["rulings"].append((data.get("kind"), data.get("article")))
                elif type_ == "GameEnded":
                    record["result"] = data.get("result")
                elif type_ == "AttentionNeeded":
                    record["attention"].append(data.get("reason"))
            out[game] = record
    return out


# --- one run -----------------------------------------------------------------------------------------------------

def one_run(args: argparse.Namespace, video: list, games: list, faults: bool) -> dict[str, Any]:
    data = Path(tempfile.mkdtemp(prefix=f"xq-bench-faults-{'faults' if faults else 'clean'}-"))
    started = time.monotonic()
    total = args.boards + PROBES
    # (the boards are played in their number's order: the first `--camera-boards` post frames, so do the probes)
    cameras = {str(i) for i in range(1, total + 1) if i <= args.camera_boards or i > args.boards}
    venue = Venue(data, total, args.fps, cameras)
    boards = sorted(venue.venue["boards"], key=lambda b: int(b) if b.isdigit() else b)
    play, probe_boards = boards[:args.boards], boards[args.boards:]
    stop = threading.Event()
    inputs = Inputs(venue, args, video, games)
    probes, watch = Probes(venue, probe_boards, stop), Watch(venue, stop)
    result: dict[str, Any] = {"data": str(data), "start_s": round(time.monotonic() - started, 1)}
    try:
        t0 = time.time() + 2
        threads = [threading.Thread(target=inputs.run_board, args=(b, k, t0, stop), daemon=True)
                   for k, b in enumerate(play)]
        for t in (*threads, inputs.cameras, probes, watch):
            t.start()
        marks: dict[str, float] = {}
        if faults:
            marks = inflict(venue, t0, tuple(f for f in FAULTS if f in args.faults.split(",")))
        for t in threads:
            t.join(args.ply_s * (args.plies + 4) + 240)
        if marks:  # (games shorter than the faults: the last one's recovery is waited for, up to 90 s)
            last = max(marks.values())
            with contextlib.suppress(TimeoutError):
                until(lambda: recovery(last, probes, watch, "ledger") is not None, timeout=90, step=1.0)
        end_inputs = time.time()
        # drain: until every acknowledged input is in the ledger (or 60 s)
        with contextlib.suppress(TimeoutError):
            until(lambda: all(e in watch.ledger_seen for e in inputs.acked), timeout=60, step=1.0)
        result["drain_s"] = round(time.time() - end_inputs, 1)
        stop.set()
        inputs.cameras.stop()
        probes.join(10)
        watch.join(10)
        result["acked"] = dict(Counter(inputs.acked.values()))
        result["lost"] = sorted(f"{inputs.acked[e]} {e}" for e in inputs.acked if e not in watch.ledger_seen)
        result["refused"] = dict(inputs.refused)
        # frames never read by vision (xq_vision_frames_missed_total, said once per gap in vision.log): refused,
        # lost with the broker, or dropped; by design, but counted
        gaps = [int(n) for n in re.findall(r"(\d+) frame\(s\) never read", (data / "vision.log").read_text())]
        result["frames"] = {"acked": inputs.frames_acked, "refused": inputs.frames_refused,
                            "missed_by_vision": sum(gaps), "missed_gaps": len(gaps)}
        result["observations_published"] = {"once": inputs.cameras.published,
                                            "again_after_broker_restart": inputs.cameras.sent_again}
        result["acked_ids"] = set(inputs.acked)
        downs = re.findall(r"broker restarted \(pid \d+\) after ([0-9.]+) s down", (data / "up.log").read_text())
        result["broker_down_s"] = [float(x) for x in downs]
        # the referees' outputs the broker did not acknowledge, sent again (services/referee/service.py), per log
        result["referee_outputs_sent_again"] = {
            name: len(re.findall(r"output\(s\) not acknowledged", (data / name).read_text(errors="replace")))
            for name in ("up.log", "referee2.log")}
        result["records"] = game_records(data / "ledger.sqlite", [inputs.game_id(b) for b in play])
        if not faults:
            result["probe_latency"] = probe_latency(probes, watch, t0, end_inputs)
        result["recovery_s"] = {name: (round(r, 1) if (r := recovery(at, probes, watch,
                                                                       "vision" if "vision" in name else "ledger"))
                                       is not None else None) for name, at in marks.items()}
        if "broker SIGKILL" in marks:  # vision's side of it as well: a probe frame committed by xq-vision
            r = recovery(marks["broker SIGKILL"], probes, watch, "vision")
            result["recovery_s"]["broker SIGKILL (vision)"] = None if r is None else round(r, 1)
        result["faults_at_s"] = {name: round(at - t0, 1) for name, at in marks.items()}
        result["parts"] = {name: {k: p.get(k) for k in ("status", "restarts")} for name, p in venue.parts().items()}
        result["offset_holes_up"] = venue.offset_holes()
    finally:
        stop.set()
        inputs.cameras.stop()
        venue.stop()
    result["wall_s"] = round(time.monotonic() - started, 1)
    return result


FAULTS = ("vision", "referee", "stop", "broker", "stall")  # --faults: which, always in this order
DEFAULT_FAULTS = FAULTS[:4]


def inflict(venue: Venue, t0: float, which: tuple[str, ...] = FAULTS) -> dict[str, float]:
    """The faults of `which`, one after another, the first FIRST_FAULT_S into the games and each GAP_S after the
    last one ended (so that each is measured on its own); returns when each began (time.time())."""
    marks = {}

    def at(t: float) -> None:
        time.sleep(max(0.0, t - time.time()))

    next_at = t0 + FIRST_FAULT_S
    if "vision" in which:
        at(next_at)
        marks["vision SIGKILL"] = time.time()
        os.kill(venue.parts()["vision-1"]["pid"], signal.SIGKILL)
        next_at = marks["vision SIGKILL"] + GAP_S
    if "referee" in which:
        at(next_at)
        assert venue.referee2 is not None
        marks["referee SIGKILL"] = time.time()
        venue.referee2.kill()
        venue.referee2.wait()
        time.sleep(1.0)  # a supervisor's first backoff
        venue.start_referee2()
        next_at = time.time() + GAP_S
    if "stop" in which:
        at(next_at)
        assert venue.referee2 is not None
        marks[f"referee SIGSTOP {STOP_S:.0f} s"] = time.time()
        venue.referee2.send_signal(signal.SIGSTOP)
        time.sleep(STOP_S)
        venue.referee2.send_signal(signal.SIGCONT)
        next_at = time.time() + GAP_S
    if "broker" in which:
        at(next_at)
        marks["broker SIGKILL"] = time.time()
        os.kill(venue.parts()["broker"]["pid"], signal.SIGKILL)
        next_at = time.time() + GAP_S
    if "stall" in which:
        at(next_at)
        pids = [p["pid"] for name, p in venue.parts().items() if name.startswith("vision")]
        marks[f"vision SIGSTOP {STALL_S:.0f} s"] = time.time()
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        time.sleep(STALL_S)
        for pid in pids:
            os.kill(pid, signal.SIGCONT)
    return marks


def compare(clean: dict[str, Any], faulted: dict[str, Any]) -> dict[str, Any]:
    differing = {}
    for game, want in clean["records"].items():
        got = faulted["records"].get(game)
        if got is None:
            differing[game] = "missing"
            continue
        diff = {k: (want[k], got[k]) for k in ("moves", "rulings", "result", "attention") if want[k] != got[k]}
        # (the inputs ingest acknowledged: the camera's observations differ by design, frames being dropped)
        w, g = want["inputs"] & clean["acked_ids"], got["inputs"] & faulted["acked_ids"]
        if w != g:
            diff["inputs"] = (f"{len(w - g)} only in the clean run", f"{len(g - w)} only in the faulted run")
        if diff:
            differing[game] = diff
    return differing


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--boards", type=int, default=50)
    parser.add_argument("--camera-boards", type=int, default=4)
    parser.add_argument("--plies", type=int, default=22, help="plies per game (22 x 6 s: the faults fall mid-game)")
    parser.add_argument("--fps", type=float, default=2.0)
    parser.add_argument("--ply-s", type=float, default=6.0, help="seconds between plies on a board without camera")
    parser.add_argument("--only", choices=("clean", "faults"), help="one run only")
    parser.add_argument("--faults", default=",".join(DEFAULT_FAULTS),
                        help=f"which faults, comma-separated, in this order: {','.join(FAULTS)} (default "
                        f"{','.join(DEFAULT_FAULTS)}; a fault alone falls FIRST_FAULT_S into the games)")
    parser.add_argument("--out", help="write the JSON report here")
    args = parser.parse_args()
    video, _ = camera_video(args.plies, args.fps)
    games = board_games(args.boards, args.plies)
    runs: dict[str, Any] = {}
    for name in ("clean", "faults"):
        if args.only in (None, name):
            runs[name] = one_run(args, video, games, faults=name == "faults")
    report: dict[str, Any] = {"args": vars(args)}
    for name, run in runs.items():
        records = run["records"]
        report[name] = {k: v for k, v in run.items() if k not in ("records", "acked_ids")}
        report[name]["games"] = len(records)
        report[name]["moves"] = sum(len(r["moves"]) for r in records.values())
        report[name]["attention"] = {g: [len(r["attention"]), str(r["attention"][0])[:110]]
                                     for g, r in records.items() if r["attention"]}
        report[name]["results"] = dict(Counter(str(r["result"]) for r in records.values()))
    if "clean" in runs and "faults" in runs:
        differing = compare(runs["clean"], runs["faults"])
        report["differing_games"] = len(differing)
        report["differences"] = {g: {k: [str(x) for x in v] if isinstance(v, tuple) else v for k, v in d.items()}
                                 if isinstance(d, dict) else d for g, d in sorted(differing.items())}
    text = json.dumps(report, indent=1, default=str)
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
