"""The issue's bar on rendered video of real games (slow: minutes per game; run with -m slow).

XQARB_VISION_GAMES (default 200) games of ccpd_dev.jsonl, the first XQARB_VISION_MOVES (default 40) moves of each,
hard scenes: the moves inferred from the BoardStable snapshots are the game's moves in at least 99.9 % of moves,
every piece left between two points is reported with its two candidates (5.10), and no lift is reported where
none happened. `python tests/vision/gamecheck.py` prints the same figures game by game.
XQARB_VISION_TRUTH_FIT=1 calibrates each board with the renderer's true corners (the tracker's own accuracy, board
finding aside); XQARB_VISION_DIFFICULTY (default hard) picks the scenes.
"""

from __future__ import annotations

import os

import pytest

pytestmark = pytest.mark.slow


def test_rendered_games_give_their_moves(shared_data) -> None:
    from gamecheck import GameResult, check_game, load_games

    n = int(os.environ.get("XQARB_VISION_GAMES", "200"))
    moves = int(os.environ.get("XQARB_VISION_MOVES", "40"))
    truth_fit = os.environ.get("XQARB_VISION_TRUTH_FIT", "0") == "1"
    difficulty = os.environ.get("XQARB_VISION_DIFFICULTY", "hard")
    games = load_games(shared_data / "games" / "ccpd_dev.jsonl", n, moves)
    tot = GameResult()
    for k, (fen, mv) in enumerate(games):
        r = check_game(fen, mv, 1000 + k, difficulty=difficulty, truth_fit=truth_fit)
        tot.moves += r.moves
        tot.inferred_ok += r.inferred_ok
        tot.misaligned_truth += r.misaligned_truth
        tot.misaligned_reported += r.misaligned_reported
        tot.false_lifts += r.false_lifts
    rate = tot.inferred_ok / max(1, tot.moves)
    assert rate >= 0.999, f"moves inferred {tot.inferred_ok}/{tot.moves} = {100 * rate:.2f}% over {len(games)} games"
    assert tot.misaligned_reported == tot.misaligned_truth
    assert tot.false_lifts == 0
