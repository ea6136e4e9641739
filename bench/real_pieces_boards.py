"""Labelled board photos made of real pieces: each real photo's own pieces set out on a rendered board.

    OPENBLAS_NUM_THREADS=1 python bench/real_pieces_boards.py OUT [--per-photo 3] [--difficulty easy] [--seed 5]
                                                             [--all-crops]
    OPENBLAS_NUM_THREADS=1 python bench/detect_photos.py OUT --verbose

No labelled photos of whole real boards are reachable here; the nearest real thing is the piece crops
(../shared/data/piece_crops/valid: 50 photos, one crop per piece, 1,548 crops; none of those photos is in the
split the classifier was trained on). This puts each photo's own pieces, as photographed (their lighting, blur,
ink, wear and JPEG), on the points of a real game position on a board the renderer draws, so that detect reads
real pieces through its whole path: the board, the disc finder, the classifier, the board's colour groups and the
placement and count rules. One photo's pieces share one light, as on a real board.

What is not real: the board, its lighting and the camera (`random_scene(seed, difficulty)` with no pieces; the
pieces are pasted after the renderer's light and optics, so a dark or blurred scene does not darken or blur them);
each piece is cut out of its crop (GrabCut from the box's centre, filled to its convex hull: the top face and
whatever side and contact shadow the photo shows) and lies flat on its point (no parallax of its raised top face),
scaled so that the circle about it is the scene's piece diameter across and foreshortened as the board is there,
its own rotation kept. The figure is therefore not a figure on real board photos; it says
how detect reads real pieces where the board itself is easy.

Each board is OUT/<photo>_<k>.jpg (JPEG 90) with OUT/<photo>_<k>.fen: a random ply of a random game among the
first 400 of ccpd_dev (as bench/detect_rendered.py draws them), every piece given a crop of its side and type from
the photo (each crop once); pieces the photo has no crop left for are left off the board; a position with a king
left off is not written. Deterministic: the same arguments give the same files.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from xqarb.referee.inference import fen_of
from xqarb.vision import render
from xqarb.vision.pieces import TYPES
from xqarb.vision.pieces_train import Sample, load_real

sys.path.insert(0, str(Path(__file__).resolve().parent))
from detect_rendered import _default_games, game_positions  # (the same positions as for rendered boards)

JITTER = 0.06  # spacings: players set pieces a little off their points
ROUND = 0.9  # a cut-out piece fills at least this share of the circle about it (below, cuts took in shadow)
TYPICAL_DISC = 0.68  # a piece's diameter over its box's longer side, typically (see `typical_disc`)
FACE_NEAR = 20.0  # Lab distance: a box side's midpoint this near the face is the piece (a close-up; corners 2x off)


def letter_of(sample: Sample) -> str:
    t = TYPES[sample.type_index]
    return t if sample.red else t.lower()


@dataclass(frozen=True)
class Cutout:
    """A real piece cut out of its crop: the crop, the piece's mask (0/255), the circle about it (crop pixels)."""
    crop: np.ndarray
    mask: np.ndarray
    centre: tuple[float, float]
    radius: float


def cutouts_by_photo(samples: list[Sample], all_crops: bool) -> tuple[dict[str, dict[str, list[Cutout]]], int]:
    """photo -> FEN letter -> the cutouts of its pieces of that kind, in file order; and how many crops gave no
    round piece (see `cut_out`): left out, or with `all_crops` cut as the typical disc in its box."""
    out: dict[str, dict[str, list[Cutout]]] = defaultdict(lambda: defaultdict(list))
    failed = 0
    for s in samples:
        piece = cut_out(s.image)
        if piece is None:
            failed += 1
            if not all_crops:
                continue
            piece = typical_disc(s.image)
        out[s.photo][letter_of(s)].append(piece)
    return out, failed


def place_pieces(squares: str, pool: dict[str, list[Cutout]],
                 rng: np.random.Generator) -> tuple[str, dict[int, Cutout]]:
    """The position as the photo's pieces can set it out: a crop for each piece (each crop once, drawn at random),
    pieces with no crop left taken off. Returns the squares and point -> its piece."""
    left = {k: list(v) for k, v in pool.items()}
    for v in left.values():
        rng.shuffle(v)
    out, pieces = list(squares), {}
    for i, ch in enumerate(squares):
        if ch == ".":
            continue
        if left.get(ch):
            pieces[i] = left[ch].pop()
        else:
            out[i] = "."
    return "".join(out), pieces


