"""A video begun part-way (`render_game(..., from_ply=K)`): the frames from the board left still after the K-th move,
byte for byte those of the whole video, the earlier ones planned but not drawn (the tracker's long-game tests
begin there instead of drawing every frame before the move they are about)."""

from __future__ import annotations

import pytest

from xqarb.vision.render import RenderError, render_game, squares_from_fen

START_FEN = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"
MOVES = ["h2e2", "h9g7", "h0g2"]  # a real game's first moves (ccpd_dev.jsonl, game 0)


def test_a_video_begun_after_a_move_is_the_whole_videos_from_there() -> None:
    # every move touched again and misplaced half the time: the plan's random draws before the first frame drawn
    # (offsets, nudges, hand timings, bumps) must all be made as in the whole video for its frames to be the same
    kw = {"fps": 2.0, "difficulty": "hard", "misplace_rate": 0.5, "nudge_rate": 1.0}
    whole = list(render_game(START_FEN, MOVES, 11, **kw))
    part = list(render_game(START_FEN, MOVES, 11, from_ply=2, **kw))
    first = len(whole) - len(part)
    assert 0 < first < len(whole)
    # the first frame drawn: the board left still after move 2, its hand just gone
    assert part[0].truth.ply == 2 and not part[0].truth.hand_present
    assert whole[first - 1].truth.hand_present
    assert all(f.truth.ply >= 2 for f in whole[first:]) and whole[first - 1].truth.ply == 2
    for a, b in zip(whole[first:], part, strict=True):
        assert (a.t_us, a.truth) == (b.t_us, b.truth)
        assert a.image.tobytes() == b.image.tobytes()
    assert part[-1].truth.squares != squares_from_fen(START_FEN)


def test_a_video_cannot_begin_outside_its_moves() -> None:
    with pytest.raises(RenderError, match="from_ply"):
        next(render_game(START_FEN, MOVES, 11, from_ply=4, difficulty="plain"))
    with pytest.raises(RenderError, match="from_ply"):
        next(render_game(START_FEN, MOVES, 11, from_ply=-1, difficulty="plain"))
