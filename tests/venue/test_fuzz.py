"""Every endpoint fuzzed with bad input (Hypothesis), counted per class: each answered 4xx with a JSON reason,
none 5xx, nothing published and no ledger changed. Each class is bad by construction (a mutation that no valid
event has), so any 2xx is a finding too. Derandomized, so a run is repeatable; a few seconds an endpoint."""

from __future__ import annotations

import json
import re
import string
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.venue.conftest import jpeg
from tests.venue.edges import TOKENS, Venue, auth, make_venue, now_us

EXAMPLES = 120  # per endpoint: every class tried many times, a few seconds in all
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

JSON_SCALARS = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(
    max_size=30)
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
    st.text(max_size=8), inner, max_size=4), max_leaves=12)


@pytest.fixture
def v(tmp_path: Path) -> Venue:
    return make_venue(tmp_path, max_json_bytes=8_192)


def check_refused(r: Any, klass: str, counts: Counter[tuple[str, str]]) -> None:
    counts[(klass, f"{r.status_code // 100}xx")] += 1
    assert 400 <= r.status_code < 500, (klass, r.status_code, r.get_data(as_text=True)[:300])
    body = r.get_json()
    assert isinstance(body, dict) and body.get("error") and len(body.get("detail", "")) > 5, (klass, body)


def report(name: str, counts: Counter[tuple[str, str]], v: Venue, head: tuple[int, str]) -> None:
    """Print the counts (`pytest -s` shows them) and check what every fuzz test must hold."""
    classes = sorted({k for k, _ in counts})
    table = {k: {s: n for (kk, s), n in counts.items() if kk == k} for k in classes}
    print(f"\nfuzz {name}: {sum(counts.values())} inputs; per class {json.dumps(table, sort_keys=True)}")
    assert all(s == "4xx" for _, s in counts), table
    assert v.publisher.sent == [], [e.type for _, e in v.publisher.sent]
    assert v.ledger.head(v.game) == head


# --- JSON bodies ---------------------------------------------------------------------------------------------------

VALID = {
    "clock": {"type": "ClockPressed", "side": "red", "red_ms": 3_590_000, "black_ms": 3_600_000, "source_seq": 7},
    "events": {"type": "Resigned", "side": "black", "source_seq": 8},
    "actions": {"type": "FoulReported", "side": "red", "article": "5.3", "note": "touched"},
}
# A bad value for a field of each valid event: of another type, out of range, or not an allowed symbol.
BAD_FIELD_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "side": st.text(max_size=10).filter(lambda s: s not in ("red", "black")) | st.integers() | st.none(),
    "red_ms": st.integers(max_value=-1) | st.integers(min_value=24 * 3_600_000 + 1, max_value=2**63)
    | st.text(max_size=5) | st.floats(allow_nan=False) | st.booleans(),
    "source_seq": st.integers(max_value=-1) | st.integers(min_value=2**53, max_value=2**63 - 1) | st.text(max_size=5)
    | st.booleans() | st.floats(allow_nan=False),
    "occurred_at": st.integers(min_value=-(2**63), max_value=2**63 - 1).filter(lambda t: abs(t - now_us()) > 120e6)
    | st.text(max_size=5),
    "type": st.text(max_size=20).filter(lambda t: t not in ("ClockPressed", "Resigned", "FoulReported")),
    "article": st.integers() | st.lists(st.text(max_size=3), max_size=2),
    "event_id": st.text(max_size=5).filter(lambda t: not re.fullmatch(r"[\x21-\x7e]+", t))
    | st.text(alphabet="ab", min_size=129, max_size=200),
    "game_id": st.text(alphabet=" \t\n", min_size=1, max_size=5) | st.integers(),
}


