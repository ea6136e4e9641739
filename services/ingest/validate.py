"""The pure core of ingest: what a request must look like to become an event, and what was wrong when it does not.

Every function takes values (headers, body bytes, the parsed JSON, the server time) and returns an `Event` or
raises `Refusal`, which carries the HTTP status, a short machine word (`error`) and a sentence for a person
(`detail`). No I/O and no clock reads: the adapter (`app.py`) passes `now_us` in.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from xqarb.events import Event, EventError, make_event

# Topics by endpoint (DESIGN, data flow).
TOPIC_FRAMES = "xq.frames"
TOPIC_CLOCK = "xq.clock"
TOPIC_ARBITER = "xq.arbiter"

CLOCK_TYPES = frozenset({"ClockPressed", "ClockPaused", "ClockResumed"})
# What players' devices (an e-scoresheet, a clock with buttons for offers) may send for their own board.
DEVICE_EVENT_TYPES = frozenset({"ScoresheetEntry", "DrawOffered", "DrawAnswered", "Resigned", "NaturalLimitClaimed"})
# What only a person with an arbiter's token may enter: what only a person can see (DESIGN: a disturbance, a
# designation under 5.10, a restored position under 5.8.2), and the start of a game from the pairing.
ARBITER_EVENT_TYPES = frozenset(
    {"GameStarted", "PointDesignated", "PositionRestored", "TouchReported", "FoulReported", "ArbiterDecision"}
)
EVENT_TYPES = DEVICE_EVENT_TYPES | ARBITER_EVENT_TYPES


class Refusal(Exception):
    """A request refused: HTTP status, a short error word, and what exactly was wrong."""

    def __init__(self, status: int, error: str, detail: str) -> None:
        super().__init__(f"{status} {error}: {detail}")
        self.status = status
        self.error = error
        self.detail = detail

    def to_json(self) -> dict[str, str]:
        return {"error": self.error, "detail": self.detail}


# --- JPEG -------------------------------------------------------------------------------------------------------

# Start-of-frame markers that carry the image size (baseline, progressive, lossless ...; not DHT C4, JPG C8, DAC CC).
_SOF_MARKERS = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF})


def jpeg_size(data: bytes) -> tuple[int, int]:
    """(width, height) of a JPEG from its start-of-frame segment, without decoding it; Refusal if not a JPEG."""
    if len(data) < 4 or data[:3] != b"\xff\xd8\xff":
        head = data[:8].hex(" ") if data else "nothing"
        raise Refusal(415, "not_jpeg", f"the body is not a JPEG image (it starts with {head}, a JPEG with ff d8 ff)")
    if b"\xff\xd9" not in data[-64:]:
        raise Refusal(415, "not_jpeg", "the JPEG is truncated: no end-of-image marker (ff d9) at its end")
    i = 2
    n = len(data)
    while i + 4 <= n:
        if data[i] != 0xFF:
            raise Refusal(415, "not_jpeg", f"the JPEG is corrupt: no segment marker at byte {i}")
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # markers without a length
            i += 2
            continue
        length = int.from_bytes(data[i + 2 : i + 4], "big")
        if length < 2:
            raise Refusal(
                415, "not_jpeg", f"the JPEG is corrupt: segment {marker:#04x} at byte {i} has length {length}"
            )
        if marker in _SOF_MARKERS:
            if i + 9 > n:
                break
            height = int.from_bytes(data[i + 5 : i + 7], "big")
            width = int.from_bytes(data[i + 7 : i + 9], "big")
            if width == 0 or height == 0:
                raise Refusal(415, "not_jpeg", f"the JPEG says it is {width}x{height} pixels")
            return width, height
        if marker == 0xDA:  # start of scan before any frame header
            break
        i += 2 + length
    raise Refusal(415, "not_jpeg", "the JPEG has no frame header (SOF) before its image data")


# --- sequence numbers and clocks ----------------------------------------------------------------------------------


def check_sequence(last: int | None, seq: int, source: str) -> None:
    """A source's sequence numbers never go backwards. The same number again is a retry of the same event (its
    event id is derived from it, so the ledger keeps it once); a smaller one is refused."""
    if last is not None and seq < last:
        raise Refusal(
            409, "sequence_backwards", f"sequence number {seq} of {source} is below {last}, which was already accepted"
        )


def check_skew(occurred_at: int, now_us: int, max_skew_s: float) -> None:
    skew_s = (occurred_at - now_us) / 1e6
    if abs(skew_s) > max_skew_s:
        direction = "ahead of" if skew_s > 0 else "behind"
        raise Refusal(
            422,
            "time_skew",
            f"occurred_at is {abs(skew_s):.1f} s {direction} the server's clock (at most {max_skew_s:g} s allowed): "
            "set the device's clock",
        )


class SequenceTracker:
    """The last accepted sequence number of every source (thread-safe).

    `reserve` checks and records in one step so that two concurrent requests of one device cannot both pass with
    numbers out of order. One ingest process keeps its own record: behind a load balancer, route a device to one
    process (sticky by board) or the check weakens to per-process.
    """

    def __init__(self) -> None:
        self._last: dict[str, int] = {}
        self._lock = threading.Lock()

    def reserve(self, source: str, seq: int) -> None:
        with self._lock:
            check_sequence(self._last.get(source), seq, source)
            self._last[source] = seq

    def last(self, source: str) -> int | None:
        with self._lock:
            return self._last.get(source)


# --- requests to events ---------------------------------------------------------------------------------------


def _int_header(headers: Mapping[str, str], name: str, *, required: bool) -> int | None:
    value = headers.get(name)
    if value is None or value == "":
        if required:
            raise Refusal(400, "field_missing", f"header {name} is missing")
        return None
    try:
        return int(value)
    except ValueError:
        raise Refusal(400, "invalid_field", f"header {name} must be an integer, not {value!r}") from None


@dataclass(frozen=True)
class FrameRequest:
    board_id: str
    device_id: str
    headers: Mapping[str, str]
    body: bytes


def frame_event(req: FrameRequest, *, now_us: int, max_skew_s: float) -> Event:
    """A `FrameCaptured` from a camera's POST: the body is one JPEG; headers X-Capture-Time (microseconds since the
    epoch, the camera's clock), X-Sequence (per camera, monotonic); optional X-Camera-Id, X-Event-Id, X-Game-Id."""
    capture = _int_header(req.headers, "X-Capture-Time", required=True)
    seq = _int_header(req.headers, "X-Sequence", required=True)
    assert capture is not None and seq is not None
    width, height = jpeg_size(req.body)
    check_skew(capture, now_us, max_skew_s)
    try:
        return make_event(
            "FrameCaptured",
            req.board_id,
            source=req.device_id,
            source_seq=seq,
            occurred_at=capture,
            received_at=now_us,
            event_id=req.headers.get("X-Event-Id") or None,
            camera_id=req.headers.get("X-Camera-Id") or req.device_id,
            width=width,
            height=height,
            encoding="jpeg",
            image=req.body,
            frame_sha256=hashlib.sha256(req.body).hexdigest(),
            game_id=req.headers.get("X-Game-Id") or None,
        )
    except EventError as exc:
        raise Refusal(400, "invalid_field", str(exc)) from None


