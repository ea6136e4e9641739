"""The still board's occupancy from the joint of its cues (joint_reading.py), where the ink alone fails: calibrated on
the position the tracker holds, read on synthetic canonical views of a small blurred picture whose red characters
on pink faces carry no ink."""

from __future__ import annotations

import cv2
import numpy as np

from xqarb.vision.grid import point_index
from xqarb.vision.joint_reading import fit_joint, ink_fails, joint_reading
from xqarb.vision.occupancy import MARGIN, POINTS_PX, PointReading, S, read_view
from xqarb.vision.point_evidence import _lines_shown, _outline_scores
from xqarb.vision.settings import DEFAULTS
from xqarb.vision.tracker import START_SQUARES, TrackerConfig, interpret


def _board(squares: str, *, red_inked: bool = False, seed: int = 0) -> np.ndarray:
    """A canonical view: wood with printed lines; on each piece's point a pink face; the black pieces with a dark
    rim and a dark character, the red ones (unless `red_inked`) with neither (a red character on a pink face washed
    out by a small blurred picture): only their round faces and the lines they cover show them."""
    w, h = round((8 + 2 * MARGIN) * S), round((9 + 2 * MARGIN) * S)
    view = np.full((h, w, 3), (170, 210, 225), np.uint8)
    for f in range(9):
        cv2.line(view, tuple(map(int, POINTS_PX[f])), tuple(map(int, POINTS_PX[81 + f])), (40, 60, 90), 2)
    for r in range(10):
        cv2.line(view, tuple(map(int, POINTS_PX[9 * r])), tuple(map(int, POINTS_PX[9 * r + 8])), (40, 60, 90), 2)
    for i, c in enumerate(squares):
        if c == ".":
            continue
        x, y = map(int, POINTS_PX[i])
        cv2.circle(view, (x, y), round(0.42 * S), (200, 190, 240), -1)
        if c.islower() or red_inked:
            ink = (30, 30, 30) if c.islower() else (40, 40, 200)
            cv2.circle(view, (x, y), round(0.42 * S), (70, 70, 110), 2)
            for a, b in (((x - 6, y - 5), (x + 6, y - 5)), ((x, y - 8), (x, y + 8)), ((x - 6, y + 4), (x + 6, y + 4))):
                cv2.line(view, a, b, ink, 2)
    view = cv2.GaussianBlur(view, (0, 0), 1.0)
    return np.clip(view + np.random.default_rng(seed).normal(0, 3, view.shape), 0, 255).astype(np.uint8)


def _joint(view: np.ndarray, known: str, cfg: TrackerConfig = DEFAULTS) -> PointReading:
    return joint_reading(read_view(view), known, lambda: _outline_scores(view, cfg=cfg),
                         lambda: _lines_shown(view, POINTS_PX, cfg=cfg), cfg=cfg)


def _moved(squares: str, frm: str, to: str) -> str:
    out = list(squares)
    out[point_index(to)], out[point_index(frm)] = out[point_index(frm)], "."
    return "".join(out)


def _misread(reading: PointReading, squares: str) -> int:
    return int(((reading.occupied > DEFAULTS.ink_piece) != np.array([c != "." for c in squares])).sum())


def test_red_pieces_without_ink_read_occupied_by_their_outlines_and_covered_lines() -> None:
    # the ink reads the sixteen red pieces as empty points; calibrated on the known start, the outlines and the
    # lines they cover read every point right
    view = _board(START_SQUARES)
    ink = read_view(view)
    assert _misread(ink, START_SQUARES) == 16 and ink_fails(ink, START_SQUARES)
    joint = joint_reading(ink, START_SQUARES, lambda: _outline_scores(view), lambda: _lines_shown(view, POINTS_PX))
    assert _misread(joint, START_SQUARES) == 0
    red = [i for i, c in enumerate(START_SQUARES) if c.isupper()]
    assert float(joint.occupied[red].min()) > DEFAULTS.ink_piece
    # (the ink's own densities, colours and offsets are kept: a move is still told by how a point's ink changed)
    assert joint.density is ink.density and joint.red is ink.red


