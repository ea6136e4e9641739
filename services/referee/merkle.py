"""RFC 6962 Merkle trees over a game's ledger: tree hashes, inclusion and consistency proofs, and their checks.

The hash chain (ledger.py) shows that entries were not changed *within* what is on disk; it cannot show that the
last entries were not deleted, nor that the chain was recomputed from some entry to the end. A Merkle tree head
(tree size and root hash), signed and published outside the ledger (tree_head.py), anchors it: every later head
must be an extension of it (a consistency proof), and every entry can be shown to be under it (an inclusion
proof), without trusting the server that serves the ledger.

Hashing is RFC 6962 section 2.1 exactly (the same as RFC 9162 section 2.1.1), SHA-256 throughout:
  leaf  = SHA-256(0x00 || entry bytes)         (the ledger entry's canonical bytes, as hashed by its chain)
  node  = SHA-256(0x01 || left || right)
  MTH({}) = SHA-256(""); a tree of n > 1 leaves splits at k, the largest power of two below n.
Proofs are RFC 6962's PATH (2.1.1) and PROOF/SUBPROOF (2.1.2), checked with RFC 9162's verification algorithms
(2.1.3.2 and 2.1.4.2). Leaf indices are 0-based (leaf i is ledger entry seq i + 1).

Pure: values in, values out; no I/O, no clock.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

LEAF_PREFIX = b"\x00"  # RFC 6962 2.1: domain separation, a leaf can never be read as a node
NODE_PREFIX = b"\x01"
EMPTY_ROOT = hashlib.sha256(b"").digest()  # RFC 6962 2.1: the hash of an empty list is the hash of an empty string


class ProofError(ValueError):
    """A proof asked for sizes or an index that the tree does not have (the proof cannot exist)."""


def leaf_hash(entry: bytes) -> bytes:
    return hashlib.sha256(LEAF_PREFIX + entry).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(NODE_PREFIX + left + right).digest()


def split_point(n: int) -> int:
    """k, the largest power of two smaller than n (n > 1): RFC 6962's split of a tree into left and right."""
    if n < 2:
        raise ValueError(f"a tree of {n} leaves does not split")
    return 1 << ((n - 1).bit_length() - 1)


def root_of(leaves: Sequence[bytes], start: int = 0, end: int | None = None) -> bytes:
    """MTH of the leaf hashes `leaves[start:end]` (RFC 6962 2.1), without copying the list."""
    end = len(leaves) if end is None else end
    n = end - start
    if n == 0:
        return EMPTY_ROOT
    if n == 1:
        return leaves[start]
    k = split_point(n)
    return node_hash(root_of(leaves, start, start + k), root_of(leaves, start + k, end))


class CompactTree:
    """A tree that grows one leaf at a time, keeping only its perfect subtrees' roots (O(log n) memory and work).

    The stack holds, left to right, the roots of the perfect subtrees that the binary digits of n give (sizes in
    decreasing powers of two). That is RFC 6962's shape: the left part of a split is the largest perfect tree.
    """

    def __init__(self) -> None:
        self.size = 0
        self._stack: list[tuple[int, bytes]] = []  # (subtree size, subtree root)

    def append(self, leaf: bytes) -> None:
        """Add one leaf hash."""
        size, node = 1, leaf
        while self._stack and self._stack[-1][0] == size:
            left_size, left = self._stack.pop()
            size, node = left_size + size, node_hash(left, node)
        self._stack.append((size, node))
        self.size += 1

    def root(self) -> bytes:
        if not self._stack:
            return EMPTY_ROOT
        node = self._stack[-1][1]
        for _, left in reversed(self._stack[:-1]):
            node = node_hash(left, node)
        return node


# --- proofs (RFC 6962 2.1.1 and 2.1.2) ----------------------------------------------------------------------------


def inclusion_proof(leaves: Sequence[bytes], index: int, size: int) -> list[bytes]:
    """PATH(index, D[size]): the audit path of leaf `index` in the tree of the first `size` leaves."""
    if not 0 <= index < size <= len(leaves):
        raise ProofError(f"no leaf {index} in a tree of {size} leaves (the ledger has {len(leaves)})")
    path: list[bytes] = []
    start, end = 0, size
    while end - start > 1:  # the recursion of PATH, from the root down; the path is read from the leaf up
        k = split_point(end - start)
        if index - start < k:
            path.append(root_of(leaves, start + k, end))
            end = start + k
        else:
            path.append(root_of(leaves, start, start + k))
            start += k
    path.reverse()
    return path


def consistency_proof(leaves: Sequence[bytes], first: int, second: int) -> list[bytes]:
    """PROOF(first, D[second]): shows that the tree of the first `first` leaves is a prefix of the `second` one."""
    if not 0 < first <= second <= len(leaves):
        raise ProofError(f"no consistency proof from {first} to {second} leaves (the ledger has {len(leaves)})")
    return _subproof(leaves, first, 0, second, True)


def _subproof(leaves: Sequence[bytes], m: int, start: int, end: int, whole: bool) -> list[bytes]:
    """SUBPROOF(m, D[start:end], whole) of RFC 6962 2.1.2."""
    n = end - start
    if m == n:
        return [] if whole else [root_of(leaves, start, end)]
    k = split_point(n)
    if m <= k:
        return [*_subproof(leaves, m, start, start + k, whole), root_of(leaves, start + k, end)]
    return [*_subproof(leaves, m - k, start + k, end, False), root_of(leaves, start, start + k)]


# --- checks (RFC 9162 2.1.3.2 and 2.1.4.2) ------------------------------------------------------------------------


def verify_inclusion(leaf: bytes, index: int, size: int, path: Sequence[bytes], root: bytes) -> bool:
    """Whether `path` shows leaf hash `leaf` at `index` under `root`, the root of a tree of `size` leaves."""
    if not 0 <= index < size:
        return False
    fn, sn = index, size - 1
    r = leaf
    for p in path:
        if sn == 0:
            return False  # a longer path than the tree is deep
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


def verify_consistency(first: int, second: int, first_root: bytes, second_root: bytes,
                       path: Sequence[bytes]) -> bool:
    """Whether `path` shows that the tree (`first`, `first_root`) is a prefix of (`second`, `second_root`)."""
    if not 0 < first <= second:
        return False
    if first == second:
        return not path and first_root == second_root
    if not path:
        return False
    nodes = list(path)
    if first & (first - 1) == 0:  # the first tree is perfect: its root is a node of the second, not in the path
        nodes.insert(0, first_root)
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = nodes[0]
    for c in nodes[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return fr == first_root and sr == second_root and sn == 0
