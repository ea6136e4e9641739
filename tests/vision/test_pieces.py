"""The piece classifier: API, accuracy on real photographs and rendered pieces, rotation invariance.

Bars were measured on 2026-11-30 with the committed model (see bench/RESULTS.md "## pieces") and set a few points
below the measurement, so that they catch a broken model or pipeline, not noise.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from xqarb.vision import pieces as P
from xqarb.vision import pieces_train as T

# Measured with the committed model (2026-11-30): real valid split (1,548 crops of 50 photos, none in train) type
# 89.2%, colour 99.2%; sprites below type 96.9%, colour 97.5%; the two boards below 71.3% (the first is a scene whose
# pieces are blurred beyond reading: 18/40; the second 39/40). Right-angle agreement on real crops 95-96%.
REAL_TYPE_BAR = 0.86
REAL_COLOUR_BAR = 0.98
SPRITE_TYPE_BAR = 0.88
SPRITE_COLOUR_BAR = 0.94
BOARD_LETTER_BAR = 0.55


@pytest.fixture(scope="module")
def clf() -> P.PieceClassifier:
    return P.PieceClassifier.load()


@pytest.fixture(scope="module")
def valid(shared_data: Path) -> list[T.Sample]:
    return T.load_real(shared_data / "piece_crops" / "valid")


def _disc_image(glyph: str, red: bool, size: int = 40, angle: float = 0.0) -> np.ndarray:
    """A clean rendered piece (the renderer's sprite on a wooden background), upright or rotated."""
    from xqarb.vision.render import random_scene
    from xqarb.vision.render_assets import piece_sprite

    look = random_scene(7, difficulty="easy").pieces
    sprite = piece_sprite(look, glyph, red, size)
    bg = np.full((size, size, 3), (120, 170, 215), np.float32)
    img = np.clip(bg * (1 - sprite[..., 3:4]) + sprite[..., :3], 0, 255).astype(np.uint8)
    if angle:
        m = cv2.getRotationMatrix2D(((size - 1) / 2, (size - 1) / 2), angle, 1.0)
        img = cv2.warpAffine(img, m, (size, size), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return img


# --- API ------------------------------------------------------------------------------------------------------


def test_classify_returns_fen_letters_and_confidences(clf: P.PieceClassifier) -> None:
    crops = [_disc_image("帥", True), _disc_image("卒", False, 30), _disc_image("炮", True, 64)]
    out = clf.classify(crops)
    assert len(out) == 3
    for letter, conf in out:
        assert isinstance(letter, str) and letter in "KABNRCPkabnrcp"
        assert isinstance(conf, float) and 0.0 <= conf <= 1.0
    assert [letter for letter, _ in out] == ["K", "p", "C"]
    assert clf.classify([]) == []


def test_colour_api(clf: P.PieceClassifier) -> None:
    name, conf = clf.colour(_disc_image("兵", True))
    assert (name, conf > 0.5) == ("red", True)
    name, conf = clf.colour(_disc_image("將", False))
    assert (name, conf > 0.5) == ("black", True)


def test_any_crop_shape_and_dtype(clf: P.PieceClassifier) -> None:
    img = _disc_image("马", False, 36)
    grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    bgra = cv2.cvtColor(img, cv2.COLOR_BGR2BGRA)
    wide = cv2.resize(img, (40, 36))
    out = clf.classify([img, grey, bgra, wide, img.astype(np.float32)])
    assert [letter.upper() for letter, _ in out] == ["N"] * 5


def test_bad_crop_is_refused(clf: P.PieceClassifier) -> None:
    with pytest.raises(P.BadCrop):
        clf.classify([np.zeros((2, 2, 3), np.uint8)])
    with pytest.raises(P.BadCrop):
        clf.classify(["not an image"])  # type: ignore[list-item]


def test_model_file_is_small_and_self_contained() -> None:
    from importlib import resources

    ref = resources.files("xqarb") / "data" / "vision" / "pieces.npz"
    assert ref.is_file()
    assert len(ref.read_bytes()) < 1_500_000
    w = P.load_weights()
    assert w.head[0].shape[1] == len(P.TYPES)


# --- the network's invariance and its training code --------------------------------------------------------------


def test_network_is_exactly_invariant_to_rotating_the_polar_image(clf: P.PieceClassifier) -> None:
    """A rotation of the piece is a circular shift along the angle axis; the network cannot tell them apart."""
    rng = np.random.default_rng(1)
    polar = rng.random((4, P.N_ANGLES, P.N_RADII)).astype(np.float32)
    base = P.type_logits(clf.weights, polar)
    for shift in (1, 7, 16, 32, 50):
        np.testing.assert_allclose(P.type_logits(clf.weights, np.roll(polar, shift, axis=1)), base, rtol=1e-4,
                                   atol=1e-4)


def test_training_network_matches_inference_and_its_gradients_are_right() -> None:
    net = T.Net(3, 4, widths=(5, 6), kernels=(3, 3), seed=0)
    net.params = [p.astype(np.float64) for p in net.params]
    rng = np.random.default_rng(2)
    x = rng.normal(size=(2, 8, 3))
    y = np.array([1, 2])
    w = T.weights_of(net, (np.zeros(5), np.ones(5), np.zeros(5), 0.0), {})
    z, state = net.forward(x)
    np.testing.assert_allclose(P.type_logits(w, x.astype(np.float32)), z, rtol=1e-4, atol=1e-5)

    def loss() -> float:
        zz, _ = net.forward(x)
        return float(-np.log(P.softmax(zz)[[0, 1], y]).sum())

    g = P.softmax(z)
    g[[0, 1], y] -= 1
    grads = net.backward(g, state)
    for i, p in enumerate(net.params):
        j = tuple(int(rng.integers(0, s)) for s in p.shape)
        old = p[j]
        p[j] = old + 1e-6
        up = loss()
        p[j] = old - 1e-6
        down = loss()
        p[j] = old
        assert grads[i][j] == pytest.approx((up - down) / 2e-6, rel=1e-4, abs=1e-7)


# --- real photographs ----------------------------------------------------------------------------------------------


def test_valid_split_keeps_each_photo_on_one_side(shared_data: Path, valid: list[T.Sample]) -> None:
    """Roboflow made three rotated copies of each photo: an honest split never puts one photo on both sides."""
    train_photos = {T.photo_of(f.name) for f in (shared_data / "piece_crops" / "train").glob("*/*.jpg")}
    assert train_photos and not train_photos & {s.photo for s in valid}


def test_accuracy_on_real_valid_photos(clf: P.PieceClassifier, valid: list[T.Sample]) -> None:
    rep = T.per_class_report(clf.weights, valid)
    assert rep["n"] > 1500
    assert rep["type"] >= REAL_TYPE_BAR, rep
    assert rep["colour"] >= REAL_COLOUR_BAR, rep
    # No class may collapse, whatever the overall figure.
    assert min(r["type"] for r in rep["classes"].values()) >= 0.5, rep["classes"]


def test_real_photos_read_the_same_at_right_angles(clf: P.PieceClassifier, valid: list[T.Sample]) -> None:
    crops = [s.image for s in valid[::8]]
    base = [letter for letter, _ in clf.classify(crops)]
    for k in (1, 2, 3):
        turned = [letter for letter, _ in clf.classify([np.ascontiguousarray(np.rot90(c, k)) for c in crops])]
        same = np.mean([a == b for a, b in zip(base, turned, strict=True)])
        assert same >= 0.90, (k, same)


# --- rendered pieces -----------------------------------------------------------------------------------------------


def test_rendered_sprites_any_rotation_font_and_camera(clf: P.PieceClassifier) -> None:
    """Sprites from looks and a seed the training never used (training draws from seed 20261130)."""
    samples = T.synth_samples(160, seed=4242, n_looks=6)
    rep = T.per_class_report(clf.weights, samples)
    assert rep["type"] >= SPRITE_TYPE_BAR, rep
    assert rep["colour"] >= SPRITE_COLOUR_BAR, rep


def test_each_glyph_variant_upright_and_rotated(clf: P.PieceClassifier) -> None:
    for t, variants in P.GLYPHS.items():
        for glyph in variants:
            for red in (True, False):
                for angle in (0, 75, 180, 290):
                    letter, _ = clf.classify([_disc_image(glyph, red, 40, angle)])[0]
                    want = t if red else t.lower()
                    assert letter == want, (glyph, red, angle, letter)


def test_pieces_on_rendered_boards(clf: P.PieceClassifier) -> None:
    """Whole rendered boards (hard scenes, random positions), each piece's top face rectified as the detector's
    canonical view shows it; boards the training never drew (training renders from seed 20261133)."""
    samples = T.rendered_board_samples(2, seed=777)
    rep = T.per_class_report(clf.weights, samples)
    assert rep["n"] == 80
    assert rep["letter"] >= BOARD_LETTER_BAR, rep


# --- colour from the ink against the disc -------------------------------------------------------------------------


@pytest.mark.parametrize("disc,ink,face,red", [
    ((205, 230, 240), (40, 35, 190), None, True),  # red ink on an ivory disc
    ((140, 185, 220), (50, 50, 160), None, True),  # dull red ink on light wood
    ((205, 230, 240), (30, 30, 30), None, False),  # black ink
    ((140, 185, 220), (60, 80, 20), None, False),  # dark green ink on light wood
    ((238, 240, 240), (90, 45, 20), None, False),  # blue-black ink on white plastic
    ((205, 230, 240), None, (35, 35, 35), False),  # a light character on a black disc
    ((205, 230, 240), None, (40, 70, 35), False),  # ... on a dark green disc
    ((205, 230, 240), None, (40, 40, 175), True),  # ... on a red disc
])
def test_ink_tone_tells_red_from_dark_inks_and_light_characters_on_dark_discs(disc, ink, face, red) -> None:
    from dataclasses import replace

    from xqarb.vision.detect import RED_KEPT_WEIGHT, REDNESS_SPLIT
    from xqarb.vision.render import random_scene
    from xqarb.vision.render_assets import piece_sprite

    look = replace(random_scene(7, difficulty="easy").pieces, disc=disc, grain=0.0)
    look = replace(look, red_ink=ink, black_ink=ink) if ink else replace(look, red_face=face, black_face=face)
    dark_faces = []
    for glyph in "車兵炮":
        sprite = piece_sprite(look, glyph, red, 40)
        img = np.full((48, 48, 3), (120, 170, 215), np.float32)  # a wooden board about the disc
        img[4:44, 4:44] = img[4:44, 4:44] * (1 - sprite[..., 3:4]) + sprite[..., :3]
        crop = np.clip(img, 0, 255).astype(np.uint8)
        tone = P.ink_tone(crop)
        leans = tone.redness + RED_KEPT_WEIGHT * tone.red_kept
        if red:
            assert leans > REDNESS_SPLIT + 0.25, (glyph, tone)
        else:
            assert leans < REDNESS_SPLIT - 0.1, (glyph, tone)
        assert tone.contrast > 60, tone  # two tones, not one tone split by noise
        dark_faces.append(tone.ring_dark > 0.5)
    # which tone is the face: the darker one about the character on a dark or red disc, the lighter one else (a
    # dense character can fill the face about it: judged on most of a piece's crops, as detect.light_on_dark does)
    assert (sum(dark_faces) >= 2) == (face is not None), dark_faces
