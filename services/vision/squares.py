"""The 90-character board the tracker reports (rank 9 first, files a..i; FEN letters, '.' empty, X / x a red /
black piece of unknown type, '?' unsure), and the standard start position on it."""

from __future__ import annotations

from xqarb.alphabet import CASED, consistent


def squares_of_fen(fen: str) -> str:
    """The 90-character squares of a FEN's board field (rank 9 first)."""
    rows = fen.split()[0].split("/")
    if len(rows) != 10:
        raise ValueError(f"{fen!r}: a Xiangqi FEN has 10 ranks")
    out = "".join("".join("." * int(c) if c.isdigit() else c for c in row) for row in rows)
    if len(out) != 90:
        raise ValueError(f"{fen!r}: ranks must have 9 files each")
    return out


START_SQUARES = squares_of_fen("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1")


_CASED = CASED


def _agrees(seen: str, squares: str) -> bool:
    """`squares` is consistent with the snapshot `seen` at every point, as the referee's inference judges a
    snapshot: the same side wherever `seen` names one, empty wherever it is empty, a '?' agrees with anything and
    a piece's type may differ (a type read wrongly is no contradiction)."""
    return all(consistent(q, s) for s, q in zip(seen, squares, strict=True))


def _require_90(squares: str, what: str) -> None:
    if len(squares) != 90:
        raise ValueError(f"{what} has 90 points, got {len(squares)}")
