"""Bounds on what a JSON body may hold: nesting, value count, numbers, text, identifiers, clock times.

The size of a body is bounded before it is read (`Limits.max_json_bytes`); this module bounds its shape and its
values, so that no body can exhaust the parser (a deeply nested array is a RecursionError in `json.loads`), no
number can overflow a store or a clock (a 5,000-digit integer is a ValueError in `int`), and nothing absurd
reaches the ledger, which keeps every accepted input for ever. Pure: takes bytes and values, raises `Refusal`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from xqarb.events import Event
from xqarb.ingest.refusal import Refusal

# The deepest catalogue event is a GameStarted: body > time_control > periods > one period, four levels. Twice
# that leaves room for fields added later and refuses the thousands of levels that overflow the parser's stack.
MAX_JSON_DEPTH = 8
# Values (objects, arrays, strings, numbers ...) in one body: an event has about 15 fields, a periods list a
# handful of objects of three; 256 is ten times what any catalogue event needs.
MAX_JSON_VALUES = 256
# Digits of an integer: 2^63 (an Avro long, the widest field of the catalogue) has 19.
MAX_INT_DIGITS = 19
# Characters of any text value (a note, a player's name, a scoresheet line): a paragraph.
MAX_TEXT_CHARS = 2_000
# Characters of an identifier (event_id, game_id): a UUID has 36; room for a venue's own readable scheme.
MAX_ID_CHARS = 128
# A clock face shows at most a day: the longest classical time control (6.2, 2 h + 1 h + 30 min a side) with
# every increment is far below it. A negative time is no time a device can show (a flagged side shows 0).
MAX_CLOCK_MS = 24 * 3_600_000
# An increment per move (6.1) beyond an hour is no time control a venue plays.
MAX_INCREMENT_MS = 3_600_000
# Periods of a moves-in-time control (6.2): two or three in practice.
MAX_PERIODS = 16
# Moves of one period (6.2): 30 or 40 in practice; a whole game has a few hundred.
MAX_PERIOD_MOVES = 1_000
# A sequence number or epoch beyond 2^53 is a corrupt counter, not a count (a device numbering a thousand events a
# second reaches it after 285,000 years); it is also the largest integer every JSON reader keeps exactly.
MAX_COUNTER = 2**53 - 1
# A scoresheet line's ply (7.x): the natural limit (10.x) ends any game long before.
MAX_PLY = 2_000

# A tournament's round or pairing board number (GameStarted.round, .board_no): a Swiss of thousands has a few
# thousand boards and a few dozen rounds.
MAX_TOURNAMENT_NUMBER = 10_000

_ID_RE = re.compile(r"^[\x21-\x7e]+$")  # printable ASCII, no spaces: ids travel in headers, URLs and logs


def _bounded_int(text: str) -> int:
    digits = text.lstrip("-")
    if len(digits) > MAX_INT_DIGITS:
        raise Refusal(400, "number_too_large", f"an integer of {len(digits)} digits; at most {MAX_INT_DIGITS} are "
                                               "accepted (a 64-bit integer)")
    return int(text)


def _finite_float(text: str) -> float:
    if len(text) > 64:
        raise Refusal(400, "number_too_large", f"a number written with {len(text)} characters; at most 64 accepted")
    value = float(text)
    if not math.isfinite(value):
        raise Refusal(400, "number_too_large", f"the number {text[:20]} is out of range (not a finite number)")
    return value


def _no_constant(name: str) -> Any:
    raise Refusal(400, "bad_json", f"{name} is not JSON (no NaN or Infinity)")


def _depth(payload: bytes) -> int:
    """The deepest nesting of arrays and objects, outside strings (a scan: the parser is not asked to try)."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in payload:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            deepest = max(deepest, depth)
        elif byte in (0x5D, 0x7D):  # ] }
            depth -= 1
    return deepest


def _check_shape(obj: Any) -> None:
    """At most MAX_JSON_VALUES values, every text at most MAX_TEXT_CHARS (keys included)."""
    count = 0
    todo = [obj]
    while todo:
        value = todo.pop()
        count += 1
        if count > MAX_JSON_VALUES:
            raise Refusal(400, "too_many_values", f"the body holds more than {MAX_JSON_VALUES} values; an event has "
                                                  "a few dozen at most")
        if isinstance(value, str):
            if len(value) > MAX_TEXT_CHARS:
                raise Refusal(400, "text_too_long", f"a text of {len(value)} characters; at most {MAX_TEXT_CHARS}")
        elif isinstance(value, dict):
            todo.extend(value.keys())
            todo.extend(value.values())
        elif isinstance(value, list):
            todo.extend(value)


