"""Frames in capture order per board (order.py): a frame not later than one already read of its board and game is
not stepped; other boards, other games and other partitions are judged by their own frames."""

from __future__ import annotations

from xqarb.vision.order import FrameOrder

T0 = 1_767_225_600_000_000  # 2026-01-01 00:00:00 UTC, µs


def test_a_frame_older_than_one_read_or_the_same_again_is_refused() -> None:
    order = FrameOrder()
    assert order.place((0, "7"), "g1", T0).admitted
    assert order.place((0, "7"), "g1", T0 + 500_000).admitted
    assert not order.place((0, "7"), "g1", T0 + 250_000).admitted  # acknowledged late into the topic rolled away from
    assert not order.place((0, "7"), "g1", T0 + 500_000).admitted  # the same frame sent again
    assert order.last((0, "7"), "g1") == T0 + 500_000  # a refused frame moves nothing
    assert order.place((0, "7"), "g1", T0 + 500_001).admitted


def test_boards_games_and_partitions_are_apart() -> None:
    order = FrameOrder()
    assert order.place((0, "7"), "g1", T0 + 1_000_000).admitted
    assert order.place((0, "8"), "g1", T0).admitted  # another board
    assert order.place((1, "7"), "g1", T0).admitted  # the same board id on another partition (another process's view)
    # the next game from a camera whose clock is behind the last one's: judged by its own frames
    assert order.place((0, "7"), "g2", T0).admitted
    # the last game's frames still on their way are judged by that game's
    assert not order.place((0, "7"), "g1", T0 + 900_000).admitted
    assert order.place((0, "7"), "g1", T0 + 1_100_000).admitted
    assert order.place((0, "7"), None, T0).admitted  # a camera that names no game: one stream of frames
    assert not order.place((0, "7"), None, T0).admitted


def test_only_the_last_few_games_of_a_board_are_kept() -> None:
    order = FrameOrder(games_kept=2)
    for k, game in enumerate(("g1", "g2", "g3")):
        assert order.place((0, "7"), game, T0 + k).admitted
    assert order.last((0, "7"), "g1") is None  # forgotten: the oldest
    assert order.last((0, "7"), "g2") == T0 + 1
    # a game read again counts as recent: g2 stays when g4 comes
    assert order.place((0, "7"), "g2", T0 + 10).admitted
    assert order.place((0, "7"), "g4", T0 + 11).admitted
    assert (order.last((0, "7"), "g2"), order.last((0, "7"), "g3")) == (T0 + 10, None)


def test_released_partitions_start_again() -> None:
    order = FrameOrder()
    assert order.place((0, "7"), "g1", T0 + 1_000).admitted
    assert order.place((1, "8"), "g1", T0 + 1_000).admitted
    order.drop([0])
    assert order.place((0, "7"), "g1", T0).admitted  # assigned again: read afresh from the committed offset
    assert not order.place((1, "8"), "g1", T0).admitted


def test_a_clock_stepped_back_goes_on_one_frame_interval_after_the_last_frame_read() -> None:
    """A camera's clock stepped back 5 s within one run of its count: its next frames (later numbers) are new,
    placed at its own frame interval after the last frame read, and its later frames keep that offset."""
    order = FrameOrder()
    cam = {"source": "cam-7", "epoch": 0}
    for k in range(4):  # 4 frames a second
        placed = order.place((0, "7"), "g1", T0 + k * 250_000, seq=k, **cam)
        assert (placed.kind, placed.at_us, placed.step_us) == ("new", T0 + k * 250_000, 0)
    stepped = order.place((0, "7"), "g1", T0 + 1_000_000 - 5_000_000, seq=4, **cam)
    assert stepped.admitted
    assert (stepped.kind, stepped.at_us) == ("stepped", T0 + 1_000_000)  # 750 ms + one interval of 250 ms
    assert stepped.step_us == 5_000_000
    after = order.place((0, "7"), "g1", T0 + 1_250_000 - 5_000_000, seq=5, **cam)
    assert (after.kind, after.at_us, after.step_us) == ("new", T0 + 1_250_000, 0)
    assert order.last((0, "7"), "g1") == T0 + 1_250_000


def test_a_step_of_a_camera_with_one_frame_read_uses_the_venue_frame_interval() -> None:
    order = FrameOrder()
    assert order.place((0, "7"), "g1", T0, source="cam-7", seq=10).kind == "new"
    stepped = order.place((0, "7"), "g1", T0 - 3_000_000, source="cam-7", seq=11)
    assert (stepped.kind, stepped.at_us, stepped.step_us) == ("stepped", T0 + 500_000, 3_500_000)


def test_a_pause_between_two_frames_is_not_taken_as_the_camera_interval() -> None:
    order = FrameOrder()
    order.place((0, "7"), "g1", T0, source="cam-7", seq=1)
    order.place((0, "7"), "g1", T0 + 30_000_000, source="cam-7", seq=2)  # 30 s quiet (a camera paused)
    stepped = order.place((0, "7"), "g1", T0 + 25_000_000, source="cam-7", seq=3)
    assert stepped.at_us == T0 + 31_000_000  # at most a second on


