"""Helpers of the edge and fuzz tests: a venue on an in-memory publisher (no broker), its ingest and API apps."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xqarb.events import Event
from xqarb.ingest.app import Ingest, create_app
from xqarb.ingest.config import VenueConfig, parse_config
from xqarb.referee.api import RefereeApi, StreamHub, frame_loader
from xqarb.referee.api import create_app as create_api_app
from xqarb.referee.ledger import SqliteLedger

B7, B8 = "7", "8"
TOKENS = {
    "cam7": "tok-cam-7-xxxxxxxx",
    "clock7": "tok-clock-7-xxxxxxx",
    "sheet7": "tok-sheet-7-xxxxxxx",
    "legacy7": "tok-legacy-7-xxxxxx",
    "cam8": "tok-cam-8-xxxxxxxx",
    "chief": "tok-chief-xxxxxxxxx",
}


def venue_raw(max_json_bytes: int = 65_536) -> dict[str, Any]:
    return {
        "limits": {"max_frame_bytes": 200_000, "max_json_bytes": max_json_bytes, "max_skew_s": 60},
        "boards": {
            B7: {"devices": {
                "cam-7": {"token": TOKENS["cam7"], "role": "camera"},
                "clock-7": TOKENS["clock7"],
                "sheet-7": {"token": TOKENS["sheet7"], "role": "scoresheet"},
                "old-7": TOKENS["legacy7"],  # configured without a role: any device's events
            }, "roles": {"clock-7": "clock"}},
            B8: {"devices": {"cam-8": {"token": TOKENS["cam8"], "role": "camera"}}},
        },
        "arbiters": {"chief": {"token": TOKENS["chief"], "boards": ["*"]}},
    }


@dataclass
class MemoryPublisher:
    """Acknowledges every send at once and keeps it: what a request published, and what it sent to xq.dlq."""

    sent: list[tuple[str, Event]] = field(default_factory=list)
    dead: list[tuple[str, bytes]] = field(default_factory=list)

    def publish(self, topic: str, event: Event, timeout: float) -> tuple[int, int]:
        self.sent.append((topic, event))
        return 0, len(self.sent) - 1

    def dead_letter(self, reason: str, payload: bytes, *, board_id: str, source: str, topic: str) -> None:
        self.dead.append((reason, payload))


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[key]}"}


def now_us() -> int:
    return time.time_ns() // 1000


@dataclass
class Venue:
    config: VenueConfig
    publisher: MemoryPublisher
    ingest: Any  # the ingest Flask app's test client
    api: Any  # the API Flask app's test client (its own Ingest for arbiter actions, the same publisher)
    api_ingest: Ingest
    ledger: SqliteLedger
    game: str
    hub: StreamHub


def make_venue(tmp_path: Path, max_json_bytes: int = 65_536) -> Venue:
    from tests.venue.gamedata import write_game

    config = parse_config(venue_raw(max_json_bytes))
    publisher = MemoryPublisher()
    ingest_app = create_app(config, publisher)
    ledger = SqliteLedger(tmp_path / "ledger.sqlite")
    game = "g-7"
    write_game(ledger, tmp_path / "frames", B7, game, now_us() - 60_000_000)
    hub = StreamHub()
    for i, entry in enumerate(e for e in ledger.entries(game) if e.kind == "output"):
        hub.add(0, i, entry.event)
    api_ingest = Ingest(config, publisher)
    api = RefereeApi(ledger=ledger, hub=hub, board_ids=config.boards, load_frame=frame_loader([tmp_path / "frames"]),
                     ingest=api_ingest)
    return Venue(config, publisher, ingest_app.test_client(), create_api_app(api).test_client(), api_ingest, ledger,
                 game, hub)
