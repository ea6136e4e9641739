"""Move notation both ways: ICCS, WXF and Chinese (7.5), in simplified or traditional characters.

Chinese (7.5): piece, its file, direction, then a file or a count of points: 炮二平五, 马8进7. Red's files are
numbered 一..九 from Red's right, Black's 1..9 from Black's right. 进 forward, 退 back, 平 sideways; pieces moving
diagonally (仕/士, 相/象, 马) name the file they arrive on, the others the number of points they go forward or
back. When two pieces of one kind of the mover stand on one file, 前 (the one nearer the opponent) or 后 replaces
the file: 前马退四; not for 仕/相, whose direction already tells two on a file apart (仕六退五). Pawns (the only
kind that can have more on a file): three on a file 前兵/中兵/后兵, four or five 一兵/二兵/三兵/四兵/五兵 counted
from the front; when pawns are doubled on more than one file the file number takes the place of the piece:
前七进一, 后３平４. The abbreviated form of 7.5 (炮25, 马87, 后车6) drops the direction: it is read by trying
every direction and accepting the one legal move that fits.

WXF: piece letter K A E H R C P (B and N accepted), file 1-9 counted like the Chinese, then + (forward), - (back)
or = / . (sideways), then a file or a count: C2=5, H8+7. Doubled pieces: +C-1 / -C=4 (front / rear); three pawns
on a file +P / =P / -P, four or five 1P .. 5P; pawns doubled on several files: +7+1 (front pawn of file 7).

ICCS: from and to points, h2e2 (H2-E2 accepted).

Parsing resolves the text against the position's legal moves, so it accepts what records really contain: either
digit style for either side, 前/后 written after the piece (車前進一), a file number where 前/后 was due but the
move is still unambiguous.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import NamedTuple

from .board import ADVISOR, BLACK, CANNON, ELEPHANT, HORSE, KING, PAWN, RED, ROOK, square
from .position import Move, Position, _as_move

_CN_DIGITS = "一二三四五六七八九"
_FW_DIGITS = "１２３４５６７８９"

# Generation: (simplified, traditional) names per side.
_NAMES = {
    RED: {KING: ("帅", "帥"), ADVISOR: ("仕", "仕"), ELEPHANT: ("相", "相"), HORSE: ("马", "馬"),
          ROOK: ("车", "車"), CANNON: ("炮", "炮"), PAWN: ("兵", "兵")},
    BLACK: {KING: ("将", "將"), ADVISOR: ("士", "士"), ELEPHANT: ("象", "象"), HORSE: ("马", "馬"),
            ROOK: ("车", "車"), CANNON: ("炮", "炮"), PAWN: ("卒", "卒")},
}
_VERBS = {1: ("进", "進"), -1: ("退", "退"), 0: ("平", "平")}
_REAR = ("后", "後")

# Parsing: every character records use.
_PIECE_CHARS = {
    **dict.fromkeys("帅帥将將王", KING), **dict.fromkeys("仕士", ADVISOR), **dict.fromkeys("相象", ELEPHANT),
    **dict.fromkeys("马馬傌", HORSE), **dict.fromkeys("车車俥", ROOK), **dict.fromkeys("炮砲包", CANNON),
    **dict.fromkeys("兵卒", PAWN),
}
_VERB_CHARS = {"进": 1, "進": 1, "退": -1, "平": 0}
_POS_CHARS = {"前": "front", "中": "middle", "后": "rear", "後": "rear"}
_DIGIT_VALUE = {**{c: i + 1 for i, c in enumerate(_CN_DIGITS)}, **{c: i + 1 for i, c in enumerate(_FW_DIGITS)},
                **{str(i): i for i in range(1, 10)}}

_WXF_LETTERS = {"K": KING, "A": ADVISOR, "E": ELEPHANT, "B": ELEPHANT, "H": HORSE, "N": HORSE, "R": ROOK,
                "C": CANNON, "P": PAWN}
_WXF_OUT = {KING: "K", ADVISOR: "A", ELEPHANT: "E", HORSE: "H", ROOK: "R", CANNON: "C", PAWN: "P"}
_WXF_OPS = {"+": 1, "-": -1, "=": 0, ".": 0}

_ICCS_RE = re.compile(r"^([a-i])([0-9])\s*[-x]?\s*([a-i])([0-9])$", re.IGNORECASE)
_WXF_RE = re.compile(
    r"^(?:(?P<sel>[+\-=1-5])(?P<piece>[KAEBHNRCP])(?P<file0>[1-9])?|(?P<sel1>[+\-=])(?P<pfile>[1-9])"
    r"|(?P<piece2>[KAEBHNRCP])(?P<sel2>[+\-])?(?P<file>[1-9])?)(?P<op>[+\-=.])(?P<num>[1-9])$",
    re.IGNORECASE,
)


class NotationError(ValueError):
    """Text that names no move, or no legal move, in the given position. `.move`/`.reason` if it named an illegal
    one."""

    def __init__(self, message: str, move: Move | None = None, reason: str | None = None) -> None:
        super().__init__(message)
        self.move = move
        self.reason = reason


# ------------------------------------------------------------------------------------------------ files and order
def _file_number(f: int, s: int) -> int:
    """ICCS file index (a=0) -> the side's file number (1.1: Red 一..九 and Black 1..9, each from its right)."""
    return 9 - f if s == RED else f + 1


