"""棋例: repetition cycles (循环反复), the pending position (待判局面) and its ruling. Pure: positions in, verdicts out.

Sources (seeds/003, 004: the 2011 edition, articles 24-29; the 2021 edition keeps the substance in its chapter 6):
- 24 / 2021 23 待判局面: the moves repeat a cycle three times and a player asks for a ruling.
  24.1 one-sided perpetual check (长将) loses at once (2021 4.1.4); 24.2 both allowed or both forbidden: draw
  (4.2.3); 24.3 forbidden against allowed: the forbidden side must vary, and loses if the cycle repeats once
  more (2021 4.1.5, 2011 4.1.7).
- 25.2 forbidden (禁止着法): 长将 长杀 长捉 一将一杀 一将一捉 一杀一捉; allowed (允许着法): 闲 (incl. 兑 献 拦 跟),
  数将一闲, 数杀一闲, 数捉一闲. 25.3 values: rook = 2 horses = 2 cannons = horse + cannon, horse = cannon,
  advisor = elephant, a crossed pawn floats; the king and uncrossed pawns are not "pieces" (子力).
- 26.1 one-sided perpetual check is never allowed; 26.2 both allowed: draw; 26.3 both forbidden (other than a
  one-sided perpetual check): draw; 26.4 forbidden against allowed: the forbidden side varies or loses.
- 27.1 the king's own attack is idle (other pieces chasing with or through the king chase); 27.2 a pawn's chase
  is idle unless both sides attack perpetually; 27.3 chasing an advisor or elephant incidentally, by occupying a
  key defensive point that makes a simple draw, is idle (an arbiter's judgment); 27.4 a move with several effects
  is named by the heaviest (将 over 杀 over 捉 over 闲).
- 28 terms: 将 a move attacking the king; 杀 a move intending to mate next move by a check or a series of checks;
  捉 a move after which the next move can capture an unprotected piece (无根子), directly, through a series of
  checks, or by a complete exchange; 兑 an offer to exchange equal values; 28.16 a root only in form (假根, 少根)
  counts as none.
- 29 a chase needs: capture directly / via checks / a winning exchange (29.1); the threat created by the move just
  made (29.2); a target of value that is unprotected (29.3); no mate against the capturer at once (29.4).

Article numbers: the 2011 edition to the clause; the 2021 edition by article (23 待判局面的裁定, 24 术语解释,
25 棋例总纲, 26 棋例通则, from its table of contents: the seeds do not hold the text of its chapter 6).

How the terms are decided here (what an arbiter should know when reading a verdict):
- 将: the opponent's king is attacked after the move.
- 杀: with the opponent passing, the mover could mate by checks alone within `mate_depth` of his own moves.
- 捉: with the opponent passing, some capture of a piece of value wins material: the target has no legal
  recapture that holds (a recapture that is illegal, loses more in the exchange that follows, or lets the
  recapturer be mated at once is no root: 假根), or the exchange on that point wins by 25.3's values (a horse
  attacking a protected rook). Also through one check followed by such a capture whatever the reply. The
  threat must be new (not there in the position before the move, with the mover to move: 29.2); the capture
  must not allow a mate in one (29.4); a capture by the king is idle (27.1); by a pawn idle unless mutual
  (27.2); a mutual attack of equal values where the target may take the attacker is 兑 (idle, 28.5).
- Several chases in one cycle count as 长捉 whichever pieces they aim at (28.12: "一子或数子").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from itertools import product
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # duck-typed at run time (type(position).from_fen) so the package can re-export this module
    from xqarb.referee.rules import Move, Position

Side = Literal["red", "black"]
Term = Literal["将", "杀", "捉", "闲"]
Outcome = Literal["draw", "loss", "must_vary", "judgment"]

RULESETS = ("cxa-2021", "cxa-2011")

_NAMES = {"k": "king", "a": "advisor", "b": "elephant", "n": "horse", "r": "rook", "c": "cannon", "p": "pawn"}
# 25.3 values in units of an advisor: rook = 2 horses = 2 cannons = horse + cannon; horse = cannon; advisor =
# elephant; a crossed pawn floats (counted 1 here, see Threat.pawn_exchange); the king and uncrossed pawns are not 子力.
_VALUES = {"r": 4, "n": 2, "c": 2, "a": 1, "b": 1, "p": 1, "k": 0}

# Clause references per rule set: (2021 edition, 2011 edition).
_CLAUSES = {
    "check": ("24 (术语解释: 将)", "28.1"),
    "mate": ("24 (术语解释: 杀)", "28.2"),
    "chase": ("24 (术语解释: 捉)", "28.3, 29"),
    "idle": ("24 (术语解释: 闲)", "28.9"),
    "king": ("26 (棋例通则: 帅将本身叫吃)", "27.1"),
    "pawn": ("26 (棋例通则: 兵卒捉子)", "27.2"),
    "defence": ("26 (棋例通则: 占据防守要点)", "27.3"),
    "exchange": ("24 (术语解释: 兑)", "28.5"),
    "protected": ("24 (术语解释: 有根子)", "28.16"),
    "old": ("24 (术语解释: 捉)", "29.2"),
    "mated": ("24 (术语解释: 捉)", "29.4"),
    "pawn_exchange": ("25 (棋例总纲: 子力价值)", "25.3"),
}
_RULINGS = {
    "cxa-2021": {
        "perpetual_check": "4.1.4; 23, 25",
        "both_allowed": "4.2.3; 23, 25",
        "both_forbidden": "4.2.3; 23, 25",
        "mutual_check": "4.2.3; 23, 25",
        "must_vary": "23, 25 (4.1.5 if the cycle repeats once more)",
        "not_varied": "4.1.5; 23, 25",
        "judgment": "23, 26",
    },
    "cxa-2011": {
        "perpetual_check": "24.1, 26.1",
        "both_allowed": "4.2.3; 24.2, 26.2",
        "both_forbidden": "4.2.3; 24.2, 26.3",
        "mutual_check": "4.2.3; 24.2, 26.3",
        "must_vary": "24.3, 26.4 (4.1.7 if the cycle repeats once more)",
        "not_varied": "4.1.7; 24.3, 26.4",
        "judgment": "24, 27",
    },
}


class UnknownRuleset(ValueError):
    """A rule-set name that is neither `cxa-2021` nor `cxa-2011`."""


class HistoryError(ValueError):
    """Positions and moves that do not describe one game (wrong lengths)."""


def _check_ruleset(ruleset: str) -> int:
    if ruleset not in RULESETS:
        raise UnknownRuleset(f"unknown rule set {ruleset!r}: expected one of {', '.join(RULESETS)}")
    return 0 if ruleset == "cxa-2021" else 1


def _clause(key: str, ruleset: str) -> str:
    return _CLAUSES[key][_check_ruleset(ruleset)]


# --- small board helpers on the public API ---------------------------------------------------------------------


def _side_of(letter: str) -> Side:
    return "red" if letter.isupper() else "black"


def _other(side: Side) -> Side:
    return "black" if side == "red" else "red"


def _crossed(letter: str, point: str) -> bool:
    """A pawn past the river: Red's on ranks 5-9, Black's on ranks 0-4."""
    rank = int(point[1])
    return rank >= 5 if letter.isupper() else rank <= 4


def _value(letter: str, point: str) -> int:
    """25.3: value as a target; 0 means not 子力 (the king, an uncrossed pawn) and never chased."""
    kind = letter.lower()
    if kind == "p" and not _crossed(letter, point):
        return 0
    return _VALUES[kind]


def _name(letter: str, point: str) -> str:
    return f"{_NAMES[letter.lower()]} {point}"


def _pass(position: Position) -> Position:
    """The same board with the other side to move (a "null move"), to ask what the mover threatens next."""
    fields = position.fen().split()
    fields[1] = "b" if fields[1] in ("w", "r") else "w"
    text = " ".join(fields)
    try:  # the engine's lenient form, where it has one: a position reached in a game needs no placement checks
        return type(position).from_fen(text, strict=False)  # type: ignore[call-arg]
    except TypeError:
        return type(position).from_fen(text)


class AnalysisCache:
    """Answers already worked out for positions of one game (mates in one, checking moves): only a speed-up.

    judge_repetition makes one per call; a caller judging the same game again may pass one to reuse it. It holds
    nothing but functions of the positions, so results never depend on it.
    """

    def __init__(self) -> None:
        self.mate_in_one: dict[tuple[int, str], Move | None] = {}
        self.checks: dict[tuple[int, str], list[Move]] = {}


def _ident(position: Position) -> tuple[int, str]:
    return position.key, position.squares()


_DIAGONAL = ((1, 1), (1, -1), (-1, 1), (-1, -1))
_HORSE = ((1, 2), (2, 1), (-1, 2), (-2, 1), (1, -2), (2, -1), (-1, -2), (-2, -1))


def _may_check(frm: str, to: str, mover: str, king: str) -> bool:
    """Geometry only: could this move give check to the king on `king`? Never False when it does.

    Rook, cannon, pawn and a cannon's new or lost screen act along the king's file or rank; a horse checks from a
    horse's jump away, and a horse's check is uncovered only from a point diagonally next to the king (its leg).
    """
    kf, kr = ord(king[0]), int(king[1])
    ff, fr = ord(frm[0]), int(frm[1])
    tf, tr = ord(to[0]), int(to[1])
    if ff == kf or fr == kr or tf == kf or tr == kr:
        return True
    if (ff - kf, fr - kr) in _DIAGONAL:
        return True
    return mover.lower() == "n" and (tf - kf, tr - kr) in _HORSE


def _checking_moves(position: Position, cache: AnalysisCache) -> list[Move]:
    """The legal moves of the side to move that give check."""
    ident = _ident(position)
    found = cache.checks.get(ident)
    if found is not None:
        return found
    enemy_king = "k" if position.side == "red" else "K"
    squares = position.squares()
    at = squares.index(enemy_king)
    king = f"{'abcdefghi'[at % 9]}{9 - at // 9}"
    found = []
    for m in position.legal_moves():
        mover = position.piece_at(m.frm) or ""
        if _may_check(m.frm, m.to, mover, king) and position.gives_check(m):
            found.append(m)
    cache.checks[ident] = found
    return found


def _mate_in_one(position: Position, cache: AnalysisCache) -> Move | None:
    """A move that checkmates at once, for the side to move (29.4; false roots)."""
    ident = _ident(position)
    if ident in cache.mate_in_one:
        return cache.mate_in_one[ident]
    found = None
    for m in _checking_moves(position, cache):
        if position.play(m).is_checkmate():
            found = m
            break
    cache.mate_in_one[ident] = found
    return found


def _mate_by_checks(position: Position, depth: int, cache: AnalysisCache) -> list[Move] | None:
    """28.2: a mate the side to move forces by checks alone within `depth` own moves; the line's first moves."""
    if depth <= 0:
        return None
    for m in _checking_moves(position, cache):
        nxt = position.play(m)
        replies = nxt.legal_moves()
        if not replies:
            return [m]
        if depth == 1:
            continue
        line: list[Move] | None = None
        for r in replies:
            sub = _mate_by_checks(nxt.play(r), depth - 1, cache)
            if sub is None:
                line = None
                break
            if line is None:
                line = [m, r, *sub]
        if line is not None:
            return line
    return None


