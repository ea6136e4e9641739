"""`GET /api/stream` resumed with a Last-Event-ID after a restart: exactly the events not seen where the id still
means the same place, else an explicit `reset` (re-read the state) followed by every event the server holds."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from xqarb import bus
from xqarb.events import Event, make_event
from xqarb.referee.api import ApiError, RefereeApi, StreamHub, create_app, decode_stream_id, frame_loader


def attention(n: int, run: str) -> Event:
    return make_event("AttentionNeeded", "1", source=f"t-{run}", source_seq=n, occurred_at=n, received_at=n,
                      game_id=f"g-{run}", reason=f"{run}-{n}")


def api_client(hub: StreamHub, ledger_path: Path) -> Any:
    from xqarb.referee.ledger import SqliteLedger

    api = RefereeApi(ledger=SqliteLedger(ledger_path), hub=hub, board_ids=["1"], load_frame=frame_loader([]))
    return create_app(api).test_client()


def read_stream(client: Any, last_id: str | None) -> list[tuple[str, str, str]]:
    """(event type, id, data) of what `?once=1` sends after `last_id`."""
    headers = {"Last-Event-ID": last_id} if last_id else {}
    resp = client.get("/api/stream?once=1", headers=headers)
    assert resp.status_code == 200, resp.get_data(as_text=True)
    out = []
    for block in resp.get_data(as_text=True).split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line and not line.startswith(":"))
        if "data" in fields:
            out.append((fields.get("event", "message"), fields.get("id", ""), fields["data"]))
    return out


def reasons(events: list[tuple[str, str, str]]) -> list[str]:
    return [json.loads(data)["reason"] for kind, _, data in events if kind != "reset"]


def test_a_restarted_api_on_the_same_topic_resumes_without_a_reset(tmp_path: Path) -> None:
    topic = [(n % 2, n // 2, attention(n, "a")) for n in range(6)]
    first = StreamHub()
    for p, o, e in topic[:4]:
        first.add(p, o, e)
    seen = read_stream(api_client(first, tmp_path / "ledger.sqlite"), None)
    assert reasons(seen) == ["a-0", "a-1", "a-2", "a-3"]
    # The API process restarts: its new hub reads the same topic from the beginning, two more events included.
    second = StreamHub()
    for p, o, e in topic:
        second.add(p, o, e)
    rest = read_stream(api_client(second, tmp_path / "ledger.sqlite"), seen[-1][1])
    assert [kind for kind, _, _ in rest] == ["AttentionNeeded"] * 2
    assert reasons(rest) == ["a-4", "a-5"]


def test_a_topic_that_started_over_gives_a_reset_then_every_new_event(tmp_path: Path) -> None:
    old = StreamHub()
    for n in range(40):
        old.add(n % 3, n // 3, attention(n, "old"))
    last = read_stream(api_client(old, tmp_path / "ledger.sqlite"), None)[-1][1]
    # The broker kept the topic in memory and restarted; the API too: the offsets count from 0 again.
    new = StreamHub()
    for n in range(37):
        new.add(n % 3, n // 3, attention(n, "new"))
    got = read_stream(api_client(new, tmp_path / "ledger.sqlite"), last)
    assert got[0][0] == "reset"
    assert reasons(got) == [f"new-{n}" for n in range(37)]  # 37 of 37, after the reset


def test_a_running_hub_follows_the_topic_starting_over(tmp_path: Path) -> None:
    hub = StreamHub()
    client = api_client(hub, tmp_path / "ledger.sqlite")
    for n in range(4):
        hub.add(0, n, attention(n, "old"))
    last = read_stream(client, None)[-1][1]
    hub.add(0, 2, attention(2, "old"))  # read twice (the reader reconnected): not a new event
    assert len(hub.items) == 4
    for n in range(3):  # the broker restarted under the running API: offset 0 holds another event now
        hub.add(0, n, attention(n, "new"))
    assert len(hub.items) == 7
    got = read_stream(client, last)
    assert got[0][0] == "reset" and reasons(got)[-3:] == ["new-0", "new-1", "new-2"]
    # An id given after the restart resumes normally.
    new_last = got[-2][1]
    assert reasons(read_stream(client, new_last)) == ["new-2"]


def test_stream_ids_are_checked_positions() -> None:
    assert decode_stream_id("0:15,3:27@3.1f0c2a9b7d4e")[1] is not None
    assert decode_stream_id("0:15,3:27") == ({0: 15, 3: 27}, None)  # ids given before the check: unchecked
    for bad in ("0:15@3.1f0c2a9b7d4e", "0:15@0.1F0C2A9B7D4E", "0:15@0.1f0c", "0:15@", "@0.1f0c2a9b7d4e",
                "0:15@0.1f0c2a9b7d4e@0.1f0c2a9b7d4e"):
        with pytest.raises(ApiError) as exc:
            decode_stream_id(bad)
        assert exc.value.status == 400


def test_resuming_across_a_restart_of_the_broker_and_the_api(tmp_path: Path) -> None:
    """Real Kafka (the embedded broker, in memory): the broker and the API restart against the same data dir; a
    client resuming with its last id is told to reset and gets every new event."""
    from xqarb.broker import EmbeddedBroker
    from xqarb.referee.api import kafka_game_events

    def wait_for(hub: StreamHub, count: int) -> None:
        deadline = time.monotonic() + 20
        while len(hub.items) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(hub.items) == count

    ledger = tmp_path / "ledger.sqlite"
    broker = EmbeddedBroker().start()
    port = broker.port
    hub = StreamHub()
    try:
        bus.ensure_topics(broker.bootstrap, [bus.GAME_EVENTS], partitions=3)
        with bus.Producer(broker.bootstrap) as producer:
            producer.send_many(bus.GAME_EVENTS, [attention(n, "before") for n in range(5)])
        hub.start(kafka_game_events(broker.bootstrap))
        wait_for(hub, 5)
        last = read_stream(api_client(hub, ledger), None)[-1][1]
        hub.stop()
        broker.stop()

        broker = EmbeddedBroker(port).start()
        bus.ensure_topics(broker.bootstrap, [bus.GAME_EVENTS], partitions=3)
        with bus.Producer(broker.bootstrap) as producer:
            producer.send_many(bus.GAME_EVENTS, [attention(n, "after") for n in range(37)])
        hub = StreamHub()
        hub.start(kafka_game_events(broker.bootstrap))
        wait_for(hub, 37)
        got = read_stream(api_client(hub, ledger), last)
        assert got[0][0] == "reset"
        assert sorted(reasons(got)) == sorted(f"after-{n}" for n in range(37))
    finally:
        hub.stop()
        broker.stop()
