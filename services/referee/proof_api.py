"""The tamper-evidence endpoints of the referee API (a blueprint of its own beside api.py's):

- `GET /api/games/<id>/tree-head`: the latest signed tree head published on xq.game-events for the game;
- `GET /api/games/<id>/proof/inclusion?seq=N&size=M`: entry N is under the tree of the first M entries (M: the
  latest published head's size, else the ledger's);
- `GET /api/games/<id>/proof/consistency?from=M&to=N`: the tree of M entries is a prefix of the tree of N (N as
  M above);
- `GET /api/venue/public-key`: the key that signs the heads (Ed25519; PEM and hex).
Answers are the items of a proof document (proof_file.py), so a checker saves them as they come. Bad parameters
answer 400 and unknown games or sizes 404, in the API's JSON error form.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from flask import Blueprint, Response

from xqarb.referee.http_json import ApiError, error_response, int_arg, json_response
from xqarb.referee.merkle import ProofError
from xqarb.referee.proof_file import consistency_json, entry_bytes, inclusion_json
from xqarb.referee.tree_head import EVENT_TYPE, SignedTreeHead, TreeHeadError
from xqarb.referee.venue_key import VenueKeyError, key_path, load_private_key, public_key_json


def _venue_public_key() -> Ed25519PublicKey | None:
    path = key_path()
    if not path.exists():
        return None
    return load_private_key(path).public_key()


class LatestHeads:
    """The latest TreeHead of each game seen on the stream (fed by StreamHub.listen)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._heads: dict[str, SignedTreeHead] = {}

    def on_item(self, item: Any) -> None:
        if item.event.type != EVENT_TYPE:
            return
        try:
            signed = SignedTreeHead.from_event(item.event)
        except TreeHeadError:
            return  # not ours to judge here: the checker refuses it with its reason
        with self._lock:
            known = self._heads.get(signed.head.game_id)
            if known is None or signed.head.tree_size >= known.head.tree_size:
                self._heads[signed.head.game_id] = signed

    def get(self, game_id: str) -> SignedTreeHead | None:
        with self._lock:
            return self._heads.get(game_id)


def proof_blueprint(ledger: Any, hub: Any | None,
                    public_key: Callable[[], Ed25519PublicKey | None] = _venue_public_key) -> Blueprint:
    """The blueprint over a ledger (stored_rows, board_of) and a stream hub (its TreeHead events)."""
    heads = LatestHeads()
    if hub is not None:
        hub.listen(heads.on_item)
    bp = Blueprint("referee_proofs", __name__, static_folder=None)

    bp.register_error_handler(ApiError, error_response)

    def game(game_id: str) -> tuple[str, list[bytes]]:
        board = ledger.board_of(game_id)
        if board is None:
            raise ApiError(404, "unknown_game", f"no game {game_id!r} in the ledger")
        return board, [entry_bytes(row.body) for row in ledger.stored_rows(game_id)]

    def default_size(game_id: str, entries: int) -> int:
        latest = heads.get(game_id)
        return latest.head.tree_size if latest is not None and latest.head.tree_size <= entries else entries

    @bp.get("/api/games/<game_id>/tree-head")
    def tree_head(game_id: str) -> Response:
        latest = heads.get(game_id)
        if latest is None:
            if ledger.board_of(game_id) is None:
                raise ApiError(404, "unknown_game", f"no game {game_id!r} in the ledger")
            raise ApiError(404, "no_tree_head", f"no signed tree head of game {game_id!r} has been published "
                                                     "on xq.game-events yet")
        return json_response(latest.to_json())

    @bp.get("/api/games/<game_id>/proof/inclusion")
    def inclusion(game_id: str) -> Response:
        seq, size = int_arg("seq", None, minimum=1), int_arg("size", None, minimum=1)
        if seq is None:
            raise ApiError(400, "bad_parameter", "seq (the entry to prove) is required")
        board, bodies = game(game_id)
        size = default_size(game_id, len(bodies)) if size is None else size
        if not 1 <= seq <= size:
            raise ApiError(400, "bad_parameter", f"seq must be between 1 and size ({size}), not {seq}")
        if size > len(bodies):
            raise ApiError(404, "unknown_size", f"game {game_id} has {len(bodies)} entries, not {size}")
        try:
            return json_response(inclusion_json(game_id, board, bodies, seq, size))
        except ProofError as exc:  # unreachable after the checks above; kept a 4xx should they ever drift
            raise ApiError(400, "bad_parameter", str(exc)) from exc

    @bp.get("/api/games/<game_id>/proof/consistency")
    def consistency(game_id: str) -> Response:
        first, second = int_arg("from", None, minimum=1), int_arg("to", None, minimum=1)
        if first is None:
            raise ApiError(400, "bad_parameter", "from (the size of the earlier head) is required")
        _, bodies = game(game_id)
        second = default_size(game_id, len(bodies)) if second is None else second
        if not 1 <= first <= second:
            raise ApiError(400, "bad_parameter", f"from must be between 1 and to ({second}), not {first}")
        if second > len(bodies):
            raise ApiError(404, "unknown_size", f"game {game_id} has {len(bodies)} entries, not {second}")
        try:
            return json_response(consistency_json(game_id, bodies, first, second))
        except ProofError as exc:
            raise ApiError(400, "bad_parameter", str(exc)) from exc

    @bp.get("/api/venue/public-key")
    def venue_public_key() -> Response:
        try:
            key = public_key()
        except VenueKeyError as exc:
            raise ApiError(503, "venue_key_unreadable", str(exc)) from exc
        if key is None:
            raise ApiError(404, "no_venue_key", "this venue has no signing key yet (made on the first "
                                                     "`xqarb up` or `xqarb referee serve`)")
        return json_response(public_key_json(key))

    return bp
