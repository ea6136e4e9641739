"""The public API other parts code against (the rules API contract): every name there, importable from the package."""

from __future__ import annotations

import importlib

import xqarb.referee.rules as rules


def test_every_public_name_resolves() -> None:
    assert sorted(rules.__all__) == sorted(rules._LAZY)
    for name in rules.__all__:
        module = importlib.import_module(f"xqarb.referee.rules.{rules._LAZY[name]}")
        assert getattr(rules, name) is getattr(module, name), name


def test_contract_signatures() -> None:
    from xqarb.referee.rules import START_FEN, IllegalMove, Move, NotationError, Position, chinese, parse_move, wxf

    assert issubclass(rules.FenError, ValueError) and issubclass(IllegalMove, ValueError)
    assert issubclass(NotationError, ValueError)
    mv = Move.parse("h2e2")
    assert mv == Move("h2", "e2") and str(mv) == mv.iccs == "h2e2" and mv.frm == "h2" and mv.to == "e2"
    pos = Position.from_fen(START_FEN)
    assert pos.play(mv).side == "black"
    assert isinstance(pos.key, int) and pos.plies_since_capture == 0
    assert chinese(pos, mv) == "炮二平五" and wxf(pos, mv) == "C2=5" and rules.iccs(mv) == "h2e2"
    assert parse_move(pos, "炮二平五") == mv
    try:
        pos.play(Move("a0", "a5"))
    except IllegalMove as exc:
        assert exc.reason == "the rook's path is blocked at a3"
    else:
        raise AssertionError("an illegal move was played")
