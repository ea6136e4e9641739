"""A piece left half-way between two points (5.10) covers half of each point's ink window, and a character set off
its top's centre pulls the ink peaks short of half-way: where the round outline is seen half-way from both points,
each towards the other, the piece is between them, however little its ink peaks lean."""

from __future__ import annotations

from pathlib import Path

from gamecheck import check_hard_window


def test_a_piece_whose_outline_stands_half_way_from_both_points_is_reported_between_them(shared_data: Path) -> None:
    # real tops, tall pieces: the pawn a3-a4 left half-way towards a5; the ink peaks leaned 0.23 (a4 towards a5) and
    # 0.08 (a5 towards a4), under the 0.25 that tells a lean, while the disc stood 0.46 off a4 and 0.54 off a5, each
    # towards the other: the pawn was read as set down on a4 and the pair never reported
    r = check_hard_window(shared_data, 111, 14, 1)
    assert (r.inferred_ok, r.moves, r.wrong_inferred) == (1, 1, 0), r.wrong
    assert (r.misaligned_reported, r.misaligned_truth, r.misaligned_false) == (1, 1, 0), r.misaligned_missed
    assert (r.false_touches, r.false_lifts) == (0, 0)
