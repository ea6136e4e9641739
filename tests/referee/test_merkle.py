"""RFC 6962 Merkle trees (services/referee/merkle.py): the reference vectors, hand-worked trees, and properties."""

from __future__ import annotations

import hashlib

from hypothesis import given, settings
from hypothesis import strategies as st

from xqarb.referee import merkle
from xqarb.referee.merkle import (
    CompactTree,
    ProofError,
    consistency_proof,
    inclusion_proof,
    leaf_hash,
    node_hash,
    root_of,
    verify_consistency,
    verify_inclusion,
)

# The test data of Certificate Transparency's reference implementation (RFC 6962's authors' code): eight leaves,
# the root of every prefix, and proofs between them. Leaf numbers in the proofs there are 1-based.
CT_LEAVES = [bytes.fromhex(h) for h in (
    "", "00", "10", "2021", "3031", "40414243", "5051525354555657", "606162636465666768696a6b6c6d6e6f")]
CT_ROOTS = [bytes.fromhex(h) for h in (
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
)]  # fmt: skip
CT_INCLUSION = [  # (leaf, 1-based; tree size; audit path)
    (1, 8, ["96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"]),
    (6, 8, ["bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"]),
    (3, 3, ["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"]),
    (2, 5, ["6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"]),
]  # fmt: skip
CT_CONSISTENCY = [  # (first size, second size, proof)
    (1, 1, []),
    (1, 8, ["96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"]),
    (6, 8, ["0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"]),
    (2, 5, ["5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"]),
]  # fmt: skip
CT_LEAF_HASHES = [leaf_hash(d) for d in CT_LEAVES]


