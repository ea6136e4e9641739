"""The observations vision published, kept to be sent again to an embedded broker that restarted empty.

The embedded broker keeps its topics in memory (`xqarb up` restarts it when it dies). Ingest sends again the frames
it lost (services/ingest/frame_replay.py) and vision, keeping its trackers across the rejoin, skips those it read
already: it does not publish their observations again. Those observations (a BoardStable of a move, the hands,
the quiet and progress reports) the broker acknowledged, and the referee group had not read when it died, would be
lost, and the referee would miss a move (8.1.7: a board no single legal move explains). Vision therefore keeps the
observations it published in the last OBSERVATION_REPLAY_S (xqarb/kept.py), forgets those the referee group has
committed (asked about every READ_CHECK_S), and sends the rest again, in the order the lost broker acknowledged
them, as soon as it learns the broker lost them, before any new observation.

How it learns: a log's end never goes back on a broker that keeps its records; the ends of the partitions holding
kept observations below their offsets say the broker restarted empty. Vision asks them with the referee group's
commits (before forgetting anything: a commit on the new broker says nothing of the lost one's offsets), when its
consumer is given partitions (the rejoin that follows a restart), and before sending a batch again that the broker
did not acknowledge (a batch in flight when it died), so the kept ones go first. Sending again is harmless where
the referee had read them after all: it takes each event id once (services/referee/service.py). A broker that keeps
its log (Apache Kafka) never shows an end going back: nothing is sent again there.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from xqarb import bus
from xqarb.kept import RecordKeep, Where

# How long an acknowledged observation is kept should the broker lose it before the referee read it. The referee
# commits its reads within a second or so when it keeps up; 60 s covers a referee held up by a ledger write or a
# loaded machine (vision itself was measured 15-20 s behind the cameras), at a few hundred small records.
OBSERVATION_REPLAY_S = 60.0
# The most observations kept (each counts 1): 25 boards report about 1.5 observations a second (progress, still
# boards, hands), some 2,300 in 60 s; beyond this the oldest are forgotten (said), a referee that far behind being
# a fault of its own.
OBSERVATION_REPLAY_MAX = 20_000
# How often the referee group's commits (and the ends of the partitions holding kept observations) are asked: an
# observation the referee read in the last second before the broker died is sent again, and the referee takes it
# once.
READ_CHECK_S = 1.0
# Observations sent again per batch, each acknowledged before the next.
REPLAY_BATCH = 500

Ends = Callable[[Sequence[tuple[str, int]]], Any]  # (topic, partition) -> next offset (xqarb.ingest.outbox)
Commits = Callable[[Sequence[tuple[str, int]]], Any]  # (topic, partition) -> the group's next offset or None


class ObservationReplay:
    """The observations acknowledged lately, forgotten once the referee group read them, sent again once the broker
    lost them. Used by vision's one polling thread only."""

    def __init__(self, ends: Ends, commits: Commits, *, keep: RecordKeep | None = None,
                 check_s: float = READ_CHECK_S, clock: Callable[[], float] = time.monotonic,
                 close: Callable[[], None] | None = None) -> None:
        self._ends = ends
        self._commits = commits
        self._close = close
        self.keep = keep if keep is not None else RecordKeep(OBSERVATION_REPLAY_S, OBSERVATION_REPLAY_MAX)
        self.check_s = check_s
        self.clock = clock
        self.replayed = 0  # observations sent again
        self.read = 0  # kept observations forgotten because the referee group committed them
        self.forgotten = 0  # not kept for want of room
        self._checked_at: float | None = None
        self._must_replay = False  # a replay that failed part way: sent again at the next check

    @classmethod
    def connect(cls, bootstrap: str, group: str = bus.REFEREE_GROUP) -> ObservationReplay:
        """Asking `bootstrap` for the ends of the observations' partitions and `group`'s commits of them."""
        from xqarb.ingest.outbox import kafka_log_commits, kafka_log_ends

        ends, close_ends = kafka_log_ends(bootstrap)
        commits, close_commits = kafka_log_commits(bootstrap, group)

        def close() -> None:
            close_ends()
            close_commits()

        return cls(ends, commits, close=close)

    def kept(self, events: Sequence[Any], deliveries: Sequence[bus.Delivery]) -> None:
        """`events` acknowledged, stored where `deliveries` say (in the order they were sent)."""
        now = self.clock()
        forgotten = 0
        for event, d in zip(events, deliveries, strict=True):
            forgotten += self.keep.keep(event, 1, now, (d.topic, d.partition, d.offset))
        if forgotten:
            self.forgotten += forgotten
            print(f"vision: {forgotten} observation(s) no longer kept to be sent again after a broker restart "
                  f"({len(self.keep)} kept: the referee group reads far behind)", file=sys.stderr, flush=True)

    def check(self, producer: Any, *, now: bool = False) -> int:
        """About every `check_s` (at once with `now`): the kept observations sent again where the broker lost them,
        else those the referee group committed forgotten. Returns how many were sent again. A broker that does not
        answer leaves everything kept, to be looked at again."""
        at = self.clock()
        if not now and self._checked_at is not None and at - self._checked_at < self.check_s:
            return 0
        self._checked_at = at
        self.keep.expire(at)
        partitions = self.keep.partitions()
        if not partitions and not self._must_replay:
            return 0
        try:
            lost = self._must_replay or self.keep.lost(self._ends(partitions))
            if not lost:
                self.read += self.keep.forget_read(self._commits(partitions))
                return 0
        except bus.BusError as exc:
            print(f"vision: the kept observations were not checked ({exc})", file=sys.stderr, flush=True)
            return 0
        return self.replay(producer)

    def replay(self, producer: Any) -> int:
        """Send every kept observation again, in order; they stay kept, known where the broker now stores them."""
        events = self.keep.events(self.clock())
        moved: dict[str, Where] = {}
        t0 = time.monotonic()
        try:
            for start in range(0, len(events), REPLAY_BATCH):
                batch = events[start:start + REPLAY_BATCH]
                for event, d in zip(batch, producer.send_many(bus.OBSERVATIONS, batch), strict=True):
                    moved[event.event_id] = (d.topic, d.partition, d.offset)
        except bus.PublishError as exc:
            self._must_replay = True
            print(f"vision: {len(moved)} of {len(events)} kept observations sent again before the broker failed "
                  f"({exc}); all again at the next check", file=sys.stderr, flush=True)
            return len(moved)
        self._must_replay = False
        self.keep.moved(moved)
        self.replayed += len(moved)
        print(f"vision: the broker lost observations the referee had not read: {len(moved)} kept sent again in "
              f"{time.monotonic() - t0:.2f} s", file=sys.stderr, flush=True)
        return len(moved)

    def close(self) -> None:
        if self._close is not None:
            self._close()
