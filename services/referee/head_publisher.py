"""Signed tree heads for the games a referee appends to, published on xq.game-events (the adapter around
tree_head.py): the venue's key, each game's growing Merkle tree, and how often a head goes out.

After a batch is appended, each game it touched is marked; `due` signs a head for every marked game whose last
head is old enough: `min_interval_s` when the referee published outputs for the game (moves, rulings, its end),
`quiet_interval_s` when it only gained inputs. A game gets at most one head per interval, and the last entries of
a game that went quiet still get theirs at a later poll of the referee (every half second or so). The
chains of board events that belong to no game (`board:<id>`) get none: they are not games, and a head is read as
a game's by the stream's readers.

Trees are kept per game as their perfect subtrees' roots (merkle.CompactTree): a head costs the new entries' leaf
hashes and O(log n) node hashes; a game first seen after a restart or a rebalance is read once from the ledger.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Iterable, Mapping
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from xqarb.events import Event
from xqarb.referee.ledger import LedgerError
from xqarb.referee.merkle import CompactTree, leaf_hash
from xqarb.referee.service import UNASSIGNED_PREFIX
from xqarb.referee.tree_head import SignedTreeHead, TreeHead, sign_head
from xqarb.referee.venue_key import key_path, load_or_create_key

log = logging.getLogger("xqarb.referee.heads")

# A game whose referee spoke (a move, a ruling, its end) gets a head within about a second, at most one a second:
# what a broadcaster shows is anchored as it is shown, at about one head per move (a move every 30 s or so a board).
HEAD_INTERVAL_S = 1.0
# A game that only gained inputs (observations, clock presses: several a second while a hand is over the board)
# gets one at most every 30 s: a head per batch would outnumber everything else on xq.game-events (and in the
# stream's buffer) tenfold, while the window in which unanchored inputs could be rewritten stays half a minute.
QUIET_INTERVAL_S = 30.0


class TreeHeadPublisher:
    """Which games need a new signed head, and the heads themselves. Not thread-safe: the referee loop owns it."""

    def __init__(self, ledger: Any, key: Ed25519PrivateKey, *, min_interval_s: float = HEAD_INTERVAL_S,
                 quiet_interval_s: float = QUIET_INTERVAL_S) -> None:
        self.ledger = ledger  # needs stored_rows(game, after) and board_of(game) (SqliteLedger has them)
        self.key = key
        self.min_interval_s = min_interval_s
        self.quiet_interval_s = quiet_interval_s
        self.latest: dict[str, SignedTreeHead] = {}
        self._trees: dict[str, CompactTree] = {}
        self._boards: dict[str, str] = {}
        self._last_at: dict[str, float] = {}
        self._dirty: dict[str, float] = {}  # game -> the interval its next head waits for

    @classmethod
    def for_venue(cls, ledger: Any, environ: Mapping[str, str] = os.environ) -> TreeHeadPublisher:
        """With the venue's key from the data directory, made there on first use."""
        path = key_path(environ)
        existed = path.exists()
        key = load_or_create_key(path)
        if not existed:
            log.info("venue signing key created at %s (mode 0600)", path)
        return cls(ledger, key)

    def touched(self, game_ids: Iterable[str], outputs: Iterable[Event] = ()) -> None:
        """These games' ledgers were appended to, and the referee published these outputs for them."""
        games = {g for g in game_ids if not g.startswith(UNASSIGNED_PREFIX)}
        for game_id in games:
            self._dirty[game_id] = min(self._dirty.get(game_id, self.quiet_interval_s), self.quiet_interval_s)
        for event in outputs:
            game_id = event.data.get("game_id")
            if game_id in games:
                self._dirty[game_id] = self.min_interval_s

    def due(self, now_s: float, now_us: int) -> list[Event]:
        """The TreeHead events to publish now (`now_s`: a monotonic clock; `now_us`: the time to sign)."""
        events: list[Event] = []
        for game_id, interval in sorted(self._dirty.items()):
            if now_s - self._last_at.get(game_id, float("-inf")) < interval:
                continue
            try:
                signed = self.sign_current(game_id, now_us)
            except (sqlite3.Error, LedgerError, ValueError) as exc:  # ValueError: EventError, a refused head
                # A head that cannot be made now must not hold back the rulings published with it: the game stays
                # marked, and the next poll tries again.
                log.warning("tree head of %s not signed this time: %s", game_id, exc)
                continue
            del self._dirty[game_id]
            if signed is None:
                continue
            self._last_at[game_id] = now_s
            events.append(signed.to_event())
        return events

    def sign_current(self, game_id: str, now_us: int) -> SignedTreeHead | None:
        """A head over the game's ledger as it is now; None when nothing was appended since the last one."""
        tree = self._trees.get(game_id)
        if tree is None:
            tree = self._trees[game_id] = CompactTree()
        for row in self.ledger.stored_rows(game_id, after=tree.size):
            tree.append(leaf_hash(bytes(row.body)))
        previous = self.latest.get(game_id)
        if tree.size == 0 or (previous is not None and previous.head.tree_size == tree.size):
            return None
        board = self._boards.get(game_id)
        if board is None:
            board = self._boards[game_id] = self.ledger.board_of(game_id) or ""
        signed = sign_head(TreeHead(game_id, board, tree.size, tree.root().hex(), now_us), self.key)
        self.latest[game_id] = signed
        return signed
