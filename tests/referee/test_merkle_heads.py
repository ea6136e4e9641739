"""Signed tree heads: the venue key, signing and checking a head, the TreeHead event, and the referee's publisher."""

from __future__ import annotations

import sqlite3
import stat
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from tests.ledger_stores import Store
from xqarb import codec
from xqarb.events import make_event
from xqarb.referee.head_publisher import TreeHeadPublisher
from xqarb.referee.ledger import Ledger, Pending
from xqarb.referee.merkle import root_of
from xqarb.referee.service import Referee
from xqarb.referee.tree_head import (
    SignedTreeHead,
    TreeHead,
    TreeHeadError,
    head_of,
    head_problem,
    leaves_of,
    sign_head,
)
from xqarb.referee.venue_key import (
    VenueKeyError,
    key_id,
    key_path,
    load_or_create_key,
    parse_public_key,
    public_key_json,
    read_public_key,
)

from .conftest import Scenario

T_SIGN = 1_767_225_700_000_000  # µs: the time a head is signed in these tests


def _game_ledger(store: Store, *moves: str, game: str = "g1", board: str = "b1") -> Ledger:
    """A real ledger of one game in either store: its inputs folded by the referee, inputs and outputs appended."""
    ledger = store.open()
    events = Scenario(board=board, game=game).moves(*moves).events()
    Referee(ledger).handle_batch([(event, None) for event in events])
    return ledger


# --- the key ---------------------------------------------------------------------------------------------------


