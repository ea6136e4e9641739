"""The tamper-evidence endpoints: the latest signed head from the stream, inclusion and consistency proofs from a
real ledger, the venue's public key, and 4xx JSON errors for bad parameters."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from tests.referee.conftest import Scenario
from xqarb.events import make_event
from xqarb.referee.api import RefereeApi, StreamHub, create_app
from xqarb.referee.head_publisher import TreeHeadPublisher
from xqarb.referee.ledger import Pending, SqliteLedger
from xqarb.referee.merkle import leaf_hash, verify_consistency, verify_inclusion
from xqarb.referee.proof_file import PROOF_FORMAT, check_document
from xqarb.referee.tree_head import SignedTreeHead
from xqarb.referee.venue_key import key_id, load_or_create_key

T_SIGN = 1_767_229_000_000_000


def _press(n: int) -> Any:
    return make_event("ClockPressed", "b1", source="clock-b1", source_seq=1000 + n, occurred_at=T_SIGN + n,
                      received_at=T_SIGN + n, side="red", red_ms=None, black_ms=None)


@pytest.fixture()
def proofs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    from xqarb.referee.service import Referee

    monkeypatch.setenv("XQARB_VENUE_KEY", str(tmp_path / "venue-key.pem"))
    key = load_or_create_key(tmp_path / "venue-key.pem")
    ledger = SqliteLedger(tmp_path / "ledger.sqlite")
    events = Scenario(board="b1", game="g1").moves("h2e2", "h9g7", "h0g2").events()
    Referee(ledger).handle_batch([(e, None) for e in events])
    hub = StreamHub()
    api = RefereeApi(ledger=ledger, hub=hub, board_ids=["b1"], load_frame=lambda sha: None)
    client = create_app(api).test_client()
    publisher = TreeHeadPublisher(ledger, key)
    yield {"client": client, "ledger": ledger, "hub": hub, "key": key, "publisher": publisher}
    ledger.close()


def _publish(p: dict[str, Any], offset: int, now_s: float) -> SignedTreeHead:
    p["publisher"].touched(["g1"])
    (event,) = p["publisher"].due(now_s, T_SIGN + offset)
    p["hub"].add(0, offset, event)
    return SignedTreeHead.from_event(event)


def test_the_latest_published_head_is_served(proofs: dict[str, Any]) -> None:
    c = proofs["client"]
    r = c.get("/api/games/g1/tree-head")
    assert r.status_code == 404 and r.get_json()["error"] == "no_tree_head"
    assert c.get("/api/games/nope/tree-head").get_json()["error"] == "unknown_game"
    first = _publish(proofs, 0, 0.0)
    assert c.get("/api/games/g1/tree-head").get_json() == first.to_json()
    proofs["ledger"].append("g1", "b1", [Pending("input", _press(1))])
    second = _publish(proofs, 1, 100.0)
    assert second.head.tree_size == first.head.tree_size + 1
    assert c.get("/api/games/g1/tree-head").get_json() == second.to_json()


def test_every_entry_has_an_inclusion_proof_under_the_published_head(proofs: dict[str, Any]) -> None:
    c = proofs["client"]
    head = _publish(proofs, 0, 0.0).head
    proofs["ledger"].append("g1", "b1", [Pending("input", _press(2))])  # after the head: not in its tree
    root = bytes.fromhex(head.root_hash)
    for seq in range(1, head.tree_size + 1):
        answer = c.get(f"/api/games/g1/proof/inclusion?seq={seq}").get_json()
        assert answer["tree_size"] == head.tree_size and answer["root_hash"] == head.root_hash
        leaf = leaf_hash(base64.b64decode(answer["entry"]))
        path = [bytes.fromhex(p) for p in answer["audit_path"]]
        assert verify_inclusion(leaf, seq - 1, head.tree_size, path, root), seq
    body = proofs["ledger"].stored_rows("g1", after=2, limit=1)[0].body
    answer = c.get("/api/games/g1/proof/inclusion?seq=3&size=4").get_json()
    assert base64.b64decode(answer["entry"]) == body and answer["tree_size"] == 4


def test_consistency_proofs_link_an_earlier_head_to_the_latest(proofs: dict[str, Any]) -> None:
    c = proofs["client"]
    first = _publish(proofs, 0, 0.0)
    proofs["ledger"].append("g1", "b1", [Pending("input", _press(n)) for n in range(3, 8)])
    second = _publish(proofs, 1, 100.0)
    answer = c.get(f"/api/games/g1/proof/consistency?from={first.head.tree_size}").get_json()
    assert (answer["from_size"], answer["to_size"]) == (first.head.tree_size, second.head.tree_size)
    path = [bytes.fromhex(p) for p in answer["consistency_path"]]
    assert verify_consistency(first.head.tree_size, second.head.tree_size, bytes.fromhex(first.head.root_hash),
                              bytes.fromhex(second.head.root_hash), path)
    # The answers as they come make a proof document that the stand-alone check accepts.
    inclusion = c.get("/api/games/g1/proof/inclusion?seq=2").get_json()
    document = {"format": PROOF_FORMAT, "game_id": "g1", "board_id": "b1", "heads": [second.to_json()],
                "inclusion": [inclusion], "consistency": [answer]}
    report = check_document(document, proofs["key"].public_key(), [first])
    assert report.ok, report.problems
    assert len(report.checked) == 4  # two signatures, one inclusion, one consistency


def test_the_venue_public_key_is_served(proofs: dict[str, Any], tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    r = proofs["client"].get("/api/venue/public-key")
    assert r.status_code == 200
    assert r.get_json()["key_id"] == key_id(proofs["key"].public_key())
    monkeypatch.setenv("XQARB_VENUE_KEY", str(tmp_path / "none.pem"))
    r = proofs["client"].get("/api/venue/public-key")
    assert r.status_code == 404 and r.get_json()["error"] == "no_venue_key"


@pytest.mark.parametrize(("query", "status"), [
    ("inclusion", 400), ("inclusion?seq=abc", 400), ("inclusion?seq=-1", 400), ("inclusion?seq=0", 400),
    ("inclusion?seq=1e3", 400), ("inclusion?seq=" + "9" * 5000, 400), ("inclusion?seq=3&size=2", 400),
    ("inclusion?seq=1&size=100000", 404), ("inclusion?seq=100000", 400),
    ("consistency", 400), ("consistency?from=0", 400), ("consistency?from=5&to=4", 400),
    ("consistency?from=1&to=100000", 404), ("consistency?from=x", 400),
    ("consistency?from=1&to=18446744073709551616", 400),
    ("inclusion?seq=%C2%B2", 400), ("consistency?from=%D9%A3", 400),  # superscript two; Arabic-Indic three
])
def test_bad_parameters_answer_4xx_json(proofs: dict[str, Any], query: str, status: int) -> None:
    r = proofs["client"].get(f"/api/games/g1/proof/{query}")
    assert r.status_code == status, (query, r.status_code, r.data[:200])
    body = r.get_json()
    assert body["error"] in ("bad_parameter", "unknown_size") and body["detail"]


def test_an_unknown_game_has_no_proofs(proofs: dict[str, Any]) -> None:
    for query in ("inclusion?seq=1", "consistency?from=1"):
        r = proofs["client"].get(f"/api/games/nope/proof/{query}")
        assert r.status_code == 404 and r.get_json()["error"] == "unknown_game"


def test_a_late_head_of_the_boards_previous_game_leaves_the_board_view_alone(proofs: dict[str, Any]) -> None:
    from xqarb.referee.api import BoardView, apply_to_view

    head = _publish(proofs, 0, 0.0)
    view = BoardView("b1")
    view.game_id, view.ply = "g2", 4  # the board's next game is on
    apply_to_view(view, head.to_event())
    assert (view.game_id, view.ply) == ("g2", 4)
