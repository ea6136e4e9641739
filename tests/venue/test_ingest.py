"""Ingest over HTTP against the real (embedded) broker: what is accepted lands on its topic, every bad input is
refused with a JSON error saying what was wrong (and kept in xq.dlq when it was read), and the service goes on."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from tests.venue.conftest import jpeg, now_us, read_topic
from xqarb import bus
from xqarb.ingest.app import BrokerUnavailable, create_app
from xqarb.ingest.validate import Refusal, check_skew, jpeg_size


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def frame_headers(token: str, seq: int, at: int | None = None) -> dict[str, str]:
    return {**auth(token), "X-Capture-Time": str(at or now_us()), "X-Sequence": str(seq), "Content-Type": "image/jpeg"}


def test_jpeg_size_reads_the_frame_header() -> None:
    assert jpeg_size(jpeg(320, 200)) == (320, 200)
    with pytest.raises(Refusal) as exc:
        jpeg_size(b"\x89PNG\r\n\x1a\n" + b"0" * 100)
    assert exc.value.error == "not_jpeg" and "89 50 4e 47" in exc.value.detail
    with pytest.raises(Refusal, match="truncated"):
        jpeg_size(jpeg()[:200])


def test_skew_names_the_direction() -> None:
    with pytest.raises(Refusal, match="ahead of"):
        check_skew(now_us() + 120_000_000, now_us(), 60)
    check_skew(now_us() + 10_000_000, now_us(), 60)


def test_frame_accepted_lands_on_xq_frames(ingest_client: Any, venue: dict[str, Any], topics: str) -> None:
    b7 = venue["b7"]
    image = jpeg(80, 60, seed=1)
    at = now_us()
    r = ingest_client.post(f"/ingest/v1/boards/{b7}/frames", data=image, headers=frame_headers(f"tok-cam-{b7}", 1, at))
    assert r.status_code == 202, r.get_json()
    body = r.get_json()
    assert body["topic"] == "xq.frames" and body["offset"] >= 0
    [(rec, event)] = read_topic(topics, "xq.frames", lambda it: it[1].event_id == body["event_id"])
    assert rec.partition == body["partition"] and rec.offset == body["offset"]
    assert event.type == "FrameCaptured" and event.board_id == b7 and event.source == f"cam-{b7}"
    assert event.data["image"] == image and (event.data["width"], event.data["height"]) == (80, 60)
    assert event.occurred_at == at and event.received_at >= at and event.source_seq == 1
    assert rec.key == b7.encode()


class _RollingProducer:
    """bus.Producer's answer where the broker rolls frames: the frame was written to the period's topic."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    def send(self, topic: str, event: Any) -> bus.Delivery:
        self.sent.append(topic)
        return bus.Delivery(bus.FRAMES_ROLLED if topic == bus.FRAMES else topic, 2, 17)

    def close(self) -> None:
        pass


def test_a_frame_written_to_the_rolled_topic_is_answered_with_that_topic(venue: dict[str, Any]) -> None:
    from xqarb.ingest.publish import BusPublisher

    b7 = venue["b7"]
    producer = _RollingProducer()
    client = create_app(venue["config"], BusPublisher(producer)).test_client()  # type: ignore[arg-type]
    r = client.post(f"/ingest/v1/boards/{b7}/frames", data=jpeg(seed=3), headers=frame_headers(f"tok-cam-{b7}", 1))
    assert r.status_code == 202, r.get_json()
    body = r.get_json()
    assert producer.sent == ["xq.frames"]
    assert (body["topic"], body["partition"], body["offset"]) == ("xq.frames.roll", 2, 17)
    press = {"type": "ClockPressed", "side": "red", "red_ms": 1000, "black_ms": 1000, "source_seq": 1,
             "occurred_at": now_us()}
    r = client.post(f"/ingest/v1/boards/{b7}/clock", json=press, headers=auth(f"tok-clock-{b7}"))
    assert r.status_code == 202 and r.get_json()["topic"] == "xq.clock"