def test_the_key_is_made_once_with_mode_0600_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "data" / "venue-key.pem"
    key = load_or_create_key(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = load_or_create_key(path)
    assert key_id(again.public_key()) == key_id(key.public_key())
    assert key_path({"XQARB_DATA_DIR": str(tmp_path / "data")}) == path
    assert key_path({"XQARB_VENUE_KEY": "/secrets/k.pem"}) == Path("/secrets/k.pem")


def test_a_key_file_that_is_no_ed25519_key_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "venue-key.pem"
    path.write_text("not a key")
    with pytest.raises(VenueKeyError, match="no unencrypted PEM private key"):
        load_or_create_key(path)
    assert path.read_text() == "not a key"  # never overwritten


def test_a_public_key_reads_back_from_pem_hex_or_a_file(tmp_path: Path) -> None:
    public = Ed25519PrivateKey.generate().public_key()
    shown = public_key_json(public)
    assert len(shown["key_id"]) == 64 and len(shown["public_key_hex"]) == 64
    for text in (shown["public_key_pem"], shown["public_key_hex"]):
        assert key_id(parse_public_key(text)) == shown["key_id"]
    (tmp_path / "venue.pub").write_text(shown["public_key_pem"])
    assert key_id(read_public_key(str(tmp_path / "venue.pub"))) == shown["key_id"]
    for bad in ("abcd", "zz" * 32, "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----"):
        with pytest.raises(VenueKeyError):
            parse_public_key(bad)


# --- heads -----------------------------------------------------------------------------------------------------


def test_a_signed_head_verifies_and_any_changed_field_does_not() -> None:
    key = Ed25519PrivateKey.generate()
    head = TreeHead("g1", "b1", 12, "ab" * 32, T_SIGN)
    signed = sign_head(head, key)
    assert head_problem(signed, key.public_key()) is None
    assert head.signed_bytes() == (
        b'{"board_id":"b1","format":"xqarb-tree-head/1","game_id":"g1","root_hash":"' + b"ab" * 32
        + b'","timestamp":1767225700000000,"tree_size":12}')
    for changed in (TreeHead("g1", "b2", 12, "ab" * 32, T_SIGN), TreeHead("g1", "b1", 11, "ab" * 32, T_SIGN),
                    TreeHead("g1", "b1", 12, "ac" * 32, T_SIGN), TreeHead("g2", "b1", 12, "ab" * 32, T_SIGN),
                    TreeHead("g1", "b1", 12, "ab" * 32, T_SIGN + 1)):
        problem = head_problem(SignedTreeHead(changed, signed.key_id, signed.signature), key.public_key())
        assert problem is not None and "does not verify" in problem
    other = Ed25519PrivateKey.generate().public_key()
    assert "names key" in (head_problem(signed, other) or "")


def test_a_head_goes_through_json_and_the_event_catalogue_unchanged() -> None:
    signed = sign_head(TreeHead("g1", "b1", 3, "0f" * 32, T_SIGN), Ed25519PrivateKey.generate())
    assert SignedTreeHead.from_json(signed.to_json()) == signed
    event = signed.to_event()
    assert event.type == "TreeHead" and event.board_id == "b1" and event.data["tree_size"] == 3
    wire = codec.decode(codec.encode(event))
    assert SignedTreeHead.from_event(wire) == signed
    assert SignedTreeHead.from_json(wire.to_json_dict()) == signed  # as the live stream shows it


@pytest.mark.parametrize(("change", "message"), [
    ({"tree_size": "3"}, "whole number"), ({"tree_size": -1}, "whole number"), ({"root_hash": "xyz"}, "64 hex"),
    ({"format": "other/2"}, "unknown tree head format"), ({"board_id": 7}, "is text"),
])
def test_a_malformed_head_is_refused_with_its_reason(change: dict, message: str) -> None:
    obj = sign_head(TreeHead("g1", "b1", 3, "0f" * 32, T_SIGN), Ed25519PrivateKey.generate()).to_json()
    with pytest.raises(TreeHeadError, match=message):
        SignedTreeHead.from_json({**obj, **change})
    with pytest.raises(TreeHeadError, match="lacks signature"):
        SignedTreeHead.from_json({k: v for k, v in obj.items() if k != "signature"})


# --- the publisher ---------------------------------------------------------------------------------------------


def test_the_publisher_signs_the_root_of_the_games_entries(store: Store) -> None:
    ledger = _game_ledger(store, "h2e2", "h9g7")
    key = Ed25519PrivateKey.generate()
    publisher = TreeHeadPublisher(ledger, key, min_interval_s=1.0)
    publisher.touched(["g1", "board:b1"])
    events = publisher.due(100.0, T_SIGN)
    assert [e.type for e in events] == ["TreeHead"]  # the board's chain of unassigned events gets none
    signed = SignedTreeHead.from_event(events[0])
    bodies = [row.body for row in ledger.stored_rows("g1")]
    assert signed.head == head_of("g1", "b1", bodies, T_SIGN)
    assert signed.head.tree_size == len(bodies) >= 5  # GameStarted, two moves seen and pressed, MoveMades
    assert bytes.fromhex(signed.head.root_hash) == root_of(leaves_of(bodies))
    assert head_problem(signed, key.public_key()) is None


def test_heads_follow_outputs_within_a_second_and_inputs_alone_every_30_s(store: Store) -> None:
    ledger = _game_ledger(store, "h2e2")
    publisher = TreeHeadPublisher(ledger, Ed25519PrivateKey.generate())  # 1 s and 30 s
    publisher.touched(["g1"])
    first = publisher.due(100.0, T_SIGN)
    size = SignedTreeHead.from_event(first[0]).head.tree_size

    def sizes(now_s: float) -> list[int]:
        return [SignedTreeHead.from_event(e).head.tree_size for e in publisher.due(now_s, T_SIGN + int(now_s))]

    ledger.append("g1", "b1", [Pending("input", _press(1))])
    publisher.touched(["g1"])  # an input, no output
    assert sizes(101.0) == [] and sizes(129.9) == []
    assert sizes(130.0) == [size + 1]  # the quiet game's entry is anchored half a minute on
    ruling = make_event("Ruling", "b1", source="referee:g1", source_seq=9, occurred_at=T_SIGN, received_at=T_SIGN,
                        game_id="g1", kind="foul", side="red", article="8.1.7", message="pressed without a move")
    ledger.append("g1", "b1", [Pending("input", _press(2)), Pending("output", ruling)])
    publisher.touched(["g1"], [ruling])  # the referee spoke: a head within a second
    assert sizes(130.5) == []
    assert sizes(131.0) == [size + 3]
    publisher.touched(["g1"], [ruling])
    assert sizes(200.0) == []  # nothing new: no second head of the same size


def _press(n: int) -> Any:
    return make_event("ClockPressed", "b1", source="clock-b1", source_seq=99 + n, occurred_at=T_SIGN + n,
                      received_at=T_SIGN + n, side="black", red_ms=None, black_ms=None)


def test_a_publisher_started_after_a_restart_reads_the_tree_from_the_ledger(store: Store) -> None:
    ledger = _game_ledger(store, "h2e2", "h9g7", "b0c2")
    key = Ed25519PrivateKey.generate()
    one = TreeHeadPublisher(ledger, key)
    one.touched(["g1"])
    two = TreeHeadPublisher(ledger, key)
    two.touched(["g1"])
    assert one.due(5.0, T_SIGN) == two.due(7.0, T_SIGN)  # same head, same signature, same event id


def test_the_referee_says_which_games_a_batch_appended_to(store: Store) -> None:
    ledger = store.open()
    referee = Referee(ledger)
    one = Scenario(board="b1", game="g1").moves("h2e2").events()
    two = Scenario(board="b2", game="g2").events()
    referee.handle_batch([(e, None) for e in one + two])
    assert sorted(referee.last_games) == ["g1", "g2"]
    referee.handle_batch([(e, None) for e in one])  # all replays: nothing appended
    assert referee.last_games == ()


def test_a_head_that_cannot_be_made_now_is_tried_again_at_the_next_poll(store: Store) -> None:
    ledger = _game_ledger(store, "h2e2")

    class Flaky:
        """The ledger, failing its first read as a locked database would."""

        failed = False

        def stored_rows(self, game_id: str, after: int = 0) -> list:
            if not Flaky.failed:
                Flaky.failed = True
                raise sqlite3.OperationalError("database is locked")
            return ledger.stored_rows(game_id, after)

        def board_of(self, game_id: str) -> str | None:
            return ledger.board_of(game_id)

    publisher = TreeHeadPublisher(Flaky(), Ed25519PrivateKey.generate(), min_interval_s=1.0)
    publisher.touched(["g1"])
    assert publisher.due(10.0, T_SIGN) == []
    assert [e.type for e in publisher.due(10.5, T_SIGN)] == ["TreeHead"]
