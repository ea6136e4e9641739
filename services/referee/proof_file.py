"""Proof documents: what a broadcaster or an appeals committee checks without our server, and the check itself.

A proof document is one JSON object (`xqarb verify --game ID --export-proof OUT`, or put together from the API):

    {"format": "xqarb-proof/1", "game_id": G, "board_id": B,
     "heads":       [signed tree heads, as GET /api/games/G/tree-head or the TreeHead events of the stream],
     "entries":     [each ledger entry's canonical bytes, base64, in seq order]            (optional)
     "inclusion":   [answers of GET /api/games/G/proof/inclusion]                          (optional)
     "consistency": [answers of GET /api/games/G/proof/consistency]                        (optional)
     "public_key":  the venue's public key, 64 hex digits                                  (informative only)}

Heads the checker kept itself (saved from the stream when they were published) are given beside it
(`--head FILE`); they are what anchors the ledger. The check:
  - every head is signed by the venue's key and is about this game;
  - with `entries`: each entry says it is entry i of game G on board B, and the Merkle root of entries 1..N is
    the root of every head of size N. A head larger than the ledger shows a truncation; a root that differs shows
    an entry changed, removed or rewritten (with recomputed chain hashes, which the chain cannot show); a head
    naming another board shows a game moved between boards;
  - `inclusion`: each entry is under the root of a signed head of the proof's size;
  - `consistency`: the smaller head's tree is a prefix of the larger's; without `entries`, every pair of
    consecutive head sizes must be linked by one.
Pure: documents and keys in, a report out.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import pairwise
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from xqarb.referee.merkle import (
    ProofError,
    consistency_proof,
    inclusion_proof,
    leaf_hash,
    root_of,
    verify_consistency,
    verify_inclusion,
)
from xqarb.referee.tree_head import SignedTreeHead, TreeHeadError, head_problem

PROOF_FORMAT = "xqarb-proof/1"


class ProofFileError(ValueError):
    """A proof document that is not well formed (it cannot be checked at all)."""


def entry_bytes(body: Any) -> bytes:
    """An entry's stored bytes as hashed. A body a hand-run UPDATE stored as text is taken as its UTF-8 bytes."""
    if isinstance(body, bytes | bytearray | memoryview):
        return bytes(body)
    return str(body).encode("utf-8", "surrogateescape")


# --- answers of the API, and the export ----------------------------------------------------------------------------


def inclusion_json(game_id: str, board_id: str, bodies: Sequence[bytes], seq: int, size: int) -> dict[str, Any]:
    """The inclusion proof of entry `seq` in the tree of the first `size` entries (raises ProofError)."""
    leaves = [leaf_hash(b) for b in bodies[:size]]
    path = inclusion_proof(leaves, seq - 1, size)
    return {"game_id": game_id, "board_id": board_id, "seq": seq, "tree_size": size,
            "entry": base64.b64encode(bodies[seq - 1]).decode("ascii"), "leaf_hash": leaves[seq - 1].hex(),
            "root_hash": root_of(leaves).hex(), "audit_path": [p.hex() for p in path]}


def consistency_json(game_id: str, bodies: Sequence[bytes], first: int, second: int) -> dict[str, Any]:
    """The consistency proof between the trees of the first `first` and `second` entries (raises ProofError)."""
    leaves = [leaf_hash(b) for b in bodies[:second]]
    path = consistency_proof(leaves, first, second)
    return {"game_id": game_id, "from_size": first, "to_size": second, "from_root": root_of(leaves, 0, first).hex(),
            "to_root": root_of(leaves).hex(), "consistency_path": [p.hex() for p in path]}


def export_document(game_id: str, board_id: str, bodies: Iterable[bytes], heads: Iterable[SignedTreeHead],
                    public_key_hex: str | None) -> dict[str, Any]:
    return {"format": PROOF_FORMAT, "game_id": game_id, "board_id": board_id,
            "heads": [h.to_json() for h in heads],
            "entries": [base64.b64encode(b).decode("ascii") for b in bodies],
            "public_key": public_key_hex}


