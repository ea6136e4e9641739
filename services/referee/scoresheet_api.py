"""The scoresheet over HTTP (article 9), a Flask blueprint of its own:

- `GET /api/games/<id>/scoresheet`: the sheet as JSON (services/referee/scoresheet.py);
- `GET /games/<id>/scoresheet.html`: the sheet ready to print on A4 and sign.

And the check an arbiter's sign-off (`ArbiterDecision` with `action: "sign_off"`, posted to
`POST /api/games/<id>/actions`) passes before it is published: the game has ended, the sheet is not yet signed,
and the result named (if any) is the one recorded; the result and the article are filled in when left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import Blueprint, Response

from xqarb.referee.http_json import ApiError, error_response, json_response
from xqarb.referee.scoresheet import (
    SIGN_OFF_ACTION,
    SIGN_OFF_ARTICLES,
    Scoresheet,
    SignOffRefused,
    check_sign_off,
    render_html,
    scoresheet_of,
)


def _remaining(state: Mapping[str, Any]) -> tuple[int, int] | None:
    """Each side's time left by the referee's clock model, where the fold reached the result (its clock stopped)."""
    if state.get("result") and isinstance(state.get("red_ms"), int) and isinstance(state.get("black_ms"), int):
        return state["red_ms"], state["black_ms"]
    return None


def sheet_for(api: Any, game_id: str) -> Scoresheet:
    """The game's scoresheet from the ledger (404 through the API's own error when there is no such game)."""
    info = api._public_game(game_id)  # the board's broadcast delay for the public; live for its arbiter
    entries = [e.to_json() for e in api.ledger.entries(game_id, 0, info.entries)]
    state = api._state(game_id, info.entries).get("state") or {}
    return scoresheet_of(entries, _remaining(state))


def prepare_action(api: Any, game_id: str, obj: Any) -> Any:
    """An arbiter action as it will be published: a sign-off gets its result and article and is checked (9);
    anything else is returned as it is. Refusal 409 for a sign-off the sheet cannot take."""
    if not isinstance(obj, dict) or obj.get("type") != "ArbiterDecision" or obj.get("action") != SIGN_OFF_ACTION:
        return obj
    from xqarb.ingest.refusal import Refusal

    sheet = sheet_for(api, game_id)
    result = obj.get("result")
    try:
        check_sign_off(sheet, result if isinstance(result, str) else "")
    except SignOffRefused as exc:
        raise Refusal(409, exc.error, exc.detail) from exc
    article = SIGN_OFF_ARTICLES.get(sheet.ruleset, "9")
    return {**obj, "result": sheet.result, "article": obj.get("article") or article}


def scoresheet_blueprint(api: Any) -> Blueprint:
    """The routes; `api` is the RefereeApi (its ledger, game look-up and folded state)."""
    bp = Blueprint("scoresheet", __name__)
    bp.register_error_handler(ApiError, error_response)

    @bp.get("/api/games/<game_id>/scoresheet")
    def scoresheet_json(game_id: str) -> Response:
        sheet = sheet_for(api, game_id)
        return json_response(sheet.to_json())

    @bp.get("/games/<game_id>/scoresheet.html")
    def scoresheet_html(game_id: str) -> Response:
        return Response(render_html(sheet_for(api, game_id)), mimetype="text/html")

    return bp