def json_event(
    obj: Any,
    *,
    board_id: str,
    principal_id: str,
    is_arbiter: bool,
    allowed: frozenset[str],
    now_us: int,
    max_skew_s: float,
) -> Event:
    """An event of the catalogue from its JSON form (DESIGN), posted by a device or an arbiter for `board_id`.

    The server stamps `received_at` and `source` (the token's owner: a device cannot speak for another). A device
    must give `source_seq` and `occurred_at`; for an arbiter entering something by hand they default to now.
    """
    if not isinstance(obj, Mapping):
        raise Refusal(400, "bad_json", f"the body must be one JSON object (an event), not {type(obj).__name__}")
    event_type = obj.get("type")
    if not isinstance(event_type, str) or not event_type:
        raise Refusal(400, "field_missing", "field 'type' (the event type, e.g. 'ClockPressed') is missing")
    if event_type not in allowed:
        raise Refusal(
            422,
            "unknown_event_type",
            f"event type {event_type!r} is not accepted here; accepted: {', '.join(sorted(allowed))}",
        )
    if event_type in ARBITER_EVENT_TYPES and not is_arbiter:
        raise Refusal(403, "arbiter_only", f"{event_type} can only be entered with an arbiter's token")
    body = dict(obj)
    if "board_id" in body and str(body["board_id"]) != board_id:
        raise Refusal(
            400, "board_mismatch", f"the event names board {body['board_id']!r} but was posted for board {board_id!r}"
        )
    body["board_id"] = board_id
    given_source = body.get("source")
    if given_source is not None and given_source != principal_id:
        raise Refusal(403, "wrong_source", f"source {given_source!r} is not the token's owner {principal_id!r}")
    body["source"] = principal_id
    body["received_at"] = now_us
    for name in ("source_seq", "occurred_at"):
        if name not in body:
            if not is_arbiter:
                raise Refusal(400, "field_missing", f"{event_type}: field {name!r} is missing")
            body[name] = now_us
    occurred = body["occurred_at"]
    if isinstance(occurred, int) and not isinstance(occurred, bool):
        check_skew(occurred, now_us, max_skew_s)
    try:
        return Event.from_json_dict(body)
    except EventError as exc:
        status = 400
        error = "field_missing" if "is missing" in str(exc) else "invalid_field"
        raise Refusal(status, error, str(exc)) from None
