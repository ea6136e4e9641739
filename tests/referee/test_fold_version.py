"""A change of the fold's behaviour comes with a new FOLD_VERSION (and of a rule set's tables with a new version of
that rule set): the outputs of a fixed corpus are digested per version in tests/referee/fold_corpus.sha256, and
the same version with another digest fails, telling the developer to bump the version and record the new digest.

The corpus: every scenario file, a few hand-made scenarios that give rulings under both rule sets and the rapid
play-off, and real games sampled evenly from the shared data (when it is there)."""

from __future__ import annotations

import io
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from xqarb.cli import main
from xqarb.events import Event
from xqarb.referee import game as game_mod
from xqarb.referee import version
from xqarb.referee.board import BoardState, end_of_input, step
from xqarb.referee.cli import synthesize
from xqarb.referee.rules import read_pgn
from xqarb.referee.version import CorpusChanged, check_digest, digest_outputs, recorded_digests

HERE = Path(__file__).parent
CORPUS_FILE = HERE / "fold_corpus.sha256"
SCENARIO_FILES = sorted((HERE / "scenarios").glob("*.jsonl"))
GAMES_PER_FILE = 15  # real games per shared file: enough moves to meet the repetition and natural-limit alerts
GAME_FILES = ("ccpd_dev", "liu_dahua_iccs")


def _folded(events: list[Event]) -> list[Event]:
    state: BoardState | None = None
    outs: list[Event] = []
    for e in events:
        state, st = step(state, e)
        outs.extend(st.outputs)
    if state is not None:
        state, st = end_of_input(state)
        outs.extend(st.outputs)
    return outs


def _busy(scenario, **game_fields):
    s = scenario(level="provincial", recording_required=True, **game_fields)
    s.moves("h2e2", "h9g7").add("PieceLifted", point="h0").move("h0g2")
    s.add("TouchReported", side="black", point="a9").add("DrawOffered", side="red")
    s.stable(s.displaced("b9b5"))
    s.stable(s.position.squares()).move("i9h9").add("PieceMisaligned", points=["h9", "h8"])
    s.add("ScoresheetEntry", side="red", ply=1, text="炮二平五").press("red", dt=3)
    s.press("black").press("black")
    s.add("ClockPaused", by="black").add("NaturalLimitClaimed", side="red").add("Resigned", side="black")
    return s


def scenario_outputs(scenario) -> list[Event]:
    """The scenario part of the corpus: needs nothing outside the repository."""
    lines: list[str] = []
    for path in SCENARIO_FILES:
        out = io.StringIO()
        with redirect_stdout(out):
            main(["referee", "run", str(path)])
        lines.extend(out.getvalue().splitlines())
    outs = [Event.from_json(line) for line in lines]
    for fields in ({}, {"ruleset": "cxa-2011"}, {"rapid": True}):
        outs.extend(_folded(_busy(scenario, **fields).events()))
    return outs


def game_outputs(shared_data: Path) -> list[Event]:
    outs: list[Event] = []
    for name in GAME_FILES:
        records = read_pgn((shared_data / "games" / f"{name}.pgn").read_text(encoding="utf-8"))
        stride = max(1, len(records) // GAMES_PER_FILE)
        for number in range(0, stride * GAMES_PER_FILE, stride):
            events, _, _ = synthesize(records[number], f"{name}#{number + 1}")
            outs.extend(_folded(events))
    return outs


def _recorded() -> dict[str, str]:
    return recorded_digests(CORPUS_FILE.read_text(encoding="utf-8"))


def test_the_scenario_outputs_are_those_recorded_for_this_fold_version(scenario):
    check_digest("fold-scenarios", version.FOLD_VERSION, digest_outputs(scenario_outputs(scenario)), _recorded(),
                 "FOLD_VERSION")


def test_the_real_games_outputs_are_those_recorded_for_this_fold_version(shared_data):
    outs = game_outputs(shared_data)
    assert sum(o.type == "MoveMade" for o in outs) > 1000
    check_digest("fold-games", version.FOLD_VERSION, digest_outputs(outs), _recorded(), "FOLD_VERSION")


@pytest.mark.parametrize("ruleset", sorted(version.RULESET_VERSIONS))
def test_each_rule_sets_tables_are_those_recorded_for_its_version(ruleset):
    check_digest(f"ruleset-{ruleset}", version.RULESET_VERSIONS[ruleset], version.digest_ruleset(ruleset),
                 _recorded(), f"RULESET_VERSIONS[{ruleset!r}]")


# --- the checker itself ----------------------------------------------------------------------------------------


def _without_press_fouls(monkeypatch):
    """A changed rule: pressing the clock without moving is no longer a foul (8.1.7)."""
    real = game_mod.apply

    def apply(state, event):
        new, outs = real(state, event)
        return new, tuple(o for o in outs if not (o.type == "Ruling" and o.get("article") == "8.1.7"))

    monkeypatch.setattr(game_mod, "apply", apply)


def test_a_rule_changed_without_a_version_bump_fails_and_says_to_bump_it(scenario, monkeypatch):
    before = digest_outputs(scenario_outputs(scenario))
    _without_press_fouls(monkeypatch)
    after = digest_outputs(scenario_outputs(scenario))
    assert after != before
    with pytest.raises(CorpusChanged) as caught:
        check_digest("fold-scenarios", version.FOLD_VERSION, after, _recorded(), "FOLD_VERSION")
    message = str(caught.value)
    assert "Bump FOLD_VERSION" in message and f"fold-scenarios <new version> {after}" in message


def test_a_bumped_version_without_its_digest_recorded_fails_and_gives_the_line_to_add(scenario, monkeypatch):
    _without_press_fouls(monkeypatch)
    monkeypatch.setattr(version, "FOLD_VERSION", "2099.01.01-1")
    after = digest_outputs(scenario_outputs(scenario))
    with pytest.raises(CorpusChanged, match=f"add the line `fold-scenarios 2099.01.01-1 {after}`"):
        check_digest("fold-scenarios", version.FOLD_VERSION, after, _recorded(), "FOLD_VERSION")
    # Recorded, it passes: the new outputs carry the new version.
    check_digest("fold-scenarios", "2099.01.01-1", after, {**_recorded(), "fold-scenarios 2099.01.01-1": after},
                 "FOLD_VERSION")


def test_a_changed_article_table_without_a_rule_set_version_bump_fails(monkeypatch):
    from xqarb.referee import ruleset

    changed = dict(ruleset._ARTICLES_2021, foul_touch_own="8.1.6")
    monkeypatch.setattr(ruleset, "_ARTICLES_2021", changed)
    with pytest.raises(CorpusChanged, match=r"RULESET_VERSIONS\['cxa-2021'\]"):
        check_digest("ruleset-cxa-2021", version.RULESET_VERSIONS["cxa-2021"], version.digest_ruleset("cxa-2021"),
                     _recorded(), "RULESET_VERSIONS['cxa-2021']")


def test_the_corpus_gives_rulings_for_the_checked_rule_to_change(scenario):
    rulings = [o for o in scenario_outputs(scenario) if o.type == "Ruling"]
    assert any(o.data["article"] == "8.1.7" for o in rulings)
    assert {o.data["ruleset"] for o in rulings} >= {"cxa-2021", "cxa-2011"}
