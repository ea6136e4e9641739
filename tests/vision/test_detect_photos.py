"""bench/detect_photos.py, the measure of detect on labelled photos of real boards: its labels (positions, and the
boxes of object-detection sets with their many ways of naming pieces) give the position photographed, and its
figures are detect's own per point. Checked on rendered photos, whose positions are known, labelled both ways."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from xqarb.referee.inference import fen_of
from xqarb.vision.board import find_board, fit_from_h, rotate_half_turn
from xqarb.vision.detect import read_board
from xqarb.vision.pieces import PieceClassifier

render = pytest.importorskip("xqarb.vision.render")
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
photos = importlib.import_module("detect_photos")

# middle games of ccpd_dev: the first after 30 plies, the fourth after 70
MIDDLE = "...akabr.......c..c.....n..p...pn..p..b.........R.N...P...P...P..C.C..............NBAKAB.."
LATE = "....kab......a.......cb......NC....p.....r...P....pR......Pn..P..N.B........A........KAB.."
CASES = [(8, "hard", MIDDLE), (5, "easy", LATE)]
BESIDE = ("r", "C", "p")  # captured pieces lying beside the board: labelled, and left out
NAMES = ["board", "black_advisor", "black_cannon", "black_elephant", "black_horse", "black_king", "black_pawn",
         "black_rook", "red_advisor", "red_cannon", "red_elephant", "red_horse", "red_king", "red_pawn", "red_rook"]


def _fen(squares: str) -> str:
    return fen_of(squares, "red", 0, 1)


def _class_of(letter: str) -> int:
    side = "red" if letter.isupper() else "black"
    kind = {"k": "king", "a": "advisor", "b": "elephant", "n": "horse", "r": "rook", "c": "cannon",
            "p": "pawn"}[letter.lower()]
    return NAMES.index(f"{side}_{kind}")


def _boxes(scene, squares: str, shape: tuple[int, int]) -> list[str]:
    """YOLO lines for the pieces the renderer drew (on the board and beside it): each box around the piece's
    side and top face, as a labeller draws it; and one box for the board."""
    view = render._context(scene).view
    pieces = render._board_pieces(scene, squares, {}, None) + render._beside_pieces(scene, BESIDE)
    h, w = shape
    lines = []
    for p in pieces:
        if p.letter == "?":
            continue  # lying face down: nothing to name it by
        base = view.project(np.array([[p.x, p.y, 0.0]]))[0]
        top = view.project(np.array([[p.x, p.y, scene.piece_height]]))[0]
        cx, cy = (base + top) / 2
        lines.append(f"{_class_of(p.letter)} {cx / w:.6f} {cy / h:.6f} {30 / w:.6f} {30 / h:.6f}")
    lines.append("0 0.5 0.5 0.8 0.8")
    return lines


@pytest.fixture(scope="module")
def photo_sets(tmp_path_factory) -> tuple[Path, Path, list[tuple[str, str, np.ndarray]]]:
    """The same rendered photos twice: labelled by position (IMAGE.fen) and by boxes (a Roboflow-style export:
    images/, labels/, data.yaml); and each photo's true position and pixels."""
    by_fen = tmp_path_factory.mktemp("by_fen")
    by_box = tmp_path_factory.mktemp("by_box")
    (by_box / "train" / "images").mkdir(parents=True)
    (by_box / "train" / "labels").mkdir(parents=True)
    quoted = ", ".join(f"'{n}'" for n in NAMES)
    (by_box / "data.yaml").write_text(f"nc: {len(NAMES)}\nnames: [{quoted}]\n")
    truths = []
    for k, (seed, difficulty, squares) in enumerate(CASES):
        scene = render.random_scene(seed, difficulty=difficulty)
        shot = render.render_position(squares, scene, beside=BESIDE)
        data = cv2.imencode(".jpg", shot.image, [cv2.IMWRITE_JPEG_QUALITY, 90])[1].tobytes()
        (by_fen / f"p{k}.jpg").write_bytes(data)
        (by_fen / f"p{k}.fen").write_text(_fen(squares) + "\n")
        (by_box / "train" / "images" / f"p{k}.jpg").write_bytes(data)
        (by_box / "train" / "labels" / f"p{k}.txt").write_text("\n".join(_boxes(scene, squares, shot.image.shape[:2])))
        truths.append((f"p{k}", squares, cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)))
    (by_fen / "notes.png").write_bytes(cv2.imencode(".png", np.zeros((8, 8, 3), np.uint8))[1].tobytes())
    return by_fen, by_box, truths


def test_class_names_of_detection_sets_read_as_fen_letters() -> None:
    read = photos.piece_letter
    assert [read(n) for n in ("red_horse", "black_king", "b_che", "r_ma", "BlackGeneral", "RedAdvisor", "rk", "bn",
                              "red-cannon", "black elephant", "redhorse", "heima", "K", "p")] == \
        ["N", "k", "r", "N", "k", "A", "K", "n", "C", "b", "N", "n", "K", "p"]
    # the characters: a side word, or a traditional set's own character for each side
    assert [read(n) for n in ("红车", "黑马", "將", "兵", "卒", "仕", "士", "砲")] == \
        ["R", "n", "k", "P", "p", "A", "a", "c"]
    assert read("board") is None and read("Chessboard") is None
    for name in ("炮", "rook", "horse", "red", "xyz"):  # 炮 is both sides' on simplified sets
        with pytest.raises(photos.LabelError, match="--names"):
            read(name)


