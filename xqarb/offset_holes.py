"""Holes in a partition's offsets: a record acknowledged to its producer but not yet readable.

On a topic without compaction or transactions (all of ours, DESIGN: nothing relies on them) a partition's offsets
are contiguous, and a reader that moves past an offset never reads that record. The embedded broker was measured to
break this at a partition's tail: with several producers sending to one partition within the same moment, a fetch
at the tail sometimes answers a record stored after one that has its offset (and is acknowledged) but is not
readable yet; kafka-python then moves the reader past the earlier one, which it never returns
(bench/tail_holes.py: 2 of 12,000 records with 8 producers, 1 of 6,000 with 2; every one of them there when the
partition is read again from its start). For the referee that is an observation never folded: the next one shows
two moves, an AttentionNeeded instead of a MoveMade.

So a reader returns a partition's records only up to the first hole, and reads again from the missing offset; the
record comes within milliseconds. A hole still there after `wait_s` (a broker that lost a record, or one that
leaves holes by design) is passed over, said and counted: a reader never stalls on it. Pure: the caller passes in
what it read and the time.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

# How long (s) a reader waits for a missing offset before it passes over it: far longer than a record acknowledged
# to its producer takes to become readable (milliseconds), short enough that a true hole delays its partition's
# later records by a ruling's worth at most.
HOLE_WAIT_S = 2.0


def first_hole(start: int | None, offsets: Sequence[int]) -> int | None:
    """The index in `offsets` (ascending, one partition's records as read from position `start`; None: not known)
    of the first record read after a missing offset; None where there is no hole."""
    expected = start
    for i, offset in enumerate(offsets):
        if expected is not None and offset > expected:
            return i
        expected = offset + 1
    return None


@dataclass
class OffsetHoles:
    """What a reader knows of the holes it waits on, per partition."""

    wait_s: float = HOLE_WAIT_S
    waited: int = 0  # holes read again that filled (the missing record came)
    passed: int = 0  # offsets passed over, still missing after `wait_s`
    _since: dict[Hashable, tuple[int, float]] = field(default_factory=dict)  # partition -> (missing offset, since)

    def readable(self, partition: Hashable, start: int | None, offsets: Sequence[int], now: float
                 ) -> tuple[int, int | None]:
        """(how many of `offsets` may be returned now, the offset to read again from where they stop short of the
        end: the first missing one, else None). `start`: the partition's position when these were read."""
        begin, expected = 0, start
        while True:
            hole = first_hole(expected, offsets[begin:])
            if hole is None:
                self._filled(partition)
                return len(offsets), None
            hole += begin
            missing = expected if hole == begin else offsets[hole - 1] + 1
            assert missing is not None  # (first_hole finds none at the first record of an unknown start)
            since = self._since.get(partition)
            if since is None or since[0] != missing:
                self._filled(partition)
                since = self._since[partition] = (missing, now)
            if now - since[1] < self.wait_s:
                return hole, missing
            self.passed += offsets[hole] - missing  # waited long enough: the records after it are returned
            del self._since[partition]
            begin, expected = hole, offsets[hole]

    def waiting(self) -> dict[Hashable, int]:
        """The partitions waiting on a hole, with its first missing offset."""
        return {partition: missing for partition, (missing, _) in self._since.items()}

    def forget(self, partition: Hashable) -> None:
        """A partition sought elsewhere, or no longer read: its hole, if any, is not waited on."""
        self._since.pop(partition, None)

    def _filled(self, partition: Hashable) -> None:
        if self._since.pop(partition, None) is not None:
            self.waited += 1
