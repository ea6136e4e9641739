"""How well `xqarb vision detect` reads labelled photographs of real boards: per-point accuracy, and what fails.

    OPENBLAS_NUM_THREADS=1 python bench/detect_photos.py DIR [--verbose] [--json OUT] [--names FILE]

No set of labelled photos of whole real boards is reachable from the project's machines (../shared/data has
single-piece crops only; bench/detect_rendered.py --real measures what those can tell, and
bench/real_pieces_boards.py writes labelled boards of those real pieces on rendered boards, for this to read); two
single labelled pictures were recovered and measured with this (bench/RESULTS.md, "detect on real pictures of
boards"). This measures the rest the day a set of labelled board photos is put in a folder: the public ones come
in one of two forms, and both are read.

DIR (searched recursively) holds photos (.jpg .jpeg .png .bmp .webp) and, for each, either
- its position: `NAME.fen` (or `NAME.jpg.fen`) beside `NAME.jpg` (a FEN, or only its board part: rank 9 first, Red
  in upper case), or a line `NAME.jpg,FEN` in a `positions.csv` in DIR; or
- its pieces' boxes, as object-detection sets give them (YOLO, Roboflow's export): `NAME.txt` beside it or in
  the sibling `labels/` folder of its `images/` folder, one box a line, `class cx cy w h` as fractions of the
  image; the class names in a `data.yaml` (`names:`) or `classes.txt` in DIR. A name is read as a side and a
  piece (`red_horse`, `b_che`, `BlackGeneral`, `rk`, `红车`, `將`, or a FEN letter); classes that name no piece
  (the board, a corner) are left out; `--names FILE` (lines `name=LETTER`, `name=-` to leave one out) settles
  names this cannot read.
Boxes are turned into a position through the board detect finds: each box's centre is taken to the board plane,
the camera's parallax (the pieces' tops stand above their points; one homothety for the whole board, as detect fits
it) is taken off, and the box goes to its nearest point. Boxes more than 0.7 of a spacing outside the grid are
captured pieces beside the board and left out. Where under 80% of the boxes on the board sit within 0.3 of a
spacing of a point, the board found is not the photographed one: "board not found right", not read. The labelled
kings set which end is Red (the labels', not detect's, so that a board read the wrong way round counts as wrong).

Counted per point as bench/detect_rendered.py counts rendered boards: right, X / x (a piece of the right colour,
its type not given), '?' (detect unsure) or wrong, and the wrong split into empties read as pieces, pieces read as
empty, wrong colour and wrong type; with --verbose every wrong point of every photo (photo, point, label, read).
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from xqarb.vision.board import BoardFit, NoBoardFound, find_board
from xqarb.vision.detect import fit_parallax, parallax_centres, read_board
from xqarb.vision.grid import POINTS_UV, apply_h, point_name
from xqarb.vision.pieces import PieceClassifier

sys.path.insert(0, str(Path(__file__).resolve().parent))
from detect_rendered import breakdown, tally  # (the same per-point tally as for rendered boards)

PHOTO_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp")
BESIDE_BOARD = 0.7  # a box centre this many spacings outside the grid is a captured piece lying beside the board
ON_POINT = 0.3  # a box centre within this of a point (parallax off) sits on it
FITS_BOARD = 0.8  # share of the boxes on the board that must sit on points for the board found to be the photo's


class LabelError(ValueError):
    """A label that cannot be read: an unknown class name, a malformed line or FEN, two pieces on one point."""


# ---------------------------------------------------------------------------------------------------------------
# class names -> FEN letters

_RED_WORDS = {"red", "hong", "红", "紅"}
_BLACK_WORDS = {"black", "blk", "hei", "黑"}
_TYPE_WORDS = {
    "K": {"king", "general", "shuai", "jiang", "帅", "帥", "将", "將", "k", "g"},
    "A": {"advisor", "adviser", "guard", "assistant", "mandarin", "counsellor", "counselor", "shi", "仕", "士", "a"},
    "B": {"elephant", "bishop", "minister", "xiang", "相", "象", "b", "e"},
    "N": {"horse", "knight", "ma", "马", "馬", "傌", "n", "h"},
    "R": {"rook", "chariot", "car", "ju", "che", "车", "車", "俥", "r"},
    "C": {"cannon", "pao", "catapult", "炮", "砲", "包", "c"},
    "P": {"pawn", "soldier", "bing", "zu", "兵", "卒", "p", "s"},
}
_KIND = {w: k for k, ws in _TYPE_WORDS.items() for w in ws}
# Characters that tell the side by themselves on a traditional set (帥仕相傌俥兵 red, 將士象卒砲 black); 马車炮 do
# not: simplified sets print them for both sides.
_RED_GLYPHS = set("帅帥仕相傌俥兵")
_BLACK_GLYPHS = set("将將士象卒砲")
_NOT_PIECES = {"board", "chessboard", "grid", "corner", "corners", "point", "intersection", "river", "background",
               "hand", "table", "xiangqi", "chess", "piece", "pieces"}


def _split_joined(token: str) -> list[str]:
    """A side run together with a piece ("redhorse", "heima") or two letters ("rk", "bn") as two words."""
    if token in _KIND or token in _RED_WORDS or token in _BLACK_WORDS:
        return [token]
    for side in (*_RED_WORDS, *_BLACK_WORDS):
        if token.startswith(side) and token[len(side):] in _KIND:
            return [side, token[len(side):]]
    if len(token) == 2 and token[0] in "rb" and token[1] in _KIND:
        return [token[0], token[1]]
    return [token]


def piece_letter(name: str) -> str | None:
    """The FEN letter a detection class name stands for (upper case Red), or None for a class that names no piece
    (the board, a corner). Raises LabelError for a name that names a piece in no way this can tell."""
    raw = name.strip()
    if len(raw) == 1 and raw in "KABNRCPkabnrcp":
        return raw
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", raw).lower()
    tokens: list[str] = []
    for w in re.split(r"[^0-9a-z\u4e00-\u9fff]+", spaced):
        # CJK runs are read character by character (红车: red, chariot)
        tokens.extend(list(w) if re.fullmatch(r"[\u4e00-\u9fff]+", w) else [w] if w else [])
    if tokens and all(t in _NOT_PIECES for t in tokens):
        return None
    tokens = [part for t in tokens for part in _split_joined(t)]
    side: bool | None = None  # said outright
    glyph_side: bool | None = None  # told by a traditional set's character
    kind: str | None = None
    for n, t in enumerate(tokens):
        if n == 0 and len(tokens) > 1 and t in ("r", "b"):
            side = t == "r"  # a side's initial before the piece (r_ma, b_che); alone, r and b are rook and bishop
        elif t in _RED_WORDS or t in _BLACK_WORDS:
            side = t in _RED_WORDS
        elif t in _KIND and kind is None:
            kind = _KIND[t]
            if t in _RED_GLYPHS or t in _BLACK_GLYPHS:
                glyph_side = t in _RED_GLYPHS
    side = side if side is not None else glyph_side
    if kind is None or side is None:
        raise LabelError(f"class name {name!r}: cannot tell {'the piece' if kind is None else 'the side'} "
                         "(give it with --names, a line name=LETTER)")
    return kind if side else kind.lower()


def class_names(folder: Path) -> list[str] | None:
    """The detection classes' names by index, from `data.yaml` (Roboflow, YOLO) or `classes.txt` in `folder` or
    one of its parents up to two levels; None where there is neither."""
    for d in (folder, *list(folder.parents)[:2]):
        y = d / "data.yaml"
        if y.is_file():
            import yaml  # (a dev dependency; only the bench reads YAML)

            names = (yaml.safe_load(y.read_text(encoding="utf-8")) or {}).get("names")
            if isinstance(names, dict):
                return [str(names[k]) for k in sorted(names, key=int)]
            if isinstance(names, list):
                return [str(n) for n in names]
            raise LabelError(f"{y}: no 'names' list or mapping")
        c = d / "classes.txt"
        if c.is_file():
            return [ln.strip() for ln in c.read_text(encoding="utf-8").splitlines() if ln.strip()]
    return None


# ---------------------------------------------------------------------------------------------------------------
# labels -> 90 squares


def squares_from_fen(text: str, source: str) -> str:
    """90 squares (rank 9 first) from a FEN or its board part (the renderer's parser), only FEN letters and '.'."""
    from xqarb.vision.render import RenderError
    from xqarb.vision.render import squares_from_fen as parse

    try:
        squares = parse(text.strip() or "(empty)")
    except RenderError as exc:
        raise LabelError(f"{source}: {exc}") from exc
    if any(ch not in ".KABNRCPkabnrcp" for ch in squares):
        raise LabelError(f"{source}: a label names every piece by its FEN letter, not X, x or '?': {text.strip()!r}")
    return squares


@dataclass(frozen=True)
class Box:
    letter: str
    x: float  # centre, image pixels
    y: float


def read_boxes(path: Path, names: list[str], overrides: dict[str, str | None], width: int, height: int) -> list[Box]:
    """The piece boxes of one YOLO label file (`class cx cy w h`, fractions), class names read to FEN letters."""
    boxes = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) < 5:
            raise LabelError(f"{path}:{n}: a box is 'class cx cy w h', got {line!r}")
        try:
            k, cx, cy = int(parts[0]), float(parts[1]), float(parts[2])
        except ValueError as exc:
            raise LabelError(f"{path}:{n}: {exc}") from exc
        if not 0 <= k < len(names):
            raise LabelError(f"{path}:{n}: class {k}, but the names list has {len(names)}")
        name = names[k]
        letter = overrides[name] if name in overrides else piece_letter(name)
        if letter is not None:
            boxes.append(Box(letter, cx * width, cy * height))
    return boxes