def read_heads(text: str) -> list[SignedTreeHead]:
    """Heads from a file a checker kept: one JSON head, a JSON list of them, or JSON lines (a saved stream, in
    which lines of other event types are skipped)."""
    text = text.strip()
    try:
        loaded = json.loads(text)
        items = loaded if isinstance(loaded, list) else [loaded]
    except json.JSONDecodeError:
        try:
            items = [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError as exc:
            raise ProofFileError(f"a head file is JSON, a JSON list or JSON lines: {exc}") from exc
    heads = []
    for item in items:
        if isinstance(item, Mapping) and item.get("type", "TreeHead") != "TreeHead":
            continue
        try:
            heads.append(SignedTreeHead.from_json(item))
        except TreeHeadError as exc:
            raise ProofFileError(str(exc)) from exc
    return heads


# --- the check ---------------------------------------------------------------------------------------------------


@dataclass
class ProofReport:
    game_id: str
    checked: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        return {"game_id": self.game_id, "ok": self.ok, "checked": self.checked, "problems": self.problems,
                "warnings": self.warnings}


def _when(timestamp_us: int) -> str:
    """A head's time for a person: UTC, to the second."""
    try:
        return datetime.fromtimestamp(timestamp_us / 1e6, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return f"{timestamp_us} us"


def _hex32(value: Any, what: str) -> bytes:
    if not isinstance(value, str):
        raise ProofFileError(f"{what} is 64 hex digits, not {value!r:.80}")
    try:
        raw = bytes.fromhex(value)
    except ValueError:
        raw = b""
    if len(raw) != 32:
        raise ProofFileError(f"{what} is 64 hex digits, not {value!r:.80}")
    return raw


def _b64(value: Any, what: str) -> bytes:
    if not isinstance(value, str):
        raise ProofFileError(f"{what} is base64 text, not {type(value).__name__}")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ProofFileError(f"{what} is not base64: {exc}") from exc


def _whole(value: Any, what: str) -> int:
    if type(value) is not int or value < 0:
        raise ProofFileError(f"{what} is a whole number, not {value!r:.80}")
    return value


def _list(doc: Mapping[str, Any], name: str) -> list[Any]:
    value = doc.get(name)
    if value is None:
        return []
    if not isinstance(value, list):
        raise ProofFileError(f"{name} is a JSON list, not {type(value).__name__}")
    return value


def check_document(doc: Any, public: Ed25519PublicKey, kept_heads: Sequence[SignedTreeHead] = ()) -> ProofReport:
    """Check a proof document against the venue's public key and the heads the checker kept (ProofFileError when
    the document is not one)."""
    if not isinstance(doc, Mapping):
        raise ProofFileError(f"a proof document is a JSON object, not {type(doc).__name__}")
    if doc.get("format") != PROOF_FORMAT:
        raise ProofFileError(f"unknown proof format {doc.get('format')!r} (this verifier reads {PROOF_FORMAT})")
    game, board = doc.get("game_id"), doc.get("board_id")
    if not isinstance(game, str) or not isinstance(board, str):
        raise ProofFileError("a proof document names its game_id and board_id (text)")
    report = ProofReport(game)
    try:
        heads = [SignedTreeHead.from_json(h) for h in _list(doc, "heads")] + list(kept_heads)
    except TreeHeadError as exc:
        raise ProofFileError(str(exc)) from exc
    valid = _check_heads(heads, game, public, report)
    if not heads:
        report.problems.append("no signed tree head to check against: give the heads you kept with --head")
    entries = [_b64(e, f"entry {i}") for i, e in enumerate(_list(doc, "entries"), start=1)]
    if "entries" in doc:
        _check_entries(entries, game, board, valid, report)
    _check_inclusions(_list(doc, "inclusion"), game, valid, report)
    linked = _check_consistencies(_list(doc, "consistency"), game, valid, report)
    if "entries" not in doc:
        sizes = sorted({h.head.tree_size for h in valid})
        for small, large in pairwise(sizes):
            if (small, large) not in linked:
                report.problems.append(f"nothing shows the head of size {small} is a prefix of the head of size "
                                       f"{large}: give the entries or a consistency proof between them")
    return report


def _check_heads(heads: Sequence[SignedTreeHead], game: str, public: Ed25519PublicKey,
                 report: ProofReport) -> list[SignedTreeHead]:
    """The heads that are signed by the venue and about this game; a problem for each other one."""
    valid: list[SignedTreeHead] = []
    by_size: dict[int, SignedTreeHead] = {}
    for signed in heads:
        h = signed.head
        name = f"head of size {h.tree_size} signed at {_when(h.timestamp)}"
        if h.game_id != game:
            report.problems.append(f"{name} is about game {h.game_id!r}, not {game!r}")
            continue
        problem = head_problem(signed, public)
        if problem is not None:
            report.problems.append(f"{name}: {problem}")
            continue
        same = by_size.get(h.tree_size)
        if same is not None and same.head.root_hash != h.root_hash:
            report.problems.append(f"two signed heads of size {h.tree_size} have different roots: the ledger was "
                                   "rewritten between them")
        by_size.setdefault(h.tree_size, signed)
        valid.append(signed)
        report.checked.append(f"{name}: signature verifies")
    return valid


def _check_entries(entries: list[bytes], game: str, board: str, heads: Sequence[SignedTreeHead],
                   report: ProofReport) -> None:
    for seq, body in enumerate(entries, start=1):
        try:
            document = json.loads(body)
            claims = (document["game_id"], document["seq"], document["event"]["board_id"])
        except (ValueError, KeyError, TypeError):
            report.problems.append(f"entry {seq} is not a ledger entry (no game, seq and event board in it)")
            continue
        if claims != (game, seq, board):
            report.problems.append(f"entry {seq} says it is entry {claims[1]!r} of game {claims[0]!r} on board "
                                   f"{claims[2]!r}, the document says entry {seq} of {game!r} on {board!r}")
    leaves = [leaf_hash(b) for b in entries]
    report.checked.append(f"{len(entries)} entries read")
    roots = {s.head.tree_size: root_of(leaves, 0, s.head.tree_size).hex() for s in heads
             if s.head.tree_size <= len(entries)}
    matching = [s.head.tree_size for s in heads if roots.get(s.head.tree_size) == s.head.root_hash]
    for signed in heads:
        h = signed.head
        name = f"head of size {h.tree_size} signed at {_when(h.timestamp)}"
        if h.board_id != board:
            report.problems.append(f"{name} was signed for board {h.board_id!r}; the ledger now gives board "
                                   f"{board!r}: the game was moved to another board after it was published")
        if h.tree_size > len(entries):
            report.problems.append(f"{name} covers {h.tree_size} entries; the ledger has only {len(entries)}: "
                                   f"entries were removed from its end")
            continue
        root = roots[h.tree_size]
        if root != h.root_hash:
            # A smaller head that still matches bounds where the change is: after it, up to this one.
            after = max((m for m in matching if m < h.tree_size), default=0)
            report.problems.append(f"{name}: entries 1..{h.tree_size} have root {root[:16]}..., the head signed "
                                   f"{h.root_hash[:16]}...: an entry among {after + 1}..{h.tree_size} was changed, "
                                   "removed or rewritten")
        else:
            report.checked.append(f"{name}: entries 1..{h.tree_size} have its root")
    latest = max((s.head.tree_size for s in heads), default=0)
    if len(entries) > latest:
        report.warnings.append(f"entries {latest + 1}..{len(entries)} are under no signed head yet")


def _check_inclusions(items: list[Any], game: str, heads: Sequence[SignedTreeHead], report: ProofReport) -> None:
    roots = {s.head.tree_size: s.head.root_hash for s in heads}
    for item in items:
        if not isinstance(item, Mapping):
            raise ProofFileError("an inclusion proof is a JSON object")
        seq, size = _whole(item.get("seq"), "an inclusion proof's seq"), _whole(item.get("tree_size"), "tree_size")
        body = _b64(item.get("entry"), f"entry {seq}'s bytes")
        path = [_hex32(p, "an audit path node") for p in _list(item, "audit_path")]
        if item.get("game_id", game) != game:
            report.problems.append(f"the inclusion proof of entry {seq} is about game {item.get('game_id')!r}")
        elif size not in roots:
            report.problems.append(f"no signed head of size {size} to check entry {seq}'s inclusion against")
        elif not verify_inclusion(leaf_hash(body), seq - 1, size, path, bytes.fromhex(roots[size])):
            report.problems.append(f"entry {seq} is not under the signed head of size {size}")
        else:
            report.checked.append(f"entry {seq} is under the signed head of size {size}")


def _check_consistencies(items: list[Any], game: str, heads: Sequence[SignedTreeHead],
                         report: ProofReport) -> set[tuple[int, int]]:
    roots = {s.head.tree_size: s.head.root_hash for s in heads}
    linked: set[tuple[int, int]] = set()
    for item in items:
        if not isinstance(item, Mapping):
            raise ProofFileError("a consistency proof is a JSON object")
        first = _whole(item.get("from_size"), "a consistency proof's from_size")
        second = _whole(item.get("to_size"), "a consistency proof's to_size")
        path = [_hex32(p, "a consistency path node") for p in _list(item, "consistency_path")]
        if item.get("game_id", game) != game:
            report.problems.append(f"the consistency proof {first} -> {second} is about game {item.get('game_id')!r}")
        elif first not in roots or second not in roots:
            report.problems.append(f"the consistency proof {first} -> {second} needs signed heads of both sizes")
        elif not verify_consistency(first, second, bytes.fromhex(roots[first]), bytes.fromhex(roots[second]), path):
            report.problems.append(f"the signed head of size {second} does not extend the head of size {first}: "
                                   "the ledger was rewritten or truncated between them")
        else:
            linked.add((first, second))
            report.checked.append(f"the signed head of size {second} extends the head of size {first}")
    return linked


__all__ = ["PROOF_FORMAT", "ProofError", "ProofFileError", "ProofReport", "check_document", "consistency_json",
           "entry_bytes", "export_document", "inclusion_json", "read_heads"]
