"""Which fold and which rule set made a ruling: the versions, and how the ledger records them.

An appeal can come weeks after a game, when the software has changed: a game's ledger therefore says which
version of the fold (`FOLD_VERSION`) and of its rule set's tables (`RULESET_VERSIONS`) wrote its outputs. The
first entry a referee of a version appends to a chain (the game's GameStarted; after a restart on an upgrade, the
first input the new referee folds) carries a `referee` object, hashed with the entry (ledger.Pending):
`{"fold_version", "ruleset", "ruleset_version", "previous"}`, `previous` being the versions recorded before (None
when the chain starts there or was written before versions were recorded). Every output after it, up to the
next entry that carries one, was made by those versions. The events themselves are untouched: the fold, the
outputs and their publication are the same with or without these records, and an entry without one has the bytes
it always had.

A change of behaviour of the fold (any output of the recorded corpus changes) must come with a new FOLD_VERSION,
and a change of a rule set's articles or counts with a new version of that rule set:
tests/referee/test_fold_version.py recomputes the digests recorded in tests/referee/fold_corpus.sha256.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from xqarb.events import Event
from xqarb.referee.ruleset import LEVELS, RuleConfig

# Bump (date and a running number) whenever an output of the fold can change: the ledger ties each ruling to it.
FOLD_VERSION = "2026.12.06-2"
# Bump a rule set's version when its articles or counts change (ruleset.py); the fold's version covers the rest.
RULESET_VERSIONS: dict[str, str] = {"cxa-2021": "2026.12.06-1", "cxa-2011": "2026.12.06-1"}
DEFAULT_RULESET = "cxa-2021"  # GameStarted's default (game.start)


@dataclass(frozen=True, slots=True)
class Versions:
    """The versions that wrote (or would write) a chain's outputs."""

    fold: str
    ruleset: str | None  # the game's rule set (None: a board's own chain, or a game that could not start)
    ruleset_version: str | None

    def describe(self) -> str:
        rules = f", rule set {self.ruleset} {self.ruleset_version}" if self.ruleset else ""
        return f"fold {self.fold}{rules}"

    def to_json(self) -> dict[str, Any]:
        return {"fold_version": self.fold, "ruleset": self.ruleset, "ruleset_version": self.ruleset_version}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Versions:
        return cls(obj["fold_version"], obj.get("ruleset"), obj.get("ruleset_version"))


def installed(ruleset: str | None) -> Versions:
    """The versions of this installation for a game under `ruleset` (None: no game)."""
    if ruleset not in RULESET_VERSIONS:  # no game, or a GameStarted that could not start one
        return Versions(FOLD_VERSION, None, None)
    return Versions(FOLD_VERSION, ruleset, RULESET_VERSIONS[ruleset])


def record(now: Versions, before: Versions | None) -> dict[str, Any]:
    """The `referee` object of the first entry `now` appends to a chain that `before` wrote (None: nobody)."""
    return {**now.to_json(), "previous": before.to_json() if before is not None else None}


class _Entry(Protocol):
    seq: int
    kind: str
    event: Event
    referee: Mapping[str, Any] | None


def recorded_in(entries: Iterable[_Entry]) -> list[tuple[int, Versions]]:
    """(seq, versions) of each entry of a chain that records the referee's versions, in order."""
    return [(e.seq, Versions.from_json(e.referee)) for e in entries if e.referee is not None]


def installed_for(entries: Iterable[_Entry]) -> Versions:
    """The installed versions for the game of these entries (its GameStarted names the rule set)."""
    for e in entries:
        if e.kind == "input" and e.event.type == "GameStarted":
            return installed(e.event.data.get("ruleset") or DEFAULT_RULESET)
    return installed(None)


def differs(recorded: Versions | None, now: Versions) -> str | None:
    """Why the installed fold is not the one that wrote a game (None: it is the same)."""
    if recorded is None:
        return f"the game records no referee version (written before versions were recorded); installed: " \
               f"{now.describe()}"
    if recorded != now:
        return f"written by {recorded.describe()}; installed: {now.describe()}"
    return None


# --- what the versions cover: digests checked by tests/referee/test_fold_version.py ------------------------------


def digest_outputs(outputs: Iterable[Event]) -> str:
    """SHA-256 of outputs in their JSON form, one a line: any change of any output changes it."""
    h = hashlib.sha256()
    for out in outputs:
        h.update(out.to_json().encode())
        h.update(b"\n")
    return h.hexdigest()


def ruleset_table(ruleset: str) -> dict[str, Any]:
    """Everything a rule set decides, for every level and the rapid play-off: articles and counts."""
    table: dict[str, Any] = {}
    for rapid in (False, True):
        for level in LEVELS:
            cfg = RuleConfig.make(ruleset, rapid, level)
            extra = {name: getattr(cfg, name) for name in sorted(dir(RuleConfig))
                     if isinstance(getattr(RuleConfig, name, None), property)}
            table[f"{level}{'+rapid' if rapid else ''}"] = {"articles": dict(cfg.articles), **extra}
    return table


def digest_ruleset(ruleset: str) -> str:
    return hashlib.sha256(json.dumps(ruleset_table(ruleset), sort_keys=True).encode()).hexdigest()


class CorpusChanged(AssertionError):
    """The fold's outputs (or a rule set's tables) changed and the version did not."""


def recorded_digests(text: str) -> dict[str, str]:
    """The lines `<what> <version> <sha256>` of the corpus file, as {"<what> <version>": sha256}."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            what, version, digest = line.split()
            out[f"{what} {version}"] = digest
    return out


def check_digest(what: str, version: str, digest: str, recorded: dict[str, str], bump: str) -> None:
    """Raise CorpusChanged unless `digest` is the one recorded for (what, version). `bump` names the constant."""
    line = f"{what} {version} {digest}"
    want = recorded.get(f"{what} {version}")
    if want is None:
        raise CorpusChanged(f"no digest is recorded for {what} {version}: add the line `{line}` to "
                            "tests/referee/fold_corpus.sha256")
    if want != digest:
        raise CorpusChanged(
            f"the outputs of {what} changed but its version {version} did not (recorded {want[:12]}..., now "
            f"{digest[:12]}...): a ruling made before and after this change would carry the same version. Bump "
            f"{bump} in services/referee/version.py and add the line `{what} <new version> {digest}` to "
            "tests/referee/fold_corpus.sha256 (if the change was not meant, undo it)")


