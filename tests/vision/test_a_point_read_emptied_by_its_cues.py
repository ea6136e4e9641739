"""Where the ink alone does not tell a board's pieces from its empty points (the occupancy is read from the joint of
the cues, `joint_reading`), a point's ink says nothing of whether a piece stays on it: the printed marks an emptied
point bares read as much ink as the piece's character did. A piece that left a point the joint of the cues reads
emptied left it, and was not pushed on it, whatever ink the point still shows."""

from __future__ import annotations

from pathlib import Path

from gamecheck import check_hard_window


def test_a_piece_gone_from_a_point_whose_bared_marks_read_as_ink_moved(shared_data: Path) -> None:
    # real tops on a pale board in glare, seen through the tops' plane: the black horse g7-h5. g7's ink rose
    # (0.037 -> 0.075, the bared crossing) and read 0.14 occupied, over `ink_trace`, though the joint of the cues
    # read it 0.02 and its round outline fell 0.77 -> 0.41; h5, in the glare, showed no ink and changed 0.13 at
    # the level 0.17, and the horse read as pushed on g7: the move was lost, and the five after it with it.
    r = check_hard_window(shared_data, 160, 15, 1)
    assert (r.inferred_ok, r.moves, r.wrong_inferred, r.false_touches, r.false_lifts) == (1, 1, 0, 0, 0), r.wrong
