"""The demo's perpetual check (issue 38): board 1 plays a short scripted game in which Red's rook checks without
end, through the cameras like any other game; the referee raises its repetition alert (red 长将, black 闲), the
demo's arbiter confirms it through the actions endpoint, and the game ends 0-1 by 4.1.4."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from xqarb.broker import free_port
from xqarb.demo import ArbiterDesk, DemoBoard, DemoOptions
from xqarb.demo_perpetual import PERPETUAL_FEN, PERPETUAL_GAME, perpetual_options, with_perpetual

BUDGET_S = 300  # the whole run: start-up, 8 plies at real time, the alert, the confirmation (a busy machine)


def test_the_perpetual_game_comes_second_on_board_one_and_never_with_calm_alone() -> None:
    games = [{"id": str(i)} for i in range(8)]
    assert [g["id"] for g in with_perpetual(games, 2, 3)][:6] == ["0", "perpetual-check", "1", "2",
                                                                  "perpetual-check", "3"]
    assert with_perpetual(games, 0, 6) == games
    assert perpetual_options(False, calm=True) == {}
    assert perpetual_options(False, calm=False)["perpetual_first"] == 2
    assert perpetual_options(True, calm=True)["perpetual_first"] == 1


def test_the_perpetual_game_starts_from_its_position_and_is_never_cut_short() -> None:
    sent: list[dict[str, Any]] = []
    board = DemoBoard("http://x", "1", ("cam-1", "t"), None, ArbiterDesk("a"), [PERPETUAL_GAME],
                      DemoOptions(max_moves=2, clock_mode="strict"), threading.Event())
    board._post_json = lambda endpoint, token, obj: sent.append(obj) or {}  # type: ignore[method-assign]
    board.game, board.game_id = PERPETUAL_GAME, "g"
    board.start_game(1)
    assert sent[0]["start_fen"] == PERPETUAL_FEN


def test_the_referee_alerts_the_scripted_game_as_red_checking_perpetually() -> None:
    """The scripted record itself (no cameras): legal, and its last ply brings the position round the third time,
    where the referee raises the alert that points to Red's loss by 4.1.4."""
    from tests.referee.conftest import Scenario
    from xqarb.referee.rules import Move, Position

    position = Position.from_fen(PERPETUAL_FEN)
    for ply, iccs in enumerate(PERPETUAL_GAME["iccs"]):
        assert position.is_legal(Move.parse(iccs)), iccs
        position = position.play(Move.parse(iccs))
        assert position.in_check() == (ply % 2 == 0)  # Red's every move checks; Black's never do
    r = Scenario(start_fen=PERPETUAL_FEN).moves(*PERPETUAL_GAME["iccs"]).run()
    [alert] = [a for a in r.of("AttentionNeeded") if a["kind"] == "repetition"]
    assert alert["patterns"] == {"red": "长将", "black": "闲"} and alert["result"] == "0-1"
    assert alert["article"].startswith("4.1.4") and r.ended is None  # the arbiter's confirmation ends it


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.loads(resp.read())


@pytest.mark.skipif(importlib.util.find_spec("xqarb.vision.service") is None, reason="no vision service")
@pytest.mark.timeout(BUDGET_S + 60)
def test_demo_perpetual_check_is_alerted_confirmed_and_ends_by_4_1_4(tmp_path: Path) -> None:
    port = free_port()
    log_path = tmp_path / "up.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "xqarb.cli", "up", "--demo", "--boards", "1", "--calm", "--perpetual",
             "--port", str(port), "--data-dir", str(tmp_path), "--partitions", "4"],
            stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )  # fmt: skip
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + BUDGET_S
            game_id, state = None, {}
            while not state.get("result"):
                assert proc.poll() is None, log_path.read_text()[-3000:]
                assert time.monotonic() < deadline, f"no result: {state}\n{log_path.read_text()[-3000:]}"
                time.sleep(2)
                try:
                    games = [g["game_id"] for g in _get(f"{url}/api/games")["games"]]
                    game_id = next((g for g in games if "perpetual-check" in g), None)
                    state = _get(f"{url}/api/games/{game_id}")["state"] if game_id else {}
                except OSError:
                    continue
            entries = _get(f"{url}/api/games/{game_id}/events?after=0&limit=5000")["entries"]
            events = [e["event"] for e in entries]
            assert [e["iccs"] for e in events if e["type"] == "MoveMade"] == PERPETUAL_GAME["iccs"]
            [alert] = [e for e in events if e["type"] == "AttentionNeeded" and e.get("kind") == "repetition"]
            assert alert["patterns"] == {"red": "长将", "black": "闲"} and alert["result"] == "0-1"
            [decision] = [e for e in events if e["type"] == "ArbiterDecision"]
            assert (decision["action"], decision["alert"]) == ("confirm", alert["event_id"])
            [ended] = [e for e in events if e["type"] == "GameEnded"]
            assert ended["result"] == "0-1" and ended["article"].startswith("4.1.4")
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
