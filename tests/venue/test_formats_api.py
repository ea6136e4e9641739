"""`?notation=chinese|iccs|wxf` on a game's PGN and on a round's PGN: the same game in each notation, the tags
from the recorded facts (Round, Board, TimeControl, Termination) and the rulings as comments."""

from __future__ import annotations

from typing import Any

from xqarb.referee.rules.pgn import read_pgn, replay

from .test_api import MOVES
from .test_tournament_api import client, tournament_app  # noqa: F401 (fixtures)


def test_game_pgn_in_each_notation(api_setup: dict[str, Any]) -> None:
    c, g = api_setup["client"], api_setup["game"]
    expected = [iccs for iccs, _, _ in MOVES]
    firsts = {"chinese": "1. 炮二平五", "iccs": "1. H2-E2", "wxf": "1. C2=5"}
    for notation, first in firsts.items():
        r = c.get(f"/api/games/{g}/pgn?notation={notation}")
        text = r.get_data(as_text=True)
        assert r.status_code == 200 and first in text, (notation, text[:400])
        [record] = read_pgn(text)
        assert [m.iccs for m in replay(record).moves] == expected
    assert c.get(f"/api/games/{g}/pgn").get_data(as_text=True) == c.get(
        f"/api/games/{g}/pgn?notation=chinese").get_data(as_text=True)


def test_bad_notation_is_a_400_naming_the_choices(api_setup: dict[str, Any]) -> None:
    r = api_setup["client"].get(f"/api/games/{api_setup['game']}/pgn?notation=san")
    assert r.status_code == 400 and "chinese, iccs or wxf" in r.get_json()["detail"]


def test_round_pgn_tags_rulings_and_notation(client: Any) -> None:  # noqa: F811
    text = client.get("/api/tournament/rounds/1/pgn?notation=iccs").get_data(as_text=True)
    assert text.count('[Format "ICCS"]') == 2 and text.count('[TimeControl "900+10"]') == 2
    assert '[Termination "4.1.12: resigned"]' in text and '[Board "2"]' in text
    assert "{8.1.7: clock pressed without a move}" in text  # 丁's foul on board 1
    r = client.get("/api/tournament/rounds/1/pgn?notation=xx")
    assert r.status_code == 400 and r.get_json()["error"] == "bad_parameter"
