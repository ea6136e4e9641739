"""Serving a WSGI app in a thread, stoppable (for `xqarb up`, `xqarb ingest serve` and the tests).

Werkzeug's threaded server, not a fixed worker pool: every open `/api/stream` connection (an overlay, an
arbiter's page) holds a thread for as long as it is open, and a pool of N workers (waitress, gunicorn sync)
would stop answering frames once N viewers are connected. One thread per connection has no such cliff; behind a
venue's reverse proxy, run several processes.
"""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server


class _QuietHandler(WSGIRequestHandler):
    """No access log line per request (hundreds of frames a second); errors still go to the log."""

    def log_request(self, code: Any = "-", size: Any = "-") -> None:
        return

    # HTTP/1.1 keep-alive: a camera posting twice a second reuses its connection.
    protocol_version = "HTTP/1.1"

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Errors the HTTP server answers before the app sees the request (414 a request line too long, 431 a
        header too long or too many, 400 a malformed request line) in DESIGN's JSON error form, not HTML."""
        short, long = self.responses.get(code, ("error", "error"))
        body = json.dumps(
            {"error": (short or "error").lower().replace(" ", "_").replace("-", "_"), "detail": message or long},
            ensure_ascii=False,
        ).encode()
        self.log_error("code %d, message %s", code, message)
        self.send_response(code, short)
        self.send_header("Connection", "close")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


class ServerThread:
    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 8080) -> None:
        logging.getLogger("werkzeug").setLevel(logging.WARNING)
        self.server: BaseWSGIServer = make_server(host, port, app, threaded=True, request_handler=_QuietHandler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, name=f"xq-http-{port}", daemon=True)

    @property
    def port(self) -> int:
        return self.server.server_port

    @property
    def url(self) -> str:
        host = self.server.server_address[0]
        shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
        return f"http://{shown}:{self.port}"

    def start(self) -> ServerThread:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)