def _file_index(n: int, s: int) -> int:
    return 9 - n if s == RED else n - 1


def _front_to_back(squares: list[int], s: int) -> list[int]:
    """Squares on one file, the one nearest the opponent first (前 .. 后)."""
    return sorted(squares, key=lambda q: -q if s == RED else q)


def _same_on_file(cells: tuple[int, ...], p: int, f: int) -> list[int]:
    return [r * 9 + f for r in range(10) if cells[r * 9 + f] == p]


def _doubled_files(cells: tuple[int, ...], p: int) -> list[int]:
    """Files on which the mover has two or more pieces of code `p`."""
    return [f for f in range(9) if sum(1 for r in range(10) if cells[r * 9 + f] == p) >= 2]


def _selector_index(rank: int, count: int) -> str:
    """The position word of the rank-th (0 = front) of `count` same pieces on a file: front / middle / rear / 1..5."""
    if count <= 3:
        if rank == 0:
            return "front"
        return "rear" if rank == count - 1 else "middle"
    return str(rank + 1)


class _Described(NamedTuple):
    """A move in the terms both notations share (a named tuple: one is made for every move the referee records,
    and a frozen dataclass costs several times more to make)."""

    piece: int  # type 1..7
    side: int
    file_num: int  # the side's number of the file the piece leaves
    selector: str | None  # front / middle / rear / "1".."5" when pieces of one kind share the file
    on_many_files: bool  # pawns doubled on several files: the file number replaces the piece
    direction: int  # 1 forward, -1 back, 0 sideways
    number: int  # destination file (sideways, or diagonal movers) or points travelled


def _describe(position: Position, move: Move) -> _Described:
    mv = _as_move(move)
    if not position.is_legal(mv):
        raise NotationError(f"{mv} is not a legal move here: {position.illegal_reason(mv)}", mv,
                            position.illegal_reason(mv))
    cells = position._cells
    frm, to = square(mv.frm), square(mv.to)
    p = cells[frm]
    s = RED if p > 0 else BLACK
    t = abs(p)
    f0, r0, f1, r1 = frm % 9, frm // 9, to % 9, to // 9
    same = _front_to_back(_same_on_file(cells, p, f0), s)
    selector, many = None, False
    # Two advisors or elephants on one file keep the file: the front one can only go back and the rear one only
    # forward, so 进/退 already tells them apart (the usual reading of 7.5, and what records and other programs do).
    if len(same) > 1 and t not in (ADVISOR, ELEPHANT):
        selector = _selector_index(same.index(frm), len(same))
        many = t == PAWN and len(_doubled_files(cells, p)) > 1
    forward = (r1 - r0) * s
    direction = (forward > 0) - (forward < 0)
    # 7.5: diagonal movers and sideways moves name the file they arrive on; the others count points.
    number = _file_number(f1, s) if direction == 0 or t in (ADVISOR, ELEPHANT, HORSE) else abs(r1 - r0)
    return _Described(t, s, _file_number(f0, s), selector, many, direction, number)


# ------------------------------------------------------------------------------------------------ generation
def iccs(move: Move) -> str:
    """ICCS text of a move: 'h2e2'."""
    return str(_as_move(move))


def _num(n: int, s: int, fullwidth: bool) -> str:
    if s == RED:
        return _CN_DIGITS[n - 1]
    return _FW_DIGITS[n - 1] if fullwidth else str(n)


def chinese(position: Position, move: Move, traditional: bool = False, fullwidth: bool | None = None) -> str:
    """7.5 notation of a legal move: 炮二平五 / 马8进7 (traditional: 炮二平五 / 馬８進７).

    Red's numbers are Chinese numerals; Black's are Arabic digits, or full-width digits when `fullwidth` (default:
    full-width with traditional characters, as printed records have them)."""
    return _chinese_of(_describe(position, move), traditional, fullwidth)


