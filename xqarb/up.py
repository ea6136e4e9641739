"""`xqarb up`: the whole system on one machine, and with `--demo` simulated camera boards playing real games.

One process runs the ingest endpoints, the referee API, the live stream and the web pages on one port, the referee
service (Kafka consumer group member, ledger, xq.game-events) and the vision service in threads; the embedded
Kafka-compatible broker runs as a child process unless `--bootstrap-servers` names a Kafka. Every service keeps
its Prometheus metrics in this process: one `/metrics` shows them all.

Ctrl-C (SIGINT) or SIGTERM stops everything in order: demo boards, HTTP, services, broker.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "up",
        help="run the whole system on this machine (embedded broker unless --bootstrap-servers)",
        description="Start the broker (unless --bootstrap-servers), ingest, vision, referee, the API and web pages on "
        "one port; with --demo, simulated camera boards playing real games. Ctrl-C stops it.",
    )
    p.add_argument("--bootstrap-servers", help="a running Kafka (HOST:PORT[,...]); default: start the embedded broker")
    p.add_argument("--boards", type=int, default=4, help="number of boards (demo boards with --demo); default 4")
    p.add_argument("--demo", action="store_true", help="simulated camera boards and clocks playing real games")
    p.add_argument("--host", default="127.0.0.1", help="address to serve on (0.0.0.0 for the venue network)")
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("--data-dir", help="ledger and evidence frames (default $XQARB_DATA_DIR or ./var)")
    p.add_argument("--config", help="venue configuration (JSON/TOML); default: generated into the data directory")
    p.add_argument("--partitions", type=int, default=None, help="partitions per topic (default 12)")
    p.add_argument("--fps", type=float, default=2.0, help="demo camera frames per second (default 2)")
    p.add_argument("--moves", type=int, default=None, help="demo: each game's first N plies, its result, the next game")
    p.add_argument("--calm", action="store_true", help="demo: no touched pieces, misplaced pieces or stray presses")
    p.add_argument("--seed", type=int, default=0, help="demo: which games and scenes")
    p.add_argument(
        "--strict-clock",
        action="store_true",
        help="demo: players press the clock 2 s after each move whether or not the referee has seen it "
        "(default: once it has, within 15 s, so a busy machine shows late moves rather than clock fouls)",
    )
    p.add_argument(
        "--vision-processes",
        type=int,
        default=1,
        help="vision processes sharing the frames (a consumer group); one per spare core",
    )
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.set_defaults(handler=run)


class System:
    """Everything `xqarb up` starts, and how to stop it again."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.stopping = threading.Event()
        self.broker: Any = None
        self.threads: list[threading.Thread] = []
        self.services: list[Any] = []
        self.server: Any = None
        self.demo: Any = None
        self.demo_summary: dict[str, Any] = {}
        self.hub: Any = None
        self.ledger: Any = None
        self.publisher: Any = None
        self.failed = False
        self.visions: list[subprocess.Popen[bytes]] = []
        self._vision_log: Any = None

    def start(self) -> str:
        from xqarb import bus, metrics
        from xqarb.ingest.app import Ingest
        from xqarb.ingest.config import generate_config, load_config, parse_config
        from xqarb.ingest.publish import BusPublisher
        from xqarb.ingest.server import ServerThread
        from xqarb.referee.api import RefereeApi, StreamHub, create_app, frame_loader, kafka_game_events
        from xqarb.referee.ledger import SqliteLedger

        args = self.args
        data = Path(args.data_dir or os.environ.get("XQARB_DATA_DIR") or "var").resolve()
        data.mkdir(parents=True, exist_ok=True)
        os.environ["XQARB_DATA_DIR"] = str(data)  # the services find the ledger and evidence here
        if args.bootstrap_servers:
            bootstrap = args.bootstrap_servers
        else:
            from xqarb.broker import EmbeddedBroker

            self.broker = EmbeddedBroker().start()
            bootstrap = self.broker.bootstrap
        self.say(f"broker: {bootstrap}{' (embedded)' if self.broker else ''}")
        bus.ensure_topics(bootstrap, partitions=args.partitions or bus.DEFAULT_PARTITIONS)

        if args.config:
            config_path = Path(args.config)
            config = load_config(config_path)
        else:
            path = config_path = data / "venue.json"
            wanted = [str(i) for i in range(1, args.boards + 1)]
            raw = json.loads(path.read_text()) if path.is_file() else None
            if raw is None or sorted(raw.get("boards", {})) != sorted(wanted):
                raw = generate_config(wanted)
                path.write_text(json.dumps(raw, indent=1))
                path.chmod(0o600)
            config = parse_config(raw)
            self.say(f"venue: {len(config.boards)} boards; device and arbiter tokens in {path}")

        self.ledger = SqliteLedger(data / "ledger.sqlite")
        self._start_referee(bootstrap)
        self._start_vision(bootstrap, data, config_path)

        self.publisher = BusPublisher.connect(bootstrap, ack_timeout_s=config.limits.ack_timeout_s)
        ingest = Ingest(config, self.publisher)
        self.hub = StreamHub()
        self.hub.listen(_stream_latency)
        self.threads.append(self.hub.start(kafka_game_events(bootstrap)))
        api = RefereeApi(
            ledger=self.ledger,
            hub=self.hub,
            board_ids=list(config.boards),
            load_frame=frame_loader([data / "evidence", data / "frames"]),
            ingest=ingest,
            delay_for_board=config.delay_for_board,
        )
        self.server = ServerThread(create_app(api, ingest), args.host, args.port).start()
        url = self.server.url
        sampler = metrics.LagSampler(
            metrics.kafka_lag(
                bootstrap, [bus.VISION_GROUP, bus.REFEREE_GROUP], [bus.FRAMES, bus.OBSERVATIONS, bus.CLOCK, bus.ARBITER]
            )
        )
        self.services.append(sampler.start())

        if args.demo:
            self._start_demo(url, config_path, args)
        return url

    def _start_demo(self, url: str, config_path: Path, args: argparse.Namespace) -> None:
        """The simulated boards in a child process (`python -m xqarb.demo`): they render video (CPU work) and talk
        to ingest over HTTP like real devices. Their progress comes back as JSON lines."""
        cmd = [
            sys.executable,
            "-m",
            "xqarb.demo",
            "--url",
            url,
            "--config",
            str(config_path),
            "--boards",
            str(args.boards),
            "--fps",
            str(args.fps),
            "--seed",
            str(args.seed),
            "--run-id",
            str(int(time.time())),
        ]
        if args.moves:
            cmd += ["--moves", str(args.moves)]
        if args.calm:
            cmd.append("--calm")
        if args.strict_clock:
            cmd.append("--strict-clock")
        self.demo = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        reader = threading.Thread(target=self._read_demo, name="xq-demo-progress", daemon=True)
        reader.start()

    def _read_demo(self) -> None:
        assert self.demo is not None and self.demo.stdout is not None
        for line in self.demo.stdout:
            try:
                self.demo_summary = json.loads(line)
            except json.JSONDecodeError:
                print(f"demo: {line.rstrip()}", flush=True)

    def _start_referee(self, bootstrap: str) -> None:
        from xqarb.referee.service import RefereeService

        service = RefereeService(bootstrap, self.ledger)  # it keeps its own metrics (ledger appends, latencies)
        self.services.append(service)
        thread = threading.Thread(target=self._guard, args=("referee", service.run), name="xq-referee", daemon=True)
        thread.start()
        self.threads.append(thread)

    def _start_vision(self, bootstrap: str, data: Path, config_path: Path) -> None:
        """Vision in a child process (`xqarb vision serve`): it is the CPU-heavy part, and a process of its own
        runs on another core instead of taking turns with ingest, the API and the referee for this one's GIL."""
        import importlib.util

        if importlib.util.find_spec("xqarb.vision.service") is None:
            self.say("vision: not built yet (no xqarb.vision.service); frames are accepted but not seen")
            return
        log_path = data / "vision.log"
        self._vision_log = log_path.open("ab")
        cmd = [
            sys.executable,
            "-m",
            "xqarb.cli",
            "vision",
            "serve",
            "--bootstrap-servers",
            bootstrap,
            "--evidence-dir",
            str(data / "evidence"),
            "--config",  # boards whose corners the venue gives start from them
            str(config_path),
        ]
        for _ in range(max(1, self.args.vision_processes)):
            self.visions.append(subprocess.Popen(cmd, stdout=self._vision_log, stderr=subprocess.STDOUT))
        pids = ", ".join(str(p.pid) for p in self.visions)
        self.say(f"vision: {len(self.visions)} process(es) in group xq-vision (pid {pids}, log {log_path})")
        for proc in self.visions:
            threading.Thread(target=self._watch_vision, args=(proc,), name="xq-vision-watch", daemon=True).start()

    def _watch_vision(self, proc: subprocess.Popen[bytes]) -> None:
        code = proc.wait()
        if not self.stopping.is_set():
            self.failed = True
            print(f"xqarb up: the vision service exited with code {code} (see its log)", file=sys.stderr, flush=True)
            self.stopping.set()

    def _guard(self, name: str, fn: Any) -> None:
        try:
            fn()
        except Exception as exc:  # a service dying must be said loudly, and stop the whole system
            if not self.stopping.is_set():
                self.failed = True
                print(f"xqarb up: the {name} service stopped: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
                self.stopping.set()

    def say(self, text: str) -> None:
        print(text, flush=True)

    def progress(self) -> str:
        from xqarb import metrics

        def total(counter: Any) -> float:
            return sum(s.value for m in counter.collect() for s in m.samples if s.name.endswith("_total"))

        boards = self.hub and len({i.event.board_id for i in self.hub.items})
        moves = sum(1 for i in self.hub.items if i.event.type == "MoveMade") if self.hub else 0
        rulings = sum(1 for i in self.hub.items if i.event.type in ("Ruling", "AttentionNeeded")) if self.hub else 0
        line = (
            f"frames in {int(total(metrics.FRAMES_IN))}, refused {int(total(metrics.FRAMES_REFUSED))} · "
            f"moves {moves} on {boards or 0} boards · rulings/alerts {rulings} · "
            f"ledger appends {int(total(metrics.LEDGER_APPENDS))}"
        )
        if self.demo is not None and self.demo_summary:
            s = self.demo_summary
            line += f" · demo: {s['games']} games and {s['moves']} plies played"
            if s["anomalies"]:
                line += " (" + ", ".join(f"{n} {what}" for what, n in sorted(s["anomalies"].items())) + ")"
            if s["errors"]:
                line += f", {s['errors']} errors ({s['last_error'][:120]})"
        return line

    def stop(self) -> None:
        self.stopping.set()
        if self.demo is not None:
            if self.demo.poll() is None:
                self.demo.send_signal(signal.SIGTERM)
            try:
                self.demo.wait(15)
            except subprocess.TimeoutExpired:
                self.demo.kill()
                self.demo.wait(5)
        if self.server is not None:
            self.server.stop()
        if self.hub is not None:
            self.hub.stop()
        for proc in self.visions:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)  # the vision service stops cleanly on an interrupt
        for service in self.services:
            service.stop()
        for thread in self.threads:
            thread.join(10)
        for service in self.services:
            close = getattr(service, "close", None)
            if close is not None:
                close()
        for proc in self.visions:
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:  # it did not stop in time
                proc.kill()
                proc.wait(5)
        if self._vision_log is not None:
            self._vision_log.close()
        if self.publisher is not None:
            self.publisher.close()
        if self.ledger is not None:
            self.ledger.close()
        if self.broker is not None:
            self.broker.stop()


