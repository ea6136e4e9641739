"""Frames in the camera's order per board: a late or repeated frame is not given to the tracker, and a camera
whose clock steps back (or that restarts) goes on at the board's time instead of being blind until its clock
catches up.

A board's frames reach vision in the order the broker holds them, which is nearly always the order they were
captured, but not always: on a broker that rolls frames between two topics (xqarb.bus.frames_topics_at) a frame
sent just before a switch may be acknowledged into the old topic after the consumer went on to the new one's
frames, and a producer that sends again after a broker restart sends frames already read. The tracker steps a
board forward in time (the still-board rule measures time from frame to frame; a touch is a hand seen between two
still boards), so an older frame stepped after a newer one would have the board go back in time. What such a
frame shows, later frames already showed: it is skipped (and counted by the service), never stepped.

A capture time alone cannot tell such a frame from a new frame of a camera whose clock stepped back (an NTP step
of a few seconds, within ingest's allowed skew) or that restarted: its next frames carry earlier times than the
last one read, and judged by time they would all be skipped until its clock passes that frame's time again (the
board blind, its moves missed). The camera's own count tells them apart: its sequence number (X-Sequence, never
smaller within one run of its counter, ingest checks) and that run's epoch (X-Sequence-Epoch, greater after a
restart). A frame of a later (epoch, sequence) than the camera's last one read is new whatever its clock says;
one of an earlier or the same (epoch, sequence) is late or repeated. A new frame not later than the board's last
one read continues the board's time line: the camera's times from then on are shifted by an offset (per board,
game and camera) that puts this frame one frame interval of that camera after the last frame read, so that the
tracker sees increasing times and the board never goes back in time. A camera whose clock never steps back keeps
an offset of 0: its times are its capture times. The offset goes on into the board's next game (the same camera's
clock is as far behind as it was), and is given back once the camera's clock goes forward again (the step
corrected): a frame is never placed after the time ingest received it (`received_at`, ingest's clock) for the sake
of an offset, so that offsets do not pile up over an event's steps back and forth.

What the observations carry: the time on the board's time line (services/vision/service.py, VisionCore.handle),
the same as the capture time unless the camera's clock stepped back; the referee folds a board's observations and
clock presses in event time, which the camera's raw times after a step back would disorder. A vision process that
starts afresh (a restart, a rebalance) knows no offset: it reads the camera's times as they come, as before.

Per game as well as per board: a camera replaced between games may keep a clock behind the last one's, and the
next game's frames are not judged by the last game's times; the last game's frames still on their way are judged
by that game's own.

Frames never read: a camera numbers every frame it posts (X-Sequence), so a frame whose number is more than one
after the last one of the same camera and run (epoch) that reached this board's reader says that the frames
between never reached it, whatever the cause (refused by ingest, lost by a broker that restarted, dropped under
pressure): the verdict counts them (`Placed.missed`), for the service to count and say. The camera's last number is
kept per board whatever the game (the count runs on across games), and a late or repeated frame counts nothing.
A new run of the count (a later epoch) starts a new count: where it begins is not known. Partitions released give
their cameras' counts back (`drop`): a process that is given the same partitions again, with no other reader
between, takes them back (`recount`) to count what went missing meanwhile, and to skip as repeated a frame of a
number it read already though the board's time line started again (ingest sends again the frames of the last
seconds to a broker that restarted empty, services/ingest/frame_replay.py: the ones read before are not read twice).

Pure: capture times and counts in, verdicts out; no clock is read. The same frames in the same order give the same
verdicts and times (the offsets follow from the frames alone).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field

# Games remembered per board: the one played and the last few before it, whose frames may still be on their way
# (a board plays one game after another; a late frame of a game older than these is not looked for).
GAMES_KEPT = 4
# The interval (µs) at which a stepped camera's frame is placed after the board's last frame read, while the
# camera's own interval is not known yet (fewer than two of its frames read): two frames a second, the rate the
# venue's cameras send at (the demo's and the benchmarks' cameras too).
FRAME_GAP_US = 500_000
# The longest interval (µs) taken as a camera's own frame interval: a longer gap between two consecutive frames of
# its count is a pause (a camera that sent nothing for a while), not its rate, and would move the board's time on
# by that pause at a step.
FRAME_GAP_MAX_US = 1_000_000

Board = tuple[int, str]  # (partition, board id)
# Each board's cameras: camera -> the (epoch, sequence) of its last frame that reached the reader.
CameraCounts = dict[Board, dict[str, tuple[int, int]]]

NEW, LATE, STEPPED = "new", "late", "stepped"  # what a frame is (Placed.kind)


@dataclass(frozen=True, slots=True)
class Placed:
    """The verdict on one frame: `kind` NEW (later than every frame read: stepped at its time), STEPPED (a new
    frame of its camera's count, its clock behind the board's time line: stepped at `at_us`, one frame interval
    after the last frame read) or LATE (late or repeated: skipped). `at_us`: its time on the board's time line
    (its capture time plus its camera's offset); `step_us`: how much its camera's offset changed: how far its
    clock was found behind, where STEPPED; how much was given back where the clock went forward again (< 0)."""

    kind: str
    at_us: int
    step_us: int = 0  # < 0 where NEW: the offset given back (the camera's clock went forward again)
    missed: int = 0  # frames of its camera's count (same epoch) just before it that never reached the reader

    @property
    def admitted(self) -> bool:
        return self.kind != LATE


@dataclass
class _Camera:
    """One camera's frames read on a board's game: its last count, capture time, offset and frame interval."""

    epoch: int
    seq: int
    captured_us: int
    offset_us: int = 0
    gap_us: int | None = None  # its own frame interval, measured between consecutive frames of its count


@dataclass
class _Line:
    """A board's game: the time of its last frame read (the time line) and the cameras read on it."""

    last_us: int
    cameras: dict[str, _Camera] = field(default_factory=dict)


@dataclass
class FrameOrder:
    """The time line of each board and game (the game the frame names, None where the camera names none)."""

    games_kept: int = GAMES_KEPT
    _lines: dict[Board, OrderedDict[str | None, _Line]] = field(default_factory=dict)
    _counts: CameraCounts = field(default_factory=dict)

    def place(self, board: Board, game: str | None, captured_us: int, *, source: str | None = None,
              seq: int | None = None, epoch: int = 0, received_us: int | None = None) -> Placed:
        """The verdict on a frame captured at `captured_us` by camera `source` as number `seq` of its count's run
        `epoch`, received by ingest at `received_us` (ingest's clock; None: not known); an admitted frame is taken
        as read. Without a camera and number (`source` or `seq` None) a frame is judged by its capture time alone:
        later than every frame of its board and game read, or late."""
        games = self._lines.setdefault(board, OrderedDict())
        line = games.get(game)
        counted = source is not None and seq is not None
        known = self._counts.get(board, {}).get(source) if counted else None  # (source: not None where counted)
        missed = self._count(board, source, epoch, seq) if counted else 0
        camera = line.cameras.get(source) if line is not None and counted else None
        if camera is not None and (epoch, seq) <= (camera.epoch, camera.seq):
            return Placed(LATE, captured_us + camera.offset_us)  # the camera's count says: read already, or late
        if known is not None and (epoch, seq) <= known:
            # the board's count reached it already, its time line since dropped (a partition given back, its counts
            # taken again: `recount`): a frame sent again (ingest's replay after a broker restart) is not read twice
            return Placed(LATE, captured_us + (camera.offset_us if camera is not None else 0))
        # (a camera's first frame of a game goes on with the offset it had on the board's last game: its clock is
        # as far behind as it was)
        offset = camera.offset_us if camera is not None else _offset_before(games, source) if counted else 0
        at = captured_us + offset
        step = 0
        gap = (camera.gap_us if camera is not None else None) or FRAME_GAP_US
        if line is not None and at <= line.last_us:
            if camera is None:
                # nothing of its camera's count read on this game: its time alone tells
                return Placed(LATE, at, missed=missed)
            # a new frame of the camera, its clock behind the board's time: the time line goes on from its last
            # frame read by one frame interval of the camera
            step = line.last_us + gap - at
        elif offset > 0 and received_us is not None and at > received_us:
            # placed after ingest received it: the camera's clock went forward again (the step corrected); the
            # offset is given back down to the time it was received, the time line still going forward
            floor = received_us if line is None else max(received_us, line.last_us + gap)
            step = -min(offset, max(0, at - floor))
        offset, at = offset + step, at + step
        if line is None:
            line = games[game] = _Line(at)
        line.last_us = at
        if counted:
            assert source is not None and seq is not None
            line.cameras[source] = _Camera(epoch, seq, captured_us, offset, _gap(camera, epoch, seq, captured_us))
        games.move_to_end(game)
        while len(games) > self.games_kept:
            games.popitem(last=False)
        return Placed(STEPPED if step > 0 else NEW, at, step, missed)

    def _count(self, board: Board, source: str | None, epoch: int, seq: int | None) -> int:
        """How many frames of the camera's count (its run `epoch`) came between its last frame that reached this
        board's reader and this one, never reaching it; the camera's last frame is then this one, where later."""
        assert source is not None and seq is not None
        cameras = self._counts.setdefault(board, {})
        last = cameras.get(source)
        if last is not None and (epoch, seq) <= last:
            return 0  # late or repeated: its place in the count was passed already
        cameras[source] = (epoch, seq)
        if last is None or last[0] != epoch:
            return 0  # the first frame of the camera seen, or of a new run of its count: where it starts is unknown
        return seq - last[1] - 1

    def last(self, board: Board, game: str | None) -> int | None:
        """The time of the last frame of a board and game read, on its time line (None: none yet)."""
        line = self._lines.get(board, {}).get(game)
        return line.last_us if line is not None else None

    def drop(self, partitions: Iterable[int]) -> CameraCounts:
        """Partitions released: their boards start again from their next frames (as their trackers do). Returns
        their cameras' counts (for `recount`)."""
        gone = set(partitions)
        for board in [b for b in self._lines if b[0] in gone]:
            del self._lines[board]
        return {board: self._counts.pop(board) for board in [b for b in self._counts if b[0] in gone]}

    def recount(self, counts: CameraCounts) -> None:
        """Cameras' counts given back by `drop`, taken again where no frame of theirs was read since: only for
        partitions whose frames nobody else read in between (else their frames read elsewhere would count as
        never read)."""
        for board, cameras in counts.items():
            mine = self._counts.setdefault(board, {})
            for source, last in cameras.items():
                mine[source] = max(last, mine.get(source, last))


def _offset_before(games: OrderedDict[str | None, _Line], source: str | None) -> int:
    """The offset a camera had on the board's most recent game it was read on (0: none)."""
    for line in reversed(games.values()):
        camera = line.cameras.get(source) if source is not None else None
        if camera is not None:
            return camera.offset_us
    return 0


def _gap(camera: _Camera | None, epoch: int, seq: int, captured_us: int) -> int | None:
    """A camera's frame interval after one more of its frames: measured between this frame and its last one where
    both are of one run of its count and its clock went forward between them (per number of its count, so that a
    frame dropped on the way does not double it), else as known before."""
    if camera is None:
        return None
    if epoch != camera.epoch or seq <= camera.seq or captured_us <= camera.captured_us:
        return camera.gap_us
    return max(1, min(FRAME_GAP_MAX_US, (captured_us - camera.captured_us) // (seq - camera.seq)))