def _exchange_gain(position: Position, point: str, cache: AnalysisCache, depth: int = 8) -> tuple[int, bool]:
    """What the side to move wins by capturing on `point` and the exchange that follows (it may stop: >= 0).

    Only legal captures count (a pinned protector is no root), and a capture after which the other side mates at
    once is not made (a root only in form, 28.16). Returns (gain, whether a pawn took part in the best line).
    """
    if depth <= 0:
        return 0, False
    target = position.piece_at(point)
    if target is None:
        return 0, False
    worth = _value(target, point)
    best, pawn = 0, False
    for m in position.legal_moves():
        if m.to != point:
            continue
        nxt = position.play(m)
        if _mate_in_one(nxt, cache) is not None:
            continue
        back, back_pawn = _exchange_gain(nxt, point, cache, depth - 1)
        gain = worth - back
        if gain > best:
            capturer = position.piece_at(m.frm) or ""
            best, pawn = gain, back_pawn or capturer.lower() == "p" or target.lower() == "p"
    return best, pawn


# --- the capture threats of a position --------------------------------------------------------------------------


@dataclass(frozen=True)
class Threat:
    """One capture the side to move could make on a piece of value, and what it amounts to.

    kind: `chase` (wins material: a 捉 if new), `pawn` (a pawn's chase, 27.2), `king` (the king's own, 27.1),
    `exchange` (兑, 28.5), `protected` (有根子: the exchange wins nothing), `mated` (the capturer is mated at
    once, 29.4).
    """

    kind: str
    target: str  # point of the target
    target_piece: str
    by: str  # point of the capturing piece
    by_piece: str
    net: int  # material won by 25.3's values
    unprotected: bool  # no legal recapture at all
    via_check: str | None = None  # the checking move (ICCS) when the capture comes through a check (28.3)
    pawn_exchange: bool = False  # a pawn took part in the exchange that wins: its value floats (25.3)

    false_roots: tuple[str, ...] = ()  # "e8 (would leave the king in check ...)": roots that cannot recapture

    def words(self) -> str:
        who = _name(self.by_piece, self.by)
        whom = _name(self.target_piece, self.target)
        how = f" after the check {self.via_check}" if self.via_check else ""
        if self.kind in ("chase", "pawn", "king"):
            if self.unprotected and self.false_roots:
                return (f"{who}{how} attacks {whom}, protected only in form (假根: "
                        f"{'; '.join(self.false_roots)} cannot recapture)")
            if self.unprotected:
                return f"{who}{how} attacks unprotected {whom}"
            if self.net >= _value(self.target_piece, self.target):
                return f"{who}{how} attacks {whom}, protected only in form (假根/少根: no recapture pays)"
            return f"{who}{how} attacks {whom}: protected, but the full exchange wins {self.net} (29.1, values 25.3)"
        if self.kind == "exchange":
            return f"{who} and {whom} attack each other (兑: an offer to exchange equal values)"
        if self.kind == "protected":
            return f"{who} attacks {whom}, which is protected (有根子)"
        return f"{who} could take {whom} but would then be mated at once"