def _sha(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _mth(entries: list[bytes]) -> bytes:
    """RFC 6962 2.1's definition written out independently (recursive, on the entries themselves)."""
    if not entries:
        return _sha(b"")
    if len(entries) == 1:
        return _sha(b"\x00" + entries[0])
    k = 1
    while k * 2 < len(entries):
        k *= 2
    return _sha(b"\x01" + _mth(entries[:k]) + _mth(entries[k:]))


# --- reference vectors and hand-worked trees ----------------------------------------------------------------------


def test_roots_of_every_prefix_are_the_reference_roots() -> None:
    for n in range(len(CT_LEAVES) + 1):
        assert root_of(CT_LEAF_HASHES[:n]) == CT_ROOTS[n], n
    assert CT_ROOTS[0] == merkle.EMPTY_ROOT


def test_a_tree_grown_leaf_by_leaf_has_the_reference_roots() -> None:
    tree = CompactTree()
    assert tree.root() == CT_ROOTS[0]
    for n, leaf in enumerate(CT_LEAF_HASHES, start=1):
        tree.append(leaf)
        assert (tree.size, tree.root()) == (n, CT_ROOTS[n])


def test_inclusion_proofs_are_the_reference_proofs_and_verify() -> None:
    for leaf, size, path_hex in CT_INCLUSION:
        path = inclusion_proof(CT_LEAF_HASHES, leaf - 1, size)
        assert [p.hex() for p in path] == path_hex
        assert verify_inclusion(CT_LEAF_HASHES[leaf - 1], leaf - 1, size, path, CT_ROOTS[size])
        assert not verify_inclusion(CT_LEAF_HASHES[leaf - 1], leaf - 1, size, path, CT_ROOTS[size - 1])


def test_consistency_proofs_are_the_reference_proofs_and_verify() -> None:
    for first, second, path_hex in CT_CONSISTENCY:
        path = consistency_proof(CT_LEAF_HASHES, first, second)
        assert [p.hex() for p in path] == path_hex
        assert verify_consistency(first, second, CT_ROOTS[first], CT_ROOTS[second], path)


def test_a_three_leaf_tree_worked_by_hand() -> None:
    a, b, c = (leaf_hash(x) for x in (b"a", b"b", b"c"))
    assert a == _sha(b"\x00a")
    ab = _sha(b"\x01" + a + b)
    assert node_hash(a, b) == ab
    root = _sha(b"\x01" + ab + c)  # split at 2, the largest power of two below 3
    assert root_of([a, b, c]) == root
    assert inclusion_proof([a, b, c], 2, 3) == [ab]
    assert inclusion_proof([a, b, c], 0, 3) == [b, c]
    assert consistency_proof([a, b, c], 2, 3) == [c]  # the first tree (ab) is perfect: only c is needed
    assert consistency_proof([a, b, c], 1, 3) == [b, c]


def test_proofs_the_tree_cannot_have_are_refused() -> None:
    leaves = CT_LEAF_HASHES[:5]
    for index, size in ((5, 5), (-1, 5), (0, 0), (0, 6)):
        try:
            inclusion_proof(leaves, index, size)
        except ProofError:
            continue
        raise AssertionError(f"an inclusion proof of leaf {index} in size {size} was made")
    for first, second in ((0, 3), (4, 3), (1, 6)):
        try:
            consistency_proof(leaves, first, second)
        except ProofError:
            continue
        raise AssertionError(f"a consistency proof {first} -> {second} was made")
    assert not verify_inclusion(leaves[0], 5, 5, [], root_of(leaves))
    assert not verify_consistency(0, 5, CT_ROOTS[0], root_of(leaves), [])
    assert not verify_consistency(3, 5, CT_ROOTS[3], CT_ROOTS[5], [])


# --- properties ------------------------------------------------------------------------------------------------

entries_strategy = st.lists(st.binary(max_size=12), min_size=1, max_size=70)


@settings(max_examples=60, deadline=None)
@given(entries_strategy)
def test_the_root_is_rfc_6962s_definition(entries: list[bytes]) -> None:
    leaves = [leaf_hash(e) for e in entries]
    tree = CompactTree()
    for leaf in leaves:
        tree.append(leaf)
    assert root_of(leaves) == tree.root() == _mth(entries)


@settings(max_examples=40, deadline=None)
@given(entries_strategy)
def test_every_inclusion_proof_verifies_for_every_leaf_and_size(entries: list[bytes]) -> None:
    leaves = [leaf_hash(e) for e in entries]
    for size in range(1, len(leaves) + 1):
        root = root_of(leaves, 0, size)
        for index in range(size):
            path = inclusion_proof(leaves, index, size)
            assert verify_inclusion(leaves[index], index, size, path, root)
            other = leaf_hash(entries[index] + b"!")  # a changed entry is not under the root
            assert not verify_inclusion(other, index, size, path, root)
            if size > 1:  # nor is the leaf at another place
                assert not verify_inclusion(leaves[index], (index + 1) % size, size, path, root) or (
                    leaves[index] == leaves[(index + 1) % size])


@settings(max_examples=40, deadline=None)
@given(entries_strategy)
def test_every_consistency_proof_between_sizes_verifies(entries: list[bytes]) -> None:
    leaves = [leaf_hash(e) for e in entries]
    roots = [root_of(leaves, 0, n) for n in range(len(leaves) + 1)]
    for second in range(1, len(leaves) + 1):
        for first in range(1, second + 1):
            path = consistency_proof(leaves, first, second)
            assert verify_consistency(first, second, roots[first], roots[second], path), (first, second)


@settings(max_examples=60, deadline=None)
@given(entries_strategy.filter(lambda e: len(e) >= 2), st.data())
def test_a_changed_entry_a_truncation_or_a_rewritten_suffix_fails(entries: list[bytes], data: st.DataObject) -> None:
    leaves = [leaf_hash(e) for e in entries]
    n = len(leaves)
    first = data.draw(st.integers(1, n - 1), label="published size")
    published = root_of(leaves, 0, first)
    # A rewritten suffix from entry `cut` to the end (cut inside the published part) and a later head over it.
    cut = data.draw(st.integers(0, first - 1), label="rewritten from")
    rewritten = leaves[:cut] + [leaf_hash(e + b"*") for e in entries[cut:]]
    path = consistency_proof(rewritten, first, n)
    assert not verify_consistency(first, n, published, root_of(rewritten), path)
    assert root_of(rewritten, 0, first) != published
    # A truncated ledger: fewer entries than the published head covers, so no proof can be made ...
    truncated = leaves[: first - 1]
    try:
        consistency_proof(truncated, first, n)
    except ProofError:
        pass
    else:
        raise AssertionError("a consistency proof was made over a ledger shorter than the head")
    # ... and the published root's proof cannot be replayed against a truncated head.
    honest = consistency_proof(leaves, first, n)
    assert not verify_consistency(first, n, published, root_of(truncated), honest)
    # A single changed entry inside the published part: its inclusion proof no longer reaches the root.
    index = data.draw(st.integers(0, first - 1), label="changed entry")
    proof = inclusion_proof(leaves, index, first)
    assert not verify_inclusion(leaf_hash(entries[index] + b"x"), index, first, proof, published)