def test_the_joints_own_reading_is_kept_beside_where_it_is_taken_and_none_where_the_ink_reads() -> None:
    # the rules that weigh a point's ink ask the joint instead where the ink fails: its own probabilities, before
    # the occupancy takes them only as far as the ink agrees
    view = _board(START_SQUARES)
    joint = _joint(view, START_SQUARES)
    assert joint.joint is not None
    red = [i for i, c in enumerate(START_SQUARES) if c.isupper()]
    empty = [i for i, c in enumerate(START_SQUARES) if c == "."]
    assert float(joint.joint[red].min()) > DEFAULTS.ink_piece > float(joint.joint[empty].max())
    assert read_view(view).joint is None
    inked = _board(START_SQUARES, red_inked=True)
    assert _joint(inked, START_SQUARES).joint is None


def test_a_move_of_an_inkless_piece_read_by_the_cues_fitted_on_the_position_before() -> None:
    # the red cannon h2-e2: fitted on the known start (two of its 90 points now wrong), the cues read e2 as a piece
    # and h2 as empty; e2 not plainly a piece (plain contradictions of the known position are the ink's to make,
    # and its ink shows nothing there); the interpretation finds the move
    known, after = START_SQUARES, _moved(START_SQUARES, "h2", "e2")
    ref_view, view = _board(known), _board(after, seed=1)
    now = _joint(view, known)
    e2, h2 = point_index("e2"), point_index("h2")
    assert DEFAULTS.ink_piece < now.occupied[e2] <= DEFAULTS.ink_plain
    assert now.occupied[h2] < DEFAULTS.ink_piece
    assert read_view(view).occupied[e2] < DEFAULTS.ink_piece  # (the ink alone: nothing came)
    squares, placed, _, misaligned = interpret(known, ref_view, _joint(ref_view, known), view, now, TrackerConfig())
    assert squares == after and placed == [e2] and not misaligned


def test_where_the_ink_separates_the_pieces_the_reading_is_the_inks() -> None:
    # every character inked: the ink misreads no point of the known position, and the cues are not even computed
    view = _board(START_SQUARES, red_inked=True)
    ink = read_view(view)

    def never() -> np.ndarray:
        raise AssertionError("a cue computed where the ink separates the pieces")

    assert not ink_fails(ink, START_SQUARES)
    assert joint_reading(ink, START_SQUARES, never, never) is ink


def test_pieces_gone_from_the_board_are_not_read_back_by_the_fit_on_the_known_position() -> None:
    # the red pieces swept off a known start (the ink reads them gone, rightly): no cue shows them, the cues fitted
    # on the known position misread their points as much as the ink does, and the ink's reading stands
    gone = "".join("." if c.isupper() else c for c in START_SQUARES)
    view = _board(gone, red_inked=True)
    ink = read_view(view)
    assert _misread(ink, gone) == 0 and ink_fails(ink, START_SQUARES)
    assert _joint(view, START_SQUARES).occupied.tolist() == ink.occupied.tolist()


def test_the_joint_fit_weighs_the_cue_that_separates_and_not_the_one_that_does_not() -> None:
    # the first cue separates the pieces, the second is noise: the fit reads new points by the first
    rng = np.random.default_rng(0)
    piece = np.arange(60) < 20
    x = np.stack([np.where(piece, 1.0, 0.0) + rng.normal(0, 0.2, 60), rng.normal(0, 1, 60)], axis=1)
    prob = fit_joint(x, piece)
    p = prob(np.array([[1.0, -2.0], [0.0, 2.0], [1.0, 2.0], [0.0, -2.0]]))
    assert p[0] > 0.8 and p[1] < 0.2 and p[2] > 0.8 and p[3] < 0.2


def test_points_whose_ink_the_printed_marks_mask_are_read_without_it() -> None:
    # through the tops' plane the river's band is seen over one bank's points and masks their characters: their
    # ink reads nothing whether a piece stands there or not. Five black pawns crossed to that bank: the ink misreads
    # them; the outlines and lines alone, fitted on every known point, read the bank, whatever its ink reads
    known = list(START_SQUARES)
    for f in "acegi":
        known[point_index(f + "5")], known[point_index(f + "6")] = "p", "."
    squares = "".join(known)
    piece = np.array([c != "." for c in squares])
    bank = np.arange(36, 45)  # rank 5
    rng = np.random.default_rng(1)
    discs = np.where(piece, 0.62, 0.5) + rng.normal(0, 0.05, 90)
    lines = np.where(piece, 5.0, 25.0) + rng.normal(0, 8, 90)
    weight = np.where(np.isin(np.arange(90), bank), 0.1, 0.6)

    def read(bank_ink: float, masked: bool) -> np.ndarray:
        dens = np.where(piece, 0.3, 0.001)
        dens[bank] = bank_ink
        reading = PointReading(np.where(dens > 0.1, 1.0, 0.01), np.full(90, 0.5), np.zeros((90, 2)), dens,
                               np.zeros(90))
        return joint_reading(reading, squares, lambda: discs, lambda: lines,
                             ink_weight=weight if masked else None).occupied

    assert int(((read(0.0, True) > DEFAULTS.ink_piece) != piece).sum()) == 0
    assert np.allclose(read(0.0, True)[bank], read(0.002, True)[bank])
    assert not np.allclose(read(0.0, False)[bank], read(0.002, False)[bank])


