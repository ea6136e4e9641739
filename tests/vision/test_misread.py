"""Following the referee's position through still boards read one point off it (`misread.read_over`)."""

from __future__ import annotations

import numpy as np

from xqarb.referee.rules import Move, Position
from xqarb.vision.grid import point_name
from xqarb.vision.misread import read_over

IDX = {point_name(i): i for i in range(90)}
PLAIN, GONE = 2.0, 0.0  # the packaged move model's max_other and min_end


def _position(*moves: str) -> Position:
    pos = Position.start()
    for m in moves:
        pos = pos.play(Move.parse(m))
    return pos


def _table(**points: tuple[int, int, float]) -> np.ndarray:
    """A change table (`movefit.change_table`): every change unlikely but at `points` (side from, side to, odds)."""
    t = np.full((90, 3, 3), -6.0)
    t[:, [0, 1, 2], [0, 1, 2]] = 0.0
    for p, (a, b, o) in points.items():
        t[IDX[p], a, b] = o
    return t


def _read(squares: str, **points: str) -> str:
    out = list(squares)
    for p, c in points.items():
        out[IDX[p]] = c
    return "".join(out)


def test_after_a_snapshot_that_fits_no_move_the_next_moves_are_followed_from_the_held_position() -> None:
    """Hard game 238's shape: Red's rook a0-b0 read plainly, and with it the advisor d0 read gone where its view
    did not change (0.4 log-odds); no legal move fits, and the move fit cannot tell a0-b0 from a0-a1 (both ends
    faint). The reading is a0-b0 but for one point whose view did not change: the rook's move is taken, d0 kept as
    the position holds it; and the next still board (Black's cannon b7-b3), read with d0 still gone, is followed on
    from there."""
    pos = _position("h2e2", "h7e7", "h0g2", "i9i8", "b0a2", "h9g7", "i0h0", "b9c7", "b2c2", "a9b9")
    one = pos.play(Move.parse("a0b0"))
    two = one.play(Move.parse("b7b3"))
    readings = [_read(one.squares(), d0="."), _read(two.squares(), d0=".")]
    tables = [_table(a0=(1, 0, 0.6), d0=(1, 0, 0.4)), _table(b7=(2, 0, 6.0), b3=(0, 2, 6.0))]
    over = read_over(pos, readings, tables, PLAIN, GONE)
    assert over is not None and over.boards == (one.squares(), two.squares())
    assert over.misread == frozenset({IDX["d0"]})


def test_a_point_read_otherwise_where_its_view_changed_is_no_misreading() -> None:
    """The same still board with d0's view plainly changed (a move there, 5.0): not the camera's, nothing taken."""
    pos = _position("h2e2", "h7e7", "h0g2", "i9i8", "b0a2", "h9g7", "i0h0", "b9c7", "b2c2", "a9b9")
    one = pos.play(Move.parse("a0b0"))
    assert read_over(pos, [_read(one.squares(), d0=".")], [_table(a0=(1, 0, 0.6), d0=(1, 0, 5.0))],
                     PLAIN, GONE) is None


def test_no_move_is_taken_from_a_reading_that_fits_two_alike_or_shows_its_source_still() -> None:
    """A reading two legal moves fit each but at one point (the rook read on both a1 and b0) is no answer; nor is a
    move whose source shows its piece plainly still there (-5.0), however the reading has it; nor a point newly
    read otherwise with no move (a move missed is as likely)."""
    pos = _position("h2e2", "h7e7", "h0g2", "i9i8", "b0a2", "h9g7", "i0h0", "b9c7", "b2c2", "a9b9")
    one = pos.play(Move.parse("a0b0"))
    assert read_over(pos, [_read(one.squares(), a1="R")], [_table(a0=(1, 0, 0.6))], PLAIN, GONE) is None
    assert read_over(pos, [_read(one.squares(), d0=".")], [_table(a0=(1, 0, -5.0))], PLAIN, GONE) is None
    assert read_over(pos, [_read(pos.squares(), d0=".")], [_table()], PLAIN, GONE) is None


def test_a_point_misread_is_kept_as_the_position_holds_it_while_its_view_is_unchanged() -> None:
    """The advisor d0 read gone again, its view unchanged since the last still board: the position's letter stands
    (and the point stays so kept, read right or not); once its view changed (a piece moved off it), the reading
    stands and the point is no longer kept."""
    from xqarb.vision.settings import TrackerConfig
    from xqarb.vision.still_board import _misread_kept

    cfg = TrackerConfig()
    known = Position.start().squares()
    read = _read(known, d0=".")
    quiet = np.zeros(90)
    assert _misread_kept(known, read, frozenset({IDX["d0"]}), quiet, 1.0, cfg) == (known, frozenset({IDX["d0"]}))
    assert _misread_kept(known, known, frozenset({IDX["d0"]}), quiet, 1.0, cfg) == (known, frozenset({IDX["d0"]}))
    moved = quiet.copy()
    moved[IDX["d0"]] = 5.0
    assert _misread_kept(known, read, frozenset({IDX["d0"]}), moved, 1.0, cfg) == (read, frozenset())