def _stream_latency(item: Any) -> None:
    from xqarb import metrics

    if item.event.type == "MoveMade":
        # The move's occurred_at is the capture time of the frame it was seen in (the referee keeps it).
        metrics.CAPTURE_TO_STREAM.observe(max(0.0, (time.time_ns() // 1000 - item.event.occurred_at) / 1e6))


def run(args: argparse.Namespace) -> int:
    system = System(args)
    stop = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        url = system.start()
    except Exception as exc:
        print(f"xqarb up: could not start: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        system.stop()
        return 1
    from xqarb.collector import tune_for_service

    tune_for_service()  # the referee's fold runs in this process (collector.py says why)
    print(f"xqarb is up: {url}/  (venue overview; Ctrl-C stops)", flush=True)
    print(
        f"  review a game: {url}/review.html?game=ID · overlay: {url}/overlay.html?board=1 · "
        f"API: {url}/api/openapi.json · metrics: {url}/metrics",
        flush=True,
    )
    last = 0.0
    while not stop.is_set() and not system.stopping.is_set():
        stop.wait(0.5)
        if not args.quiet and time.monotonic() - last >= 5:
            last = time.monotonic()
            print(system.progress(), flush=True)
    print("xqarb up: stopping…", flush=True)
    system.stop()
    print("xqarb up: stopped", flush=True)
    return 1 if system.failed else 0
