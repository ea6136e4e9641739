"""A reader stops at a missing offset and reads again from it, until it comes or has been waited for long enough."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from xqarb.offset_holes import OffsetHoles, first_hole


def test_contiguous_offsets_have_no_hole() -> None:
    assert first_hole(5, [5, 6, 7]) is None
    assert first_hole(None, [9, 10]) is None
    assert first_hole(3, []) is None


def test_a_hole_is_found_before_the_first_record_and_between_two() -> None:
    assert first_hole(5, [6, 7]) == 0
    assert first_hole(5, [5, 7, 8]) == 1
    assert first_hole(None, [9, 11]) == 1  # (an unknown start: only holes between records)


def test_records_before_a_hole_are_returned_and_the_missing_offset_read_again() -> None:
    holes = OffsetHoles(wait_s=2.0)
    assert holes.readable("p", 10, [10, 11, 13, 14], now=0.0) == (2, 12)
    assert holes.waiting() == {"p": 12}
    # read again from 12 a moment later: the missing record came
    assert holes.readable("p", 12, [12, 13, 14], now=0.01) == (3, None)
    assert holes.waiting() == {}
    assert (holes.waited, holes.passed) == (1, 0)


def test_a_hole_at_the_first_record_returns_nothing_of_that_partition() -> None:
    holes = OffsetHoles(wait_s=2.0)
    assert holes.readable("p", 10, [11, 12], now=0.0) == (0, 10)


def test_a_hole_still_there_after_the_wait_is_passed_over_and_counted() -> None:
    holes = OffsetHoles(wait_s=2.0)
    assert holes.readable("p", 10, [12, 13], now=0.0) == (0, 10)
    assert holes.readable("p", 10, [12, 13], now=1.9) == (0, 10)
    assert holes.readable("p", 10, [12, 13], now=2.0) == (2, None)
    assert (holes.waited, holes.passed) == (0, 2)
    assert holes.waiting() == {}


def test_a_second_hole_after_one_passed_over_is_waited_for_on_its_own() -> None:
    holes = OffsetHoles(wait_s=2.0)
    assert holes.readable("p", 0, [0, 2, 3, 5], now=0.0) == (1, 1)
    # the first hole waited long enough; the next one (4) is new: the records up to it come, then it is waited for
    assert holes.readable("p", 1, [2, 3, 5], now=2.5) == (2, 4)
    assert holes.passed == 1
    assert holes.waiting() == {"p": 4}


def test_partitions_wait_on_their_own_holes() -> None:
    holes = OffsetHoles(wait_s=2.0)
    assert holes.readable("a", 0, [1], now=0.0) == (0, 0)
    assert holes.readable("b", 0, [0, 1], now=0.0) == (2, None)
    assert holes.waiting() == {"a": 0}
    holes.forget("a")
    assert holes.waiting() == {}


@given(st.integers(0, 50), st.lists(st.integers(1, 3), min_size=1, max_size=30))
def test_what_is_returned_is_contiguous_from_the_start(start: int, steps: list[int]) -> None:
    offsets, at = [], start
    for step in steps:
        at += step - 1
        offsets.append(at)
        at += 1
    n, again = OffsetHoles(wait_s=2.0).readable("p", start, offsets, now=0.0)
    assert offsets[:n] == list(range(start, start + n))
    assert (again is None) == (n == len(offsets))
    if again is not None:
        assert again == start + n and offsets[n] > again


class _Message:
    def __init__(self, topic: str, partition: int, offset: int) -> None:
        self.topic, self.partition, self.offset = topic, partition, offset


class _SeekingConsumer:
    """What `bus.up_to_holes` asks of kafka-python's consumer: only seek."""

    def __init__(self) -> None:
        self.sought: list[tuple[object, int]] = []

    def seek(self, tp: object, offset: int) -> None:
        self.sought.append((tp, offset))


def test_a_polled_batch_is_cut_at_its_hole_and_that_partition_read_again_from_it() -> None:
    from xqarb import bus

    a, b = bus.TopicPartition("xq.observations", 0), bus.TopicPartition("xq.observations", 1)
    batches = {a: [_Message(a.topic, 0, o) for o in (4, 5, 7)], b: [_Message(b.topic, 1, o) for o in (0, 1)]}
    consumer, holes = _SeekingConsumer(), OffsetHoles()
    out = bus.up_to_holes(consumer, batches, {a: 4, b: 0}, holes, "test")
    assert [m.offset for m in out[a]] == [4, 5]
    assert [m.offset for m in out[b]] == [0, 1]
    assert consumer.sought == [(a, 6)]
    # a partition whose first record is past its position gives nothing, and is read again from its position
    out = bus.up_to_holes(consumer, {a: [_Message(a.topic, 0, 7)]}, {a: 6}, holes, "test")
    assert out == {}
    assert consumer.sought[-1] == (a, 6)
