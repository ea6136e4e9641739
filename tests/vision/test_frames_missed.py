"""Frames never read (order.py): numbers missing from a camera's count between two of its frames that reached
vision are counted once, whatever the verdict on the frame after the gap; late, repeated and new-run frames count
nothing; a released partition's counts come back only where the service says nobody read them meanwhile."""

from __future__ import annotations

from xqarb.vision.order import LATE, FrameOrder

T0 = 1_767_225_600_000_000  # 2026-01-01 00:00:00 UTC, µs
FRAME = 200_000  # a camera at 5 frames a second


def place(order: FrameOrder, seq: int, *, epoch: int = 0, game: str | None = "g1", board: tuple[int, str] = (0, "7"),
          at: int | None = None, source: str = "cam-7") -> tuple[str, int]:
    placed = order.place(board, game, T0 + seq * FRAME if at is None else at, source=source, seq=seq, epoch=epoch,
                         received_us=T0 + seq * FRAME + 50_000)
    return placed.kind, placed.missed


def test_the_numbers_between_two_frames_read_are_counted_once() -> None:
    order = FrameOrder()
    assert [place(order, s)[1] for s in range(8)] == [0] * 8
    assert place(order, 100) == ("new", 92)  # 8..99 never reached vision (a broker restarted empty)
    assert place(order, 101) == ("new", 0)
    assert place(order, 50) == (LATE, 0)  # a late frame from inside the gap fills nothing and counts nothing
    assert place(order, 101) == (LATE, 0)  # the same frame again
    assert place(order, 103)[1] == 1


def test_a_new_run_of_the_count_starts_a_new_count() -> None:
    order = FrameOrder()
    place(order, 40)
    assert place(order, 5, epoch=1)[1] == 0  # the camera restarted: where its new count begins is not known
    assert place(order, 9, epoch=1)[1] == 3
    assert place(order, 60, epoch=0)[1] == 0  # a frame of the earlier run: late


def test_the_count_runs_on_across_games_and_apart_per_camera_and_board() -> None:
    order = FrameOrder()
    place(order, 10, game="g1")
    assert place(order, 14, game="g2")[1] == 3  # the board's next game: the same camera's count goes on
    assert place(order, 20, source="cam-8")[1] == 0  # another camera: its own count
    assert place(order, 30, board=(0, "8"))[1] == 0  # another board
    assert place(order, 15, game="g2")[1] == 0


def test_a_frame_late_by_its_time_still_counts_the_gap_before_it() -> None:
    order = FrameOrder()
    place(order, 1, source="cam-a")
    place(order, 2, source="cam-a", game="g2")
    # cam-b's first frame of g2 comes with a time before the game's last frame read: skipped by time, but it did
    # reach vision (counted as out of order), so only the numbers before it are never read
    place(order, 3, source="cam-b", game="g1")
    assert place(order, 6, source="cam-b", game="g2", at=T0) == (LATE, 2)
    assert place(order, 7, source="cam-b", game="g2")[1] == 0


def test_released_counts_come_back_only_when_given_back() -> None:
    order = FrameOrder()
    place(order, 7)
    place(order, 3, board=(1, "8"))
    counts = order.drop([0])
    assert counts == {(0, "7"): {"cam-7": (0, 7)}}
    assert place(order, 100)[1] == 0  # a fresh start: the numbers before it are not known
    fresh = FrameOrder()
    fresh.recount(counts)  # the same process, its partition given back with nobody reading it meanwhile
    assert place(fresh, 100)[1] == 92
    assert place(order, 9, board=(1, "8"))[1] == 5  # the partition kept is untouched


def test_frames_sent_again_after_a_rejoin_are_read_once() -> None:
    """A partition given back with its counts (a broker restarted empty, ingest sending again the frames of the
    last seconds): the frames read before the rejoin are skipped though the board's time line started again; the
    ones that never reached vision are read, in order, and the gap they leave closed counts nothing."""
    order = FrameOrder()
    assert [place(order, s)[0] for s in range(8)] == ["new"] * 8
    counts = order.drop([0])
    order.recount(counts)
    assert [place(order, s) for s in range(4, 8)] == [(LATE, 0)] * 4  # read before the broker died
    assert [place(order, s) for s in range(8, 12)] == [("new", 0)] * 4  # sent again, never read: read now
    assert place(order, 12) == ("new", 0)


def test_without_counts_given_back_a_rejoined_board_reads_its_frames_afresh() -> None:
    order = FrameOrder()
    assert [place(order, s)[0] for s in range(8)] == ["new"] * 8
    order.drop([0])  # another process may have read them since: this one starts again from its next frame
    assert place(order, 5) == ("new", 0)
