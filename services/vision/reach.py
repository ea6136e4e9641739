"""Where a known piece could go: the points its move may reach on a board of known letters.

The tracker uses this only to narrow where it looks for a move that its inks and changes leave in doubt (which
of several changed pieces was taken); it judges nothing. So the reach is the pieces' move geometry alone (rules
1-3: the rook's lines, the cannon's screen 炮打隔子, the horse's leg 蹩马腿, the elephant's eye 塞象眼 and the river,
the palace), without check or whose turn it is: those are the referee's.

`squares` is the tracker's board (canonical: red's back rank last, index 0 is a9): letters for known pieces,
`X` / `x` a red / black piece of unknown type, `?` a point not known, `.` empty. A point that is not `.`
stands in a line's way (a `?` may hold a piece); a `?` on a horse's leg or an elephant's eye may be empty and
blocks nothing. A piece of unknown type reaches anywhere: `None`.
"""

from __future__ import annotations

from .grid import point_at

_LINES = ((1, 0), (-1, 0), (0, 1), (0, -1))
_DIAGONALS = ((1, 1), (1, -1), (-1, 1), (-1, -1))
# the horse's eight moves, each with its leg: the point next to it, in the direction of the longer step
_HORSE = tuple(((2 * du, dv), (du, 0)) for du in (1, -1) for dv in (1, -1)) + tuple(
    ((du, 2 * dv), (0, dv)) for du in (1, -1) for dv in (1, -1))


def _in_palace(u: int, v: int, red: bool) -> bool:
    return 3 <= u <= 5 and (7 <= v <= 9 if red else 0 <= v <= 2)


def _own_half(v: int, red: bool) -> bool:
    return v >= 5 if red else v <= 4


def _taken_at(squares: str, u: int, v: int, du: int, dv: int) -> set[int]:
    """Where a rook or cannon moving along (du, dv) takes the piece it meets at (u, v): there, and where that point
    is unsure and so is the next along the line, at the next too (two unsure points side by side may be one piece
    standing between them, 5.10, taken by a piece set down on either; e.g. the red cannon b2 took the black
    cannon between b6 and b7, on b7)."""
    i = point_at(u, v)
    out = {i}
    j = point_at(u + du, v + dv)
    if squares[i] == "?" and j is not None and squares[j] == "?":
        out.add(j)
    return out


def _pair_across(squares: str, u: int, v: int, du: int, dv: int) -> bool:
    """The unsure point (u, v) on a line along (du, dv) is one of two unsure points side by side across that line, and
    the next point along it is not unsure: one piece standing between the two (5.10), which may stand on the other,
    so that this point may be empty and the line goes on past it (hard game liu 68: the black rook c8 took the
    elephant c0 past the red rook left between b1 and c1; counting c1 a piece, c8-c9 was read instead)."""
    if squares[point_at(u, v)] != "?":
        return False
    ahead = point_at(u + du, v + dv)
    if ahead is not None and squares[ahead] == "?":
        return False
    return any((j := point_at(u + s * dv, v + s * du)) is not None and squares[j] == "?" for s in (1, -1))


def reach(squares: str, src: int) -> set[int] | None:
    """The points the piece on `src` could move to or take on (any piece not its own side's, or `?`), by its move
    alone; `None` where the piece's type is not known (it may go anywhere); empty for an empty point."""
    piece = squares[src]
    if piece not in "RNBAKCPrnbakcp":
        return None if piece in "Xx?" else set()
    red = piece.isupper()
    kind = piece.upper()
    u0, v0 = src % 9, src // 9

    def free(i: int) -> bool:
        return squares[i] == "."

    def maybe_free(i: int) -> bool:
        # a horse's leg or an elephant's eye left unsure may be empty: the unsure point a piece left, never seen
        # plainly again, must not block the horse or elephant that now moves over it
        return squares[i] in ".?"

    def open_to(i: int) -> bool:
        # a move ends on an empty point or on one that may hold the other side's piece
        q = squares[i]
        return q == "." or q == "?" or (q.isupper() != red)

    out: set[int] = set()
    if kind in "RC":
        for du, dv in _LINES:
            u, v, screened = u0 + du, v0 + dv, False
            while (i := point_at(u, v)) is not None:
                if kind == "R" or not screened:
                    if free(i):
                        out.add(i)
                    else:
                        if kind == "R" and open_to(i):
                            out.update(_taken_at(squares, u, v, du, dv))
                        if kind == "R" and not _pair_across(squares, u, v, du, dv):
                            break
                        if squares[i] == "?":
                            # an unsure point may be the empty half of a piece between two points (5.10): the
                            # cannon may move there, or be screened by it
                            out.add(i)
                        screened = True  # 炮打隔子: the cannon takes only over exactly one piece
                elif not free(i):
                    if open_to(i):
                        out.update(_taken_at(squares, u, v, du, dv))
                    # two unsure points side by side may be one piece standing between them (5.10): a cannon
                    # screened by the first may be screened by that same piece at the second, and reach beyond
                    if not (squares[i] == "?" and squares[point_at(u - du, v - dv)] == "?"):
                        break
                u, v = u + du, v + dv
    elif kind == "N":
        for (du, dv), (lu, lv) in _HORSE:
            i, leg = point_at(u0 + du, v0 + dv), point_at(u0 + lu, v0 + lv)
            if i is not None and leg is not None and maybe_free(leg) and open_to(i):
                out.add(i)  # 蹩马腿: a horse whose leg is blocked cannot go that way
    elif kind == "B":
        for du, dv in _DIAGONALS:
            i, eye = point_at(u0 + 2 * du, v0 + 2 * dv), point_at(u0 + du, v0 + dv)
            if i is not None and eye is not None and maybe_free(eye) and _own_half(v0 + 2 * dv, red) and open_to(i):
                out.add(i)  # 塞象眼: a blocked eye stops the elephant; it never crosses the river
    elif kind == "A":
        for du, dv in _DIAGONALS:
            i = point_at(u0 + du, v0 + dv)
            if i is not None and _in_palace(u0 + du, v0 + dv, red) and open_to(i):
                out.add(i)
    elif kind == "K":
        for du, dv in _LINES:
            i = point_at(u0 + du, v0 + dv)
            if i is not None and _in_palace(u0 + du, v0 + dv, red) and open_to(i):
                out.add(i)
    else:  # P: one step forward; sideways too once across the river
        forward = -1 if red else 1
        steps = [(0, forward)] + ([(1, 0), (-1, 0)] if not _own_half(v0, red) else [])
        for du, dv in steps:
            i = point_at(u0 + du, v0 + dv)
            if i is not None and open_to(i):
                out.add(i)
    return out
