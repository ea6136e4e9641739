"""Frames kept to be sent again after a broker restart (services/ingest/frames_kept.py): the last seconds, in the
order acknowledged, bounded in bytes with the frames forgotten for room counted."""

from __future__ import annotations

import pytest

from xqarb.ingest.frames_kept import FrameKeep


def test_the_frames_of_the_last_seconds_are_kept_in_order() -> None:
    keep = FrameKeep(keep_s=10.0, max_bytes=1_000)
    for k in range(5):
        assert keep.keep(f"f{k}", 100, now=100.0 + 4 * k) == 0  # acknowledged at 100, 104, ... 116
    # at 116: those of 106 and later are kept (100 and 104 are past their 10 s)
    assert keep.frames(116.0) == ["f2", "f3", "f4"]
    assert keep.bytes == 300
    assert keep.frames(116.0) == ["f2", "f3", "f4"]  # still kept: a broker that dies again loses them again
    assert keep.frames(200.0) == [] and keep.bytes == 0


def test_beyond_the_byte_bound_the_oldest_are_forgotten_and_counted() -> None:
    keep = FrameKeep(keep_s=30.0, max_bytes=1_000)
    assert [keep.keep(f"f{k}", 300, now=1.0 + k) for k in range(3)] == [0, 0, 0]
    assert keep.keep("f3", 300, now=5.0) == 1  # 1,200 bytes: f0 goes
    assert keep.frames(5.0) == ["f1", "f2", "f3"] and keep.bytes == 900
    assert keep.keep("big", 2_000, now=6.0) == 1  # alone over the bound: not kept, counted
    assert keep.frames(6.0) == ["f1", "f2", "f3"]
    assert keep.keep("f4", 500, now=7.0) == 2  # room for it by forgetting f1 and f2
    assert keep.frames(7.0) == ["f3", "f4"] and keep.bytes == 800


def test_a_keep_of_no_seconds_keeps_nothing_and_counts_nothing() -> None:
    keep = FrameKeep(keep_s=0.0)
    assert keep.keep("f0", 10, now=1.0) == 0 and len(keep) == 0
    with pytest.raises(ValueError, match="must not be negative"):
        FrameKeep(keep_s=-1.0)


class Frame:
    def __init__(self, event_id: str) -> None:
        self.event_id = event_id


def test_frames_the_vision_group_committed_are_forgotten() -> None:
    keep = FrameKeep(keep_s=30.0, max_bytes=10_000)
    frames = [Frame(f"f{k}") for k in range(6)]
    for k, f in enumerate(frames):  # two partitions, interleaved
        keep.keep(f, 100, now=1.0 + k, where=("xq.frames", k % 2, 10 + k // 2))
    assert keep.partitions() == [("xq.frames", 0), ("xq.frames", 1)]
    # partition 0 read up to offset 11 (f0, f2 at 10, 11), partition 1 nothing yet
    assert keep.forget_read({("xq.frames", 0): 12, ("xq.frames", 1): None}) == 2
    assert [f.event_id for f in keep.frames(7.0)] == ["f1", "f3", "f4", "f5"] and keep.bytes == 400
    assert keep.forget_read({("xq.frames.roll", 1): 99}) == 0  # another topic's commits say nothing of these


def test_frames_sent_again_are_known_where_the_new_broker_keeps_them() -> None:
    keep = FrameKeep(keep_s=30.0, max_bytes=10_000)
    a, b = Frame("a"), Frame("b")
    keep.keep(a, 100, now=1.0, where=("xq.frames", 0, 500))
    keep.keep(b, 100, now=2.0, where=("xq.frames", 0, 501))
    keep.moved({"a": ("xq.frames.roll", 0, 0)})  # b was not sent again: where it was is gone
    # the new broker's commit past offset 0 is a's; b is never taken as read (its old offset means nothing now)
    assert keep.forget_read({("xq.frames.roll", 0): 1, ("xq.frames", 0): 1_000}) == 1
    assert keep.frames(3.0) == [b]
