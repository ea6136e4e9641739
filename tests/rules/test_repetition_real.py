"""棋例 on repetitions from real master games (../shared/data/games/ccpd_dev.jsonl), with pyffish beside."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from xqarb.referee.rules import Move, Position
from xqarb.referee.rules.repetition import find_cycle, judge_repetition

sf = pytest.importorskip("pyffish")


def first_pending(shared_data: Path, name: str):
    """Replay the named game up to its first pending position (three occurrences)."""
    for line in (shared_data / "games" / "ccpd_dev.jsonl").read_text(encoding="utf-8").splitlines():
        game = json.loads(line)
        if game["game"].endswith(name):
            break
    else:
        pytest.skip(f"{name} is not in ccpd_dev.jsonl")
    positions = [Position.from_fen(game["start_fen"])]
    moves: list[Move] = []
    for text in game["iccs"]:
        mv = Move.parse(text)
        moves.append(mv)
        positions.append(positions[-1].play(mv))
        if find_cycle(positions) is not None:
            return game, positions, moves
    pytest.fail(f"{name}: no pending position")


def pyffish_loser(game, positions, moves) -> str | None:
    def uci(m: Move) -> str:
        return f"{m.frm[0]}{int(m.frm[1]) + 1}{m.to[0]}{int(m.to[1]) + 1}"

    end, value = sf.is_optional_game_end("xiangqi", game["start_fen"], [uci(m) for m in moves])
    assert end
    if value == 0:
        return None
    to_move = positions[-1].side
    return to_move if value < 0 else ("black" if to_move == "red" else "red")


def test_real_perpetual_check_by_red(shared_data):
    # 許銀川 game 852: Red's rook c9/c8 checks at every move, Black's king d8/d9 steps: Red lost (0-1).
    game, positions, moves = first_pending(shared_data, "許銀川/00000852.pgn")
    v = judge_repetition(positions, moves)
    assert v is not None
    assert v.patterns == {"red": "长将", "black": "闲"}
    assert (v.outcome, v.side, v.result) == ("loss", "red", "0-1") == ("loss", "red", game["result"])
    assert pyffish_loser(game, positions, moves) == "red"


def test_real_perpetual_check_by_black(shared_data):
    # 呂欽 game 2211: Black's cannon g0/g1 checks, Red's advisor e1/f0 blocks: Black lost (1-0).
    game, positions, moves = first_pending(shared_data, "呂欽/00002211.pgn")
    v = judge_repetition(positions, moves)
    assert v is not None
    assert v.patterns == {"red": "闲", "black": "长将"}
    assert (v.outcome, v.side, v.result) == ("loss", "black", game["result"])
    assert pyffish_loser(game, positions, moves) == "black"


def test_real_perpetual_chase_must_vary(shared_data):
    # 胡榮華 game 408: Red's rook b4/d4 chases Black's unprotected cannon b3/d3. CXA: Red must vary (26.4);
    # pyffish (AXF) scores it as Red's loss at once. Red went on to lose the game (0-1).
    game, positions, moves = first_pending(shared_data, "胡榮華/00000408.pgn")
    v = judge_repetition(positions, moves)
    assert v is not None
    assert v.patterns["red"] == "长捉"
    assert all(m.term == "捉" for m in v.moves if m.side == "red")
    assert any("attacks unprotected cannon" in m.reason for m in v.moves)
    assert (v.outcome, v.side) == ("must_vary", "red")
    assert pyffish_loser(game, positions, moves) == "red"


def test_real_discovered_chase_mixed_with_idle_is_a_draw(shared_data):
    # 五羊杯 game 1964: Black's elephant e7-c9 uncovers the horse e8's leg, attacking the unprotected horse f6
    # (a chase made by the move just played, 29.2), then c9-e7 is idle: 一捉一闲 is allowed, both allowed: draw.
    game, positions, moves = first_pending(shared_data, "五羊杯/00001964.pgn")
    v = judge_repetition(positions, moves)
    assert v is not None
    chase = [m for m in v.moves if m.term == "捉"]
    assert [m.move for m in chase] == ["e7c9"]
    assert chase[0].reason == "捉: horse e8 attacks unprotected horse f6"
    assert v.outcome == "draw"
    assert pyffish_loser(game, positions, moves) is None
    assert game["result"] == "1/2-1/2"


def _games(shared_data: Path):
    for name in ("ccpd_dev.jsonl", "liu_dahua_iccs.jsonl"):
        path = shared_data / "games" / name
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                yield json.loads(line)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_every_first_repetition_in_the_real_games(shared_data):
    """All 2,125 real games: judge each game's first pending position (211 of them, about 2 minutes).

    Every verdict names each move with a reason; every one-sided perpetual check we rule a loss, pyffish rules a
    loss for the same side; every must_vary pyffish either rules the same side's loss (AXF: a perpetual chase
    loses at once) or a draw (it has no 杀 and sees fewer chases: no chase through a check, none of a piece
    protected only in number, 少根).
    """
    seen = 0
    for game in _games(shared_data):
        positions = [Position.from_fen(game["start_fen"])]
        moves: list[Move] = []
        for text in game["iccs"]:
            mv = Move.parse(text)
            moves.append(mv)
            positions.append(positions[-1].play(mv))
            if find_cycle(positions) is None:
                continue
            v = judge_repetition(positions, moves)
            assert v is not None
            seen += 1
            assert len(v.moves) == v.cycle.length and all(m.reason for m in v.moves)
            assert v.outcome in ("draw", "loss", "must_vary", "judgment")
            loser = pyffish_loser(game, positions, moves)
            if v.outcome == "loss":
                assert "长将" in v.patterns.values()
                assert loser == v.side, game["game"]
            if v.outcome == "must_vary":
                assert loser in (v.side, None), game["game"]
            break
    assert seen > 100