def _direct_threats(
    q: Position, answer: Position | None, cache: AnalysisCache, only: Iterable[str] | None = None
) -> list[Threat]:
    """The captures of pieces of value the side to move in `q` has, classified; `answer` is the real position
    with the target's side to move (to test 兑), None where there is none."""
    wanted = set(only) if only is not None else None
    out: list[Threat] = []
    for m in q.legal_moves():
        if wanted is not None and m.to not in wanted:
            continue
        victim = q.piece_at(m.to)
        if victim is None:
            continue
        worth = _value(victim, m.to)
        if worth == 0:  # 25.3: the king and uncrossed pawns are not targets
            continue
        by = q.piece_at(m.frm)
        assert by is not None, f"legal move {m} from an empty point"
        after = q.play(m)
        recaptures = [r for r in after.legal_moves() if r.to == m.to]
        if _mate_in_one(after, cache) is not None:  # 29.4
            out.append(Threat("mated", m.to, victim, m.frm, by, 0, not recaptures))
            continue
        back, pawn_line = _exchange_gain(after, m.to, cache)
        net = worth - back
        pawn_exchange = bool(recaptures) and pawn_line
        if net <= 0:
            kind = "protected"
        elif by.lower() == "k":
            kind = "king"
        elif by.lower() == "p":
            kind = "pawn"
        elif (
            answer is not None
            and _value(by, m.frm) == worth
            and any(r.frm == m.to and r.to == m.frm for r in answer.legal_moves())
        ):
            kind = "exchange"  # 28.5: the target may take the attacker, equal for equal
        else:
            kind = "chase"
        false_roots = _false_roots(after, m.to, type(m)) if kind != "protected" and not recaptures else ()
        out.append(Threat(kind, m.to, victim, m.frm, by, net, not recaptures, None, pawn_exchange, false_roots))
    return out


