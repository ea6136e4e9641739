"""The stream carries GameStarted, clock presses and GameEnded (DESIGN, /api/stream), so an overlay runs clocks.

A game of two moves, each followed by the mover's clock press, then Black resigns: the referee publishes, in order,
GameStarted, MoveMade, ClockPressed, MoveMade, ClockPressed, GameEnded (the resignation itself is no stream event;
its ruling is GameEnded), and `/api/stream` serves them from xq.game-events as they came.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from xqarb import bus
from xqarb.events import Event, make_event
from xqarb.referee.ledger import Origin, SqliteLedger
from xqarb.referee.rules import START_FEN, Move, Position
from xqarb.referee.service import Referee, RefereeService

T0 = 1_764_460_800_000_000  # µs
MOVES = ["h2e2", "b9c7"]
# Each side's clock after its press, as the referee's clock model has it (article 6: the device and the model
# agree): 60 minutes less 10.5 s for red (started at T0, pressed at T0 + 10.5 s) and 10 s for black.
CLOCKS = [(3_589_500, 3_600_000), (3_589_500, 3_590_000)]


def _inputs(board: str, game: str) -> list[Event]:
    out = [make_event(
        "GameStarted", board, source="arbiter:chief", source_seq=1, occurred_at=T0, received_at=T0, game_id=game,
        red_player="许银川", black_player="吕钦", recording_required=False,
        time_control={"scheme": "increment", "base_ms": 3_600_000, "increment_ms": 0},
    )]
    position = Position.from_fen(START_FEN)
    for ply, move in enumerate(MOVES, start=1):
        position = position.play(Move.parse(move))
        at = T0 + ply * 10_000_000
        out.append(make_event("BoardStable", board, source="cam", source_seq=ply, occurred_at=at, received_at=at,
                              squares=position.squares(), frame_sha256="0" * 64))
        red_ms, black_ms = CLOCKS[ply - 1]
        out.append(make_event("ClockPressed", board, source="clock", source_seq=ply, occurred_at=at + 500_000,
                              received_at=at + 500_000, side="red" if ply % 2 else "black", red_ms=red_ms,
                              black_ms=black_ms, game_id=game))
    out.append(make_event("Resigned", board, source="clock", source_seq=9, occurred_at=T0 + 40_000_000,
                          received_at=T0 + 40_000_000, side="black", game_id=game))
    return out


EXPECTED = ["GameStarted", "MoveMade", "ClockPressed", "MoveMade", "ClockPressed", "GameEnded"]


def test_the_referee_publishes_game_started_and_clock_presses_in_order(tmp_path: Path) -> None:
    inputs = _inputs("s1", "g-s1")
    with SqliteLedger(tmp_path / "l.sqlite") as ledger:
        referee = Referee(ledger)
        published = referee.handle_batch([(e, Origin("xq.observations", 0, i)) for i, e in enumerate(inputs)])
        assert [e.type for e in published] == EXPECTED
        assert published[0] is inputs[0] and published[2] is inputs[2]  # the inputs themselves, unchanged
        assert published[-1].data["result"] == "1-0"
        # The outputs in the ledger are as before: the inputs published are inputs there.
        kinds = {e.event.event_id: e.kind for e in ledger.entries("g-s1")}
        assert kinds[inputs[0].event_id] == "input" and kinds[inputs[2].event_id] == "input"
        # The very record of a press delivered again (a crash before the commit): the press is published again.
        again = referee.handle_batch([(inputs[2], Origin("xq.observations", 0, 2))])
        assert [e.type for e in again] == ["ClockPressed"]


def test_stream_serves_them_from_kafka_and_boards_show_the_pressed_clocks(
    broker: str, unique_topic: Any, tmp_path: Path
) -> None:
    from xqarb.referee.api import RefereeApi, StreamHub, create_app, kafka_game_events

    topics = {n: unique_topic(n) for n in ("observations", "clock", "arbiter", "game_events")}
    bus.ensure_topics(broker, list(topics.values()), partitions=1)
    inputs = _inputs("s2", "g-s2")
    with SqliteLedger(tmp_path / "l.sqlite") as ledger:
        service = RefereeService(
            broker, ledger, group_id=unique_topic("group"),
            topics=(topics["observations"], topics["clock"], topics["arbiter"]),
            game_events_topic=topics["game_events"], poll_timeout_s=0.2, hold_s=0.5,
        )
        try:
            with bus.Producer(broker) as producer:  # one topic keeps the inputs' order without the ordering hold
                producer.send_many(topics["observations"], inputs)
            deadline = time.monotonic() + 30
            while service.processed < len(inputs) and time.monotonic() < deadline:
                service.run_once()
            assert service.processed == len(inputs)
        finally:
            service.close()
        hub = StreamHub()
        thread = hub.start(kafka_game_events(broker, topics["game_events"]))
        deadline = time.monotonic() + 15
        while len(hub.items) < len(EXPECTED) and time.monotonic() < deadline:
            time.sleep(0.1)
        hub.stop()
        thread.join(5)
        api = RefereeApi(ledger=ledger, hub=hub, board_ids=["s2"], load_frame=lambda sha: None)
        client = create_app(api).test_client()
        text = client.get("/api/stream?once=1&board=s2").get_data(as_text=True)
        board = client.get("/api/boards").get_json()["boards"][0]
    frames = [f for f in text.split("\n\n") if f.startswith("id: ")]
    types = [line.split(": ", 1)[1] for f in frames for line in f.split("\n") if line.startswith("event: ")]
    assert types == EXPECTED
    press = json.loads(frames[4].split("data: ", 1)[1])
    assert press["side"] == "black" and (press["red_ms"], press["black_ms"]) == CLOCKS[1]
    assert (board["red_ms"], board["black_ms"]) == CLOCKS[1] and board["result"] == "1-0"
    assert (board["red_player"], board["black_player"]) == ("许银川", "吕钦")
