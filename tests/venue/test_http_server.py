"""The venue's HTTP server (services/ingest/server.py): half-sent requests hold no thread and are closed after
their deadline, stream viewers do not starve posts, a viewer that leaves frees its thread, stop() is prompt."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask, Response, request

from xqarb.ingest.server import HttpLimits, ServerThread


def _app(closed: list[int]) -> Flask:
    app = Flask("t")

    @app.get("/stream")
    def stream() -> Response:
        def gen() -> Iterator[str]:
            try:
                yield "retry: 1000\n\n"
                while True:
                    time.sleep(0.05)
                    yield ": beat\n\n"
            finally:
                closed.append(1)

        return Response(gen(), mimetype="text/event-stream")

    @app.post("/post")
    def post() -> Response:
        return Response(json.dumps({"got": request.get_json(force=True)}), 202, mimetype="application/json")

    return app


@pytest.fixture()
def served() -> Iterator[tuple[ServerThread, list[int]]]:
    closed: list[int] = []
    server = ServerThread(_app(closed), "127.0.0.1", 0,
                          HttpLimits(head_timeout_s=0.6, body_timeout_s=0.6, shutdown_grace_s=0.3)).start()
    try:
        yield server, closed
    finally:
        server.stop()


def _read_all(sock: socket.socket, limit_s: float) -> tuple[bytes, float]:
    """Everything the server sends until it closes the connection, and when it closed (s from now)."""
    t0 = time.monotonic()
    sock.settimeout(limit_s)
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return data, time.monotonic() - t0
        data += chunk


def _post(port: int, body: bytes) -> tuple[int, dict[str, Any]]:
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(b"POST /post HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n"
                  b"Content-Length: %d\r\n\r\n" % len(body) + body)
        data, _ = _read_all(s, 5)
    head, _, payload = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(payload)


def test_half_sent_heads_and_bodies_hold_no_thread_and_are_closed_after_their_deadline(served: Any) -> None:
    server, _ = served
    before = threading.active_count()
    heads, bodies = [], []
    for _ in range(40):
        s = socket.create_connection(("127.0.0.1", server.port))
        s.sendall(b"POST /post HTTP/1.1\r\nHost: x\r\nContent-Le")
        heads.append(s)
        b = socket.create_connection(("127.0.0.1", server.port))
        b.sendall(b"POST /post HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"a\"")
        bodies.append(b)
    time.sleep(0.2)
    assert threading.active_count() - before < 5  # 80 half-sent requests, no thread each
    # A whole request is answered meanwhile.
    assert _post(server.port, b'{"n": 1}') == (202, {"got": {"n": 1}})
    for s in heads:
        data, after = _read_all(s, 3)
        assert data == b"" and after < 1.5, (data, after)  # closed by the head deadline (0.6 s)
        s.close()
    for b in bodies:
        data, _ = _read_all(b, 3)
        head, _, payload = data.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408"), data
        assert json.loads(payload)["error"] == "request_timeout"
        b.close()


def test_a_head_sent_a_byte_at_a_time_is_still_closed_at_its_deadline(served: Any) -> None:
    server, _ = served
    with socket.create_connection(("127.0.0.1", server.port)) as s:
        t0 = time.monotonic()
        try:
            for byte in b"GET /post HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100:
                s.sendall(bytes([byte]))
                time.sleep(0.1)
        except OSError:  # the server closed it
            pass
        data, _ = _read_all(s, 3)
        assert data == b"" and time.monotonic() - t0 < 2.0


def test_posts_are_answered_while_many_streams_are_open_and_a_viewer_leaving_frees_its_thread(served: Any) -> None:
    server, closed = served
    viewers = []
    for _ in range(60):
        s = socket.create_connection(("127.0.0.1", server.port))
        s.sendall(b"GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
        viewers.append(s)
    for s in viewers:
        s.settimeout(5)
        assert s.recv(4096).startswith(b"HTTP/1.1 200")
    slowest = 0.0
    for n in range(20):
        t0 = time.monotonic()
        assert _post(server.port, b'{"n": %d}' % n)[0] == 202
        slowest = max(slowest, time.monotonic() - t0)
    assert slowest < 1.0, slowest
    running = threading.active_count()
    for s in viewers[:30]:
        s.close()
    deadline = time.monotonic() + 5
    while len(closed) < 30 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(closed) == 30 and threading.active_count() <= running - 25
    for s in viewers[30:]:
        s.close()


def test_refusals_before_the_app_are_json(served: Any) -> None:
    server, _ = served
    with socket.create_connection(("127.0.0.1", server.port)) as s:
        s.sendall(b"POST /post HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999999\r\n\r\n")
        data, _ = _read_all(s, 3)
    head, _, payload = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413") and b"Content-Type: application/json" in head
    assert json.loads(payload)["error"] == "too_large"
    with socket.create_connection(("127.0.0.1", server.port)) as s:
        s.sendall(b"GARBAGE\r\n\r\n")
        data, _ = _read_all(s, 3)
    head, _, payload = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400") and json.loads(payload)["error"] == "bad_request"


def test_stop_returns_promptly_with_streams_open() -> None:
    closed: list[int] = []
    server = ServerThread(_app(closed), "127.0.0.1", 0, HttpLimits(shutdown_grace_s=0.3)).start()
    viewers = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(20)]
    for s in viewers:
        s.sendall(b"GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
        s.settimeout(5)
        assert s.recv(4096).startswith(b"HTTP/1.1 200")
    t0 = time.monotonic()
    server.stop()
    assert time.monotonic() - t0 < 2.0 and not server.thread.is_alive()
    for s in viewers:
        _read_all(s, 3)  # raises unless the server closed it: every viewer's connection is closed
        s.close()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", server.port), timeout=1).close()


def test_the_loop_reports_errors_but_not_the_cancellations_a_stop_makes() -> None:
    """Connections open at a stop are ended by cancelling them, which Python 3.11's stream protocol reports as an
    error with a traceback (three of them seen on stopping `xqarb up --demo`); the server's loop handler drops
    exactly those and passes every other error on to the default handler, which logs it."""
    import asyncio

    from xqarb.ingest.server import _quiet_on_cancel

    loop = asyncio.new_event_loop()
    reported: list[dict[str, Any]] = []
    loop.default_exception_handler = reported.append  # type: ignore[method-assign]
    try:
        _quiet_on_cancel(loop, {"message": "Exception in callback", "exception": asyncio.CancelledError()})
        assert reported == []
        other = {"message": "Exception in callback", "exception": ValueError("a real fault")}
        _quiet_on_cancel(loop, other)
        _quiet_on_cancel(loop, {"message": "Task was destroyed but it is pending!"})
        assert reported == [other, {"message": "Task was destroyed but it is pending!"}]
    finally:
        loop.close()


def test_beyond_its_app_threads_a_request_is_answered_503_at_once_not_queued() -> None:
    closed: list[int] = []
    server = ServerThread(_app(closed), "127.0.0.1", 0, HttpLimits(max_app_threads=2, shutdown_grace_s=0.3)).start()
    try:
        viewers = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(2)]
        for s in viewers:
            s.sendall(b"GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
            s.settimeout(5)
            assert s.recv(4096).startswith(b"HTTP/1.1 200")
        t0 = time.monotonic()
        code, answer = _post(server.port, b'{"n": 1}')
        assert code == 503 and answer["error"] == "busy" and time.monotonic() - t0 < 1.0
        viewers[0].close()
        deadline = time.monotonic() + 5
        answer = _post(server.port, b'{"n": 2}')
        while answer[0] == 503 and time.monotonic() < deadline:  # until the viewer's thread has ended
            time.sleep(0.05)
            answer = _post(server.port, b'{"n": 2}')
        assert answer == (202, {"got": {"n": 2}}) and closed  # its thread is free again
        viewers[1].close()
    finally:
        server.stop()


def test_app_threads_are_kept_for_the_next_requests_up_to_a_few_idle() -> None:
    from xqarb.ingest.server import APP_THREADS_IDLE, _AppThreads

    threads = _AppThreads("t-app")
    ran: list[threading.Thread] = []  # (the threads themselves: an ident may be reused by a later thread)
    done = threading.Event()

    def job() -> None:
        ran.append(threading.current_thread())
        done.set()

    for _ in range(3):  # one after the other: the same thread each time, started once
        done.clear()
        threads.submit(job)
        assert done.wait(5)
        time.sleep(0.05)  # (back to waiting)
    assert len({id(t) for t in ran}) == 1
    # a burst of requests held at once takes as many threads; afterwards only APP_THREADS_IDLE stay
    release = threading.Event()
    started = threading.Semaphore(0)

    def held() -> None:
        started.release()
        release.wait(5)

    burst = APP_THREADS_IDLE + 6
    before = threading.active_count()
    for _ in range(burst):
        threads.submit(held)
    for _ in range(burst):
        assert started.acquire(timeout=5)
    assert threading.active_count() - before == burst - 1  # (one was the idle thread of the jobs above)
    release.set()
    deadline = time.monotonic() + 5
    while threading.active_count() - before > APP_THREADS_IDLE - 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert threading.active_count() - before == APP_THREADS_IDLE - 1
