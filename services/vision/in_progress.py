"""A move in progress on a board: what vision may not yet claim to have read, nor let go of.

From the frame in which a hand reaches over a board (or anything changes on it) to the still board that follows,
the tracker holds what it has seen of the move in its state only: HandLeft, PiecePlaced and the BoardStable that
makes the move come at the end. Two things must not run ahead of that end:
  * the board's watermark (CameraProgress): the referee releases a clock press once the camera has been read up to
    the press's time (services/referee/ordering.py). A press made as the hand leaves is before the still board that
    shows the move; released on a watermark past it while the tracker still waits for that still board, it is
    folded before the move, and should the process die then, the move comes only from the next owner's first look:
    after the press, a press without a move (8.1.7);
  * the committed offset of the board's frames: a process killed in the middle of a move takes its tracker's state
    with it, and the next owner, starting after the frames this one committed, never sees the hand leave; starting
    just before the hand came, its fresh tracker has not seen the board still and follows no move either. Held back
    to the board's last still frames (`read_back_us` of them, before a move or, between moves, before the frame
    read last), the next owner reads a move again from there, whole (its observations' ids derive from the
    frames', and the referee folds each input once).
A move in progress longer than `hold_max_us` (a hand resting on the board, a camera that stopped in the middle)
holds neither any longer: the watermark moves on and the frames are let go, as before a move began, so that a
board never stalls its presses or its partition for good. A board not seen still yet (its tracker calibrating, or
waiting for the position its game stands at) holds nothing: no move of it is followed yet.

Pure: the frames' times and where they are stored (an opaque log and offset) in; no Kafka, no clock.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field

# How long (µs of the board's frame time) a move in progress holds the board's watermark and its frames: far longer
# than a move takes (a hand over the board for a few seconds), far shorter than a rolled frames topic is kept (60 s,
# xqarb.bus.FRAMES_ROLL_S), so that a hold never outlives the frames it names.
HOLD_MAX_US = 20_000_000
# How much (µs of frame time) of the still board before a move a next owner reads again: its tracker starts afresh,
# finds the board and must see it still (TrackerConfig.stable_us, 0.75 s) before the hand comes, or it follows no
# move and only infers one from its first look after it.
READ_BACK_US = 3_000_000

Key = tuple[int, str]  # (partition, board)


@dataclass
class _Move:
    since: int  # frame time of the board's last still frame
    read_from: dict[Hashable, int] = field(default_factory=dict)  # frames log -> the first offset to read again


@dataclass
class MovesInProgress:
    hold_max_us: int = HOLD_MAX_US
    read_back_us: int = READ_BACK_US
    _moves: dict[Key, _Move] = field(default_factory=dict)
    # board -> (frame time, log, offset) of its still frames since its last move, the last `read_back_us` of them:
    # where a move that begins after them is read again from
    _still: dict[Key, list[tuple[int, Hashable | None, int | None]]] = field(default_factory=dict)
    _latest: int = 0  # frame time of the latest frame of any board: a board whose frames stopped mid-move expires

    def frame(self, key: Key, at: int, still: bool, log: Hashable | None = None, offset: int | None = None) -> None:
        """A frame of the board handled at frame time `at`, after which its tracker holds a still board with nothing
        in progress (`still`) or not; `log`, `offset`: where the frame is stored (None: not known)."""
        self._latest = max(self._latest, at)
        if still:
            run = [] if self._moves.pop(key, None) is not None else self._still.get(key, [])
            run.append((at, log, offset))
            self._still[key] = [frame for frame in run if at - frame[0] <= self.read_back_us]
            return
        run = self._still.get(key)
        if not run:
            return  # never seen still yet (its tracker calibrating): no move of it is followed, none to lose
        move = self._moves.get(key)
        if move is None:
            move = self._moves[key] = _Move(since=run[-1][0])
            for _, still_log, still_offset in run:  # (the next owner's tracker starts from the still board)
                if still_log is not None and still_offset is not None:
                    move.read_from.setdefault(still_log, still_offset)
        if log is not None and offset is not None:
            move.read_from.setdefault(log, offset)

    def watermark(self, key: Key, read_to: int) -> int:
        """How far the board's frames may be said to be read (CameraProgress), they being read up to `read_to`: no
        further than the start of a move in progress, unless that move has gone on for `hold_max_us`."""
        move = self._moves.get(key)
        if move is None or read_to - move.since >= self.hold_max_us:
            return read_to
        return min(read_to, move.since)

    def read_from(self) -> dict[Hashable, int]:
        """Per frames log, the first offset a next owner must read again: the earliest of the moves in progress on
        it, and of the still boards' last `read_back_us` (a move may begin with the next frame, and the next owner's
        fresh tracker must see the board still before it; none where `read_back_us` is 0), leaving out those older
        than `hold_max_us` by the latest frame time seen of any board (a camera that stopped)."""
        out: dict[Hashable, int] = {}

        def hold(log: Hashable | None, offset: int | None) -> None:
            if log is not None and offset is not None:
                out[log] = min(out.get(log, offset), offset)

        for move in self._moves.values():
            if self._latest - move.since < self.hold_max_us:
                for log, offset in move.read_from.items():
                    hold(log, offset)
        for key, run in self._still.items() if self.read_back_us > 0 else ():
            if key not in self._moves and run and self._latest - run[-1][0] < self.hold_max_us:
                for _, log, offset in run:
                    hold(log, offset)
        return out

    def in_progress(self, key: Key) -> bool:
        return key in self._moves

    def drop(self, partitions: Iterable[int]) -> None:
        """Forget the boards of partitions given to another process."""
        gone = set(partitions)
        for table in (self._moves, self._still):
            for key in [k for k in table if k[0] in gone]:
                del table[key]
