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

from xqarb.events import Event, EventError, make_event, stable_event_id
from xqarb.ingest.bounds import (
    MAX_INT_DIGITS,
    check_counter,
    check_event_values,
    check_game_id,
    check_id,
)
from xqarb.ingest.refusal import Refusal

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

# What each role of token may send (DESIGN: a bearer token per device, configured per board). A camera sends
# frames only; a clock its presses and the buttons some clocks have for offers, resignations and claims; an
# e-scoresheet the moves as written and the same offers; an arbiter what only a person can see, and pauses the
# clock (6.x: the arbiter stops the clocks) but presses no clock and sends no frame: a device's events come from the
# device. "device" is a token configured without a role (before roles existed): any device's events, as then.
ROLE_TYPES: Mapping[str, frozenset[str]] = {
    "camera": frozenset({"FrameCaptured"}),
    "clock": CLOCK_TYPES | (DEVICE_EVENT_TYPES - {"ScoresheetEntry"}),
    "scoresheet": DEVICE_EVENT_TYPES,
    "arbiter": EVENT_TYPES | (CLOCK_TYPES - {"ClockPressed"}),
    "device": frozenset({"FrameCaptured"}) | CLOCK_TYPES | DEVICE_EVENT_TYPES,
}
DEVICE_ROLES = frozenset(ROLE_TYPES) - {"arbiter"}


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


