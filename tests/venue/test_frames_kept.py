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
