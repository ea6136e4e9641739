"""The retention policy on hand-built ledgers: the frames a move, a ruling, an alert or an arbiter's action rests
on stay full; the rest, once old enough by the ledger's clock, are thinned one a window and otherwise dropped."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
import pytest

from xqarb.vision.evidence import FrameInfo
from xqarb.vision.retention import (
    PolicyError,
    References,
    RetentionPolicy,
    parse_policy,
    plan,
    thin_jpeg,
    thinned_from,
)

S = 1_000_000  # µs in a second
T0 = 1_790_000_000 * S


def sha(n: int) -> str:
    return f"{n:064x}"


class Ledger:
    """One game's entries fed to References as the ledger holds them (inputs, each followed by its outputs)."""

    def __init__(self, policy: RetentionPolicy | None = None, board: str = "b1", game: str = "g1") -> None:
        self.refs = References(policy or RetentionPolicy())
        self.board, self.game, self.n = board, game, 0

    def input(self, type_: str, t_s: float, frame: int | None = None, before: tuple[int, ...] = (),
              **data: Any) -> str:
        self.n += 1
        event_id = f"in-{self.n}"
        if frame is not None:
            data["frame_sha256"] = sha(frame)
            data["evidence"] = tuple(sha(b) for b in (*before, frame))
        t = T0 + int(t_s * S)
        self.refs.add(self.game, "input", type_, event_id, self.board, t, t, data)
        return event_id

    def output(self, type_: str, t_s: float, **data: Any) -> None:
        self.n += 1
        t = T0 + int(t_s * S)
        self.refs.add(self.game, "output", type_, f"out-{self.n}", self.board, t, t, data)


def held(*frames: tuple[int, float], size: int = 100_000) -> list[FrameInfo]:
    """The store's frames: (number, stored at, seconds)."""
    return [FrameInfo(sha(n), size, T0 + int(at * S), False) for n, at in frames]


def test_a_move_keeps_its_still_board_and_the_one_before_full() -> None:
    led = Ledger()
    led.input("BoardStable", 0, frame=1)  # the start
    led.input("PieceLifted", 5, frame=3, before=(2,))
    led.input("BoardStable", 8, frame=5, before=(3, 4))
    led.output("MoveMade", 8, ply=1)  # (no evidence field: its cause is the input it follows)
    led.input("ClockPressed", 300)  # the ledger's clock moves on
    assert set(led.refs.full) == {sha(1), sha(5)}
    assert led.refs.full[sha(5)] == "MoveMade"


def test_a_ruling_keeps_the_frames_it_was_read_from() -> None:
    led = Ledger()
    cause = led.input("BoardStable", 10, frame=14, before=(11, 12, 13))
    led.output("Ruling", 10, kind="foul", article="8.1.7", evidence=(cause, sha(14)))
    assert set(led.refs.full) == {sha(11), sha(12), sha(13), sha(14)}


def test_an_arbiters_action_keeps_the_board_as_the_camera_last_saw_it() -> None:
    led = Ledger()
    led.input("HandLeft", 20, frame=24, before=(21, 22, 23))
    led.input("ClockPressed", 21)  # no frame: the board is still the one of entry 1
    led.input("TouchReported", 22, side="black", point="b7")
    assert set(led.refs.full) == {sha(21), sha(22), sha(23), sha(24)}


def test_a_kind_left_out_of_the_policy_keeps_nothing_full() -> None:
    led = Ledger(RetentionPolicy(keep_full=frozenset({"Ruling"}), keep_context=frozenset()))
    led.input("BoardStable", 8, frame=5, before=(3, 4))
    led.output("MoveMade", 8, ply=1)
    cause = led.input("BoardStable", 10, frame=14, before=(11, 12, 13))
    led.output("Ruling", 10, kind="foul", evidence=(cause, sha(14)))
    assert set(led.refs.full) == {sha(14)}  # the ruling's own frame only: no context asked for


def test_frames_no_kept_entry_names_are_thinned_one_a_window_and_the_rest_dropped() -> None:
    led = Ledger(RetentionPolicy(thin_after_s=60, thin_every_s=10))
    led.input("BoardStable", 0, frame=1)
    led.input("HandEntered", 21, frame=23, before=(21, 22))
    led.input("HandLeft", 24, frame=25, before=(24,))
    led.input("BoardStable", 26, frame=26)  # no move: the hand only passed
    led.input("ClockPressed", 200)
    frames = held((1, 0), (21, 21), (22, 22), (23, 23), (24, 24), (25, 25), (26, 26))
    p = plan(frames, led.refs, now_us=T0 + 200 * S)
    assert p.full_kept == 0 and p.referenced_thinned == ()
    # windows of 10 s by capture time: [0, 10) frame 1; [20, 30) frames 21..26, the first kept
    assert set(p.thin) == {sha(1), sha(21)}
    assert set(p.drop) == {sha(22), sha(23), sha(24), sha(25), sha(26)}


def test_a_window_with_a_full_frame_needs_no_thinned_one() -> None:
    led = Ledger(RetentionPolicy(thin_after_s=60, thin_every_s=10))
    led.input("BoardStable", 1, frame=1)
    led.input("PiecePlaced", 4, frame=4, before=(2, 3))
    led.input("BoardStable", 5, frame=5, before=(2, 3, 4))
    led.output("MoveMade", 5, ply=1)
    led.input("ClockPressed", 200)
    p = plan(held((1, 1), (2, 2), (3, 3), (4, 4), (5, 5)), led.refs, now_us=T0 + 200 * S)
    assert p.full_kept == 2  # frames 1 and 5
    assert p.thin == () and set(p.drop) == {sha(2), sha(3), sha(4)}


