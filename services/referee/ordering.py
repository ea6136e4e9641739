"""Event-time order across topics: a board's clock and arbiter inputs wait for its camera to catch up.

One board's inputs come on three topics (xq.observations from vision, xq.clock and xq.arbiter from ingest) and
Kafka keeps order only within a partition. Clock presses reach the referee in milliseconds while the camera's
snapshot of the same move comes after the board has been still for a while and vision has read it; folded in
arrival order, a press made right after a move would look like a press without a move (8.1.7). So a clock or
arbiter input is held until an observation of that board at or after its time has arrived (the camera has seen
the board as it was then), or until `hold_s` has passed (a board without a camera, or a stalled one), and inputs
are released in event time. The converse holds an observation: it waits while the board's device topics are not
read up to their ends (the caller says which partitions are behind), so that a backlog read topic by topic (a
member given partitions with unread inputs, after a rebalance or a broker restart) is folded in event time too.

A board with a camera holds its clock presses up to `camera_hold_s` instead: there a camera that has not caught
up is vision restarting or reading the frames sent meanwhile, and a press folded before the move it followed
would be ruled a press without a move (8.1.7, two of them a loss by 4.1.9); beyond that while the board's camera
time keeps rising (vision on a loaded machine reading the frames of minutes ago), until it stood still for
`camera_stall_s`. Which boards have a camera:
  * the venue's configuration (`camera_boards`: a device that sends frames), known from the first input on, so
    that neither a referee that restarts nor a vision process killed before its first report of a board makes
    the referee fold the board's first presses after the short hold;
  * vision's reports, which also say whether the camera works: a CameraProgress (about once a second of a
    board's frames read, even of a still board) says it does, a CameraQuiet says it sent no frame for a while
    (`back` false) or sends again (`back` true).
An arbiter needs both the order and the rulings in time, so the long hold applies only while the camera is
expected to report: not once vision said it is quiet (the arbiter has its alert and watches the board; holding
every press of a camera that is off would delay each ruling and the clocks on the stream by minutes), and, for a
configured camera this process has had no report of at all, only until `camera_hold_s` after its first input
here (a camera that never sends a frame is never reported quiet: vision watches a board from its first frame).
Other inputs keep `hold_s`: an arbiter's action after the last frames of a game is not delayed by minutes.
CameraProgress only moves the board's camera time on: it is no input of the game and is never released.

The hold decides only when an input is folded, and so the order of a board's inputs in its ledger; every replay
(a restart's rebuild, `xqarb replay-ledger`, an appeal) folds the ledger's order, never the hold again. Pure: the
caller passes the time (a monotonic clock) in.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from xqarb.events import Event

PROGRESS = "CameraProgress"  # vision: the board's frames read up to occurred_at (services/vision/progress.py)
# What vision reports (DESIGN, event catalogue): the camera's view of a board.
VISION_OBSERVATIONS = frozenset({
    "BoardCalibrated", "HandEntered", "HandLeft", "PieceLifted", "PiecePlaced", "PieceNudged", "PieceMisaligned",
    "BoardStable", "CameraFault", "CameraQuiet", PROGRESS,
})  # fmt: skip
# How long (s) a board whose vision reports its progress holds a clock press for the camera: longer
# than a vision process takes to be restarted by the supervisor and to read the frames sent meanwhile (15-45 s
# measured under load, bench/faults.py), short enough that a camera gone for good delays a ruling by minutes only
# (the arbiter is told of a quiet camera after 20 s).
CAMERA_HOLD_S = 120.0
# ...and longer while the board's camera time keeps moving on (vision reading the frames sent while it was down, on
# a loaded machine more than CAMERA_HOLD_S after the press): the press waits until the camera reaches it, unless the
# camera time stood still this long (s). Vision reports a board's progress about once a second of its frames read
# (services/vision/progress.py); the arbiter hears of a camera quiet for 20 s.
CAMERA_STALL_S = 30.0

LIVE, QUIET = "live", "quiet"  # what vision last said of a board's camera: reading its frames, or no frame


@dataclass(frozen=True, slots=True)
class Arrival:
    """An input that came without Kafka coordinates (`xqarb referee run`): its place in the input instead."""

    topic: str
    partition: int
    offset: int
    event: Event

    @classmethod
    def of(cls, event: Event, number: int) -> Arrival:
        return cls("camera" if event.type in VISION_OBSERVATIONS else "devices", 0, number, event)


class Input(Protocol):
    """What the buffer needs of a consumed record."""

    topic: str
    partition: int
    offset: int
    event: Event | None


@dataclass
class _Held:
    order: int
    arrived: float  # the caller's clock when the input came
    record: Any


@dataclass
class EventTimeOrder:
    camera_topics: frozenset[str]
    hold_s: float = 10.0
    camera_hold_s: float = CAMERA_HOLD_S
    camera_stall_s: float = CAMERA_STALL_S
    camera_boards: frozenset[str] = frozenset()  # the boards the venue configures with a camera
    _pending: dict[str, list[_Held]] = field(default_factory=dict)
    _camera_time: dict[str, int] = field(default_factory=dict)
    _camera: dict[str, str] = field(default_factory=dict)  # board -> LIVE or QUIET, vision's latest word
    _camera_moved: dict[str, float] = field(default_factory=dict)  # board -> the caller's clock when its time last rose
    # configured camera boards with no report yet -> (the caller's clock at their first input here, its topic and
    # partition: the board's allowance is counted again if the partition goes and comes back)
    _unheard_since: dict[str, tuple[float, str, int]] = field(default_factory=dict)
    _arrivals: int = 0

    def add(self, records: Iterable[Any], now: float) -> None:
        for record in records:
            event = record.event
            if event is None:
                continue
            board = event.board_id
            rose = board not in self._camera_time or event.occurred_at > self._camera_time[board]
            if record.topic in self.camera_topics and rose:
                self._camera_time[board] = event.occurred_at
                self._camera_moved[board] = now
            if event.type == PROGRESS:
                self._camera[board] = LIVE
                continue
            if event.type == "CameraQuiet":
                self._camera[board] = LIVE if event.data.get("back") else QUIET
            if board in self.camera_boards and board not in self._camera:
                self._unheard_since.setdefault(board, (now, record.topic, record.partition))
            self._arrivals += 1
            self._pending.setdefault(board, []).append(_Held(self._arrivals, now, record))

    def deadline(self, held: _Held) -> float:
        """When the held input is folded even if the camera has not seen its time (the caller's clock). Decided
        at each release from what is known then: a report of the camera after the input came still counts."""
        short = held.arrived + self.hold_s
        event = held.record.event
        if event.type != "ClockPressed":
            return short
        board = event.board_id
        camera = self._camera.get(board)
        if camera == LIVE:
            # (a camera time that keeps rising will reach the press: it waits for it; one that stood still for
            # `camera_stall_s` may never)
            moving = self._camera_moved.get(board, held.arrived) + self.camera_stall_s
            return max(short, held.arrived + self.camera_hold_s, moving)
        if camera is None and board in self._unheard_since:
            # Counted from the board's first input here, not from each press: a configured camera that never
            # reports delays the rulings of this process's first `camera_hold_s` on the board only.
            return max(short, self._unheard_since[board][0] + self.camera_hold_s)
        return short  # no camera, or one vision reported quiet

    def release(self, now: float, devices_behind: frozenset[int] = frozenset()) -> list[Any]:
        """The inputs that may be folded now, each board's in event time (arrival order among equal times).

        `devices_behind`: the partition numbers whose device topics (clock, arbiter) the caller has not read up to
        their ends. A board's inputs share its partition number on every topic (key = board), so an observation
        waits while its number is behind: a press made before it may still be unread (a member given a backlog
        reads one topic's records before another's), and folded after it, that press would be a press without
        a move (8.1.7). It waits `hold_s` at most (a device topic that does not catch up)."""
        out: list[Any] = []
        for board in list(self._pending):
            queue = sorted(self._pending[board], key=lambda h: (h.record.event.occurred_at, h.order))
            seen_until = self._camera_time.get(board)
            n = 0
            for held in queue:
                record = held.record
                if record.topic in self.camera_topics:
                    ready = record.partition not in devices_behind or now >= self.deadline(held)
                else:
                    ready = (seen_until is not None and record.event.occurred_at <= seen_until) or (
                        now >= self.deadline(held)
                    )
                if not ready:
                    break  # later inputs of this board wait too: the board's order is kept
                n += 1
            out.extend(h.record for h in queue[:n])
            if n == len(queue):
                del self._pending[board]
            else:
                self._pending[board] = queue[n:]
        return out

    def held_from(self) -> dict[tuple[str, int], int]:
        """Per partition, the lowest offset still held (offsets at or after it must not be committed)."""
        lowest: dict[tuple[str, int], int] = {}
        for queue in self._pending.values():
            for held in queue:
                key = (held.record.topic, held.record.partition)
                lowest[key] = min(lowest.get(key, held.record.offset), held.record.offset)
        return lowest

    def drop(self, topic: str, partitions: Iterable[int]) -> None:
        """Forget held inputs of partitions given to another process (they are delivered to it again)."""
        gone = {(topic, p) for p in partitions}
        for board in [b for b, (_, t, p) in self._unheard_since.items() if (t, p) in gone]:
            del self._unheard_since[board]
        for board in list(self._pending):
            kept = [h for h in self._pending[board] if (h.record.topic, h.record.partition) not in gone]
            if kept:
                self._pending[board] = kept
            else:
                del self._pending[board]

    def waiting(self, board: str) -> bool:
        """Whether inputs of the board are still held."""
        return board in self._pending

    def __len__(self) -> int:
        return sum(len(q) for q in self._pending.values())
