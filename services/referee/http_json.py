"""The referee API's JSON answers and error form, shared by every blueprint of the API.

Every refusal is `{"error": <code>, "detail": <what was wrong>}` with its HTTP status (DESIGN's error form), so a
client reads one shape whichever route answered. Query parameters that are numbers are read here once: a ledger
sequence number or a count is a 64-bit integer, and anything longer is refused before `int()` reads it (a number
of thousands of digits costs the server quadratic time).
"""

from __future__ import annotations

import json
import re
from typing import Any

from flask import Response, request


class ApiError(Exception):
    """A refusal with its HTTP status, a short machine-readable code and a detail for the person who sent it."""

    def __init__(self, status: int, error: str, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.error = error
        self.detail = detail


def json_response(obj: Any, status: int = 200) -> Response:
    return Response(json.dumps(obj, ensure_ascii=False), status=status, mimetype="application/json")


def error_response(exc: ApiError) -> Response:
    return json_response({"error": exc.error, "detail": exc.detail}, exc.status)


# The largest number a query parameter may hold: a ledger sequence number or a count is a 64-bit integer.
MAX_INT_ARG = 2**63 - 1
# At most 19 ASCII digits, an optional minus sign in front: no space, no "1e3", no non-ASCII digit.
_INT_ARG = re.compile(r"-?[0-9]{1,19}", re.ASCII)


def int_arg(name: str, default: int | None, *, minimum: int = 0) -> int | None:
    """The query parameter `name` as an integer from `minimum` to MAX_INT_ARG; `default` when absent or empty."""
    raw = request.args.get(name)
    if raw is None or raw == "":
        return default
    if not _INT_ARG.fullmatch(raw):
        raise ApiError(400, "bad_parameter", f"{name} must be an integer of at most 19 digits, not {raw[:40]!r}")
    value = int(raw)
    if value < minimum or value > MAX_INT_ARG:
        raise ApiError(400, "bad_parameter", f"{name} must be from {minimum} to {MAX_INT_ARG}, not {value}")
    return value
