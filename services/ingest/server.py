"""Serving the WSGI app in a thread, stoppable (for `xqarb up`, `xqarb ingest serve`, `xqarb referee web`, the
tests): Hypercorn (an asyncio HTTP server) reads every connection, and the app runs in a thread of its own only
once a request has fully arrived.

Why this shape (bench/http_server.py gives the figures):
- Werkzeug's development server gave every connection a thread from its first byte with no read timeout: 200
  half-sent requests held 200 threads for ever.
- A fixed worker pool (waitress, gunicorn gthread, cheroot) reads the request head inside a worker: half-sent
  heads hold workers until a per-read socket timeout that a client sending a byte now and then never reaches, and
  every `/api/stream` viewer holds a worker for as long as it watches, so N viewers stop the frames.
- Here a connection costs a coroutine until its head and body are in (each within a deadline, below); then the
  app runs in a daemon thread for as long as it answers, so a stream viewer holds one thread and a post holds one
  for milliseconds. Gunicorn's pre-fork master also cannot run inside `xqarb up`'s process next to its broker,
  ledger and stream hub; Hypercorn runs on an event loop in a thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import queue
import socket
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import h11
import hypercorn.protocol as hypercorn_protocol
from hypercorn.asyncio import serve
from hypercorn.config import Config
from hypercorn.protocol import h11 as hypercorn_h11

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class HttpLimits:
    # A request head (request line and headers) must be complete this long after the connection opened or after
    # the previous response on it: a device or a browser on the venue network sends its head in milliseconds, so a
    # head still incomplete is a stalled or hostile client (slowloris). The same wait closes an idle keep-alive
    # connection (a camera posting twice a second reuses its connection well within it).
    head_timeout_s: float = 10.0
    # A request body must have arrived in full this long after its head: a 4 MB frame over a slow 2 Mbit/s link
    # takes 16 s. A total deadline, not a per-read one, so that dripping a byte at a time cannot hold it open.
    body_timeout_s: float = 30.0
    # A response chunk the client has not taken within this long (its socket buffer full: a viewer that stopped
    # reading) ends that response, freeing its thread.
    send_timeout_s: float = 30.0
    # The request line's target at most this long (Werkzeug's limit, kept): 414 beyond.
    max_uri_bytes: int = 65_536
    # At most this many header fields (Python's http.server limit, kept): 431 beyond.
    max_headers: int = 100
    # Bytes of a head the HTTP parser buffers before refusing it with 431: room for the longest URI plus headers.
    max_head_bytes: int = 128 * 1024
    # The most body bytes buffered for one request: above every per-route limit of ingest (a 4 MB frame) so that
    # the app's own 413 names the route's limit; this one only bounds memory.
    max_body_bytes: int = 32 * 1024 * 1024
    # Threads running the app at once (stream viewers hold one each, posts briefly): beyond it a request is
    # answered 503 at once rather than queued behind the viewers.
    max_app_threads: int = 2000
    # On stop, open responses (streams) get this long to end before their connections are closed.
    shutdown_grace_s: float = 1.0


class _ClientGone(Exception):
    """The client went away (or the server is stopping): the app's response iterator is closed."""


def _error_body(code: int, error: str, detail: str) -> tuple[list[tuple[bytes, bytes]], bytes]:
    body = json.dumps({"error": error, "detail": detail}, ensure_ascii=False).encode()
    headers = [(b"Content-Type", b"application/json"), (b"Content-Length", str(len(body)).encode()),
               (b"Connection", b"close")]
    return headers, body


