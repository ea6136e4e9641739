"""Observations across an embedded broker that dies before the referee read them: vision sends again those the
broker had acknowledged and the referee group had not committed, in order, before its next observations, each id
once; those the referee had read are not sent again (services/vision/observations_kept.py)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.venue.test_frame_replay import frame, kill
from xqarb import bus

REFEREE = "referee-test"
READ = range(4)  # observed, and read and committed by the referee before the broker died
UNREAD = range(4, 10)  # observed and acknowledged, not read by the referee when the broker died
AFTER = range(10, 13)  # frames sent to the restarted broker


def seen_ids(bootstrap: str, want: int, timeout_s: float = 30.0) -> list[str]:
    """The ids of the test's observations (BoardStable) on the broker, in order, once `want` are there."""
    ids: list[str] = []
    with bus.Reader(bootstrap, [bus.OBSERVATIONS], rolled=True) as reader:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            ids += [r.event.event_id for r in reader.poll(0.5) if r.event is not None and r.event.type == "BoardStable"]
            if len(ids) >= want:
                time.sleep(1.0)  # (any double would come with them)
                ids += [r.event.event_id for r in reader.poll(0.5)
                        if r.event is not None and r.event.type == "BoardStable"]
                break
    return ids


def test_observations_a_killed_broker_lost_unread_reach_the_topic_again_once_in_order(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from xqarb.broker import BrokerError, EmbeddedBroker
    from xqarb.events import make_event
    from xqarb.vision.evidence import DirectoryEvidenceStore
    from xqarb.vision.observations_kept import ObservationReplay
    from xqarb.vision.service import VisionCore, run

    try:
        broker = EmbeddedBroker(log_path=tmp_path / "broker.log").start()
    except BrokerError as exc:
        pytest.skip(f"no embedded broker here: {exc}")
    core = VisionCore(DirectoryEvidenceStore(tmp_path / "evidence"), source="vision-test")
    handled: list[int] = []

    def observe(e: Any, partition: int = 0, at_us: int | None = None, stored: Any = None) -> list[Any]:
        handled.append(int(e.source_seq))  # one still board a frame, its id derived from the frame's
        return [make_event("BoardStable", e.board_id, source="vision-test", source_seq=e.source_seq,
                           occurred_at=e.occurred_at, received_at=e.received_at, event_id=f"obs-{e.source_seq}",
                           squares="." * 90, frame_sha256="0" * 64)]

    core.handle = observe  # type: ignore[method-assign]
    replays: list[ObservationReplay] = []
    connect = ObservationReplay.connect.__func__  # type: ignore[attr-defined]

    def connected(cls: Any, bootstrap: str, group: str = bus.REFEREE_GROUP) -> ObservationReplay:
        replays.append(connect(cls, bootstrap, group))
        return replays[-1]

    monkeypatch.setattr(ObservationReplay, "connect", classmethod(connected))
    done = threading.Event()
    failures: list[BaseException] = []

    def vision() -> None:
        try:
            run(broker.bootstrap, "vision-obs-replay", core, stop=done.is_set, poll_s=0.2, referee_group=REFEREE)
        except BaseException as exc:  # the test fails on it below
            failures.append(exc)

    def camera(seqs: range) -> None:
        with bus.Producer(broker.bootstrap) as producer:
            producer.send_many(bus.FRAMES, [frame(s) for s in seqs])

    def wait_for(what: Any, why: str, timeout_s: float = 60.0) -> None:
        deadline = time.monotonic() + timeout_s
        while not what():
            assert time.monotonic() < deadline, why
            assert not failures, failures
            time.sleep(0.1)

    bus.ensure_topics(broker.bootstrap, partitions=2)
    t = threading.Thread(target=vision, daemon=True)
    t.start()
    try:
        camera(READ)
        # The referee reads the first observations and commits them.
        read: list[str] = []
        with bus.Consumer(broker.bootstrap, REFEREE, [bus.OBSERVATIONS]) as referee:
            deadline = time.monotonic() + 60
            while len(read) < len(READ) and time.monotonic() < deadline:
                read += [r.event.event_id for r in referee.poll(0.5)
                         if r.event is not None and r.event.type == "BoardStable"]
            referee.commit()
        assert read == [f"obs-{s}" for s in READ]
        wait_for(lambda: replays and replays[0].read >= len(READ), "vision did not forget what the referee read")
        camera(UNREAD)
        wait_for(lambda: [e.event_id for e in replays[0].keep.events(time.monotonic())
                          if e.type == "BoardStable"][-1:] == [f"obs-{UNREAD[-1]}"],
                 "vision did not publish the unread observations")
        kill(broker)
        time.sleep(0.5)
        broker = EmbeddedBroker(broker.port, log_path=tmp_path / "broker2.log").start()  # same address, empty
        bus.ensure_topics(broker.bootstrap, partitions=2)
        wait_for(lambda: replays[0].replayed > 0, "vision did not send the lost observations again")
        camera(AFTER)
        wait_for(lambda: handled[-1:] == [AFTER[-1]], "vision did not read the frames after the restart")
        ids = seen_ids(broker.bootstrap, len(UNREAD) + len(AFTER))
        assert ids == [f"obs-{s}" for s in [*UNREAD, *AFTER]]  # each once, the lost ones first, in order
        assert t.is_alive() and not failures
    finally:
        done.set()
        t.join(30)
        broker.stop()
    assert not failures
