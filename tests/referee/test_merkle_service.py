"""Signed tree heads through the real embedded broker: the referee publishes them on xq.game-events after the
game's own outputs, and the last one is the root of the game's whole ledger."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from tests.referee.test_service import MOVES, _game_inputs, _run_until, _topics
from xqarb import bus
from xqarb.events import Event
from xqarb.referee.head_publisher import TreeHeadPublisher
from xqarb.referee.ledger import SqliteLedger
from xqarb.referee.service import RefereeService
from xqarb.referee.tree_head import SignedTreeHead, head_of, head_problem


def _read_until_head_of(broker: str, topic: str, size: int, timeout_s: float = 30.0) -> list[Event]:
    """Every event on the topic, up to the head of `size` entries."""
    got: list[Event] = []
    with bus.Consumer(broker, f"reader-{topic}", [topic]) as reader:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            got.extend(r.event for r in reader.poll(0.5) if r.event is not None)
            if any(e.type == "TreeHead" and e.data["tree_size"] == size for e in got):
                break
    return got


def test_the_referee_publishes_signed_heads_after_its_outputs(broker: str, unique_topic: Callable[[str], str],
                                                               tmp_path: Path) -> None:
    topics = _topics(unique_topic)
    bus.ensure_topics(broker, topics.values(), partitions=4)
    started, observations = _game_inputs("21", "g-21")
    key = Ed25519PrivateKey.generate()
    with SqliteLedger(tmp_path / "ledger.sqlite") as ledger:
        service = RefereeService(
            broker, ledger, group_id="referee-heads", poll_timeout_s=0.2, hold_s=1.0,
            topics=(topics["observations"], topics["clock"], topics["arbiter"]),
            game_events_topic=topics["game_events"],
            tree_heads=TreeHeadPublisher(ledger, key, min_interval_s=0.0, quiet_interval_s=0.0),
        )
        try:
            with bus.Producer(broker) as producer:
                producer.send(topics["arbiter"], started)
            _run_until(service, lambda: ledger.head("g-21")[0] >= 1)
            with bus.Producer(broker) as producer:
                producer.send_many(topics["observations"], observations)
            _run_until(service, lambda: service.processed >= 1 + len(MOVES))
        finally:
            service.close()
        size = ledger.head("g-21")[0]
        bodies = [row.body for row in ledger.stored_rows("g-21")]
    published = _read_until_head_of(broker, topics["game_events"], size)
    heads = [SignedTreeHead.from_event(e) for e in published if e.type == "TreeHead"]
    assert len(heads) >= 2  # one after the game started, at least one after the moves
    assert all(head_problem(h, key.public_key()) is None for h in heads)
    sizes = [h.head.tree_size for h in heads]
    assert sizes == sorted(sizes) and sizes[-1] == size
    last = heads[-1].head
    assert last == head_of("g-21", "21", bodies, last.timestamp)
    # On the board's partition a head comes after the outputs it covers.
    types = [e.type for e in published]
    assert types.index("TreeHead", types.index("MoveMade")) > types.index("MoveMade")
    assert types[-1] == "TreeHead"
