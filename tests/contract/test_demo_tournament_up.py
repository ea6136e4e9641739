"""`xqarb up --demo --players 4 --rounds 2|3 --moves 2` and `--players 8 --rounds 3` end to end (slow: 72 s for
the Swiss of four, 105 s for the round robin, 127 s for the Swiss of eight on four boards, of rendered video
through vision and the referee on a two-core machine): the demo pairs every round, starts it on all its boards,
plays each game's first plies, ends it with a result, and `/api/tournament` and `/api/tournament/standings` show
what happened. Run with `-m slow`."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from itertools import combinations

import pytest

from .conftest import xqarb_command
from .test_http_up import _free_port, _request

POINTS = {"1-0": (2, 0), "0-1": (0, 2), "1/2-1/2": (1, 1)}  # 13.1


def _get(base: str, path: str) -> dict:
    status, _, body = _request(base + path)
    assert status == 200, (path, status, body[:300])
    return json.loads(body)


@pytest.mark.slow
@pytest.mark.parametrize(
    "players, n_rounds, system, names",
    [
        (4, 2, "swiss", ["对手分", "胜局", "犯规", "后走局数", "第1轮后积分"]),  # 14.3.1
        (4, 3, "round_robin", ["小分", "胜局", "直胜", "犯规", "后走局数", "对局时后走"]),  # 14.1: everyone meets
        (8, 3, "swiss", ["对手分", "胜局", "犯规", "后走局数", "第2轮后积分", "第1轮后积分"]),  # four boards a round
    ],
)
def test_demo_tournament_pairs_plays_and_ranks(tmp_path, players, n_rounds, system, names):
    port, data, log = _free_port(), tmp_path / "data", tmp_path / "up.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [*xqarb_command(), "up", "--demo", "--players", str(players), "--rounds", str(n_rounds), "--moves", "2",
             "--calm", "--quiet", "--port", str(port), "--data-dir", str(data)],
            cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline, tournament = time.monotonic() + 400, {}
        while time.monotonic() < deadline:
            assert proc.poll() is None, log.read_text(errors="replace")[-3000:]
            try:
                status, _, body = _request(base + "/api/tournament")
            except OSError:
                status = 0
            if status == 200:
                tournament = json.loads(body)
                games = [p for r in tournament["rounds"] for p in r["pairings"]]
                if len(games) == n_rounds * players // 2 and all(p["result"] for p in games):
                    break
            time.sleep(2)
        assert len(tournament.get("rounds", [])) == n_rounds, log.read_text(errors="replace")[-3000:]
        standings = _get(base, "/api/tournament/standings")
        assert standings["after_round"] == n_rounds

        event = tournament["event"]
        assert event["name"].startswith("xqarb") and event["system"] == system and event["rounds"] == n_rounds
        rounds = tournament["rounds"]
        assert [r["round"] for r in rounds] == list(range(1, n_rounds + 1))
        met: list[frozenset[int]] = []
        points = {p["no"]: 0 for p in tournament["players"]}
        for r in rounds:
            pairs = r["pairings"]
            assert [p["board"] for p in pairs] == list(range(1, players // 2 + 1))
            seated = [p["red"]["no"] for p in pairs] + [p["black"]["no"] for p in pairs]
            assert sorted(seated) == list(range(1, players + 1)), "everyone plays once a round"
            for p in pairs:
                assert p["result"] in POINTS and p["game_id"]
                met.append(frozenset((p["red"]["no"], p["black"]["no"])))
                red_pts, black_pts = POINTS[p["result"]]
                points[p["red"]["no"]] += red_pts
                points[p["black"]["no"]] += black_pts
        assert len(met) == len(set(met)), "no pairing repeats"
        assert set(met) <= {frozenset(c) for c in combinations(range(1, players + 1), 2)}

        rows = standings["standings"]
        assert [r["no"] for r in rows] != [] and sorted(r["no"] for r in rows) == list(range(1, players + 1))
        assert [r["points"] for r in rows] == sorted((r["points"] for r in rows), reverse=True)
        assert {r["no"]: r["points"] for r in rows} == points
        assert sum(points.values()) == 2 * n_rounds * players // 2  # 2 points a game under 13.1
        assert [r["rank"] for r in rows] == sorted(r["rank"] for r in rows) and rows[0]["rank"] == 1
        assert [t["name"] for t in standings["tiebreaks"]] == names
        for row in rows:
            won, drawn, met_points = 0.0, 0.0, 0
            for r in rounds:
                for p in r["pairings"]:
                    if row["no"] not in (p["red"]["no"], p["black"]["no"]):
                        continue
                    opp = p["black"]["no"] if p["red"]["no"] == row["no"] else p["red"]["no"]
                    mine = POINTS[p["result"]][0 if p["red"]["no"] == row["no"] else 1]
                    met_points += points[opp]
                    won += points[opp] if mine == 2 else 0
                    drawn += points[opp] / 2 if mine == 1 else 0
            # 对手分 (14.3.1): the points of every opponent; 小分 (14.1): of those beaten, half of those drawn.
            assert row["tiebreaks"][0]["value"] == (met_points if system == "swiss" else won + drawn)

        status, _, body = _request(base + "/api/tournament/rounds/1/pgn")
        pgn = body.decode("utf-8")
        assert status == 200 and pgn.count(f'[Event "{event["name"]}"]') == players // 2
        assert pgn.count('[Round "1"]') == players // 2
        status, _, body = _request(base + "/tournament.html")
        assert status == 200 and rows[0]["name"] in body.decode("utf-8")
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(45)
            except subprocess.TimeoutExpired:
                proc.kill()
