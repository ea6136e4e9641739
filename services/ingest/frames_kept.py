"""The camera frames ingest published in the last seconds, kept to be sent again to a broker that lost them.

The embedded broker keeps its topics in memory: one that dies and is restarted empty loses every frame it had
acknowledged and that vision had not read yet. Vision may run seconds behind the cameras (15-20 s was measured on a
loaded machine, bench/RESULTS.md), and a board whose frames of a move are lost so misses the move: a vision process
follows at most one move made where it saw nothing (services/vision/resume.py). Ingest therefore keeps the frames of
the last FRAME_REPLAY_S, in the order the broker acknowledged them, and sends them again, in that order, once the
broker is back (services/ingest/frame_replay.py); vision skips those it had read already by their camera's count
(services/vision/order.py).

Memory stays bounded: frames older than FRAME_REPLAY_S are forgotten as new ones come, and beyond
FRAME_REPLAY_MAX_BYTES the oldest are forgotten too (counted by the caller: `keep` says how many). A frame the vision
group has committed (read, its observations acknowledged) is forgotten as soon as that is known (`forget_read`): what
is sent again is then what vision had not read a moment before the broker died, not the whole FRAME_REPLAY_S.

Pure: values and the caller's clock in, values out; no I/O, no clock read, no lock (the adapter holds one).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

Where = tuple[str, int, int]  # (topic, partition, offset) where the broker stored a frame

# How long a published frame is kept to be sent again should the broker lose it. Vision was measured up to 15-20 s
# behind the cameras on a loaded 2-core machine (35 s at worst); frames of a move older than what vision reads are
# already read, and vision skips them.
FRAME_REPLAY_S = 30.0
# The most bytes of frames kept (JPEG bytes): 30 s of 25 boards at 2 fps of 40 KB frames is 60 MB. Beyond it the
# oldest are forgotten (counted): a venue with more cameras keeps fewer seconds rather than more memory.
FRAME_REPLAY_MAX_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class KeptFrame:
    """One frame the broker acknowledged: the event as it was sent, its JPEG size, when it was acknowledged."""

    event: Any  # xqarb.events.Event (FrameCaptured)
    size: int  # bytes counted against FRAME_REPLAY_MAX_BYTES
    at: float  # the caller's clock (s) when the broker acknowledged it
    where: Where | None = None  # where the broker stored it (None: not known, never taken as read)


class FrameKeep:
    """The frames acknowledged in the last `keep_s` seconds, at most `max_bytes` of them, oldest first."""

    def __init__(self, keep_s: float = FRAME_REPLAY_S, max_bytes: int = FRAME_REPLAY_MAX_BYTES) -> None:
        if keep_s < 0 or max_bytes < 0:
            raise ValueError(f"keep_s and max_bytes must not be negative (got {keep_s}, {max_bytes})")
        self.keep_s = keep_s
        self.max_bytes = max_bytes
        self.bytes = 0
        self._frames: deque[KeptFrame] = deque()

    def __len__(self) -> int:
        return len(self._frames)

    def keep(self, event: Any, size: int, now: float, where: Where | None = None) -> int:
        """Keep one frame acknowledged at `now` (after those kept before: the order of their acknowledgements);
        returns how many frames were forgotten for want of room (this one among them where it alone is over
        `max_bytes`). Frames older than `keep_s` are forgotten too, uncounted: their time is over."""
        self.expire(now)
        if size > self.max_bytes or self.keep_s == 0:
            return 1 if self.keep_s > 0 else 0
        self._frames.append(KeptFrame(event, size, now, where))
        self.bytes += size
        forgotten = 0
        while self.bytes > self.max_bytes:
            self.bytes -= self._frames.popleft().size
            forgotten += 1
        return forgotten

    def expire(self, now: float) -> None:
        """Forget the frames acknowledged more than `keep_s` before `now`."""
        while self._frames and self._frames[0].at < now - self.keep_s:
            self.bytes -= self._frames.popleft().size

    def partitions(self) -> list[tuple[str, int]]:
        """The (topic, partition) where the kept frames are stored, sorted."""
        return sorted({kept.where[:2] for kept in self._frames if kept.where is not None})

    def forget_read(self, commits: Mapping[tuple[str, int], int | None]) -> int:
        """Forget the frames a consumer group committed (`commits`: (topic, partition) -> the next offset it reads,
        None: nothing committed); returns how many."""
        def read(kept: KeptFrame) -> bool:
            if kept.where is None:
                return False
            committed = commits.get(kept.where[:2])
            return committed is not None and kept.where[2] < committed

        gone = [kept for kept in self._frames if read(kept)]
        if gone:
            self._frames = deque(kept for kept in self._frames if not read(kept))
            self.bytes -= sum(kept.size for kept in gone)
        return len(gone)

    def moved(self, where: Mapping[str, Where]) -> None:
        """The kept frames sent again to a broker that restarted (`where`: event id -> where it stores them now);
        a kept frame not among them (not sent again) is never taken as read from now on: where it was is gone."""
        self._frames = deque(replace(kept, where=where.get(kept.event.event_id)) for kept in self._frames)

    def frames(self, now: float) -> list[Any]:
        """The events kept at `now`, in the order they were acknowledged (each board's in its order). They stay
        kept: a broker that dies again soon after lost them again."""
        self.expire(now)
        return [kept.event for kept in self._frames]
