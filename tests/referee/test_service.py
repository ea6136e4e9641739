"""The referee service over the real embedded broker and a real SQLite ledger: fold, append, publish, commit;
a referee killed mid-game and replaced by another member of the group ends with the same ledger as an
uninterrupted run, nothing lost or doubled."""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.contract.conftest import xqarb_command
from tests.ledger_stores import Store
from xqarb import bus
from xqarb.events import Event, make_event
from xqarb.referee.ledger import Ledger, SqliteLedger
from xqarb.referee.rules import START_FEN, Move, Position
from xqarb.referee.service import RefereeService

# The first moves of a real game (liu_dahua_iccs.pgn, Jiafun Cup 1997): cannon to the centre, horses out.
MOVES = ["h2e2", "b9c7", "h0g2", "h7f7", "g3g4", "h9g7", "b2c2", "i9h9", "b0a2", "a9b9"]
T0 = 1_764_460_800_000_000  # µs


def _game_inputs(board: str, game_id: str) -> tuple[Event, list[Event]]:
    started = make_event(
        "GameStarted", board, source="arbiter-desk", source_seq=1, occurred_at=T0, received_at=T0,
        game_id=game_id, red_player="LIU DianZhong", black_player="LIU DaHua",
        time_control={"scheme": "increment", "base_ms": 3_600_000, "increment_ms": 30_000},
        recording_required=False,
    )
    position = Position.from_fen(START_FEN)
    observations = []
    for ply, move in enumerate(MOVES, start=1):
        position = position.play(Move.parse(move))
        observations.append(make_event(
            "BoardStable", board, source=f"camera-{board}", source_seq=ply, occurred_at=T0 + ply * 20_000_000,
            received_at=T0 + ply * 20_000_000 + 5_000, squares=position.squares(), frame_sha256="0" * 64,
        ))
    return started, observations


def _topics(unique_topic: Callable[[str], str]) -> dict[str, str]:
    return {name: unique_topic(name) for name in ("observations", "clock", "arbiter", "game_events")}


def _service(broker: str, ledger: SqliteLedger, topics: dict[str, str], group: str) -> RefereeService:
    return RefereeService(
        broker, ledger, group_id=group, topics=(topics["observations"], topics["clock"], topics["arbiter"]),
        game_events_topic=topics["game_events"], poll_timeout_s=0.2, hold_s=1.0,
    )


