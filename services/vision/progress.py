"""How far each board's frames have been read: the referee's watermark for holding clock and arbiter inputs.

A player moves, then presses the clock; the press reaches the referee in milliseconds, the camera's still board
of the move only once vision has read the frames. The referee therefore holds a board's clock and arbiter inputs
until the camera has been read up to their time (services/referee/ordering.py). A still board gives no
observation at all, so vision tells the referee, about once a second of each board's frames, how far it has
read them (`CameraProgress`, occurred_at: the capture time of the latest frame read). While vision is down
(killed, restarting, catching up on the frames sent meanwhile) the watermark stands still and the presses wait,
instead of being folded before the moves they followed and ruled presses without a move (8.1.7).

Pure: frames' capture times in, reports out; no clock is read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# How much of a board's frame time (µs) passes between two CameraProgress reports: the referee releases a press
# at most this long after vision has read the frame of its moment, and the topic carries one small event a
# second per board (500 boards: 500 events/s, a few tens of kB/s).
PROGRESS_EVERY_US = 1_000_000

Key = tuple[int, str]  # (partition, board)


@dataclass(frozen=True, slots=True)
class ProgressReport:
    key: Key
    at: int  # µs: capture time of the latest frame read
    frame_event_id: str  # that frame's event id (the report's id derives from it: stable across a replay)
    frame_seq: int  # that frame's source_seq
    frames: int  # frames of the board read since the previous report
    game: str | None


@dataclass
class ProgressWatch:
    every_us: int = PROGRESS_EVERY_US
    _told: dict[Key, int] = field(default_factory=dict)  # capture time of the last report
    _latest: dict[Key, tuple[int, str, int, str | None]] = field(default_factory=dict)  # (at, id, seq, game)
    _frames: dict[Key, int] = field(default_factory=dict)

    def frame(self, key: Key, at: int, event_id: str, seq: int, game: str | None) -> None:
        """A frame of the board read (handled by the tracker)."""
        if at >= self._latest.get(key, (at, "", 0, None))[0]:
            self._latest[key] = (at, event_id, seq, game)
        self._frames[key] = self._frames.get(key, 0) + 1

    def due(self) -> list[ProgressReport]:
        """A report for each board whose frames read have moved on by `every_us` since its last report (its first
        frame gives one at once: the referee learns the board has a camera)."""
        out = []
        for key, (at, event_id, seq, game) in self._latest.items():
            told = self._told.get(key)
            if told is not None and at - told < self.every_us:
                continue
            out.append(ProgressReport(key, at, event_id, seq, self._frames.get(key, 0), game))
            self._told[key] = at
            self._frames[key] = 0
        return out

    def drop(self, partitions: set[int]) -> None:
        """Forget the boards of partitions given to another process."""
        for table in (self._told, self._latest, self._frames):
            for key in [k for k in table if k[0] in partitions]:
                del table[key]