def parse_json(payload: bytes) -> Any:
    """The body as JSON within the bounds above; `Refusal` (400) saying which bound, or why it is not JSON."""
    opening = payload.count(b"[") + payload.count(b"{")
    if opening > MAX_JSON_DEPTH and _depth(payload) > MAX_JSON_DEPTH:
        raise Refusal(400, "too_deep", f"the body nests arrays or objects deeper than {MAX_JSON_DEPTH} levels")
    try:
        text = payload.decode("utf-8")
        obj = json.loads(
            text, parse_int=_bounded_int, parse_float=_finite_float, parse_constant=_no_constant
        )
    except UnicodeDecodeError as exc:
        raise Refusal(400, "bad_json", f"the body is not UTF-8 text: {exc}") from None
    except ValueError as exc:  # JSONDecodeError is a ValueError
        raise Refusal(400, "bad_json", f"the body is not JSON: {exc}") from None
    except RecursionError:  # the scan above should have caught it; never a 500
        raise Refusal(400, "too_deep", "the body nests arrays or objects too deeply") from None
    _check_shape(obj)
    return obj


# --- the values of an event ----------------------------------------------------------------------------------


def check_id(value: Any, name: str) -> None:
    """An identifier: printable ASCII without spaces, at most MAX_ID_CHARS characters."""
    if not isinstance(value, str) or not value:
        raise Refusal(400, "invalid_field", f"{name} must be a non-empty string")
    if len(value) > MAX_ID_CHARS:
        raise Refusal(400, "invalid_field", f"{name} has {len(value)} characters; at most {MAX_ID_CHARS}")
    if not _ID_RE.fullmatch(value):
        raise Refusal(400, "invalid_field", f"{name} {value[:40]!r} must be printable ASCII without spaces")


def check_game_id(value: Any, name: str = "game_id") -> None:
    """A game id: printable text (a venue may use its own script), at most MAX_ID_CHARS characters."""
    if not isinstance(value, str) or not value.strip():
        raise Refusal(400, "invalid_field", f"{name} must be a non-empty string")
    if len(value) > MAX_ID_CHARS or not value.isprintable():
        raise Refusal(
            400, "invalid_field", f"{name} must be printable and at most {MAX_ID_CHARS} characters ({len(value)})"
        )


def check_counter(value: int, name: str) -> None:
    if not 0 <= value <= MAX_COUNTER:
        raise Refusal(400, "invalid_field", f"{name} {value} is out of range: 0 to {MAX_COUNTER}")


def _check_ms(value: Any, name: str, *, low: int, high: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise Refusal(422, "out_of_range", f"{name} must be an integer of ms from {low} to {high}, not {value!r}")


def check_time_control(tc: Mapping[str, Any]) -> None:
    """Bounds on a GameStarted's time control (6.1-6.5) beyond what its scheme requires."""
    for key in ("base_ms", "black_base_ms"):
        if key in tc:
            _check_ms(tc[key], f"time_control.{key}", low=1, high=MAX_CLOCK_MS)
    if "increment_ms" in tc:
        _check_ms(tc["increment_ms"], "time_control.increment_ms", low=0, high=MAX_INCREMENT_MS)
    if "late_forfeit_ms" in tc:
        _check_ms(tc["late_forfeit_ms"], "time_control.late_forfeit_ms", low=0, high=MAX_CLOCK_MS)
    periods = tc.get("periods")
    if periods is not None:
        if not isinstance(periods, list | tuple) or not 1 <= len(periods) <= MAX_PERIODS:
            raise Refusal(422, "out_of_range", f"time_control.periods must be a list of 1 to {MAX_PERIODS} periods")
        for i, period in enumerate(periods):
            if not isinstance(period, Mapping):
                raise Refusal(422, "out_of_range", f"time_control.periods[{i}] must be an object {{moves, ms}}")
            _check_ms(period.get("ms"), f"time_control.periods[{i}].ms", low=1, high=MAX_CLOCK_MS)
            moves = period.get("moves")
            if moves is not None and (not isinstance(moves, int) or isinstance(moves, bool)
                                      or not 1 <= moves <= MAX_PERIOD_MOVES):
                raise Refusal(422, "out_of_range",
                              f"time_control.periods[{i}].moves must be 1 to {MAX_PERIOD_MOVES} or null")


def check_event_values(event: Event, *, id_given: bool) -> None:
    """Bounds on an event's values that its schema does not state (the schema says `long`, not what is sane)."""
    if id_given:
        check_id(event.event_id, "event_id")
    check_counter(event.source_seq, "source_seq")
    game_id = event.data.get("game_id")
    if game_id is not None or event.type == "GameStarted":
        check_game_id(game_id)
    if event.type.startswith("Clock"):  # ClockPressed, ClockPaused, ClockResumed: the times the device shows
        for key in ("red_ms", "black_ms"):
            value = event.data.get(key)
            if value is not None:
                _check_ms(value, key, low=0, high=MAX_CLOCK_MS)
    if event.type == "ScoresheetEntry":
        ply = event.data.get("ply")
        if isinstance(ply, int) and not 0 <= ply <= MAX_PLY:
            raise Refusal(422, "out_of_range", f"ply must be from 0 to {MAX_PLY}, not {ply}")
    if event.type == "GameStarted":
        tc = event.data.get("time_control")
        if isinstance(tc, Mapping):
            check_time_control(tc)
        for key in ("round", "board_no"):  # a tournament's round and pairing board count from 1
            value = event.data.get(key)
            if value is not None and not 1 <= value <= MAX_TOURNAMENT_NUMBER:
                raise Refusal(422, "out_of_range", f"{key} must be from 1 to {MAX_TOURNAMENT_NUMBER}, not {value}")
