"""The natural move limit (自然限着) and insufficient material (双方均无取胜可能): pure functions on positions.

Sources: 2021 edition 4.2.4 (60 consecutive rounds without a capture is a draw; the event may lower it), 4.1.11,
8.1.4; 2011 edition 4.2.4 and 23.3 ("审核回合时，提出方对非提出方'将军'的着数，最多只计10着": when the rounds are
counted, the claimant's checks on the other side count at most 10); the national league's rapid play-off rules
("加赛采用50回合自然限着，'将军'数计8着": 50 rounds, checks counted up to 8).

Nothing here reads a clock or the outside world: the referee passes the game's positions and moves and decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # the engine's types; only duck-typed at run time so that this module never imports in a cycle
    from xqarb.referee.rules import Move, Position

Side = Literal["red", "black"]

RULESETS = ("cxa-2021", "cxa-2011")


class UnknownRuleset(ValueError):
    """A rule-set name that is neither `cxa-2021` nor `cxa-2011`."""


class HistoryError(ValueError):
    """Positions and moves that do not describe one game (wrong lengths, a move that does not lead on)."""


@dataclass(frozen=True)
class NaturalLimitRule:
    """The configured limit: `rounds` without a capture, of which at most `checks_cap` claimant checks count."""

    ruleset: str
    rapid: bool
    rounds: int
    checks_cap: int
    article: str


def natural_limit_rule(
    ruleset: str = "cxa-2021", rapid: bool = False, rounds: int | None = None, checks_cap: int | None = None
) -> NaturalLimitRule:
    """The rule of a rule set: 60 rounds and 10 checks (4.2.4, 23.3); rapid play-off 50 and 8; both configurable.

    `rounds` lowers the limit for an event (4.2.4: "可根据比赛等级酌减"); `checks_cap` overrides the checks counted.
    """
    if ruleset not in RULESETS:
        raise UnknownRuleset(f"unknown rule set {ruleset!r}: expected one of {', '.join(RULESETS)}")
    default_rounds, default_cap = (50, 8) if rapid else (60, 10)
    r = default_rounds if rounds is None else rounds
    c = default_cap if checks_cap is None else checks_cap
    if r <= 0 or c < 0:
        raise ValueError(f"natural limit needs rounds > 0 and checks_cap >= 0, got rounds={r}, checks_cap={c}")
    # 2021: 4.2.4 (draw), 8.1.4 (false claim is a foul), 4.1.11 (second false claim in one stage loses);
    # 2011: 4.2.4, 23.3 (the check cap and the 5 minutes), 9.1.4.
    if ruleset == "cxa-2021":
        article = "4.2.4; 8.1.4, 4.1.11 for a false claim"
    else:
        article = "4.2.4, 23.3; 9.1.4 for a false claim"
    if rapid:
        article += " (rapid play-off rules: 50 rounds, 8 checks)"
    return NaturalLimitRule(ruleset=ruleset, rapid=rapid, rounds=r, checks_cap=c, article=article)


@dataclass(frozen=True)
class NaturalLimitCount:
    """How many rounds count toward the natural move limit at the end of a history, and why.

    `plies` are the half-moves since the last capture (including `unverified_plies` carried in the start FEN's
    halfmove field, whose checks nobody can see); `rounds = plies // 2`; `discounted_rounds` are rounds whose
    check is beyond the cap (23.3); `counted_rounds = rounds - discounted_rounds`; `reached` is
    `counted_rounds >= limit`. `stage_start` is the index in `moves` of the first move after the last capture
    (0 when the history holds none): the "stage" (阶段) of 4.1.11.
    """

    rule: NaturalLimitRule
    claimant: Side | None
    plies: int
    unverified_plies: int
    rounds: int
    checks: dict[str, int]
    discounted_rounds: int
    counted_rounds: int
    stage_start: int
    reached: bool
    reason: str

    @property
    def limit(self) -> int:
        return self.rule.rounds


def _other(side: Side) -> Side:
    return "black" if side == "red" else "red"


def natural_limit_count(
    positions: Sequence[Position],
    moves: Sequence[Move],
    claimant: Side | None = None,
    *,
    ruleset: str = "cxa-2021",
    rapid: bool = False,
    rounds: int | None = None,
    checks_cap: int | None = None,
) -> NaturalLimitCount:
    """Count the rounds without a capture at the end of a game, for a claim (23.3) or the arbiter's own check.

    `positions[i]` is the position before `moves[i]`; `positions[-1]` the position now (len(positions) ==
    len(moves) + 1). With a `claimant`, only that side's checks are capped (23.3 speaks of the claimant's checks
    on the other side): each check beyond the cap makes its round not count. Without a claimant (the arbiter
    checking on his own, 23.3 last sentence) both sides' excess checks are discounted, each on its own: that
    may discount a round twice when both sides checked in it, so it never declares the limit early.
    """
    rule = natural_limit_rule(ruleset, rapid, rounds, checks_cap)
    if len(positions) != len(moves) + 1:
        raise HistoryError(
            f"need one more position than moves (the position before each move and the one now), "
            f"got {len(positions)} positions and {len(moves)} moves"
        )
    if claimant is not None and claimant not in ("red", "black"):
        raise ValueError(f"claimant must be 'red' or 'black', got {claimant!r}")
    # Walk back from the end to the last capture: a capture resets the count (4.2.4: "均未吃过棋子").
    stage_start = 0
    for i in range(len(moves) - 1, -1, -1):
        if positions[i].captured_by(moves[i]) is not None:
            stage_start = i + 1
            break
    else:
        stage_start = 0
    # With no capture in the history, the start FEN's halfmove counter carries plies played before it.
    unverified = positions[0].plies_since_capture if stage_start == 0 else 0
    checks: dict[str, int] = {"red": 0, "black": 0}
    for i in range(stage_start, len(moves)):
        if positions[i].gives_check(moves[i]):
            checks[positions[i].side] += 1
    plies = unverified + (len(moves) - stage_start)
    total_rounds = plies // 2
    if claimant is not None:
        discounted = max(0, checks[claimant] - rule.checks_cap)
    else:
        discounted = sum(max(0, n - rule.checks_cap) for n in checks.values())
    counted = max(0, total_rounds - discounted)
    reached = counted >= rule.rounds
    parts = [f"{plies} plies ({total_rounds} rounds) without a capture"]
    if stage_start:
        parts[0] += f" since move {stage_start} (the last capture)"
    if unverified:
        parts.append(f"{unverified} of them before the recorded moves (start FEN), their checks not seen")
    if claimant is not None:
        parts.append(
            f"{claimant} (claimant) gave {checks[claimant]} checks, at most {rule.checks_cap} count"
            + (f": {discounted} rounds not counted" if discounted else "")
        )
        parts.append(f"{_other(claimant)} gave {checks[_other(claimant)]} checks (not capped)")
    else:
        parts.append(
            f"checks red {checks['red']}, black {checks['black']}, at most {rule.checks_cap} each count"
            + (f": {discounted} rounds not counted" if discounted else "")
        )
    parts.append(
        f"{counted} of {rule.rounds} rounds count: "
        + ("the natural move limit is reached (draw)" if reached else "the limit is not reached")
    )
    return NaturalLimitCount(
        rule=rule,
        claimant=claimant,
        plies=plies,
        unverified_plies=unverified,
        rounds=total_rounds,
        checks=checks,
        discounted_rounds=discounted,
        counted_rounds=counted,
        stage_start=stage_start,
        reached=reached,
        reason="; ".join(parts) + f" ({rule.ruleset} {rule.article})",
    )


# --- insufficient material (4.2.2: 双方均无取胜可能的简单局势) -------------------------------------------------------
# Deliberately narrow: the system only says "no side can win" where no arbiter could disagree; 4.2.2 draws are
# otherwise the arbiter's to confirm. A side can only ever mate with a rook, horse, cannon or pawn: advisors and
# elephants never leave their own half (elephants) or palace (advisors), so they cannot attack the other king,
# and the kings cannot attack each other (flying general is a move the facing rule forbids, 2.2). So a board with
# kings, advisors and elephants only is a draw (士象全 against 士象全 is the textbook dead draw); the one way to lose
# left, 困毙 (stalemate, 3.3), needs the loser to box his own king in with his own men, which he never has to do,
# and a side with no legal move right now has already lost, so that position is not called a draw here.
# Everything else (a lone cannon, a pawn on the last rank,
# a horse against a full set of defenders, which theory calls drawn or won depending on the position) stays False.
_ATTACKERS = frozenset("RNCPrncp")


def insufficient_material_reason(position: Position) -> str | None:
    """Why neither side can win, in words, or None where one might (see the comment above for the cases)."""
    squares = position.squares()
    if any(ch in _ATTACKERS for ch in squares):
        return None
    if not position.legal_moves():  # 4.1.2: the side to move is stalemated: decided, not a draw
        return None
    red = sorted(ch for ch in squares if ch.isupper())
    black = sorted(ch for ch in squares if ch.islower())
    names = {"k": "king", "a": "advisor", "b": "elephant"}

    def describe(pieces: list[str]) -> str:
        counts: dict[str, int] = {}
        for ch in pieces:
            counts[ch.lower()] = counts.get(ch.lower(), 0) + 1
        return ", ".join(f"{n} {names.get(k, k)}{'s' if n > 1 else ''}" for k, n in sorted(counts.items()))

    return (
        f"4.2.2: only kings, advisors and elephants remain (red: {describe(red)}; black: {describe(black)}); "
        "none of them can ever attack the other king, so neither side can win"
    )


def insufficient_material(position: Position) -> bool:
    """4.2.2: True only where neither side can possibly win (kings, advisors and elephants only)."""
    return insufficient_material_reason(position) is not None
