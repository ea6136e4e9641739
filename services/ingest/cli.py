"""`xqarb ingest serve`: the ingest HTTP service on its own (`xqarb up` runs it together with the rest)."""

from __future__ import annotations

import argparse
import signal
import sys
import threading


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("ingest", help="the ingest HTTP service for devices and people")
    sub = p.add_subparsers(dest="ingest_command", metavar="SUBCOMMAND")
    serve = sub.add_parser("serve", help="serve the ingest endpoints (frames, clock, events) and /metrics")
    serve.add_argument("--config", required=True, help="venue configuration (JSON or TOML): boards, tokens, limits")
    serve.add_argument("--bootstrap-servers", required=True, help="Kafka bootstrap servers, HOST:PORT[,...]")
    serve.add_argument("--host", default="0.0.0.0")
    serve.add_argument("--port", type=int, default=8081)
    serve.set_defaults(handler=_serve)
    p.set_defaults(handler=lambda args: (p.print_help(), 2)[1])


def _serve(args: argparse.Namespace) -> int:
    from xqarb import bus
    from xqarb.config import data_dir
    from xqarb.ingest.app import create_app
    from xqarb.ingest.config import ConfigError, load_config
    from xqarb.ingest.outbox import OUTBOX_FILE, OutboxError, OutboxPublisher
    from xqarb.ingest.server import ServerThread

    try:
        config = load_config(args.config)
    except (ConfigError, OSError) as exc:
        print(f"xqarb ingest: {exc}", file=sys.stderr)
        return 2
    try:
        bus.ensure_topics(args.bootstrap_servers)
        # What gets a 202 is on disk first ($XQARB_DATA_DIR/outbox/ingest.sqlite), then published from there.
        publisher = OutboxPublisher.connect(
            args.bootstrap_servers, data_dir() / OUTBOX_FILE, ack_timeout_s=config.limits.ack_timeout_s
        )
    except (bus.BusError, OutboxError) as exc:
        print(f"xqarb ingest: {exc}", file=sys.stderr)
        return 2
    server = ServerThread(create_app(config, publisher), args.host, args.port).start()
    print(f"ingest: {len(config.boards)} boards, listening on {server.url}/ingest/v1/", flush=True)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()
    server.stop()
    publisher.close()
    return 0
