"""`xqarb up` (one board, no demo) with its embedded broker SIGKILLed while the referee holds an acknowledged input:
the referee rides through (never stopped nor restarted: its consumer rejoins and reads the restarted broker's
topics from their start), and every input ingest acknowledged, before, across and after the restart, is in the
ledger exactly once, with the game's outputs on the stream again."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import time
from collections import Counter

from tests.venue.test_supervise_up import Up, _request, _stop

# the fixture: `xqarb up --boards 1 --partitions 2` in a subprocess, killed at the end
from tests.venue.test_supervise_up import up as up

# An arbiter's input on a board whose camera has not reported waits this long in the referee for the camera
# (services/referee/ordering.py, hold_s): each step below waits that much at least.
HOLD_S = 10.0
LEDGER_S = 40.0  # an input in the ledger: the hold, plus rejoining a restarted broker's group on a loaded machine


def _post(venue: Up, board: str, token: str, event: dict[str, object], seq: list[int], endpoint: str = "events") -> str:
    """POST an arbiter's input; ingest answers 202 (its outbox: also while the broker is down); its event id."""
    seq[0] += 1
    body = json.dumps({**event, "source_seq": seq[0], "occurred_at": time.time_ns() // 1000}).encode()
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    status, answer = _request(f"{venue.base}/ingest/v1/boards/{board}/{endpoint}", body=body, headers=headers)
    assert status == 202, answer
    return str(json.loads(answer)["event_id"])


def _ledger_inputs(venue: Up) -> Counter[str]:
    """How many times each event id is an input entry of the ledger."""
    with sqlite3.connect(f"file:{venue.data / 'ledger.sqlite'}?mode=ro", uri=True, timeout=5) as db:
        return Counter(row[0] for row in db.execute("select event_id from entries where kind = 'input'"))


def test_the_referee_rides_through_a_broker_restart_and_folds_each_acknowledged_input_once(up: Up) -> None:
    board = next(iter(up.venue()["boards"]))
    arbiter = next(iter(up.venue()["arbiters"].values()))["token"]
    seq = [int(time.time())]
    started = _post(up, board, arbiter, {
        "type": "GameStarted", "game_id": "rides-1", "red_player": "R", "black_player": "B",
        "time_control": {"scheme": "sudden_death", "base_ms": 900_000}, "recording_required": False}, seq)
    before = up.parts()
    assert before["referee"]["status"] == "up" and before["referee"]["restarts"] == 0
    # Both acknowledged, and held by the referee for the camera when the broker dies (their records are lost with
    # the broker's memory, and ingest's outbox sends them again to the new one).
    paused = _post(up, board, arbiter, {"type": "ClockPaused", "by": "arbiter", "red_ms": None, "black_ms": None},
                   seq, "clock")
    os.kill(before["broker"]["pid"], signal.SIGKILL)
    up.wait_for("the broker restarted", lambda: up.parts()["broker"]["restarts"] == 1)
    resigned = _post(up, board, arbiter, {"type": "Resigned", "side": "red"}, seq)
    t0 = time.monotonic()

    def ended() -> bool:
        boards = json.loads(_request(up.base + "/api/boards")[1])["boards"]
        return any(b["game_id"] == "rides-1" and b["result"] == "0-1" for b in boards)

    up.wait_for("the resignation's result on /api/boards", ended, LEDGER_S)
    folded_s = time.monotonic() - t0
    up.wait_for("every input in the ledger", lambda: all(_ledger_inputs(up)[e] for e in (started, paused, resigned)), 5)
    counts = _ledger_inputs(up)
    assert [counts[e] for e in (started, paused, resigned)] == [1, 1, 1], counts
    parts = up.parts()
    assert parts["referee"]["status"] == "up" and parts["referee"]["restarts"] == 0, parts["referee"]
    assert "referee, vision-1 keep running and reconnect once broker is back" in up.log()
    assert "referee stopped" not in up.log() and "referee restarted" not in up.log()
    stop_s = _stop(up)
    print(f"referee across a broker restart: the resignation posted after it folded and streamed in {folded_s:.1f} s "
          f"(hold {HOLD_S:.0f} s); SIGTERM stopped up in {stop_s:.1f} s")
