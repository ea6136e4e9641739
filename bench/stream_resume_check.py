"""Two clients of a running venue's `GET /api/stream` for a while: one stays connected, the other drops its
connection every `--every-s` and comes back with its Last-Event-ID (as a browser does). Across rolls of
xq.game-events (bus.ROLLED) the second must get exactly the events of the first: none lost, none twice, no reset.

    nice -n 10 .venv/bin/python bench/stream_resume_check.py --url http://127.0.0.1:PORT [--minutes 20] [--every-s 45]

One JSON line at the end: events each client got, those the resuming one lacks or got twice, its resets, and the
highest stream offset's generation seen (xqarb.referee.stream_roll).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import threading
import time
import urllib.request
from typing import Any

READ_TIMEOUT_S = 30.0  # the stream sends a heartbeat every 15 s
TAIL = 30  # the steady client's last events, which the resuming one may not have asked for before the end


def read_stream(url: str, last_id: str | None, until: float, got: list[tuple[str, str, str]]) -> str | None:
    """Append (kind, id, event_id) of what the stream sends until `until` (monotonic); returns the last id."""
    headers = {"Accept": "text/event-stream"}
    if last_id:
        headers["Last-Event-ID"] = last_id
    request = urllib.request.Request(url.rstrip("/") + "/api/stream", headers=headers)
    fields: dict[str, str] = {}
    with urllib.request.urlopen(request, timeout=READ_TIMEOUT_S) as resp:
        for raw in resp:
            line = raw.decode("utf-8").rstrip("\n")
            if line == "":
                if "data" in fields:
                    kind = fields.get("event", "message")
                    event_id = ""
                    with contextlib.suppress(ValueError):
                        event_id = str(json.loads(fields["data"]).get("event_id", ""))
                    got.append((kind, fields.get("id", ""), event_id))
                    last_id = fields.get("id") or last_id
                fields = {}
                if time.monotonic() >= until:
                    break
                continue
            if line.startswith(":") or ": " not in line:
                continue
            name, value = line.split(": ", 1)
            fields[name] = value
    return last_id


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--minutes", type=float, default=20)
    parser.add_argument("--every-s", type=float, default=45)
    args = parser.parse_args()
    end = time.monotonic() + args.minutes * 60
    steady: list[tuple[str, str, str]] = []
    resuming: list[tuple[str, str, str]] = []
    errors: list[str] = []

    def stay() -> None:
        try:
            read_stream(args.url, None, end, steady)
        except OSError as exc:
            errors.append(f"steady: {exc}")

    thread = threading.Thread(target=stay, daemon=True)
    thread.start()
    last: str | None = None
    reconnects = 0
    while time.monotonic() < end:
        try:
            last = read_stream(args.url, last, min(end, time.monotonic() + args.every_s), resuming)
        except OSError as exc:
            errors.append(f"resuming: {exc}")
        reconnects += 1
        time.sleep(2.0)  # away a moment: events come meanwhile
    thread.join(READ_TIMEOUT_S + 5)
    seen_steady = [e for kind, _, e in steady if kind != "reset"]
    seen_resuming = [e for kind, _, e in resuming if kind != "reset"]
    generations = sorted({max(int(part.split(":")[1]) for part in i.split("@")[0].split(",")) // 10**9
                          for _, i, _ in steady if "@" in i and ":" in i})
    tail = set(seen_steady[-TAIL:])  # (the two clients stop at slightly different moments)
    out: dict[str, Any] = {
        "steady_events": len(seen_steady), "resuming_events": len(seen_resuming), "reconnects": reconnects,
        "resets": sum(1 for kind, _, _ in resuming if kind == "reset"),
        "lacking": len(set(seen_steady) - set(seen_resuming) - tail),
        "extra": len(set(seen_resuming) - set(seen_steady)),
        "twice": len(seen_resuming) - len(set(seen_resuming)),
        "steady_twice": len(seen_steady) - len(set(seen_steady)),
        "generations_seen": generations, "errors": errors[:5],
    }
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