def cut_out(crop: np.ndarray) -> Cutout | None:
    """The piece in a crop (its box, with the photo's background around it), or None where what is cut out is not
    a piece's round shape. GrabCut seeded with the box's centre as the piece and its border as background, the part
    at the centre filled to its convex hull (a piece is a disc, seen from above or at an angle; its printed
    character and ring must not be holes)."""
    h, w = crop.shape[:2]
    seeds = np.full((h, w), cv2.GC_PR_BGD, np.uint8)
    cv2.ellipse(seeds, (w // 2, h // 2), (int(w * 0.46), int(h * 0.46)), 0, 0, 360, cv2.GC_PR_FGD, -1)
    cv2.circle(seeds, (w // 2, h // 2), int(min(h, w) * 0.18), cv2.GC_FGD, -1)
    seeds[:2], seeds[-2:], seeds[:, :2], seeds[:, -2:] = cv2.GC_BGD, cv2.GC_BGD, cv2.GC_BGD, cv2.GC_BGD
    models = np.zeros((1, 65)), np.zeros((1, 65))
    cv2.grabCut(crop, seeds, None, *models, 4, cv2.GC_INIT_WITH_MASK)
    fg = ((seeds == cv2.GC_FGD) | (seeds == cv2.GC_PR_FGD)).astype(np.uint8)
    _, labels = cv2.connectedComponents(fg)
    ys, xs = np.nonzero(labels == labels[h // 2, w // 2])
    hull = cv2.convexHull(np.column_stack([xs, ys]).astype(np.int32))
    mask = np.zeros((h, w), np.uint8)
    cv2.fillConvexPoly(mask, hull, 255)
    (cx, cy), r = cv2.minEnclosingCircle(hull)
    # A disc seen from above or a little aside, its side showing, fills most of the circle about it (median
    # 0.985 over the valid crops); cuts that took in a shadow or a strip of background, or cut the disc off short
    # (white paper behind a cream piece), fill less, as seen on montages of the cuts between 0.75 and 0.9.
    if r >= 0.25 * min(h, w) and np.count_nonzero(mask) >= ROUND * np.pi * r * r:
        return Cutout(crop, mask, (float(cx), float(cy)), float(r))
    if _fills_box(crop):  # a close-up: the piece is the box, and GrabCut found the character alone
        mask = np.zeros((h, w), np.uint8)
        cv2.ellipse(mask, (w // 2, h // 2), (w // 2 - 1, h // 2 - 1), 0, 0, 360, 255, -1, cv2.LINE_AA)
        return Cutout(crop, mask, ((w - 1) / 2, (h - 1) / 2), max(h, w) / 2)
    return None


def typical_disc(crop: np.ndarray) -> Cutout:
    """The disc a crop's box holds where the piece could not be cut out: centred on the box, as wide as a piece
    typically is in its box (median of the circles found in the valid crops: 0.68 of the box's longer side)."""
    h, w = crop.shape[:2]
    r = TYPICAL_DISC * max(h, w) / 2
    mask = np.zeros((h, w), np.uint8)
    cv2.circle(mask, (w // 2, h // 2), round(r), 255, -1, cv2.LINE_AA)
    return Cutout(crop, mask, ((w - 1) / 2, (h - 1) / 2), r)


def _fills_box(crop: np.ndarray) -> bool:
    """Does the piece touch its box's sides: are at least three of the four side midpoints the colour of the
    piece's face (the lighter part of the box's centre, ink left out), and three of the four corners, which lie
    outside a disc that fills its box, not? (Where the background is the face's colour, as on white paper, this
    cannot be told and the answer is no.)"""
    h, w = crop.shape[:2]
    lab = cv2.cvtColor(crop, cv2.COLOR_BGR2LAB).astype(float)
    yy, xx = np.mgrid[:h, :w]
    centre = lab[np.hypot((xx - (w - 1) / 2) / (w / 2), (yy - (h - 1) / 2) / (h / 2)) < 0.6]
    face = np.median(centre[centre[:, 0] >= np.percentile(centre[:, 0], 60)], axis=0)

    def off_face(patch: np.ndarray) -> float:
        return float(np.linalg.norm(patch.reshape(-1, 3).mean(0) - face))

    mids = [lab[:3, w // 2 - 1:w // 2 + 2], lab[-3:, w // 2 - 1:w // 2 + 2], lab[h // 2 - 1:h // 2 + 2, :3],
            lab[h // 2 - 1:h // 2 + 2, -3:]]
    corners = [lab[:3, :3], lab[:3, -3:], lab[-3:, :3], lab[-3:, -3:]]
    return (sorted(map(off_face, mids))[2] < FACE_NEAR
            and sorted(map(off_face, corners))[1] >= 2 * FACE_NEAR)


def paste_piece(image: np.ndarray, piece: Cutout, centre: np.ndarray, ex: np.ndarray, ey: np.ndarray) -> None:
    """Paste a real piece into `image` so that the circle about it spans `ex` across and `ey` down (image vectors)
    about `centre`; its edge feathered by about a pixel."""
    crop, mask, (cx, cy), r = piece.crop, piece.mask, piece.centre, piece.radius
    h, w = crop.shape[:2]
    # crop (u, v) -> image: centre + (u - cx) / r * ex + (v - cy) / r * ey
    A = np.column_stack([ex / r, ey / r])
    b = centre - A @ np.array([cx, cy])
    corners = np.array([[0, 0], [w, 0], [0, h], [w, h]], float) @ A.T + b
    H, W = image.shape[:2]
    x0, y0 = np.maximum(np.floor(corners.min(0)).astype(int) - 1, 0)
    x1, y1 = np.minimum(np.ceil(corners.max(0)).astype(int) + 2, [W, H])
    if x1 <= x0 or y1 <= y0:
        return
    M = np.hstack([A, (b - [x0, y0])[:, None]]).astype(np.float32)
    size = (int(x1 - x0), int(y1 - y0))
    drawn = cv2.warpAffine(crop, M, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    alpha = cv2.warpAffine(cv2.GaussianBlur(mask, (0, 0), 0.7), M, size, flags=cv2.INTER_LINEAR, borderValue=0)
    a = alpha[..., None] / 255.0
    roi = image[y0:y1, x0:x1]
    roi[:] = np.clip(roi * (1 - a) + drawn * a, 0, 255).astype(np.uint8)


def board_photo(pieces: dict[int, Cutout], scene: render.Scene, rng: np.random.Generator) -> np.ndarray:
    """The empty board as the scene draws it, with pieces[i] pasted on point i (a little off it, as set by hand)."""
    shot = render.render_position("." * 90, scene)
    image = shot.image.copy()
    pts = shot.points.reshape(10, 9, 2)
    rho = scene.piece_diameter / 2
    for i, piece in pieces.items():
        r, f = divmod(i, 9)
        # One file and one rank step there, in pixels (a rank is `aspect` files long on the board).
        ex = pts[r, f + 1] - pts[r, f] if f < 8 else pts[r, f] - pts[r, f - 1]
        ey = (pts[r + 1, f] - pts[r, f] if r < 9 else pts[r, f] - pts[r - 1, f]) / scene.board.aspect
        off = rng.uniform(-JITTER, JITTER, 2)
        paste_piece(image, piece, pts[r, f] + off[0] * ex + off[1] * ey, rho * ex, rho * ey)
    return image


def write_boards(out: Path, samples: list[Sample], games: Path, per_photo: int, difficulty: str,
                 seed: int, all_crops: bool = False) -> tuple[int, int, int]:
    """Write the boards; returns (boards written, boards left out for a missing king, crops with no round cut)."""
    by_photo, failed = cutouts_by_photo(samples, all_crops)
    photos = sorted(by_photo)
    positions = game_positions(games, len(photos) * per_photo, seed)
    out.mkdir(parents=True, exist_ok=True)
    written = skipped = 0
    for n, photo in enumerate(photos):
        for k in range(per_photo):
            j = n * per_photo + k
            rng = np.random.default_rng([seed, j])
            squares, pieces = place_pieces(positions[j], by_photo[photo], rng)
            if "K" not in squares or "k" not in squares:
                skipped += 1
                continue
            scene = render.random_scene(3000 + 41 * j, difficulty=difficulty)
            image = board_photo(pieces, scene, rng)
            ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 90])
            if not ok:
                raise RuntimeError("OpenCV could not encode a JPEG")
            stem = f"{photo}_{k}"
            (out / f"{stem}.jpg").write_bytes(buf.tobytes())
            (out / f"{stem}.fen").write_text(fen_of(squares, "red", 0, 1) + "\n", encoding="utf-8")
            written += 1
    return written, skipped, failed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="folder to write the boards and their .fen labels into")
    ap.add_argument("--per-photo", type=int, default=3, help="boards per real photo")
    ap.add_argument("--difficulty", default="easy", choices=render.DIFFICULTIES, help="the rendered board's scene")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--games", type=Path, default=None)
    ap.add_argument("--all-crops", action="store_true",
                    help="use the crops whose piece could not be cut out too, cut as the typical disc in its box")
    args = ap.parse_args(argv)
    games = args.games or _default_games()
    samples = load_real(games.parents[1] / "piece_crops" / "valid")
    written, skipped, failed = write_boards(args.out, samples, games, args.per_photo, args.difficulty, args.seed,
                                            args.all_crops)
    print(f"{args.out}: {written} boards of real pieces written ({skipped} left out: a king with no crop); "
          f"{failed} of {len(samples)} crops gave no round cut and were "
          + ("cut as the typical disc in its box" if args.all_crops else "not used"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
