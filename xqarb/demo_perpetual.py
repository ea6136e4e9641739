"""The demo's perpetual check (长将): one board now and then plays a short scripted game in which Red's rook checks
without end, so that a newcomer sees the referee's repetition alert and the arbiter answering it.

From the position below, Red's rook checks from i9 and i8 by turns while Black's king steps e9-e8 and back. Once the
position has come round the third time the referee raises AttentionNeeded (kind "repetition": red 长将, black 闲,
pointing to 0-1 by 4.1.4: one side checking perpetually loses). The demo's arbiter, like a real one reading the
alert, confirms it through `POST /api/games/<id>/actions`, and the referee ends the game by 4.1.4.

The game is played through the cameras like any other (rendered video, clock presses); only its record is scripted.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from typing import Any

# A middle game thinned out: kings on e9 and d0 (not facing), nothing between Red's rook on i8 and ranks 8 and 9
# east of the black king, so that it checks from i9 and i8 by turns; no other piece gives check. Red to move.
PERPETUAL_FEN = "1nb1k4/8R/1c7/p1p1p1p1p/9/9/P1P1P1P1P/1C7/9/RNBK5 w - - 0 1"
# One cycle: check from i9, the king steps down, check from i8, the king steps back (the start position again).
CYCLE = ["i8i9", "e9e8", "i9i8", "e8e9"]
# Two cycles: the start position stands a third time after the 8th ply, when the referee raises the alert.
PERPETUAL_GAME: dict[str, Any] = {
    "id": "perpetual-check",
    "red": "长将 (demo)",
    "black": "闲 (demo)",
    "start_fen": PERPETUAL_FEN,
    "iccs": CYCLE * 2,
    "result": None,  # the arbiter's confirmation of the alert gives it (0-1, 4.1.4)
    "perpetual": True,
}

# How long the demo's arbiter waits for the referee's alert after the last move (the referee may lag the cameras on
# a busy machine: vision reads the last moves seconds after they are made).
ALERT_WAIT_S = 90.0
# How long, after the confirmation, for the game's end to show on the API (the decision goes through the bus).
END_WAIT_S = 30.0
POLL_S = 1.0  # between two reads of the game on the API


class AlertNotSeen(RuntimeError):
    """The referee raised no repetition alert for the scripted game in time."""


def with_perpetual(rotation: Sequence[dict[str, Any]], first: int, every: int) -> list[dict[str, Any]]:
    """The board's games with the perpetual-check game as its `first`-th game (1-based) and every `every` games after
    that (`every` 0: once). `first` 0 leaves the rotation as it is."""
    games = list(rotation)
    if first <= 0:
        return games
    out: list[dict[str, Any]] = []
    position = first
    while games:
        if len(out) + 1 == position:
            out.append(PERPETUAL_GAME)
            position = position + every if every > 0 else 0
        else:
            out.append(games.pop(0))
    if len(out) + 1 == position:
        out.append(PERPETUAL_GAME)
    return out


def _get(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.loads(resp.read())


def open_repetition_alert(state: dict[str, Any]) -> dict[str, Any] | None:
    """The open repetition alert in a game's state from `/api/games/<id>` (its `alert` fields), if any."""
    for pending in state.get("pending") or []:
        if pending.get("kind") == "repetition" and pending.get("alert"):
            return pending["alert"]
    return None


def confirm_when_raised(
    base_url: str,
    game_id: str,
    token: str,
    post: Callable[[str, str, bytes, dict[str, str]], dict[str, Any]],
    stop: Any,
    alert_wait_s: float = ALERT_WAIT_S,
) -> dict[str, Any]:
    """The arbiter's part: waits for the referee's repetition alert on the game, confirms it (ArbiterDecision,
    action confirm, naming the alert) and waits for the game's result. Returns the alert. Raises AlertNotSeen."""
    game_url = f"{base_url}/api/games/{game_id}"
    deadline = time.monotonic() + alert_wait_s
    alert = None
    while alert is None:
        try:
            alert = open_repetition_alert(_get(game_url).get("state") or {})
        except (urllib.error.URLError, OSError, json.JSONDecodeError):
            alert = None  # the game not in the ledger yet, or the API busy: read again
        if alert is None and (time.monotonic() > deadline or stop.wait(POLL_S)):
            raise AlertNotSeen(f"no repetition alert for {game_id} within {alert_wait_s:.0f} s")
    decision = {"type": "ArbiterDecision", "result": "", "article": alert.get("article", ""), "action": "confirm",
                "alert": alert["alert"]}
    post(f"{game_url}/actions", token, json.dumps(decision).encode(), {"Content-Type": "application/json"})
    deadline = time.monotonic() + END_WAIT_S
    while time.monotonic() < deadline and not stop.wait(POLL_S):
        try:
            if (_get(game_url).get("state") or {}).get("result"):
                break
        except (urllib.error.URLError, OSError, json.JSONDecodeError):
            continue
    return alert


# Where the non-calm demo (`xqarb up --demo`) shows the perpetual check on board 1: its second game, so that a
# newcomer sees one real game first and then the alert within minutes, and again every so many games after that.
DEFAULT_FIRST = 2
DEFAULT_EVERY = 6


def perpetual_options(asked: bool, calm: bool) -> dict[str, int]:
    """DemoOptions' perpetual fields from the command line: `--perpetual` makes it board 1's first game (then every
    DEFAULT_EVERY games); the plain demo shows it as board 1's second game; `--calm` alone leaves it out."""
    if asked:
        return {"perpetual_first": 1, "perpetual_every": DEFAULT_EVERY}
    if calm:
        return {}
    return {"perpetual_first": DEFAULT_FIRST, "perpetual_every": DEFAULT_EVERY}


def confirm_perpetual(board: Any) -> bool:
    """A DemoBoard's scripted perpetual-check game after its last move: the chief arbiter confirms the referee's
    alert. False where no alert came in time (the board then ends the game otherwise and goes on)."""
    from xqarb.demo import HttpError, post

    try:
        confirm_when_raised(board.url, board.game_id, board.arbiter.token, post, board.stop)
    except (AlertNotSeen, HttpError) as exc:
        board.stats.last_error = str(exc)
        board._count("perpetual check not confirmed")
        return False
    board._count("perpetual check confirmed (4.1.4)")
    return True