# The engine's words for a move that is geometrically right but exposes the own king (3.4); used only to name a
# false root in a verdict's reason, never to decide anything.
_EXPOSURE = ("would leave the king", "does not answer the check", "kings would face")


def _false_roots(after: Position, point: str, move_type: type[Move]) -> tuple[str, ...]:
    """Pieces of the side to move in `after` that reach `point` but may not recapture there (pinned: 假根)."""
    mover = after.side
    roots = []
    for i, ch in enumerate(after.squares()):
        if ch == "." or _side_of(ch) != mover:
            continue
        frm = f"{'abcdefghi'[i % 9]}{9 - i // 9}"
        why = after.illegal_reason(move_type(frm, point))
        if why and why.startswith(_EXPOSURE):
            roots.append(f"{_name(ch, frm)} ({why})")
    return tuple(roots)


def threats(
    q: Position, answer: Position | None = None, check_depth: int = 1, cache: AnalysisCache | None = None
) -> list[Threat]:
    """Every capture threat of the side to move in `q`: direct ones, and (28.3) wins of a piece through one
    check whatever the reply (`check_depth` 1; 0 turns that off: longer series of checks are not searched).
    `answer`: see `_direct_threats`."""
    if check_depth not in (0, 1):
        raise ValueError(f"check_depth is 0 (direct captures only) or 1 (also through one check), got {check_depth}")
    cache = cache if cache is not None else AnalysisCache()
    found = _direct_threats(q, answer, cache)
    if check_depth <= 0:
        return found
    direct_wins = {t.target for t in found if t.kind in ("chase", "pawn")}
    for c in _checking_moves(q, cache):
        after_check = q.play(c)
        replies = after_check.legal_moves()
        if not replies:  # a mate, not a chase: the 杀 test sees it
            continue
        # Targets that survive every reply as winnable captures; follow a target that moves in the reply. The
        # line's whole balance must win: what the check takes, less what the reply takes back, plus the capture.
        taken = q.captured_by(c)
        check_gain = _value(taken, c.to) if taken else 0
        common: dict[str, tuple[Threat, int]] | None = None
        for r in replies:
            lost_piece = after_check.captured_by(r)
            lost = _value(lost_piece, r.to) if lost_piece else 0
            wins = {
                t.target: t
                for t in _direct_threats(after_check.play(r), None, cache)
                if t.kind == "chase" and t.by_piece.lower() not in ("k", "p")
            }
            mapped: dict[str, tuple[Threat, int]] = {}
            for origin in common if common is not None else _opponent_points(q):
                now = r.to if r.frm == origin else origin
                if now in wins and check_gain - lost + wins[now].net > 0:
                    balance = check_gain - lost + wins[now].net
                    mapped[origin] = (wins[now], min(balance, common[origin][1]) if common else balance)
            common = mapped
            if not common:
                break
        for origin, (t, balance) in (common or {}).items():
            if origin in direct_wins:
                continue
            piece = q.piece_at(origin)
            assert piece is not None
            found.append(Threat("chase", origin, piece, t.by, t.by_piece, balance, t.unprotected, c.iccs,
                                t.pawn_exchange))
            direct_wins.add(origin)
    return found


def _opponent_points(q: Position) -> list[str]:
    """Points of the pieces of value of the side not to move in `q`."""
    squares = q.squares()
    mover = q.side
    out = []
    for i, ch in enumerate(squares):
        if ch == "." or _side_of(ch) == mover:
            continue
        point = f"{'abcdefghi'[i % 9]}{9 - i // 9}"
        if _value(ch, point):
            out.append(point)
    return out


# --- classifying one move ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MoveClass:
    """One move of a cycle named as the 棋例 name it (28): 将, 杀, 捉 or 闲, with the reason in words.

    `pawn_chase`: the move's only chase is a pawn's (27.2): idle unless both sides attack perpetually, which the
    ruling decides. `alt_term` / `alt_reason`: what the move is under another reading the rules leave to the
    arbiter (27.3, a pawn's floating value in an exchange), None when there is none.
    """

    ply: int
    side: Side
    move: str
    term: Term
    reason: str
    article: str
    targets: tuple[str, ...] = ()
    pawn_chase: bool = False
    alt_term: Term | None = None
    alt_reason: str | None = None

    def as_dict(self) -> dict[str, object]:
        return {
            "ply": self.ply, "side": self.side, "move": self.move, "term": self.term, "reason": self.reason,
            "article": self.article, "targets": list(self.targets), "pawn_chase": self.pawn_chase,
            "alt_term": self.alt_term, "alt_reason": self.alt_reason,
        }


def _material(position: Position, side: Side) -> int:
    """25.3 values of a side's pieces (kings and uncrossed pawns count nothing)."""
    total = 0
    for i, ch in enumerate(position.squares()):
        if ch != "." and _side_of(ch) == side:
            total += _value(ch, f"{'abcdefghi'[i % 9]}{9 - i // 9}")
    return total