@dataclass
class BoxPosition:
    squares: str  # 90 characters, rank 9 first, as the labels put the pieces on the board found
    on_board: int  # boxes on the board
    on_point: int  # of those, how many sit within ON_POINT of their point
    beside: int  # boxes beside the board (captured pieces), left out
    clashes: list[str] = field(default_factory=list)  # points two boxes fell on

    @property
    def fits(self) -> bool:
        return self.on_board > 0 and self.on_point >= FITS_BOARD * self.on_board and not self.clashes


def squares_from_boxes(boxes: list[Box], fit: BoardFit) -> BoxPosition:
    """Where the labelled pieces stand on the board `fit` found: box centres to the board plane, parallax off, to
    the nearest point; then turned half a turn if the labelled Red king sits at the top (the labels' own
    orientation, whatever way the fit has it)."""
    if not boxes:
        return BoxPosition("." * 90, 0, 0, 0)
    uv = apply_h(np.asarray(fit.homography, float), np.array([[b.x, b.y] for b in boxes]))
    inside = ((uv[:, 0] > -BESIDE_BOARD) & (uv[:, 0] < 8 + BESIDE_BOARD)
              & (uv[:, 1] > -BESIDE_BOARD) & (uv[:, 1] < 9 + BESIDE_BOARD))
    nearest = np.clip(np.rint(uv), [0, 0], [8, 9])
    # the parallax: the tops of all pieces shifted about alike, a little more far from the centre (detect's model)
    first = inside & (np.hypot(*(uv - nearest).T) < 0.5)
    parallax = fit_parallax(nearest[first], uv[first])
    expected = parallax_centres(POINTS_UV, parallax)  # (90, 2) where a piece on each point shows
    dist = np.linalg.norm(uv[:, None, :] - expected[None, :, :], axis=2)
    point = dist.argmin(axis=1)
    off = dist[np.arange(len(boxes)), point]
    sq = ["."] * 90
    clashes = []
    for b, i, keep in zip(boxes, point, inside, strict=True):
        if not keep:
            continue
        if sq[i] != ".":
            clashes.append(point_name(int(i)))
        sq[i] = b.letter
    squares = "".join(sq)
    red_king, black_king = squares.find("K"), squares.find("k")
    if 0 <= red_king < 27 and black_king >= 63:
        squares = squares[::-1]  # the labels put Red at the top of the fit: read them the standard way round
    return BoxPosition(squares, int(inside.sum()), int((off[inside] <= ON_POINT).sum()), int((~inside).sum()),
                       clashes)


