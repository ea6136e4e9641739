"""The ingest HTTP service (Flask): frames, clock events and catalogue events from devices and people to Kafka.

A thin adapter around `validate.py`: it authenticates the bearer token, enforces the size limits before reading a
body, stamps `received_at`, hands the event to a `Publisher` (acks=all) and answers 202 only once the broker has
acknowledged it, or (`xqarb.ingest.outbox`) once it is durably in ingest's outbox, which publishes it. What was
refused after reading goes to `xq.dlq` with the reason. At most `max_in_flight` sends wait for the broker at any
moment; beyond that the answer is 503 with Retry-After (backpressure instead of an unbounded buffer).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

from flask import Blueprint, Flask, Response, request
from werkzeug.exceptions import HTTPException

from xqarb import metrics
from xqarb.events import Event
from xqarb.ingest.bounds import parse_json
from xqarb.ingest.config import Principal, VenueConfig
from xqarb.ingest.games import GameBoards
from xqarb.ingest.validate import (
    CLOCK_TYPES,
    EVENT_TYPES,
    TOPIC_ARBITER,
    TOPIC_CLOCK,
    TOPIC_FRAMES,
    FrameRequest,
    Posted,
    Refusal,
    SequenceTracker,
    frame_event,
    json_post,
)

RETRY_AFTER_S = 1


class BrokerUnavailable(Exception):
    """The broker did not acknowledge in time (or refused): the client should retry later."""


class Stored(NamedTuple):
    """Where the broker stored an event: the topic written may be another than the one asked for (a frame goes
    to xq.frames.roll in the periods the embedded broker rolls frames, xqarb/bus.py)."""

    partition: int
    offset: int
    topic: str


class Publisher(Protocol):
    def publish(self, topic: str, event: Event, timeout: float) -> Stored | tuple[int, int] | None:
        """Send with acks=all and wait for the acknowledgement: where it was stored (a plain (partition, offset):
        in the topic asked for); None when the event is kept durably and will be published (ingest's outbox);
        BrokerUnavailable otherwise."""
        ...

    def dead_letter(self, reason: str, payload: bytes, *, board_id: str, source: str, topic: str) -> None:
        """Keep a refused message in xq.dlq with the reason (best effort: never blocks the answer for long)."""
        ...


def publisher_ready(publisher: Any) -> tuple[bool, str]:
    """Whether the publisher reaches its broker, as far as it can tell (`ready()` where it has one)."""
    ready = getattr(publisher, "ready", None)
    if ready is None:
        return True, "the publisher cannot tell; assumed reachable"
    try:
        ok = bool(ready())
    except Exception as exc:  # a probe: any failure of it means not ready, and the answer says which
        return False, f"the broker probe failed: {type(exc).__name__}: {exc}"
    return ok, "broker reachable" if ok else "the broker is not reachable"


def json_error(status: int, error: str, detail: str, headers: dict[str, str] | None = None) -> Response:
    resp = Response(
        json.dumps({"error": error, "detail": detail}, ensure_ascii=False), status=status, mimetype="application/json"
    )
    for k, v in (headers or {}).items():
        resp.headers[k] = v
    return resp


def install_json_errors(app: Flask) -> None:
    """Every HTTP error of the app (404 of an unknown path, 405, 500 ...) as DESIGN's JSON error."""

    @app.errorhandler(HTTPException)
    def _http_error(exc: HTTPException) -> Response:
        name = (exc.name or "error").lower().replace(" ", "_")
        return json_error(exc.code or 500, name, exc.description or name)


def bearer_token() -> str | None:
    auth = request.headers.get("Authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    return None


class Ingest:
    """The ingest endpoints' state: configuration, publisher, sequence numbers, the in-flight bound."""

    def __init__(self, config: VenueConfig, publisher: Publisher, *, clock_us: Callable[[], int] | None = None) -> None:
        self.config = config
        self.publisher = publisher
        self.sequences = SequenceTracker()
        self.games = GameBoards()
        self._in_flight = threading.BoundedSemaphore(config.limits.max_in_flight)
        self._clock_us = clock_us or (lambda: time.time_ns() // 1000)

    # --- the steps of every request ------------------------------------------------------------------------------

    def authenticate(self, board_id: str) -> Principal:
        if board_id not in self.config.boards:
            raise Refusal(404, "unknown_board", f"board {board_id!r} is not configured at this venue")
        token = bearer_token()
        if token is None:
            raise Refusal(401, "unauthorized", "an Authorization: Bearer <token> header is required")
        who = self.config.principal(token)
        if who is None:
            raise Refusal(401, "unauthorized", "the bearer token is not known")
        if not who.may_post_for(board_id):
            raise Refusal(403, "wrong_board", f"the token of {who.id} is not allowed to post for board {board_id!r}")
        return who

    def authorize(self, who: Principal, event_type: str) -> None:
        """Refusal (403) unless the token's role sends this type (a camera's token posts no clock press)."""
        if not who.may_send(event_type):
            raise Refusal(403, "wrong_role", f"{event_type} cannot be sent with the token of a {who.role} ({who.id})")

    def read_body(self, limit: int) -> bytes:
        length = request.content_length
        if length is not None and length > limit:
            raise Refusal(413, "too_large", f"the body is {length} bytes; at most {limit} are accepted here")
        try:
            data = request.stream.read(limit + 1)
        except (OSError, ValueError) as exc:  # a chunked body badly framed, a connection cut mid-body
            raise Refusal(400, "bad_body", f"the body could not be read: {exc}") from None
        if len(data) > limit:
            raise Refusal(413, "too_large", f"the body is over {limit} bytes, the most accepted here")
        if not data:
            raise Refusal(400, "empty_body", "the request has no body")
        return data

    def publish(self, topic: str, event: Event) -> Response:
        # Backpressure: a bounded number of sends wait for the broker; the rest are told to come back.
        if not self._in_flight.acquire(blocking=False):
            return json_error(
                503,
                "backpressure",
                f"{self.config.limits.max_in_flight} sends are already waiting for the broker; retry shortly",
                {"Retry-After": str(RETRY_AFTER_S)},
            )
        metrics.INGEST_IN_FLIGHT.inc()
        try:
            stored = self.publisher.publish(topic, event, self.config.limits.ack_timeout_s)
        except BrokerUnavailable as exc:
            return json_error(503, "broker_unavailable", str(exc), {"Retry-After": str(RETRY_AFTER_S)})
        finally:
            metrics.INGEST_IN_FLIGHT.dec()
            self._in_flight.release()
        # The answer names the topic written, so that the partition and offset can be looked up there.
        body: dict[str, Any] = {"event_id": event.event_id, "topic": topic}
        if stored is None:
            body["queued"] = True  # on disk in the outbox, published once the broker takes it
        else:
            body["partition"], body["offset"] = stored[0], stored[1]
            if isinstance(stored, Stored):
                body["topic"] = stored.topic
        return Response(json.dumps(body), status=202, mimetype="application/json")

    def refuse(self, refusal: Refusal, payload: bytes | None, *, board_id: str, source: str, topic: str) -> Response:
        if payload is not None:
            # Refused after reading: keep it, with the reason, for whoever investigates a misbehaving device.
            self.publisher.dead_letter(
                f"{refusal.error}: {refusal.detail}", payload, board_id=board_id, source=source, topic=topic
            )
            metrics.DEAD_LETTERS.labels("ingest").inc()
        return json_error(refusal.status, refusal.error, refusal.detail)

    # --- endpoints -----------------------------------------------------------------------------------------------

    def accept(self, posted: Posted) -> Event:
        """The checks of an event built from a request that need this process's memory: its game is its board's,
        its sequence number goes forward."""
        event = posted.event
        self.games.check(event.game_id, event.board_id, starting=event.type == "GameStarted")
        if posted.seq_given:
            self.sequences.reserve(
                event.board_id, event.source, event.source_seq, epoch=posted.epoch, fingerprint=posted.fingerprint
            )
        return event

    def published(self, resp: Response, event: Event) -> Response:
        if resp.status_code == 202 and event.type == "GameStarted" and event.game_id:
            self.games.learn(event.game_id, event.board_id)
        return resp

    def post_frame(self, board_id: str) -> Response:
        payload = None
        source = "?"
        try:
            who = self.authenticate(board_id)
            source = who.id
            self.authorize(who, "FrameCaptured")
            payload = self.read_body(self.config.limits.max_frame_bytes)
            event = self.accept(frame_event(
                FrameRequest(board_id, who.id, request.headers, payload),
                now_us=self._clock_us(),
                max_skew_s=self.config.limits.max_skew_s,
            ))
        except Refusal as refusal:
            metrics.FRAMES_REFUSED.labels(refusal.error).inc()
            return self.refuse(refusal, payload, board_id=board_id, source=source, topic=TOPIC_FRAMES)
        resp = self.publish(TOPIC_FRAMES, event)
        if resp.status_code == 202:
            metrics.FRAMES_IN.inc()
        else:
            metrics.FRAMES_REFUSED.labels("broker").inc()
        return resp

    def post_json(self, board_id: str, *, allowed: frozenset[str], topic: str) -> Response:
        payload = None
        source = "?"
        try:
            who = self.authenticate(board_id)
            source = who.id
            payload = self.read_body(self.config.limits.max_json_bytes)
            event = self.accept(json_post(
                parse_json(payload),
                board_id=board_id,
                principal_id=who.id,
                role=who.role,
                allowed=allowed,
                now_us=self._clock_us(),
                max_skew_s=self.config.limits.max_skew_s,
            ))
        except Refusal as refusal:
            return self.refuse(refusal, payload, board_id=board_id, source=source, topic=topic)
        return self.published(self.publish(topic, event), event)

    def blueprint(self) -> Blueprint:
        bp = Blueprint("ingest", __name__)

        @bp.after_request
        def _count(resp: Response) -> Response:
            endpoint = (request.endpoint or "?").rsplit(".", 1)[-1]
            metrics.INGEST_REQUESTS.labels(endpoint, str(resp.status_code)).inc()
            return resp

        @bp.post("/ingest/v1/boards/<board_id>/frames")
        def frames(board_id: str) -> Response:
            return self.post_frame(board_id)

        @bp.post("/ingest/v1/boards/<board_id>/clock")
        def clock(board_id: str) -> Response:
            return self.post_json(board_id, allowed=CLOCK_TYPES, topic=TOPIC_CLOCK)

        @bp.post("/ingest/v1/boards/<board_id>/events")
        def events(board_id: str) -> Response:
            return self.post_json(board_id, allowed=EVENT_TYPES, topic=TOPIC_ARBITER)

        return bp


def create_app(config: VenueConfig, publisher: Publisher) -> Flask:
    """A Flask app serving only ingest and /metrics (ingest on its own machine; `xqarb up` mounts the blueprint)."""
    app = Flask("xqarb.ingest")
    install_json_errors(app)
    ingest = Ingest(config, publisher)
    app.register_blueprint(ingest.blueprint())
    app.extensions["xq_ingest"] = ingest

    @app.get("/metrics")
    def _metrics() -> tuple[bytes, int, dict[str, str]]:
        return metrics.metrics_response()

    @app.get("/healthz")
    def _health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz")
    def _ready() -> Response:
        ok, detail = publisher_ready(publisher)
        if not ok:
            return json_error(503, "not_ready", detail)
        return Response(json.dumps({"status": "ready", "detail": detail}), status=200, mimetype="application/json")

    return app
