"""The venue's HTTP server under many stream viewers and hostile half-sent requests (loopback only, ~1 minute).

    .venv/bin/python bench/http_server.py [--streams 300] [--posts 300] [--half 200] [--server hypercorn|werkzeug]

A server child process serves a stand-in of the venue's app: `/api/stream` as the API serves it (server-sent
events, a blocking wait of up to 1 s for the next event, one event a second) and a clock-press POST that parses
its JSON and answers 202. The bench then
1. opens N stream clients and keeps reading them (one selector thread), and times M clock posts (4 posting
   threads on keep-alive connections): p50/p99;
2. opens H half-sent requests (half of them a head without its end, half a head whose body never comes) and
   counts the server's threads; times posts again while they are open; notes when the server closes each;
3. sends SIGTERM with the streams still open and times the exit.
`--server werkzeug` runs the former server (Werkzeug's threaded development server) for comparison; `--up` runs
the real venue instead of the stand-in (`xqarb up --boards 4`: its `/api/stream`, and camera frames posted with
the cameras' tokens through ingest to the embedded broker; its head deadline is the default, 10 s).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def stand_in_app() -> Any:
    from flask import Flask, Response, request

    app = Flask("bench")
    tick = threading.Condition()
    state = {"n": 0}

    def ticker() -> None:
        while True:
            time.sleep(1.0)
            with tick:
                state["n"] += 1
                tick.notify_all()

    threading.Thread(target=ticker, daemon=True).start()

    @app.get("/api/stream")
    def stream() -> Response:
        def gen() -> Any:
            yield "retry: 1000\n\n"
            seen = state["n"]
            while True:
                with tick:
                    tick.wait(1.0)
                if state["n"] != seen:
                    seen = state["n"]
                    yield f"id: {seen}\nevent: ClockPressed\ndata: {{\"n\": {seen}}}\n\n"

        return Response(gen(), mimetype="text/event-stream")

    @app.post("/ingest/v1/boards/<board>/clock")
    def clock(board: str) -> Response:
        body = request.get_json(force=True)
        return Response(json.dumps({"accepted": True, "board": board, "seq": body.get("seq")}), 202,
                        mimetype="application/json")

    return app


def serve(kind: str, port_file: str, head_timeout_s: float) -> None:
    sys.path.insert(0, str(ROOT))
    app = stand_in_app()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    if kind == "werkzeug":
        import logging

        from werkzeug.serving import make_server

        logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no access line per request

        server = make_server("127.0.0.1", 0, app, threaded=True)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        port, halt = server.server_port, server.shutdown
    else:
        from xqarb.ingest.server import HttpLimits, ServerThread

        st = ServerThread(app, "127.0.0.1", 0, HttpLimits(head_timeout_s=head_timeout_s,
                                                          body_timeout_s=head_timeout_s)).start()
        port, halt = st.port, st.stop
    Path(port_file).write_text(str(port))
    stop.wait()
    halt()
    os._exit(0)


def threads_of(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    return -1


class Streams:
    """N stream clients read by one selector thread (their bytes counted, not parsed)."""

    def __init__(self, port: int, n: int) -> None:
        self.sel = selectors.DefaultSelector()
        self.bytes = 0
        self.open = 0
        self.socks: list[socket.socket] = []
        for _ in range(n):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"GET /api/stream HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n")
            s.setblocking(False)
            self.sel.register(s, selectors.EVENT_READ)
            self.socks.append(s)
        self.open = n
        self.alive = True
        threading.Thread(target=self.run, daemon=True).start()

    def run(self) -> None:
        while self.alive and self.open:
            for key, _ in self.sel.select(0.5):
                sock: socket.socket = key.fileobj  # type: ignore[assignment]
                try:
                    data = sock.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    self.sel.unregister(sock)
                    self.open -= 1
                self.bytes += len(data)


# `--up`: camera posts on the real venue, one poster per board with its camera's token (set by main()).
CAMERAS: list[tuple[str, str]] = []
JPEG = b""
SEQ = [0]


def post_latencies(port: int, n: int, workers: int = 4) -> list[float]:
    out: list[float] = []
    lock = threading.Lock()

    def worker(k: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        for i in range(n // workers):
            t0 = time.perf_counter()
            if CAMERAS:
                board, token = CAMERAS[k % len(CAMERAS)]
                with lock:
                    SEQ[0] += 1
                    seq = SEQ[0]
                conn.request("POST", f"/ingest/v1/boards/{board}/frames", JPEG, {
                    "Authorization": f"Bearer {token}", "Content-Type": "image/jpeg",
                    "X-Capture-Time": str(int(time.time() * 1e6)), "X-Sequence": str(seq)})
            else:
                body = json.dumps({"seq": i, "side": "red"})
                conn.request("POST", f"/ingest/v1/boards/{k}/clock", body, {"Content-Type": "application/json"})
            resp = conn.getresponse()
            resp.read()
            dt = time.perf_counter() - t0
            assert resp.status == 202, resp.status
            with lock:
                out.append(dt)
        conn.close()

    ts = [threading.Thread(target=worker, args=(k,)) for k in range(workers)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    return out


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))] * 1000 if xs else float("nan")


def half_sent(port: int, n: int) -> list[socket.socket]:
    socks = []
    for i in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        if i % 2:
            s.sendall(b"POST /ingest/v1/boards/1/clock HTTP/1.1\r\nHost: x\r\nContent-Le")  # a head, unfinished
        else:
            s.sendall(b"POST /ingest/v1/boards/1/clock HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 1000\r\n\r\n{\"seq\"")  # a head, and a body that never comes
        s.setblocking(False)
        socks.append(s)
    return socks


def closed_count(socks: list[socket.socket]) -> int:
    n = 0
    for s in socks:
        try:
            data = s.recv(65536)
            n += 1 if data == b"" or data.startswith(b"HTTP/1.1 408") else 0
        except BlockingIOError:
            pass
        except OSError:
            n += 1
    return n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--streams", type=int, default=300)
    ap.add_argument("--posts", type=int, default=400)
    ap.add_argument("--half", type=int, default=200)
    ap.add_argument("--head-timeout", type=float, default=5.0, help="the server's head and body deadlines, s")
    ap.add_argument("--server", choices=["hypercorn", "werkzeug"], default="hypercorn")
    ap.add_argument("--up", action="store_true", help="the real venue: `xqarb up --boards 4`, camera frame posts")
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--port-file", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        serve(args.server, args.port_file, args.head_timeout)
        return

    port_file = Path(f"/tmp/xq-bench-http-{os.getpid()}")
    if args.up:
        child, port = start_up(port_file)
    else:
        child = subprocess.Popen([sys.executable, __file__, "--serve", "--server", args.server, "--port-file",
                                  str(port_file), "--head-timeout", str(args.head_timeout)], cwd=ROOT)
    try:
        deadline = time.monotonic() + 30
        while not args.up and not (port_file.exists() and port_file.read_text()) and time.monotonic() < deadline:
            time.sleep(0.1)
        port = port if args.up else int(port_file.read_text())
        report: dict[str, Any] = {"server": "xqarb up (hypercorn), frame posts" if args.up else args.server}
        idle = post_latencies(port, 100)
        report["posts_no_streams_ms"] = {"p50": round(pct(idle, 50), 2), "p99": round(pct(idle, 99), 2)}
        streams = Streams(port, args.streams)
        time.sleep(3.0)
        report["streams_open"] = streams.open
        report["threads_with_streams"] = threads_of(child.pid)
        lat = post_latencies(port, args.posts)
        report["posts_with_streams_ms"] = {"n": len(lat), "p50": round(pct(lat, 50), 2), "p99": round(pct(lat, 99), 2),
                                           "max": round(max(lat) * 1000, 2)}
        report["stream_bytes_read"] = streams.bytes
        sent_at = time.monotonic()
        half = half_sent(port, args.half)
        time.sleep(1.0)
        report["threads_with_half_sent"] = threads_of(child.pid)
        lat = post_latencies(port, args.posts)
        report["posts_with_half_sent_ms"] = {"p50": round(pct(lat, 50), 2), "p99": round(pct(lat, 99), 2)}
        closed = 0
        # xqarb up keeps the defaults: heads 10 s, bodies 30 s.
        wait_s = (30.0 if args.up else args.head_timeout) * 1.5 + 5
        while time.monotonic() - sent_at < wait_s:
            closed = closed_count(half) if closed < len(half) else closed
            if closed >= len(half):
                break
            time.sleep(0.5)
        report["half_sent_closed"] = f"{closed}/{len(half)} within {time.monotonic() - sent_at:.1f} s of sending"
        report["threads_after_timeout"] = threads_of(child.pid)
        report["streams_still_open"] = streams.open
        t0 = time.monotonic()
        child.send_signal(signal.SIGTERM)
        try:
            child.wait(30)
            report["sigterm_exit_s"] = round(time.monotonic() - t0, 2)
        except subprocess.TimeoutExpired:
            report["sigterm_exit_s"] = "over 30 s"
        streams.alive = False
        print(json.dumps(report, indent=1))
    finally:
        if child.poll() is None:
            child.kill()
        if port_file.is_dir():
            shutil.rmtree(port_file, ignore_errors=True)
        port_file.unlink(missing_ok=True)


def start_up(folder: Path) -> tuple[subprocess.Popen[bytes], int]:
    """`xqarb up --boards 4` in a scratch folder (its own broker, referee, vision); its port and cameras."""
    import cv2
    import numpy as np

    global JPEG
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    folder.mkdir()
    child = subprocess.Popen([str(Path(sys.executable).with_name("xqarb")), "up", "--port", str(port), "--data-dir",
                              str(folder / "data"), "--quiet", "--boards", "4"], cwd=folder,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", "/api/boards")
            if conn.getresponse().status == 200:
                break
        except OSError:
            time.sleep(0.5)
    venue = json.loads((folder / "data" / "venue.json").read_text(encoding="utf-8"))
    for board, info in venue["boards"].items():
        CAMERAS.append((board, next(t for name, t in info["devices"].items() if name.startswith("cam"))))
    _, jpeg = cv2.imencode(".jpg", np.full((72, 128, 3), 200, dtype=np.uint8))
    JPEG = jpeg.tobytes()
    return child, port


if __name__ == "__main__":
    main()
