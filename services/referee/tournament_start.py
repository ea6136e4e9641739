"""`POST /api/tournament/rounds/<n>/start`: a round started across all its boards, each pairing's GameStarted
(event, round, board number, players, time control) published on its board as if the arbiter had posted it to
ingest (`POST /ingest/v1/boards/<board>/events`): the same checks, the same outbox or broker, the same answer.

The adapter: which pairings start, or why not, is xqarb.tournament.rounds (pure). Board number k is the venue's
board `boards[k-1]` of the organiser's definition, else the k-th board of the venue configuration (as the demo
tournament seats its boards). The arbiter's token must be allowed on every board of the round.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from flask import request

from xqarb.tournament.model import Event
from xqarb.tournament.rounds import RoundStart, RoundStartError, plan_round_start, round_game_id

# GameStarted fields a round start may set for all its games (DESIGN's GameStarted); the rest come from the pairing.
OPTIONAL_FIELDS = ("ruleset", "rapid", "level", "natural_limit_rounds", "recording_required", "start_fen")


class StartRefused(Exception):
    def __init__(self, status: int, error: str, detail: str, body: Mapping[str, Any] | None = None) -> None:
        super().__init__(detail)
        self.status, self.error, self.detail, self.body = status, error, detail, dict(body or {})


class RoundStarter:
    """Starts rounds; remembers, per event and round, the boards it started, so that a second start arriving before
    the referee wrote the first games to the ledger is refused too, not published twice."""

    def __init__(self) -> None:
        self._started: dict[tuple[str, int], set[int]] = {}
        self._lock = threading.Lock()

    def start(self, ingest: Any, event: Event, round_no: int, board_ids: Sequence[str],
              time_control: Any, body: Mapping[str, Any]) -> dict[str, Any]:  # fmt: skip
        with self._lock:  # one start at a time: two arbiters pressing at once start the round once
            plan = self._plan(event, round_no)
            seats = self._seats(plan, board_ids)
            who = self._authorize(ingest, seats.values())
            tc = body.get("time_control", time_control)
            if not isinstance(tc, Mapping):
                raise StartRefused(422, "no_time_control",
                                   "the games need a time_control (DESIGN's GameStarted): give one in the request "
                                   "body or in the tournament definition")  # fmt: skip
            started = []
            for g in plan.to_start:
                row = self._publish(ingest, who, event, g, seats[g.board], tc, body)
                self._started.setdefault((event.name, round_no), set()).add(g.board)
                started.append(row)
        return {
            "event": event.name, "round": round_no, "started": started,
            "already_started": [{"board": g.board, "game_id": g.game_id or None} for g in plan.running],
            "byes": [{"board": g.board, "player": g.red} for g in plan.byes],
        }  # fmt: skip

    def _plan(self, event: Event, round_no: int) -> RoundStart:
        try:
            return plan_round_start(event, round_no, self._started.get((event.name, round_no), set()))
        except RoundStartError as exc:
            raise StartRefused(404 if exc.error == "unknown_round" else 409, exc.error, str(exc)) from exc

    @staticmethod
    def _seats(plan: RoundStart, board_ids: Sequence[str]) -> dict[int, str]:
        missing = [g.board for g in plan.to_start if g.board > len(board_ids)]
        if missing:
            raise StartRefused(409, "no_such_board",
                               f"round {plan.round} needs board(s) {', '.join(map(str, missing))} but the venue has "
                               f"{len(board_ids)} for this tournament")  # fmt: skip
        return {g.board: board_ids[g.board - 1] for g in plan.to_start}

    @staticmethod
    def _authorize(ingest: Any, boards: Any) -> Any:
        from xqarb.ingest.validate import Refusal

        who = None
        try:
            for board_id in boards:  # every board first: a round is started whole or not at all
                who = ingest.authenticate(board_id)
                if not who.is_arbiter:
                    raise Refusal(403, "arbiter_only", "a round is started with an arbiter's token")
        except Refusal as refusal:
            raise StartRefused(refusal.status, refusal.error, refusal.detail) from refusal
        return who

    @staticmethod
    def _publish(ingest: Any, who: Any, event: Event, g: Any, board_id: str, tc: Mapping[str, Any],
                 body: Mapping[str, Any]) -> dict[str, Any]:  # fmt: skip
        from xqarb.ingest.validate import TOPIC_ARBITER, Refusal, json_post

        names = {p.no: p.name for p in event.players}
        game_id = round_game_id(event.name, g.round, g.board)
        obj = {
            "type": "GameStarted", "game_id": game_id, "event_id": f"start-{game_id}",
            "red_player": names[g.red], "black_player": names[g.black], "event": event.name, "round": g.round,
            "board_no": g.board, "time_control": dict(tc), **{k: body[k] for k in OPTIONAL_FIELDS if k in body},
        }  # fmt: skip
        limits = ingest.config.limits
        try:
            started = ingest.accept(json_post(obj, board_id=board_id, principal_id=who.id, role=who.role,
                                             allowed=frozenset({"GameStarted"}), now_us=time.time_ns() // 1000,
                                             max_skew_s=limits.max_skew_s))  # fmt: skip
        except Refusal as refusal:
            raise StartRefused(refusal.status, refusal.error, f"board {g.board}: {refusal.detail}") from refusal
        resp = ingest.published(ingest.publish(TOPIC_ARBITER, started), started)
        if resp.status_code != 202:
            answer = json.loads(resp.get_data())
            raise StartRefused(resp.status_code, answer.get("error", "not_published"),
                               f"board {g.board}: {answer.get('detail', '')}; the boards before it were started "
                               f"(start the round again for the rest)")  # fmt: skip
        return {"board": g.board, "board_id": board_id, "game_id": game_id, "event_id": started.event_id,
                "red": names[g.red], "black": names[g.black]}  # fmt: skip


def require_arbiter(ingest: Any) -> None:
    """401 without a known token, 403 for a device's: before anything about the round is said (what is live is
    behind the broadcast delay for everyone else)."""
    from xqarb.ingest.app import bearer_token

    who = ingest.config.principal(bearer_token())
    if who is None:
        raise StartRefused(401, "unauthorized", "an arbiter's Authorization: Bearer <token> header is required")
    if not who.is_arbiter:
        raise StartRefused(403, "arbiter_only", "a round is started with an arbiter's token")


def request_body(limit: int) -> dict[str, Any]:
    """The optional JSON object of the request (GameStarted fields for all the round's games)."""
    length = request.content_length
    if length is not None and length > limit:
        raise StartRefused(413, "too_large", f"the body is {length} bytes; at most {limit} are accepted here")
    data = request.get_data(cache=False)
    if len(data) > limit:
        raise StartRefused(413, "too_large", f"the body is over {limit} bytes, the most accepted here")
    if not data.strip():
        return {}
    try:
        obj = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise StartRefused(400, "bad_json", f"the body is not JSON: {exc}") from exc
    if not isinstance(obj, dict):
        raise StartRefused(400, "bad_json", "the body must be a JSON object (GameStarted fields for the round)")
    return obj