def _may_be_defending(position: Position, side: Side) -> bool:
    """Whether `side` could be the defender of a simple ending (27.3): less material, or equal material with at
    most one rook, horse or cannon on each side."""
    mine, theirs = _material(position, side), _material(position, _other(side))
    if mine != theirs:
        return mine < theirs
    strong = {"red": 0, "black": 0}
    for ch in position.squares():
        if ch.lower() in "rnc" and ch != ".":
            strong[_side_of(ch)] += 1
    return strong["red"] <= 1 and strong["black"] <= 1


def _old_threats(
    before: Position, previous: Position | None, check_depth: int, cache: AnalysisCache
) -> set[str]:
    """29.2: targets the mover could already win before this move.

    When the opponent's last move gave check, the mover could not take anything then, yet an attack that stood
    before that check is not one this move creates: `previous` (the position before the opponent's last move)
    supplies those, for targets still on the same point.
    """
    # The same board with the opponent to move tells whether a target could take its attacker back (兑).
    answer = None
    if not before.in_check():
        try:
            answer = _pass(before)
        except ValueError:  # the engine refuses the passed position: judge 兑 without it
            answer = None
    old = {t.target for t in threats(before, answer, check_depth, cache) if t.kind in ("chase", "pawn")}
    if previous is not None and before.in_check() and not previous.in_check():
        try:
            earlier = _pass(previous)
        except ValueError:  # the engine refuses the passed position: nothing earlier to compare with
            return old
        for t in threats(earlier, previous, check_depth, cache):
            if t.kind in ("chase", "pawn") and before.piece_at(t.target) == t.target_piece:
                old.add(t.target)
    return old


def classify_move(
    before: Position, move: Move, *, ruleset: str = "cxa-2021", ply: int = 0, mate_depth: int = 3,
    check_depth: int = 1, previous: Position | None = None, cache: AnalysisCache | None = None,
) -> MoveClass:
    """Name one move (28, 29, 27): 将 > 杀 > 捉 > 闲 (27.4). `before` is the position the move is played from;
    `previous`, where known, the one before the opponent's last move (for 29.2 after a check, see _old_threats)."""
    _check_ruleset(ruleset)
    cache = cache if cache is not None else AnalysisCache()
    side: Side = before.side
    mover = before.piece_at(move.frm)
    if mover is None:
        raise ValueError(f"no piece on {move.frm} to play {move.iccs}")
    after = before.play(move)
    what = f"{_NAMES[mover.lower()]} {move.frm}-{move.to}"
    enemy = "black" if side == "red" else "red"
    if after.in_check():
        return MoveClass(ply, side, move.iccs, "将", f"将: {what} checks the {enemy} king",
                         _clause("check", ruleset))
    threat_pos = _pass(after)  # the mover to move again: what does the move threaten?
    line = None
    for depth in range(1, mate_depth + 1):  # the shortest mate, so the reason shows the plainest line
        line = _mate_by_checks(threat_pos, depth, cache)
        if line is not None:
            break
    # 29.2's principle for 杀 as for 捉: a mate the mover could already force before this move is not a threat
    # the move makes (a real 长杀 cycle always meets this: the opponent's last move had parried the threat).
    standing = line is not None and _mate_by_checks(before, mate_depth, cache) is not None
    if standing:
        line = None
    new = threats(threat_pos, after, check_depth, cache)
    # 29.2: only threats the move created; the same capture threats were not there before it.
    old = _old_threats(before, previous, check_depth, cache)
    chases = [t for t in new if t.kind == "chase" and t.target not in old]
    pawns = [t for t in new if t.kind == "pawn" and t.target not in old]
    if line is not None:
        moves_words = " ".join(m.iccs for m in line)
        extra = f"; it also chases {', '.join(t.words() for t in chases)}" if chases else ""
        return MoveClass(ply, side, move.iccs, "杀",
                         f"杀: after {what}, {side} threatens mate by checks ({moves_words}){extra}",
                         _clause("mate", ruleset), tuple(t.target for t in chases))
    if chases:
        words = "; ".join(t.words() for t in chases)
        targets = tuple(dict.fromkeys(t.target for t in chases))
        alt_term: Term | None = None
        alt_reason = None
        # 27.3 can only apply where the chaser may be the defending side of a simple ending: chasing advisors
        # or elephants only, with less material (25.3 values) than the side chased, or as much in an ending of
        # at most one rook, horse or cannon a side. Then it is the arbiter's call.
        if all(t.target_piece.lower() in ("a", "b") for t in chases) and _may_be_defending(after, side):
            alt_term = "闲"
            alt_reason = (f"闲 if the arbiter finds {what} occupies a key defensive point that makes a simple draw "
                          f"and the chase of the advisor/elephant is incidental ({_clause('defence', ruleset)})")
        elif all(t.pawn_exchange for t in chases):
            alt_term = "闲"
            alt_reason = (f"闲 if the arbiter does not count the exchange involving a pawn as winning material "
                          f"(a pawn's value floats, {_clause('pawn_exchange', ruleset)})")
        return MoveClass(ply, side, move.iccs, "捉", f"捉: {words}", _clause("chase", ruleset), targets,
                         False, alt_term, alt_reason)
    notes: list[str] = []
    article = _clause("idle", ruleset)
    if pawns:
        notes.append("; ".join(t.words() for t in pawns) + f" (a pawn's chase is idle unless both sides attack "
                     f"perpetually, {_clause('pawn', ruleset)})")
        article = _clause("pawn", ruleset)
    for t in new:
        if t.kind == "king" and t.target not in old:
            notes.append(f"{t.words()} (the king's own attack is idle, {_clause('king', ruleset)})")
        elif t.kind == "exchange" and t.target not in old:
            notes.append(f"{t.words()} ({_clause('exchange', ruleset)})")
        elif t.kind == "mated" and t.target not in old:
            notes.append(f"{t.words()} ({_clause('mated', ruleset)})")
    stale = [t for t in new if t.kind in ("chase", "pawn") and t.target in old]
    for t in stale:
        notes.append(f"{t.words()}, but that threat was there before this move ({_clause('old', ruleset)})")
    reason = "闲: " + ("; ".join(notes) if notes else f"{what} neither checks, threatens mate nor chases")
    return MoveClass(ply, side, move.iccs, "闲", reason, article, tuple(t.target for t in pawns), bool(pawns))


