"""DhtmlXQ / UBB (the `[DhtmlXQ]...[/DhtmlXQ]` blocks of Chinese forums and dpxq.com): write and read.

Coordinates: a point is two digits, column then row; columns 0-8 are files a-i (left to right from Red's side),
rows 0-9 count from the top, Black's back rank, so row = 9 - ICCS rank. A move is four digits, from then to:
炮二平五 (h2e2) is "7747". `DhtmlXQ_binit` is the start position: 32 points, two digits each, for the pieces in
the order 车马相仕帅仕相马车炮炮兵兵兵兵兵 (Red, RNBAKABNRCCPPPPP) then the same for Black; "99" is a piece not
on the board. The standard start is 8979695949392919097717866646260600102030405060708012720323436383 (Red's
pieces right to left, Black's left to right). `DhtmlXQ_commentN` is the comment after move N (0: before the
first). Results: 红胜 / 黑胜 / 和棋 / 未知.
"""

from __future__ import annotations

import re

from xqarb.referee.rules.pgn import GameRecord
from xqarb.referee.rules.position import START_FEN

from .facts import FormatError, GameFacts
from .pgn_out import termination_tag, time_control_tag

STANDARD_BINIT = "8979695949392919097717866646260600102030405060708012720323436383"
_SLOTS = "RNBAKABNRCCPPPPP"  # one side's 16 pieces in binit order
_RESULT_OUT = {"1-0": "红胜", "0-1": "黑胜", "1/2-1/2": "和棋", "*": "未知"}
_RESULT_IN = {"红胜": "1-0", "黑胜": "0-1", "和棋": "1/2-1/2", "红胜利": "1-0", "黑胜利": "0-1", "和局": "1/2-1/2"}
_TAG_RE = re.compile(r"\[DhtmlXQ_([A-Za-z0-9_]+)\](.*?)\[/DhtmlXQ_\1\]", re.S)
_FILES = "abcdefghi"


def point_digits(pt: str) -> str:
    """ICCS point 'h2' -> '77' (column, row from the top)."""
    return f"{_FILES.index(pt[0])}{9 - int(pt[1])}"


def digits_point(d: str) -> str:
    """'77' -> ICCS point 'h2'."""
    col, row = int(d[0]), int(d[1])
    if col > 8:
        raise FormatError(f"DhtmlXQ: column {col} of {d!r} is off the board (0-8)")
    return f"{_FILES[col]}{9 - row}"


def board_of_fen(fen: str) -> dict[str, str]:
    """{ICCS point: FEN letter} of a FEN's placement field."""
    out: dict[str, str] = {}
    rows = fen.split()[0].split("/")
    if len(rows) != 10:
        raise FormatError(f"FEN {fen!r}: 10 ranks expected")
    for r, row in enumerate(rows):
        f = 0
        for ch in row:
            if ch.isdigit():
                f += int(ch)
            else:
                if f > 8:
                    raise FormatError(f"FEN {fen!r}: rank {9 - r} is longer than 9 points")
                out[f"{_FILES[f]}{9 - r}"] = ch
                f += 1
    return out


def binit_of_fen(fen: str) -> str:
    """The 64-digit binit of a position: each piece in the first free slot of its kind."""
    if fen.split()[0] == START_FEN.split()[0]:
        return STANDARD_BINIT
    slots = ["99"] * 32
    board = board_of_fen(fen)

    def order(pt: str) -> tuple[int, int, int]:  # as the standard binit: Red's right to left, Black's left to right
        rank, file = int(pt[1]), _FILES.index(pt[0])
        return (0, rank, -file) if board[pt].isupper() else (1, -rank, file)

    for pt in sorted(board, key=order):
        letter = board[pt]
        base = 0 if letter.isupper() else 16
        free = [i for i, k in enumerate(_SLOTS) if k == letter.upper() and slots[base + i] == "99"]
        if not free:
            raise FormatError(f"DhtmlXQ binit holds at most {_SLOTS.count(letter.upper())} of {letter!r}")
        slots[base + free[0]] = point_digits(pt)
    return "".join(slots)


