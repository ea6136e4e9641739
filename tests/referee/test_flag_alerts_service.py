"""The referee service schedules the flag warning (watch.py) over the real embedded broker and a SQLite ledger: a
game of 3 s sudden death started now, the warning at 1 s left: about 2 s after the start the service records one
ClockCheck in the game's ledger and publishes the AttentionNeeded `kind: flag` it causes; a replay of the ledger's
inputs through a fresh referee gives the same outputs, byte for byte."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.referee.test_service import _service, _topics
from xqarb import bus
from xqarb.events import make_event
from xqarb.referee.board import fold
from xqarb.referee.ledger import SqliteLedger
from xqarb.referee.service import Referee, RefereeService


def _started(board: str, game_id: str, at: int):
    return make_event("GameStarted", board, source="arbiter-desk", source_seq=1, occurred_at=at, received_at=at,
                      game_id=game_id, red_player="R", black_player="B", recording_required=False,
                      time_control={"scheme": "sudden_death", "base_ms": 3_000})


@pytest.fixture()
def topics(broker: str, unique_topic: Callable[[str], str]) -> dict[str, str]:
    names = _topics(unique_topic)
    bus.ensure_topics(broker, names.values(), partitions=4)
    return names


def test_the_service_records_one_clock_check_and_publishes_the_flag_alert(broker: str, topics: dict[str, str],
                                                                          tmp_path: Path) -> None:
    now = time.time_ns() // 1000
    with bus.Producer(broker) as producer:
        producer.send(topics["arbiter"], _started("31", "g-flag", now))
    with SqliteLedger(tmp_path / "ledger.sqlite") as ledger:
        service: RefereeService = _service(broker, ledger, topics, "referee-flag")
        service.referee.flag_warning_ms = 1_000
        published: list = []
        service.on_outputs = published.extend  # called once the broker acknowledged them on xq.game-events
        try:
            deadline = time.monotonic() + 30
            while not [e for e in ledger.entries("g-flag") if e.event.type == "GameEnded"]:
                assert time.monotonic() < deadline, "no flag warning and loss on time within 30 s"
                service.run_once()
            for _ in range(4):  # nothing more: the warning is given once, and the game is over
                service.run_once()
        finally:
            service.close()
        entries = ledger.entries("g-flag")
        assert [(e.kind, e.event.type) for e in entries] == [
            ("input", "GameStarted"), ("input", "ClockCheck"), ("output", "AttentionNeeded"),
            ("input", "ClockCheck"), ("output", "GameEnded")]
        check, alert, fall, ended = entries[1].event, entries[2].event, entries[3].event, entries[4].event
        # Nobody touched the board: the second check, when red's 3 s are spent, rules the flag then (4.1.6).
        assert fall.occurred_at == now + 3_000_000 and fall.data["side"] == "red"
        assert ended.data["result"] == "0-1" and ended.occurred_at == fall.occurred_at
        # Due when red (running since the start) has 1 s of its 3 left: 2 s of the game's time after the start.
        assert check.occurred_at == now + 2_000_000 and check.data["side"] == "red"
        assert check.data["warn_ms"] == 1_000 and entries[1].origin is None
        assert alert.data["kind"] == "flag" and alert.data["side"] == "red" and "0:01 left" in alert.data["reason"]
        inputs = [e.event for e in entries if e.kind == "input"]
    assert [e.event_id for e in published if e.type == "AttentionNeeded"] == [alert.event_id]
    # A replay: the same inputs through a fresh referee and ledger give the same output bytes.
    with SqliteLedger(tmp_path / "replay.sqlite") as again:
        outputs = Referee(again).handle_batch([(e, None) for e in inputs])
    assert [o.to_json() for o in outputs if o.type == "AttentionNeeded"] == [alert.to_json()]
    assert fold(inputs).game.watch.warned == frozenset({("red", 0)})


class FakeClock:
    def __init__(self) -> None:
        self.s = 500.0

    def __call__(self) -> float:
        return self.s


def test_the_check_waits_for_the_games_time_to_pass_here_and_is_recorded_once(tmp_path: Path) -> None:
    # An old game (its events' times long past): the check comes when 2 s have passed here since its last input,
    # not at once because the events' clock says the moment is past.
    clock = FakeClock()
    started = _started("32", "g-old", 1_700_000_000_000_000)
    with SqliteLedger(tmp_path / "ledger.sqlite") as ledger:
        referee = Referee(ledger, flag_warning_ms=1_000, monotonic=clock)
        referee.handle_batch([(started, None)])
        clock.s += 1.9
        assert referee.due_checks() == []
        clock.s += 0.2
        assert referee.due_checks(waiting=lambda board: board == "32") == []  # an input of the board still held
        [check] = referee.due_checks()
        assert referee.due_checks() == []  # given once
        assert check.occurred_at == started.occurred_at + 2_000_000 and check.event_id.startswith("clock-check:g-old")
        [alert] = referee.handle_batch([(check, None)])
        assert alert.data["kind"] == "flag"
        clock.s += 0.9
        assert referee.due_checks() == []  # red has 0.1 s left
        clock.s += 0.2
        [fall] = referee.due_checks()
        assert fall.occurred_at == started.occurred_at + 3_000_000 and fall.data["side"] == "red"
        [ended] = referee.handle_batch([(fall, None)])
        assert ended.type == "GameEnded" and ended.data["result"] == "0-1"
        assert referee.due_checks() == []  # the game is over: no check planned
        # A restarted referee plans the same check: recorded already, it changes nothing.
        again = Referee(ledger, flag_warning_ms=1_000, monotonic=clock)
        assert again.handle_batch([(check, None)]) == () and again.replays == 1