def bad_json_bodies(endpoint: str) -> st.SearchStrategy[tuple[str, bytes, str]]:
    """(class, body, token key) of a bad JSON body for an endpoint."""
    valid = VALID[endpoint]
    token = {"clock": "clock7", "events": "clock7", "actions": "chief"}[endpoint]
    fields = [f for f in BAD_FIELD_VALUES if f in valid or f in ("event_id", "game_id", "occurred_at")]
    if endpoint == "actions":
        fields.remove("game_id")  # the action's route names its game; a game id in the body is checked apart

    def with_time(body: dict[str, Any]) -> dict[str, Any]:
        return {"occurred_at": now_us(), **body}

    def dumps(obj: Any) -> bytes:
        return json.dumps(obj).encode()

    mutated = st.sampled_from(fields).flatmap(lambda f: BAD_FIELD_VALUES[f].map(
        lambda bad, f=f: ("bad_field", dumps({**with_time(valid), f: bad}), token)))
    required = ["side"] if endpoint == "actions" else ["side", "source_seq", "occurred_at"]  # a device's
    missing = st.sampled_from(required).map(
        lambda f: ("missing_field", dumps({k: x for k, x in with_time(valid).items() if k != f}), token))
    unknown = st.text(alphabet=string.ascii_lowercase, min_size=3, max_size=10).filter(
        lambda f: f not in ("note", "type", "side", "article", "source_seq", "event_id", "game_id", "source_epoch",
                            "board_id", "source", "received_at", "occurred_at", "red_ms", "black_ms")).map(
        lambda f: ("unknown_field", dumps({**with_time(valid), f: 1}), token))
    not_json = st.binary(min_size=1, max_size=200).filter(lambda b: not _is_json_object(b)).map(
        lambda b: ("not_json_object", b, token))
    not_object = JSON_VALUES.filter(lambda x: not isinstance(x, dict)).map(
        lambda x: ("not_json_object", dumps(x), token))
    deep = st.integers(min_value=9, max_value=3_000).map(
        lambda n: ("too_deep", b'{"type": "ClockPressed", "x": ' + b"[" * n + b"]" * n + b"}", token))
    huge = st.integers(min_value=20, max_value=5_000).map(
        lambda n: ("number_too_large", b'{"type": "ClockPressed", "source_seq": ' + b"7" * n + b"}", token))
    oversized = st.integers(min_value=8_193, max_value=20_000).map(
        lambda n: ("too_large", dumps({**with_time(valid), "note": "x" * n}), token))
    wrong_token = st.sampled_from(["cam7", "cam8", "nobody"]).map(
        lambda k: ("wrong_token", dumps(with_time(valid)), k))
    return st.one_of(mutated, missing, unknown, not_json, not_object, deep, huge, oversized, wrong_token)


def _is_json_object(data: bytes) -> bool:
    try:
        return isinstance(json.loads(data), dict)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return False


def _fuzz_json(v: Venue, endpoint: str, post: Callable[[bytes, dict[str, str]], Any]) -> None:
    counts: Counter[tuple[str, str]] = Counter()
    head = v.ledger.head(v.game)

    @SETTINGS
    @given(case=bad_json_bodies(endpoint))
    def run(case: tuple[str, bytes, str]) -> None:
        klass, body, key = case
        headers = auth(key) if key in TOKENS else {"Authorization": "Bearer not-a-known-token"}
        check_refused(post(body, {**headers, "Content-Type": "application/json"}), klass, counts)

    run()
    report(endpoint, counts, v, head)
    assert len({k for k, _ in counts}) >= 8, counts  # every class was tried


def test_fuzz_clock(v: Venue) -> None:
    _fuzz_json(v, "clock", lambda body, h: v.ingest.post("/ingest/v1/boards/7/clock", data=body, headers=h))


def test_fuzz_events(v: Venue) -> None:
    _fuzz_json(v, "events", lambda body, h: v.ingest.post("/ingest/v1/boards/7/events", data=body, headers=h))


def test_fuzz_actions(v: Venue) -> None:
    _fuzz_json(v, "actions", lambda body, h: v.api.post(f"/api/games/{v.game}/actions", data=body, headers=h))


# --- frames -------------------------------------------------------------------------------------------------------

HEADER_TEXT = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7e), max_size=40)