def _run_until(service: RefereeService, done: Callable[[], bool], timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not done():
        assert time.monotonic() < deadline, "the referee did not get there in time"
        service.run_once()


def _published(broker: str, topic: str, expected: int, timeout_s: float = 30.0) -> list[Event]:
    got: list[Event] = []
    with bus.Consumer(broker, f"reader-{topic}", [topic]) as reader:
        deadline = time.monotonic() + timeout_s
        while len(got) < expected and time.monotonic() < deadline:
            got.extend(r.event for r in reader.poll(0.5) if r.event is not None)
    return got


def _produce_on_one_topic(broker: str, topic: str, started: Event, observations: list[Event]) -> None:
    # One topic, one board key, one partition: the order is Kafka's, the same for every reader. (Order across
    # topics is not Kafka's to keep; the service orders a batch by event time, see RefereeService.run_once.)
    with bus.Producer(broker) as producer:
        producer.send_many(topic, [started, *observations])


def _chain(ledger: Ledger, game_id: str) -> list[tuple[int, str, str, str]]:
    """What two runs' ledgers must agree on: every entry's seq, kind, event id and hash."""
    return [(e.seq, e.kind, e.event.event_id, e.hash) for e in ledger.entries(game_id)]


def _uninterrupted_chain(path: Path, game_id: str, make: Callable[[SqliteLedger], RefereeService]
                         ) -> list[tuple[int, str, str, str]]:
    """The chain of a run that nothing interrupts: a service of its own group and ledger, all 11 inputs."""
    with SqliteLedger(path) as reference:
        service = make(reference)
        try:
            _run_until(service, lambda: service.processed >= 11)
        finally:
            service.close()
        return _chain(reference, game_id)


@pytest.fixture()
def topics(broker: str, unique_topic: Callable[[str], str]) -> dict[str, str]:
    names = _topics(unique_topic)
    bus.ensure_topics(broker, names.values(), partitions=4)
    return names


def test_service_folds_appends_publishes_and_commits(broker: str, topics: dict[str, str], tmp_path: Path) -> None:
    started, observations = _game_inputs("12", "g-12")
    # The game starts before the first move is seen: the arbiter's event is acknowledged first.
    with bus.Producer(broker) as producer:
        producer.send(topics["arbiter"], started)
    with SqliteLedger(tmp_path / "ledger.sqlite") as ledger:
        service = _service(broker, ledger, topics, "referee-a")
        try:
            _run_until(service, lambda: ledger.head("g-12")[0] >= 1)
            with bus.Producer(broker) as producer:
                producer.send_many(topics["observations"], observations)
            _run_until(service, lambda: service.processed >= 1 + len(MOVES))
        finally:
            service.close()
        entries = ledger.entries("g-12")
        assert ledger.verify("g-12").ok
        moves = [e.event for e in entries if e.event.type == "MoveMade"]
        assert [m.data["iccs"] for m in moves] == MOVES
        assert [e.event.type for e in entries if e.kind == "input"] == ["GameStarted"] + ["BoardStable"] * 10
        assert all(e.origin is not None and e.origin.topic in topics.values() for e in entries if e.kind == "input")
        assert not [e for e in entries if e.event.type in ("Ruling", "AttentionNeeded")]
    published = _published(broker, topics["game_events"], len(moves))
    assert [e.event_id for e in published if e.type == "MoveMade"] == [m.event_id for m in moves]


def test_replacement_after_a_crash_gives_the_uninterrupted_ledger(
    broker: str, topics: dict[str, str], tmp_path: Path, store: Store
) -> None:
    """In either store (the replacement on another machine shares a PostgreSQL ledger), the same chain as an
    uninterrupted run's SQLite ledger, hashes included."""
    started, observations = _game_inputs("5", "g-5")
    _produce_on_one_topic(broker, topics["observations"], started, observations)

    # The uninterrupted run, its own group and ledger.
    expected = _uninterrupted_chain(tmp_path / "reference.sqlite", "g-5",
                                    lambda reference: _service(broker, reference, topics, "referee-reference"))
    assert sum(1 for _, kind, _, _ in expected if kind == "input") == 11

    # A referee that appends but dies before committing its offsets: what it did is in the ledger only.
    with store.open() as ledger:
        first = _service(broker, ledger, topics, "referee-group")
        crashed = threading.Event()

        def die_instead_of_committing(offsets=None) -> None:
            crashed.set()
            raise RuntimeError("killed before the commit")

        first.consumer.commit = die_instead_of_committing  # type: ignore[method-assign]
        with pytest.raises(RuntimeError, match="killed"):
            _run_until(first, lambda: False)
        assert crashed.is_set()
        half = ledger.head("g-5")[0]
        assert half > 0
        first.close()  # leaves the group: its partitions go to the replacement

    with store.open() as ledger:
        second = _service(broker, ledger, topics, "referee-group")
        try:
            # Everything is delivered again from the last commit (none); the ledger skips what it has.
            _run_until(second, lambda: second.processed >= 11)
        finally:
            second.close()
        assert second.referee.duplicates >= 1
        got = _chain(ledger, "g-5")
        assert ledger.verify("g-5").ok
    assert got == expected


def test_a_press_that_overtakes_the_camera_waits_for_it(broker: str, topics: dict[str, str], tmp_path: Path) -> None:
    """The clock press (fast, via ingest) reaches the referee before the camera's snapshot of the move it follows:
    it is held until the camera has seen the board at the press's time, so it is no press without a move."""
    started, observations = _game_inputs("9", "g-9")
    presses = [
        make_event("ClockPressed", "9", source="clock-9", source_seq=ply, side="red" if ply % 2 else "black",
                   occurred_at=o.occurred_at + 2_000_000, received_at=o.occurred_at + 2_000_000)
        for ply, o in enumerate(observations[:4], start=1)
    ]
    with bus.Producer(broker) as producer:
        producer.send(topics["arbiter"], started)
        producer.send_many(topics["clock"], presses)  # every press first ...
    with SqliteLedger(tmp_path / "ledger.sqlite") as ledger:
        service = _service(broker, ledger, topics, "referee-order")
        service.order.hold_s = 30.0  # longer than this test: only the camera may release the presses
        try:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and len(service.order) < 5:
                service.run_once()
            # The arbiter's GameStarted and every press wait: the camera has not seen the board at their time.
            assert len(service.order) == 5 and service.processed == 0
            with bus.Producer(broker) as producer:
                producer.send_many(topics["observations"], observations[:4])  # ... the camera's view after them
            _run_until(service, lambda: service.processed >= 1 + 4 + 4)
        finally:
            service.close()
        outputs = [e.event for e in ledger.entries("g-9") if e.kind == "output"]
    assert [o.type for o in outputs] == ["MoveMade"] * 4, [o.to_json_dict() for o in outputs]
    assert [o.data["iccs"] for o in outputs] == MOVES[:4]


def _press_after(ply: int, observation: Event) -> Event:
    return make_event("ClockPressed", observation.board_id, source=f"clock-{observation.board_id}", source_seq=ply,
                      side="red" if ply % 2 else "black", occurred_at=observation.occurred_at + 2_000_000,
                      received_at=observation.occurred_at + 2_000_000)


def test_a_referee_restarted_mid_game_holds_a_press_of_a_configured_camera_board_until_the_camera_saw_it(
    broker: str, topics: dict[str, str], tmp_path: Path
) -> None:
    """The referee that comes back has had no report of the board's camera yet, and vision is slow to read the
    move's frames: the venue's configuration says the board has a camera, so the press waits for its view instead
    of being folded after the short hold as a press without a move (8.1.7). The ledger keeps the order folded,
    and replaying it gives the same outputs."""
    from xqarb.referee.replay_ledger import differences

    started, observations = _game_inputs("9", "g-9")
    presses = [_press_after(ply, o) for ply, o in enumerate(observations[:3], start=1)]

    def referee(ledger: SqliteLedger) -> RefereeService:
        return RefereeService(
            broker, ledger, group_id="referee-restarted", topics=(topics["observations"], topics["clock"],
                                                                  topics["arbiter"]),
            game_events_topic=topics["game_events"], poll_timeout_s=0.2, hold_s=1.0, camera_boards={"9"})

    with bus.Producer(broker) as producer:
        producer.send(topics["arbiter"], started)
        producer.send_many(topics["observations"], observations[:2])
        producer.send(topics["clock"], presses[0])
    with SqliteLedger(tmp_path / "ledger.sqlite") as ledger:
        first = referee(ledger)
        try:
            _run_until(first, lambda: first.processed >= 4)  # the game, two moves, the first press
        finally:
            first.close()
        with bus.Producer(broker) as producer:
            producer.send_many(topics["clock"], presses[1:])  # the third move's frames are not read yet
        second = referee(ledger)
        try:
            _run_until(second, lambda: len(second.order) == 2)  # (once it has joined the group)
            deadline = time.monotonic() + 4  # four times the short hold
            while time.monotonic() < deadline:
                second.run_once()
            assert second.processed == 0 and len(second.order) == 2
            with bus.Producer(broker) as producer:  # vision has read the move, and the frames after the press
                producer.send_many(topics["observations"], [observations[2], make_event(
                    "CameraProgress", "9", source="vision-1", source_seq=1, frames=8,
                    occurred_at=presses[2].occurred_at + 1_000_000, received_at=presses[2].occurred_at + 1_000_000)])
            _run_until(second, lambda: second.processed >= 3)
        finally:
            second.close()
        entries = ledger.entries("g-9")
        assert ledger.verify("g-9").ok
        assert differences(entries).differences == ()
    assert [e.event.type for e in entries if e.kind == "input"] == [
        "GameStarted", "BoardStable", "ClockPressed", "BoardStable", "ClockPressed", "BoardStable", "ClockPressed"]
    outputs = [e.event for e in entries if e.kind == "output"]
    assert [o.type for o in outputs] == ["MoveMade"] * 3, [o.to_json_dict() for o in outputs]


def test_a_referee_serve_beside_up_reads_the_venues_camera_boards_from_the_data_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    from xqarb.ingest.config import ConfigError, generate_config
    from xqarb.referee.service import venue_settings

    monkeypatch.setenv("XQARB_DATA_DIR", str(tmp_path))
    assert venue_settings(None) == (60_000, frozenset())  # no file: the defaults
    raw = generate_config(["1", "2", "3"])
    del raw["boards"]["2"]["devices"]["cam-2"], raw["boards"]["2"]["roles"]["cam-2"]  # board 2: a clock only
    raw["boards"]["3"]["roles"] = {}  # board 3: devices without a role may send frames
    raw["alerts"] = {"flag_warning_s": 30}
    (tmp_path / "venue.json").write_text(json.dumps(raw))
    assert venue_settings(None) == (30_000, frozenset({"1", "3"}))
    (tmp_path / "venue.json").write_text("{")
    with pytest.raises(ConfigError, match=r"venue\.json"):
        venue_settings(None)


def _serve(bootstrap: str, db: Path | str, log: Path) -> subprocess.Popen[bytes]:
    """`xqarb referee serve` as its own process, as a venue runs it."""
    with log.open("ab") as out:
        return subprocess.Popen([*xqarb_command(), "referee", "serve", "--bootstrap-servers", bootstrap,
                                 "--db", str(db), "--group", "referee-killed"], stdout=out, stderr=subprocess.STDOUT)


def _wait_for_inputs(store: Store, game_id: str, count: int, process: subprocess.Popen[bytes], log: Path) -> None:
    """Until the ledger holds `count` inputs of the game (read with a connection of its own)."""
    deadline = time.monotonic() + 90
    with store.open() as reader:
        while True:
            assert process.poll() is None, f"the referee exited with {process.returncode}: {log.read_text()[-2000:]}"
            assert time.monotonic() < deadline, f"the ledger never held {count} inputs: {log.read_text()[-2000:]}"
            if sum(1 for row in reader.stored_rows(game_id) if row.kind == "input") >= count:
                return
            time.sleep(0.02)


def test_a_referee_process_killed_mid_game_and_started_again_ends_with_the_uninterrupted_ledger(
    tmp_path: Path, store: Store
) -> None:
    """`referee serve --db` a SQLite file or a postgresql:// URL: the same chain as an uninterrupted run."""
    from xqarb.broker import EmbeddedBroker

    started, observations = _game_inputs("9", "g-9")
    log = tmp_path / "referee.log"
    with EmbeddedBroker() as own:  # its own broker: `referee serve` reads DESIGN's topic names
        bootstrap = own.bootstrap
        bus.ensure_topics(bootstrap, partitions=bus.DEFAULT_PARTITIONS)
        _produce_on_one_topic(bootstrap, "xq.observations", started, observations[:5])
        first = _serve(bootstrap, store.target, log)
        try:
            # SIGKILL as soon as the first inputs are in the ledger: most likely before the offsets are committed,
            # so the next process is given them again.
            _wait_for_inputs(store, "g-9", 1, first, log)
        finally:
            first.kill()
            first.wait(30)
        with bus.Producer(bootstrap) as producer:  # the game goes on while no referee runs
            producer.send_many("xq.observations", observations[5:])
        second = _serve(bootstrap, store.target, log)
        try:
            _wait_for_inputs(store, "g-9", 11, second, log)
        finally:
            second.send_signal(signal.SIGTERM)
            assert second.wait(60) == 0, log.read_text()[-2000:]

        # The uninterrupted run: an in-process member of another group, its own ledger, the same records.
        expected = _uninterrupted_chain(
            tmp_path / "reference.sqlite", "g-9",
            lambda reference: RefereeService(bootstrap, reference, group_id="referee-reference", poll_timeout_s=0.2))
    assert sum(1 for _, kind, _, _ in expected if kind == "input") == 11
    with store.open() as ledger:
        got = _chain(ledger, "g-9")
        assert ledger.verify("g-9").ok
    assert got == expected  # nothing lost, nothing doubled, every hash the same