# ---------------------------------------------------------------------------------------------------------------
# the photos


@dataclass(frozen=True)
class Labelled:
    image: Path
    fen: str | None = None  # a position label
    boxes: Path | None = None  # a YOLO label file


def find_labelled(root: Path) -> tuple[list[Labelled], list[Path]]:
    """The photos under `root` with their labels; and the photos that have none."""
    positions: dict[str, str] = {}
    table = root / "positions.csv"
    if table.is_file():
        with open(table, encoding="utf-8", newline="") as fh:
            for row in csv.reader(fh):
                if len(row) >= 2 and not row[0].startswith("#"):
                    positions[row[0].strip()] = row[1].strip()
    found, unlabelled = [], []
    for p in sorted(root.rglob("*")):
        if p.suffix.lower() not in PHOTO_SUFFIXES or not p.is_file():
            continue
        rel = p.relative_to(root).as_posix()
        fen_file = next((f for f in (p.with_suffix(".fen"), p.with_name(p.name + ".fen")) if f.is_file()), None)
        txt = [p.with_suffix(".txt")]
        if p.parent.name == "images":
            txt.append(p.parent.parent / "labels" / (p.stem + ".txt"))
        if fen_file is not None:
            found.append(Labelled(p, fen=fen_file.read_text(encoding="utf-8")))
        elif rel in positions or p.name in positions:
            found.append(Labelled(p, fen=positions.get(rel, positions.get(p.name))))
        elif any(t.is_file() for t in txt):
            found.append(Labelled(p, boxes=next(t for t in txt if t.is_file())))
        else:
            unlabelled.append(p)
    return found, unlabelled


