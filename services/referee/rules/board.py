"""The fast mutable board behind `Position`: mailbox, piece lists, incremental Zobrist hash, legal moves.

Squares are numbered `rank * 9 + file` with ICCS files a..i = 0..8 and ranks 0..9 from Red's side, so the Red
king starts on 4 (e0). Pieces are small ints, positive for Red and negative for Black: king 1, advisor 2,
elephant 3, horse 4, rook 5, cannon 6, pawn 7. A move is the int `frm << 7 | to`.

Everything the move rules need (articles 2.2 and 3) is precomputed per square: palace steps, elephant points
with their eyes (塞象眼), horse jumps with their legs (蹩马腿), rook/cannon rays and pawn steps. Legality (no move
may leave the own king attacked, 3.4, including kings facing on an open file) is decided without making the move
for the great majority of moves: only moves of pieces that might be pinned, moves onto a cannon's open line and
king moves are tried on the board (see `_sensitive`).

This module is pure: values in, values out; the tables below are constants.
"""

from __future__ import annotations

import random

KING, ADVISOR, ELEPHANT, HORSE, ROOK, CANNON, PAWN = 1, 2, 3, 4, 5, 6, 7
RED, BLACK = 1, -1

FILES = "abcdefghi"
LETTERS = ".KABNRCP"  # index = piece type
PIECE_FROM_LETTER: dict[str, int] = {}
for _t, _l in enumerate(LETTERS):
    if _t:
        PIECE_FROM_LETTER[_l] = _t
        PIECE_FROM_LETTER[_l.lower()] = -_t
# Some programs write elephant as E and horse as H (WXF letters); accept them on input.
PIECE_FROM_LETTER.update({"E": ELEPHANT, "e": -ELEPHANT, "H": HORSE, "h": -HORSE})

PIECE_NAMES = {KING: "king", ADVISOR: "advisor", ELEPHANT: "elephant", HORSE: "horse", ROOK: "rook",
               CANNON: "cannon", PAWN: "pawn"}

# Starting counts (1.2): more of a kind than this cannot arise in a game.
MAX_COUNT = {KING: 1, ADVISOR: 2, ELEPHANT: 2, HORSE: 2, ROOK: 2, CANNON: 2, PAWN: 5}


def letter(piece: int) -> str:
    """FEN letter of a piece code (uppercase Red)."""
    ch = LETTERS[abs(piece)]
    return ch if piece > 0 else ch.lower()