# --- cycles ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cycle:
    """The repetition ending at the last position.

    The last position occurred `occurrences` times (with the same side to move). `strict`: the moves between
    the occurrences repeat exactly (every position repeats `length` plies earlier, from ply `stretch_start`);
    then the moves judged are the last cycle, `moves[start:end]`, `length` plies. Not strict (the same position
    came back by different moves): the moves judged are all of them from the `min_occurrences`-th last
    occurrence on, and `length` is that span.
    """

    start: int
    end: int
    length: int
    occurrences: int
    stretch_start: int
    strict: bool = True


def _same(a: Position, b: Position) -> bool:
    return a.key == b.key and a.side == b.side and a.squares() == b.squares()


def find_cycle(positions: Sequence[Position], min_occurrences: int = 3) -> Cycle | None:
    """The repetition that brought the last position back for the `min_occurrences`-th time (or more), or None.

    Three occurrences of the same position with the same side to move is the pending position (待判局面) as
    counted here, as Fairy-Stockfish (pyffish) counts it for xiangqi. The rules speak of the moves repeating
    (24: "着法循环反复"); a repetition by different moves is still found, marked `strict=False`.
    """
    n = len(positions)
    if n < 5 or min_occurrences < 2:
        return None
    last = positions[-1]
    keys = [p.key for p in positions]
    seen = [n - 1]
    for i in range(n - 5, -1, -2):  # same side to move: an even distance; each side moves twice to come back
        if keys[i] == last.key and _same(positions[i], last):
            seen.append(i)
    if len(seen) < min_occurrences:
        return None
    length = seen[0] - seen[1]  # the last return: the shortest period through the position now
    stretch = 0  # plies, counted back from the end, that repeat `length` plies earlier
    while n - 1 - stretch - length >= 0 and keys[n - 1 - stretch] == keys[n - 1 - stretch - length]:
        stretch += 1
    strict_occurrences = 2 + (stretch - 1) // length
    end = n - 1  # index of the last move + 1
    if strict_occurrences >= min_occurrences:
        return Cycle(end - length, end, length, len(seen), n - stretch - length, True)
    first = seen[min_occurrences - 1]
    return Cycle(first, end, end - first, len(seen), first, False)


# --- the ruling ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RepetitionVerdict:
    """The ruling on a pending position (待判局面), with every move of the cycle named so an arbiter sees why.

    outcome: `draw`; `loss` (for `side`); `must_vary` (`side` must change its move, 26.4); `judgment` (the rules
    leave this to the arbiter: `reason` says what is open and what each reading would give).
    `patterns` name each side's moves (长将, 长捉, 一将一捉, 闲 ...); `forbidden` says which sides make
    禁止着法 (25.2). `article` is in the numbering of `ruleset`.
    """

    ruleset: str
    cycle: Cycle
    moves: tuple[MoveClass, ...]
    patterns: dict[str, str]
    forbidden: dict[str, bool]
    outcome: Outcome
    side: Side | None
    article: str
    reason: str
    notes: tuple[str, ...] = field(default_factory=tuple)
    # 23.2 (2011; 2021 22, 提和的裁定): a drawn repetition that goes on past three times may be ruled a draw by
    # the arbiter though nobody claims it.
    unclaimed_draw: bool = False

    @property
    def result(self) -> str | None:
        """The game result this verdict ends the game with (`1-0`, `0-1`, `1/2-1/2`), None if it goes on."""
        if self.outcome == "draw":
            return "1/2-1/2"
        if self.outcome == "loss":
            return "0-1" if self.side == "red" else "1-0"
        return None

    def as_dict(self) -> dict[str, object]:
        return {
            "ruleset": self.ruleset, "cycle_plies": self.cycle.length, "cycle_start": self.cycle.start,
            "occurrences": self.cycle.occurrences, "moves": [m.as_dict() for m in self.moves],
            "patterns": dict(self.patterns), "forbidden": dict(self.forbidden), "outcome": self.outcome,
            "side": self.side, "article": self.article, "reason": self.reason, "notes": list(self.notes),
            "unclaimed_draw": self.unclaimed_draw,
        }


