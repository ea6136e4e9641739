"""Frames in capture order per board (order.py): a frame not later than one already read of its board and game is
not stepped; other boards, other games and other partitions are judged by their own frames."""

from __future__ import annotations

from xqarb.vision.order import FrameOrder

T0 = 1_767_225_600_000_000  # 2026-01-01 00:00:00 UTC, µs


def test_a_frame_older_than_one_read_or_the_same_again_is_refused() -> None:
    order = FrameOrder()
    assert order.admit((0, "7"), "g1", T0)
    assert order.admit((0, "7"), "g1", T0 + 500_000)
    assert not order.admit((0, "7"), "g1", T0 + 250_000)  # acknowledged late into the topic rolled away from
    assert not order.admit((0, "7"), "g1", T0 + 500_000)  # the same frame sent again
    assert order.last((0, "7"), "g1") == T0 + 500_000  # a refused frame moves nothing
    assert order.admit((0, "7"), "g1", T0 + 500_001)


def test_boards_games_and_partitions_are_apart() -> None:
    order = FrameOrder()
    assert order.admit((0, "7"), "g1", T0 + 1_000_000)
    assert order.admit((0, "8"), "g1", T0)  # another board
    assert order.admit((1, "7"), "g1", T0)  # the same board id on another partition (another process's view)
    # the next game from a camera whose clock is behind the last one's: judged by its own frames
    assert order.admit((0, "7"), "g2", T0)
    # the last game's frames still on their way are judged by that game's
    assert not order.admit((0, "7"), "g1", T0 + 900_000)
    assert order.admit((0, "7"), "g1", T0 + 1_100_000)
    assert order.admit((0, "7"), None, T0)  # a camera that names no game: one stream of frames
    assert not order.admit((0, "7"), None, T0)


def test_only_the_last_few_games_of_a_board_are_kept() -> None:
    order = FrameOrder(games_kept=2)
    for k, game in enumerate(("g1", "g2", "g3")):
        assert order.admit((0, "7"), game, T0 + k)
    assert order.last((0, "7"), "g1") is None  # forgotten: the oldest
    assert order.last((0, "7"), "g2") == T0 + 1
    # a game read again counts as recent: g2 stays when g4 comes
    assert order.admit((0, "7"), "g2", T0 + 10)
    assert order.admit((0, "7"), "g4", T0 + 11)
    assert (order.last((0, "7"), "g2"), order.last((0, "7"), "g3")) == (T0 + 10, None)


def test_released_partitions_start_again() -> None:
    order = FrameOrder()
    assert order.admit((0, "7"), "g1", T0 + 1_000)
    assert order.admit((1, "8"), "g1", T0 + 1_000)
    order.drop([0])
    assert order.admit((0, "7"), "g1", T0)  # assigned again: a fresh tracker, its frames from the committed offset
    assert not order.admit((1, "8"), "g1", T0)
