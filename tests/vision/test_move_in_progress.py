"""A move in progress holds its board's watermark and its frames until the still board that ends it."""

from __future__ import annotations

from xqarb.vision.in_progress import MovesInProgress

BOARD = (0, "board-1")
LOG = ("xq.frames", 0)


def test_a_still_board_holds_its_watermark_nowhere_and_its_last_still_frames_back() -> None:
    moves = MovesInProgress(hold_max_us=20_000_000, read_back_us=3_000_000)
    for k in range(9):  # four seconds of a still board at 2 frames a second
        moves.frame(BOARD, k * 500_000, still=True, log=LOG, offset=10 + k)
    assert moves.watermark(BOARD, 4_000_000) == 4_000_000
    # a move may begin with the next frame: a next owner's tracker must see the board still before it
    assert moves.read_from() == {LOG: 12}
    # where no still frames are to be read again (read_back_us 0), a still board holds nothing
    still_only = MovesInProgress(hold_max_us=20_000_000, read_back_us=0)
    still_only.frame(BOARD, 0, still=True, log=LOG, offset=10)
    assert still_only.read_from() == {}


def test_the_watermark_stays_at_the_last_still_frame_until_the_move_ends() -> None:
    moves = MovesInProgress(hold_max_us=20_000_000)
    moves.frame(BOARD, 1_000_000, still=True, log=LOG, offset=10)
    for k, at in enumerate((1_500_000, 2_000_000, 2_500_000)):  # a hand over the board, then it leaves
        moves.frame(BOARD, at, still=False, log=LOG, offset=11 + k)
    # a press made as the hand left (2.45 s) is not yet seen by the camera: the still board is still to come
    assert moves.watermark(BOARD, 2_500_000) == 1_000_000
    assert moves.in_progress(BOARD)
    moves.frame(BOARD, 3_000_000, still=True, log=LOG, offset=14)  # the still board that shows the move
    assert moves.watermark(BOARD, 3_000_000) == 3_000_000
    assert not moves.in_progress(BOARD)


def test_a_next_owner_reads_a_move_in_progress_again_from_the_last_still_frame() -> None:
    moves = MovesInProgress(hold_max_us=20_000_000)
    other = (0, "board-2")
    moves.frame(BOARD, 1_000_000, still=True, log=LOG, offset=10)
    moves.frame(other, 1_100_000, still=True, log=LOG, offset=11)
    moves.frame(BOARD, 1_500_000, still=False, log=LOG, offset=12)
    moves.frame(other, 1_600_000, still=True, log=LOG, offset=13)
    # the frames topic rolled over in the middle of the move: the new topic's frames of the move are held too
    moves.frame(BOARD, 2_000_000, still=False, log=("xq.frames.roll", 0), offset=0)
    assert moves.read_from() == {LOG: 10, ("xq.frames.roll", 0): 0}
    moves.frame(BOARD, 2_500_000, still=True, log=("xq.frames.roll", 0), offset=1)
    assert moves.read_from() == {LOG: 11, ("xq.frames.roll", 0): 1}  # (the still frames of both boards since)


def test_a_board_never_still_yet_holds_nothing() -> None:
    moves = MovesInProgress(hold_max_us=20_000_000)
    moves.frame(BOARD, 1_000_000, still=False, log=LOG, offset=3)
    assert moves.watermark(BOARD, 1_000_000) == 1_000_000
    assert moves.read_from() == {}


def test_a_move_longer_than_the_hold_lets_the_watermark_and_the_frames_go() -> None:
    moves = MovesInProgress(hold_max_us=20_000_000)
    moves.frame(BOARD, 0, still=True, log=LOG, offset=0)
    moves.frame(BOARD, 500_000, still=False, log=LOG, offset=1)
    assert moves.watermark(BOARD, 19_000_000) == 0
    assert moves.watermark(BOARD, 20_000_000) == 20_000_000  # (a hand resting on the board: presses go on)
    moves.frame(BOARD, 20_000_000, still=False, log=LOG, offset=40)
    assert moves.read_from() == {}


def test_partitions_given_away_are_forgotten() -> None:
    moves = MovesInProgress(hold_max_us=20_000_000)
    moves.frame(BOARD, 0, still=True, log=LOG, offset=0)
    moves.frame(BOARD, 500_000, still=False, log=LOG, offset=1)
    moves.drop([0])
    assert moves.read_from() == {} and not moves.in_progress(BOARD)
    moves.frame(BOARD, 1_000_000, still=False, log=LOG, offset=2)  # (not seen still since: nothing held)
    assert moves.read_from() == {}


def test_a_next_owner_reads_again_enough_of_the_still_board_before_the_move_to_see_it_still() -> None:
    moves = MovesInProgress(hold_max_us=20_000_000, read_back_us=3_000_000)
    for k in range(11):  # five seconds of a still board at 2 frames a second
        moves.frame(BOARD, k * 500_000, still=True, log=LOG, offset=k)
    moves.frame(BOARD, 5_500_000, still=False, log=LOG, offset=11)
    assert moves.read_from() == {LOG: 4}  # (the frames of the last 3 s before the move: 2.0-5.0 s)
    assert moves.watermark(BOARD, 5_500_000) == 5_000_000
    moves.frame(BOARD, 6_000_000, still=True, log=LOG, offset=12)  # the move's still board: a new still run
    moves.frame(BOARD, 6_500_000, still=False, log=LOG, offset=13)
    assert moves.read_from() == {LOG: 12}


def test_a_board_whose_frames_stopped_in_a_move_lets_its_frames_go_as_the_others_go_on() -> None:
    moves = MovesInProgress(hold_max_us=20_000_000)
    moves.frame(BOARD, 0, still=True, log=LOG, offset=0)
    moves.frame(BOARD, 500_000, still=False, log=LOG, offset=1)  # its camera stops here
    other = (0, "board-2")
    moves.frame(other, 19_000_000, still=True, log=LOG, offset=50)
    assert moves.read_from() == {LOG: 0}
    moves.frame(other, 20_000_000, still=True, log=LOG, offset=51)
    assert moves.read_from() == {LOG: 50}  # (the other board's last still frames only)