def bad_frames() -> st.SearchStrategy[tuple[str, bytes, dict[str, str]]]:
    image = jpeg(32, 24, seed=5)

    def headers(**extra: str) -> dict[str, str]:
        return {**auth("cam7"), "X-Capture-Time": str(now_us()), "X-Sequence": "1", **extra}

    not_jpeg = st.binary(max_size=300).filter(lambda b: b[:3] != b"\xff\xd8\xff").map(
        lambda b: ("not_jpeg", b, headers()))
    truncated = st.integers(min_value=0, max_value=len(image) - 1).map(
        lambda n: ("truncated_jpeg", image[:n], headers()))
    bad_number = st.sampled_from(["X-Capture-Time", "X-Sequence", "X-Sequence-Epoch"]).flatmap(
        lambda h: (HEADER_TEXT.filter(lambda t: t != "" and not re.fullmatch(r"\s*\+?[0-9]{1,19}\s*", t))
                   | st.integers(min_value=10**19, max_value=10**40).map(str)
                   | st.integers(max_value=-1).map(str)).map(
            lambda t, h=h: ("bad_number_header", image, headers(**{h: t}))))
    skewed = st.integers(min_value=121_000_000, max_value=10**15).map(
        lambda d: ("time_skew", image, headers(**{"X-Capture-Time": str(now_us() + d)})))
    bad_id = st.sampled_from(["X-Event-Id", "X-Camera-Id"]).flatmap(
        lambda h: (HEADER_TEXT.filter(lambda t: " " in t.strip() and t.strip())
                   | st.text(alphabet="x", min_size=129, max_size=300)).map(
            lambda t, h=h: ("bad_id_header", image, headers(**{h: t}))))
    wrong_role = st.sampled_from(["clock7", "chief", "cam8", "sheet7"]).map(
        lambda k: ("wrong_token", image, {**headers(), **auth(k)}))
    return st.one_of(not_jpeg, truncated, bad_number, skewed, bad_id, wrong_role)


def test_fuzz_frames(v: Venue) -> None:
    counts: Counter[tuple[str, str]] = Counter()
    head = v.ledger.head(v.game)

    @SETTINGS
    @given(case=bad_frames())
    def run(case: tuple[str, bytes, dict[str, str]]) -> None:
        klass, body, headers = case
        check_refused(v.ingest.post("/ingest/v1/boards/7/frames", data=body, headers=headers), klass, counts)

    run()
    report("frames", counts, v, head)
    assert len({k for k, _ in counts}) == 6, counts


# --- the API's reads ----------------------------------------------------------------------------------------------

NOT_A_COUNT = (
    # forms that int() takes but a count is not written as, and forms that int() refuses
    st.sampled_from(["--5", "-", "+5", "5\n", " 5", "1e3", "٣", "0x10", "1_000", "5.0", "∞", "NaN"])
    | st.text(max_size=30).filter(lambda t: not re.fullmatch(r"[0-9]{1,19}", t) and t != "")
    | st.integers(min_value=20, max_value=5000).map(lambda n: "9" * n)
    | st.integers(max_value=-1).map(str)
)
LATIN1 = st.characters(min_codepoint=0x20, max_codepoint=0xff)
NOT_A_POSITION = st.text(alphabet=LATIN1, min_size=1, max_size=60).filter(
    lambda t: not re.fullmatch(r"([0-9]{1,9}:[0-9]{1,18})(,[0-9]{1,9}:[0-9]{1,18})*", t) and t.strip() == t
) | st.integers(min_value=19, max_value=5000).map(lambda n: "0:" + "9" * n)


def test_fuzz_reads(v: Venue) -> None:
    counts: Counter[tuple[str, str]] = Counter()
    head = v.ledger.head(v.game)
    cases = st.one_of(
        NOT_A_COUNT.map(lambda t: ("events_after", f"/api/games/{v.game}/events", {"after": t}, {})),
        NOT_A_COUNT.filter(lambda t: t != "0").map(
            lambda t: ("events_limit", f"/api/games/{v.game}/events", {"limit": t}, {})),
        NOT_A_COUNT.map(lambda t: ("state_seq", f"/api/games/{v.game}/state", {"seq": t}, {})),
        NOT_A_POSITION.map(lambda t: ("stream_last_event_id", "/api/stream", {"once": "1"}, {"Last-Event-ID": t})),
        st.text(alphabet=string.hexdigits + "xyz", min_size=1, max_size=70).filter(
            lambda t: not re.fullmatch(r"[0-9a-f]{64}", t)).map(
            lambda t: ("frame_sha256", f"/api/games/{v.game}/frames/{t}", {}, {})),
    )

    @SETTINGS
    @given(case=cases)
    def run(case: tuple[str, str, dict[str, str], dict[str, str]]) -> None:
        klass, path, query, headers = case
        check_refused(v.api.get(path, query_string=query, headers=headers), klass, counts)

    run()
    report("reads", counts, v, head)
    assert len({k for k, _ in counts}) == 5, counts
