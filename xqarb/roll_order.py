"""The order in which a reader reads one partition of a rolled pair of topics (`xqarb.bus.ROLLED`): the order of
the generations its records were written in, whatever the reader's lag.

A rolled pair alternates: even periods write the base topic, odd ones its second topic, and a resting topic is
emptied only once its readers' group has read it. A group more than a period behind finds the topic that takes new
records again not emptied: generation n-1 followed by n+1 there, n in the other topic. Which topic rests (the wall
clock) then says nothing of which holds the older records; each record's generation (`bus.generation`, from the
producer's time stamp) does. Records of one topic come in generation order; across the two, a record is read only
once the other topic can deliver nothing older: its next record is newer, or it has nothing unread and takes no
older record any more.

A reader learns a topic's next generation only by fetching it: a fetched record that must wait is held back (its
partition sought back to it and paused) and its generation remembered (the `head`). Pure: the adapters
(`bus.Consumer`, `services/referee/stream_roll.RollOrder`) pass in what they know and apply the answers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

# Nothing older can come from a topic: it has nothing unread, and what it takes from now on is newer.
NOTHING_OLDER = float("inf")


class RollSide(NamedTuple):
    """What a reader knows at a look of one partition of one topic of a rolled pair."""

    unread: bool  # it holds records not read yet (before the end seen at the look)
    head: float | None  # the generation of the next record to read, where known (one held back before)


def roll_goes(side: RollSide, other: RollSide, *, current: bool, holding: bool) -> bool:
    """Whether a reader fetches a partition of one topic of a rolled pair now (`side`), the same partition of the
    other topic being `other`. `current`: `side` is the topic taking new records; `holding`: within the hold after
    a switch, when records sent before it may still be acknowledged into the resting topic (the current one waits).

    While the other has unread records, a side with unread records of a generation not known is fetched (to learn
    it; what it returns is held back until the other's is known too), and one whose next generation is known only
    where it is older than the other's (the resting topic first where both are equal: records without a time). The
    current topic with nothing unread at the look waits: what it takes from then on is newer than anything held."""
    if other.unread:
        if side.head is None:
            return side.unread or not current
        if other.head is None:
            return False
        return side.head < other.head or (side.head == other.head and not current)
    return not (current and holding)


def roll_plan(parts: Iterable[Any], current: str, previous: str, sides: Mapping[Any, RollSide],
              holding: bool) -> tuple[list[Any], list[Any], dict[Any, Any]]:
    """(the partitions to pause, those to fetch, each paused one -> the partition of the other topic whose reading
    up to its end seen lets it go) for `parts` (partitions with `.topic` and `.partition`, of the pair's topics
    `current` and `previous`), by `roll_goes`. A partition whose other topic's is not among `parts` counts that
    one as read."""
    parts = list(parts)
    by_key = {(tp.topic, tp.partition): tp for tp in parts}
    wait: list[Any] = []
    go: list[Any] = []
    behind: dict[Any, Any] = {}
    for tp in parts:
        is_current = tp.topic == current
        other = by_key.get((previous if is_current else current, tp.partition))
        other_side = sides[other] if other is not None else RollSide(False, None)
        if roll_goes(sides[tp], other_side, current=is_current, holding=holding):
            go.append(tp)
            continue
        wait.append(tp)
        if other is not None and other_side.unread and not (is_current and holding):
            behind[tp] = other
    return wait, go, behind


def roll_merge(previous: Sequence[float], current: Sequence[float], previous_after: float | None,
               current_after: float | None) -> list[tuple[int, int, int]]:
    """The fetched records of one partition of a rolled pair in reading order: runs (0 for the resting topic's
    records, 1 for the current one's; start; stop) over the generations `previous` and `current` (each topic's
    records in offset order). `*_after`: the generation of the next record the topic can deliver after these (None:
    not known, which holds back every record of the other topic; NOTHING_OLDER where nothing older can come).
    Records after the last run of their topic are held back: they come after records not fetched yet."""
    gens = (previous, current)
    afters = (previous_after, current_after)
    taken = [0, 0]
    runs: list[tuple[int, int, int]] = []
    while True:
        nexts = [gens[s][taken[s]] if taken[s] < len(gens[s]) else afters[s] for s in (0, 1)]
        side = next((s for s in (0, 1) if taken[s] < len(gens[s]) and _first(nexts[s], nexts[1 - s], s == 0)),
                    None)
        if side is None:
            return runs
        if runs and runs[-1][0] == side:
            runs[-1] = (side, runs[-1][1], taken[side] + 1)
        else:
            runs.append((side, taken[side], taken[side] + 1))
        taken[side] += 1


def _first(generation: float, other: float | None, resting: bool) -> bool:
    """Whether a record of `generation` is read before what the other topic delivers next (`other`)."""
    if other is None:
        return False
    return generation < other or (resting and generation == other)
