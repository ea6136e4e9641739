"""What evidence a venue keeps: full-size frames where they are evidence, the rest thinned (a pure core).

A camera at 2 fps stores some 100 kB a frame around every hand on the board: about 10 MB per board-minute, some
1.2 TB for a 500-board, 4-hour round. Most of it shows nothing anyone rules on. The policy (`RetentionPolicy`,
the venue configuration's `[evidence]` table) keeps at full size every frame the ledger's entries of the kinds
in `keep_full` name (a move's still board after it, whose predecessor is the last move's; a ruling's; an alert's;
an arbiter's action's), with, for the kinds in `keep_context`, the frames before it (the hand's work the
observation was read from). Every other frame, once `thin_after_s` old by its board's entries in the ledger, is
thinned: one a `thin_every_s` per board is kept as a small picture (`thin_scale`, `thin_quality`) for the review
page's context, the others dropped; thinned ones go after `drop_after_s` where that is set.

What the ledger says of a frame: `References` takes each game's entries in order. An output (Ruling,
AttentionNeeded, ...) names in its `evidence` the input it was caused by (its event id) and that input's
`frame_sha256`, or (MoveMade) follows that input in the ledger; an observation names its own `frame_sha256` and
in its `evidence` the board's last frames.

`plan(...)` takes the frames held and what the ledger says of them, and returns what to thin and what to drop:
values in, values out, no clock and no I/O (sweep.py is the adapter).
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from .evidence import FrameInfo

_SHA = re.compile(r"^[0-9a-f]{64}$")

# The kinds whose frames stay full size: what a ruling rests on. A move (MoveMade: the still board it was read
# from; the board before it is the last move's, or the start), a ruling or the end of a game, an alert an arbiter
# must look at, and the arbiters' and players' own actions (a dispute: a foul or touch reported, a point
# designated for 5.10, a position restored under 5.8.2 / 5.9, a decision).
DEFAULT_KEEP_FULL = frozenset({
    "MoveMade", "Ruling", "GameEnded", "AttentionNeeded", "FoulReported", "TouchReported", "PointDesignated",
    "PositionRestored", "ArbiterDecision", "CameraFault"})
# The kinds whose cause's earlier frames stay full too (the observation's `evidence`: the frames the hand's work
# was read from): what a dispute about a ruling or an alert turns on. A plain move needs only its still board.
DEFAULT_KEEP_CONTEXT = frozenset({"Ruling", "AttentionNeeded", "FoulReported", "TouchReported", "ArbiterDecision"})


class PolicyError(ValueError):
    """The `[evidence]` table of the venue configuration is malformed; the message says which setting."""


@dataclass(frozen=True)
class RetentionPolicy:
    keep_full: frozenset[str] = DEFAULT_KEEP_FULL
    keep_context: frozenset[str] = DEFAULT_KEEP_CONTEXT
    # How old (seconds, by its board's newest entry in the ledger) a frame no kept entry names must be before it
    # is thinned: the referee rules on a frame within a second or two of vision storing it; two minutes leave room
    # for a referee that restarts and catches up. Nothing is thinned while the board's ledger does not move on.
    thin_after_s: float = 120.0
    # How old (seconds, by the ledger's newest entry) a frame no entry names at all must be before it is judged:
    # the referee of its board may be behind the others (a process restarting, a partition taken over); longer
    # than any catching up. Such frames are a board watched before its game starts, or observations not ledgered.
    orphan_after_s: float = 1800.0
    # Of a board's frames no kept entry names, one every this many seconds (by capture time) is kept, thinned:
    # enough for the review page to show the board between two moves; the others are dropped. 0 keeps them all.
    thin_every_s: float = 10.0
    # A thinned frame's size against the frame (0.25: a 1280x720 frame becomes 320x180, some 5 kB): the board
    # and the hands can still be seen, not the pieces' characters.
    thin_scale: float = 0.25
    thin_quality: int = 50  # its JPEG quality (0-100)
    # Thinned frames dropped once this old (seconds since stored); None keeps them as long as the event's data.
    drop_after_s: float | None = None
    # The disk a venue budgets per board and minute of play (MB); the sweep reports what it keeps against it.
    max_mb_per_board_minute: float = 1.0
    # Where frames are kept: None, the data directory's `evidence/`; a directory; or a postgresql:// URL (the
    # PostgreSQL of the shared ledger), for a venue whose machines must all reach every frame.
    store: str | None = None
    # How often (seconds) the sweep of `xqarb up` runs.
    sweep_every_s: float = 30.0

    def to_json(self) -> dict[str, Any]:
        return {k: sorted(v) if isinstance(v, frozenset) else v for k, v in asdict(self).items()}


def parse_policy(raw: Mapping[str, Any] | None) -> RetentionPolicy:
    """The policy of a venue configuration's `[evidence]` table (absent: the defaults); PolicyError otherwise."""
    if raw is None:
        return RetentionPolicy()
    if not isinstance(raw, Mapping):
        raise PolicyError("evidence must be a table of settings")
    known = set(RetentionPolicy.__dataclass_fields__)
    unknown = set(raw) - known
    if unknown:
        raise PolicyError(f"evidence: unknown setting(s) {sorted(unknown)}; known: {sorted(known)}")
    out: dict[str, Any] = {}
    for name in ("keep_full", "keep_context"):
        if name in raw:
            kinds = raw[name]
            if not isinstance(kinds, list) or not all(isinstance(k, str) and k for k in kinds):
                raise PolicyError(f"evidence.{name} must be a list of event types, not {kinds!r}")
            out[name] = frozenset(kinds)
    limits = {"thin_after_s": (0.0, None), "orphan_after_s": (0.0, None), "thin_every_s": (0.0, None),
              "thin_scale": (0.01, 1.0), "thin_quality": (1, 100), "drop_after_s": (0.0, None),
              "max_mb_per_board_minute": (0.0, None),
              "sweep_every_s": (1.0, None)}
    for name, (low, high) in limits.items():
        if name not in raw or (name == "drop_after_s" and raw[name] is None):
            continue
        value = raw[name]
        if isinstance(value, bool) or not isinstance(value, int | float) or value < low or (
                high is not None and value > high):
            raise PolicyError(f"evidence.{name} must be a number from {low}{f' to {high}' if high else ''}, "
                              f"not {value!r}")
        out[name] = int(value) if name == "thin_quality" else float(value)
    if "store" in raw and raw["store"] is not None:
        if not isinstance(raw["store"], str) or not raw["store"]:
            raise PolicyError(f"evidence.store must be a directory or a postgresql:// URL, not {raw['store']!r}")
        out["store"] = raw["store"]
    return RetentionPolicy(**out)


