"""Train the piece classifier (`python -m xqarb.vision.pieces_train`): writes `xqarb/data/vision/pieces.npz`.

Data:
- real photographs of single pieces, `../shared/data/piece_crops/{train,valid}/<colour>_<type>/*.jpg`, from the
  Roboflow Universe dataset "Chinese-chess-detect-for-yolo v8", licensed CC BY 4.0
  (https://creativecommons.org/licenses/by/4.0/). Each source photo was augmented into three rotated copies, and
  many pieces come from one photo: files sharing the prefix before `_jpg.rf.` are one photo. The given split keeps
  every photo on one side (100 photos train, 50 valid, none shared; `photo_of` + the test check it);
- sprites drawn by the renderer's `piece_sprite` with every installed CJK font, every glyph variant of a type
  (simplified and traditional), random disc/ink colours, on board-like backgrounds with grid lines, rotated,
  squashed by a camera tilt up to 35 degrees, blurred, noisy, colour-cast and JPEG-compressed;
- pieces of whole boards rendered by `render_position` (hard scenes, random positions), each top face rectified
  as the detector's canonical view shows it.
The real crops are used as they are plus two augmented copies each (any rotation, scale, tilt, light, JPEG); each
part (real, sprites, boards) is class-balanced. `--report` measures a model without training.

Deterministic: every random draw comes from numpy generators seeded from `--seed`.
The network is the one of `pieces.py` (circular 1-D convolutions along the angle of the polar ink image); its
training (backpropagation, Adam) is written here in numpy.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np

from xqarb.vision import pieces as P

KIND_TO_TYPE = {"king": "K", "advisor": "A", "elephant": "B", "horse": "N", "rook": "R", "cannon": "C", "pawn": "P"}


@dataclass(frozen=True)
class Sample:
    image: np.ndarray  # BGR uint8
    type_index: int  # index into P.TYPES
    red: bool
    photo: str  # source photo (real) or "synthetic:<seed>"


def photo_of(filename: str) -> str:
    """Roboflow names an augmented copy `<photo>_jpg.rf.<hash>.jpg`: the part before `_jpg.rf.` is the photo."""
    return filename.split("_jpg.rf.")[0]


def load_real(split_dir: Path) -> list[Sample]:
    out = []
    for cls in sorted(os.listdir(split_dir)):
        colour, kind = cls.split("_", 1)
        t = P.TYPES.index(KIND_TO_TYPE[kind])
        for f in sorted(os.listdir(split_dir / cls)):
            img = cv2.imread(str(split_dir / cls / f), cv2.IMREAD_COLOR)
            if img is None:
                raise OSError(f"cannot read image {split_dir / cls / f}")
            out.append(Sample(img, t, colour == "red", photo_of(f)))
    return out


# ---------------------------------------------------------------------------------------------------------------
# The camera: what happens to a piece between the table and the crop


def _jpeg(img: np.ndarray, quality: int) -> np.ndarray:
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise RuntimeError("OpenCV could not encode a JPEG")
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)


def _optics(img: np.ndarray, rng: np.random.Generator, strength: float = 1.0) -> np.ndarray:
    """Blur, colour cast and gain, sensor noise, JPEG."""
    out = img.astype(np.float32)
    if rng.random() < 0.6:
        out = cv2.GaussianBlur(out, (0, 0), float(rng.uniform(0.3, 1.1) * strength))
    cast = np.array([rng.uniform(0.88, 1.12), rng.uniform(0.95, 1.05), rng.uniform(0.88, 1.12)])
    gain = rng.uniform(0.6, 1.25) * cast
    out = out * gain.astype(np.float32) + float(rng.uniform(-15, 15))
    if rng.random() < 0.5:  # uneven light across the piece
        h, w = out.shape[:2]
        gx, gy = rng.uniform(-0.3, 0.3, 2)
        ramp = 1 + gx * (np.arange(w)[None, :] / w - 0.5) + gy * (np.arange(h)[:, None] / h - 0.5)
        out = out * ramp[..., None].astype(np.float32)
    out = out + rng.normal(0, rng.uniform(0, 6) * strength, out.shape).astype(np.float32)
    out = np.clip(out, 0, 255).astype(np.uint8)
    return _jpeg(out, int(rng.integers(35, 96))) if rng.random() < 0.8 else out


def augment_real(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A real crop seen again: any rotation, a little off-centre, another scale and tilt, other light."""
    h, w = img.shape[:2]
    pad = max(h, w) // 2
    big = cv2.copyMakeBorder(img, pad, pad, pad, pad, cv2.BORDER_REFLECT)
    c = np.array([big.shape[1] / 2, big.shape[0] / 2])
    ang = float(rng.uniform(0, 360))
    scale = float(rng.uniform(0.85, 1.15))
    m = cv2.getRotationMatrix2D((float(c[0]), float(c[1])), ang, scale)
    tilt = float(np.cos(np.radians(rng.uniform(0, 25))))
    phi = float(rng.uniform(0, np.pi))
    rot = np.array([[np.cos(phi), -np.sin(phi)], [np.sin(phi), np.cos(phi)]])
    squash = rot @ np.diag([1.0, tilt]) @ rot.T
    m[:, :2] = squash @ m[:, :2]
    m[:, 2] = c - m[:, :2] @ c + rng.normal(0, 0.05 * max(h, w), 2)
    m[:, 2] += np.array([w / 2, h / 2]) - c
    out = cv2.warpAffine(big, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    return _optics(out, rng, 0.7)


def _background(rng: np.random.Generator, size: int, spacing: float, centre: np.ndarray) -> np.ndarray:
    """A patch of board around a point: wood / paper / cloth / vinyl with red or dark grid lines."""
    base = [(120, 170, 215), (215, 225, 230), (95, 140, 105), (200, 205, 210), (80, 120, 170), (150, 200, 230)]
    col = np.array(base[int(rng.integers(len(base)))], np.float32) * rng.uniform(0.75, 1.15, 3).astype(np.float32)
    img = np.empty((size, size, 3), np.float32)
    img[:] = col
    tex = cv2.resize(rng.normal(0, 1, (size // 6 + 2, size // 6 + 2)).astype(np.float32), (size, size))
    img *= (1 + 0.06 * tex)[..., None]
    line = (40, 40, 170) if rng.random() < 0.4 else (40, 45, 50)
    lw = max(1, round(spacing * rng.uniform(0.02, 0.05)))
    for k in range(-3, 4):
        x = round(centre[0] + k * spacing)
        y = round(centre[1] + k * spacing * rng.uniform(0.95, 1.1))
        cv2.line(img, (x, 0), (x, size), line, lw)
        cv2.line(img, (0, y), (size, y), line, lw)
    return np.clip(img, 0, 255).astype(np.uint8)


class SpriteBank:
    """Piece looks of the renderer's random scenes (disc, ink, ring, font) and their sprites, drawn once each."""

    DIAMETER = 56  # sprites are drawn at this size and scaled by the camera's affine

    def __init__(self, seed: int, n_looks: int = 48) -> None:
        from xqarb.vision.render import random_scene

        rng = np.random.default_rng(seed)
        self.looks = [random_scene(int(rng.integers(1 << 30)), difficulty="hard").pieces for _ in range(n_looks)]
        self._cache: dict[tuple[int, str, bool], np.ndarray] = {}

    def sprite(self, look: int, glyph: str, red: bool) -> np.ndarray:
        from xqarb.vision.render_assets import piece_sprite

        key = (look, glyph, red)
        if key not in self._cache:
            self._cache[key] = piece_sprite(self.looks[look], glyph, red, self.DIAMETER)
        return self._cache[key]


def _rot(a: float) -> np.ndarray:
    return np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])


def synth_sample(rng: np.random.Generator, bank: SpriteBank, tag: str = "synthetic") -> Sample:
    """One rendered piece on a patch of board, through a random camera, cropped about the point."""
    li = int(rng.integers(len(bank.looks)))
    look = bank.looks[li]
    t = int(rng.integers(len(P.TYPES)))
    variants = P.GLYPHS[P.TYPES[t]]
    glyph = variants[int(rng.integers(len(variants)))]
    red = bool(rng.random() < 0.5)
    sprite = bank.sprite(li, glyph, red)  # premultiplied BGRA float32, upright
    diam = float(rng.uniform(22, 56))
    spacing = diam / rng.uniform(0.8, 0.95)
    size = int(diam * 2.6)
    c = np.array([size / 2, size / 2])
    img = _background(rng, size, spacing, c + rng.normal(0, 0.03 * diam, 2)).astype(np.float32)
    # Affine from sprite to canvas: rotation (any side may face the camera), scale, the tilt's foreshortening.
    tilt = float(np.cos(np.radians(rng.uniform(0, 35))))
    phi = float(rng.uniform(0, np.pi))
    d = sprite.shape[0]
    a2 = _rot(phi) @ np.diag([1.0, tilt]) @ _rot(-phi) @ _rot(float(rng.uniform(0, 2 * np.pi))) * (diam / d)
    m = np.hstack([a2, (c - a2 @ np.array([(d - 1) / 2, (d - 1) / 2]))[:, None]])
    # The side of the piece (its thickness) and a soft shadow, below the top face.
    height = diam * rng.uniform(0.12, 0.3) * np.sin(np.arccos(tilt))
    down = _rot(phi) @ np.array([0.0, 1.0]) * height
    ax = (int(diam / 2), int(diam / 2 * tilt))
    shadow = img.copy()
    cv2.ellipse(shadow, (int(c[0] + down[0] * 1.5), int(c[1] + down[1] * 1.5)), ax, np.degrees(phi), 0, 360,
                (0, 0, 0), -1)
    img = cv2.GaussianBlur(shadow, (0, 0), diam * 0.08) * 0.5 + img * 0.5
    edge = [float(v) * 0.9 for v in look.edge]
    cv2.ellipse(img, (int(c[0] + down[0]), int(c[1] + down[1])), ax, np.degrees(phi), 0, 360, edge, -1)
    warped = cv2.warpAffine(sprite, m, (size, size), flags=cv2.INTER_AREA, borderValue=(0, 0, 0, 0))
    img = img * (1 - warped[..., 3:4]) + warped[..., :3]
    # Crop about the point (the detector's crop: about one grid spacing, the piece a little off the point).
    side = spacing * rng.uniform(0.95, 1.25)
    cx, cy = c + rng.normal(0, 0.05 * diam, 2)
    x0, y0 = round(cx - side / 2), round(cy - side / 2)
    crop = np.clip(img[y0:y0 + int(side), x0:x0 + int(side)], 0, 255).astype(np.uint8)
    return Sample(_optics(crop, rng, min(1.0, diam / 40)), t, red, tag)


def synth_samples(n: int, seed: int, n_looks: int = 48) -> list[Sample]:
    rng = np.random.default_rng(seed)
    bank = SpriteBank(seed, n_looks)
    return [synth_sample(rng, bank, f"synthetic:{seed}") for _ in range(n)]


# ---------------------------------------------------------------------------------------------------------------
# Features and the network's training


def features(samples: Sequence[Sample], jitter_seed: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(polar ink images (B, A, R), colour features (B, 5)).

    jitter_seed: for training, move half of the found discs a little (centre +-1.5 px, radius +-10%), so that the
    network does not depend on the disc being found exactly."""
    rng = np.random.default_rng(jitter_seed) if jitter_seed is not None else None
    pol, col = [], []
    for s in samples:
        img = P.normalise_crop(s.image)
        disc = P.find_disc(img)
        if rng is not None and rng.random() < 0.5:
            dx, dy = rng.uniform(-1.5, 1.5, 2)
            disc = replace(disc, cx=disc.cx + float(dx), cy=disc.cy + float(dy),
                           radius=disc.radius * float(rng.uniform(0.9, 1.1)))
        polar, colour = P.crop_features(img, disc)
        pol.append(polar)
        col.append(colour)
    return np.stack(pol).astype(np.float32), np.stack(col).astype(np.float32)


def _im2col(x: np.ndarray, k: int) -> np.ndarray:
    h = k // 2
    return np.concatenate([np.roll(x, h - j, axis=1) for j in range(k)], axis=2)


def _col2im(g: np.ndarray, k: int, c: int) -> np.ndarray:
    h = k // 2
    out = np.zeros((*g.shape[:2], c), g.dtype)
    for j in range(k):
        out += np.roll(g[:, :, j * c:(j + 1) * c], j - h, axis=1)
    return out


class Net:
    """The classifier's network with backpropagation (inference uses `pieces.type_logits` on the same weights)."""

    def __init__(self, cin: int, n_out: int, widths: Sequence[int], kernels: Sequence[int], seed: int) -> None:
        rng = np.random.default_rng(seed)
        self.kernels = tuple(kernels)
        self.params: list[np.ndarray] = []
        c = cin
        for w, k in zip(widths, kernels, strict=True):
            self.params += [rng.normal(0, np.sqrt(2 / (k * c)), (k * c, w)).astype(np.float32),
                            np.zeros(w, np.float32)]
            c = w
        self.params += [rng.normal(0, np.sqrt(1 / (2 * c)), (2 * c, n_out)).astype(np.float32),
                        np.zeros(n_out, np.float32)]

    def forward(self, x: np.ndarray, drop: float = 0.0, rng: np.random.Generator | None = None):
        cache = []
        a = x
        for i, k in enumerate(self.kernels):
            cols = _im2col(a, k)
            w = self.params[2 * i]
            h = (cols.reshape(-1, cols.shape[2]) @ w + self.params[2 * i + 1]).reshape(*cols.shape[:2], w.shape[1])
            cache.append((cols, h, a.shape[2]))
            a = np.maximum(h, 0)
        f = np.concatenate([a.max(1), a.mean(1)], 1)
        mask = None
        if drop > 0 and rng is not None:
            mask = ((rng.random(f.shape) > drop) / (1 - drop)).astype(np.float32)
            f = f * mask
        return f @ self.params[-2] + self.params[-1], (cache, a, f, mask)

    def backward(self, gz: np.ndarray, state) -> list[np.ndarray]:
        cache, a, f, mask = state
        grads: list[np.ndarray] = [np.empty(0)] * len(self.params)
        grads[-2], grads[-1] = f.T @ gz, gz.sum(0)
        gf = gz @ self.params[-2].T
        if mask is not None:
            gf = gf * mask
        b, length, c = a.shape
        g = np.repeat(gf[:, None, c:] / length, length, axis=1)
        idx = a.argmax(1)
        g[np.arange(b)[:, None], idx, np.arange(c)[None, :]] += gf[:, :c]
        for i in reversed(range(len(self.kernels))):
            cols, h, cin = cache[i]
            g = g * (h > 0)
            g2 = g.reshape(-1, g.shape[2])
            grads[2 * i] = cols.reshape(-1, cols.shape[2]).T @ g2
            grads[2 * i + 1] = g2.sum(0)
            if i > 0:
                g = _col2im((g2 @ self.params[2 * i].T).reshape(*g.shape[:2], -1), self.kernels[i], cin)
        return grads


def train_net(net: Net, x: np.ndarray, y: np.ndarray, weight: np.ndarray, *, epochs: int, seed: int,
              lr: float = 2e-3, wd: float = 1e-4, batch: int = 64, drop: float = 0.3,
              report: Callable[[int], None] | None = None) -> Net:
    """Adam with a cosine learning rate, softmax cross-entropy weighted per sample (class balance)."""
    rng = np.random.default_rng(seed)
    m = [np.zeros_like(p) for p in net.params]
    v = [np.zeros_like(p) for p in net.params]
    step = 0
    n = len(x)
    for ep in range(epochs):
        order = rng.permutation(n)
        for i in range(0, n, batch):
            b = order[i:i + batch]
            z, state = net.forward(x[b], drop, rng)
            pr = P.softmax(z)
            pr[np.arange(len(b)), y[b]] -= 1
            g = pr * (weight[b] / weight[b].sum())[:, None]
            grads = net.backward(g.astype(np.float32), state)
            step += 1
            lr_t = lr * 0.5 * (1 + np.cos(np.pi * min(1.0, (ep + i / n) / epochs)))
            for p, gr, mm, vv in zip(net.params, grads, m, v, strict=True):
                if p.ndim > 1:
                    gr = gr + wd * p
                mm *= 0.9
                mm += 0.1 * gr
                vv *= 0.999
                vv += 0.001 * gr * gr
                p -= (lr_t * (mm / (1 - 0.9 ** step)) / (np.sqrt(vv / (1 - 0.999 ** step)) + 1e-8)).astype(p.dtype)
        if report:
            report(ep)
    return net


def train_colour(feats: np.ndarray, red: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Logistic regression on the colour features (full-batch gradient descent)."""
    mean = feats.mean(0).astype(np.float32)
    scale = (feats.std(0) + 1e-6).astype(np.float32)
    x = (feats - mean) / scale
    y = red.astype(np.float32)
    rng = np.random.default_rng(seed)
    w = rng.normal(0, 0.01, x.shape[1]).astype(np.float32)
    b = 0.0
    for _ in range(3000):
        p = 1 / (1 + np.exp(-np.clip(x @ w + b, -40, 40)))
        g = p - y
        w -= 0.5 * ((x.T @ g) / len(y) + 1e-4 * w)
        b -= 0.5 * float(g.mean())
    return mean, scale, w.astype(np.float32), float(b)


def weights_of(net: Net, colour: tuple[np.ndarray, np.ndarray, np.ndarray, float], meta: dict) -> P.Weights:
    convs = tuple((net.params[2 * i], net.params[2 * i + 1], k) for i, k in enumerate(net.kernels))
    return P.Weights(convs=convs, head=(net.params[-2], net.params[-1]), colour=colour, meta=meta)


def per_class_report(weights: P.Weights, samples: Sequence[Sample]) -> dict:
    """Accuracy of type, colour and letter, overall and per class (`red_K` ...), on samples."""
    clf = P.PieceClassifier(weights)
    got = clf.read([s.image for s in samples])
    truth_t = np.array([s.type_index for s in samples])
    truth_r = np.array([s.red for s in samples])
    pred_t = np.array([int(r.type_probs.argmax()) for r in got])
    pred_r = np.array([r.red >= 0.5 for r in got])
    rows = {}
    for red in (True, False):
        for t, letter in enumerate(P.TYPES):
            sel = (truth_t == t) & (truth_r == red)
            if sel.any():
                rows[letter if red else letter.lower()] = {
                    "n": int(sel.sum()), "type": float((pred_t[sel] == t).mean()),
                    "colour": float((pred_r[sel] == red).mean()),
                    "letter": float(((pred_t == t) & (pred_r == red))[sel].mean())}
    return {"n": len(samples), "type": float((pred_t == truth_t).mean()), "colour": float((pred_r == truth_r).mean()),
            "letter": float(((pred_t == truth_t) & (pred_r == truth_r)).mean()), "classes": rows}


def rendered_board_samples(n_boards: int, seed: int, per_board: int = 40, px: int = 40,
                           offset: float | None = None) -> list[Sample]:
    """Pieces on whole rendered boards (`render_position`, hard scenes, random positions with every letter).

    Each crop is the piece's top face rectified as the detector's canonical view would show it: the plane of the
    top face (height `scene.piece_height`) mapped to `px` pixels per grid spacing, centred on the face's centre
    a little off (as the detector's ink peak is; `offset`: exactly this far, in spacings, in a random direction),
    side 0.95-1.2 spacings. Uses the renderer's internals
    (`_context`, `_board_pieces`) to know where each top face is: training only, never the product.
    """
    from xqarb.vision import render as R

    rng = np.random.default_rng(seed)
    letters = "KABNRCPkabnrcp"
    out = []
    for _ in range(n_boards):
        scene = R.random_scene(int(rng.integers(1 << 30)), difficulty="hard")
        squares = ["."] * 90
        for i in rng.choice(90, per_board, replace=False):
            squares[int(i)] = letters[int(rng.integers(len(letters)))]
        sq = "".join(squares)
        img = R.render_position(sq, scene).image
        view = R._context(scene).view
        hgt = scene.piece_height
        h_top = view.homography(hgt)  # world plane z = hgt -> image
        for p in R._board_pieces(scene, sq, {}, None):
            side = round(px * rng.uniform(0.95, 1.2))
            dx, dy = rng.normal(0, 0.04, 2)
            if offset is not None:  # the same draws, so the same boards whatever the offset
                a = np.arctan2(dy, dx)
                dx, dy = offset * np.cos(a), offset * np.sin(a)
            cx, cy = p.x + dx, p.y + dy
            c = (side - 1) / 2
            # crop pixel (u, v) -> world (x right, y up): v grows downwards, as a camera above the board sees it
            t = np.array([[1 / px, 0, cx - c / px], [0, -1 / px, cy + c / px], [0, 0, 1.0]])
            crop = cv2.warpPerspective(img, h_top @ t, (side, side), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                                       borderMode=cv2.BORDER_REPLICATE)
            out.append(Sample(crop, P.TYPES.index(p.letter.upper()), p.letter.isupper(), f"board:{scene.seed}"))
    return out


def markdown_report(weights: P.Weights, valid: Sequence[Sample], sprites: Sequence[Sample],
                    boards: Sequence[Sample], ms_per_32: tuple[float, float]) -> str:
    """The "## pieces" figures for bench/RESULTS.md."""
    lines = []
    for name, samples in (("real valid photos", valid), ("rendered sprites", sprites), ("rendered boards", boards)):
        if not samples:
            continue
        rep = per_class_report(weights, samples)
        lines.append(f"- {name} (n={rep['n']}): type {rep['type']:.1%}, colour {rep['colour']:.1%}, "
                     f"letter {rep['letter']:.1%}")
        if name == "real valid photos":
            lines.append("")
            lines.append("| class | n | type | colour | letter |")
            lines.append("| --- | --- | --- | --- | --- |")
            for k, r in rep["classes"].items():
                lines.append(f"| {k} | {r['n']} | {r['type']:.1%} | {r['colour']:.1%} | {r['letter']:.1%} |")
            lines.append("")
    lines.append(f"- classify(32 crops): {ms_per_32[0]:.1f} ms wall, {ms_per_32[1]:.1f} ms CPU (medians of 20 runs)")
    return "\n".join(lines)


def time_classify(weights: P.Weights, crops: Sequence[np.ndarray], runs: int = 20) -> tuple[float, float]:
    """(wall ms, CPU ms) per classify(crops) call, medians of `runs` (CPU time: this process's own)."""
    clf = P.PieceClassifier(weights)
    wall, cpu = [], []
    for _ in range(runs):
        t, c = time.perf_counter(), time.process_time()
        clf.classify(crops)
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return float(np.median(wall) * 1000), float(np.median(cpu) * 1000)


def _default_data() -> Path:
    here = Path(__file__).resolve()
    for cand in [os.environ.get("XQARB_SHARED", ""), here.parents[2].parent / "shared", here.parents[2] / "shared"]:
        if cand and (Path(cand) / "data" / "piece_crops").is_dir():
            return Path(cand) / "data" / "piece_crops"
    raise FileNotFoundError("../shared/data/piece_crops not found; pass --data or set XQARB_SHARED")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=None, help="piece_crops directory (train/ and valid/)")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[2] / "xqarb" / "data" / "vision"
                    / "pieces.npz")
    ap.add_argument("--seed", type=int, default=20261130)
    ap.add_argument("--real-copies", type=int, default=2, help="augmented copies of each real training crop")
    ap.add_argument("--synthetic", type=int, default=10000, help="rendered training sprites")
    ap.add_argument("--boards", type=int, default=100, help="rendered boards (40 pieces each) to crop pieces from")
    ap.add_argument("--epochs", type=int, default=16)
    ap.add_argument("--widths", default="48,64,96")
    ap.add_argument("--kernels", default="5,5,3")
    ap.add_argument("--cache", type=Path, default=None, help="features cache (.npz) to reuse between runs")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--report", action="store_true",
                    help="do not train: measure the model at --out on real valid photos, sprites, boards; time it")
    args = ap.parse_args(argv)
    data = args.data or _default_data()
    t0 = time.time()
    log = lambda *a: print(f"[{time.time() - t0:6.0f}s]", *a, flush=True)  # noqa: E731
    if args.report:
        weights = P.load_weights(args.out)
        valid = load_real(data / "valid")
        sprites = synth_samples(600, seed=4242, n_looks=24)
        boards = rendered_board_samples(6, seed=4243)
        ms = time_classify(weights, [s.image for s in valid[:32]])
        print(markdown_report(weights, valid, sprites, boards, ms))
        # How far off the piece's centre a crop may be: the same boards, every crop off by a fixed distance.
        for off in (0.1, 0.2, 0.3):
            rep = per_class_report(weights, rendered_board_samples(6, seed=4243, offset=off))
            print(f"- rendered boards, every crop centred {off} spacing off the piece: letter {rep['letter']:.1%}")
        return 0
    train, valid = load_real(data / "train"), load_real(data / "valid")
    shared = {s.photo for s in train} & {s.photo for s in valid}
    if shared:
        raise ValueError(f"photos on both sides of the split: {sorted(shared)[:5]}")
    if args.cache and args.cache.is_file():
        cached = np.load(args.cache)
        x, cf, y, red, part = cached["x"], cached["cf"], cached["y"], cached["red"], cached["part"]
        log(f"features from {args.cache}")
    else:
        rng = np.random.default_rng(args.seed)
        samples = list(train)
        for _ in range(args.real_copies):
            samples += [replace(s, image=augment_real(s.image, rng)) for s in train]
        n_real = len(samples)
        log(f"{len(train)} real crops x{1 + args.real_copies}; drawing {args.synthetic} sprites ...")
        samples += synth_samples(args.synthetic, args.seed + 1)
        n_sprites = len(samples) - n_real
        log(f"rendering {args.boards} boards ...")
        samples += rendered_board_samples(args.boards, args.seed + 3)
        part = np.repeat([0, 1, 2], [n_real, n_sprites, len(samples) - n_real - n_sprites])
        log(f"features of {len(samples)} crops ...")
        x, cf = features(samples, jitter_seed=args.seed + 2)
        y = np.array([s.type_index for s in samples])
        red = np.array([s.red for s in samples])
        if args.cache:
            np.savez(args.cache, x=x, cf=cf, y=y, red=red, part=part)
    # Balance: every type weighs the same within each part (real, sprites, boards); pawns are 2x as many.
    weight = np.ones(len(y), np.float32)
    for k in range(3):
        sel = part == k
        counts = np.bincount(y[sel], minlength=len(P.TYPES)).astype(np.float32)
        weight[sel] = (counts.sum() / (len(P.TYPES) * np.maximum(counts, 1)))[y[sel]]
    colour = train_colour(cf, red, args.seed)
    widths = [int(v) for v in args.widths.split(",")]
    kernels = [int(v) for v in args.kernels.split(",")]
    net = Net(P.N_RADII, len(P.TYPES), widths, kernels, args.seed)
    vx, _ = features(valid)
    vy = np.array([s.type_index for s in valid])

    def report(ep: int) -> None:
        w = weights_of(net, colour, {})
        acc = float((P.type_logits(w, vx).argmax(1) == vy).mean())
        log(f"epoch {ep + 1}/{args.epochs}: real valid type accuracy {acc:.4f}")

    log("training ...")
    train_net(net, x, y, weight, epochs=args.epochs, seed=args.seed, lr=args.lr, batch=args.batch, report=report)
    meta = {"seed": args.seed, "real_train": len(train), "real_copies": args.real_copies,
            "synthetic": args.synthetic, "boards": args.boards, "epochs": args.epochs, "widths": widths, "lr": args.lr,
            "batch": args.batch}
    weights = weights_of(net, colour, meta)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    P.save_weights(args.out, weights)
    rep = per_class_report(P.load_weights(args.out), valid)
    log(f"real valid: type {rep['type']:.4f} colour {rep['colour']:.4f} letter {rep['letter']:.4f} (n={rep['n']})")
    for k, r in rep["classes"].items():
        log(f"  {k}: n={r['n']} type {r['type']:.3f} colour {r['colour']:.3f} letter {r['letter']:.3f}")
    log(f"wrote {args.out} ({args.out.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