def _pattern(terms: Sequence[Term]) -> str:
    """25.2's names for one side's moves in the cycle."""
    kinds = set(terms)
    if kinds == {"闲"}:
        return "闲"
    if "闲" in kinds:  # allowed: 数将一闲, 数杀一闲, 数捉一闲 and the like
        counts = "".join(f"{terms.count(t)}{t}" for t in ("将", "杀", "捉", "闲") if t in kinds)
        return f"{counts} (允许着法)"
    single = {"将": "长将", "杀": "长杀", "捉": "长捉"}
    if len(kinds) == 1:
        return single[terms[0]]
    pairs = {
        frozenset({"将", "杀"}): "一将一杀",
        frozenset({"将", "捉"}): "一将一捉",
        frozenset({"杀", "捉"}): "一杀一捉",
    }
    return pairs.get(frozenset(kinds), "将杀捉交替")


def pattern_of(terms: Sequence[Term]) -> str:
    """25.2's name for one side's moves in a cycle (长将, 长捉, 一将一捉, 闲, 2捉1闲 (允许着法) ...)."""
    return _pattern(terms)


def _effective_terms(classes: Sequence[MoveClass], alts: frozenset[int]) -> tuple[dict[str, list[Term]], bool]:
    """Each side's terms under one reading (the moves in `alts` take their alternative), with 27.2 applied:
    pawn chases count as 捉 only when both sides then attack at every move (相互长打)."""
    plain: dict[str, list[Term]] = {"red": [], "black": []}
    counted: dict[str, list[Term]] = {"red": [], "black": []}
    for i, mc in enumerate(classes):
        term: Term = mc.alt_term if (i in alts and mc.alt_term is not None) else mc.term
        plain[mc.side].append(term)
        counted[mc.side].append("捉" if (mc.pawn_chase and term == "闲") else term)
    mutual = all("闲" not in counted[s] for s in ("red", "black"))
    pawn_counts = mutual and any(mc.pawn_chase for mc in classes)
    return (counted if mutual else plain), pawn_counts


def ruling_for_terms(
    terms: dict[str, Sequence[Term]], ruleset: str = "cxa-2021"
) -> tuple[Outcome, Side | None, str, str]:
    """24 / 26 on each side's terms in a cycle ({"red": [...], "black": [...]}): (outcome, side, article, reason).

    27.2's pawn rule and the readings left to the arbiter are applied by judge_repetition, not here.
    """
    _check_ruleset(ruleset)
    return _rule({s: list(terms[s]) for s in ("red", "black")}, ruleset)


def _rule(terms: dict[str, list[Term]], ruleset: str) -> tuple[Outcome, Side | None, str, str]:
    """24 / 26: (outcome, side, article, reason) for the sides' terms."""
    arts = _RULINGS[ruleset]
    check = {s: bool(terms[s]) and all(t == "将" for t in terms[s]) for s in ("red", "black")}
    forbidden = {s: bool(terms[s]) and "闲" not in terms[s] for s in ("red", "black")}
    if check["red"] and check["black"]:
        return "draw", None, arts["mutual_check"], "both sides check perpetually: not one-sided, draw"
    for s in ("red", "black"):
        if check[s]:
            return ("loss", s, arts["perpetual_check"],
                    f"{s} checks perpetually (单方长将), which is never allowed: {s} loses")
    if forbidden["red"] and forbidden["black"]:
        return "draw", None, arts["both_forbidden"], "both sides make forbidden moves (长打对长打): draw"
    if not forbidden["red"] and not forbidden["black"]:
        return "draw", None, arts["both_allowed"], "both sides make allowed moves: draw (不变作和)"
    s = "red" if forbidden["red"] else "black"
    return ("must_vary", s, arts["must_vary"],
            f"{s} makes forbidden moves ({_pattern(terms[s])}) against allowed ones: {s} must vary")


def ruling_article(ruling: str, ruleset: str = "cxa-2021") -> str:
    """The articles of one of 24 / 26's rulings in the numbering of `ruleset`: `perpetual_check`, `both_allowed`,
    `both_forbidden`, `mutual_check`, `must_vary`, `not_varied` or `judgment`."""
    arts = _RULINGS[RULESETS[_check_ruleset(ruleset)]]
    if ruling not in arts:
        raise ValueError(f"no ruling {ruling!r}: expected one of {', '.join(arts)}")
    return arts[ruling]


def repeated_after_order(cycle: Cycle, vary_order: tuple[Side, int], moves_now: int) -> bool:
    """26.4 / 24.3: whether the side told to vary at ply `at` (vary_order = (side, at)) has since played the
    cycle once more without varying: the cycle's repeating stretch began no later than the order and a whole
    cycle's plies have been played since it (`moves_now`: the moves of the game so far)."""
    _, at = vary_order
    return cycle.stretch_start <= at and moves_now - at >= cycle.length


