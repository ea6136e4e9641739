"""The embedded broker's memory over a long `xqarb up --demo`: every topic's records and bytes, minute by minute.

    nice -n 10 .venv/bin/python bench/broker_memory_venue.py [--minutes 60] [--boards 4] [--fps 2] [--port 18740]

Runs `xqarb up --demo` in a child process (the embedded broker with its rollers, ingest, vision, the referee and the
live stream; simulated camera boards and clocks playing real games) and a tap beside it: a consumer of
xq.observations in a group of its own (so rolled as the referee's is), keeping every observation it reads. Every
minute one JSON line: the broker's VmRSS now and its highest over the minute (looked at every 5 s), each topic's
records and bytes (`topic_sizes.py`: read from the start; the frames counted by offsets) and the venue's progress
line. At the end, after `up` stopped: the observations the tap read that the ledger lacks (must be 0; CameraProgress
is no input of the ledger), what the rollers emptied and dropped unread (`up`'s /metrics), plies the demo played
against moves the ledger holds.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from probe import free_port, request, rss_mb
from topic_sizes import topic_sizes

from xqarb import bus
from xqarb.events import Event

PEEK_S = 5.0  # how often the broker's memory is looked at between lines
START_S = 180.0  # `xqarb up` answering, at most (a loaded machine)
METRICS = ("xq_broker_frames_emptied_total", "xq_broker_frames_expired_total", "xq_broker_records_emptied_total")


class Tap:
    """Reads xq.observations (both topics of the pair) in a group of its own and keeps each observation read."""

    def __init__(self, bootstrap: str) -> None:
        self.consumer = bus.Consumer(bootstrap, "bench-observations-tap", [bus.OBSERVATIONS])
        self.seen: dict[str, Event] = {}
        self.progress = 0  # CameraProgress read (no input of the ledger)
        self.topics: dict[str, int] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                records = self.consumer.poll(0.5)
            except bus.BusError as exc:
                print(f"tap: {exc}", file=sys.stderr, flush=True)
                time.sleep(1)
                continue
            for r in records:
                self.topics[r.topic] = self.topics.get(r.topic, 0) + 1
                if r.event is None:
                    continue
                if r.event.type == "CameraProgress":
                    self.progress += 1
                else:
                    self.seen[r.event.event_id] = r.event
            if records:
                self.consumer.commit()
        self.consumer.close()


def broker_pid(bootstrap: str) -> int:
    """The embedded broker's process (`xqarb up`'s child listening on `bootstrap`)."""
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "tansu" in text and f"tcp://{bootstrap}" in text:
            return int(cmdline.parent.name)
    raise RuntimeError(f"no broker process listens on {bootstrap}")


def metric_values(text: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith(METRICS):
            name, value = line.rsplit(" ", 1)
            out[name] = float(value)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=60)
    parser.add_argument("--boards", type=int, default=4)
    parser.add_argument("--fps", type=float, default=2.0)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--sample-s", type=float, default=60.0)
    args = parser.parse_args()
    port = args.port or free_port()
    data = Path(tempfile.mkdtemp(prefix="xq-broker-venue-"))
    command = [str(Path(sys.executable).with_name("xqarb")), "up", "--demo", "--boards", str(args.boards),
               "--fps", str(args.fps), "--port", str(port), "--data-dir", str(data / "var")]
    up = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    bootstrap = ""
    assert up.stdout is not None
    deadline = time.monotonic() + START_S
    for line in up.stdout:
        lines.append(line.rstrip())
        found = re.match(r"broker: (\S+) \(embedded\)", line)
        bootstrap = found[1] if found else bootstrap
        if line.startswith("xqarb is up") or time.monotonic() > deadline:
            break
    if not bootstrap:
        up.send_signal(signal.SIGINT)
        print("\n".join(lines), file=sys.stderr)
        return 1

    def follow() -> None:  # the venue's progress lines (and anything it says)
        assert up.stdout is not None
        for line in up.stdout:
            lines.append(line.rstrip())

    threading.Thread(target=follow, daemon=True).start()
    pid = broker_pid(bootstrap)
    tap = Tap(bootstrap)
    tap.thread.start()
    print(json.dumps({"start": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "boards": args.boards,
                      "fps": args.fps, "bootstrap": bootstrap, "data": str(data),
                      "roll_s": {t: bus.ROLL_PERIODS_S[t] for t in bus.ROLLED}}), flush=True)
    t0 = time.monotonic()
    end = t0 + args.minutes * 60
    highest = 0.0

    def sample() -> None:
        progress = next((line for line in reversed(lines) if line.startswith("frames in")), "")
        print(json.dumps({"min": round((time.monotonic() - t0) / 60, 1),
                          "utc": time.strftime("%H:%M:%S", time.gmtime()), "rss_mb": round(rss_mb(pid), 1),
                          "rss_max_mb": round(max(highest, rss_mb(pid)), 1),
                          "topics": topic_sizes(bootstrap, frozenset({bus.FRAMES, bus.FRAMES_ROLLED})),
                          "tap": {"observations": len(tap.seen), "progress": tap.progress, "by_topic": tap.topics},
                          "venue": progress}), flush=True)

    sample()
    next_line = t0 + args.sample_s
    while time.monotonic() < end and up.poll() is None:
        time.sleep(min(PEEK_S, max(0.0, end - time.monotonic())))
        highest = max(highest, rss_mb(pid))
        if time.monotonic() >= min(next_line, end):
            sample()
            highest = 0.0
            next_line += args.sample_s
    status, body = request(f"http://127.0.0.1:{port}/metrics")
    rollers = metric_values(body.decode(errors="replace")) if status == 200 else {}
    time.sleep(10)  # the last observations folded
    tap.stop.set()
    tap.thread.join(15)
    up.send_signal(signal.SIGINT)
    up.wait(60)
    report(data / "var" / "ledger.sqlite", tap, rollers, lines)
    return 0


def report(ledger_path: Path, tap: Tap, rollers: dict[str, Any], lines: list[str]) -> None:
    from xqarb.referee.ledger import SqliteLedger

    with SqliteLedger(ledger_path) as ledger:
        found = ledger.find_events(list(tap.seen.values()))
        moves = sum(1 for game in ledger.games() for e in ledger.entries(game.game_id)
                    if e.event.type == "MoveMade")
    missing = sorted((e for i, e in tap.seen.items() if i not in found), key=lambda e: e.occurred_at)
    # How long before the tap stopped each missing one happened: the last seconds' observations are those a loaded
    # referee had not folded yet when `up` stopped; an older one is a loss.
    newest_us = max((e.occurred_at for e in tap.seen.values()), default=0)
    demo = next((line for line in reversed(lines) if "plies played" in line), "")
    plies = re.search(r"(\d+) plies played", demo)
    print(json.dumps({"end": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
                      "observations_read_by_tap": len(tap.seen), "camera_progress_read_by_tap": tap.progress,
                      "tap_by_topic": tap.topics, "observations_not_in_ledger": len(missing),
                      "missing_sample": [(e.type, e.board_id, e.event_id) for e in missing[:5]],
                      "missing_s_before_last_seen": [round((newest_us - e.occurred_at) / 1e6, 1) for e in missing],
                      "rollers": rollers, "demo_plies": int(plies[1]) if plies else None,
                      "moves_in_ledger": moves}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
