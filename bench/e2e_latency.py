"""End-to-end latency: from a frame's capture to its move on the live stream, with many simulated boards.

    .venv/bin/python bench/e2e_latency.py [--boards 200] [--fps 2] [--plies 6] [--drain 60] [--warmup 0]
        [--vision-processes 1] [--breakdown]

Starts `xqarb up` (embedded broker, ingest, vision, referee, API) in a child process, renders one real game once
(the shipped games; the renderer's easy scene, no anomalies) and replays its frames on N boards over HTTP in real
time, each board starting at a different moment. A reader on `/api/stream` notes when each move arrives.

Latency of a move = its arrival on the stream - the capture time of the first still frame after the move was made
(the earliest frame in which a camera can see it). Reported: p50, p95, p99, max; and whether the system fell behind:
frames refused with 503 (backpressure), moves never seen within the drain time, consumer lag at the end.

`--warmup S`: each camera sends its board's still start position for S seconds before the game's first frame, as
a venue's cameras stream from before the round starts: vision finds each board then (its costliest step, about
0.5-0.9 s of CPU a board), not in the middle of the first moves. Without it (the default, as in earlier figures)
the latency of the first moves includes all boards being calibrated at once.

`--breakdown`: where each move's time went, per stage (medians and p90 over the moves), from the stamps the system
already writes: the capture of the first still frame showing the move; the capture of the frame on which vision
said BoardStable (the still-board rule: the board must stay still for `stable_us`); that frame's 202 from ingest;
vision's `received_at` on the BoardStable (the frame consumed, decoded and stepped); the observation's Kafka
timestamp (sent); the MoveMade's Kafka timestamp (the referee polled, folded, appended and sent it); its arrival
on the stream. Read back from xq.observations and xq.game-events after the run.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path


def render_frames(plies: int) -> tuple[list[tuple[float, bytes, int, bool]], list[str]]:
    """(t seconds, JPEG, moves completed, still) per frame of the first shipped game's first `plies` moves."""
    from xqarb.demo import shipped_games
    from xqarb.vision.render import jpeg, render_game

    game = shipped_games()[0]
    moves = game["iccs"][:plies]
    frames = []
    for f in render_game(
        game["start_fen"], moves, seed=7, fps=ARGS.fps, difficulty="easy", misplace_rate=0.0, nudge_rate=0.0
    ):
        frames.append((f.t_us / 1e6, jpeg(f.image), f.truth.ply, f.truth.stable and not f.truth.hand_present))
    return frames, moves


class Board(threading.Thread):
    def __init__(
        self, port: int, board: str, token: str, arbiter: str, frames: list, start_at: float, stop: threading.Event
    ) -> None:
        super().__init__(daemon=True, name=f"bench-{board}")
        self.port, self.board, self.token, self.arbiter = port, board, token, arbiter
        self.frames, self.start_at, self.stop = frames, start_at, stop
        self.visible_at: dict[int, int] = {}  # ply -> capture time (us) of the first still frame showing it
        self.sent = self.refused = self.errors = 0
        self.behind_s = 0.0  # how late the last frame was sent compared with its schedule
        self.accepted_at: dict[int, int] = {}  # capture time (us) -> when ingest answered 202 (us)

    def post(self, conn: http.client.HTTPConnection, path: str, body: bytes, headers: dict[str, str]) -> int:
        conn.request("POST", path, body=body, headers={**headers, "Authorization": f"Bearer {self.token}"})
        resp = conn.getresponse()
        resp.read()
        return resp.status

    def run(self) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        game = f"bench-{self.board}-{int(self.start_at)}"
        start = json.dumps(
            {
                "type": "GameStarted",
                "game_id": game,
                "red_player": "R",
                "black_player": "B",
                "recording_required": False,
                "time_control": {"scheme": "increment", "base_ms": 900_000, "increment_ms": 10_000},
            }
        ).encode()
        conn.request(
            "POST",
            f"/ingest/v1/boards/{self.board}/events",
            body=start,
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {self.arbiter}"},
        )
        conn.getresponse().read()
        seen_ply = 0
        for seq, (t, image, ply, still) in enumerate(self.frames, start=1):
            due = self.start_at + t
            wait = due - time.time()
            if wait > 0 and self.stop.wait(wait):
                return
            self.behind_s = max(self.behind_s, time.time() - due)
            capture = time.time_ns() // 1000
            try:
                status = self.post(
                    conn,
                    f"/ingest/v1/boards/{self.board}/frames",
                    image,
                    {"Content-Type": "image/jpeg", "X-Capture-Time": str(capture), "X-Sequence": str(seq)},
                )
            except (OSError, http.client.HTTPException):
                self.errors += 1
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
                continue
            if status == 202:
                self.sent += 1
                self.accepted_at[capture] = time.time_ns() // 1000
            elif status == 503:
                self.refused += 1
            else:
                self.errors += 1
            if still and ply > seen_ply:
                self.visible_at[ply] = capture
                seen_ply = ply


