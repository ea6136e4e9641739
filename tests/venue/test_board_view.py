"""A board's summary on /api/boards over one game after another: each game is shown from its own start."""

from __future__ import annotations

from xqarb.events import make_event
from xqarb.referee.api import START_FEN, BoardView, apply_to_view

HANDICAP = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/R1BAKABNR w - - 0 1"  # 让子: Red without the horse b0


def _event(kind: str, seq: int, **fields):
    return make_event(kind, "3", source="t", source_seq=seq, occurred_at=seq, received_at=seq, **fields)


def _started(game_id: str, seq: int, start_fen: str | None = None):
    return _event("GameStarted", seq, game_id=game_id, red_player="A", black_player="B", start_fen=start_fen,
                  time_control={"scheme": "sudden_death", "base_ms": 900_000})


def test_the_next_game_on_a_board_is_shown_from_its_own_start() -> None:
    view = BoardView("3")
    apply_to_view(view, _started("g1", 1))
    apply_to_view(view, _event("MoveMade", 2, game_id="g1", ply=1, side="red", iccs="h2e2", wxf="C2=5",
                               chinese="炮二平五", fen_after="rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/"
                               "RNBAKABNR b - - 1 1", red_ms=None, black_ms=None))
    assert (view.game_id, view.ply) == ("g1", 1)
    apply_to_view(view, _started("g2", 3, HANDICAP))
    assert (view.game_id, view.ply, view.fen, view.last_move) == ("g2", 0, HANDICAP, None)
    apply_to_view(view, _started("g3", 4))
    assert (view.game_id, view.fen) == ("g3", START_FEN)
