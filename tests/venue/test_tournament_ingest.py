"""GameStarted's tournament fields through ingest: accepted as given, refused where they place a game nowhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.venue.edges import auth, make_venue

START = {"type": "GameStarted", "game_id": "g-t", "red_player": "甲", "black_player": "乙",
         "time_control": {"scheme": "increment", "base_ms": 600_000, "increment_ms": 5_000},
         "event": "Open", "round": 2, "board_no": 3}  # fmt: skip


@pytest.mark.parametrize("bad", [{"round": 0}, {"board_no": -1}, {"round": 10_001}])
def test_a_round_or_board_below_one_is_refused(tmp_path: Path, bad: dict[str, int]) -> None:
    v = make_venue(tmp_path)
    r = v.ingest.post("/ingest/v1/boards/7/events", json={**START, **bad}, headers=auth("chief"))
    assert r.status_code == 422 and r.get_json()["error"] == "out_of_range", r.get_json()
    assert v.publisher.sent == []


def test_the_tournament_fields_reach_the_published_event(tmp_path: Path) -> None:
    v = make_venue(tmp_path)
    r = v.ingest.post("/ingest/v1/boards/7/events", json=START, headers=auth("chief"))
    assert r.status_code == 202, r.get_json()
    [event] = [e for topic, e in v.publisher.sent if topic == "xq.arbiter"]
    assert (event.data["event"], event.data["round"], event.data["board_no"]) == ("Open", 2, 3)