@dataclass
class PhotoResult:
    photo: str
    status: str  # "read", "unreadable", "no board found", "board not found right"
    counts: Counter = field(default_factory=Counter)
    wrong: list[tuple[str, str, str]] = field(default_factory=list)  # (point, label, read), '?' included
    seconds: float = 0.0
    note: str = ""


def measure(item: Labelled, root: Path, clf, overrides: dict[str, str | None]) -> PhotoResult:
    name = item.image.relative_to(root).as_posix()
    image = cv2.imread(str(item.image), cv2.IMREAD_COLOR)
    if image is None:
        return PhotoResult(name, "unreadable", note="cannot decode the file")
    truth = squares_from_fen(item.fen, name) if item.fen is not None else None
    t0 = time.perf_counter()
    try:
        fit = find_board(image)
    except NoBoardFound as exc:
        return PhotoResult(name, "no board found", note=exc.reason)
    reading = read_board(image, fit, clf)
    seconds = time.perf_counter() - t0
    note = ""
    if truth is None:
        assert item.boxes is not None
        names = class_names(item.boxes.parent)
        if names is None:
            raise LabelError(f"{item.boxes}: box labels but no data.yaml or classes.txt to name their classes")
        h, w = image.shape[:2]
        pos = squares_from_boxes(read_boxes(item.boxes, names, overrides, w, h), reading.fit)
        if not pos.fits:
            why = (f"two boxes on {', '.join(pos.clashes)}" if pos.clashes else
                   f"{pos.on_point} of {pos.on_board} boxes on the board sit on its points")
            return PhotoResult(name, "board not found right", seconds=seconds, note=why)
        truth = pos.squares
        note = f"{pos.beside} boxes beside the board" if pos.beside else ""
    got = reading.squares
    wrong = [(point_name(i), a, b) for i, (a, b) in enumerate(zip(truth, got, strict=True)) if a != b]
    return PhotoResult(name, "read", tally(truth, got), wrong, seconds, note)


