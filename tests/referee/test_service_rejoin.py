"""A referee whose partitions the group gave to another member while it did not answer (paused past its session
timeout) finds out when its commit fails: it lets its boards go and goes on, instead of exiting; the game goes on
from the ledger, each input once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.referee.test_service import MOVES, _game_inputs, _run_until, _service, _topics
from xqarb import bus
from xqarb.referee.ledger import SqliteLedger


@pytest.fixture()
def topics(broker: str, unique_topic: Callable[[str], str]) -> dict[str, str]:
    names = _topics(unique_topic)
    bus.ensure_topics(broker, names.values(), partitions=2)
    return names


def test_a_failed_commit_releases_the_boards_and_the_referee_goes_on(broker: str, topics: dict[str, str],
                                                                     tmp_path: Path) -> None:
    started, observations = _game_inputs("5", "g-5")
    with bus.Producer(broker) as producer:
        producer.send_many(topics["observations"], [started, *observations[:4]])
    with SqliteLedger(tmp_path / "ledger.sqlite") as ledger:
        service = _service(broker, ledger, topics, "referee-rejoin")
        try:
            _run_until(service, lambda: service.processed >= 5)
            assert "5" in service.referee._boards
            real_commit, failed = service.consumer.commit, []

            def commit(offsets: object = None) -> None:  # as kafka-python answers a member the group dropped
                failed.append(offsets)
                raise bus.CommitFailed("group 'referee-rejoin': UnknownMemberIdError")

            service.consumer.commit = commit  # type: ignore[method-assign]
            with bus.Producer(broker) as producer:
                producer.send_many(topics["observations"], observations[4:6])
            _run_until(service, lambda: bool(failed))  # (no exception out of the loop)
            assert "5" not in service.referee._boards  # released: rebuilt from the ledger when next needed
            service.consumer.commit = real_commit  # type: ignore[method-assign]
            with bus.Producer(broker) as producer:
                producer.send_many(topics["observations"], observations[6:])
            _run_until(service, lambda: sum(e.event.type == "MoveMade" for e in ledger.entries("g-5")) >= len(MOVES))
        finally:
            service.close()
        entries = ledger.entries("g-5")
        assert ledger.verify("g-5").ok
        assert [e.event.data["iccs"] for e in entries if e.event.type == "MoveMade"] == MOVES
        assert not [e for e in entries if e.event.type in ("Ruling", "AttentionNeeded")]
