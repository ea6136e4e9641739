"""How fast `xqarb up` comes back from a crashed part: vision (SIGKILL), referee (an exception out of its loop),
embedded broker (SIGKILL), and how long SIGTERM then takes.

    python bench/supervise_recovery.py [--rounds N]

Starts `xqarb up --boards 1` (no demo) as a child process and, per round and fault, measures:
  * vision:  SIGKILL -> the part shown up again (new pid) -> the xq-vision group commits a frame posted after it;
  * referee: a thread of `up`, which nothing outside can kill: measured with `System` in this process instead,
    its service's loop made to raise: raise -> the part up again -> an arbiter's GameStarted in the ledger;
  * broker:  SIGKILL -> ingest answers 202 -> a resignation posted then reaches /api/boards (this includes the
    referee's ordering hold of up to 10 s for a board without a camera);
  * SIGTERM of `up` after all that -> exit.
A few minutes of CPU at most. Without any fault, an arbiter's input of a board without a camera takes about
10 s to the ledger and the stream (the referee holds it for the camera: ordering.py's hold_s); compare with that.

Measured on the shared 2-core machine, 3 rounds (the rounds within 30 s of each other, so the backoff grows):
  vision  SIGKILL: up again 0.7 / 1.1 / 2.0 s; frames committed by the new process 20.0 / 22.4 / 10.2 s
  broker  SIGKILL: ingest 202 again 1.6 / 0.8 / 1.4 s; a resignation on /api/boards 16.3 / 16.2 / 16.9 s
  referee raising: up again 1.1 / 1.5 / 2.6 s; its next input in the ledger 16.3 / 16.8 / 17.8 s
  SIGTERM of `up` after all that: 1.1 s, exit 0; no fault: input to ledger 10.1-10.3 s.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from probe import free_port, request, until


class Venue:
    def __init__(self, base: str, data: Path) -> None:
        self.base, self.data = base, data
        venue = json.loads((data / "venue.json").read_text())
        self.board, info = next(iter(venue["boards"].items()))
        self.camera = next(t for name, t in info["devices"].items() if name.startswith("cam"))
        self.arbiter = next(iter(venue["arbiters"].values()))["token"]
        self.seq = int(time.time())

    def parts(self) -> dict[str, dict[str, Any]]:
        status, body = request(self.base + "/api/venue/parts")
        return {p["part"]: p for p in json.loads(body)["parts"]} if status == 200 else {}

    def event(self, obj: dict[str, Any]) -> int:
        self.seq += 1
        obj = {**obj, "source_seq": self.seq, "occurred_at": time.time_ns() // 1000}
        headers = {"Authorization": f"Bearer {self.arbiter}", "Content-Type": "application/json"}
        return request(f"{self.base}/ingest/v1/boards/{self.board}/events", json.dumps(obj).encode(), headers)[0]

    def start_game(self, game: str) -> int:
        return self.event({"type": "GameStarted", "game_id": game, "red_player": "R", "black_player": "B",
                           "time_control": {"scheme": "sudden_death", "base_ms": 900_000},
                           "recording_required": False})

    def frame(self) -> dict[str, Any] | None:
        import cv2
        import numpy as np

        jpeg = cv2.imencode(".jpg", np.full((48, 64, 3), 180, dtype=np.uint8))[1].tobytes()
        self.seq += 1
        headers = {"Authorization": f"Bearer {self.camera}", "Content-Type": "image/jpeg",
                   "X-Capture-Time": str(time.time_ns() // 1000), "X-Sequence": str(self.seq)}
        status, body = request(f"{self.base}/ingest/v1/boards/{self.board}/frames", jpeg, headers)
        return json.loads(body) if status == 202 else None

    def in_ledger(self, game: str) -> bool:
        with sqlite3.connect(self.data / "ledger.sqlite") as db:
            return db.execute("select 1 from games where game_id = ?", (game,)).fetchone() is not None

    def ended_on_stream(self, game: str) -> bool:
        status, body = request(self.base + "/api/boards")
        return status == 200 and any(b["game_id"] == game and b["result"] for b in json.loads(body)["boards"])


def vision_reads(venue: Venue, bootstrap: str) -> bool:
    from kafka import KafkaConsumer, TopicPartition

    from xqarb import bus

    topic = bus.frames_topics_at(time.time())[0]  # the embedded broker rolls frames by the clock (FramesRoller)
    where = venue.frame()
    if where is None:
        return False
    probe = KafkaConsumer(bootstrap_servers=bootstrap, group_id="xq-vision", enable_auto_commit=False)
    try:
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            committed = probe.committed(TopicPartition(topic, where["partition"]))
            if committed is not None and committed > where["offset"]:
                return True
            time.sleep(0.1)
        return False
    finally:
        probe.close()


def kill_vision(venue: Venue, bootstrap: str, restarts: int) -> dict[str, float]:
    old = venue.parts()["vision-1"]
    t0 = time.monotonic()
    os.kill(old["pid"], signal.SIGKILL)
    until(lambda: (p := venue.parts().get("vision-1")) is not None and p["status"] == "up"
          and p["pid"] != old["pid"])  # fmt: skip
    up_s = time.monotonic() - t0
    until(lambda: vision_reads(venue, bootstrap))
    return {"up_s": up_s, "working_s": time.monotonic() - t0}


def kill_broker(venue: Venue, game: str) -> dict[str, float]:
    old = venue.parts()["broker"]
    t0 = time.monotonic()
    os.kill(old["pid"], signal.SIGKILL)
    until(lambda: venue.start_game(game) == 202, step=0.1)
    accepted_s = time.monotonic() - t0
    venue.event({"type": "Resigned", "side": "red"})
    until(lambda: venue.ended_on_stream(game), timeout=90)
    return {"ingest_202_s": accepted_s, "working_s": time.monotonic() - t0}


def referee_in_process(rounds: int) -> list[dict[str, float]]:
    """The referee's thread raising, measured with `System` in this process."""
    from xqarb import up
    from xqarb.cli import build_parser

    data = Path(tempfile.mkdtemp(prefix="xq-bench-referee-"))
    port = free_port()
    args = build_parser().parse_args(["up", "--boards", "1", "--port", str(port), "--data-dir", str(data), "--quiet"])
    system = up.System(args)
    base = system.start()
    venue = Venue(base, data)
    out = []
    try:
        ready = f"bench-referee-ready-{int(time.time())}"  # the referee at work before its first fault
        assert venue.start_game(ready) == 202
        until(lambda: (system.supervise(), venue.in_ledger(ready))[1], timeout=60)
        for n in range(rounds):
            part = next(p for p in system.supervisor.parts if p.name == "referee")
            service = part.service

            def boom(service: Any = service) -> int:
                raise RuntimeError("injected by bench/supervise_recovery.py")

            t0 = time.monotonic()
            service.run_once = boom  # the loop raises at its next batch
            until(lambda n=n: (system.supervise(), venue.parts()["referee"]["restarts"] == n + 1)[1])
            up_s = time.monotonic() - t0
            game = f"bench-referee-{n}-{int(time.time())}"
            assert venue.start_game(game) == 202
            until(lambda game=game: (system.supervise(), venue.in_ledger(game))[1], timeout=60)
            out.append({"up_s": up_s, "working_s": time.monotonic() - t0})
    finally:
        system.stop()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="xq-bench-supervise-"))
    port = free_port()
    out_path = tmp / "up.log"
    with open(out_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "xqarb.cli", "up", "--boards", "1", "--port", str(port),
                                 "--data-dir", str(tmp / "data"), "--quiet"], stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    results: dict[str, Any] = {"vision": [], "broker": []}
    try:
        start_s = until(lambda: request(base + "/readyz")[0] == 200)
        results["start_s"] = start_s
        venue = Venue(base, tmp / "data")
        bootstrap = re.search(r"broker: (\S+) \(embedded\)", out_path.read_text()).group(1)  # type: ignore[union-attr]
        until(lambda: vision_reads(venue, bootstrap))
        for n in range(args.rounds):
            results["vision"].append(kill_vision(venue, bootstrap, n + 1))
            results["broker"].append(kill_broker(venue, f"bench-broker-{n}-{int(time.time())}"))
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        results["sigterm_exit_code"] = proc.wait(60)
        results["sigterm_s"] = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
    results["referee"] = referee_in_process(args.rounds)
    print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