# How many of a game's latest inputs with frames are remembered for the outputs and actions naming them: an
# output follows its input in the same batch, an arbiter names one of the last few entries.
INPUTS_REMEMBERED = 64


@dataclass
class References:
    """What a ledger's entries say of the frames: those to keep full (with why), and where each frame was seen.

    Fed each game's entries in order, possibly over several calls (the sweep reads the ledger on from where it
    stopped). The cause of an output is the input its `evidence` names, else the input it follows (the referee
    writes an input and its outputs in one batch: a MoveMade names no evidence of its own). An entry with no frame
    of its own (a clock press, an arbiter's action) is about the board as the camera last saw it: the game's last
    input with frames. A MoveMade keeps the still board it was read from (its after) and the one before it."""

    policy: RetentionPolicy = field(default_factory=RetentionPolicy)
    full: dict[str, str] = field(default_factory=dict)  # sha256 -> the kind of the first entry keeping it full
    seen: dict[str, tuple[str, int]] = field(default_factory=dict)  # sha256 -> (board, capture time µs)
    horizon_us: int = 0  # the newest `received_at` of the entries read: the ledger's clock
    # board -> the newest `received_at` of its entries: how far its referee has got (one may be behind another)
    horizons: dict[str, int] = field(default_factory=dict)
    # event id -> (frame_sha256, evidence frames) of the games' latest inputs with frames
    inputs: dict[str, tuple[str | None, tuple[str, ...]]] = field(default_factory=dict)
    _order: dict[str, deque[str]] = field(default_factory=dict)  # game -> its remembered inputs, oldest first
    _cause: dict[str, str] = field(default_factory=dict)  # game -> the last input (the cause of what follows)
    _framed: dict[str, str] = field(default_factory=dict)  # game -> its last input with frames
    _stills: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)  # game -> last 2 BoardStable

    def add(self, game_id: str, kind: str, entry_type: str, event_id: str, board: str, occurred_at: int,
            received_at: int, data: Mapping[str, Any]) -> None:
        """One ledger entry: its game, kind (input / output), event type and id, board, times and data fields."""
        raw_frame = data.get("frame_sha256")
        frame = raw_frame if isinstance(raw_frame, str) and _SHA.match(raw_frame) else None
        raw = data.get("evidence")
        named = [x for x in raw if isinstance(x, str)] if isinstance(raw, list | tuple) else []
        shas = tuple(x for x in named if _SHA.match(x))
        self.horizon_us = max(self.horizon_us, int(received_at))
        self.horizons[board] = max(self.horizons.get(board, 0), int(received_at))
        for sha in (frame, *shas):
            if sha is not None and sha not in self.seen:
                self.seen[sha] = (board, int(occurred_at))
        if kind == "input":
            self._cause[game_id] = event_id
            if frame is not None or shas:
                self._remember(game_id, event_id, (frame, shas))
            if entry_type == "BoardStable" and frame is not None:
                self._stills[game_id] = (self._stills.get(game_id, (None, None))[1], frame)
        if entry_type not in self.policy.keep_full:
            return
        context = entry_type in self.policy.keep_context
        keep: list[str | None] = [frame]
        if kind == "output" or context:
            keep.extend(shas)
        causes = [x for x in named if not _SHA.match(x)]
        if not causes and kind == "output" and game_id in self._cause:
            causes = [self._cause[game_id]]
        if not any(c in self.inputs for c in causes) and frame is None and game_id in self._framed:
            causes.append(self._framed[game_id])  # (no frame of its own or its cause's: the board as last seen)
        for cause in causes:
            frames = self.inputs.get(cause)
            if frames is not None:
                keep.append(frames[0] or (frames[1][-1] if frames[1] else None))
                if context:
                    keep.extend(frames[1])
        if entry_type == "MoveMade":
            keep.extend(self._stills.get(game_id, (None, None)))
        for sha in keep:
            if sha is not None:
                self.full.setdefault(sha, entry_type)

    def _remember(self, game_id: str, event_id: str, frames: tuple[str | None, tuple[str, ...]]) -> None:
        self.inputs[event_id] = frames
        self._framed[game_id] = event_id
        order = self._order.setdefault(game_id, deque())
        order.append(event_id)
        while len(order) > INPUTS_REMEMBERED:
            self.inputs.pop(order.popleft(), None)

    def add_entry(self, entry: Any) -> None:
        """A ledger entry (xqarb.referee.ledger.LedgerEntry)."""
        ev = entry.event
        self.add(entry.game_id, entry.kind, ev.type, ev.event_id, ev.board_id, int(ev.occurred_at),
                 int(ev.received_at), ev.data)

    def forget(self, shas: Iterable[str]) -> None:
        """Frames dropped from the store: nothing more to judge of them."""
        for sha in shas:
            self.seen.pop(sha, None)


