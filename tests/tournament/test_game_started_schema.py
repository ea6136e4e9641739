"""GameStarted gained `event`, `round` and `board_no` with null defaults: a message written before still reads,
with no tournament, and one written now carries them through the wire format."""

from __future__ import annotations

import io
import json

import fastavro

from xqarb import codec
from xqarb.events import make_event

PREVIOUS = bytes.fromhex("01729face79e179b")  # the GameStarted published before the tournament fields


def test_a_game_started_written_before_the_tournament_fields_reads_with_none() -> None:
    registry = codec.default_registry()
    old = registry.fingerprints()[int.from_bytes(PREVIOUS, "little")]
    assert old.name == "GameStarted" and not old.current
    assert {"event", "round", "board_no"}.isdisjoint(f["name"] for f in old.schema["fields"])
    record = {
        "event_id": "e1", "board_id": "7", "source": "arbiter:chief", "source_seq": 1, "occurred_at": 5,
        "received_at": 6, "game_id": "g", "red_player": "甲", "black_player": "乙", "ruleset": "cxa-2021",
        "rapid": False, "level": "national", "start_fen": None, "natural_limit_rounds": None,
        "time_control": json.dumps({"scheme": "sudden_death", "base_ms": 900_000}), "recording_required": False,
    }  # fmt: skip
    body = io.BytesIO()
    fastavro.schemaless_writer(body, old.parsed, record)
    event = codec.decode(b"\xc3\x01" + PREVIOUS + body.getvalue())
    assert event.type == "GameStarted" and event.data["red_player"] == "甲"
    assert (event.data["event"], event.data["round"], event.data["board_no"]) == (None, None, None)


def test_the_tournament_fields_travel_on_the_wire() -> None:
    event = make_event(
        "GameStarted", "7", source="arbiter:chief", source_seq=1, occurred_at=5, received_at=6, game_id="g",
        red_player="甲", black_player="乙", time_control={"scheme": "sudden_death", "base_ms": 900_000},
        event="Open", round=3, board_no=12,
    )  # fmt: skip
    again = codec.decode(codec.encode(event))
    assert (again.data["event"], again.data["round"], again.data["board_no"]) == ("Open", 3, 12)