def point(sq: int) -> str:
    """ICCS point of a square, e.g. 4 -> 'e0'."""
    return FILES[sq % 9] + str(sq // 9)


_SQUARE_OF_POINT = {FILES[s % 9] + str(s // 9): s for s in range(90)}


def square(pt: str) -> int:
    """Square of an ICCS point; raises ValueError for anything else."""
    try:
        return _SQUARE_OF_POINT[pt]
    except (KeyError, TypeError):
        raise ValueError(f"not an ICCS point: {pt!r} (files a-i, ranks 0-9, e.g. 'e0')") from None


def _on(f: int, r: int) -> bool:
    return 0 <= f < 9 and 0 <= r < 10


def _in_palace(f: int, r: int, side: int) -> bool:
    # 2.2: the king and advisors stay inside the palace (九宫): files d-f, ranks 0-2 (Red) or 7-9 (Black).
    return 3 <= f <= 5 and (0 <= r <= 2 if side == RED else 7 <= r <= 9)


def _own_half(r: int, side: int) -> bool:
    # 2.2: the elephant may not cross the river (河界) between ranks 4 and 5.
    return r <= 4 if side == RED else r >= 5


def _build_tables():
    king = {RED: [], BLACK: []}
    advisor = {RED: [], BLACK: []}
    elephant = {RED: [], BLACK: []}
    pawn = {RED: [], BLACK: []}
    pawn_attackers = {RED: [], BLACK: []}  # [side of the pawn][target] -> squares a pawn of that side attacks from
    horse, horse_attackers, rays = [], [], []
    for s in range(90):
        f, r = s % 9, s // 9
        for side in (RED, BLACK):
            king[side].append(tuple(
                (r + dr) * 9 + f + df for df, dr in ((1, 0), (-1, 0), (0, 1), (0, -1))
                if _on(f + df, r + dr) and _in_palace(f + df, r + dr, side)))
            advisor[side].append(tuple(
                (r + dr) * 9 + f + df for df, dr in ((1, 1), (1, -1), (-1, 1), (-1, -1))
                if _on(f + df, r + dr) and _in_palace(f + df, r + dr, side)))
            elephant[side].append(tuple(
                ((r + 2 * dr) * 9 + f + 2 * df, (r + dr) * 9 + f + df)
                for df, dr in ((1, 1), (1, -1), (-1, 1), (-1, -1))
                if _on(f + 2 * df, r + 2 * dr) and _own_half(r, side) and _own_half(r + 2 * dr, side)))
            steps = [(0, side)]
            if not _own_half(r, side):  # 2.2: sideways only after crossing the river
                steps += [(1, 0), (-1, 0)]
            pawn[side].append(tuple((r + dr) * 9 + f + df for df, dr in steps if _on(f + df, r + dr)))
            # a pawn of `side` on (f - df, r - dr) attacks s if it could step onto s
            att = []
            for df, dr in ((0, side), (1, 0), (-1, 0)):
                pf, pr = f - df, r - dr
                if not _on(pf, pr):
                    continue
                if dr == 0 and _own_half(pr, side):
                    continue
                att.append(pr * 9 + pf)
            pawn_attackers[side].append(tuple(att))
        hm, ha = [], []
        for df, dr in ((1, 2), (-1, 2), (1, -2), (-1, -2), (2, 1), (2, -1), (-2, 1), (-2, -1)):
            if not _on(f + df, r + dr):
                continue
            # 蹩马腿: the leg is the orthogonal neighbour in the direction of the long step.
            leg = (r + (dr // 2 if abs(dr) == 2 else 0)) * 9 + f + (df // 2 if abs(df) == 2 else 0)
            hm.append(((r + dr) * 9 + f + df, leg))
            # the horse standing on (f + df, r + dr) jumping back onto s uses the leg next to itself
            hf, hr = f + df, r + dr
            leg_back = (hr - (dr // 2 if abs(dr) == 2 else 0)) * 9 + hf - (df // 2 if abs(df) == 2 else 0)
            ha.append((hr * 9 + hf, leg_back))
        horse.append(tuple(hm))
        horse_attackers.append(tuple(ha))
        rs = []
        for df, dr in ((0, 1), (0, -1), (1, 0), (-1, 0)):
            ray, ff, rr = [], f + df, r + dr
            while _on(ff, rr):
                ray.append(rr * 9 + ff)
                ff, rr = ff + df, rr + dr
            rs.append(tuple(ray))
        rays.append(tuple(rs))
    freeze = lambda d: {k: tuple(v) for k, v in d.items()}  # noqa: E731
    return (freeze(king), freeze(advisor), freeze(elephant), freeze(pawn), freeze(pawn_attackers),
            tuple(horse), tuple(horse_attackers), tuple(rays))


(KING_STEPS, ADVISOR_STEPS, ELEPHANT_STEPS, PAWN_STEPS, PAWN_ATTACKERS, HORSE_STEPS, HORSE_ATTACKERS,
 RAYS) = _build_tables()

# Points where a piece can legally stand (a position with a piece elsewhere cannot arise from the start).
PALACE = {side: frozenset(s for s in range(90) if _in_palace(s % 9, s // 9, side)) for side in (RED, BLACK)}
ADVISOR_POINTS = {RED: frozenset({3, 5, 13, 21, 23}), BLACK: frozenset({84, 86, 76, 66, 68})}
ELEPHANT_POINTS = {RED: frozenset({2, 6, 18, 22, 26, 38, 42}), BLACK: frozenset({87, 83, 71, 67, 63, 47, 51})}

_rng = random.Random(0x58514152)  # fixed seed: the same hash in every process (ledger replay is deterministic)
ZOBRIST = tuple(tuple(_rng.getrandbits(64) for _ in range(90)) for _ in range(15))  # [piece + 7][square]
ZOBRIST_SIDE = _rng.getrandbits(64)  # xor-ed in when Black is to move
del _rng


class Board:
    """A mutable position for fast search: make/unmake, piece sets, incremental hash. Not shared; not thread-safe."""

    __slots__ = ("_stack", "b", "fullmove", "halfmove", "hash", "kings", "pieces", "side")

    def __init__(self, cells: list[int] | tuple[int, ...], side: int, halfmove: int = 0, fullmove: int = 1,
                 zobrist: int | None = None) -> None:
        """`zobrist`: the hash when the caller already knows it (a Position does), else computed here."""
        if len(cells) != 90:
            raise ValueError("a board has 90 points")
        b = self.b = list(cells)
        self.side = side
        self.halfmove = halfmove
        self.fullmove = fullmove
        red: set[int] = set()
        black: set[int] = set()
        for s, p in enumerate(b):  # one pass (a board is built for every position the referee checks)
            if p:
                (red if p > 0 else black).add(s)
        self.pieces = (red, black)  # squares of Red's pieces, of Black's pieces
        self.kings = [b.index(KING) if KING in b else -1, b.index(-KING) if -KING in b else -1]
        if zobrist is None:
            zobrist = ZOBRIST_SIDE if side == BLACK else 0
            for s in red:
                zobrist ^= ZOBRIST[b[s] + 7][s]
            for s in black:
                zobrist ^= ZOBRIST[b[s] + 7][s]
        self.hash = zobrist
        self._stack: list[tuple[int, int, int, int]] = []

    @classmethod
    def for_moves_of(cls, cells: list[int] | tuple[int, ...], side: int, frm: int) -> Board:
        """A board only for `legal_moves(only=frm)`: the legal moves of the side to move's piece on `frm`. Its piece
        sets hold that piece alone (no pass over the 90 points: a lifted piece asks this, 8.1.5); use it for
        nothing else."""
        board = object.__new__(cls)
        b = board.b = list(cells)
        board.side = side
        board.halfmove, board.fullmove, board.hash = 0, 1, 0
        board.pieces = ({frm}, set()) if side == RED else (set(), {frm})
        board.kings = [b.index(KING) if KING in b else -1, b.index(-KING) if -KING in b else -1]
        board._stack = []
        return board

    def copy(self) -> Board:
        return Board(self.b, self.side, self.halfmove, self.fullmove, self.hash)

    # ---------------------------------------------------------------- make / unmake
    def make(self, m: int) -> None:
        frm = m >> 7
        to = m & 127
        b = self.b
        p = b[frm]
        cap = b[to]
        self._stack.append((m, cap, self.hash, self.halfmove))
        b[to] = p
        b[frm] = 0
        z = ZOBRIST[p + 7]
        h = self.hash ^ z[frm] ^ z[to] ^ ZOBRIST_SIDE
        if p > 0:
            own, opp = self.pieces
            if p == KING:
                self.kings[0] = to
        else:
            opp, own = self.pieces
            if p == -KING:
                self.kings[1] = to
            self.fullmove += 1
        own.discard(frm)
        own.add(to)
        if cap:
            opp.discard(to)
            h ^= ZOBRIST[cap + 7][to]
            self.halfmove = 0
        else:
            self.halfmove += 1
        self.hash = h
        self.side = -self.side

    def unmake(self) -> None:
        m, cap, h, half = self._stack.pop()
        frm = m >> 7
        to = m & 127
        b = self.b
        p = b[to]
        b[frm] = p
        b[to] = cap
        if p > 0:
            own, opp = self.pieces
            if p == KING:
                self.kings[0] = frm
        else:
            opp, own = self.pieces
            if p == -KING:
                self.kings[1] = frm
            self.fullmove -= 1
        own.discard(to)
        own.add(frm)
        if cap:
            opp.add(to)
        self.hash = h
        self.halfmove = half
        self.side = -self.side

    # ---------------------------------------------------------------- attacks
    def attacked(self, k: int, s: int) -> bool:
        """Is the king of side `s` standing on `k` attacked (3.1), counting the facing king as an attacker (2.2)?"""
        return _attacked(self.b, k, s)

    def in_check(self) -> bool:
        s = self.side
        return _attacked(self.b, self.kings[0 if s == RED else 1], s)

    def checkers(self, s: int | None = None) -> list[int]:
        """Squares of the pieces attacking side `s`'s king (the facing king included)."""
        if s is None:
            s = self.side
        k = self.kings[0 if s == RED else 1]
        b = self.b
        out = []
        for ray in RAYS[k]:
            screens = 0
            for t in ray:
                p = b[t]
                if p:
                    if (screens == 0 and p in (-ROOK * s, -KING * s)) or (screens == 1 and p == -CANNON * s):
                        out.append(t)
                    screens += 1
                    if screens == 2:
                        break
        for h, leg in HORSE_ATTACKERS[k]:
            if b[h] == -HORSE * s and not b[leg]:
                out.append(h)
        for t in PAWN_ATTACKERS[-s][k]:
            if b[t] == -PAWN * s:
                out.append(t)
        return out

    # ---------------------------------------------------------------- move generation
    def pseudo_moves(self, only: int | None = None) -> list[int]:
        """Every move obeying the movement rules of 2.2, ignoring the safety of the own king (`only`: the moves of
        the side to move's piece on that square)."""
        b = self.b
        s = self.side
        out: list[int] = []
        add = out.append
        if s == RED:
            mine = self.pieces[0]
            elephant, advisor, king, pawn = ELEPHANT_STEPS[RED], ADVISOR_STEPS[RED], KING_STEPS[RED], PAWN_STEPS[RED]
        else:
            mine = self.pieces[1]
            elephant, advisor, king = ELEPHANT_STEPS[BLACK], ADVISOR_STEPS[BLACK], KING_STEPS[BLACK]
            pawn = PAWN_STEPS[BLACK]
        if only is not None:
            mine = {only} & mine
        for frm in mine:
            t = b[frm] * s
            base = frm << 7
            if t == PAWN:
                for to in pawn[frm]:
                    if b[to] * s <= 0:
                        add(base | to)
            elif t == ROOK:
                for ray in RAYS[frm]:
                    for to in ray:
                        q = b[to]
                        if q:
                            if q * s < 0:
                                add(base | to)
                            break
                        add(base | to)
            elif t == HORSE:
                for to, leg in HORSE_STEPS[frm]:
                    if not b[leg] and b[to] * s <= 0:
                        add(base | to)
            elif t == CANNON:
                for ray in RAYS[frm]:
                    screen = False
                    for to in ray:
                        q = b[to]
                        if screen:
                            if q:
                                if q * s < 0:  # 炮打隔子: capture by jumping exactly one piece
                                    add(base | to)
                                break
                        elif q:
                            screen = True
                        else:
                            add(base | to)
            elif t == ELEPHANT:
                for to, eye in elephant[frm]:
                    if not b[eye] and b[to] * s <= 0:
                        add(base | to)
            elif t == ADVISOR:
                for to in advisor[frm]:
                    if b[to] * s <= 0:
                        add(base | to)
            else:
                for to in king[frm]:
                    if b[to] * s <= 0:
                        add(base | to)
        return out

    def _sensitive(self, k: int, s: int) -> tuple[set[int], set[int]] | None:
        """None if the king of side `s` on `k` is in check; else the squares whose change may expose it.

        A non-king move changes the occupancy of two points only: it empties `frm` and fills `to` (a capture
        leaves `to` occupied). So it can expose the king only by emptying the sole blocker between the king and a
        rook or the other king, one of exactly two pieces between the king and a cannon, or the leg of a horse
        aimed at the king; or by filling a point between the king and a cannon with nothing between (a screen).
        Those moves (returned as from-squares and to-squares) are tried on the board; all others are legal.
        The same walk from the king finds a check (3.1), so no separate attack test is needed.
        """
        b = self.b
        rook, cannon, horse, king = -ROOK * s, -CANNON * s, -HORSE * s, -KING * s
        sfrom: set[int] = set()
        sto: set[int] = set()
        for ray in RAYS[k]:
            first = second = -1
            i = -1
            for t in ray:
                i += 1
                p = b[t]
                if not p:
                    continue
                if first < 0:
                    if p == rook or p == king:  # noqa: SIM109 (hot path: no tuple built per test)
                        return None
                    first = i
                    if p == cannon:  # no screen yet: a piece landing in between would be one
                        sto.update(ray[:i])
                elif second < 0:
                    if p == cannon:
                        return None
                    second = i
                    if p == rook or p == king:  # noqa: SIM109
                        sfrom.add(ray[first])
                        break
                else:
                    if p == cannon:
                        sfrom.add(ray[first])
                        sfrom.add(ray[second])
                    break
        for h, leg in HORSE_ATTACKERS[k]:
            if b[h] == horse:
                if not b[leg]:
                    return None
                sfrom.add(leg)
        pawn = -PAWN * s
        for t in PAWN_ATTACKERS[-s][k]:
            if b[t] == pawn:
                return None
        return sfrom, sto

    def _safe_after(self, m: int, k: int, s: int) -> bool:
        frm = m >> 7
        to = m & 127
        b = self.b
        p = b[frm]
        cap = b[to]
        b[to] = p
        b[frm] = 0
        safe = not _attacked(b, to if frm == k else k, s)
        b[frm] = p
        b[to] = cap
        return safe

    def legal_moves(self, only: int | None = None) -> list[int]:
        """Every legal move (2.2 and 3.4: none may leave the own king attacked or facing the other king); `only`:
        those of the side to move's piece on that square."""
        s = self.side
        k = self.kings[0 if s == RED else 1]
        moves = self.pseudo_moves(only)
        safe = self._safe_after
        sens = self._sensitive(k, s)
        if sens is None:  # in check: every move must answer it
            return [m for m in moves if safe(m, k, s)]
        sfrom, sto = sens
        sfrom.add(k)
        return [m for m in moves if (m >> 7 not in sfrom and m & 127 not in sto) or safe(m, k, s)]

    def has_legal_move(self) -> bool:
        """Whether any legal move exists (4.1.1, 4.1.2). Position.has_legal_move first tries the king's and the
        advisors' steps, which answer nearly every position; what is left comes here."""
        return bool(self.legal_moves())

    def count_legal(self) -> int:
        """len(legal_moves()), for perft's bulk counting at the leaves."""
        s = self.side
        k = self.kings[0 if s == RED else 1]
        moves = self.pseudo_moves()
        safe = self._safe_after
        sens = self._sensitive(k, s)
        if sens is None:
            return sum(1 for m in moves if safe(m, k, s))
        sfrom, sto = sens
        sfrom.add(k)
        n = len(moves)
        for m in moves:
            if (m >> 7 in sfrom or m & 127 in sto) and not safe(m, k, s):
                n -= 1
        return n

    def perft(self, depth: int) -> int:
        """Number of leaf nodes of the legal move tree `depth` plies deep (bulk-counted at the last ply)."""
        if depth <= 0:
            return 1
        if depth == 1:
            return self.count_legal()
        n = 0
        make, unmake, perft = self.make, self.unmake, self.perft
        for m in self.legal_moves():
            make(m)
            n += perft(depth - 1)
            unmake()
        return n


def _attacked(b: list[int], k: int, s: int) -> bool:
    rook, cannon, king = -ROOK * s, -CANNON * s, -KING * s
    for ray in RAYS[k]:
        screen = False
        for t in ray:
            p = b[t]
            if p:
                if screen:
                    if p == cannon:
                        return True
                    break
                if p == rook or p == king:  # noqa: SIM109  2.2: kings may not face each other on an open file
                    return True
                screen = True
    horse = -HORSE * s
    for h, leg in HORSE_ATTACKERS[k]:
        if b[h] == horse and not b[leg]:
            return True
    pawn = -PAWN * s
    return any(b[t] == pawn for t in PAWN_ATTACKERS[-s][k])
