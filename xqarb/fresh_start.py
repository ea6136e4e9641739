"""Where a consumer starts a partition of the camera frames it has no offset to resume from (pure; no I/O, no clock).

Apache Kafka keeps xq.frames for the topic's own retention (typically 24 h); the embedded broker rolls it (a period
or two of frames, xqarb.bus.FRAMES_ROLL_S). A vision group reading such a partition from its start (`earliest`)
would read up to a day of frames before reaching the present, blind all that time: a venue's first start, a group
whose committed offsets expired, a partition first assigned. It starts instead at the first frame the broker took
no earlier than FRESH_FRAMES_BACK_S before now, found with ListOffsets by timestamp (KafkaConsumer.offsets_for_times).
A partition with a committed offset resumes from it: nothing read twice or lost there. The other topics keep
`earliest`: the referee must read every input, and vision every accepted position (xq.game-events, xq.arbiter).
A rolled topic without a commit whose pair the group committed on the same partition starts at its beginning
(`read_on_in_pair`): it was made again, empty, since, so it holds only frames the group has not read.
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from enum import Enum

# How far back from now a vision process starts a partition of frames it has no offset to resume from. Enough for
# its tracker to find and calibrate the board (a still frame without a hand, looked for every 2 s: TrackerConfig
# find_every_us) and to see the position standing before the next move (a hand covers the board a few seconds at
# most; the position stands the rest of the time), so that the tracker, seeded with the game's accepted position
# (services/vision/resume.py), meets it on a still board; far less than any retention (hours). At 2 fps: 60 frames.
FRESH_FRAMES_BACK_S = 30.0


class FreshStart(Enum):
    """A start that is not a known offset."""

    END = "end"  # no frame taken since the target time: read from the next one
    RESET = "reset"  # the broker did not search by time: the consumer's `auto_offset_reset` decides


def fresh_target_ms(now_s: float, back_s: float) -> int:
    """The timestamp (ms since the epoch) ListOffsets is asked for: `back_s` before `now_s` (never negative, which
    the client refuses)."""
    return max(0, int((now_s - back_s) * 1000))


def lacks_offset(committed: int | None, log_start: int | None) -> bool:
    """Whether a partition has no offset to resume from: none committed, or one before the first record the broker
    still holds (those frames are gone with the retention; Kafka would reset it to `earliest`). `log_start`: None
    where unknown (then only a missing commit counts)."""
    return committed is None or (log_start is not None and committed < log_start)


def fresh_start(target_ms: int, found: tuple[int, int] | None) -> int | FreshStart:
    """The offset to start at, given the broker's answer to ListOffsets at `target_ms`: `found` is (offset,
    timestamp) of the first record stamped at or after it, None where there is none (Apache Kafka answers offset -1,
    which kafka-python gives as None: no frame since, so the end). An answer stamped before the target is no
    search by time (the embedded broker answers the log's first record whatever the time, and
    timestamp -1 on an empty partition): RESET."""
    if found is None:
        return FreshStart.END
    offset, timestamp = found
    if timestamp < target_ms:
        return FreshStart.RESET
    return offset


def read_on_in_pair(topic: str, pair_of: Mapping[str, str], committed_topics: Container[str]) -> str | None:
    """The other topic of `topic`'s rolled pair (`pair_of`: each topic of a pair -> the other) where the group has
    committed the same partition (`committed_topics`), or None. A partition of `topic` without a commit then starts
    at its beginning, not fresh: a rolled topic is made again, empty, each period, so all it holds came since the
    group read on in the other one, and a fresh start would skip the first seconds after a switch (a move in
    progress) when the member reading the partition stopped before its first commit in the new topic."""
    other = pair_of.get(topic)
    return other if other is not None and other in committed_topics else None
