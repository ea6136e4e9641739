"""Observations vision sends again after an embedded broker restarted empty (services/vision/observations_kept.py)
come to the referee as other records, some at the very (topic, partition, offset) their first copies had on the lost
broker: each is taken once by its event id, none makes a ruling, and the moves the referee had not read yet are
folded as if nothing happened."""

from __future__ import annotations

from pathlib import Path

from xqarb.events import make_event
from xqarb.referee.ledger import Origin, SqliteLedger
from xqarb.referee.rules import START_FEN, Move, Position
from xqarb.referee.service import Referee

T0 = 1_764_460_800_000_000  # µs
MOVES = ["h2e2", "b9c7", "h0g2", "h7f7"]


def _inputs(board: str) -> list:
    started = make_event(
        "GameStarted", board, source="arbiter:chief", source_seq=1, occurred_at=T0, received_at=T0, game_id="g-a",
        red_player="A", black_player="B", recording_required=False,
        time_control={"scheme": "increment", "base_ms": 3_600_000, "increment_ms": 30_000})
    position = Position.from_fen(START_FEN)
    out = [started]
    for ply, move in enumerate(MOVES, start=1):
        position = position.play(Move.parse(move))
        out.append(make_event("BoardStable", board, source="vision", source_seq=ply, occurred_at=T0 + ply * 20_000_000,
                              received_at=T0 + ply * 20_000_000, squares=position.squares(), frame_sha256="0" * 64))
    return out


def test_observations_sent_again_after_a_restart_are_folded_once_and_make_no_ruling(tmp_path: Path) -> None:
    started, *seen = _inputs("9")
    with SqliteLedger(tmp_path / "l.sqlite") as ledger, SqliteLedger(tmp_path / "u.sqlite") as plain:
        referee = Referee(ledger)
        referee.handle_batch([(started, Origin("xq.arbiter", 0, 0))])
        # The referee read the first two observations (offsets 10, 11 of the lost broker) ...
        first = referee.handle_batch([(e, Origin("xq.observations", 0, 10 + i)) for i, e in enumerate(seen[:2])])
        assert [o.data["iccs"] for o in first if o.type == "MoveMade"] == MOVES[:2]
        head = ledger.head("g-a")
        # ... and vision, not knowing it had, sends all four again to the restarted broker (offsets 0-3), then none
        # other: the two read are taken as replays; the two unread make their moves.
        again = referee.handle_batch([(e, Origin("xq.observations", 0, i)) for i, e in enumerate(seen)])
        assert referee.replays == 2 and ledger.head("g-a")[0] > head[0]
        assert [o.type for o in again if o.type not in ("MoveMade", "BoardStable")] == []  # no alert, no ruling
        assert [o.data["iccs"] for o in again if o.type == "MoveMade"] == MOVES[2:]
        # The same copy read again at an offset that is, by chance, that of its first copy: its own outputs at most,
        # the same events (ids the stream's consumers drop as doubles), nothing new in the ledger.
        head = ledger.head("g-a")
        redelivered = referee.handle_batch([(seen[0], Origin("xq.observations", 0, 10))])
        assert {o.event_id for o in redelivered} <= {o.event_id for o in first} and ledger.head("g-a") == head
        # The game is the one an uninterrupted referee folds.
        plain_referee = Referee(plain)
        plain_referee.handle_batch([(e, Origin("xq.observations", 0, i)) for i, e in enumerate([started, *seen])])
        assert plain.head("g-a")[0] == ledger.head("g-a")[0]