@dataclass(frozen=True)
class Plan:
    """What a sweep does: frames to thin and to drop, and what it leaves (for the report)."""

    thin: tuple[str, ...]
    drop: tuple[str, ...]
    full_kept: int  # frames kept full because a kept entry names them
    waiting: int  # frames too recent to judge (thin_after_s, orphan_after_s)
    thinned_kept: int  # frames already thinned, kept
    bytes_after: int  # the bytes held once the plan is done (thinned frames counted at their size now)
    referenced_thinned: tuple[str, ...]  # frames a kept entry names that were thinned before it named them


def plan(frames: Iterable[FrameInfo], refs: References, now_us: int) -> Plan:
    """What to thin and drop of `frames` (what the store holds) given what the ledger says (`refs`).

    A frame a kept entry names is never touched. A frame younger than `thin_after_s` by its board's clock in
    the ledger (the board's newest entry: a referee that is behind, or stopped, holds its boards' frames back),
    or a frame no entry names younger than `orphan_after_s` by the ledger's newest entry, is left for later.
    Of the others, per board and by capture time, the first of every `thin_every_s` window not already covered
    by a full frame is kept thinned, the rest dropped; a frame no entry names at all (a board watched before its
    game, an observation the referee did not take) is placed by when it was stored."""
    pol = refs.policy
    thin_after, orphan_cutoff = int(pol.thin_after_s * 1e6), refs.horizon_us - int(pol.orphan_after_s * 1e6)
    full_kept = waiting = thinned_kept = bytes_after = 0
    thin: list[str] = []
    drop: list[str] = []
    bad: list[str] = []
    candidates: list[tuple[str, int, FrameInfo]] = []
    covered: set[tuple[str, int]] = set()  # (board, window) with a full frame in it
    every_us = int(pol.thin_every_s * 1e6)
    for f in frames:
        where = refs.seen.get(f.sha256)
        board, at = where or ("", f.stored_at_us)
        cutoff = refs.horizons.get(board, 0) - thin_after if where else orphan_cutoff
        if f.sha256 in refs.full:
            full_kept += 1
            bytes_after += f.size
            if f.thinned:
                bad.append(f.sha256)
            elif every_us:
                covered.add((board, at // every_us))
            continue
        if f.stored_at_us > cutoff:
            waiting += 1
            bytes_after += f.size
            continue
        if f.thinned and pol.drop_after_s is not None and now_us - f.stored_at_us > pol.drop_after_s * 1e6:
            drop.append(f.sha256)
            continue
        candidates.append((board, at, f))
    for board, at, f in sorted(candidates, key=lambda c: (c[0], c[1], c[2].sha256)):
        window = (board, at // every_us) if every_us else None
        if window is not None and window in covered:
            drop.append(f.sha256)
            continue
        if window is not None:
            covered.add(window)
        if f.thinned:
            thinned_kept += 1
            bytes_after += f.size
        else:
            thin.append(f.sha256)
            bytes_after += int(f.size * pol.thin_scale * pol.thin_scale)  # (an estimate until it is done)
    return Plan(tuple(thin), tuple(drop), full_kept, waiting, thinned_kept, bytes_after, tuple(bad))


def thin_jpeg(jpeg: bytes, scale: float, quality: int) -> bytes:
    """The frame made smaller: decoded at a reduced size where the JPEG decoder gives it (1/2, 1/4, 1/8 cost a
    fraction of a full decode), resized to `scale`, and encoded again at `quality`. ValueError if undecodable."""
    import cv2
    import numpy as np

    reduced = {0.5: cv2.IMREAD_REDUCED_COLOR_2, 0.25: cv2.IMREAD_REDUCED_COLOR_4, 0.125: cv2.IMREAD_REDUCED_COLOR_8}
    if thinned_from(jpeg) is not None:
        raise ValueError("already thinned")
    buf = np.frombuffer(jpeg, np.uint8)
    header = cv2.imdecode(buf, cv2.IMREAD_REDUCED_GRAYSCALE_8)  # (its size, cheaply: 1/8 of each side)
    flag = reduced.get(scale)
    image = cv2.imdecode(buf, flag if flag is not None else cv2.IMREAD_COLOR)
    if image is None or header is None:
        raise ValueError("not a decodable JPEG")
    full = _full_size(jpeg) or (header.shape[1] * 8, header.shape[0] * 8)
    if flag is None:
        image = cv2.resize(image, (max(1, round(full[0] * scale)), max(1, round(full[1] * scale))),
                           interpolation=cv2.INTER_AREA)
    ok, out = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise ValueError("the thinned frame could not be encoded")
    return _mark(out.tobytes(), *full)


def _full_size(jpeg: bytes) -> tuple[int, int] | None:
    """(width, height) from the JPEG's frame header (SOFn), without decoding it."""
    i = 2
    while i + 9 < len(jpeg):
        if jpeg[i] != 0xFF:
            return None
        marker, length = jpeg[i + 1], int.from_bytes(jpeg[i + 2:i + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            return int.from_bytes(jpeg[i + 7:i + 9], "big"), int.from_bytes(jpeg[i + 5:i + 7], "big")
        i += 2 + length
    return None


# A thinned frame says what it was: a JPEG comment (COM segment) right after the start of image, with the size of
# the frame it was made from, so that the API and the review page place the points of the full frame on it.
_THIN_MARK = b"xqarb-thinned from "


def _mark(jpeg: bytes, width: int, height: int) -> bytes:
    text = _THIN_MARK + f"{width}x{height}".encode()
    return jpeg[:2] + b"\xff\xfe" + (len(text) + 2).to_bytes(2, "big") + text + jpeg[2:]


def thinned_from(jpeg: bytes) -> tuple[int, int] | None:
    """(width, height) of the frame a thinned frame was made from; None for a frame as captured."""
    head = jpeg[:64]
    at = head.find(_THIN_MARK)
    if at < 0 or not head.startswith(b"\xff\xd8\xff\xfe"):
        return None
    end = int.from_bytes(head[4:6], "big") + 4
    try:
        w, h = head[at + len(_THIN_MARK): end].decode("ascii").split("x")
        return int(w), int(h)
    except ValueError:
        return None
