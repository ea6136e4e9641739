"""The evidence sweep: the retention policy (retention.py) applied to a store, by what the ledger says.

It reads the ledger on from where it stopped (every game's new entries), asks `retention.plan` what to thin and
drop of the frames the store holds, and does it. It runs where both the ledger and the store are reached: a
thread of `xqarb up` (one machine), or `xqarb vision sweep --every S` beside a venue's shared PostgreSQL. Two
sweeps at once do no harm: thinning and dropping are idempotent, and both judge by the same ledger.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from .evidence import EvidenceStore
from .retention import Plan, References, RetentionPolicy, plan, thin_jpeg


@dataclass(frozen=True)
class SweepReport:
    frames: int  # frames held before the sweep
    bytes_before: int
    bytes_after: int
    full_kept: int
    thinned: int  # thinned by this sweep
    thinned_kept: int  # thinned before, kept
    dropped: int
    waiting: int
    referenced_thinned: int  # frames a kept entry names that were found thinned (must stay 0)
    board_minutes: float  # the boards' play the ledger's frames span
    mb_per_board_minute: float  # bytes_after per board-minute (MB = 10^6 bytes)
    over_budget: bool

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def board_minutes(refs: References) -> float:
    """The minutes of play the frames the ledger names span, summed over the boards."""
    spans: dict[str, tuple[int, int]] = {}
    for board, at in refs.seen.values():
        lo, hi = spans.get(board, (at, at))
        spans[board] = (min(lo, at), max(hi, at))
    return sum(hi - lo for lo, hi in spans.values()) / 60e6


class EvidenceSweeper:
    """Sweeps `store` by `ledger` (xqarb.referee.ledger's interface) under `policy`."""

    def __init__(self, store: EvidenceStore, ledger: Any, policy: RetentionPolicy | None = None, *,
                 clock_us: Callable[[], int] = lambda: time.time_ns() // 1000,
                 say: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True)) -> None:
        self.store = store
        self.ledger = ledger
        self.policy = policy or RetentionPolicy()
        self.refs = References(self.policy)
        self.cursors: dict[str, int] = {}  # game -> the last seq read
        self.clock_us = clock_us
        self.say = say
        self.last: SweepReport | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def read_ledger(self) -> int:
        """Every game's entries since the last call, into the references; returns how many were read."""
        read = 0
        for info in self.ledger.games():
            after = self.cursors.get(info.game_id, 0)
            if info.entries <= after:
                continue
            for entry in self.ledger.entries(info.game_id, after):
                self.refs.add_entry(entry)
                after = max(after, int(entry.seq))
                read += 1
            self.cursors[info.game_id] = after
        return read

    def sweep(self) -> SweepReport:
        self.read_ledger()
        held = list(self.store.frames())
        todo: Plan = plan(held, self.refs, self.clock_us())
        thinned = 0
        for sha in todo.thin:
            data = self.store.get(sha)
            if data is None:
                continue  # dropped meanwhile by another sweep
            try:
                smaller = thin_jpeg(data, self.policy.thin_scale, self.policy.thin_quality)
            except ValueError:
                continue  # not a JPEG we can read: kept as it came, rather than lose it
            if len(smaller) < len(data) and self.store.thin(sha, smaller):
                thinned += 1
        dropped = sum(1 for sha in todo.drop if self.store.drop(sha))
        self.refs.forget(todo.drop)
        after = sum(f.size for f in self.store.frames())
        minutes = board_minutes(self.refs)
        per = after / 1e6 / minutes if minutes > 0 else 0.0
        report = SweepReport(
            frames=len(held), bytes_before=sum(f.size for f in held), bytes_after=after, full_kept=todo.full_kept,
            thinned=thinned, thinned_kept=todo.thinned_kept, dropped=dropped, waiting=todo.waiting,
            referenced_thinned=len(todo.referenced_thinned), board_minutes=round(minutes, 2),
            mb_per_board_minute=round(per, 3), over_budget=per > self.policy.max_mb_per_board_minute)
        if report.referenced_thinned:
            self.say(f"evidence: {report.referenced_thinned} frame(s) named by a kept entry were thinned before "
                     f"it named them (raise evidence.thin_after_s)")
        if thinned or dropped:
            self.say(f"evidence: {thinned} thinned, {dropped} dropped, {todo.full_kept} kept full; "
                     f"{per:.2f} MB per board-minute (budget {self.policy.max_mb_per_board_minute})")
        self.last = report
        return report

    def run(self) -> None:
        """Sweep every `policy.sweep_every_s` until `stop()`; a failing sweep is said and tried again later."""
        while not self._stop.wait(self.policy.sweep_every_s):
            try:
                self.sweep()
            except (OSError, RuntimeError, ValueError) as exc:
                self.say(f"evidence: sweep failed ({type(exc).__name__}: {exc}); trying again")

    def start(self) -> EvidenceSweeper:
        self._thread = threading.Thread(target=self.run, name="xq-evidence-sweep", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop sweeping; returns once a sweep in progress is done (the ledger and store may then be closed)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(30)


def policy_of_venue(path: Any) -> RetentionPolicy:
    """The `[evidence]` table of a venue configuration file (JSON or TOML, as ingest reads it)."""
    import json
    import tomllib
    from pathlib import Path

    from .retention import PolicyError, parse_policy

    p = Path(path)
    try:
        text = p.read_bytes().decode("utf-8")
        raw = tomllib.loads(text) if p.suffix == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise PolicyError(f"{p}: not valid {'TOML' if p.suffix == '.toml' else 'JSON'}: {exc}") from None
    if not isinstance(raw, dict):
        raise PolicyError(f"{p}: the configuration must be an object")
    return parse_policy(raw.get("evidence"))


def store_target(policy: RetentionPolicy, default_dir: Any) -> str:
    """Where the venue keeps its frames: $XQARB_EVIDENCE_URL, else the policy's `store`, else `default_dir`."""
    import os

    return os.environ.get(EVIDENCE_URL_ENV) or policy.store or str(default_dir)


# A postgresql:// URL (or a directory) for the evidence frames of every process, over the configuration's store.
EVIDENCE_URL_ENV = "XQARB_EVIDENCE_URL"


def open_venue_store(venue_path: Any, default_dir: Any) -> tuple[EvidenceStore, RetentionPolicy]:
    """The evidence store and retention policy of a venue configuration file (None: the defaults)."""
    from .evidence import open_evidence_store

    policy = policy_of_venue(venue_path) if venue_path is not None else RetentionPolicy()
    return open_evidence_store(store_target(policy, default_dir)), policy


def venue_frame_loader(venue_path: Any, directories: list[Any]) -> Callable[[str], bytes | None]:
    """How the API reads evidence frames: from the venue's shared store where it configures one (a
    postgresql:// URL), else from these directories (api.frame_loader)."""
    from xqarb.referee.api import frame_loader

    from .evidence import is_url

    policy = policy_of_venue(venue_path) if venue_path is not None else RetentionPolicy()
    target = store_target(policy, directories[0])
    if is_url(target):
        from .evidence import PostgresEvidenceStore

        return PostgresEvidenceStore(target).get
    return frame_loader(directories)


def sweep_command(args: Any) -> int:
    """`xqarb vision sweep`: once, or every `--every` seconds until interrupted; exit 2 on a bad configuration."""
    import json

    from xqarb.config import evidence_dir, ledger_target
    from xqarb.referee.ledger import open_ledger

    from .evidence import EvidenceUnavailable
    from .retention import PolicyError

    try:
        store, policy = open_venue_store(args.config, args.evidence_dir or evidence_dir())
        ledger = open_ledger(ledger_target(args.db))
    except (PolicyError, EvidenceUnavailable, OSError) as exc:
        print(f"xqarb vision sweep: {exc}", file=sys.stderr)
        return 2
    sweeper = EvidenceSweeper(store, ledger, policy)
    try:
        while True:
            report = sweeper.sweep()
            print(json.dumps(report.to_json()) if args.json else
                  f"{report.frames} frames: {report.thinned} thinned, {report.dropped} dropped, {report.full_kept} "
                  f"kept full, {report.waiting} too recent; {report.mb_per_board_minute} MB per board-minute",
                  flush=True)
            if args.every is None:
                return 0
            time.sleep(args.every)
    except KeyboardInterrupt:
        return 0
    finally:
        ledger.close()