class _JsonErrorH11(hypercorn_h11.H11Protocol):
    """Hypercorn's HTTP/1.1 protocol with its own refusals (a head over `max_head_bytes`, a malformed request
    line, a badly framed chunked body) in DESIGN's JSON error form instead of an empty body."""

    async def _send_error_response(self, status_code: int) -> None:
        if self.stream is not None:  # the head was read: the fault is in the body
            error, detail = "bad_body", "the body could not be read: it is not framed as HTTP/1.1 requires"
        elif status_code == 431:
            error, detail = "request_header_fields_too_large", "the request head is too long"
        else:
            error, detail = "bad_request", "the request is not well-formed HTTP/1.1"
        headers, body = _error_body(status_code, error, detail)
        await self._send_h11_event(h11.Response(status_code=status_code, headers=headers))
        await self._send_h11_event(h11.Data(data=body))
        await self._send_h11_event(h11.EndOfMessage())


# The protocol class Hypercorn instantiates per connection (hypercorn.protocol.ProtocolWrapper looks it up here).
hypercorn_protocol.H11Protocol = _JsonErrorH11  # type: ignore[misc]


# Idle app threads kept for the next requests (`_AppThreads`): a camera's post holds one for milliseconds, so 50
# posts a second keep one or two busy at a time; a few spare take a burst, and more are started when needed.
APP_THREADS_IDLE = 4


