"""Short rendered videos with the renderer's hard options (render_hard), through the tracker as gamecheck runs it:
each case a behaviour that lost moves on whole games drawn with the preset `hard`."""

from __future__ import annotations

from pathlib import Path

from gamecheck import check_game

START = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"


def _crops(shared_data: Path) -> str:
    return str(shared_data / "piece_crops" / "valid")


def test_a_piece_whose_ink_all_left_its_point_moved_and_was_not_pushed(shared_data: Path) -> None:
    # A small picture (320 x 240) of a paper board with real pieces' tops: the pawn g6-g5's faint ink left g6
    # entirely, while the circle score at g6 (its printed position marks) still stood as a piece's outline; the
    # move was read as a push and the board kept the pawn on g6 for the rest of the game.
    r = check_game(START, ["b0a2", "g6g5", "g0e2"], 1005, truth_fit=True, adopt="moves", from_ply=1,
                   hard="hard", piece_crops=_crops(shared_data))
    assert (r.inferred_ok, r.moves, r.false_touches, r.false_lifts) == (2, 2, 0, 0)


def test_points_outside_a_cut_picture_are_reported_unsure() -> None:
    # A picture cutting the board (files h and i outside it): what the camera cannot see is '?', never '.', and the
    # start is still recognised on the points it does see.
    from xqarb.vision.board import fit_from_corners
    from xqarb.vision.grid import point_index
    from xqarb.vision.render import random_scene, render_position
    from xqarb.vision.render_hard import draw_options, harden
    from xqarb.vision.squares import START_SQUARES
    from xqarb.vision.tracker import Tracker

    scene = harden(random_scene(2, difficulty="easy"), draw_options(["cut picture"], 2))
    frame = render_position(START_SQUARES, scene)
    tracker = Tracker()
    state = tracker.initial(fit_from_corners(frame.corners, "given", 0.0))
    stable, faults = [], []
    for k in range(6):
        state, obs = tracker.step(state, frame.image, k * 250_000)
        stable += [o.fields["squares"] for o in obs if o.type == "BoardStable"]
        faults += [(k, o.fields["reason"]) for o in obs if o.type == "CameraFault"]
    out = {point_index(f"{f}{r}") for f in "hi" for r in range(10)}
    assert state.unseen == out
    # the operator is told at calibration, once, which points the camera misses and what to do
    assert len(faults) == 1 and faults[0][0] == 0, faults
    reason = faults[0][1]
    assert "does not see 20 of the 90 points" in reason and "move or zoom out the camera" in reason
    assert sorted(reason.split("(", 1)[1].split(")", 1)[0].split(", ")) == sorted(f"{f}{r}" for f in "hi"
                                                                                   for r in range(10))
    assert stable == ["".join("?" if i in out else c for i, c in enumerate(START_SQUARES))]



def test_a_camera_missing_points_invents_no_move_and_reads_the_moves_it_sees() -> None:
    # Files h and i outside the picture: the horse h0-g2 comes from a point out of view (its type is not guessed:
    # X), the rook i9-i8 moves wholly out of view and cannot be seen; no move is invented for it, nothing is
    # reported touched, lifted or between two points there, and the moves in view are read.
    r = check_game(START, ["b0c2", "b9c7", "h0g2", "i9i8", "c3c4"], 2, difficulty="easy", truth_fit=True,
                   adopt="moves", hard="cut picture")
    files_hi = sorted(f"{f}{k}" for f in "hi" for k in range(10))
    assert sorted(r.unseen_reported) == sorted(r.unseen_truth) == files_hi
    assert (r.wrong_inferred, r.false_touches, r.false_lifts, r.misaligned_false) == (0, 0, 0, 0)
    assert r.inferred_ok == 3  # b0c2, b9c7, h0g2; i9i8 unseen, and c3c4 then fits no move from the known board
