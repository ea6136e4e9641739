"""Evidence on disk with the retention policy: `xqarb up --demo` for a few minutes, then what the disk holds.

    python bench/evidence_retention.py [--boards 2] [--seconds 160] [--thin-after 30] [--no-policy] [--calm]
        [--think S]

Runs `xqarb up --demo` with the venue's `[evidence]` policy (the defaults, but `thin_after_s` shortened so that a
short run shows its effect, and the sweep every 15 s), stops it, and reports:
  * written: what vision stored (every frame an observation named; with --no-policy nothing is thinned);
  * at the end: what the disk holds when the run stops (the last thin_after_s still full, not yet judged);
  * settled: after one more sweep once thin_after_s and orphan_after_s have passed by the ledger's clock (what
    the venue holds of this play from then on);
each in MB (10^6 bytes) per board-minute (the boards' play the ledger's frames span), frames full and thinned;
and checks that every frame a move, a ruling or an alert names is on disk full size, byte for byte its SHA-256.
A few minutes of CPU (the demo renders the boards' video).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from probe import free_port


def disk(root: Path) -> tuple[int, int, int]:
    """(bytes, full frames, thinned frames) under an evidence directory."""
    size = full = thin = 0
    for path in root.rglob("*.jpg"):
        size += path.stat().st_size
        if path.name.endswith(".thin.jpg"):
            thin += 1
        else:
            full += 1
    return size, full, thin


def run_demo(data: Path, boards: int, seconds: float, evidence: dict[str, Any] | None, calm: bool,
             think: float = 0.0) -> None:
    from xqarb.ingest.config import generate_config

    data.mkdir(parents=True, exist_ok=True)
    raw = generate_config([str(i) for i in range(1, boards + 1)])
    if evidence is not None:
        raw["evidence"] = evidence
    (data / "venue.json").write_text(json.dumps(raw, indent=1))
    cmd = [sys.executable, "-m", "xqarb.cli", "up", "--demo", "--boards", str(boards), "--port", str(free_port()),
           "--data-dir", str(data), "--quiet", *(["--calm"] if calm else []), "--think", str(think)]
    env = {**os.environ, "XQARB_DATA_DIR": str(data)}
    with open(data / "up.log", "w") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            proc.wait(seconds)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGINT)
            proc.wait(60)


def settle(data: Path, evidence: dict[str, Any] | None) -> dict[str, Any]:
    """One more sweep with the ledger's clock thin_after_s on; the frames kept entries name, checked."""
    from xqarb.referee.ledger import open_ledger
    from xqarb.vision.evidence import DirectoryEvidenceStore
    from xqarb.vision.retention import parse_policy
    from xqarb.vision.sweep import EvidenceSweeper, board_minutes

    policy = parse_policy(evidence)
    ledger = open_ledger(data / "ledger.sqlite")
    store = DirectoryEvidenceStore(data / "evidence")
    sweeper = EvidenceSweeper(store, ledger, policy, say=lambda line: None)
    sweeper.read_ledger()
    minutes = board_minutes(sweeper.refs)
    out: dict[str, Any] = {"board_minutes": round(minutes, 2)}
    if evidence is not None:
        wait = int(max(policy.thin_after_s, policy.orphan_after_s) * 1e6)
        sweeper.refs.horizon_us += wait
        sweeper.refs.horizons = {board: at + wait for board, at in sweeper.refs.horizons.items()}
        out["sweep"] = sweeper.sweep().to_json()
    bad = []
    for sha, kind in sweeper.refs.full.items():
        path = store.path_of(sha)
        if path.exists() and hashlib.sha256(path.read_bytes()).hexdigest() == sha:
            continue
        bad.append((sha, kind, "thinned" if store.thin_path_of(sha).exists() else "missing"))
    kinds: dict[str, list[float]] = {}  # kind -> [frames, MB per board-minute]
    for sha, kind in sweeper.refs.full.items():
        info = store.info(sha)
        row = kinds.setdefault(kind, [0, 0.0])
        row[0] += 1
        row[1] += (info.size if info else 0) / 1e6 / (minutes or 1.0)
    out["kept_full_by_kind"] = {k: [n, round(mb, 3)] for k, (n, mb) in kinds.items()}
    out["kept_entries_without_their_full_frames"] = bad
    out["moves"] = sum(1 for g in ledger.games() for e in ledger.entries(g.game_id) if e.event.type == "MoveMade")
    ledger.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boards", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=160.0)
    ap.add_argument("--thin-after", type=float, default=30.0, help="evidence.thin_after_s for this short run")
    ap.add_argument("--no-policy", action="store_true", help="the venue without retention: nothing thinned")
    ap.add_argument("--calm", action="store_true", help="the demo's --calm: no fouls, touches or misplaced pieces")
    ap.add_argument("--think", type=float, default=0.0,
                    help="the demo's --think: seconds a player thinks over a move (about 25: a rapid game's pace)")
    ap.add_argument("--keep", default=None, help="keep the data directory here")
    args = ap.parse_args()
    evidence = None if args.no_policy else {"thin_after_s": args.thin_after, "sweep_every_s": 15}
    data = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="xqarb-evidence-"))
    started = time.time()
    run_demo(data, args.boards, args.seconds, evidence, args.calm, args.think)
    end_bytes, end_full, end_thin = disk(data / "evidence")
    result = settle(data, evidence)
    minutes = result["board_minutes"] or float("nan")
    settled_bytes, settled_full, settled_thin = disk(data / "evidence")
    result.update({
        "boards": args.boards, "calm": args.calm, "think_s": args.think, "seconds": round(time.time() - started, 1),
        "policy": evidence,
        "at_end": {"mb_per_board_minute": round(end_bytes / 1e6 / minutes, 3), "full": end_full, "thinned": end_thin},
        "settled": {"mb_per_board_minute": round(settled_bytes / 1e6 / minutes, 3), "full": settled_full,
                    "thinned": settled_thin, "mb": round(settled_bytes / 1e6, 2)},
    })
    if result["moves"]:
        result["plies_per_board_minute"] = round(result["moves"] / minutes, 2)
    print(json.dumps(result, indent=1))
    return 0 if not result["kept_entries_without_their_full_frames"] else 1


if __name__ == "__main__":
    sys.exit(main())
