"""XQF, the binary game file of 象棋演播室 (XQStudio): write (version 1.0, unencrypted) and read (1.0 and the
encrypted 1.1-1.8), main line only.

Layout (little-endian): a 1024-byte header, then the moves.
- Header: "XQ", version byte (10 = 1.0; 11 and later are encrypted), 13 key bytes (KeyMask, ProductId (4),
  KeyOrA-D, KeysSum, KeyXY, KeyXYf, KeyXYt), at 16 the 32 pieces' points (Red RNBAKABNRCCPPPPP then Black's, a
  point is file * 10 + rank with file 0-8 = a-i and rank 0-9 from Red's side; 0xFF: not on the board), at 51
  the result (0 unknown, 1 Red won, 2 Black won, 3 draw), at 64 the kind (0 a whole game), then length-prefixed
  GB18030 strings: title (80, 63 bytes), event (208, 63), date (272, 15), place (288, 15), Red (304, 15), Black
  (320, 15), time rule (336, 63), Red's time (400, 15), Black's time (416, 15), commentator (464, 15), author
  (480, 15).
- Moves: a first record for the start (its comment is the game's), then one per move in depth-first order (a
  move's continuation before its variations, so the main line comes first). A record is 4 bytes: from + 0x18, to
  + 0x20, flags, reserved. Version 1.0: flags 0xF0 = a next move follows, 0x0F = a variation follows; then always
  a 4-byte comment length and the comment. Encrypted versions: flags 0x80 next, 0x40 variation, 0x20 a comment
  (its length less KeyRMKSize, then the text); points less KeyXYf / KeyXYt, and every byte after the header less
  a key byte that depends on its offset.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from xqarb.referee.rules.pgn import GameRecord
from xqarb.referee.rules.position import START_FEN

from .dhtmlxq import board_of_fen, fen_of_binit
from .facts import FormatError, GameFacts
from .pgn_out import time_control_tag

HEADER_SIZE = 0x400
MAGIC = b"XQ"
WRITE_VERSION = 10  # 1.0: the unencrypted version every XQF reader reads
_SLOTS = "RNBAKABNRCCPPPPP"
_FILES = "abcdefghi"
_ENCODING = "gb18030"
_RESULT_OUT = {"*": 0, "1-0": 1, "0-1": 2, "1/2-1/2": 3}
_RESULT_IN = {1: "1-0", 2: "0-1", 3: "1/2-1/2", 4: "1/2-1/2"}
# (offset of the length byte, room in bytes) of each header string.
_STRINGS = {"title": (80, 63), "event": (208, 63), "date": (272, 15), "place": (288, 15), "red": (304, 15),
            "black": (320, 15), "timerule": (336, 63), "redtime": (400, 15), "blacktime": (416, 15),
            "commentator": (464, 15), "author": (480, 15)}
_KEY_TEXT = b"[(C) Copyright Mr. Dong Shiwei.]"  # the format's fixed 32-byte key material


def _point_byte(pt: str) -> int:
    return _FILES.index(pt[0]) * 10 + int(pt[1])


def _byte_point(b: int) -> str:
    f, r = divmod(b, 10)
    if f > 8:
        raise FormatError(f"XQF: point byte {b} is off the board")
    return f"{_FILES[f]}{r}"


def _fit(text: str, room: int) -> bytes:
    """GB18030 bytes of a text cut to the room without splitting a character."""
    out = b""
    for ch in text:
        b = ch.encode(_ENCODING, errors="replace")
        if len(out) + len(b) > room:
            break
        out += b
    return out


def pieces_of_fen(fen: str) -> bytes:
    slots = [0xFF] * 32
    board = board_of_fen(fen)
    for pt in sorted(board, key=lambda p: (_FILES.index(p[0]), int(p[1]))):
        letter = board[pt]
        base = 0 if letter.isupper() else 16
        free = [i for i, k in enumerate(_SLOTS) if k == letter.upper() and slots[base + i] == 0xFF]
        if not free:
            raise FormatError(f"XQF holds at most {_SLOTS.count(letter.upper())} of {letter!r}")
        slots[base + free[0]] = _point_byte(pt)
    return bytes(slots)


def _record(frm: int, to: int, has_next: bool, comment: str) -> bytes:
    text = comment.encode(_ENCODING, errors="replace")
    return bytes([(frm + 0x18) & 0xFF, (to + 0x20) & 0xFF, 0xF0 if has_next else 0, 0]) + \
        struct.pack("<i", len(text)) + text


def write_xqf(facts: GameFacts) -> bytes:
    """The game as an XQF 1.0 file; rulings are the comment of the move they follow (before the first: the
    game's comment)."""
    header = bytearray(HEADER_SIZE)
    header[0:2] = MAGIC
    header[2] = WRITE_VERSION
    header[16:48] = pieces_of_fen(facts.start_fen)
    header[51] = _RESULT_OUT.get(facts.result, 0)
    title = " ".join(p for p in (facts.event, f"第{facts.round}轮" if facts.round is not None else "",
                                 f"{facts.red} 对 {facts.black}" if facts.red or facts.black else "") if p)
    values = {"title": title, "event": facts.event, "date": facts.date, "place": facts.site, "red": facts.red,
              "black": facts.black, "timerule": time_control_tag(facts.time_control)}
    for key, text in values.items():
        at, room = _STRINGS[key]
        data = _fit(text, room)
        header[at] = len(data)
        header[at + 1:at + 1 + len(data)] = data
    comments: dict[int, list[str]] = {}
    for r in facts.rulings:
        comments.setdefault(min(r.after_ply, len(facts.moves)), []).append(
            f"{r.article}: {r.message}" if r.article else r.message)
    body = [_record(0, 0, bool(facts.moves), "\n".join(comments.get(0, [])))]
    for i, mv in enumerate(facts.moves):
        body.append(_record(_point_byte(mv.iccs[:2]), _point_byte(mv.iccs[2:]), i + 1 < len(facts.moves),
                            "\n".join(comments.get(i + 1, []))))
    return bytes(header) + b"".join(body)


@dataclass(frozen=True)
class _Keys:
    xy: int
    xyf: int
    xyt: int
    rmk_size: int
    f32: bytes


def _mix(b: int, factor: int) -> int:
    return (((((b * b) * 3 + 9) * 3 + 8) * 2 + 1) * 3 + 8) * factor & 0xFF


def _keys(raw: bytes) -> _Keys:
    mask, _product, or_a, or_b, or_c, or_d, keys_sum, key_xy, key_xyf, key_xyt = struct.unpack("<BIBBBBBBBB", raw)
    xy = _mix(key_xy, key_xy)
    xyf = _mix(key_xyf, xy)
    xyt = _mix(key_xyt, xyf)
    rmk = ((keys_sum * 256 + key_xy) % 32000 + 767) & 0xFFFF
    kb = ((keys_sum & mask) | or_a, (key_xy & mask) | or_b, (key_xyf & mask) | or_c, (key_xyt & mask) | or_d)
    f32 = bytes(c & kb[i % 4] for i, c in enumerate(_KEY_TEXT))
    return _Keys(xy, xyf, xyt, rmk, f32)


def _pieces(raw: bytes, version: int, keys: _Keys | None) -> list[int]:
    if keys is None:
        return list(raw)
    tmp = list(raw)
    if version >= 12:  # 1.2 on also shuffles the 32 slots
        tmp = [0] * 32
        for i in range(32):
            tmp[(keys.xy + i + 1) & 0x1F] = raw[i]
    return [0xFF if (b - keys.xy) & 0xFF > 89 else (b - keys.xy) & 0xFF for b in tmp]


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def take(self, n: int) -> bytes:
        if self.at + n > len(self.data):
            raise FormatError(f"XQF: the move data ends inside a record (byte {HEADER_SIZE + self.at})")
        out = self.data[self.at:self.at + n]
        self.at += n
        return out

    def left(self) -> int:
        return len(self.data) - self.at


def _step(rd: _Reader, keys: _Keys | None) -> tuple[int, int, bool, str]:
    b = rd.take(4)
    if keys is None:
        has_next = bool(b[2] & 0xF0)
        length = struct.unpack("<i", rd.take(4))[0]
        frm, to = (b[0] - 0x18) & 0xFF, (b[1] - 0x20) & 0xFF
    else:
        has_next = bool(b[2] & 0x80)
        length = struct.unpack("<i", rd.take(4))[0] - keys.rmk_size if b[2] & 0x20 else 0
        frm, to = (b[0] - 0x18 - keys.xyf) & 0xFF, (b[1] - 0x20 - keys.xyt) & 0xFF
    if length < 0 or length > rd.left():
        raise FormatError(f"XQF: a comment of {length} bytes does not fit the file")
    return frm, to, has_next, rd.take(length).decode(_ENCODING, errors="replace")


def _string(header: bytes, key: str) -> str:
    at, room = _STRINGS[key]
    n = min(header[at], room)
    return header[at + 1:at + 1 + n].decode(_ENCODING, errors="replace").strip("\x00 ")


def read_xqf(data: bytes) -> GameRecord:
    """The main line of an XQF file as a game record (moves in ICCS, to be replayed by the rules core); each
    move's comment, where there is one, is in headers["Comment<ply>"] (the game's in "Comment0")."""
    if len(data) < HEADER_SIZE or data[:2] != MAGIC:
        raise FormatError("not an XQF file: it must begin with 'XQ' and a 1024-byte header")
    header, version = data[:HEADER_SIZE], data[2]
    keys = _keys(header[3:16]) if version > WRITE_VERSION else None
    body = data[HEADER_SIZE:]
    if keys is not None:
        body = bytes((c - keys.f32[(HEADER_SIZE + i) % 32]) & 0xFF for i, c in enumerate(body))
    pieces = _pieces(header[16:48], version, keys)
    binit = "".join("99" if p == 0xFF else f"{p // 10}{9 - p % 10}" for p in pieces)
    rd = _Reader(body)
    headers = {k: v for k, v in (("Title", _string(header, "title")), ("Event", _string(header, "event")),
                                 ("Date", _string(header, "date")), ("Site", _string(header, "place")),
                                 ("Red", _string(header, "red")), ("Black", _string(header, "black")),
                                 ("TimeControl", _string(header, "timerule"))) if v}
    moves: list[str] = []
    if rd.left():
        _, _, has_next, comment = _step(rd, keys)
        if comment:
            headers["Comment0"] = comment
        while rd.left() >= 4 and (has_next or (keys is None and not moves)):
            frm, to, has_next, comment = _step(rd, keys)
            moves.append(_byte_point(frm) + _byte_point(to))
            if comment:
                headers[f"Comment{len(moves)}"] = comment
    fen = fen_of_binit(binit)
    if moves and board_of_fen(fen).get(moves[0][:2], "A").islower():
        fen = fen_of_binit(binit, red_to_move=False)
    if fen.split()[:2] != START_FEN.split()[:2]:
        headers["FEN"] = fen
    result = _RESULT_IN.get(header[51])
    if result:
        headers["Result"] = result
    return GameRecord(headers, fen, moves, result)
