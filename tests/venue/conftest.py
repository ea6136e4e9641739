"""Fixtures of the venue tests: a venue configuration, an ingest app on the session broker, a topic reader."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from xqarb import bus
from xqarb.ingest.config import VenueConfig, parse_config


@pytest.fixture(scope="session")
def topics(broker: str) -> str:
    bus.ensure_topics(broker, partitions=4)
    return broker


@pytest.fixture
def venue() -> dict[str, Any]:
    """A venue with two boards of unique ids (the session broker is shared: tests find their own messages)."""
    tag = uuid.uuid4().hex[:6]
    b7, b8 = f"7{tag}", f"8{tag}"
    raw = {
        "limits": {"max_frame_bytes": 200_000, "max_json_bytes": 4096, "max_skew_s": 60, "max_in_flight": 8},
        "tournaments": {"open": {"broadcast_delay_s": 0}},
        "boards": {
            b7: {"tournament": "open", "devices": {f"cam-{b7}": f"tok-cam-{b7}", f"clock-{b7}": f"tok-clock-{b7}"}},
            b8: {"tournament": "open", "devices": {f"cam-{b8}": f"tok-cam-{b8}"}},
        },
        "arbiters": {
            "chief": {"token": f"tok-chief-{tag}", "boards": ["*"]},
            "floor": {"token": f"tok-floor-{tag}", "boards": [b8]},
        },
    }
    return {"raw": raw, "config": parse_config(raw), "b7": b7, "b8": b8, "tag": tag}


def jpeg(width: int = 64, height: int = 48, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    img = rng.integers(0, 255, (height, width, 3), dtype=np.uint8)
    ok, buf = cv2.imencode(".jpg", img)
    assert ok
    return buf.tobytes()


def now_us() -> int:
    return time.time_ns() // 1000


def read_topic(
    bootstrap: str,
    topic: str,
    match: Callable[[Any], bool],
    *,
    count: int = 1,
    timeout_s: float = 15.0,
    decode: bool = True,
) -> list[Any]:
    """Records of `topic` (from the beginning, every partition) for which `match(record)` holds: waits for `count`.

    Where the broker rolls `topic` (`xqarb up`'s embedded broker: xq.game-events and xq.game-events.roll, a period
    each), both topics of the pair are read, so a run that crosses a switch of period finds every record; they come
    back in the order they were written on each partition (the earlier period's topic first)."""
    from kafka import KafkaConsumer, TopicPartition

    from xqarb import bus, codec

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, group_id=None)
    try:
        names = bus.with_rolled([topic], consumer.topics())
        tps = [TopicPartition(name, p) for name in names for p in consumer.partitions_for_topic(name) or set()]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        found: list[Any] = []
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and len(found) < count:
            for _tp, records in consumer.poll(timeout_ms=300).items():
                for rec in records:
                    item = (rec, codec.decode(rec.value)) if decode else (rec, None)
                    if match(item):
                        found.append(item)
        if len(names) > 1:
            found.sort(key=lambda it: (bus.generation(it[0].topic, it[0].timestamp), it[0].offset))
        return found
    finally:
        consumer.close()


@pytest.fixture
def ingest_client(topics: str, venue: dict[str, Any]) -> Iterator[Any]:
    from xqarb.ingest.app import create_app
    from xqarb.ingest.publish import BusPublisher

    config: VenueConfig = venue["config"]
    publisher = BusPublisher.connect(topics, ack_timeout_s=config.limits.ack_timeout_s)
    app = create_app(config, publisher)
    try:
        yield app.test_client()
    finally:
        publisher.close()


@pytest.fixture
def api_setup(tmp_path: Path, venue: dict[str, Any], ingest_client: Any) -> dict[str, Any]:
    from tests.venue.gamedata import write_game
    from xqarb.ingest.app import Ingest
    from xqarb.ingest.publish import BusPublisher
    from xqarb.referee.api import RefereeApi, StreamHub, create_app, frame_loader
    from xqarb.referee.ledger import SqliteLedger

    ledger = SqliteLedger(tmp_path / "ledger.sqlite")
    b7 = venue["b7"]
    game = f"game-{venue['tag']}"
    info = write_game(ledger, tmp_path / "frames", b7, game, time.time_ns() // 1000)
    hub = StreamHub()
    for i, entry in enumerate(e for e in ledger.entries(game) if e.kind == "output"):
        hub.add(i % 2, i // 2, entry.event)
    ingest = Ingest(venue["config"], ingest_client.application.extensions["xq_ingest"].publisher)
    api = RefereeApi(
        ledger=ledger,
        hub=hub,
        board_ids=venue["config"].boards,
        load_frame=frame_loader([tmp_path / "frames"]),
        ingest=ingest,
    )
    app = create_app(api)
    return {
        "client": app.test_client(),
        "game": game,
        "board": b7,
        "ledger": ledger,
        "hub": hub,
        **info,
        "app": app,
        "publisher": BusPublisher,
    }
