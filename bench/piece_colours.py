"""How well a piece's colour (red / black) is read from real photos of single pieces, as `xqarb vision detect` reads it.

    OPENBLAS_NUM_THREADS=1 python bench/piece_colours.py [--split valid] [--limit N]

The crops are ../shared/data/piece_crops/<split> (real pieces of ~30 px, light discs; the black side's ink is black,
dark green or blue-black, the red side's red to purple). Each crop is read as detect reads a piece: a square about
the piece's box, six variants (detect.VARIANTS), and the colour decided per crop, without the board's two colour
groups; then again with them (`detect.board_colours` over the crops of one source photo, as over one board's
pieces). Counted: colour right, wrong, and unsure (P below detect.COLOUR_SURE). `--reader classifier` reads the
colour as detect did before the ink's tone was weighed (the classifier's P(red), mean of the variants).

Also on the same crops recoloured as light-on-dark sets draw them (the face's tone and the character's swapped: a
dark disc with a light character for Black, a red disc with a light character for Red), the characters' shapes and
the photos' light kept: the case real diagrams and some sets show, which the real crops do not.
Deterministic.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path

import cv2
import numpy as np

from xqarb.vision import detect as D
from xqarb.vision import pieces as P
from xqarb.vision.pieces_train import load_real


def variant_crops(image: np.ndarray) -> list[np.ndarray]:
    """The crop as detect crops a piece: a square about its centre, one spacing across (as bench/detect_rendered.py
    --real: the box, which takes in the piece's side too, is about a spacing), in detect's six variants."""
    h, w = image.shape[:2]
    n = max(h, w)
    out = []
    for side, dx, dy in D.VARIANTS:
        m = side * n
        cx, cy = (w - 1) / 2 + dx * n, (h - 1) / 2 + dy * n
        M = np.array([[m / 48, 0, cx - m / 2], [0, m / 48, cy - m / 2]], np.float32)
        out.append(cv2.warpAffine(image, M, (48, 48), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                                  borderMode=cv2.BORDER_REPLICATE))
    return out


def light_on_dark(image: np.ndarray, red: bool) -> np.ndarray:
    """The piece recoloured: the disc's face takes a dark (Black) or red (Red) tone, its ink a light one; the
    photo's shading kept as a factor."""
    img = P.normalise_crop(image)
    disc = P.find_disc(img)
    ink = P.ink_map(img, disc)
    grey = img.astype(np.float32).max(axis=2, keepdims=True)
    shade = np.clip(grey / max(float(np.percentile(grey, 90)), 1.0), 0.5, 1.1)
    face = np.array((40, 40, 185) if red else (40, 38, 36), np.float32)
    char = np.array((215, 228, 236), np.float32)
    inside = ((P._xx - disc.cx) ** 2 + (P._yy - disc.cy) ** 2 < (0.95 * disc.radius) ** 2)[..., None]
    col = (face * (1 - ink[..., None]) + char * ink[..., None]) * shade
    out = np.where(inside, col, img.astype(np.float32))
    return cv2.resize(np.clip(out, 0, 255).astype(np.uint8), image.shape[1::-1], interpolation=cv2.INTER_AREA)


def read_colours(samples, clf, recolour: bool, reader: str) -> np.ndarray:
    """P(red) per sample, read as detect reads a piece (six variants, their mean)."""
    out = []
    for s in samples:
        image = light_on_dark(s.image, s.red) if recolour else s.image
        crops = variant_crops(image)
        reads = clf.read(crops)
        if reader == "classifier":
            out.append(float(np.mean([r.red for r in reads])))
            continue
        tones = [P.ink_tone(P.normalise_crop(cr), r.disc) for cr, r in zip(crops, reads, strict=True)]
        negative = D.light_on_dark(tones)
        out.append(D.piece_colour([D.colour_logit(r.red, t, negative) for r, t in zip(reads, tones, strict=True)]))
    return np.array(out)


def count(samples, p_red: np.ndarray) -> Counter:
    c: Counter = Counter()
    for s, p in zip(samples, p_red, strict=True):
        side = "red" if s.red else "black"
        c[side] += 1
        if max(p, 1 - p) < D.COLOUR_SURE:
            c[f"{side} unsure"] += 1
        elif (p >= 0.5) == s.red:
            c[f"{side} right"] += 1
        else:
            c[f"{side} wrong"] += 1
    return c


def by_board(samples, p_red: np.ndarray) -> np.ndarray:
    """P(red) after `detect.board_colours` over the crops of each source photo."""
    out = p_red.copy()
    photos: dict[str, list[int]] = {}
    for k, s in enumerate(samples):
        photos.setdefault(s.photo, []).append(k)
    for idx in photos.values():
        out[idx] = D.board_colours(p_red[idx])
    return out


def line(c: Counter) -> str:
    parts = []
    for side in ("red", "black"):
        n = max(c[side], 1)
        parts.append(f"{side} {c[side]}: right {c[side + ' right'] / n:.1%}, unsure {c[side + ' unsure']}, "
                     f"wrong {c[side + ' wrong']}")
    n = c["red"] + c["black"]
    right = c["red right"] + c["black right"]
    return f"colour right {right / max(n, 1):.2%}; " + "; ".join(parts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", default="valid")
    ap.add_argument("--limit", type=int, default=0, help="every k-th crop only, k chosen to keep about this many")
    ap.add_argument("--data", type=Path, default=None)
    ap.add_argument("--reader", choices=("detect", "classifier"), default="detect")
    args = ap.parse_args(argv)
    here = Path(__file__).resolve().parents[1]
    cands = [Path(c) for c in (os.environ.get("XQARB_SHARED", ""), here.parent / "shared", here / "shared") if c]
    data = args.data or next((c / "data" / "piece_crops" for c in cands if (c / "data" / "piece_crops").is_dir()),
                             cands[-1] / "data" / "piece_crops")
    samples = load_real(data / args.split)
    if args.limit and len(samples) > args.limit:
        samples = samples[::len(samples) // args.limit]
    clf = P.PieceClassifier.load()
    for name, recolour in (("as photographed", False), ("recoloured light-on-dark", True)):
        p = read_colours(samples, clf, recolour, args.reader)
        print(f"{args.split} {name} (n={len(samples)}, reader {args.reader}):\n  per crop: {line(count(samples, p))}\n"
              f"  with the board's groups (per photo): {line(count(samples, by_board(samples, p)))}")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
