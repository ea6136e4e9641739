"""A page in headless Chromium driven over the DevTools protocol (a pipe, no extra library), in real time.

`--dump-dom` with `--virtual-time-budget` never returns for a page that keeps a stream open (virtual time waits for
every pending fetch, and an EventSource's never ends), and without a budget it dumps at the load event, before any
server-sent event came: a live page (the overlay) is read here instead, after it ran for real seconds.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.venue.test_pages import CHROMIUM, FLAGS


class Browser:
    """One headless Chromium with one page; `evaluate` runs JavaScript in it, `screenshot` takes a PNG."""

    def __init__(self, profile: Path, width: int = 1280, height: int = 900) -> None:
        assert CHROMIUM is not None
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def pipes_at_3_and_4() -> None:  # Chromium reads commands on fd 3 and writes answers on fd 4
            a, b = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--remote-debugging-pipe",
             f"--window-size={width},{height}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(3, 4), preexec_fn=pipes_at_3_and_4,
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buf = b""
        self._id = 0
        self.size = (width, height)
        self.session: str | None = None

    def call(self, method: str, params: dict[str, Any] | None = None, *, timeout_s: float = 30.0) -> dict[str, Any]:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if self.session is not None and not method.startswith(("Target.", "Browser.")):
            msg["sessionId"] = self.session
        os.write(self._to_chrome, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            while b"\0" not in self._buf:
                ready, _, _ = select.select([self._from_chrome], [], [], max(0.0, deadline - time.monotonic()))
                if not ready:
                    raise TimeoutError(f"no answer to {method} in {timeout_s} s")
                chunk = os.read(self._from_chrome, 1 << 16)
                if not chunk:
                    raise RuntimeError(f"Chromium closed the pipe during {method}")
                self._buf += chunk
            raw, self._buf = self._buf.split(b"\0", 1)
            answer = json.loads(raw)
            if answer.get("id") == self._id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})
        raise TimeoutError(f"no answer to {method} in {timeout_s} s")

    def open(self, url: str) -> None:
        target = self.call("Target.createTarget", {"url": url, "newWindow": True, "width": self.size[0],
                                                         "height": self.size[1]})
        self.session = self.call("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True})[
            "sessionId"]

    def evaluate(self, expression: str) -> Any:
        out = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        return out.get("result", {}).get("value")

    def wait_for(self, expression: str, timeout_s: float = 15.0) -> Any:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                value = self.evaluate(expression)
            except RuntimeError:  # the page navigating (a reload): its old context is gone, the new one not yet
                value = None
            if value:
                return value
            time.sleep(0.1)
        raise TimeoutError(f"{expression} stayed false for {timeout_s} s")

    def screenshot(self) -> bytes:
        return base64.b64decode(self.call("Page.captureScreenshot", {"format": "png"})["data"])

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, TimeoutError, OSError):  # it may be gone already
            self.call("Browser.close", timeout_s=5)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_chrome)
        os.close(self._from_chrome)
