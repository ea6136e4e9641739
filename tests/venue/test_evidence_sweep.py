"""The evidence sweep over a real ledger and store, read back through the API: the frames a move and a ruling
rest on are served full size after a sweep, a frame nothing kept names is served thinned (saying the full frame's
size), a dropped one is gone; the sweep reports the disk it leaves against the venue's budget. Also run with the
PostgreSQL store as the API's frame source (`evidence.store`), as on a venue of several machines."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from tests.ledger_stores import postgres_url  # noqa: F401  (fixture: a PostgreSQL server for the session)
from tests.venue.gamedata import ev
from xqarb.referee.ledger import Origin, Pending, SqliteLedger
from xqarb.vision.evidence import open_evidence_store
from xqarb.vision.retention import RetentionPolicy
from xqarb.vision.sweep import EvidenceSweeper, open_venue_store, venue_frame_loader

S = 1_000_000
# The game began just before the test: its frames are stored now (the stores' own clock), and the ledger's last
# entry, 10 minutes on, is past the policy's thin_after_s for all of them. Set again as each test starts (below):
# taken once at import, it lay minutes before a test run late in a long suite, whose frames were then too recent.
T0 = (time.time_ns() // 1000 // S // 60 - 1) * 60 * S  # (on a minute: 30 s windows start with it)


@pytest.fixture(autouse=True)
def _game_began_just_before_the_test() -> None:
    global T0
    T0 = (time.time_ns() // 1000 // S // 60 - 1) * 60 * S
BOARD, GAME = "b1", "g-sweep"
SQ = "." * 90
FEN_AFTER = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b - - 1 1"


def frame(seed: int) -> bytes:
    """A 640x360 camera-like frame (smooth, so that JPEG compresses it as it does a real one)."""
    rng = np.random.default_rng(seed)
    img = cv2.resize(rng.integers(0, 255, (18, 32, 3), dtype=np.uint8), (640, 360), interpolation=cv2.INTER_CUBIC)
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 90])
    assert ok
    return buf.tobytes()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_ledger(path: Path, frames: list[bytes]) -> SqliteLedger:
    """A game: the start's still board (frame 0, at 1 s), a hand seen (frames 1 and 2, at 40 and 50 s), a move
    read from frame 3 (60 s), a 8.1.7 ruling at frame 4 (80 s; frame 3 its context too), then the ledger 10
    minutes on."""
    f = [sha(x) for x in frames]
    ledger = SqliteLedger(path)
    entries = [
        Pending("input", ev("BoardStable", BOARD, 2, T0 + 1 * S, frame_sha256=f[0], evidence=[f[0]], squares=SQ)),
        Pending("input", ev("HandEntered", BOARD, 3, T0 + 40 * S, frame_sha256=f[1], evidence=[f[0], f[1]])),
        Pending("input", ev("HandLeft", BOARD, 4, T0 + 50 * S, frame_sha256=f[2], evidence=[f[1], f[2]])),
        Pending("input", ev("BoardStable", BOARD, 5, T0 + 60 * S, frame_sha256=f[3], evidence=[f[2], f[3]],
                            squares=SQ)),
        Pending("output", ev("MoveMade", BOARD, 6, T0 + 60 * S, game_id=GAME, ply=1, side="red", iccs="h2e2",
                                 wxf="C2=5", chinese="炮二平五", fen_after=FEN_AFTER, red_ms=1000, black_ms=1000)),
    ]
    stable = ev("BoardStable", BOARD, 7, T0 + 80 * S, frame_sha256=f[4], evidence=[f[3], f[4]], squares=SQ)
    entries += [
        Pending("input", stable),
        Pending("output", ev("Ruling", BOARD, 8, T0 + 80 * S, game_id=GAME, kind="foul", side="black", article="8.1.7",
                             message="pressed without a move", evidence=[stable.event_id, f[4]])),
        Pending("input", ev("ClockPressed", BOARD, 9, T0 + 600 * S, side="red", red_ms=1000, black_ms=1000)),
    ]
    ledger.append(GAME, BOARD, [Pending(p.kind, p.event, Origin("xq.observations", 0, i)) if p.kind == "input"
                                else p for i, p in enumerate(entries)])
    return ledger


def client_for(ledger: Any, load_frame: Any) -> Any:
    from xqarb.referee.api import RefereeApi, StreamHub, create_app

    api = RefereeApi(ledger=ledger, hub=StreamHub(), board_ids=[BOARD], load_frame=load_frame)
    return create_app(api).test_client()


def sweep_and_read(store: Any, ledger: Any, load_frame: Any, frames: list[bytes]) -> tuple[Any, list[Any]]:
    for data in frames:
        store.put(data)
    policy = RetentionPolicy(thin_after_s=120, thin_every_s=30)
    sweeper = EvidenceSweeper(store, ledger, policy, clock_us=lambda: T0 + 700 * S, say=lambda line: None)
    report = sweeper.sweep()
    c = client_for(ledger, load_frame)
    return report, [c.get(f"/api/games/{GAME}/frames/{sha(x)}") for x in frames]


def check(report: Any, got: list[Any], frames: list[bytes]) -> None:
    # 0: the board before the move, 3: the move's, 4: the ruling's (3 its context too): full, byte for byte
    for i in (0, 3, 4):
        assert got[i].status_code == 200 and got[i].data == frames[i], i
        assert "X-Frame-Thinned" not in got[i].headers
    # 1: the first frame of its 30 s window [30, 60), where no full frame is: thinned, saying the full frame's size
    assert got[1].status_code == 200 and len(got[1].data) < len(frames[1]) / 4
    assert got[1].headers["X-Frame-Thinned"] == "640x360"
    assert cv2.imdecode(np.frombuffer(got[1].data, np.uint8), cv2.IMREAD_COLOR).shape == (90, 160, 3)
    # 2: the second of that window: dropped
    assert got[2].status_code == 404 and got[2].get_json()["error"] == "unknown_frame"
    assert (report.full_kept, report.thinned, report.dropped, report.referenced_thinned) == (3, 1, 1, 0)
    assert report.bytes_after < report.bytes_before


def test_referenced_frames_are_served_full_after_a_sweep_the_rest_thinned_or_gone(tmp_path: Path) -> None:
    frames = [frame(i) for i in range(5)]
    ledger = write_ledger(tmp_path / "ledger.sqlite", frames)
    store = open_evidence_store(tmp_path / "evidence")
    from xqarb.referee.api import frame_loader

    report, got = sweep_and_read(store, ledger, frame_loader([tmp_path / "evidence"]), frames)
    check(report, got, frames)
    # a second sweep changes nothing
    again = EvidenceSweeper(store, ledger, RetentionPolicy(thin_after_s=120, thin_every_s=30),
                            clock_us=lambda: T0 + 700 * S, say=lambda line: None).sweep()
    assert (again.thinned, again.dropped, again.bytes_after) == (0, 0, report.bytes_after)


def test_the_api_reads_the_venues_postgresql_store(tmp_path: Path, postgres_url: str) -> None:  # noqa: F811
    import psycopg

    with psycopg.connect(postgres_url, autocommit=True) as db:
        db.execute("CREATE SCHEMA IF NOT EXISTS sweep_api")
    url = f"{postgres_url}{'&' if '?' in postgres_url else '?'}options=-csearch_path%3Dsweep_api"
    venue = tmp_path / "venue.json"
    venue.write_text(json.dumps({"boards": {}, "evidence": {"store": url, "thin_after_s": 120}}))
    store, policy = open_venue_store(venue, tmp_path / "unused")
    assert policy.thin_after_s == 120 and not (tmp_path / "unused").exists()
    frames = [frame(10 + i) for i in range(5)]
    ledger = write_ledger(tmp_path / "ledger.sqlite", frames)
    report, got = sweep_and_read(store, ledger, venue_frame_loader(venue, [tmp_path / "unused"]), frames)
    check(report, got, frames)


def test_a_bad_evidence_table_is_refused_with_the_setting_named(tmp_path: Path) -> None:
    from xqarb.vision.retention import PolicyError

    venue = tmp_path / "venue.json"
    venue.write_text(json.dumps({"evidence": {"thin_every": 5}}))
    with pytest.raises(PolicyError, match="thin_every"):
        open_venue_store(venue, tmp_path / "ev")