def test_fen_labels_are_read_and_checked() -> None:
    assert photos.squares_from_fen(fen_of(MIDDLE, "black", 0, 1), "x") == MIDDLE
    with pytest.raises(photos.LabelError, match="10 ranks"):
        photos.squares_from_fen("rnbakabnr/9/9", "x")
    with pytest.raises(photos.LabelError, match="9 points"):
        photos.squares_from_fen("rnbakabnrr/9/9/9/9/9/9/9/9/9", "x")


def test_both_label_forms_give_detects_own_figures(photo_sets, capsys) -> None:
    by_fen, by_box, truths = photo_sets
    clf = PieceClassifier.load()
    direct = []
    for _, squares, image in truths:
        direct.append(photos.tally(squares, read_board(image, find_board(image), clf).squares))
    found, unlabelled = photos.find_labelled(by_fen)
    assert [f.image.name for f in found] == ["p0.jpg", "p1.jpg"] and [p.name for p in unlabelled] == ["notes.png"]
    # the label may also be named after the whole file name, as `p1.jpg.fen`
    (by_fen / "p1.fen").rename(by_fen / "p1.jpg.fen")
    try:
        again, _ = photos.find_labelled(by_fen)
    finally:
        (by_fen / "p1.jpg.fen").rename(by_fen / "p1.fen")
    assert [(f.image.name, f.fen) for f in again] == [(f.image.name, f.fen) for f in found]
    fen_results = [photos.measure(item, by_fen, clf, {}) for item in found]
    box_items, _ = photos.find_labelled(by_box)
    box_results = [photos.measure(item, by_box, clf, {}) for item in box_items]
    for r_fen, r_box, one in zip(fen_results, box_results, direct, strict=True):
        assert r_fen.status == r_box.status == "read"
        assert r_fen.counts == r_box.counts == one
        assert r_fen.wrong == r_box.wrong
        # the captured pieces' boxes beside the board were left out (one face down: not labelled)
        assert r_box.note.endswith("boxes beside the board") and int(r_box.note.split()[0]) >= 2
    assert sum(c["points"] for c in direct) == 180
    assert photos.main([str(by_box), "--verbose"]) == 0
    out = capsys.readouterr().out
    right = sum(c["right"] for c in direct)
    assert "2/2 photos read" in out and f"right {right / 180:.2%}" in out


def test_a_wrong_label_shows_as_one_wrong_point(photo_sets) -> None:
    """The measure is the labels' against detect's, point by point: one piece labelled as another type is one more
    wrong point, of the wrong type."""
    by_fen, _, truths = photo_sets
    clf = PieceClassifier.load()
    name, squares, image = truths[0]
    got = read_board(image, find_board(image), clf).squares
    i = next(i for i, (a, b) in enumerate(zip(squares, got, strict=True)) if a == b and a in "Pp")
    mislabelled = squares[:i] + ("C" if squares[i] == "P" else "c") + squares[i + 1:]
    (by_fen / f"{name}.fen").write_text(_fen(mislabelled))
    try:
        item = next(f for f in photos.find_labelled(by_fen)[0] if f.image.stem == name)
        r = photos.measure(item, by_fen, clf, {})
    finally:
        (by_fen / f"{name}.fen").write_text(_fen(squares))
    base = photos.tally(squares, got)
    assert r.counts["wrong"] == base["wrong"] + 1 and r.counts["wrong type"] == base["wrong type"] + 1


def test_boxes_take_their_orientation_from_the_labels_and_a_wrong_board_is_not_read(photo_sets) -> None:
    _, by_box, truths = photo_sets
    name, squares, image = truths[0]
    fit = find_board(image)
    names = photos.class_names(by_box / "train" / "labels")
    assert names == NAMES
    h, w = image.shape[:2]
    boxes = photos.read_boxes(by_box / "train" / "labels" / f"{name}.txt", names, {}, w, h)
    pos = photos.squares_from_boxes(boxes, fit)
    assert pos.fits and pos.squares == squares and pos.beside >= 2
    # the fit half-turned: the labelled kings still put Red at the bottom
    turned = fit_from_h(rotate_half_turn(np.linalg.inv(fit.homography)), "grid", fit.score)
    assert photos.squares_from_boxes(boxes, turned).squares == squares
    # a board found half a spacing off (a grid that is not the one photographed): its boxes sit between points
    shift = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 0.5], [0.0, 0.0, 1.0]])
    off = fit_from_h(np.linalg.inv(shift @ fit.homography), "grid", fit.score)
    assert not photos.squares_from_boxes(boxes, off).fits


def test_names_it_cannot_read_stop_the_measure_with_what_to_do(photo_sets, tmp_path, capsys) -> None:
    _, by_box, _ = photo_sets
    y = by_box / "data.yaml"
    kept = y.read_text()
    y.write_text(kept.replace("'red_rook'", "'r_thing'"))
    try:
        assert photos.main([str(by_box)]) == 2
        assert "'r_thing'" in capsys.readouterr().err
        overrides = tmp_path / "names.txt"
        overrides.write_text("r_thing=R\n")
        assert photos.main([str(by_box), "--names", str(overrides)]) == 0
    finally:
        y.write_text(kept)
