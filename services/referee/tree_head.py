"""Signed tree heads: what a venue states, with its Ed25519 key, about a game's ledger at one moment.

A head says: the ledger of game G, played on board B, had N entries, and the RFC 6962 Merkle tree hash of their
canonical bytes (the bytes each entry's chain hash covers, ledger.py) was R, at time T. The signature covers the
canonical JSON (sorted keys, compact, UTF-8) of exactly these fields and a format tag:

    {"board_id": B, "format": "xqarb-tree-head/1", "game_id": G, "root_hash": R (hex), "tree_size": N,
     "timestamp": T (microseconds since the epoch, UTC)}

The board is bound into the head (not into the leaves, which already carry each event's board) so that a game
moved to another board in the games table no longer matches any head that was published for it.

Once a head was published (on xq.game-events, or handed to a broadcaster), the venue cannot shorten the ledger nor
rewrite any of its first N entries without the tree of a later export disagreeing with that head. Pure: keys and
times are passed in.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from xqarb.events import Event, make_event
from xqarb.referee.merkle import CompactTree, leaf_hash
from xqarb.referee.venue_key import key_id

HEAD_FORMAT = "xqarb-tree-head/1"
EVENT_TYPE = "TreeHead"
SOURCE_PREFIX = "referee-heads:"  # the source of a game's head events: "referee-heads:<game id>"
_HEAD_FIELDS = ("game_id", "board_id", "tree_size", "root_hash", "timestamp", "key_id", "signature")


class TreeHeadError(ValueError):
    """A head that is not well formed (a field missing or of the wrong kind)."""


@dataclass(frozen=True, slots=True)
class TreeHead:
    game_id: str
    board_id: str
    tree_size: int
    root_hash: str  # 64 hex digits
    timestamp: int  # microseconds since the epoch, UTC

    def signed_bytes(self) -> bytes:
        body = {"board_id": self.board_id, "format": HEAD_FORMAT, "game_id": self.game_id,
                "root_hash": self.root_hash, "timestamp": self.timestamp, "tree_size": self.tree_size}
        return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


@dataclass(frozen=True, slots=True)
class SignedTreeHead:
    head: TreeHead
    key_id: str  # SHA-256 of the raw public key, hex
    signature: str  # base64 of the 64-byte Ed25519 signature

    def to_json(self) -> dict[str, Any]:
        h = self.head
        return {"format": HEAD_FORMAT, "game_id": h.game_id, "board_id": h.board_id, "tree_size": h.tree_size,
                "root_hash": h.root_hash, "timestamp": h.timestamp, "key_id": self.key_id,
                "signature": self.signature}

    @classmethod
    def from_json(cls, obj: Any) -> SignedTreeHead:
        """A head from its JSON form (as the API serves it) or a TreeHead event's JSON form (as the stream does)."""
        if not isinstance(obj, Mapping):
            raise TreeHeadError(f"a tree head is a JSON object, not {type(obj).__name__}")
        missing = [name for name in _HEAD_FIELDS if name not in obj]
        if missing:
            raise TreeHeadError(f"a tree head lacks {', '.join(missing)}")
        if obj.get("format", HEAD_FORMAT) != HEAD_FORMAT:
            raise TreeHeadError(f"unknown tree head format {obj.get('format')!r} (this verifier reads {HEAD_FORMAT})")
        for name in ("tree_size", "timestamp"):
            if type(obj[name]) is not int or obj[name] < 0:
                raise TreeHeadError(f"a tree head's {name} is a whole number >= 0, not {obj[name]!r}")
        for name in ("game_id", "board_id", "root_hash", "key_id", "signature"):
            if not isinstance(obj[name], str):
                raise TreeHeadError(f"a tree head's {name} is text, not {obj[name]!r}")
        if not _is_hex32(obj["root_hash"]):
            raise TreeHeadError(f"a tree head's root_hash is 64 hex digits, not {obj['root_hash'][:80]!r}")
        head = TreeHead(obj["game_id"], obj["board_id"], obj["tree_size"], obj["root_hash"].lower(),
                        obj["timestamp"])
        return cls(head, obj["key_id"], obj["signature"])

    def to_event(self) -> Event:
        """The TreeHead event published on xq.game-events: its id is stable for (game, size, root), so a head
        published again after a crash is recognised as the same one."""
        h = self.head
        return make_event(
            EVENT_TYPE, h.board_id, source=f"{SOURCE_PREFIX}{h.game_id}", source_seq=h.tree_size,
            occurred_at=h.timestamp, received_at=h.timestamp,
            event_id=f"sth-{h.root_hash[:32]}-{h.tree_size}",
            game_id=h.game_id, tree_size=h.tree_size, root_hash=h.root_hash, timestamp=h.timestamp,
            key_id=self.key_id, signature=self.signature,
        )

    @classmethod
    def from_event(cls, event: Event) -> SignedTreeHead:
        if event.type != EVENT_TYPE:
            raise TreeHeadError(f"a {event.type} event is no tree head")
        return cls.from_json({**event.data, "board_id": event.board_id})


def _is_hex32(text: str) -> bool:
    return len(text) == 64 and all(c in "0123456789abcdefABCDEF" for c in text)


def sign_head(head: TreeHead, key: Ed25519PrivateKey) -> SignedTreeHead:
    signature = key.sign(head.signed_bytes())  # Ed25519 is deterministic: the same head, the same signature
    return SignedTreeHead(head, key_id(key.public_key()), base64.b64encode(signature).decode("ascii"))


def head_problem(signed: SignedTreeHead, public: Ed25519PublicKey) -> str | None:
    """Why this head is not a head signed by that key, or None when it is."""
    expected = key_id(public)
    if signed.key_id != expected:
        return f"the head names key {signed.key_id[:16]}..., the venue's key is {expected[:16]}..."
    try:
        signature = base64.b64decode(signed.signature, validate=True)
    except (binascii.Error, ValueError):
        return "the head's signature is not base64"
    try:
        public.verify(signature, signed.head.signed_bytes())
    except InvalidSignature:
        return "the head's signature does not verify: the head was changed after it was signed, or forged"
    return None


def leaves_of(bodies: Iterable[bytes]) -> list[bytes]:
    """The Merkle leaf hashes of a ledger's entries, from their canonical bytes in seq order."""
    return [leaf_hash(bytes(body)) for body in bodies]


def head_of(game_id: str, board_id: str, bodies: Iterable[bytes], timestamp: int) -> TreeHead:
    """The (unsigned) head of a game's ledger whose entries' canonical bytes are `bodies`, in seq order."""
    tree = CompactTree()
    for body in bodies:
        tree.append(leaf_hash(bytes(body)))
    return TreeHead(game_id, board_id, tree.size, tree.root().hex(), timestamp)