def fen_of_binit(binit: str, red_to_move: bool = True) -> str:
    if not re.fullmatch(r"\d{64}", binit):
        raise FormatError(f"DhtmlXQ_binit must be 64 digits, got {binit!r}")
    board: dict[str, str] = {}
    for i in range(32):
        d = binit[2 * i:2 * i + 2]
        if d == "99":
            continue
        pt = digits_point(d)
        if pt in board:
            raise FormatError(f"DhtmlXQ_binit puts two pieces on {pt}")
        kind = _SLOTS[i % 16]
        board[pt] = kind if i < 16 else kind.lower()
    rows = []
    for r in range(9, -1, -1):
        row, empty = "", 0
        for f in _FILES:
            ch = board.get(f"{f}{r}")
            if ch:
                row += (str(empty) if empty else "") + ch
                empty = 0
            else:
                empty += 1
        rows.append(row + (str(empty) if empty else ""))
    return f"{'/'.join(rows)} {'w' if red_to_move else 'b'} - - 0 1"


def _clean(text: str) -> str:
    # A '[' would open a tag inside the value; forum readers show the full-width bracket alike.
    return text.replace("[", "［").replace("]", "］")


def write_dhtmlxq(facts: GameFacts) -> str:
    """The game as one [DhtmlXQ] block, rulings as comments after the move they follow."""
    title = " ".join(p for p in (facts.event, f"第{facts.round}轮" if facts.round is not None else "",
                                 f"{facts.red} 对 {facts.black}" if facts.red or facts.black else "") if p)
    fields = [
        ("ver", "www_dpxq_com"),
        ("title", title),
        ("event", facts.event),
        ("date", facts.date.replace(".", "-")),
        ("place", facts.site),
        ("round", str(facts.round) if facts.round is not None else ""),
        ("table", str(facts.board_no) if facts.board_no is not None else ""),
        ("red", facts.red),
        ("black", facts.black),
        ("result", _RESULT_OUT.get(facts.result, "未知")),
        ("timerule", time_control_tag(facts.time_control)),
        ("endtype", termination_tag(facts)),
        ("binit", binit_of_fen(facts.start_fen)),
        ("movelist", "".join(point_digits(m.iccs[:2]) + point_digits(m.iccs[2:]) for m in facts.moves)),
    ]
    lines = ["[DhtmlXQ]"] + [f"[DhtmlXQ_{k}]{_clean(v)}[/DhtmlXQ_{k}]" for k, v in fields]
    comments: dict[int, list[str]] = {}
    for r in facts.rulings:
        comments.setdefault(min(r.after_ply, len(facts.moves)), []).append(
            f"{r.article}: {r.message}" if r.article else r.message)
    for n, texts in sorted(comments.items()):
        # '||' is the format's line break inside a comment.
        lines.append(f"[DhtmlXQ_comment{n}]{_clean('||'.join(texts))}[/DhtmlXQ_comment{n}]")
    lines.append("[/DhtmlXQ]")
    return "\n".join(lines) + "\n"


def is_dhtmlxq(text: str) -> bool:
    return "[DhtmlXQ" in text


def read_dhtmlxq(text: str) -> list[GameRecord]:
    """Every [DhtmlXQ] block of a text as a game record (main line only; variations are not moves played):
    moves in ICCS, to be replayed by the rules core. Side to move at the start: Red unless the first move is
    a Black piece's."""
    blocks = re.findall(r"\[DhtmlXQ\](.*?)\[/DhtmlXQ\]", text, re.S) or [text]
    records = []
    for block in blocks:
        tags = {k.lower(): v.strip() for k, v in _TAG_RE.findall(block)}
        digits = re.sub(r"\D", "", tags.get("movelist", ""))
        if len(digits) % 4:
            raise FormatError(f"DhtmlXQ_movelist has {len(digits)} digits: four a move expected")
        moves = [digits_point(digits[i:i + 2]) + digits_point(digits[i + 2:i + 4]) for i in range(0, len(digits), 4)]
        binit = tags.get("binit") or STANDARD_BINIT
        fen = fen_of_binit(binit)
        if moves and board_of_fen(fen).get(moves[0][:2], "A").islower():
            fen = fen_of_binit(binit, red_to_move=False)
        headers = {"Event": tags.get("event", ""), "Site": tags.get("place", ""),
                   "Date": tags.get("date", "").replace("-", "."), "Round": tags.get("round", ""),
                   "Red": tags.get("red", ""), "Black": tags.get("black", ""), "Title": tags.get("title", "")}
        result = _RESULT_IN.get(tags.get("result", ""))
        if result:
            headers["Result"] = result
        if fen.split()[:2] != START_FEN.split()[:2]:
            headers["FEN"] = fen
        records.append(GameRecord({k: v for k, v in headers.items() if v}, fen, moves, result))
    return records