def test_nothing_is_touched_before_the_ledger_is_thin_after_s_past_it() -> None:
    led = Ledger(RetentionPolicy(thin_after_s=120))
    led.input("BoardStable", 0, frame=1)
    led.input("HandEntered", 50, frame=2)
    # The wall clock is an hour on, but the ledger stopped at 50 s (a referee down or behind): the frames may
    # still be named by a ruling it has yet to make.
    p = plan(held((1, 0), (2, 50)), led.refs, now_us=T0 + 3600 * S)
    assert p.thin == () and p.drop == () and p.waiting == 2
    led.input("ClockPressed", 125)
    p = plan(held((1, 0), (2, 50)), led.refs, now_us=T0 + 3600 * S)
    assert p.thin == (sha(1),) and p.waiting == 1


def test_a_board_whose_referee_is_behind_keeps_its_frames_while_another_boards_are_judged() -> None:
    refs = References(RetentionPolicy(thin_after_s=120))
    ahead, behind = Ledger(board="b1", game="g1"), Ledger(board="b2", game="g2")
    ahead.refs = behind.refs = refs
    behind.input("HandEntered", 0, frame=2)  # b2's referee has got no further than this
    ahead.input("HandEntered", 0, frame=1)
    ahead.input("ClockPressed", 600)
    p = plan(held((1, 0), (2, 0)), refs, now_us=T0 + 600 * S)
    assert p.thin == (sha(1),) and p.waiting == 1


def test_a_frame_no_entry_names_waits_orphan_after_s() -> None:
    led = Ledger(RetentionPolicy(thin_after_s=120, orphan_after_s=1800))
    led.input("BoardStable", 0, frame=1)
    led.input("ClockPressed", 600)
    frames = held((1, 0), (99, 0))  # frame 99: stored, named by nothing the ledger holds (yet)
    assert plan(frames, led.refs, now_us=T0 + 600 * S).thin == (sha(1),)
    led.input("ClockPressed", 1801)
    p = plan(frames, led.refs, now_us=T0 + 1801 * S)
    assert set(p.thin) == {sha(1), sha(99)} and p.waiting == 0


def test_a_referenced_frame_is_never_thinned_or_dropped_however_old() -> None:
    led = Ledger(RetentionPolicy(thin_after_s=1, thin_every_s=1, drop_after_s=1))
    cause = led.input("BoardStable", 0, frame=9, before=(7, 8))
    led.output("AttentionNeeded", 0, reason="not a legal move", evidence=(cause, sha(9)))
    led.input("ClockPressed", 10_000)
    p = plan(held((7, 0), (8, 0), (9, 0)), led.refs, now_us=T0 + 10_000 * S)
    assert (p.thin, p.drop, p.full_kept) == ((), (), 3)


def test_thinned_frames_go_after_drop_after_s_and_a_thinned_referenced_one_is_reported() -> None:
    led = Ledger(RetentionPolicy(thin_after_s=10, drop_after_s=600))
    led.input("BoardStable", 0, frame=1)
    led.output("MoveMade", 0, ply=1)
    led.input("HandEntered", 100, frame=2)
    led.input("ClockPressed", 1000)
    frames = [FrameInfo(sha(1), 5000, T0, True), FrameInfo(sha(2), 5000, T0 + 100 * S, True)]
    p = plan(frames, led.refs, now_us=T0 + 650 * S)
    assert p.drop == () and p.thinned_kept == 1 and p.referenced_thinned == (sha(1),)
    p = plan(frames, led.refs, now_us=T0 + 800 * S)
    assert p.drop == (sha(2),)


def test_a_frame_thinned_is_smaller_and_says_the_size_of_the_full_frame() -> None:
    rng = np.random.default_rng(1)
    img = cv2.GaussianBlur(rng.integers(0, 255, (720, 1280, 3), dtype=np.uint8), (9, 9), 3)
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 90])
    assert ok
    full = buf.tobytes()
    small = thin_jpeg(full, 0.25, 50)
    assert len(small) * 10 < len(full)
    assert thinned_from(small) == (1280, 720) and thinned_from(full) is None
    assert cv2.imdecode(np.frombuffer(small, np.uint8), cv2.IMREAD_COLOR).shape == (180, 320, 3)
    with pytest.raises(ValueError):
        thin_jpeg(small, 0.25, 50)  # (once)
    with pytest.raises(ValueError):
        thin_jpeg(b"not a jpeg", 0.25, 50)


def test_the_policy_is_read_from_the_venue_configuration_with_its_errors_named() -> None:
    p = parse_policy({"keep_full": ["Ruling"], "thin_after_s": 300, "thin_quality": 40, "drop_after_s": None,
                      "store": "postgresql://db/venue"})
    assert p.keep_full == frozenset({"Ruling"}) and p.thin_after_s == 300.0 and p.thin_quality == 40
    assert p.store == "postgresql://db/venue" and p.drop_after_s is None
    assert parse_policy(None) == RetentionPolicy()
    for bad, named in (({"keep_ful": []}, "keep_ful"), ({"thin_scale": 2}, "thin_scale"),
                       ({"keep_full": "Ruling"}, "keep_full"), ({"thin_after_s": -1}, "thin_after_s"),
                       ({"thin_quality": True}, "thin_quality")):
        with pytest.raises(PolicyError, match=named):
            parse_policy(bad)
