"""Which board each game is played on, as far as ingest can tell: a frame or an event naming another board's game
is refused instead of reaching the referee, where it would be set aside with an alert on every frame.

A game's board never changes once it started (DESIGN: a game is one board's), so what is known is kept; what is
not known (a game this process never saw start) is not refused: ingest cannot tell, and the referee still sets
aside an input that names a game its board does not play.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from xqarb.ingest.refusal import Refusal

# Games remembered: a day of a 500-board venue plays a few thousand; the oldest are forgotten first.
MAX_GAMES_KEPT = 100_000
# A game not found by `lookup` is looked up again only after this long: a camera naming a game the referee has
# not yet written (or never will) costs one ledger query per this interval, not one per frame (2 a second).
NOT_FOUND_RETRY_S = 5.0


class GameBoards:
    """game id -> board id, learned from the GameStarted events this process accepted and, where a ledger is at
    hand (the API process), looked up there (`lookup`)."""

    def __init__(self, lookup: Callable[[str], str | None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.lookup = lookup
        self._boards: OrderedDict[str, str] = OrderedDict()
        self._not_found: OrderedDict[str, float] = OrderedDict()  # game -> when it was last looked up in vain
        self._clock = clock
        self._lock = threading.Lock()

    def learn(self, game_id: str, board_id: str) -> None:
        with self._lock:
            self._boards.setdefault(game_id, board_id)
            self._boards.move_to_end(game_id)
            while len(self._boards) > MAX_GAMES_KEPT:
                self._boards.popitem(last=False)

    def board_of(self, game_id: str) -> str | None:
        with self._lock:
            found = self._boards.get(game_id)
            missed = self._not_found.get(game_id)
        if found is not None or self.lookup is None:
            return found
        now = self._clock()
        if missed is not None and now - missed < NOT_FOUND_RETRY_S:
            return None
        found = self.lookup(game_id)
        if found is not None:
            self.learn(game_id, found)
            return found
        with self._lock:
            self._not_found[game_id] = now
            self._not_found.move_to_end(game_id)
            while len(self._not_found) > MAX_GAMES_KEPT:
                self._not_found.popitem(last=False)
        return None

    def check(self, game_id: str | None, board_id: str, *, starting: bool = False) -> None:
        """Refusal (409) when `game_id` is known to be another board's game; a GameStarted (`starting`) may not
        reuse another board's game id either."""
        if not game_id:
            return
        other = self.board_of(game_id)
        if other is not None and other != board_id:
            what = "starts" if starting else "names"
            raise Refusal(409, "game_mismatch",
                          f"the request {what} game {game_id[:60]!r}, which is played on board {other!r}, not "
                          f"{board_id!r}")
