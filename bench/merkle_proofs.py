"""Tamper evidence costs for one game's ledger: Merkle root, signed head, proofs, export and stand-alone check.

    .venv/bin/python bench/merkle_proofs.py [--entries 400] [--repeat 20]

A real referee ledger (SQLite): a refereed opening, then clock presses up to the number of entries (a long game
has about 400: an input and an output per ply, plus presses and observations). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from tests.referee.conftest import Scenario
from xqarb.events import make_event
from xqarb.referee.head_publisher import TreeHeadPublisher
from xqarb.referee.ledger import Pending, SqliteLedger
from xqarb.referee.merkle import CompactTree, leaf_hash
from xqarb.referee.proof_file import check_document, consistency_json, export_document, inclusion_json
from xqarb.referee.service import Referee
from xqarb.referee.tree_head import head_of, sign_head

T0 = 1_767_225_600_000_000


def _median_ms(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return round(statistics.median(times) * 1000, 3)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ledger = SqliteLedger(Path(tmp) / "ledger.sqlite")
        events = Scenario(board="b1", game="g1").moves("h2e2", "h9g7", "h0g2", "i9h9", "i0h0", "b9c7").events()
        Referee(ledger).handle_batch([(e, None) for e in events])
        n = ledger.head("g1")[0]
        presses = [make_event("ClockPressed", "b1", source="clock-b1", source_seq=100 + i, occurred_at=T0 + 10**9 + i,
                              received_at=T0 + 10**9 + i, side="red" if i % 2 else "black", red_ms=3_000_000 - i,
                              black_ms=2_900_000 - i) for i in range(max(0, args.entries - n))]
        ledger.append("g1", "b1", [Pending("input", e) for e in presses])
        bodies = [bytes(r.body) for r in ledger.stored_rows("g1")]
        size = len(bodies)
        key = Ed25519PrivateKey.generate()

        def grow() -> None:
            tree = CompactTree()
            for body in bodies:
                tree.append(leaf_hash(body))
            tree.root()

        def publish() -> None:  # what the referee pays for the first head of a game (read from the ledger)
            publisher = TreeHeadPublisher(ledger, key, min_interval_s=0.0, quiet_interval_s=0.0)
            publisher.touched(["g1"])
            publisher.due(0.0, T0)

        signed = sign_head(head_of("g1", "b1", bodies, T0), key)
        inclusion = inclusion_json("g1", "b1", bodies, 1, size)
        consistency = consistency_json("g1", bodies, size // 2, size)
        document = export_document("g1", "b1", bodies, [signed], None)
        figures = {
            "entries": size,
            "mean_entry_bytes": round(sum(map(len, bodies)) / size),
            "root_of_all_entries_ms": _median_ms(lambda: head_of("g1", "b1", bodies, T0), args.repeat),
            "compact_tree_grown_leaf_by_leaf_ms": _median_ms(grow, args.repeat),
            "sign_head_ms": _median_ms(lambda: sign_head(signed.head, key), args.repeat),
            "first_head_from_ledger_ms": _median_ms(publish, args.repeat),
            "inclusion_proof_nodes": len(inclusion["audit_path"]),
            "inclusion_answer_json_bytes": len(json.dumps(inclusion)),
            "consistency_proof_nodes_half_to_full": len(consistency["consistency_path"]),
            "consistency_answer_json_bytes": len(json.dumps(consistency)),
            "inclusion_proof_ms": _median_ms(lambda: inclusion_json("g1", "b1", bodies, size // 3, size), args.repeat),
            "export_document_bytes": len(json.dumps(document)),
            "check_document_ms": _median_ms(lambda: check_document(document, key.public_key()), args.repeat),
        }
        publisher = TreeHeadPublisher(ledger, key, min_interval_s=0.0, quiet_interval_s=0.0)
        publisher.touched(["g1"])
        publisher.due(0.0, T0)
        more = iter(range(10**6))

        def next_head() -> None:  # what each later head costs the referee: two new entries, one head event
            i = next(more)
            extra = [make_event("ClockPressed", "b1", source="clock-b2", source_seq=i * 2 + j,
                                occurred_at=T0 + i * 2 + j, received_at=T0 + i, side="red", red_ms=None,
                                black_ms=None) for j in range(2)]
            ledger.append("g1", "b1", [Pending("input", e) for e in extra])
            start = time.perf_counter()
            publisher.touched(["g1"])
            publisher.due(float(i + 1), T0 + i)
            head_costs.append(time.perf_counter() - start)

        head_costs: list[float] = []
        for _ in range(args.repeat):
            next_head()
        figures["next_head_after_two_entries_ms"] = round(statistics.median(head_costs) * 1000, 3)
        ledger.close()
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