def test_clock_and_catalogue_events(ingest_client: Any, venue: dict[str, Any], topics: str) -> None:
    b7, tag = venue["b7"], venue["tag"]
    press = {
        "type": "ClockPressed",
        "side": "red",
        "red_ms": 3_590_000,
        "black_ms": 3_600_000,
        "source_seq": 5,
        "occurred_at": now_us(),
    }
    r = ingest_client.post(f"/ingest/v1/boards/{b7}/clock", json=press, headers=auth(f"tok-clock-{b7}"))
    assert r.status_code == 202, r.get_json()
    clock_id = r.get_json()["event_id"]
    start = {
        "type": "GameStarted",
        "game_id": f"g-{tag}",
        "red_player": "甲",
        "black_player": "乙",
        "time_control": {"scheme": "increment", "base_ms": 3_600_000, "increment_ms": 30_000},
    }
    r = ingest_client.post(f"/ingest/v1/boards/{b7}/events", json=start, headers=auth(f"tok-chief-{tag}"))
    assert r.status_code == 202, r.get_json()
    start_id = r.get_json()["event_id"]
    [(_, clock)] = read_topic(topics, "xq.clock", lambda it: it[1].event_id == clock_id)
    assert clock.type == "ClockPressed" and clock.data["red_ms"] == 3_590_000 and clock.source == f"clock-{b7}"
    [(_, started)] = read_topic(topics, "xq.arbiter", lambda it: it[1].event_id == start_id)
    assert started.data["time_control"]["increment_ms"] == 30_000 and started.source == "arbiter:chief"


BAD_INPUTS = [
    # (name, path suffix, token key, body kind, body, headers extra, status, error, in dlq)
    ("not a JPEG", "frames", "cam7", "raw", b"\x89PNG\r\n\x1a\n" + b"x" * 300, {}, 415, "not_jpeg", True),
    ("unknown board", "frames@unknown", "cam7", "raw", None, {}, 404, "unknown_board", False),
    ("no token", "frames", None, "raw", None, {}, 401, "unauthorized", False),
    ("wrong token", "frames", "nonsense", "raw", None, {}, 401, "unauthorized", False),
    ("board 7's token for board 8", "frames@b8", "cam7", "raw", None, {}, 403, "wrong_board", False),
    ("frame too large", "frames", "cam7", "raw", b"\xff\xd8\xff" + b"0" * 300_000, {}, 413, "too_large", False),
    ("capture time missing", "frames", "cam7", "raw", None, {"X-Capture-Time": ""}, 400, "field_missing", True),
    ("capture time far ahead", "frames", "cam7", "raw", None, {"X-Capture-Time": "far"}, 422, "time_skew", True),
    (
        "unknown event type",
        "clock",
        "clock7",
        "json",
        {"type": "ClockExploded", "source_seq": 9},
        {},
        422,
        "unknown_event_type",
        True,
    ),
    (
        "catalogue type on the clock endpoint",
        "clock",
        "clock7",
        "json",
        {"type": "Resigned", "side": "red"},
        {},
        422,
        "unknown_event_type",
        True,
    ),
    ("field missing", "clock", "clock7", "json", {"type": "ClockPressed", "red_ms": 1}, {}, 400, "field_missing", True),
    (
        "field of the wrong type",
        "clock",
        "clock7",
        "json",
        {"type": "ClockPressed", "side": "green"},
        {},
        400,
        "invalid_field",
        True,
    ),
    ("not JSON", "clock", "clock7", "text", "{side: red", {}, 400, "bad_json", True),
    (
        "arbiter event from a device",
        "events",
        "clock7",
        "json",
        {"type": "ArbiterDecision", "result": "1-0", "article": "8.1"},
        {},
        403,
        "arbiter_only",
        True,
    ),
    (
        "board in body differs",
        "events",
        "clock7",
        "json",
        {"type": "Resigned", "side": "red", "board_id": "x"},
        {},
        400,
        "board_mismatch",
        True,
    ),
    (
        "floor arbiter on a board not theirs",
        "events@b7",
        "floor",
        "json",
        {"type": "FoulReported", "side": "red", "article": "5.3"},
        {},
        403,
        "wrong_board",
        False,
    ),
]


