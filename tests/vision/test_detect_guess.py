"""vision.detect's best readings: a point is read wherever its evidence leans one way far enough (UNSURE_BELOW,
TYPE_UNSURE_BELOW), and stays '?' / X / x only where the evidence is split. Hand-made evidence, no images."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from xqarb.vision import detect as D

BANDS = (0.55, 0.75, 0.65)  # empty below, piece at or above, the board's split
E5, D0, E0, A0 = 40, 84, 85, 81  # squares indices (rank 9 first)


def _evidence(**points: tuple[float, float, str | None, float]) -> D.PointEvidence:
    """A board of empty points (disc score 0.2) with pieces given as name -> (disc score, P(red), the type the rules
    kept, its probability); the classifier's probabilities put that type's probability on it, the rest on a cannon."""
    disc, red, letters = np.full(90, 0.2), np.full(90, 0.5), [None] * 90
    type_prob, probs = np.zeros(90), np.zeros((90, 7))
    for name, (score, p_red, letter, p_type) in points.items():
        i = int(name[1:])
        disc[i], red[i], letters[i], type_prob[i] = score, p_red, letter, p_type
        if letter is not None:
            probs[i, D.TYPES.index(letter.upper())] = p_type
        probs[i, D.TYPES.index("C")] += 1 - probs[i].sum()
    return D.PointEvidence(disc, BANDS, frozenset(), np.zeros(90), {}, tuple(letters), type_prob, probs, red,
                           red.copy(), red.copy(), False, True)


def _printed(e: D.PointEvidence) -> str:
    return D.printed(D.best_readings(e))[0]


def test_a_piece_whose_evidence_leans_one_way_is_read_and_a_split_one_stays_unsure() -> None:
    # e0: a disc score on the piece side of the unsure band (0.74: x = 0.45, P(piece) 0.74), red at 0.95, a king
    # at 0.97: every part leans one way (0.74 x 0.95 = 0.70), the king is read. d0: a sure disc whose colour is
    # 0.55 / 0.45: '?'. e5: a disc score where the band's logistic is even (x = BAND_CENTRE): '?'.
    e = _evidence(p85=(0.74, 0.95, "K", 0.97), p84=(0.9, 0.55, "A", 0.99), p40=(0.685, 0.95, "P", 0.9))
    got = _printed(e)
    assert got[E0] == "K"
    assert got[D0] == "?" and got[E5] == "?"
    best = D.best_readings(e)
    assert best.guess[D0] == "A" and best.p_point[D0] == 0.55  # the best reading is kept, only not printed
    assert best.p_point[E5] == pytest.approx(0.5)
    # the same colour leaning far enough: read
    assert _printed(replace(e, red=np.where(np.arange(90) == D0, 0.8, e.red)))[D0] == "A"
    # e5's crops read as one type at P >= TYPE_READ: an empty point's lines seldom do, the point leans to a piece
    sure_type = _evidence(p40=(0.685, 0.95, "P", 0.995))
    assert D.best_readings(sure_type).p_point[E5] > 0.75 and _printed(sure_type)[E5] == "P"
    # and a disc score well on the empty side of the band: empty
    assert _printed(_evidence(p40=(0.58, 0.95, "P", 0.9)))[E5] == "."


def test_a_type_is_given_where_it_is_likelier_than_not_and_x_where_it_is_not() -> None:
    e = _evidence(p85=(0.9, 0.99, "K", 0.6), p81=(0.9, 0.99, "R", 0.4))
    got = _printed(e)
    # a king at 0.6 (under TYPE_SURE, once X): read; a chariot at 0.4: X, a red piece of unknown type
    assert got[E0] == "K" and got[A0] == "X"
    # on a board whose types mostly do not read (such boards' best types were right 38 % of the time), no type is
    # given however sure the network is
    unread = D.printed(D.best_readings(replace(e, unreadable=True)))
    assert unread[0][E0] == "X" and "types unreadable" in unread[1][E0]
    assert _printed(replace(e, unreadable=True, type_prob=np.where(np.arange(90) == E0, 1.0, e.type_prob)))[E0] == "X"


def test_a_type_the_rules_forbid_gives_way_to_the_likeliest_allowed_one_only_where_it_beats_it() -> None:
    # a red "king" read on e5 (outside the palace): assign_types left no letter; the best allowed type on e5
    # (soldier, chariot, horse, cannon) is read where it is likely against the king the network preferred
    def on_e5(k: float, p: float) -> D.PointEvidence:
        probs = np.zeros(7)
        probs[D.TYPES.index("K")], probs[D.TYPES.index("P")] = k, p
        probs[D.TYPES.index("C")] = 1 - k - p
        e = _evidence(p40=(0.9, 0.99, None, 0.0))
        return replace(e, type_probs=np.where((np.arange(90) == E5)[:, None], probs, e.type_probs))

    best = D.best_readings(on_e5(0.2, 0.75))
    assert best.guess[E5] == "P" and best.p_type[E5] == pytest.approx(0.75 / 0.95 * D.FORBIDDEN_TRUST)
    assert _printed(on_e5(0.2, 0.75))[E5] == "P"
    # a king the network preferred (0.5 against 0.45): the soldier is no likelier than not, X
    assert _printed(on_e5(0.5, 0.45))[E5] == "X"


def test_a_disc_between_two_points_is_unsure_only_where_neither_point_scores_as_a_piece() -> None:
    # 5.10: a piece left part-way scores below the split at both points: both '?'. A disc that the search also
    # found between e0 and d0, where d0's own disc scores as a piece, belongs to d0: d0 is read, e0 is empty.
    half = replace(_evidence(p85=(0.6, 0.99, "K", 0.99), p84=(0.5, 0.99, "A", 0.99)), between={E0: D0, D0: E0})
    got = _printed(half)
    assert got[E0] == "?" and got[D0] == "?"
    held = replace(_evidence(p85=(0.3, 0.5, None, 0.0), p84=(0.95, 0.99, "A", 0.99)), between={E0: D0, D0: E0})
    got = _printed(held)
    assert got[E0] == "." and got[D0] == "A"


def test_a_colour_left_exactly_split_leans_on_the_classifiers_own_colour() -> None:
    # the board's groups and the piece's own evidence disagreed (P(red) 0.5 exactly): the classifier's own colour
    # decides where it is sure (0.02: black at 0.5 + SPLIT_TRUST x 0.48 = 0.74), not where it is not (0.4: '?')
    # (a king and an advisor in Black's palace, e9 and d9, read as red-or-black 0.5: the letters came out red)
    e9, d9 = 4, 3
    e = _evidence(p4=(0.9, 0.5, "K", 0.99), p3=(0.9, 0.5, "A", 0.99))
    e = replace(e, red_classifier=np.where(np.arange(90) == e9, 0.02, np.where(np.arange(90) == d9, 0.4, 0.5)))
    best = D.best_readings(e)
    assert best.guess[e9] == "k" and best.p_point[e9] == pytest.approx(0.74)
    got = _printed(e)
    assert got[e9] == "k" and got[d9] == "?"