def _chinese_of(d: _Described, traditional: bool = False, fullwidth: bool | None = None) -> str:
    tr = 1 if traditional else 0
    fw = traditional if fullwidth is None else fullwidth
    name = _NAMES[d.side][d.piece][tr]
    if d.selector is None:
        head = name + _num(d.file_num, d.side, fw)
    else:
        if d.selector == "front":
            word = "前"
        elif d.selector == "middle":
            word = "中"
        elif d.selector == "rear":
            word = _REAR[tr]
        else:
            word = _num(int(d.selector), d.side, fw)
        head = word + (_num(d.file_num, d.side, fw) if d.on_many_files else name)
    return head + _VERBS[d.direction][tr] + _num(d.number, d.side, fw)


def wxf(position: Position, move: Move) -> str:
    """WXF notation of a legal move: C2=5, H8+7, +C-1."""
    return _wxf_of(_describe(position, move))


_WXF_DIRECTION = {1: "+", -1: "-", 0: "="}


def _wxf_of(d: _Described) -> str:
    letter = _WXF_OUT[d.piece]
    op = _WXF_DIRECTION[d.direction]
    if d.selector is None:
        head = f"{letter}{d.file_num}"
    else:
        sel = {"front": "+", "middle": "=", "rear": "-"}.get(d.selector, d.selector)
        head = f"{sel}{d.file_num}" if d.on_many_files else f"{sel}{letter}"
    return f"{head}{op}{d.number}"


def wxf_and_chinese(position: Position, move: Move) -> tuple[str, str]:
    """Both notations of a legal move (WXF, then 7.5's Chinese), from one reading of the position: a recorded
    move carries both, and reading the position is most of the work."""
    d = _describe(position, move)
    return _wxf_of(d), _chinese_of(d)


# ------------------------------------------------------------------------------------------------ parsing
@dataclass(frozen=True)
class _Spec:
    """What a written move says; None where it does not say (resolved against the legal moves)."""

    piece: int | None
    file_num: int | None
    selector: str | None
    direction: int | None
    number: int


def _matches(cells: tuple[int, ...], m: int, spec: _Spec) -> bool:
    frm, to = m >> 7, m & 127
    p = cells[frm]
    s = RED if p > 0 else BLACK
    t = abs(p)
    if spec.piece is not None and t != spec.piece:
        return False
    f0, r0, f1, r1 = frm % 9, frm // 9, to % 9, to // 9
    if spec.file_num is not None and _file_index(spec.file_num, s) != f0:
        return False
    if spec.selector is not None:
        same = _front_to_back(_same_on_file(cells, p, f0), s)
        if len(same) < 2:
            return False
        i = same.index(frm)
        sel = spec.selector
        if sel == "front":
            ok = i == 0
        elif sel == "rear":
            ok = i == len(same) - 1
        elif sel == "middle":
            ok = len(same) == 3 and i == 1
        else:
            ok = i == int(sel) - 1
        if not ok:
            return False
    forward = (r1 - r0) * s
    direction = (forward > 0) - (forward < 0)
    if spec.direction is not None and direction != spec.direction:
        return False
    if direction == 0 or t in (ADVISOR, ELEPHANT, HORSE):
        return _file_index(spec.number, s) == f1
    return abs(r1 - r0) == spec.number


def _resolve(position: Position, spec: _Spec, text: str) -> Move:
    cells = position._cells
    s = RED if position.side == "red" else BLACK
    # Cheap filters first (the named kind, the named file), the full test only for what passes them.
    want = None if spec.piece is None else spec.piece * s
    fidx = None if spec.file_num is None else _file_index(spec.file_num, s)
    legal = [
        m for m in position._legal_ints()
        if (want is None or cells[m >> 7] == want) and (fidx is None or (m >> 7) % 9 == fidx)
        and _matches(cells, m, spec)
    ]
    if len(legal) == 1:
        return Move._from_int(legal[0])
    if len(legal) > 1:
        options = ", ".join(str(Move._from_int(m)) for m in legal)
        raise NotationError(f"{text!r} is ambiguous here: it fits {options}")
    # No legal move fits: say whether the text names a move the rules forbid (2.2 / 3.4), or nothing at all.
    pseudo = [m for m in position.board().pseudo_moves() if _matches(cells, m, spec)]
    if len(pseudo) == 1:
        mv = Move._from_int(pseudo[0])
        reason = position.illegal_reason(mv)
        raise NotationError(f"{text!r} means {mv}, which is illegal: {reason}", mv, reason)
    side = "Red" if position.side == "red" else "Black"
    raise NotationError(f"{text!r}: no legal move of {side} fits it in this position")


