"""`xqarb up`: the whole system on one machine, and with `--demo` simulated camera boards playing real games.

One process runs the ingest endpoints, the referee API, the live stream and the web pages on one port, the referee
service (Kafka consumer group member, ledger, xq.game-events) and the vision service in threads; the embedded
Kafka-compatible broker runs as a child process unless `--bootstrap-servers` names a Kafka. Every service keeps
its Prometheus metrics in this process: one `/metrics` shows them all.

Ctrl-C (SIGINT) or SIGTERM stops everything in order: demo boards, HTTP, services, broker.
The broker, the referee and the vision processes are supervised (xqarb/supervise.py): restarted with backoff when
they go down, shown on `/api/venue/parts`, the venue page and `xq_part_up`; one given up on stops everything.
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
    p.add_argument("--db", help="the ledger, a postgresql:// URL for one shared by several machines "
                   "(default $XQARB_LEDGER_URL, else the data directory's SQLite file)")
    p.add_argument("--config", help="venue configuration (JSON/TOML); default: generated into the data directory")
    p.add_argument("--partitions", type=int, default=None, help="partitions per topic (default 12)")
    p.add_argument("--fps", type=float, default=2.0, help="demo camera frames per second (default 2)")
    p.add_argument("--moves", type=int, default=None, help="demo: each game's first N plies, its result, the next game")
    p.add_argument(
        "--players", type=int, default=None,
        help="demo: a tournament of N players (a round robin where --rounds lets all meet, else a Swiss)",
    )
    p.add_argument("--rounds", type=int, default=3, help="demo: rounds of the tournament (with --players)")
    p.add_argument("--calm", action="store_true", help="demo: no touched pieces, misplaced pieces or stray presses")
    p.add_argument("--think", type=think_seconds, default=0.0, metavar="SECONDS",
                   help="demo: seconds each player thinks over a move, the board still (default 0: a ply every "
                   "6-8 s per board; about 25 is a rapid game's pace)")
    p.add_argument("--perpetual", action="store_true",
                   help="demo: board 1 starts with a perpetual check the arbiter confirms (4.1.4); by default its "
                   "second game, and never with --calm alone")
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
        self.tournament_path: Path | None = None
        self.hub: Any = None
        self.ledger: Any = None
        self.publisher: Any = None
        self.failed = False
        self._vision_log: Any = None
        self.supervisor: Any = None
        self.stream_reader: Any = None

    def start(self) -> str:
        from xqarb import bus, metrics
        from xqarb.broker import EmbeddedBroker, topic_rollers
        from xqarb.config import ledger_target
        from xqarb.ingest.app import Ingest
        from xqarb.ingest.config import generate_config, load_config, parse_config
        from xqarb.ingest.server import ServerThread
        from xqarb.referee.api import RefereeApi, StreamHub, create_app, kafka_game_events
        from xqarb.referee.ledger import open_ledger
        from xqarb.supervise import BrokerPart, StreamReader, Supervisor
        from xqarb.vision.sweep import EvidenceSweeper, open_venue_store, venue_frame_loader

        args = self.args
        data = Path(args.data_dir or os.environ.get("XQARB_DATA_DIR") or "var").resolve()
        data.mkdir(parents=True, exist_ok=True)
        os.environ["XQARB_DATA_DIR"] = str(data)  # the services find the ledger and evidence here
        if args.bootstrap_servers:
            bootstrap = args.bootstrap_servers
        else:
            self.broker = EmbeddedBroker().start()
            bootstrap = self.broker.bootstrap
        self.say(f"broker: {bootstrap}{' (embedded)' if self.broker else ''}")

        partitions = args.partitions or bus.DEFAULT_PARTITIONS
        # The embedded broker keeps every record: camera frames and observations roll between two topics each,
        # emptied once consumed.
        rollers = [] if self.broker is None else topic_rollers(bootstrap, partitions=partitions)

        def ensure_topics(servers: str) -> None:
            bus.ensure_topics(servers, partitions=partitions)
            for roller in rollers:
                roller.ensure_topics()

        ensure_topics(bootstrap)
        self.services += [roller.start() for roller in rollers]
        self.supervisor = Supervisor(
            [],
            say=self.say,
            when_down={"broker": self._broker_down},
            after_restart={"broker": self._broker_back},
        )
        if self.broker is not None:
            self.supervisor.add(BrokerPart(self.broker, ensure_topics))

        if args.demo and args.players:  # a board for every pairing, and the organiser's definition for the API
            from xqarb.demo_tournament import write_definition

            args.boards = max(args.boards, args.players // 2)
            stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
            self.tournament_path = write_definition(data, args.players, args.rounds, stamp)
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

        # --db, $XQARB_LEDGER_URL, else data/ledger.sqlite
        self.ledger = open_ledger(ledger_target(getattr(args, "db", None)))
        self._start_referee(bootstrap, config.alerts.flag_warning_s, config.camera_boards())
        self._start_vision(bootstrap, data, config_path, partitions)

        from xqarb.ingest.outbox import OUTBOX_FILE, OutboxPublisher

        # What ingest answers 202 to is on disk first (the outbox), so a broker that dies loses none of it.
        limits = config.limits
        # (frames kept and sent again after the embedded broker restarted empty: services/ingest/frame_replay.py)
        self.publisher = OutboxPublisher.connect(bootstrap, data / OUTBOX_FILE, ack_timeout_s=limits.ack_timeout_s,
                                                 replay_frames=self.broker is not None)
        ingest = Ingest(config, self.publisher)
        self.hub = StreamHub()
        self.hub.listen(_stream_latency)
        self.stream_reader = StreamReader(lambda: kafka_game_events(bootstrap), self.hub.position)
        self.threads.append(self.hub.start(self.stream_reader))
        api = RefereeApi(
            ledger=self.ledger,
            hub=self.hub,
            board_ids=list(config.boards),
            load_frame=venue_frame_loader(config_path, [data / "evidence", data / "frames"]),
            ingest=ingest,
            delay_for_board=config.delay_for_board,
        )
        api.venue_path = config_path  # the calibration page saves a board's corners there
        app = create_app(api, ingest)
        app.register_blueprint(self.supervisor.blueprint())  # /api/venue/parts
        sampler = metrics.LagSampler(
            metrics.kafka_lag(
                bootstrap,
                [bus.VISION_GROUP, bus.REFEREE_GROUP],
                [bus.FRAMES, bus.FRAMES_ROLLED, bus.OBSERVATIONS, bus.OBSERVATIONS_ROLLED, bus.CLOCK, bus.CLOCK_ROLLED,
                 bus.ARBITER, bus.ARBITER_ROLLED, bus.GAME_EVENTS, bus.GAME_EVENTS_ROLLED],
            )
        )
        self.services.append(sampler.start())
        # Evidence retention (the venue's [evidence] policy): frames no ruling, alert, move or action names thinned.
        store, policy = open_venue_store(config_path, data / "evidence")
        self.services.append(EvidenceSweeper(store, self.ledger, policy, say=self.say).start())
        # The server starts last: once it answers (/readyz), everything behind it runs, so a client that saw it
        # ready never meets a start that fails after all.
        self.server = ServerThread(app, args.host, args.port).start()
        url = self.server.url

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
        if args.players:
            cmd += ["--players", str(args.players), "--rounds", str(args.rounds), "--tournament",
                    str(self.tournament_path)]
        if args.calm:
            cmd.append("--calm")
        if args.think:
            cmd += ["--think", str(args.think)]
        if args.perpetual:
            cmd.append("--perpetual")
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

    def _start_referee(self, bootstrap: str, flag_warning_s: float, camera_boards: frozenset[str]) -> None:
        from xqarb.referee.head_publisher import TreeHeadPublisher
        from xqarb.referee.service import RefereeService
        from xqarb.supervise import RefereeThread

        # It keeps its own metrics (ledger appends, latencies); restarted, it rebuilds its boards from the ledger.
        # The venue's signing key is made on the first run.
        part = RefereeThread(
            lambda: RefereeService(bootstrap, self.ledger, tree_heads=TreeHeadPublisher.for_venue(self.ledger),
                                   flag_warning_ms=round(flag_warning_s * 1000),  # the venue's [alerts]
                                   camera_boards=camera_boards)  # their presses wait for the camera (ordering.py)
        )
        part.start()
        # Left running through a broker restart, as vision is: its consumer rejoins and reads the new topics from
        # their start, its outputs are sent again until acknowledged (services/referee/service.py).
        self.supervisor.add(part, needs="broker" if self.broker is not None else None)

    def _broker_down(self) -> None:
        if self.stream_reader is not None:
            self.stream_reader.pause()
        if self.publisher is not None:
            self.publisher.broker_down()  # frames wait, none on its way reaches the new broker first

    def _broker_back(self) -> None:
        """The embedded broker came back empty (memory storage) with its topics created again: the live stream
        reads them afresh. Vision and the referee kept running and rejoin their groups by themselves (one that died
        meanwhile is started again by the supervisor)."""
        if self.stream_reader is not None:
            self.stream_reader.renew()
        if self.publisher is not None:
            self.publisher.broker_back()  # the frames it lost go again, in order, before new ones

    def _start_vision(self, bootstrap: str, data: Path, config_path: Path, partitions: int) -> None:
        """Vision in a child process (`xqarb vision serve`): it is the CPU-heavy part, and a process of its own
        runs on another core instead of taking turns with ingest, the API and the referee for this one's GIL."""
        import importlib.util

        if importlib.util.find_spec("xqarb.vision.service") is None:
            self.say("vision: not built yet (no xqarb.vision.service); frames are accepted but not seen")
            return
        from xqarb.supervise import VisionProcess, vision_command

        log_path = data / "vision.log"
        self._vision_log = log_path.open("ab")
        cmd = vision_command(bootstrap, data / "evidence", config_path, partitions)
        # (a vision process started after the embedded broker restarted empty learns the games in progress from
        # the API's boards: services/vision/resume.py)
        host = "127.0.0.1" if self.args.host in ("0.0.0.0", "::", "") else self.args.host
        cmd += ["--state-url", f"http://{host}:{self.args.port}"]
        count = max(1, self.args.vision_processes)
        parts = [VisionProcess(f"vision-{i}", cmd, self._vision_log) for i in range(1, count + 1)]
        for part in parts:
            part.start()
            self.supervisor.add(part, needs="broker" if self.broker is not None else None)
        pids = ", ".join(str(p.pid()) for p in parts)
        self.say(f"vision: {count} process(es) in group xq-vision (pid {pids}, log {log_path})")

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

    def supervise(self) -> None:
        """One look at the parts (from the main loop); a part given up on stops everything (never half up)."""
        if self.supervisor is None or self.stopping.is_set():
            return
        self.supervisor.tick()
        if self.supervisor.failed:
            self.failed = True
            print(f"xqarb up: gave up on {', '.join(self.supervisor.failed)}: stopping", file=sys.stderr, flush=True)
            self.stopping.set()

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
        parts = [] if self.supervisor is None else [p for p in self.supervisor.parts if p.name != "broker"]
        for part in parts:  # all asked at once, then waited for
            part.begin_stop()
        for service in self.services:
            service.stop()
        for thread in self.threads:
            thread.join(10)
        for part in parts:
            part.finish_stop()
        for service in self.services:
            close = getattr(service, "close", None)
            if close is not None:
                close()
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


# How often the main loop looks at the parts: a crashed part is noticed within this (plus its backoff).
SUPERVISE_EVERY_S = 0.25


def think_seconds(text: str) -> float:
    """`--think`: seconds within what the demo's videos can play (refused here, not in the demo's process)."""
    from xqarb.vision.render import MAX_THINK_S

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 <= value <= MAX_THINK_S:
        raise argparse.ArgumentTypeError(f"must be within 0-{MAX_THINK_S:g} s, not {text}")
    return value


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
        stop.wait(SUPERVISE_EVERY_S)
        system.supervise()
        if not args.quiet and time.monotonic() - last >= 5:
            last = time.monotonic()
            print(system.progress(), flush=True)
    print("xqarb up: stopping…", flush=True)
    system.stop()
    print("xqarb up: stopped", flush=True)
    return 1 if system.failed else 0