def test_a_camera_that_restarts_with_a_greater_epoch_is_read_on() -> None:
    """A camera that rebooted: its count starts again (smaller numbers) with a greater epoch, its clock a little
    behind: new frames, placed on the board's time line; a frame of the old run arriving late is still late."""
    order = FrameOrder()
    for k in range(100, 103):
        order.place((0, "7"), "g1", T0 + k * 500_000, source="cam-7", seq=k, epoch=1)
    last = T0 + 102 * 500_000
    rebooted = order.place((0, "7"), "g1", last - 2_000_000, source="cam-7", seq=0, epoch=2)
    assert (rebooted.kind, rebooted.at_us) == ("stepped", last + 500_000)
    assert not order.place((0, "7"), "g1", last + 100_000, source="cam-7", seq=103, epoch=1).admitted
    # the restarted camera's clock right again (a reboot without a step): read at its own time plus the offset
    assert order.place((0, "7"), "g1", last - 1_500_000, source="cam-7", seq=1, epoch=2).at_us == last + 1_000_000


def test_a_late_or_repeated_frame_of_the_camera_count_is_skipped_whatever_its_time() -> None:
    order = FrameOrder()
    for k in range(3):
        order.place((0, "7"), "g1", T0 + k * 500_000, source="cam-7", seq=k, epoch=1)
    assert order.place((0, "7"), "g1", T0 + 500_000, source="cam-7", seq=1, epoch=1).kind == "late"  # read, late
    assert order.place((0, "7"), "g1", T0 + 1_000_000, source="cam-7", seq=2, epoch=1).kind == "late"  # sent again
    # a retry stamped anew by the camera (a later time, the same number): still the frame already read
    assert order.place((0, "7"), "g1", T0 + 1_200_000, source="cam-7", seq=2, epoch=1).kind == "late"
    assert order.place((0, "7"), "g1", T0 + 1_500_000, source="cam-7", seq=9, epoch=0).kind == "late"  # older run
    assert order.last((0, "7"), "g1") == T0 + 1_000_000  # nothing skipped moved the time line
    assert order.place((0, "7"), "g1", T0 + 1_500_000, source="cam-7", seq=3, epoch=1).kind == "new"


def test_a_camera_not_read_yet_on_the_game_is_judged_by_time_alone() -> None:
    """Another camera's frames on the board: nothing of its own count is known yet, so an earlier time than the
    board's last frame read is a late frame, as before."""
    order = FrameOrder()
    order.place((0, "7"), "g1", T0 + 1_000_000, source="cam-a", seq=5)
    assert order.place((0, "7"), "g1", T0, source="cam-b", seq=9).kind == "late"
    assert order.place((0, "7"), "g1", T0 + 1_200_000, source="cam-b", seq=10).kind == "new"


def test_replaying_the_same_frames_gives_the_same_verdicts_and_times() -> None:
    frames = [(T0 + k * 400_000 - (6_000_000 if k >= 5 else 0), k) for k in range(10)] + [(T0, 3), (T0, 7)]

    def verdicts() -> list[tuple[str, int, int]]:
        order = FrameOrder()
        return [(p.kind, p.at_us, p.step_us) for p in
                (order.place((0, "7"), "g1", t, source="cam-7", seq=s) for t, s in frames)]

    first = verdicts()
    assert first == verdicts()
    assert [kind for kind, _, _ in first].count("stepped") == 1
    times = [at for kind, at, _ in first if kind != "late"]
    assert times == sorted(times) and len(set(times)) == len(times)  # the board never goes back in time


def test_a_clock_that_goes_forward_again_gives_its_offset_back() -> None:
    """The step corrected (the camera's clock 5 s forward again): its frames would be placed after ingest received
    them; the offset is given back down to the time received, and the time line still goes forward."""
    order = FrameOrder()

    def frame(k: int, behind_us: int) -> tuple[str, int, int]:
        true_us = T0 + k * 500_000
        p = order.place((0, "7"), "g1", true_us - behind_us, source="cam-7", seq=k, received_us=true_us + 40_000)
        return p.kind, p.at_us - true_us, p.step_us

    assert frame(0, 0) == ("new", 0, 0)
    assert frame(1, 0) == ("new", 0, 0)
    assert frame(2, 5_000_000) == ("stepped", 0, 5_000_000)  # (one interval after the last: its true time)
    assert frame(3, 5_000_000) == ("new", 0, 0)
    assert frame(4, 0) == ("new", 40_000, -4_960_000)  # forward again: at the time ingest received it
    assert frame(5, 0) == ("new", 40_000, 0)
    # a camera whose clock is ahead of ingest's never had an offset: nothing is given back, none taken
    assert order.place((0, "8"), "g1", T0 + 2_000_000, source="cam-8", seq=1, received_us=T0).at_us == T0 + 2_000_000


def test_a_camera_offset_goes_on_into_the_board_next_game() -> None:
    """The same camera on the board's next game: its clock is as far behind as it was, its frames stay on the
    board's time; the last game's frames still on their way are judged by that game's own."""
    order = FrameOrder()
    order.place((0, "7"), "g1", T0, source="cam-7", seq=1)
    order.place((0, "7"), "g1", T0 + 500_000, source="cam-7", seq=2)
    assert order.place((0, "7"), "g1", T0 - 4_000_000, source="cam-7", seq=3).at_us == T0 + 1_000_000
    assert order.place((0, "7"), "g2", T0 - 3_500_000, source="cam-7", seq=4).at_us == T0 + 1_500_000
    other = order.place((0, "7"), "g2", T0 + 2_000_000, source="cam-other", seq=9)  # another camera: its own times
    assert (other.kind, other.at_us) == ("new", T0 + 2_000_000)
    assert not order.place((0, "7"), "g1", T0 - 4_000_000, source="cam-7", seq=3).admitted
