"""Every edge of ingest and the API that was found answering 500, or accepting what it should not, as a test named by
the behaviour it checks: each bad input answered 4xx with its reason, nothing published, no ledger changed."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from tests.venue.conftest import jpeg
from tests.venue.edges import B7, B8, TOKENS, Venue, auth, make_venue, now_us, venue_raw
from xqarb.events import make_event
from xqarb.ingest.bounds import MAX_JSON_DEPTH, parse_json
from xqarb.ingest.config import ConfigError, generate_config, parse_config
from xqarb.ingest.validate import Refusal, SequenceTracker
from xqarb.referee.ledger import Origin, SqliteLedger
from xqarb.referee.rules import START_FEN, Move, Position
from xqarb.referee.service import Referee


@pytest.fixture
def v(tmp_path: Path) -> Venue:
    return make_venue(tmp_path)


def refused(r: Any, status: int, error: str) -> None:
    assert r.status_code == status, (r.status_code, r.get_data(as_text=True)[:300])
    body = r.get_json()
    assert body["error"] == error and isinstance(body["detail"], str) and len(body["detail"]) > 10, body


def press(seq: int, **extra: Any) -> dict[str, Any]:
    return {"type": "ClockPressed", "side": "red", "red_ms": 3_590_000, "black_ms": 3_600_000, "source_seq": seq,
            "occurred_at": now_us(), **extra}


def frame_headers(key: str, seq: int, **extra: str) -> dict[str, str]:
    return {**auth(key), "X-Capture-Time": str(now_us()), "X-Sequence": str(seq), "Content-Type": "image/jpeg",
            **extra}


# --- bounds of a JSON body ---------------------------------------------------------------------------------------


def test_deeply_nested_json_is_a_400_on_every_json_endpoint(v: Venue) -> None:
    deep = b"[" * 30_000 + b"]" * 30_000  # within the size limit, far beyond the parser's stack
    heads = [("/ingest/v1/boards/7/clock", "clock7"), ("/ingest/v1/boards/7/events", "chief")]
    for path, key in heads:
        refused(v.ingest.post(path, data=deep, headers=auth(key)), 400, "too_deep")
    refused(v.api.post(f"/api/games/{v.game}/actions", data=deep, headers=auth("chief")), 400, "too_deep")
    # Nested inside a string it is no nesting at all; nine levels of objects are.
    assert parse_json(json.dumps({"note": "[" * 1500}).encode()) == {"note": "[" * 1500}
    nested: Any = 1
    for _ in range(MAX_JSON_DEPTH + 1):
        nested = {"a": nested}
    with pytest.raises(Refusal, match="deeper"):
        parse_json(json.dumps(nested).encode())
    assert v.publisher.sent == []


@pytest.mark.parametrize(("body", "error"), [
    (b'{"type": "ClockPressed", "source_seq": ' + b"9" * 5000 + b"}", "number_too_large"),
    (b'{"type": "ClockPressed", "red_ms": 1e999}', "number_too_large"),
    (b'{"type": "ClockPressed", "red_ms": NaN}', "bad_json"),
    (b'{"type": "ClockPressed", "x": [' + b"1," * 400 + b"1]}", "too_many_values"),
    (b'{"type": "ClockPressed", "note": "' + b"x" * 3000 + b'"}', "text_too_long"),
    (b"\xff\xfe{}", "bad_json"),
])
def test_numbers_values_and_text_are_bounded(v: Venue, body: bytes, error: str) -> None:
    refused(v.ingest.post("/ingest/v1/boards/7/clock", data=body, headers=auth("clock7")), 400, error)
    assert v.publisher.sent == []


def test_absurd_values_never_reach_the_ledger(v: Venue) -> None:
    post = lambda body: v.ingest.post("/ingest/v1/boards/7/clock", json=body, headers=auth("clock7"))  # noqa: E731
    refused(post(press(1, red_ms=-1000)), 422, "out_of_range")
    refused(post(press(2, black_ms=2**62)), 422, "out_of_range")
    refused(post(press(3, event_id="e" * 60_000)), 400, "text_too_long")
    refused(post(press(4, event_id="e" * 200)), 400, "invalid_field")
    refused(post(press(5, event_id="has a space")), 400, "invalid_field")
    refused(post(press(5, event_id="a-newline\n")), 400, "invalid_field")
    refused(post(press(2**62)), 400, "invalid_field")  # a counter beyond 2^53
    refused(post(press(-1)), 400, "invalid_field")
    assert v.publisher.sent == []
    assert post(press(6, red_ms=0)).status_code == 202  # a flagged side shows 0


def test_a_game_with_an_impossible_time_control_is_not_started(v: Venue) -> None:
    start = {"type": "GameStarted", "game_id": "g-neg", "red_player": "A", "black_player": "B",
             "time_control": {"scheme": "increment", "base_ms": -5, "increment_ms": 0}}
    refused(v.ingest.post("/ingest/v1/boards/7/events", json=start, headers=auth("chief")), 422, "out_of_range")
    start["time_control"] = {"scheme": "moves_in_time", "periods": [{"moves": 0, "ms": 1000}]}
    refused(v.ingest.post("/ingest/v1/boards/7/events", json=start, headers=auth("chief")), 422, "out_of_range")
    start["time_control"] = {"scheme": "increment", "base_ms": 600_000, "increment_ms": 5_000}
    for bad in ({"ruleset": "cxa-1999"}, {"start_fen": "rnbakabnr/9/9 w"}):
        refused(v.ingest.post("/ingest/v1/boards/7/events", json={**start, **bad}, headers=auth("chief")), 422,
                "invalid_game_start")
    start["game_id"] = " "
    refused(v.ingest.post("/ingest/v1/boards/7/events", json=start, headers=auth("chief")), 400, "invalid_field")
    assert v.publisher.sent == []


# --- the API's own edges -----------------------------------------------------------------------------------------


def test_huge_query_numbers_and_stream_positions_are_400(v: Venue) -> None:
    refused(v.api.get(f"/api/games/{v.game}/events?after=100000000000000000000"), 400, "bad_parameter")
    refused(v.api.get(f"/api/games/{v.game}/events?limit=" + "9" * 5000), 400, "bad_parameter")
    for bad in ("٣", "--5", "-", "5\n", "1e3"):  # an Arabic-Indic digit, signs and forms int() would take
        refused(v.api.get(f"/api/games/{v.game}/state", query_string={"seq": bad}), 400, "bad_parameter")
    for last in ("0:" + "9" * 5000, "1" * 5000 + ":1", "0:1," * 2000 + "0:1", "٣:1"):
        refused(v.api.get("/api/stream?once=1", headers={"Last-Event-ID": last}), 400, "bad_last_event_id")
    refused(v.api.get("/api/stream", query_string={"once": "1", "last_event_id": "0:1\n"}), 400,
            "bad_last_event_id")
    assert v.api.get(f"/api/games/{v.game}/events?after=9223372036854775807").status_code == 200


def test_an_action_cannot_start_a_game(v: Venue) -> None:
    start = {"type": "GameStarted", "red_player": "A", "black_player": "B",
             "time_control": {"scheme": "sudden_death", "base_ms": 600_000}}
    refused(v.api.post(f"/api/games/{v.game}/actions", json=start, headers=auth("chief")), 422,
            "unknown_event_type")
    assert v.publisher.sent == []
    ok = v.api.post(f"/api/games/{v.game}/actions", json={"type": "ClockPaused", "by": "arbiter"},
                    headers=auth("chief"))
    assert ok.status_code == 202, ok.get_json()


def test_health_and_readiness(v: Venue) -> None:
    assert v.api.get("/healthz").get_json() == {"status": "ok"}
    ready = v.api.get("/readyz")
    assert ready.status_code == 200 and ready.get_json()["checks"]["ledger"] == "ok"
    assert v.ingest.get("/healthz").status_code == 200 and v.ingest.get("/readyz").status_code == 200
    v.hub._probe = lambda: False  # a reader that has no partition yet
    not_ready = v.api.get("/readyz")
    refused(not_ready, 503, "not_ready")
    assert "no partition" in not_ready.get_json()["detail"]


def test_ingest_readiness_says_when_the_broker_is_unreachable() -> None:
    from xqarb.ingest.app import create_app
    from xqarb.ingest.publish import BusPublisher, broker_reachable

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once closed
    assert not broker_reachable(f"127.0.0.1:{port}", timeout_s=0.2)

    class Down(BusPublisher):
        def __init__(self) -> None:
            self.bootstrap = f"127.0.0.1:{port}"

    client = create_app(parse_config(venue_raw()), Down()).test_client()
    refused(client.get("/readyz"), 503, "not_ready")


# --- roles ---------------------------------------------------------------------------------------------------------


def test_a_token_sends_only_what_its_role_sends(v: Venue) -> None:
    resign = {"type": "Resigned", "side": "red", "source_seq": 50, "occurred_at": now_us()}
    cases = [
        (v.ingest.post("/ingest/v1/boards/7/clock", json=press(1), headers=auth("cam7")), 403, "wrong_role"),
        (v.ingest.post("/ingest/v1/boards/7/events", json=resign, headers=auth("cam7")), 403, "wrong_role"),
        (v.ingest.post("/ingest/v1/boards/7/frames", data=jpeg(), headers=frame_headers("clock7", 1)), 403,
         "wrong_role"),
        (v.ingest.post("/ingest/v1/boards/7/frames", data=jpeg(), headers=frame_headers("chief", 1)), 403,
         "wrong_role"),
        (v.ingest.post("/ingest/v1/boards/7/clock", json=press(1), headers=auth("chief")), 403, "wrong_role"),
        (v.ingest.post("/ingest/v1/boards/7/clock", json=press(1), headers=auth("sheet7")), 403, "wrong_role"),
    ]
    for r, status, error in cases:
        refused(r, status, error)
    assert v.publisher.sent == []
    accepted = [
        v.ingest.post("/ingest/v1/boards/7/frames", data=jpeg(), headers=frame_headers("cam7", 1)),
        v.ingest.post("/ingest/v1/boards/7/clock", json=press(1), headers=auth("clock7")),
        v.ingest.post("/ingest/v1/boards/7/events", json=resign, headers=auth("clock7")),
        v.ingest.post("/ingest/v1/boards/7/events", json={**resign, "type": "ScoresheetEntry", "ply": 1,
                                                           "text": "炮二平五", "side": "red"},
                      headers=auth("sheet7")),
        # a token configured without a role keeps today's meaning: any device's events
        v.ingest.post("/ingest/v1/boards/7/frames", data=jpeg(), headers=frame_headers("legacy7", 1)),
        v.ingest.post("/ingest/v1/boards/7/clock", json=press(1), headers=auth("legacy7")),
    ]
    assert [r.status_code for r in accepted] == [202] * 6, [r.get_json() for r in accepted]


def test_configuration_roles() -> None:
    config = parse_config(venue_raw())
    assert config.principal(TOKENS["cam7"]).role == "camera"  # type: ignore[union-attr]
    assert config.principal(TOKENS["legacy7"]).role == "device"  # type: ignore[union-attr]
    assert config.device_tokens()[B7][0] == "cam-7"
    generated = generate_config(["1"])
    assert all(isinstance(t, str) for t in generated["boards"]["1"]["devices"].values())  # read as before
    demo = parse_config(generated)
    assert [who.role for who in demo.tokens.values()] == ["camera", "clock", "arbiter"]
    for board, message in [({"devices": {"d": {"token": "t" * 10, "role": "arbiter"}}}, "role must be"),
                           ({"devices": {"d": {"token": "t" * 10, "role": "camera", "x": 1}}}, "unknown key"),
                           ({"devices": {"d": "t" * 10}, "roles": {"d": "judge"}}, "role must be"),
                           ({"devices": {"d": "t" * 10}, "roles": {"e": "camera"}}, "device ids")]:
        with pytest.raises(ConfigError, match=message):
            parse_config({"boards": {"1": board}})


# --- sequences and games ----------------------------------------------------------------------------------------


def test_one_huge_sequence_number_locks_no_one_else_out(v: Venue) -> None:
    big = 2**52
    r = v.ingest.post("/ingest/v1/boards/7/events",
                      json={"type": "FoulReported", "side": "red", "article": "5.3", "source_seq": big},
                      headers=auth("chief"))
    assert r.status_code == 202, r.get_json()
    # The chief's hand entries without a number, on this board and the next, and every device, go on.
    foul = {"type": "FoulReported", "side": "black", "article": "5.3"}
    assert v.ingest.post("/ingest/v1/boards/7/events", json=foul, headers=auth("chief")).status_code == 202
    assert v.ingest.post("/ingest/v1/boards/8/events", json={**foul, "source_seq": 3},
                         headers=auth("chief")).status_code == 202
    assert v.ingest.post("/ingest/v1/boards/7/clock", json=press(1), headers=auth("clock7")).status_code == 202
    assert v.api.post(f"/api/games/{v.game}/actions", json=foul, headers=auth("chief")).status_code == 202


def test_a_device_that_restarts_its_counter_sends_a_new_epoch(v: Venue) -> None:
    post = lambda body: v.ingest.post("/ingest/v1/boards/7/clock", json=body, headers=auth("clock7"))  # noqa: E731
    first = post(press(40))
    assert first.status_code == 202
    back = post(press(1))
    refused(back, 409, "sequence_backwards")
    assert "epoch" in back.get_json()["detail"]
    again = post(press(1, source_epoch=1))  # rebooted: its counter starts again, in a new epoch
    assert again.status_code == 202 and again.get_json()["event_id"] != first.get_json()["event_id"]
    refused(post(press(99, source_epoch=0)), 409, "epoch_backwards")
    # Frames the same way, by header.
    frame = lambda seq, epoch: v.ingest.post(  # noqa: E731
        "/ingest/v1/boards/7/frames", data=jpeg(), headers=frame_headers("cam7", seq, **{"X-Sequence-Epoch": epoch}))
    assert frame(500, "0").status_code == 202
    refused(frame(1, "0"), 409, "sequence_backwards")
    assert frame(1, "7").status_code == 202
    refused(frame(1, "9" * 30), 400, "invalid_field")


def test_the_same_number_for_another_event_is_refused() -> None:
    tracker = SequenceTracker()
    tracker.reserve("7", "clock-7", 5, fingerprint="a@1")
    tracker.reserve("7", "clock-7", 5, fingerprint="a@1")  # a retry
    with pytest.raises(Refusal, match="another event"):
        tracker.reserve("7", "clock-7", 5, fingerprint="b@2")
    tracker.reserve("8", "clock-7", 1)  # another board: its own sequence
    assert tracker.last("7", "clock-7") == (0, 5)


def test_a_frame_naming_another_boards_game_is_refused(v: Venue) -> None:
    start = {"type": "GameStarted", "game_id": "g-8", "red_player": "A", "black_player": "B",
             "time_control": {"scheme": "sudden_death", "base_ms": 600_000}}
    assert v.ingest.post("/ingest/v1/boards/8/events", json=start, headers=auth("chief")).status_code == 202
    sent = len(v.publisher.sent)
    named = {"X-Game-Id": "g-8"}
    r = v.ingest.post("/ingest/v1/boards/7/frames", data=jpeg(), headers=frame_headers("cam7", 1, **named))
    refused(r, 409, "game_mismatch")
    refused(v.ingest.post("/ingest/v1/boards/7/clock", json=press(1, game_id="g-8"), headers=auth("clock7")), 409,
            "game_mismatch")
    refused(v.ingest.post("/ingest/v1/boards/7/events", json=start, headers=auth("chief")), 409, "game_mismatch")
    # Known from the ledger too (the API process): board 7's game named on board 8.
    with pytest.raises(Refusal, match="played on board"):
        v.api_ingest.games.check(v.game, B8)
    assert len(v.publisher.sent) == sent
    ok = v.ingest.post("/ingest/v1/boards/8/frames", data=jpeg(), headers=frame_headers("cam8", 1, **named))
    assert ok.status_code == 202


# --- over a real HTTP server: what the server answers before the app ----------------------------------------------


def _raw(port: int, request: bytes) -> tuple[int, dict[str, str], bytes]:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(request)
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), None)
            if length is not None and len(body) >= length:
                break
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
    return int(lines[0].split()[1]), {k.lower(): val for k, val in headers.items()}, body


def test_server_errors_are_json_and_a_bad_chunked_body_is_a_400(tmp_path: Path) -> None:
    from tests.venue.edges import MemoryPublisher
    from xqarb.ingest.app import create_app
    from xqarb.ingest.server import ServerThread

    publisher = MemoryPublisher()
    server = ServerThread(create_app(parse_config(venue_raw()), publisher), "127.0.0.1", 0).start()
    try:
        long_uri = b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"
        many = b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-H%d: 1\r\n" % i for i in range(150)) + b"\r\n"
        huge = b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"X-Big: " + b"b" * 200_000 + b"\r\n\r\n"
        no_host = b"GET /healthz HTTP/1.1\r\n\r\n"  # RFC 9112 3.2: a 1.1 request without Host is a 400
        for request, status in ((long_uri, 414), (many, 431), (huge, 431), (no_host, 400)):
            code, headers, body = _raw(server.port, request)
            assert code == status and headers["content-type"] == "application/json"
            answer = json.loads(body)
            assert answer["error"] and answer["detail"], answer
        chunked = (
            b"POST /ingest/v1/boards/7/frames HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKENS["cam7"].encode()
            + b"\r\nX-Capture-Time: %d\r\nX-Sequence: 1\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\nabc\r\n0\r\n\r\n"
            % now_us()
        )
        code, headers, body = _raw(server.port, chunked)
        assert code == 400 and json.loads(body)["error"] == "bad_body", body
        assert publisher.sent == []
    finally:
        server.stop()


# --- the referee: a replayed input publishes nothing --------------------------------------------------------------

T0 = 1_764_460_800_000_000


def _inputs(board: str) -> list[Any]:
    started = make_event(
        "GameStarted", board, source="arbiter:chief", source_seq=1, occurred_at=T0, received_at=T0, game_id="g-r",
        red_player="A", black_player="B", recording_required=False,
        time_control={"scheme": "increment", "base_ms": 3_600_000, "increment_ms": 30_000})
    position = Position.from_fen(START_FEN)
    out = [started]
    for ply, move in enumerate(["h2e2", "b9c7", "h0g2"], start=1):
        position = position.play(Move.parse(move))
        out.append(make_event("BoardStable", board, source="vision", source_seq=ply, occurred_at=T0 + ply * 20_000_000,
                              received_at=T0 + ply * 20_000_000, squares=position.squares(), frame_sha256="0" * 64))
    return out


def test_a_replayed_input_never_republishes_and_a_reused_event_id_is_refused(tmp_path: Path) -> None:
    inputs = _inputs("5")
    with SqliteLedger(tmp_path / "l.sqlite") as ledger:
        referee = Referee(ledger)
        outputs = referee.handle_batch([(e, Origin("xq.observations", 0, i)) for i, e in enumerate(inputs)])
        assert [o.type for o in outputs].count("MoveMade") == 3
        head = ledger.head("g-r")
        # The second move's observation posted again (its id and time copied), as another record: nothing.
        replay = inputs[2]
        assert referee.handle_batch([(replay, Origin("xq.clock", 3, 77))]) == ()
        assert referee.replays == 1 and ledger.head("g-r") == head
        # Its very record delivered again (a crash before the commit): its outputs are published again.
        again = referee.handle_batch([(replay, Origin("xq.observations", 0, 2))])
        assert [o.type for o in again] == ["MoveMade"] and again[0].data["ply"] == 2
        # The same event id with another time: refused, whatever path it came by; a fresh referee that rebuilt the
        # board from the ledger refuses it too.
        forged = make_event("ClockPressed", "5", source="clock-5", source_seq=9, occurred_at=T0 + 99_000_000,
                            received_at=T0 + 99_000_000, side="red", event_id=replay.event_id)
        assert referee.handle_batch([(forged, Origin("xq.clock", 0, 5))]) == ()
        fresh = Referee(ledger)
        assert fresh.handle_batch([(forged, Origin("xq.clock", 0, 6))]) == ()
        assert referee.reused_ids == 1 and fresh.reused_ids == 1 and ledger.head("g-r") == head
        # A new input goes on as before.
        press_ = make_event("ClockPressed", "5", source="clock-5", source_seq=10, occurred_at=T0 + 99_000_000,
                            received_at=T0 + 99_000_000, side="red")
        fresh.handle_batch([(press_, Origin("xq.clock", 0, 7))])
        assert ledger.head("g-r")[0] > head[0]


def test_a_device_counting_from_one_again_in_a_later_game_is_followed(tmp_path: Path) -> None:
    """A venue restarted with devices that count from 1 again and send no epoch: their ids repeat those of the
    board's earlier game, with other times. The ledger keeps both; the later game is followed."""
    first = _inputs("6")
    with SqliteLedger(tmp_path / "l.sqlite") as ledger:
        Referee(ledger).handle_batch([(e, Origin("xq.observations", 0, i)) for i, e in enumerate(first)])
        later = 3_600_000_000
        started = make_event(
            "GameStarted", "6", source="arbiter:chief", source_seq=2, occurred_at=T0 + later,
            received_at=T0 + later, game_id="g-r2", red_player="C", black_player="D", recording_required=False,
            time_control={"scheme": "increment", "base_ms": 3_600_000, "increment_ms": 30_000})
        again = [make_event(e.type, "6", source=e.source, source_seq=e.source_seq, occurred_at=e.occurred_at + later,
                            received_at=e.received_at + later, event_id=e.event_id, **e.data) for e in first[1:]]
        restarted = Referee(ledger)  # a new process: the board is rebuilt from the ledger (game g-r)
        outputs = restarted.handle_batch([(e, Origin("xq.observations", 1, i)) for i, e in
                                          enumerate([started, *again])])
        assert [o.data["iccs"] for o in outputs if o.type == "MoveMade"] == ["h2e2", "b9c7", "h0g2"]
        assert restarted.reused_ids == 0 and restarted.replays == 0


def test_a_game_not_found_is_looked_up_again_only_after_a_while() -> None:
    from xqarb.ingest.games import NOT_FOUND_RETRY_S, GameBoards

    calls: list[str] = []
    now = [0.0]
    ledger = {"g-1": "1"}
    games = GameBoards(lambda g: calls.append(g) or ledger.get(g), clock=lambda: now[0])
    assert games.board_of("g-2") is None and games.board_of("g-2") is None and calls == ["g-2"]
    ledger["g-2"] = "2"  # the referee wrote the game's start meanwhile
    now[0] += NOT_FOUND_RETRY_S
    assert games.board_of("g-2") == "2" and games.board_of("g-2") == "2" and calls == ["g-2", "g-2"]
    with pytest.raises(Refusal, match="played on board '2'"):
        games.check("g-2", "1")
    games.check("g-2", "2")
    games.check(None, "1")
