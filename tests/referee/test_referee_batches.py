"""The ledger does not depend on how inputs were batched: many boards' inputs appended one poll at a time (one
transaction, one batch per game) give, entry for entry, the bytes of appending them one input at a time."""

from __future__ import annotations

from pathlib import Path

import pytest

from xqarb.events import Event
from xqarb.referee.cli import synthesize
from xqarb.referee.ledger import SqliteLedger
from xqarb.referee.rules import read_pgn
from xqarb.referee.service import Referee


def _interleaved(shared_data: Path) -> list[Event]:
    records = read_pgn((shared_data / "games" / "ccpd_dev.pgn").read_text(encoding="utf-8"))[:4]
    streams = [synthesize(record, f"ccpd#{n}").events[:41] for n, record in enumerate(records)]
    out: list[Event] = []
    for i in range(max(len(s) for s in streams)):  # boards playing at once, as a partition delivers them
        out.extend(s[i] for s in streams if i < len(s))
    return out


def _ledger_bytes(path: Path, inputs: list[Event], batch: int) -> dict[str, list[bytes]]:
    ledger = SqliteLedger(path)
    referee = Referee(ledger)
    for start in range(0, len(inputs), batch):
        referee.handle_batch([(e, None) for e in inputs[start : start + batch]])
    chains = {g.game_id: [r.body + r.hash.encode() for r in ledger._rows(g.game_id, 0, None)]
              for g in ledger.games()}
    ledger.close()
    return chains


@pytest.mark.parametrize("batch", [7, 500])
def test_batched_appends_give_the_ledger_of_one_by_one_appends(shared_data: Path, tmp_path: Path,
                                                               batch: int) -> None:
    inputs = _interleaved(shared_data)
    one_by_one = _ledger_bytes(tmp_path / "single.sqlite", inputs, 1)
    batched = _ledger_bytes(tmp_path / f"batch{batch}.sqlite", inputs, batch)
    assert list(batched) == list(one_by_one)  # the same games, created in the same order
    assert len(one_by_one) == 4 and all(len(chain) > 40 for chain in one_by_one.values())
    for game_id, chain in one_by_one.items():
        assert batched[game_id] == chain, game_id
