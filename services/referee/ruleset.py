"""Rule sets: which article says what, and the counts that differ between editions, levels and the rapid play-off.

Nothing about one edition is hard-coded in the fold: it asks a `RuleConfig` for the article of a concept
("fouls_loss", "foul_touch_own" ...) and for the counts (fouls to lose, illegal moves to lose ...).

Sources (`shared/seeds/`): the 2021 edition (000_*: 4.1.1-4.1.13, 4.2.1-4.2.4, 8.1.1-8.1.9, 8.2, chapters 20-23
of the arbiters' rules); the older edition "cxa-2011" (001_*, 004_*), whose 4.1 list is ordered differently
(4.1.1 mate, 4.1.2 kings facing, 4.1.3 stalemate, 4.1.4 time, 4.1.5 late, 4.1.6 illegal move, 4.1.7 forbidden
repetition not varied, 4.1.8 three fouls, 4.1.9 resignation, 4.1.10 misconduct; 4.2.1 no win possible,
4.2.2 agreement), whose fouls are 9.1.1-9.1.8 and which knows no 8.1.7 (pressing without moving), no foul for a
first illegal move and no 4.1.11; and the national league's rapid play-off rules (003_*: two fouls lose, pressing
the clock without moving or after knocking pieces over loses, 50 rounds / 8 checks, a false natural-limit claim
loses, a piece left between two points: fix it at once, else the opponent designates and the mover has a foul).
The play-off rules list their own losses without numbers; where the edition has no article for one, it is cited
as `rapid.N` in their order: rapid.1 two fouls, rapid.2 pressing the clock after knocking pieces over, rapid.3
pressing without moving, rapid.4 a ringing phone, rapid.5 misconduct; `rapid.nl` a false natural-limit claim.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

RULESETS = ("cxa-2021", "cxa-2011")
LEVELS = ("national", "provincial", "junior")
RAPID = "rapid"  # the rule-set label of rulings that rest on the rapid play-off rules


class RuleConfigError(ValueError):
    """A GameStarted asks for a rule set or level this referee does not know."""


_ARTICLES_2021: Mapping[str, str] = MappingProxyType({
    # 4.1 losses
    "mate": "4.1.1", "stalemate": "4.1.2", "suicide": "4.1.3", "perpetual_check": "4.1.4",
    "forbidden_repetition": "4.1.5", "flag": "4.1.6", "late": "4.1.7", "illegal_loss": "4.1.8",
    "press_loss": "4.1.9", "fouls_loss": "4.1.10", "false_claim_loss": "4.1.11", "resign": "4.1.12",
    "misconduct": "4.1.13",
    "knocked_press_loss": "rapid.2",
    # 4.2 draws
    "draw_agreement": "4.2.1", "draw_material": "4.2.2", "draw_repetition": "4.2.3", "draw_natural": "4.2.4",
    # 8.1 fouls, 8.2 announcement and waiver
    "foul_disturb": "8.1.1", "foul_clock": "8.1.2", "foul_draw_offers": "8.1.3", "foul_false_claim": "8.1.4",
    "foul_touch_own": "8.1.5", "foul_touch_opponent": "8.1.5", "foul_recording": "8.1.6", "foul_press": "8.1.7",
    "foul_illegal": "8.1.8", "foul_minor": "8.1.9", "waiver": "8.2",
    # procedure
    "clock": "6", "recording": "7.1", "illegible": "7.2", "late_rule": "20.1", "timeout_rule": "21",
    "draw_offer_rule": "22.1", "claim_rule": "22.3", "pending_position": "23", "adjust": "5.6", "restore": "5.8.2",
    "replay": "5.8.3",
    "knocked": "5.9", "designate": "5.10",
})

_ARTICLES_2011: Mapping[str, str] = MappingProxyType({
    "mate": "4.1.1", "suicide": "4.1.2", "stalemate": "4.1.3", "flag": "4.1.4", "late": "4.1.5",
    "illegal_loss": "4.1.6", "perpetual_check": "4.1.7", "forbidden_repetition": "4.1.7", "fouls_loss": "4.1.8",
    "resign": "4.1.9", "misconduct": "4.1.10", "knocked_press_loss": "rapid.2",
    # Losses only the rapid play-off rules know (2011 has no 4.1.9 / 4.1.11 of its own).
    "press_loss": "rapid.3", "false_claim_loss": "rapid.nl",
    "draw_material": "4.2.1", "draw_agreement": "4.2.2", "draw_repetition": "4.2.3", "draw_natural": "4.2.4",
    "foul_disturb": "9.1.1", "foul_clock": "9.1.2", "foul_draw_offers": "9.1.3", "foul_false_claim": "9.1.4",
    "foul_touch_own": "9.1.5", "foul_touch_opponent": "9.1.6", "foul_recording": "9.1.7", "foul_minor": "9.1.8",
    "waiver": "9.2",
    "clock": "6", "recording": "7.1", "illegible": "7.1", "suspend_recording": "7.2", "late_rule": "21.1",
    "timeout_rule": "22", "draw_offer_rule": "23.1", "claim_rule": "23.3", "pending_position": "24", "adjust": "5.6",
    "restore": "5.8",
    "replay": "5.8", "knocked": "5.8", "designate": "5.8",
})


@dataclass(frozen=True, slots=True)
class RuleConfig:
    """The rules one game is played under (GameStarted: ruleset, rapid, level)."""

    ruleset: str = "cxa-2021"
    rapid: bool = False
    level: str = "national"
    natural_limit_rounds: int | None = None  # None: the rule set's default (60; rapid 50), 4.2.4 lets events lower it
    articles: Mapping[str, str] = field(default_factory=lambda: _ARTICLES_2021, compare=False)

    @classmethod
    def make(cls, ruleset: str = "cxa-2021", rapid: bool = False, level: str = "national",
             natural_limit_rounds: int | None = None) -> RuleConfig:
        if ruleset not in RULESETS:
            raise RuleConfigError(f"unknown rule set {ruleset!r}: expected one of {', '.join(RULESETS)}")
        if level not in LEVELS:
            raise RuleConfigError(f"unknown level {level!r}: expected one of {', '.join(LEVELS)}")
        if natural_limit_rounds is not None and natural_limit_rounds <= 0:
            raise RuleConfigError(f"natural_limit_rounds must be positive, got {natural_limit_rounds}")
        arts = _ARTICLES_2021 if ruleset == "cxa-2021" else _ARTICLES_2011
        return cls(ruleset, rapid, level, natural_limit_rounds, arts)

    # ---------------------------------------------------------------- articles
    def article(self, concept: str) -> str | None:
        """The article of a concept in this rule set, None where the edition has no such rule."""
        return self.articles.get(concept)

    # ---------------------------------------------------------------- counts
    @property
    def fouls_to_lose(self) -> int:
        # 4.1.10 (2011: 4.1.8): three fouls; rapid play-off: two.
        return 2 if self.rapid else 3

    @property
    def illegal_moves_to_lose(self) -> int:
        # 2021 4.1.8: national events on the first, provincial and below and junior events on the second (8.1.8
        # is the first). 2011 4.1.6 knows no level: the first illegal move loses.
        if self.ruleset == "cxa-2011":
            return 1
        return 1 if self.level == "national" else 2

    @property
    def presses_to_lose(self) -> int | None:
        # 4.1.9: pressing the clock without moving, twice (8.1.7 the first time); rapid play-off: at once.
        # 2011 has no such foul (6 only says to press after moving): None, and the referee only warns.
        if self.rapid:
            return 1
        return 2 if self.ruleset == "cxa-2021" else None

    @property
    def false_claims_to_lose(self) -> int | None:
        # 4.1.11: the second false natural-limit claim of a stage; rapid play-off: the first; 2011: never (foul).
        if self.rapid:
            return 1
        return 2 if self.ruleset == "cxa-2021" else None

    @property
    def false_claim_penalty_ms(self) -> int:
        return 5 * 60_000  # 23.3 (2011) / 22.3 (2021): five minutes off the claimant's time

    @property
    def limit_rounds(self) -> int:
        if self.natural_limit_rounds is not None:
            return self.natural_limit_rounds
        return 50 if self.rapid else 60

    @property
    def checks_cap(self) -> int:
        return 8 if self.rapid else 10

    @property
    def recording_fouls_cap_at_eight(self) -> bool:
        # 2021 7.1: every 4 unrecorded moves one foul, 8 or more two at once; 2011 7.1: every 4 *consecutive*.
        return self.ruleset == "cxa-2021"

    @property
    def suspend_recording_under_ms(self) -> int | None:
        # 2011 7.2: under 3 minutes left a player may stop recording until the next time period.
        return 180_000 if self.ruleset == "cxa-2011" else None

    @property
    def misaligned_foul_for_mover(self) -> bool:
        # Rapid play-off rules: a piece between two points after the clock press: the opponent designates and the
        # mover has one foul. The slow-play rules (5.10) only let the opponent designate.
        return self.rapid

    @property
    def draw_offer_foul_margin(self) -> int | None:
        # 2021 8.1.3: offers outnumbering the opponent's by two. 2011 9.1.3 is "offering again after a refusal".
        return 2 if self.ruleset == "cxa-2021" else None

    def label(self, rapid_rule: bool = False) -> str:
        """The rule-set name a ruling carries: the edition, or `rapid` where the play-off rules decided it."""
        return RAPID if (rapid_rule and self.rapid) else self.ruleset

    def to_json(self) -> dict[str, object]:
        return {
            "ruleset": self.ruleset, "rapid": self.rapid, "level": self.level,
            "fouls_to_lose": self.fouls_to_lose, "illegal_moves_to_lose": self.illegal_moves_to_lose,
            "presses_to_lose": self.presses_to_lose, "natural_limit_rounds": self.limit_rounds,
            "checks_cap": self.checks_cap,
        }
