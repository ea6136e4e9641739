"""Records a producer published in the last seconds, kept to be sent again to a broker that lost them.

The embedded broker keeps its topics in memory: one that dies and is restarted empty loses every record it had
acknowledged and that the consumer group reading them had not read yet. Their producer keeps those of the last
`keep_s` seconds, in the order the broker acknowledged them, forgets those the reading group has committed
(`forget_read`), and sends the rest again, in that order, once the broker is back: ingest its camera frames
(services/ingest/frames_kept.py), vision its observations (services/vision/observations_kept.py).

Memory stays bounded: records older than `keep_s` are forgotten as new ones come, and beyond `max_size` (bytes, or
records where each counts 1) the oldest are forgotten too (counted by the caller: `keep` says how many).

Pure: values and the caller's clock in, values out; no I/O, no clock read, no lock (the adapter holds one).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

Where = tuple[str, int, int]  # (topic, partition, offset) where the broker stored a record


@dataclass(frozen=True, slots=True)
class Kept:
    """One record the broker acknowledged: the event as it was sent, its size, when it was acknowledged."""

    event: Any  # xqarb.events.Event
    size: int  # counted against the keep's `max_size`
    at: float  # the caller's clock (s) when the broker acknowledged it
    where: Where | None = None  # where the broker stored it (None: not known, never taken as read)


class RecordKeep:
    """The records acknowledged in the last `keep_s` seconds, at most `max_size` of them (summed sizes), oldest
    first."""

    def __init__(self, keep_s: float, max_size: int) -> None:
        if keep_s < 0 or max_size < 0:
            raise ValueError(f"keep_s and max_size must not be negative (got {keep_s}, {max_size})")
        self.keep_s = keep_s
        self.max_size = max_size
        self.size = 0
        self._kept: deque[Kept] = deque()

    def __len__(self) -> int:
        return len(self._kept)

    def keep(self, event: Any, size: int, now: float, where: Where | None = None) -> int:
        """Keep one record acknowledged at `now` (after those kept before: the order of their acknowledgements);
        returns how many records were forgotten for want of room (this one among them where it alone is over
        `max_size`). Records older than `keep_s` are forgotten too, uncounted: their time is over."""
        self.expire(now)
        if size > self.max_size or self.keep_s == 0:
            return 1 if self.keep_s > 0 else 0
        self._kept.append(Kept(event, size, now, where))
        self.size += size
        forgotten = 0
        while self.size > self.max_size:
            self.size -= self._kept.popleft().size
            forgotten += 1
        return forgotten

    def expire(self, now: float) -> None:
        """Forget the records acknowledged more than `keep_s` before `now`."""
        while self._kept and self._kept[0].at < now - self.keep_s:
            self.size -= self._kept.popleft().size

    def partitions(self) -> list[tuple[str, int]]:
        """The (topic, partition) where the kept records are stored, sorted."""
        return sorted({kept.where[:2] for kept in self._kept if kept.where is not None})

    def forget_read(self, commits: Mapping[tuple[str, int], int | None]) -> int:
        """Forget the records a consumer group committed (`commits`: (topic, partition) -> the next offset it reads,
        None: nothing committed); returns how many."""
        def read(kept: Kept) -> bool:
            if kept.where is None:
                return False
            committed = commits.get(kept.where[:2])
            return committed is not None and kept.where[2] < committed

        gone = [kept for kept in self._kept if read(kept)]
        if gone:
            self._kept = deque(kept for kept in self._kept if not read(kept))
            self.size -= sum(kept.size for kept in gone)
        return len(gone)

    def moved(self, where: Mapping[str, Where]) -> None:
        """The kept records sent again to a broker that restarted (`where`: event id -> where it stores them now);
        a kept record not among them (not sent again) is never taken as read from now on: where it was is gone."""
        self._kept = deque(replace(kept, where=where.get(kept.event.event_id)) for kept in self._kept)

    def events(self, now: float) -> list[Any]:
        """The events kept at `now`, in the order they were acknowledged (each board's in its order). They stay
        kept: a broker that dies again soon after lost them again."""
        self.expire(now)
        return [kept.event for kept in self._kept]