def read_stream(port: int, arrivals: dict[tuple[str, int], int], stop: threading.Event) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=None)  # the stream is quiet between moves
    conn.request("GET", "/api/stream")
    resp = conn.getresponse()
    event_type = None
    while not stop.is_set():
        line = resp.fp.readline().decode()
        if not line:
            return
        if line.startswith("event: "):
            event_type = line[7:].strip()
        elif line.startswith("data: ") and event_type == "MoveMade":
            e = json.loads(line[6:])
            arrivals.setdefault((e["board_id"], e["ply"]), time.time_ns() // 1000)


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (from /proc)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def cpu_seconds(data: Path, up_pid: int) -> dict[str, float]:
    """CPU seconds (user + system) used so far by `xqarb up` itself, by its vision processes (up.log names them),
    by the embedded broker (its other child) and by this benchmark (its camera senders and the stream's reader,
    not the product's): on a shared machine, what the system cost as against how long it waited."""
    import resource

    named = re.search(r"^vision: .*\(pid ([\d, ]+), log", (data / "up.log").read_text(), re.M)
    pids = {"up": [up_pid], "vision": [int(p) for p in named.group(1).split(",")] if named else []}
    pids["broker"] = [p for p in children(up_pid) if p not in pids["vision"]]
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for name, ids in pids.items():
        total = 0.0
        for pid in ids:
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # gone
            total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
        out[name] = round(total, 1)
    own = resource.getrusage(resource.RUSAGE_SELF)
    out["bench"] = round(own.ru_utime + own.ru_stime - RENDER_CPU_S, 1)  # (rendering the frames before: apart)
    return out


RENDER_CPU_S = 0.0  # this process's CPU seconds spent rendering the frames before the run (main)
STAGES = ("still_rule", "ingest_202", "vision", "obs_sent", "referee", "stream")


def breakdown(data: Path, boards: list[Board], arrivals: dict[tuple[str, int], int]) -> dict[str, list[float]]:
    """Per stage, [p50, p90, n] milliseconds over the moves seen (module docstring)."""
    from xqarb import bus

    bootstrap = re.search(r"^broker: (\S+)", (data / "up.log").read_text(), re.M)
    assert bootstrap is not None, "up.log names no broker"
    stables: dict[str, list[tuple[int, int, int]]] = {}  # board -> (capture us, vision stamp us, sent us)
    moves: dict[tuple[str, int], tuple[int, int]] = {}  # (board, ply) -> (occurred_at us, sent us)
    # (the embedded broker rolls observations between two topics and empties the one the referee has read: a run
    # past a switch keeps only the observations since the last emptying, bus.OBSERVATIONS_ROLL_S)
    with bus.Reader(bootstrap.group(1), [bus.OBSERVATIONS, bus.GAME_EVENTS], rolled=True) as reader:
        ends = reader.end_offsets()
        while any(reader.position(tp) < end for tp, end in ends.items()):
            for r in reader.poll(1.0):
                e = r.event
                if e is not None and e.type == "BoardStable":
                    stables.setdefault(e.board_id, []).append((e.occurred_at, e.received_at, r.timestamp_ms * 1000))
                elif e is not None and e.type == "MoveMade":
                    moves.setdefault((e.board_id, e.data["ply"]), (e.occurred_at, r.timestamp_ms * 1000))
    by_board = {b.board: b for b in boards}
    spans: dict[str, list[float]] = {s: [] for s in STAGES}
    for (board, ply), (occurred, sent) in moves.items():
        visible = by_board[board].visible_at.get(ply)
        # the BoardStable the move was read from: the board's last at or before the move's time
        stable = max((s for s in stables.get(board, []) if s[0] <= occurred), default=None)
        accepted = by_board[board].accepted_at.get(occurred)
        if visible is None or stable is None or accepted is None or (board, ply) not in arrivals:
            continue
        capture, stamped, obs_sent = stable
        for name, span in zip(STAGES, (capture - visible, accepted - capture, stamped - accepted, obs_sent - stamped,
                                      sent - obs_sent, arrivals[(board, ply)] - sent), strict=True):
            spans[name].append(span / 1000)
    out = {}
    for name, values in spans.items():
        values.sort()
        if values:
            out[name] = [round(statistics.median(values)), round(values[int(0.9 * (len(values) - 1))]), len(values)]
    return out


def main() -> int:
    data = Path(tempfile.mkdtemp(prefix="xq-bench-"))
    from xqarb.broker import free_port

    port = free_port()
    print(f"rendering {ARGS.plies} plies at {ARGS.fps} fps ...", flush=True)
    global RENDER_CPU_S
    frames, _moves = render_frames(ARGS.plies)
    RENDER_CPU_S = time.process_time()  # the frames are rendered before the system starts: not the senders' cost
    if ARGS.warmup > 0:
        warm = round(ARGS.warmup * ARGS.fps)  # the first frame is the still start position, before any hand
        frames = [(i / ARGS.fps, frames[0][1], 0, False) for i in range(warm)] + [
            (t + warm / ARGS.fps, image, ply, still) for t, image, ply, still in frames
        ]
    video_s = frames[-1][0]
    size = sum(len(f[1]) for f in frames) / len(frames)
    print(f"{len(frames)} frames, {video_s:.0f} s of video, {size / 1000:.0f} KB a frame", flush=True)
    log = (data / "up.log").open("w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "xqarb.cli",
            "up",
            "--boards",
            str(ARGS.boards),
            "--port",
            str(port),
            "--data-dir",
            str(data),
            "--quiet",
            "--vision-processes",
            str(ARGS.vision_processes),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        while "xqarb is up" not in (data / "up.log").read_text():
            if proc.poll() is not None:
                print((data / "up.log").read_text())
                return 1
            time.sleep(0.3)
        config = json.loads((data / "venue.json").read_text())
        arbiter = config["arbiters"]["chief"]["token"]
        stop = threading.Event()
        arrivals: dict[tuple[str, int], int] = {}
        reader = threading.Thread(target=read_stream, args=(port, arrivals, stop), daemon=True)
        reader.start()
        t0 = time.time() + 2
        boards = []
        for i in range(ARGS.boards):
            board = str(i + 1)
            token = next(iter(config["boards"][board]["devices"].values()))
            # Boards start spread over 5 s, as a round does not start on one tick.
            boards.append(Board(port, board, token, arbiter, frames, t0 + 5 * i / ARGS.boards, stop))
        for b in boards:
            b.start()
        for b in boards:
            b.join()
        expected = {(b.board, ply): at for b in boards for ply, at in b.visible_at.items()}
        deadline = time.time() + ARGS.drain
        while time.time() < deadline and not set(expected) <= set(arrivals):
            time.sleep(0.5)
        lat = sorted((arrivals[k] - at) / 1e6 for k, at in expected.items() if k in arrivals)
        missing = len(set(expected) - set(arrivals))
        metrics_text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
        lag = sum(float(v) for v in re.findall(r"^xq_consumer_lag\{[^}]*\} (\S+)", metrics_text, re.M))
        stop.set()
        cpu = cpu_seconds(data, proc.pid)
        stages = breakdown(data, boards, arrivals) if ARGS.breakdown else None
        result = {
            "load_average_1m_at_start": LOAD_AT_START,
            "load_average_1m_at_end": round(os.getloadavg()[0], 1),  # (as the last frames were sent and drained)
            "boards": ARGS.boards,
            "fps": ARGS.fps,
            "plies_per_board": ARGS.plies,
            "video_s": round(video_s, 1),
            "warmup_s": ARGS.warmup,
            "vision_processes": ARGS.vision_processes,
            "frames_sent": sum(b.sent for b in boards),
            "frames_refused_503": sum(b.refused for b in boards),
            "frame_errors": sum(b.errors for b in boards),
            "sender_behind_max_s": round(max(b.behind_s for b in boards), 2),
            "moves_expected": len(expected),
            "moves_seen": len(lat),
            "moves_missing": missing,
            "p50_s": round(statistics.median(lat), 3) if lat else None,
            "p95_s": round(lat[min(len(lat) - 1, int(0.95 * len(lat)))], 3) if lat else None,
            "p99_s": round(lat[min(len(lat) - 1, int(0.99 * len(lat)))], 3) if lat else None,
            "max_s": round(lat[-1], 3) if lat else None,
            "consumer_lag_at_end": lag,
            "cpu_s": cpu,
            # per frame accepted, ms: what each part costs for one frame (the broker's and up's include their
            # fixed cost of the run's length, idle polling included)
            "cpu_ms_per_frame": {k: round(1000 * v / max(1, sum(b.sent for b in boards)), 1) for k, v in cpu.items()},
        }
        if stages is not None:
            result["breakdown_ms"] = stages
        print(json.dumps(result), flush=True)
        return 0
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--boards", type=int, default=200)
    parser.add_argument("--fps", type=float, default=2.0)
    parser.add_argument("--plies", type=int, default=6)
    parser.add_argument("--vision-processes", type=int, default=1, help="`xqarb up --vision-processes`")
    parser.add_argument("--warmup", type=float, default=0.0,
                        help="seconds of the still start position each camera sends before the game's frames")
    parser.add_argument("--breakdown", action="store_true", help="where each move's time went, per stage")
    parser.add_argument("--drain", type=float, default=60.0, help="seconds to wait for late moves after sending")
    ARGS = parser.parse_args()
    LOAD_AT_START = round(os.getloadavg()[0], 1)  # the machine is shared: say how busy it was
    sys.exit(main())