@pytest.mark.parametrize("case", BAD_INPUTS, ids=[c[0] for c in BAD_INPUTS])
def test_bad_input_is_refused_with_a_reason(
    case: tuple, ingest_client: Any, venue: dict[str, Any], topics: str
) -> None:
    name, suffix, token_key, kind, body, extra, status, error, in_dlq = case
    b7, b8, tag = venue["b7"], venue["b8"], venue["tag"]
    tokens = {
        "cam7": f"tok-cam-{b7}",
        "clock7": f"tok-clock-{b7}",
        "nonsense": "not-a-token-at-all",
        "floor": f"tok-floor-{tag}",
        None: None,
    }
    endpoint, _, board = suffix.partition("@")
    board = {"": b7, "b8": b8, "b7": b7, "unknown": "no-such-board"}[board]
    token = tokens[token_key]
    headers: dict[str, str] = auth(token) if token else {}
    marker = f"{name}-{tag}"
    if endpoint == "frames":
        headers.update(frame_headers(token or "x", 3))
        if not token:
            del headers["Authorization"]
        for k, v in extra.items():
            headers[k] = str(now_us() + 3_600_000_000) if v == "far" else v
        data = body if body is not None else jpeg(seed=3)
    elif kind == "json":
        payload = {**body, "note": marker} if body.get("type") in ("FoulReported", "ArbiterDecision") else dict(body)
        payload.setdefault("occurred_at", now_us())
        payload.setdefault("source_seq", 11)
        data = json.dumps(payload).encode()
        headers["Content-Type"] = "application/json"
    else:
        data = body.encode()
    r = ingest_client.post(f"/ingest/v1/boards/{board}/{endpoint}", data=data, headers=headers)
    assert r.status_code == status, (name, r.status_code, r.get_data(as_text=True))
    answer = r.get_json()
    assert answer["error"] == error and isinstance(answer["detail"], str) and len(answer["detail"]) > 10
    if in_dlq:
        found = read_topic(
            topics,
            "xq.dlq",
            lambda it: it[0].value == data and it[0].key == board.encode(),
            decode=False,
            timeout_s=10,
        )
        assert found, f"{name}: the refused message is not in xq.dlq"
        letter = bus.DeadLetter.from_record(
            bus.Record(
                "xq.dlq",
                0,
                0,
                found[0][0].key.decode(),
                found[0][0].value,
                {k: v for k, v in found[0][0].headers},
                0,
                None,
            )
        )
        assert error in letter.reason
    # The service keeps serving after every refusal.
    ok = ingest_client.post(
        f"/ingest/v1/boards/{b7}/frames", data=jpeg(seed=4), headers=frame_headers(f"tok-cam-{b7}", 100)
    )
    assert ok.status_code == 202, ok.get_json()


def test_sequence_going_backwards_is_refused_and_a_retry_is_not(ingest_client: Any, venue: dict[str, Any]) -> None:
    b7 = venue["b7"]
    post = lambda seq: ingest_client.post(  # noqa: E731
        f"/ingest/v1/boards/{b7}/frames", data=jpeg(seed=seq), headers=frame_headers(f"tok-cam-{b7}", seq)
    )
    assert post(10).status_code == 202
    first = post(11)
    retry = post(11)  # the same sequence number again: a retry, the same event id
    assert retry.status_code == 202 and retry.get_json()["event_id"] == first.get_json()["event_id"]
    back = post(9)
    assert back.status_code == 409 and back.get_json()["error"] == "sequence_backwards"
    assert "9" in back.get_json()["detail"] and "11" in back.get_json()["detail"]
    assert post(12).status_code == 202


class _SlowPublisher:
    """A publisher whose broker takes `delay` seconds to acknowledge (the real one, made slow on purpose)."""

    def __init__(self, inner: Any, release: threading.Event) -> None:
        self.inner = inner
        self.release = release
        self.waiting = threading.Semaphore(0)

    def publish(self, topic: str, event: Any, timeout: float) -> tuple[int, int]:
        self.waiting.release()
        if not self.release.wait(timeout):
            raise BrokerUnavailable("no acknowledgement in time")
        return self.inner.publish(topic, event, timeout)

    def dead_letter(self, *args: Any, **kwargs: Any) -> None:
        self.inner.dead_letter(*args, **kwargs)


def test_backpressure_answers_503_with_retry_after(topics: str, venue: dict[str, Any]) -> None:
    from xqarb.ingest.publish import BusPublisher

    config = venue["config"]  # max_in_flight = 8
    b7 = venue["b7"]
    release = threading.Event()
    inner = BusPublisher.connect(topics)
    slow = _SlowPublisher(inner, release)
    app = create_app(config, slow)
    statuses: list[int] = []

    def send(seq: int) -> None:
        r = app.test_client().post(
            f"/ingest/v1/boards/{b7}/frames", data=jpeg(seed=seq), headers=frame_headers(f"tok-cam-{b7}", 1)
        )
        statuses.append(r.status_code)

    try:
        threads = [threading.Thread(target=send, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        # All 8 slots are taken by sends waiting for the broker: the next request is told to come back.
        for _ in range(8):
            assert slow.waiting.acquire(timeout=10), "the 8 sends did not reach the broker"
        r = app.test_client().post(
            f"/ingest/v1/boards/{b7}/frames", data=jpeg(seed=99), headers=frame_headers(f"tok-cam-{b7}", 200)
        )
        assert r.status_code == 503 and r.headers["Retry-After"] == "1"
        assert r.get_json()["error"] == "backpressure"
        release.set()
        for t in threads:
            t.join(10)
        assert statuses.count(202) == 8
    finally:
        release.set()
        inner.close()
