"""What the venue benchmarks share: a free port, a plain HTTP request, waiting for a condition, a process's memory.

Imported by the scripts beside it (`python bench/NAME.py` puts this folder on the path).
"""

from __future__ import annotations

import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable


def free_port() -> int:
    """A TCP port on the loopback that nothing listens on now (the OS picks it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def request(url: str, body: bytes | None = None, headers: dict[str, str] | None = None,
            timeout: float = 20) -> tuple[int, bytes]:
    """POST `body` (GET without one); (status, body), 0 and nothing when the server cannot be reached.

    A benchmark counts refusals and outages rather than stopping at the first, so errors are answers here.
    """
    req = urllib.request.Request(url, data=body, method="POST" if body is not None else "GET", headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except OSError:
        return 0, b""


def until(check: Callable[[], object], timeout: float = 60.0, step: float = 0.05) -> float:
    """Seconds until `check()` is true, polled every `step`; TimeoutError after `timeout`."""
    t0 = time.monotonic()
    while not check():
        if time.monotonic() - t0 > timeout:
            raise TimeoutError(f"not within {timeout} s")
        time.sleep(step)
    return time.monotonic() - t0


def rss_mb(pid: int) -> float:
    """Resident memory of a process in MiB (Linux /proc), NaN when it has none to report (a zombie)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")