def test_a_piece_half_way_keeps_the_ink_of_both_points_where_the_cues_centred_on_them_miss_it() -> None:
    # the red pieces' characters wash out (the ink misses them; the outlines and lines show them). A piece set down
    # half-way between e2 and f2 (both known empty) shows its ink on both, its peaks 0.45 off towards each other,
    # while its outline, centred on neither, and the lines about both read no piece there: the ink's reading of
    # the two stands, so that the piece is reported between them. A changed empty point whose ink sits on it and
    # the cues do not (a frame's ink beside a piece that left) is read by the cues
    squares = START_SQUARES
    piece = np.array([c != "." for c in squares])
    e2, f2, i8 = point_index("e2"), point_index("f2"), point_index("i8")
    rng = np.random.default_rng(2)
    discs = np.where(piece, 0.65, 0.45) + rng.normal(0, 0.03, 90)
    lines = np.where(piece, 5.0, 30.0) + rng.normal(0, 3, 90)
    dens = np.where(np.array([c.islower() for c in squares]), 0.3, 0.001)
    dens[[e2, f2, i8]] = 0.15
    occ = np.where(dens > 0.1, 0.75, 0.01)
    offset = np.zeros((90, 2))
    offset[e2], offset[f2] = (0.45, 0.0), (-0.45, 0.0)
    reading = PointReading(occ, np.full(90, 0.5), offset, dens, np.zeros(90))
    changed = np.isin(np.arange(90), [e2, f2, i8])
    joint = joint_reading(reading, squares, lambda: discs, lambda: lines, changed=changed).occupied
    assert joint[e2] == joint[f2] == 0.75
    assert joint[i8] < DEFAULTS.ink_piece
    red = [i for i, c in enumerate(squares) if c.isupper()]
    assert float(joint[red].min()) > DEFAULTS.ink_piece
    # (not changed since the last still board, the two are read by the cues as any other point)
    still = joint_reading(reading, squares, lambda: discs, lambda: lines, changed=np.zeros(90, bool)).occupied
    assert still[e2] < DEFAULTS.ink_piece and still[f2] < DEFAULTS.ink_piece


def test_a_piece_whose_ink_came_with_the_change_keeps_the_inks_reading_where_the_cues_miss_it() -> None:
    # the red pieces' characters wash out (the ink misses them; the outlines and lines show them). The black rook
    # set down on h6 (known empty: the fit is made on the position before the move) reads plainly by its ink, whose
    # density rose thirty-fold over the last still board's, while its outline and the lines, leaning off the point,
    # read it as the empty points look: the ink's reading stands, and the move is seen. Where the ink read as much
    # on the last still board (a neighbour's body or printed marks read as ink on both), or the point did not
    # change, the cues read it
    squares = START_SQUARES
    piece = np.array([c != "." for c in squares])
    h6 = point_index("h6")
    rng = np.random.default_rng(3)
    discs = np.where(piece, 0.65, 0.45) + rng.normal(0, 0.03, 90)
    lines = np.where(piece, 5.0, 30.0) + rng.normal(0, 3, 90)
    dens = np.where(np.array([c.islower() for c in squares]), 0.3, 0.001)
    dens[h6] = 0.33
    occ = np.where(dens > 0.1, 0.98, 0.01)
    reading = PointReading(occ, np.full(90, 0.5), np.zeros((90, 2)), dens, np.zeros(90))
    changed = np.isin(np.arange(90), [h6])

    def at_h6(ref_h6: float, changed: np.ndarray) -> float:
        ref = dens.copy()
        ref[h6] = ref_h6
        return float(joint_reading(reading, squares, lambda: discs, lambda: lines, changed=changed,
                                   ref_density=ref).occupied[h6])

    assert at_h6(0.01, changed) == 0.98
    assert at_h6(0.33, changed) < DEFAULTS.ink_piece
    assert at_h6(0.01, np.zeros(90, bool)) < DEFAULTS.ink_piece
