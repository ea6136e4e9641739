"""The broadcast delay on every public read (DESIGN: "Public reads keep each board's broadcast delay").

A board's tournament may set `broadcast_delay_s` (venue configuration) so that nobody can relay its live position
to a player from the broadcast. The stream holds each event that long; this module does the same for the reads of
the ledger (`/api/games/<id>`, `/events`, `/state`, `/pgn`, the evidence frames) and for `/api/boards`:

- an event is public once `delay` seconds passed after the venue received it (its `received_at`; a referee
  output carries the `received_at` of the input that caused it);
- the public sees a game as the longest prefix of its ledger whose entries are all public (a prefix, so that
  every state and every PGN the public sees is one the game really went through);
- an evidence frame is public once a public entry names it (vision stores a frame before the referee rules);
- an arbiter's token for the board (`Authorization: Bearer <token>`) sees everything live: the arbiter is at
  the venue, and must rule on what happens now. An unknown token is refused (401) rather than quietly served the
  delayed view, so that an arbiter never takes a delayed board for the live one.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import Any

# How many ledger entries are read at a time, walking back from a game's head, to find where its public prefix
# ends: a delay of minutes spans at most a few hundred entries of one board (observations, clock presses, outputs).
SCAN_CHUNK = 256


class UnknownToken(Exception):
    """A bearer token that names nobody at this venue."""


def public_prefix(received_at: Sequence[int], cutoff_us: int) -> int:
    """How many leading entries (by their `received_at`, microseconds) were all received by `cutoff_us`."""
    for i, at in enumerate(received_at):
        if at > cutoff_us:
            return i
    return len(received_at)


class PublicReads:
    """Who sees what when: the cutoff of each board for the public, and the arbiter tokens that see live.

    `delay_for_board(board) -> seconds`; `principal(token) -> Principal | None` (the venue configuration's);
    `clock() -> seconds since the epoch` (the wall clock, the one `received_at` is stamped with).
    """

    def __init__(
        self,
        *,
        ledger: Any,
        delay_for_board: Callable[[str], float],
        principal: Callable[[str], Any] | None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.ledger = ledger
        self.delay_for_board = delay_for_board
        self.principal = principal
        self.clock = clock
        self._lock = threading.Lock()
        self._held: dict[str, deque[Any]] = {}  # board -> stream items not yet public, in arrival order
        self._frames: dict[str, tuple[int, set[str]]] = {}  # game -> (entries scanned, frames they name)
        self.view: Any = None  # the VenueView of public boards, fed by `on_item` once items are public

    # --- who asks ---------------------------------------------------------------------------------------------

    def live_for(self, token: str | None, board_id: str) -> bool:
        """Whether the asker sees `board_id` live: no delay there, or an arbiter's token for it."""
        if self.delay_for_board(board_id) <= 0:
            return True
        who = self._who(token)
        return who is not None and who.is_arbiter and who.may_post_for(board_id)

    def _who(self, token: str | None) -> Any:
        if not token:
            return None
        who = self.principal(token) if self.principal is not None else None
        if who is None:
            raise UnknownToken("the bearer token is not known at this venue (send none for the public view)")
        return who

    def check_token(self, token: str | None) -> None:
        """UnknownToken for a token that names nobody (even where no board is delayed)."""
        self._who(token)

    def cutoff_us(self, board_id: str) -> int:
        return int((self.clock() - self.delay_for_board(board_id)) * 1e6)

    # --- the ledger -------------------------------------------------------------------------------------------

    def visible_seq(self, game_id: str, board_id: str, head_seq: int) -> int:
        """How many of the game's entries the public sees now (all of them where the board has no delay)."""
        if self.delay_for_board(board_id) <= 0 or head_seq == 0:
            return head_seq
        cutoff = self.cutoff_us(board_id)
        last = self.ledger.entries(game_id, head_seq - 1, 1)
        if last and last[0].event.received_at <= cutoff:
            return head_seq  # the usual case of a game quiet for longer than the delay: one look-up
        first_hidden = head_seq + 1
        after = head_seq
        while after > 0:
            start = max(0, after - SCAN_CHUNK)
            chunk = self.ledger.entries(game_id, start, after - start)
            hidden = [e.seq for e in chunk if e.event.received_at > cutoff]
            if not hidden:
                break  # a whole chunk already public: what comes before it was received earlier still
            first_hidden = min(hidden)
            after = start
        return first_hidden - 1

    def listing(self, games: Iterable[Any], token: str | None) -> list[tuple[Any, int, str]]:
        """(game, entries, head hash) of each game as the asker may see it; games with nothing public are left out
        (`games`: the ledger's GameInfo rows)."""
        out: list[tuple[Any, int, str]] = []
        for g in games:
            if self.live_for(token, g.board_id):
                out.append((g, g.entries, g.head_hash))
                continue
            seq = self.visible_seq(g.game_id, g.board_id, g.entries)
            if seq == g.entries:
                out.append((g, g.entries, g.head_hash))
            elif seq > 0:
                out.append((g, seq, self.ledger.entries(g.game_id, seq - 1, 1)[0].hash))
        return out

    def frame_is_public(self, game_id: str, visible: int, sha256: str) -> bool:
        """Whether one of the game's first `visible` entries names the frame (scanned once, then incrementally)."""
        with self._lock:
            scanned, shas = self._frames.get(game_id, (0, set()))
        if sha256 in shas:
            return True
        if visible > scanned:
            for entry in self.ledger.entries(game_id, scanned, visible - scanned):
                sha = entry.event.data.get("frame_sha256")
                if sha:
                    shas.add(sha)
            with self._lock:
                self._frames[game_id] = (visible, shas)
                while len(self._frames) > 256:  # the games under review at once
                    self._frames.pop(next(iter(self._frames)))
        return sha256 in shas

    # --- the boards -------------------------------------------------------------------------------------------

    def on_item(self, item: Any) -> None:
        """A stream item: to the public view at once where its board has no delay, else held until public."""
        board = item.event.board_id
        if self.delay_for_board(board) <= 0:
            self.view.on_item(item)
            return
        with self._lock:
            self._held.setdefault(board, deque()).append(item)

    def release(self) -> None:
        """Fold into the public view every held item now public (in arrival order per board)."""
        due: list[Any] = []
        with self._lock:
            for board, held in self._held.items():
                cutoff = self.cutoff_us(board)
                while held and held[0].event.received_at <= cutoff:
                    due.append(held.popleft())
        for item in due:
            self.view.on_item(item)

    def boards(self, live: list[dict[str, Any]], token: str | None, order: Callable[[dict[str, Any]], Any],
               blank: Callable[[str], dict[str, Any]]) -> list[dict[str, Any]]:
        """The boards as this asker may see them: live where `live_for`, else the delayed public view (`blank`:
        a board with nothing public yet)."""
        self.release()
        shown = [b if self.live_for(token, b["board_id"]) else None for b in live]
        if all(b is not None for b in shown):
            return live
        public = {b["board_id"]: b for b in self.view.boards()}
        merged: Iterable[dict[str, Any]] = (
            b if b is not None else public.get(original["board_id"]) or blank(original["board_id"])
            for b, original in zip(shown, live, strict=True)
        )
        return sorted(merged, key=order)
