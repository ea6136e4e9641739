"""A piece left between two points (5.10) stands on the line joining them, half-way along it: its round outline,
seen from either point, lies `misaligned_from` or more off it along the line and within `towards_across` of the line.
A disc seen well to the side of the line stands by neither (a piece set down near a point, its shadow, the board's
print). Ink peaks leaning towards each other are a piece between two fresh points only where such an outline bears
them out. Synthetic circle scores: a bump per standing piece on its point, and one disc placed where the case puts
it."""

from __future__ import annotations

import numpy as np
import pytest

from xqarb.vision.grid import POINTS_UV, point_index
from xqarb.vision.interpret import _Work
from xqarb.vision.occupancy import MARGIN, S
from xqarb.vision.point_evidence import _half_way_between, _half_way_towards
from xqarb.vision.settings import DEFAULTS

_SHAPE = (round((9 + 2 * MARGIN) * S), round((8 + 2 * MARGIN) * S))  # canonical view: rows (v), columns (u)
_STANDING = ["a0", "c0", "e0", "g0", "i0", "a9", "c9", "e9", "g9", "i9", "b2", "h7"]


def _score(discs: list[np.ndarray], height: float = 0.8) -> np.ndarray:
    """A circle score with a bump of `height` (2 px wide) centred on each board position of `discs` (spacings)."""
    yy, xx = np.mgrid[0:_SHAPE[0], 0:_SHAPE[1]].astype(float)
    score = np.zeros(_SHAPE)
    for uv in discs:
        x, y = (uv + MARGIN) * S
        score = np.maximum(score, height * np.exp(-((xx - x) ** 2 + (yy - y) ** 2) / (2 * 2.0 ** 2)))
    return score


def _case(a: str, b: str, along: float, across: float) -> tuple[np.ndarray, int, int, list[int]]:
    """The score with the standing pieces and one disc `along` the line from a towards b and `across` it."""
    i, j = point_index(a), point_index(b)
    d = POINTS_UV[j] - POINTS_UV[i]
    side = np.array([-d[1], d[0]])
    standing = [point_index(p) for p in _STANDING]
    disc = POINTS_UV[i] + along * d + across * side
    return _score([POINTS_UV[k] for k in standing] + [disc]), i, j, standing


def test_a_disc_half_way_on_the_line_stands_between_the_two_points() -> None:
    score, i, j, standing = _case("e4", "e5", 0.5, 0.03)
    assert _half_way_towards(score, i, standing, DEFAULTS) == j
    assert _half_way_towards(score, j, standing, DEFAULTS) == i
    assert _half_way_between(score, i, j, standing, DEFAULTS)


@pytest.mark.parametrize("across", [0.23, 0.27])
def test_a_disc_half_way_along_but_well_to_the_side_of_the_line_stands_between_neither(across: float) -> None:
    score, i, j, standing = _case("e4", "e5", 0.5, across)
    assert _half_way_towards(score, i, standing, DEFAULTS) is None
    assert not _half_way_between(score, i, j, standing, DEFAULTS)


def _work(known: str, score: np.ndarray) -> _Work:
    return _Work(known=known, cfg=DEFAULTS, is_piece=[c not in ".?" for c in known], view_circles=lambda: score)


def _known(pieces: list[str], unsure: tuple[str, ...] = ()) -> str:
    sq = ["."] * 90
    for p in pieces:
        sq[point_index(p)] = "P"
    for p in unsure:
        sq[point_index(p)] = "?"
    return "".join(sq)


def test_ink_peaks_between_two_fresh_points_need_an_outline_half_way() -> None:
    # no disc between e4 and e5 (the one placed stands on e4): the ink peaks alone, faked by a character printed
    # off its face's centre or a shadow read as ink, leave no piece between them
    score, i, j, _ = _case("e4", "e5", 0.05, 0.0)
    assert not _work(_known(_STANDING), score).outline_between(i, j)
    score, i, j, _ = _case("e4", "e5", 0.5, 0.0)
    assert _work(_known(_STANDING), score).outline_between(i, j)


def test_a_pair_left_unsure_before_is_that_piece_seen_again_whatever_its_outline() -> None:
    score, i, j, _ = _case("e4", "e5", 0.05, 0.0)
    assert _work(_known(_STANDING, unsure=("e4", "e5")), score).outline_between(i, j)


def test_a_piece_standing_on_its_point_is_not_reported_between_two_points_when_its_outline_stays_near_it() -> None:
    # a piece touched on e4, its ink leaning over towards e5: its outline 0.15 off e4 along the line
    score, i, j, _ = _case("e4", "e5", 0.15, 0.0)
    assert not _work(_known(_STANDING), score).outline_between(i, j)
    assert not _work(_known(_STANDING), score).outline_between(j, i)


def test_ink_peaks_half_way_are_borne_out_by_an_outline_on_the_segment_clear_of_both_points() -> None:
    # a tall piece half-way whose top face's parallax is misjudged: its disc seen 0.27 off e5, on the line
    score, i, j, _ = _case("e4", "e5", 0.73, 0.0)
    assert not _half_way_between(score, i, j, [point_index(p) for p in _STANDING], DEFAULTS)  # (alone: too near e5)
    assert _work(_known(_STANDING), score).outline_between(i, j)


@pytest.mark.parametrize(("along", "across"), [(0.5, 0.27), (-0.3, 0.0)])
def test_ink_peaks_half_way_are_no_piece_between_where_the_outline_is_off_the_segment(along: float,
                                                                                     across: float) -> None:
    # a disc to the side of the line, or beyond one of the points: another piece's
    score, i, j, _ = _case("e4", "e5", along, across)
    assert not _work(_known(_STANDING), score).outline_between(i, j)
