"""The observations vision published, kept to be sent again to an embedded broker that restarted empty.

The embedded broker keeps its topics in memory (`xqarb up` restarts it when it dies). Ingest sends again the frames
it lost (services/ingest/frame_replay.py) and vision, keeping its trackers across the rejoin, skips those it read
already: it does not publish their observations again. Those observations (a BoardStable of a move, the hands,
the quiet and progress reports) the broker acknowledged, and the referee group had not read when it died, would be
lost, and the referee would miss a move (8.1.7: a board no single legal move explains). Vision therefore keeps the
observations it published in the last OBSERVATION_REPLAY_S (xqarb/kept.py), forgets those the referee group has
committed (asked about every READ_CHECK_S), and sends the rest again, in the order the lost broker acknowledged
them, as soon as it learns the broker lost them, before any new observation.

How it learns: a log's end never goes back on a broker that keeps its records; the end of a partition holding kept
observations found at 0, or before where it was at the last look, says the broker restarted empty
(`bus.log_went_back`). Vision
asks the ends with the referee group's commits (before forgetting anything: a commit on the new broker says nothing
of the lost one's offsets), when its consumer is given partitions (the rejoin that follows a restart), and before
sending a batch again that the broker did not acknowledge (a batch in flight when it died), so the kept ones go
first. A resting topic of the rolled pair (xq.observations.roll) emptied by the roller once the referee group
committed all of it is not taken for a restart: the kept observations the group committed there are forgotten
first. Where none of these saw it, an observation acknowledged at or before an offset the broker gave earlier on its
partition (the log counts from 0 again) has the kept ones sent again at once, late rather than lost. Sending again
is harmless where the referee had read them after all: it takes each event id once (services/referee/service.py). A
broker that keeps its log (Apache Kafka) never shows an end going back: nothing is sent again there.
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

class ObservationReplay:
    """The observations acknowledged lately, forgotten once the referee group read them, sent again once the broker
    lost them. Used by vision's one polling thread only."""

    def __init__(self, ends: bus.LogEnds, commits: bus.LogCommits, *, keep: RecordKeep | None = None,
                 check_s: float = READ_CHECK_S, clock: Callable[[], float] = time.monotonic,
                 close: Callable[[], None] | None = None, wall_clock: Callable[[], float] = time.time) -> None:
        self._ends_of = ends
        self._commits = commits
        self._close = close
        self.keep = keep if keep is not None else RecordKeep(OBSERVATION_REPLAY_S, OBSERVATION_REPLAY_MAX)
        self.check_s = check_s
        self.clock = clock
        self.wall_clock = wall_clock  # which topic of a rolled pair rests (bus.rolled_topics_at)
        self.replayed = 0  # observations sent again
        self.read = 0  # kept observations forgotten because the referee group committed them
        self.forgotten = 0  # not kept for want of room
        self._checked_at: float | None = None
        self._must_replay = False  # lost (a replay that failed part way, an offset given again): sent at the next check
        self._ends: dict[tuple[str, int], int] = {}  # the ends of the kept records' partitions at the last look
        self._acked: dict[tuple[str, int], int] = {}  # the highest offset acknowledged on each partition

    @classmethod
    def connect(cls, bootstrap: str, group: str = bus.REFEREE_GROUP) -> ObservationReplay:
        """Asking `bootstrap` for the ends of the observations' partitions and `group`'s commits of them."""
        ends, close_ends = bus.kafka_log_ends(bootstrap, client_id="xq-vision-observations-check")
        commits, close_commits = bus.kafka_log_commits(bootstrap, group, client_id="xq-vision-observations-read")

        def close() -> None:
            close_ends()
            close_commits()

        return cls(ends, commits, close=close)

    def kept(self, events: Sequence[Any], deliveries: Sequence[bus.Delivery]) -> None:
        """`events` acknowledged, stored where `deliveries` say (in the order they were sent)."""
        now = self.clock()
        forgotten = 0
        for event, d in zip(events, deliveries, strict=True):
            key = (d.topic, d.partition)
            if d.offset <= self._acked.get(key, -1):  # the log counts from 0 again: the broker lost the kept ones
                self._must_replay = True
            self._acked[key] = max(d.offset, self._acked.get(key, -1))
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
        if not now and not self._must_replay and self._checked_at is not None and at - self._checked_at < self.check_s:
            return 0
        self._checked_at = at
        self.keep.expire(at)
        partitions = self.keep.partitions()
        if not partitions and not self._must_replay:
            self._ends.clear()  # nothing kept to lose: a broker restarted from now on loses nothing of ours
            self._acked.clear()
            return 0
        try:
            if not self._must_replay:
                ends = dict(self._ends_of(partitions))
                back = bus.log_went_back(ends, self._ends)
                if back and all(bus.resting(topic, self.wall_clock()) for topic, _ in back):
                    # The roller empties a resting topic once the referee group committed all of it: those kept
                    # there that it committed are read, not lost (a broker restarted empty lost the group's commits
                    # with the records: none is forgotten then).
                    self.read += self.keep.forget_read(self._commits(partitions))
                    back &= set(self.keep.partitions())
                if not back:
                    self._ends.update(ends)
                    self.read += self.keep.forget_read(self._commits(partitions))
                    # a partition holding nothing kept any more loses nothing of ours: its offsets start afresh
                    # (a resting topic emptied by the roller takes records from 0 again a period later)
                    holding = set(self.keep.partitions())
                    self._ends = {k: v for k, v in self._ends.items() if k in holding}
                    self._acked = {k: v for k, v in self._acked.items() if k in holding}
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
        self._ends.clear()  # (another broker's logs from now on)
        self._acked = {}
        for where in moved.values():
            self._acked[where[:2]] = max(where[2], self._acked.get(where[:2], -1))
        self.replayed += len(moved)
        print(f"vision: the broker lost observations the referee had not read: {len(moved)} kept sent again in "
              f"{time.monotonic() - t0:.2f} s", file=sys.stderr, flush=True)
        return len(moved)

    def close(self) -> None:
        if self._close is not None:
            self._close()