def check_sequence(last: tuple[int, int] | None, epoch: int, seq: int, source: str) -> None:
    """A source's sequence numbers never go backwards within one epoch (one run of its counter); a greater epoch
    (a device that restarted and counts from the beginning again) starts a new run. The same number again is a
    retry of the same event (its event id is derived from it, so the ledger keeps it once)."""
    if last is None:
        return
    last_epoch, last_seq = last
    if epoch < last_epoch:
        raise Refusal(409, "epoch_backwards", f"epoch {epoch} of {source} is below {last_epoch}, already in use")
    if epoch == last_epoch and seq < last_seq:
        raise Refusal(
            409,
            "sequence_backwards",
            f"sequence number {seq} of {source} is below {last_seq}, which was already accepted (epoch {epoch}); a "
            "device whose counter starts again after a restart sends a greater epoch (X-Sequence-Epoch, or "
            "source_epoch in JSON)",
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
    """The last accepted (epoch, sequence number) of every source on every board (thread-safe).

    Per (board, source): one source's numbers never lock out another, nor the same arbiter on another board.
    `reserve` checks and records in one step so that two concurrent requests of one device cannot both pass with
    numbers out of order; `fingerprint` (what the event is, beyond its number) makes the same number with another
    event a refusal rather than a second event under the same id. One ingest process keeps its own record:
    behind a load balancer, route a device to one process (sticky by board) or the check weakens to per-process.
    """

    def __init__(self) -> None:
        self._last: dict[tuple[str, str], tuple[int, int, str | None]] = {}
        self._lock = threading.Lock()

    def reserve(self, board_id: str, source: str, seq: int, *, epoch: int = 0, fingerprint: str | None = None) -> None:
        key = (board_id, source)
        with self._lock:
            last = self._last.get(key)
            check_sequence(last[:2] if last else None, epoch, seq, source)
            if last is not None and (epoch, seq) == last[:2] and None not in (fingerprint, last[2]) \
                    and fingerprint != last[2]:
                raise Refusal(
                    409, "sequence_reused", f"sequence number {seq} of {source} was already used for another event"
                )
            self._last[key] = (epoch, seq, fingerprint)

    def last(self, board_id: str, source: str) -> tuple[int, int] | None:
        """(epoch, sequence number) last accepted from `source` on `board_id`."""
        with self._lock:
            found = self._last.get((board_id, source))
            return found[:2] if found else None


# --- requests to events ---------------------------------------------------------------------------------------


def _int_header(headers: Mapping[str, str], name: str, *, required: bool) -> int | None:
    value = headers.get(name)
    if value is None or value == "":
        if required:
            raise Refusal(400, "field_missing", f"header {name} is missing")
        return None
    text = value.strip()
    digits = text[1:] if text[:1] in "+-" else text
    if not digits.isascii() or not digits.isdigit() or len(digits) > MAX_INT_DIGITS:
        raise Refusal(400, "invalid_field", f"header {name} must be an integer of at most {MAX_INT_DIGITS} digits, "
                                            f"not {value[:40]!r}")
    return int(text)


def derived_event_id(event_type: str, board_id: str, source: str, seq: int, epoch: int) -> str:
    """The id of an event that came without one: stable across retries. Epoch 0 gives the ids of before epochs
    existed; a later epoch is part of the id, so a restarted counter's numbers name new events."""
    return stable_event_id(event_type, board_id, source if epoch == 0 else f"{source}#{epoch}", seq)


@dataclass(frozen=True)
class Posted:
    """An event built from a request, with what the sequence check needs: its epoch, whether the source gave a
    sequence number (an arbiter's hand entry without one is numbered by the server, and not checked), and what
    tells a retry from another event under the same number."""

    event: Event
    epoch: int
    seq_given: bool
    fingerprint: str | None


@dataclass(frozen=True)
class FrameRequest:
    board_id: str
    device_id: str
    headers: Mapping[str, str]
    body: bytes


def frame_event(req: FrameRequest, *, now_us: int, max_skew_s: float) -> Posted:
    """A `FrameCaptured` from a camera's POST: the body is one JPEG; headers X-Capture-Time (microseconds since the
    epoch, the camera's clock), X-Sequence (per camera, monotonic); optional X-Sequence-Epoch (greater after the
    camera restarted its counter), X-Camera-Id, X-Event-Id, X-Game-Id."""
    capture = _int_header(req.headers, "X-Capture-Time", required=True)
    seq = _int_header(req.headers, "X-Sequence", required=True)
    epoch = _int_header(req.headers, "X-Sequence-Epoch", required=False) or 0
    assert capture is not None and seq is not None
    check_counter(seq, "X-Sequence")
    check_counter(epoch, "X-Sequence-Epoch")
    event_id = req.headers.get("X-Event-Id") or None
    camera_id = req.headers.get("X-Camera-Id") or req.device_id
    game_id = req.headers.get("X-Game-Id") or None
    if event_id is not None:
        check_id(event_id, "X-Event-Id")
    check_id(camera_id, "X-Camera-Id")
    if game_id is not None:
        check_game_id(game_id, "X-Game-Id")
    width, height = jpeg_size(req.body)
    check_skew(capture, now_us, max_skew_s)
    try:
        event = make_event(
            "FrameCaptured",
            req.board_id,
            source=req.device_id,
            source_seq=seq,
            occurred_at=capture,
            received_at=now_us,
            event_id=event_id or derived_event_id("FrameCaptured", req.board_id, req.device_id, seq, epoch),
            camera_id=camera_id,
            width=width,
            height=height,
            encoding="jpeg",
            image=req.body,
            frame_sha256=hashlib.sha256(req.body).hexdigest(),
            game_id=game_id,
            # the camera's own order (with source_seq), which vision trusts over a clock that may step back
            source_epoch=epoch,
        )
    except EventError as exc:
        raise Refusal(400, "invalid_field", str(exc)) from None
    # Frames carry no fingerprint: a camera's retry may be stamped anew, and a frame too many is only dropped.
    return Posted(event, epoch, True, None)


def json_post(
    obj: Any,
    *,
    board_id: str,
    principal_id: str,
    role: str,
    allowed: frozenset[str],
    now_us: int,
    max_skew_s: float,
) -> Posted:
    """An event of the catalogue from its JSON form (DESIGN), posted by a device or an arbiter for `board_id`.

    The server stamps `received_at` and `source` (the token's owner: a device cannot speak for another). A device
    must give `source_seq` and `occurred_at`; for an arbiter entering something by hand they default to now. An
    optional `source_epoch` (not part of the event) starts a new run of the source's sequence numbers.
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
            f"event type {event_type[:60]!r} is not accepted here; accepted: {', '.join(sorted(allowed))}",
        )
    is_arbiter = role == "arbiter"
    if event_type in ARBITER_EVENT_TYPES and not is_arbiter:
        raise Refusal(403, "arbiter_only", f"{event_type} can only be entered with an arbiter's token")
    if event_type not in ROLE_TYPES.get(role, frozenset()):
        raise Refusal(403, "wrong_role", f"{event_type} cannot be sent with the token of a {role} ({principal_id})")
    body = dict(obj)
    if "board_id" in body and str(body["board_id"]) != board_id:
        raise Refusal(
            400, "board_mismatch",
            f"the event names board {str(body['board_id'])[:60]!r} but was posted for board {board_id!r}",
        )
    body["board_id"] = board_id
    given_source = body.get("source")
    if given_source is not None and given_source != principal_id:
        raise Refusal(403, "wrong_source", f"source {str(given_source)[:60]!r} is not the token's owner "
                                           f"{principal_id!r}")
    body["source"] = principal_id
    body["received_at"] = now_us
    epoch = body.pop("source_epoch", 0)
    if not isinstance(epoch, int) or isinstance(epoch, bool):
        raise Refusal(400, "invalid_field", f"source_epoch must be an integer, not {epoch!r}")
    check_counter(epoch, "source_epoch")
    seq_given = "source_seq" in body
    for name in ("source_seq", "occurred_at"):
        if name not in body:
            if not is_arbiter:
                raise Refusal(400, "field_missing", f"{event_type}: field {name!r} is missing")
            body[name] = now_us
    occurred = body["occurred_at"]
    if isinstance(occurred, int) and not isinstance(occurred, bool):
        check_skew(occurred, now_us, max_skew_s)
    seq = body["source_seq"]
    id_given = body.get("event_id") is not None
    if not id_given and isinstance(seq, int) and not isinstance(seq, bool):
        body["event_id"] = derived_event_id(event_type, board_id, principal_id, seq, epoch)
    try:
        event = Event.from_json_dict(body)
    except EventError as exc:
        error = "field_missing" if exc.problem == EventError.MISSING else "invalid_field"
        raise Refusal(400, error, str(exc)) from None
    check_event_values(event, id_given=id_given)
    if event.type == "GameStarted":
        check_game_start(event)
    return Posted(event, epoch, seq_given, f"{event.event_id}@{event.occurred_at}")


def check_game_start(event: Event) -> None:
    """A GameStarted the referee could not start (a rule set, level, time control or start position it refuses)
    is refused here, with the referee's own reason, instead of leaving a game of one refused entry in the ledger."""
    from xqarb.referee.game import GameStartError, start  # the referee's pure check, the one source of the rules

    try:
        start(event)
    except GameStartError as exc:
        raise Refusal(422, "invalid_game_start", f"game {event.game_id} cannot start: {exc}") from None


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
    """`json_post`'s event alone, for a caller that knows only whether the token is an arbiter's."""
    return json_post(
        obj, board_id=board_id, principal_id=principal_id, role="arbiter" if is_arbiter else "device",
        allowed=allowed, now_us=now_us, max_skew_s=max_skew_s,
    ).event
