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

The keeping itself is xqarb/kept.py (vision keeps its observations the same way): pure, no I/O, no clock read.
"""

from __future__ import annotations

from xqarb.kept import RecordKeep, Where

__all__ = ["FRAME_REPLAY_MAX_BYTES", "FRAME_REPLAY_S", "FrameKeep", "Where"]

# How long a published frame is kept to be sent again should the broker lose it. Vision was measured up to 15-20 s
# behind the cameras on a loaded 2-core machine (35 s at worst); frames of a move older than what vision reads are
# already read, and vision skips them.
FRAME_REPLAY_S = 30.0
# The most bytes of frames kept (JPEG bytes): 30 s of 25 boards at 2 fps of 40 KB frames is 60 MB. Beyond it the
# oldest are forgotten (counted): a venue with more cameras keeps fewer seconds rather than more memory.
FRAME_REPLAY_MAX_BYTES = 64 * 1024 * 1024


class FrameKeep(RecordKeep):
    """The frames acknowledged in the last `keep_s` seconds, at most `max_bytes` of them, oldest first."""

    def __init__(self, keep_s: float = FRAME_REPLAY_S, max_bytes: int = FRAME_REPLAY_MAX_BYTES) -> None:
        super().__init__(keep_s, max_bytes)

    @property
    def bytes(self) -> int:
        """The JPEG bytes of the frames kept."""
        return self.size

    def frames(self, now: float) -> list[object]:
        """The frames kept at `now`, in the order they were acknowledged (RecordKeep.events)."""
        return self.events(now)