class _AppThreads:
    """Daemon threads that run the app's requests: one started when none is idle, each kept for the next requests.
    A thread started per request cost `xqarb up` 7 % of its Python time with 25 cameras at 2 fps (bench/RESULTS.md,
    p99 under load), and the event loop, which starts it, waits until the new thread runs: on a loaded machine the
    scheduler's delay. Daemons, as before: a stream viewer's thread never holds the interpreter's exit. At most as
    many as requests are answered at once (`WsgiBridge.slots`)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0  # threads waiting for a job, or about to, and not yet promised one

    def submit(self, job: Callable[[], None]) -> None:
        with self._lock:
            start = self._idle == 0
            if not start:
                self._idle -= 1  # an idle thread takes it
        if start:
            threading.Thread(target=self._serve, args=(job,), name=self.name, daemon=True).start()
        else:
            self._jobs.put(job)

    def _serve(self, job: Callable[[], None]) -> None:
        while True:
            job()  # (never raises: `WsgiBridge._run`'s work catches everything)
            with self._lock:
                if self._idle >= APP_THREADS_IDLE:
                    return  # enough kept: a viewer's thread ends with its stream, as it did
                self._idle += 1
            job = self._jobs.get()


class WsgiBridge:
    """ASGI in front of a WSGI app: checks the head's limits, collects the body within its deadline, then runs
    the app in its own daemon thread and hands its chunks to the connection with backpressure."""

    def __init__(self, app: Callable[..., Iterable[bytes]], limits: HttpLimits) -> None:
        self.app = app
        self.limits = limits
        self.slots = threading.BoundedSemaphore(limits.max_app_threads)
        self.stopping = threading.Event()
        self.threads = _AppThreads("xq-http-app")

    async def __call__(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        if scope["type"] != "http":
            return
        refusal = self._refusal(scope)
        if refusal is None:
            body, refusal = await self._body(scope, receive)
        if refusal is not None:
            code, error, detail = refusal
            headers, payload = _error_body(code, error, detail)
            await send({"type": "http.response.start", "status": code, "headers": headers})
            await send({"type": "http.response.body", "body": payload})
            return
        if not self.slots.acquire(blocking=False):
            headers, payload = _error_body(503, "busy", f"{self.limits.max_app_threads} requests are being "
                                           "answered already; retry shortly")
            await send({"type": "http.response.start", "status": 503, "headers": [*headers, (b"Retry-After", b"1")]})
            await send({"type": "http.response.body", "body": payload})
            return
        await self._run(scope, body, receive, send)

    def _refusal(self, scope: dict[str, Any]) -> tuple[int, str, str] | None:
        target = len(scope["raw_path"]) + len(scope["query_string"]) + 1
        if target > self.limits.max_uri_bytes:
            return 414, "uri_too_long", f"the request target is {target} bytes; at most {self.limits.max_uri_bytes}"
        if len(scope["headers"]) > self.limits.max_headers:
            return 431, "request_header_fields_too_large", (
                f"{len(scope['headers'])} header fields; at most {self.limits.max_headers}")
        for name, value in scope["headers"]:
            if name == b"content-length" and value.isdigit() and int(value) > self.limits.max_body_bytes:
                return 413, "too_large", f"the body is {int(value)} bytes; at most {self.limits.max_body_bytes}"
        return None

    async def _body(self, scope: dict[str, Any], receive: Callable[..., Any]
                    ) -> tuple[bytes, tuple[int, str, str] | None]:
        body = bytearray()
        try:
            async with asyncio.timeout(self.limits.body_timeout_s):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return b"", (400, "bad_body", "the connection closed before the body was complete")
                    body.extend(message.get("body", b""))
                    if len(body) > self.limits.max_body_bytes:
                        return b"", (413, "too_large", f"the body is over {self.limits.max_body_bytes} bytes")
                    if not message.get("more_body"):
                        return bytes(body), None
        except TimeoutError:
            return b"", (408, "request_timeout",
                         f"the body did not arrive within {self.limits.body_timeout_s:g} s of the request head")

    async def _run(self, scope: dict[str, Any], body: bytes, receive: Callable[..., Any],
                   send: Callable[..., Any]) -> None:
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        gone = threading.Event()

        def finish() -> None:
            if not done.done():
                done.set_result(None)

        async def send_all(messages: list[dict[str, Any]]) -> None:
            for message in messages:
                await send(message)

        def thread_send(messages: list[dict[str, Any]]) -> None:
            if gone.is_set() or self.stopping.is_set():
                raise _ClientGone()
            # One hop to the loop per chunk (the head goes with the first), waited for: backpressure.
            try:
                future = asyncio.run_coroutine_threadsafe(send_all(messages), loop)
            except RuntimeError:  # the loop closed: the server stopped
                raise _ClientGone() from None
            try:
                future.result(self.limits.send_timeout_s)
            except TimeoutError:
                future.cancel()
                raise _ClientGone() from None
            except (Exception, asyncio.CancelledError):  # the connection failed or the server is stopping
                raise _ClientGone() from None

        def work() -> None:
            try:
                _run_wsgi(self.app, _environ(scope, body), thread_send)
            except _ClientGone:
                pass
            except Exception:  # the app's own errors are answered 500 by Flask; this is a fault in the bridge
                log.exception("http: answering %s %s failed", scope["method"], scope["path"])
            finally:
                self.slots.release()
                with contextlib.suppress(RuntimeError):  # the server stopped and its loop closed meanwhile
                    loop.call_soon_threadsafe(finish)

        self.threads.submit(work)
        watcher = loop.create_task(_wait_disconnect(receive))
        try:
            await asyncio.wait([done, watcher], return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone.set()
            watcher.cancel()
        await done  # the thread ends at its next chunk (a stream's heartbeat at the latest)
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _wait_disconnect(receive: Callable[..., Any]) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


def _run_wsgi(app: Callable[..., Iterable[bytes]], environ: dict[str, Any],
              send: Callable[[list[dict[str, Any]]], None]) -> None:
    started: list[Any] = []

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable[..., None]:
        # Names keep the app's case (h11 writes them as given): "Content-Type", as clients have always seen.
        started[:] = [int(status.split(" ", 1)[0]), [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]]
        return lambda data: None

    result = app(environ, start_response)
    try:
        head_sent = False
        for chunk in result:
            messages = [] if head_sent else [{"type": "http.response.start", "status": started[0],
                                              "headers": started[1]}]
            head_sent = True
            if chunk:
                messages.append({"type": "http.response.body", "body": chunk, "more_body": True})
            if messages:
                send(messages)
        if not head_sent:
            send([{"type": "http.response.start", "status": started[0], "headers": started[1]}])
    finally:
        close = getattr(result, "close", None)
        if close is not None:
            close()


def _environ(scope: dict[str, Any], body: bytes) -> dict[str, Any]:
    import io
    import sys

    server = scope.get("server") or ("localhost", 80)
    environ: dict[str, Any] = {
        "REQUEST_METHOD": scope["method"],
        "SCRIPT_NAME": "",
        "PATH_INFO": scope["path"].encode("utf-8").decode("latin-1"),
        "QUERY_STRING": scope["query_string"].decode("latin-1"),
        "SERVER_NAME": str(server[0]),
        "SERVER_PORT": str(server[1]),
        "SERVER_PROTOCOL": f"HTTP/{scope['http_version']}",
        "REMOTE_ADDR": (scope.get("client") or ("", 0))[0],
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": scope.get("scheme", "http"),
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
        "CONTENT_LENGTH": str(len(body)),
    }
    for raw_name, raw_value in scope["headers"]:
        name = raw_name.decode("latin-1").upper().replace("-", "_")
        if name in ("CONTENT_LENGTH", "TRANSFER_ENCODING"):
            continue  # the body is whole: its length is what arrived
        key = name if name == "CONTENT_TYPE" else f"HTTP_{name}"
        value = raw_value.decode("latin-1")
        environ[key] = f"{environ[key]},{value}" if key in environ else value
    return environ


class ServerThread:
    """The venue's HTTP server on an event loop in a daemon thread; `stop()` returns within about
    `shutdown_grace_s` plus a second, open streams included."""

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 8080,
                 limits: HttpLimits | None = None) -> None:
        self.limits = limits or HttpLimits()
        self.bridge = WsgiBridge(app, self.limits)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.create_server((host, port), family=family, backlog=1024)
        self._address = sock.getsockname()[:2]
        config = Config()
        config.bind = [f"fd://{sock.detach()}"]
        config.keep_alive_timeout = self.limits.head_timeout_s
        config.h11_max_incomplete_size = self.limits.max_head_bytes
        config.graceful_timeout = self.limits.shutdown_grace_s
        config.accesslog = None  # no line per request (hundreds of frames a second); errors still go to the log
        config.include_server_header = False  # no server name and version for a scanner to match
        config.loglevel = "WARNING"  # not its "Running on" line: the commands print their own URL
        self.config = config
        self.loop = asyncio.new_event_loop()
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self.thread = threading.Thread(target=self._serve, name=f"xq-http-{self.port}", daemon=True)

    @property
    def port(self) -> int:
        return int(self._address[1])

    @property
    def url(self) -> str:
        host = self._address[0]
        shown = "127.0.0.1" if host in ("0.0.0.0", "", "::") else host
        return f"http://{shown}:{self.port}"

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.set_exception_handler(_quiet_on_cancel)

        async def main() -> None:
            self._stop = asyncio.Event()
            self._ready.set()
            await serve(self.bridge, self.config, shutdown_trigger=self._stop.wait, mode="asgi")

        try:
            self.loop.run_until_complete(main())
        finally:
            self._ready.set()
            self.loop.close()

    def start(self) -> ServerThread:
        self.thread.start()
        self._ready.wait(5)
        return self

    def stop(self) -> None:
        self.bridge.stopping.set()  # every response ends at its next chunk
        if self._stop is not None and not self.loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                self.loop.call_soon_threadsafe(self._stop.set)
        self.thread.join(self.limits.shutdown_grace_s + 4)


def _quiet_on_cancel(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The loop's handler of errors nobody awaited: connections still open when the server stops are cancelled,
    and Python 3.11's stream protocol then reports each cancellation as an error with a traceback (an operator
    stopping `xqarb up` saw three); a cancellation is how a stop ends a connection, so it is not reported.
    Everything else goes to the default handler, which logs it."""
    if isinstance(context.get("exception"), asyncio.CancelledError):
        return
    loop.default_exception_handler(context)
