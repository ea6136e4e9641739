"""The live stream's reading of xq.game-events where the embedded broker rolls it (xq.game-events and
xq.game-events.roll, a period each: `xqarb.bus.ROLLED`), so that stream ids keep their meaning across rolls.

Each topic of the pair is deleted and made again every other period, its offsets counting from 0 again: an offset
alone no longer names one event. An event's stream offset is therefore its generation (the period whose producers
wrote it, `bus.generation`, from the record's timestamp) times GENERATION_STRIDE, plus its offset in the topic
(`stream_offset`): stream offsets keep growing, and an API process that restarts gives every event the broker still
holds the same one. A resting topic of game events is kept about a period (`bus.ROLL_KEEP_S`); an id naming an
event of a generation already emptied names nothing the stream holds, and the client is told to reset
(`StreamHub.resume_index`).

Read in order (`RollOrder`): a board's events in the order of their generations (xqarb.roll_order), whichever topic
rests: the topic taking new events may still hold, before them, events of two periods ago that the vision group
had not read when the roller would have emptied it, older than those of the resting topic. The topic taking new
events also waits ROLL_SETTLE_S after each switch (events acknowledged late into the other topic). An event
acknowledged later still into the resting topic is streamed where it is read (StreamHub.add keeps it), not dropped.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from xqarb import bus
from xqarb.roll_order import roll_plan

# The offsets of one generation in one partition stay under this: a billion events a partition a period.
GENERATION_STRIDE = 10**9
# Generations count from this moment (2023-11-14 UTC), so that stream offsets keep to the 18 digits of a 64-bit
# offset (DESIGN: a position's offsets; api.py refuses longer ones) even for periods of a second.
GENERATION_EPOCH_S = 1_700_000_000.0


def stream_offset(topic: str, offset: int, timestamp_ms: int) -> int:
    """The stream offset of the record at `offset` of `topic` (one of a rolled pair) stamped `timestamp_ms`."""
    period_s = bus.ROLL_PERIODS_S[bus.base_topic(topic)]
    generation = bus.generation(topic, timestamp_ms) - int(GENERATION_EPOCH_S // period_s)
    return max(0, generation) * GENERATION_STRIDE + offset


def generation_of(stream_offset_: int) -> int:
    """Which generation a stream offset names (0 for the offsets of a topic that does not roll)."""
    return stream_offset_ // GENERATION_STRIDE


class RollOrder:
    """Pauses and resumes the partitions a group-less KafkaConsumer reads of a rolled pair (module docstring);
    `order(assigned)` before each poll, and the poll's records through `seen`. Also reads a resting topic from its
    start again once the roller emptied it and made it again (its end 0 where this reader had read some)."""

    def __init__(self, consumer: Any, base: str, wall_clock: Callable[[], float] = time.time) -> None:
        self.consumer = consumer
        self.base = base
        self.wall_clock = wall_clock
        self._ends: dict[Any, int] = {}
        self._ends_at = float("-inf")  # monotonic seconds of the last look at the pair's ends
        self._busy: set[Any] = set()  # partitions the last poll returned records of: they may hold more fetched
        self._heads: bus.Heads = {}  # the generation of a partition's next record, where one was held back

    def order(self, assigned: Iterable[Any]) -> None:
        now = self.wall_clock()
        current, previous = bus.rolled_topics_at(self.base, now)
        settling = bus.since_switch_s(now, self.base) < bus.ROLL_SETTLE_S
        parts = [tp for tp in assigned if tp.topic in (current, previous)]
        if time.monotonic() - self._ends_at >= bus.ROLL_CHECK_S and parts:
            from kafka.errors import KafkaError

            try:
                self._ends = {tp: int(end or 0) for tp, end in self.consumer.end_offsets(parts).items()}
            except KafkaError:  # the roller deleting and making it again just now: the ends as last seen
                return
            self._ends_at = time.monotonic()
            for tp in parts:
                if tp.topic == previous and self._ends.get(tp) == 0 and (self.consumer.position(tp) or 0) > 0:
                    self.consumer.seek_to_beginning(tp)  # emptied and made again: offsets from 0
                    self._heads.pop(tp, None)
        positions = {tp: self.consumer.position(tp) or 0 for tp in parts}
        sides = bus.roll_sides(parts, positions, self._ends, self._heads, self._busy)
        wait, go, _ = roll_plan(parts, current, previous, sides, settling)
        if wait:
            self.consumer.pause(*wait)
        if go:
            self.consumer.resume(*go)

    def seen(self, batches: Mapping[Any, list[Any]]) -> dict[Any, list[Any]]:
        """The last poll's records less those that must wait for records of the other topic not read yet (held
        back, read again later: `bus.order_rolled`). Every partition polled stays a key (an empty list where all
        of its records were held back): a poll that returned records is never taken for the end of the topic."""
        runs, _ = bus.order_rolled(self.consumer, batches, self._ends, self._heads, self.wall_clock())
        kept: dict[Any, list[Any]] = {tp: [] for tp in batches}
        for tp, records in runs:
            kept.setdefault(tp, []).extend(records)
        self._busy = {tp for tp, records in kept.items() if records}
        return kept
