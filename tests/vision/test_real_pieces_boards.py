"""bench/real_pieces_boards.py: real piece photos set out on rendered boards, labelled, for detect_photos.py. The
piece is cut out of its crop where it is (and not where it is not), pasted where the label says, at the size the
board asks for; and a board written from the real crops reads back as its label says through detect_photos."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

pytest.importorskip("xqarb.vision.render")
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
boards = importlib.import_module("real_pieces_boards")
photos = importlib.import_module("detect_photos")


def _crop(background: tuple[int, int, int], centre: tuple[int, int], radius: int, size: int = 58) -> np.ndarray:
    """A piece as a crop shows it: a cream disc with a dark ring and stroke, on the photo's background."""
    img = np.full((size, size, 3), background, np.uint8)
    cv2.circle(img, centre, radius, (200, 225, 235), -1, cv2.LINE_AA)
    cv2.circle(img, centre, int(radius * 0.8), (40, 40, 150), 2, cv2.LINE_AA)
    cv2.line(img, (centre[0] - 8, centre[1]), (centre[0] + 8, centre[1]), (40, 40, 150), 3)
    return img


def test_cut_out_finds_the_disc_within_its_box():
    piece = boards.cut_out(_crop((90, 110, 40), (30, 27), 19))
    assert piece is not None
    assert np.hypot(piece.centre[0] - 30, piece.centre[1] - 27) < 1.5
    assert abs(piece.radius - 19) < 2
    disc = np.zeros((58, 58), np.uint8)
    cv2.circle(disc, (30, 27), 19, 255, -1)
    inter = np.count_nonzero((disc > 0) & (piece.mask > 0))
    union = np.count_nonzero((disc > 0) | (piece.mask > 0))
    assert inter / union > 0.8  # (the cut takes in the disc's soft edge: about a pixel all round)


def test_a_close_up_is_told_by_the_face_at_the_box_sides():
    # The disc fills the box (its sides cut off a little): the face's colour at the sides' midpoints, the
    # background in the corners. Not so for a piece with room round it, nor where the background is the face's
    # colour (white paper), where nothing tells.
    assert boards._fills_box(_crop((150, 60, 20), (29, 29), 30))
    assert not boards._fills_box(_crop((90, 110, 40), (30, 27), 19))
    assert not boards._fills_box(_crop((205, 228, 236), (29, 29), 30))


def test_no_piece_to_cut_out_is_none():
    # A ring of the piece's colour with background inside: what is cut out fills too little of its circle.
    img = np.full((58, 58, 3), (90, 110, 40), np.uint8)
    cv2.ellipse(img, (29, 29), (22, 22), 0, 200, 340, (200, 225, 235), 7)
    assert boards.cut_out(img) is None


def test_paste_piece_puts_it_where_and_as_large_as_asked():
    piece = boards.cut_out(_crop((90, 110, 40), (30, 27), 19))
    image = np.zeros((120, 160, 3), np.uint8)
    # 30 px across, 20 px down: the board seen at a slant there
    boards.paste_piece(image, piece, np.array([100.0, 60.0]), np.array([15.0, 0.0]), np.array([0.0, 10.0]))
    ys, xs = np.nonzero(image.max(axis=2) > 150)
    assert abs(xs.mean() - 100) < 1.5 and abs(ys.mean() - 60) < 1.5
    assert 27 <= xs.max() - xs.min() + 1 <= 32 and 17 <= ys.max() - ys.min() + 1 <= 22
    assert not image[:40].any() and not image[:, :80].any()  # the photo's background is left behind


def test_place_pieces_gives_each_piece_its_own_crop_and_drops_what_has_none():
    pool = {"K": ["K1"], "k": ["k1"], "P": ["P1", "P2"]}
    squares = "....k" + "." * 76 + "P.P.P.K.."
    rng = np.random.default_rng(0)
    placed, pieces = boards.place_pieces(squares, pool, rng)
    assert placed.count("P") == 2 and placed.count("K") == 1 and placed.count("k") == 1
    assert sorted(pieces[i] for i, ch in enumerate(placed) if ch == "P") == ["P1", "P2"]
    assert set(pieces) == {i for i, ch in enumerate(placed) if ch != "."}


def test_a_board_of_real_pieces_reads_back_as_labelled(shared_data, tmp_path):
    # Two boards from the first real photos' crops, through the same measure as labelled real photos.
    samples = boards.load_real(shared_data / "piece_crops" / "valid")
    first = sorted({s.photo for s in samples})[:2]
    written, skipped, failed = boards.write_boards(
        tmp_path, [s for s in samples if s.photo in first], shared_data / "games" / "ccpd_dev.jsonl", 1, "easy", 5)
    assert written + skipped == 2 and written >= 1 and failed < 64
    found, unlabelled = photos.find_labelled(tmp_path)
    assert len(found) == written and not unlabelled
    clf = photos.PieceClassifier.load()
    for item in found:
        result = photos.measure(item, tmp_path, clf, {})
        assert result.status == "read"
        label = photos.squares_from_fen(item.fen, item.image.name)
        assert result.counts["pieces"] == sum(ch != "." for ch in label) >= 10
        # detect may be unsure of a real piece; it must not misread one, nor see one where the label has none
        assert result.counts["wrong"] == 0, result.wrong