def _parse_chinese(position: Position, text: str) -> Move:
    t = "".join(text.split())
    kinds = []
    for ch in t:
        if ch in _PIECE_CHARS:
            kinds.append(("P", _PIECE_CHARS[ch]))
        elif ch in _VERB_CHARS:
            kinds.append(("V", _VERB_CHARS[ch]))
        elif ch in _POS_CHARS:
            kinds.append(("S", _POS_CHARS[ch]))
        elif ch in _DIGIT_VALUE:
            kinds.append(("N", _DIGIT_VALUE[ch]))
        else:
            raise NotationError(f"{text!r}: {ch!r} is not a character of Chinese move notation (7.5)")
    shape = "".join(k for k, _ in kinds)
    v = [x for _, x in kinds]
    piece = file_num = selector = direction = None
    number: int
    if shape == "PNVN":  # 炮二平五
        piece, file_num, direction, number = v
    elif shape == "SPVN":  # 前马退四
        selector, piece, direction, number = v
    elif shape == "PSVN":  # 車前進一 (前/后 written after the piece)
        piece, selector, direction, number = v
    elif shape == "NPVN":  # 二兵平四: the second of four or five pawns on a file
        selector, piece, direction, number = str(v[0]), v[1], v[2], v[3]
    elif shape == "SNVN":  # 前七进一: pawns doubled on several files
        selector, file_num, direction, number = v[0], v[1], v[2], v[3]
        piece = PAWN
    elif shape == "NNVN":  # 二七进一
        selector, file_num, direction, number = str(v[0]), v[1], v[2], v[3]
        piece = PAWN
    elif shape == "PNN":  # abbreviated 7.5: 炮25 = 炮二平五, 马87 = 马8进7
        piece, file_num, number = v
    elif shape == "SPN":  # abbreviated: 后车6
        selector, piece, number = v
    else:
        raise NotationError(
            f"{text!r}: not a Chinese move (expected e.g. 炮二平五, 马8进7, 前马退四, 前兵进一 or abbreviated 炮25)")
    if selector in ("1", "2", "3", "4", "5") and piece != PAWN:
        raise NotationError(f"{text!r}: only pawns are counted 一..五 on a file")
    return _resolve(position, _Spec(piece, file_num, selector, direction, number), text)


def _parse_wxf(position: Position, text: str, m: re.Match[str]) -> Move:
    g = m.groupdict()
    sel_map = {"+": "front", "-": "rear", "=": "middle"}
    if g["sel"] is not None:
        piece = _WXF_LETTERS[g["piece"].upper()]
        sel = g["sel"]
        selector = sel_map.get(sel, sel)
        file_num = int(g["file0"]) if g["file0"] else None
    elif g["sel1"] is not None:
        piece, selector, file_num = PAWN, sel_map[g["sel1"]], int(g["pfile"])
    else:
        piece = _WXF_LETTERS[g["piece2"].upper()]
        selector = sel_map[g["sel2"]] if g["sel2"] else None
        file_num = int(g["file"]) if g["file"] else None
    spec = _Spec(piece, file_num, selector, _WXF_OPS[g["op"]], int(g["num"]))
    return _resolve(position, spec, text)


def parse_move(position: Position, text: str) -> Move:
    """Read a move written in ICCS, WXF or Chinese (simplified or traditional, any digits) as a legal Move.

    Raises NotationError saying what was wrong: unreadable text, no fitting move, an ambiguous one, or an illegal
    one (then `.move` and `.reason` say which and why)."""
    if not isinstance(text, str) or not text.strip():
        raise NotationError(f"empty move text: {text!r}")
    # NFKC folds full-width forms (Ｈ２－Ｅ２, Ｃ２＝５, ７) to ASCII; Chinese characters are left as they are.
    t = unicodedata.normalize("NFKC", text).strip()
    m = _ICCS_RE.match(t)
    if m:
        mv = Move(m.group(1).lower() + m.group(2), m.group(3).lower() + m.group(4))
        reason = position.illegal_reason(mv)
        if reason is not None:
            raise NotationError(f"{text!r} is illegal here: {reason}", mv, reason)
        return mv
    m = _WXF_RE.match(t)
    if m:
        return _parse_wxf(position, t, m)
    return _parse_chinese(position, t)