def totals(results: list[PhotoResult]) -> Counter:
    """The photos' statuses counted and their points' tallies added up."""
    c: Counter = Counter()
    for r in results:
        c[r.status] += 1
        c += r.counts
    return c


def summary(results: list[PhotoResult]) -> dict:
    c = totals(results)
    n = max(c["points"], 1)
    times = [r.seconds for r in results if r.status == "read"]
    return {
        "photos": len(results), "read": c["read"], "no board found": c["no board found"],
        "board not found right": c["board not found right"], "unreadable": c["unreadable"],
        "points": c["points"], "right": c["right"], "typeless": c["typeless"], "unsure": c["unsure"],
        "wrong": c["wrong"],
        "right share": round(c["right"] / n, 5), "unsure share": round(c["unsure"] / n, 5),
        "wrong share": round(c["wrong"] / n, 5),
        "empties": c["empties"], "empties right": c["empties right"], "empties unsure": c["empties unsure"],
        "empty read as piece": c["empty read as piece"],
        "pieces": c["pieces"], "pieces right": c["pieces right"], "pieces unsure": c["pieces unsure"],
        "piece read as empty": c["piece read as empty"], "wrong colour": c["wrong colour"],
        "wrong type": c["wrong type"],
        "seconds per photo (median)": round(float(np.median(times)), 3) if times else None,
    }


def read_overrides(path: Path | None) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    if path is None:
        return out
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, sep, letter = line.rpartition("=")
        letter = letter.strip()
        if not sep or (letter != "-" and (len(letter) != 1 or letter not in "KABNRCPkabnrcp")):
            raise LabelError(f"{path}:{n}: a line is name=LETTER (a FEN letter) or name=-, got {line!r}")
        out[name.strip()] = None if letter == "-" else letter
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--names", type=Path, default=None, help="class name overrides: lines name=LETTER or name=-")
    ap.add_argument("--verbose", action="store_true", help="one line per photo, and every wrong point")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures and every photo's as JSON")
    args = ap.parse_args(argv)
    try:
        overrides = read_overrides(args.names)
        items, unlabelled = find_labelled(args.folder)
        if not items:
            print(f"{args.folder}: no labelled photos (a photo needs NAME.fen, a positions.csv line or YOLO "
                  "boxes)", file=sys.stderr)
            return 2
        clf = PieceClassifier.load()
        results = []
        for item in items:
            r = measure(item, args.folder, clf, overrides)
            results.append(r)
            if args.verbose:
                c = r.counts
                print(f"{r.photo}: {r.status}" + (f", {c['pieces']} pieces, right {c['right']}, X/x "
                                                  f"{c['typeless']}, '?' {c['unsure']}, wrong {c['wrong']}"
                                                  if r.status == "read" else "")
                      + (f" ({r.note})" if r.note else ""))
                for point, label, got in r.wrong:
                    if got != "?":
                        print(f"    {point}: labelled {label}, read {got}")
    except LabelError as exc:
        print(f"detect_photos: {exc}", file=sys.stderr)
        return 2
    s = summary(results)
    n = max(s["points"], 1)
    print(f"{s['read']}/{s['photos']} photos read ({s['no board found']} no board found, "
          f"{s['board not found right']} board not found right, {s['unreadable']} unreadable; "
          f"{len(unlabelled)} photo(s) without labels left out); {s['points']} points: right {s['right'] / n:.2%}, "
          f"X/x {s['typeless'] / n:.2%}, '?' {s['unsure'] / n:.2%}, wrong {s['wrong']} ({s['wrong'] / n:.2%})")
    print("\n".join(breakdown(totals(results))))
    if s["seconds per photo (median)"] is not None:
        print(f"  time per photo (median, find_board and read_board): {s['seconds per photo (median)']:.2f} s")
    if args.json:
        args.json.write_text(json.dumps({"summary": s, "photos": [
            {"photo": r.photo, "status": r.status, "note": r.note, "counts": dict(r.counts),
             "wrong": [list(w) for w in r.wrong]} for r in results]}, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