def judge_repetition(
    positions: Sequence[Position],
    moves: Sequence[Move],
    ruleset: str = "cxa-2021",
    *,
    min_occurrences: int = 3,
    vary_order: tuple[Side, int] | None = None,
    mate_depth: int = 3,
    check_depth: int = 1,
) -> RepetitionVerdict | None:
    """Judge the pending position at the end of a game, or None when the last position is not one.

    `mate_depth`: how many own checking moves the 杀 search looks through (3: mates in up to five plies);
    `check_depth`: 1 also finds a chase through one check (28.3), 0 only direct captures.

    `positions[i]` is the position before `moves[i]`, `positions[-1]` the position now. `vary_order`: an earlier
    `must_vary` ruling on this cycle, as (side, len(moves) when it was given): if that side has since played the
    cycle once more without varying, the verdict is its loss (4.1.5 / 2011 4.1.7).
    """
    _check_ruleset(ruleset)
    if len(positions) != len(moves) + 1:
        raise HistoryError(
            f"need one more position than moves (the position before each move and the one now), "
            f"got {len(positions)} positions and {len(moves)} moves"
        )
    cycle = find_cycle(positions, min_occurrences)
    if cycle is None:
        return None
    for i in range(cycle.start, cycle.end):  # the moves judged must be the ones that led from position to position
        if not _same(positions[i].play(moves[i]), positions[i + 1]):
            raise HistoryError(f"move {i} ({moves[i].iccs}) does not lead from positions[{i}] to positions[{i + 1}]")
    cache = AnalysisCache()
    classes = tuple(
        classify_move(positions[i], moves[i], ruleset=ruleset, ply=i, mate_depth=mate_depth,
                      check_depth=check_depth, previous=positions[i - 1] if i > 0 else None, cache=cache)
        for i in range(cycle.start, cycle.end)
    )
    primary, pawn_counts = _effective_terms(classes, frozenset())
    outcome, side, article, reason = _rule(primary, ruleset)
    notes: list[str] = []
    if not cycle.strict:
        notes.append(f"the position came back {cycle.occurrences} times by different moves: every move of the last "
                     f"{cycle.length} plies is judged; the arbiter should confirm it is one repetition (24)")
    if pawn_counts:
        notes.append(f"both sides attack at every move, so the pawns' chases count as 捉 ({_clause('pawn', ruleset)})")
        classes = tuple(
            replace(mc, term="捉", reason="捉 (mutual perpetual attack): " + mc.reason.removeprefix("闲: "),
                    article=_clause("pawn", ruleset))
            if mc.pawn_chase and mc.term == "闲" else mc
            for mc in classes
        )
    # Readings the rules leave open (27.3, a pawn's floating value): if any changes the ruling, it is judgment.
    open_moves = [i for i, mc in enumerate(classes) if mc.alt_term is not None]
    readings = (
        [frozenset(i for i, on in zip(open_moves, bits, strict=True) if on)
         for bits in product((False, True), repeat=len(open_moves))]
        if len(open_moves) <= 8 else [frozenset(open_moves)]
    )
    differing = []
    for alts in readings:
        if not alts:
            continue
        terms, _ = _effective_terms(classes, alts)
        alt_outcome, alt_side, _, alt_reason = _rule(terms, ruleset)
        if (alt_outcome, alt_side) != (outcome, side):
            differing.append((alts, alt_outcome, alt_side, alt_reason))
    patterns = {s: _pattern(primary[s]) for s in ("red", "black")}
    forbidden = {s: bool(primary[s]) and "闲" not in primary[s] for s in ("red", "black")}
    if differing:
        alts, alt_outcome, alt_side, alt_reason = max(differing, key=lambda d: len(d[0]))
        open_words = "; ".join(f"move {classes[i].move} ({classes[i].side}): {classes[i].alt_reason}"
                               for i in sorted(alts))
        return RepetitionVerdict(
            ruleset, cycle, classes, patterns, forbidden, "judgment", None, _RULINGS[ruleset]["judgment"],
            f"the arbiter must judge: as classified, {reason} ({article}); but {open_words}, and then "
            f"{alt_reason}",
            tuple(notes),
        )
    if outcome == "must_vary" and vary_order is not None:
        told, at = vary_order
        # 26.4 / 24.3: told to vary at ply `at`, the same side played the cycle once more within the same stretch.
        if told == side and repeated_after_order(cycle, vary_order, len(moves)):
            return RepetitionVerdict(
                ruleset, cycle, classes, patterns, forbidden, "loss", side, _RULINGS[ruleset]["not_varied"],
                f"{side} was told to vary at ply {at} and repeated the cycle once more: {side} loses",
                tuple(notes),
            )
    unclaimed = outcome == "draw" and cycle.occurrences > min_occurrences
    if unclaimed:
        where = "22 (提和的裁定)" if ruleset == "cxa-2021" else "23.2"
        notes.append(f"the repetition goes on past {min_occurrences} times: the arbiter may rule the draw though "
                     f"nobody claims it ({where})")
    return RepetitionVerdict(ruleset, cycle, classes, patterns, forbidden, outcome, side, article, reason,
                             tuple(notes), unclaimed)


def alert_words(verdict: RepetitionVerdict) -> str:
    """An arbiter's alert on a cycle found live (23.2: the arbiter steps in unasked): how often the position came
    round, each side's moves named (25.2, 28) and the ruling the cycle points to, with its articles."""
    c = verdict.cycle
    sides = []
    for s in ("red", "black"):
        named = ", ".join(f"{m.move} {m.term}" for m in verdict.moves if m.side == s)
        sides.append(f"{s} {verdict.patterns.get(s, '')} ({named})")
    return (f"repetition (循环反复): the position has come round {c.occurrences} times in a {c.length}-ply cycle; "
            f"{'; '.join(sides)}. The ruling it points to: {verdict.reason} ({verdict.article})")
