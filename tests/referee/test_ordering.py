"""Event-time order across topics (pure): clock and arbiter inputs wait for the board's camera to catch up."""

from __future__ import annotations

from dataclasses import dataclass

from xqarb.events import Event, make_event
from xqarb.referee.ordering import EventTimeOrder

CAMERA = "xq.observations"


@dataclass(frozen=True)
class Rec:
    topic: str
    partition: int
    offset: int
    event: Event


def _rec(topic: str, offset: int, t_s: float, board: str = "1", type_: str = "ClockPressed") -> Rec:
    fields = {"side": "red"} if type_ == "ClockPressed" else {"squares": "." * 90, "frame_sha256": "0" * 64}
    event = make_event(type_, board, source=topic, source_seq=offset, occurred_at=int(t_s * 1e6),
                       received_at=int(t_s * 1e6), **fields)
    return Rec(topic, 0, offset, event)


def test_a_press_waits_until_the_camera_saw_its_time() -> None:
    order = EventTimeOrder(frozenset({CAMERA}), hold_s=10)
    press = _rec("xq.clock", 7, t_s=102)
    order.add([press], now=0)
    assert order.release(now=1) == []
    assert order.held_from() == {("xq.clock", 0): 7}
    before, after = _rec(CAMERA, 3, 101, type_="BoardStable"), _rec(CAMERA, 4, 105, type_="BoardStable")
    order.add([after, before], now=2)
    assert order.release(now=2) == [before, press, after]  # event time, across topics
    assert len(order) == 0 and order.held_from() == {}


def test_the_camera_alone_is_not_held_and_a_board_without_camera_waits_hold_s() -> None:
    order = EventTimeOrder(frozenset({CAMERA}), hold_s=10)
    snap = _rec(CAMERA, 1, 100, type_="BoardStable")
    order.add([snap], now=0)
    assert order.release(now=0) == [snap]
    press = _rec("xq.clock", 2, 200, board="2")
    order.add([press], now=0)
    assert order.release(now=9.9) == []
    assert order.release(now=10) == [press]


def test_a_backlog_read_topic_by_topic_is_folded_in_event_time() -> None:
    # A member given partitions with unread inputs gets the observations first: they wait while the device topics
    # of their partition are behind, so that the presses made between the moves are folded between them.
    order = EventTimeOrder(frozenset({CAMERA}), hold_s=10)
    moves = [_rec(CAMERA, i, 100 + 10 * i, type_="BoardStable") for i in range(3)]
    order.add(moves, now=0)
    assert order.release(now=0, devices_behind=frozenset({0})) == []
    assert order.held_from() == {(CAMERA, 0): 0}  # nothing committed past them
    presses = [_rec("xq.clock", i, 105 + 10 * i) for i in range(3)]
    order.add(presses, now=1)
    released = order.release(now=1, devices_behind=frozenset())
    assert released == [moves[0], presses[0], moves[1], presses[1], moves[2]]  # the last press waits for the camera


def test_an_observation_waits_only_for_its_own_partition_and_at_most_hold_s() -> None:
    order = EventTimeOrder(frozenset({CAMERA}), hold_s=10)
    snap = _rec(CAMERA, 1, 100, type_="BoardStable")
    order.add([snap], now=0)
    assert order.release(now=0, devices_behind=frozenset({1, 2})) == [snap]  # partition 0 is read to its end
    late = _rec(CAMERA, 2, 110, type_="BoardStable")
    order.add([late], now=1)
    assert order.release(now=10.9, devices_behind=frozenset({0})) == []
    assert order.release(now=11, devices_behind=frozenset({0})) == [late]  # a device topic that never catches up


def test_boards_do_not_wait_for_each_other_and_revoked_partitions_are_dropped() -> None:
    order = EventTimeOrder(frozenset({CAMERA}), hold_s=10)
    held = _rec("xq.clock", 1, 300, board="1")
    free = _rec("xq.clock", 2, 50, board="2")
    order.add([held, free, _rec(CAMERA, 5, 60, board="2", type_="BoardStable")], now=0)
    assert [r.offset for r in order.release(now=1)] == [2, 5]
    order.drop("xq.clock", [0])
    assert len(order) == 0 and order.release(now=100) == []


def _progress(offset: int, t_s: float, board: str = "1") -> Rec:
    event = make_event("CameraProgress", board, source="vision", source_seq=offset, occurred_at=int(t_s * 1e6),
                       received_at=int(t_s * 1e6), frames=4)
    return Rec(CAMERA, 0, offset, event)


def test_a_press_waits_for_a_restarting_vision_where_the_board_reports_its_progress() -> None:
    # The move's still board at 101.5, the press at 102; vision is killed before it reads the move's frames and is
    # back 30 s later. Released after hold_s, the press would be folded before the move: a press without one.
    order = EventTimeOrder(frozenset({CAMERA}), hold_s=10, camera_hold_s=120)
    order.add([_progress(1, 100)], now=0)
    assert order.release(now=0) == []  # progress is no input of the game: never released
    press = _rec("xq.clock", 7, t_s=102)
    order.add([press], now=1)
    assert order.release(now=31) == []  # still held: the camera has not been read up to the press
    stable, caught_up = _rec(CAMERA, 2, 101.5, type_="BoardStable"), _progress(3, 103)
    order.add([stable, caught_up], now=32)
    assert order.release(now=32) == [stable, press]
    assert order.held_from() == {}


def test_a_board_whose_vision_never_reports_progress_keeps_the_short_hold() -> None:
    order = EventTimeOrder(frozenset({CAMERA}), hold_s=10, camera_hold_s=120)
    order.add([_rec(CAMERA, 1, 100, type_="BoardStable")], now=0)
    order.release(now=0)
    press = _rec("xq.clock", 2, 102)
    order.add([press], now=0)
    assert order.release(now=10) == [press]


def test_a_press_waits_no_longer_than_camera_hold_s_for_a_camera_gone_for_good() -> None:
    order = EventTimeOrder(frozenset({CAMERA}), hold_s=10, camera_hold_s=120)
    order.add([_progress(1, 100)], now=0)
    press = _rec("xq.clock", 2, 102)
    order.add([press], now=0)
    assert order.release(now=119.9) == []
    assert order.release(now=120) == [press]


def test_a_press_waits_past_camera_hold_s_while_the_camera_time_keeps_rising() -> None:
    # On a loaded machine a restarted vision reads the frames of two minutes ago: each report moves the camera time
    # on, towards the press, which waits for it; once the camera time stands still for camera_stall_s, no longer.
    order = EventTimeOrder(frozenset({CAMERA}), hold_s=10, camera_hold_s=120, camera_stall_s=30)
    order.add([_progress(1, 100)], now=0)
    press = _rec("xq.clock", 2, 160)
    order.add([press], now=0)
    for i, now in enumerate(range(110, 200, 10)):  # vision back at 110 s, reading a second of frames every 10 s
        order.add([_progress(3 + i, 101 + i)], now=now)
        assert order.release(now=now) == [], now
    assert order.release(now=219.9) == []  # the last report at 190
    assert order.release(now=220) == [press]


def test_a_camera_time_that_reaches_the_press_releases_it_in_order() -> None:
    order = EventTimeOrder(frozenset({CAMERA}), hold_s=10, camera_hold_s=120, camera_stall_s=30)
    order.add([_progress(1, 100)], now=0)
    press = _rec("xq.clock", 2, 102)
    order.add([press], now=0)
    order.add([_progress(3, 101)], now=119)
    assert order.release(now=130) == []  # past camera_hold_s, the camera time rising: held
    stable = _rec(CAMERA, 4, 101.5, type_="BoardStable")
    order.add([stable, _progress(5, 103)], now=140)
    assert order.release(now=140) == [stable, press]  # the move, then its press: no foul


def _quiet(offset: int, t_s: float, back: bool, board: str = "1") -> Rec:
    event = make_event("CameraQuiet", board, source="vision", source_seq=offset, occurred_at=int(t_s * 1e6),
                       received_at=int(t_s * 1e6), since=int((t_s - 20) * 1e6), quiet_ms=20_000, back=back)
    return Rec(CAMERA, 0, offset, event)


def test_a_configured_camera_board_holds_a_press_before_vision_ever_reported_it() -> None:
    # A referee just restarted (or a vision process killed before its first report of the board): nothing of the
    # camera is known yet but the venue's configuration. The move's still board at 101.5 comes 31 s later.
    order = EventTimeOrder(frozenset({CAMERA}), hold_s=10, camera_hold_s=120, camera_boards=frozenset({"1"}))
    press = _rec("xq.clock", 7, t_s=102)
    order.add([press], now=0)
    assert order.release(now=31) == []
    stable, caught_up = _rec(CAMERA, 2, 101.5, type_="BoardStable"), _progress(3, 103)
    order.add([stable, caught_up], now=31)
    assert order.release(now=31) == [stable, press]


def test_a_configured_camera_that_never_reports_delays_presses_only_for_the_boards_first_camera_hold_s() -> None:
    order = EventTimeOrder(frozenset({CAMERA}), hold_s=10, camera_hold_s=120, camera_boards=frozenset({"1"}))
    started = Rec("xq.arbiter", 0, 1, make_event("Resigned", "1", source="arbiter", source_seq=1,
                                                 occurred_at=100_000_000, received_at=100_000_000, side="red"))
    order.add([started], now=0)
    assert order.release(now=10) == [started]  # an arbiter's input keeps the short hold
    first = _rec("xq.clock", 2, 150)
    order.add([first], now=50)
    assert order.release(now=119.9) == []
    assert order.release(now=120) == [first]  # 120 s from the board's first input, not from the press
    later = _rec("xq.clock", 3, 300)
    order.add([later], now=200)
    assert order.release(now=209.9) == []
    assert order.release(now=210) == [later]  # from then on, the hold of a board without a camera


def test_a_camera_reported_quiet_keeps_the_short_hold_until_it_sends_again() -> None:
    order = EventTimeOrder(frozenset({CAMERA}), hold_s=10, camera_hold_s=120, camera_boards=frozenset({"1"}))
    order.add([_progress(1, 100), _quiet(2, 120, back=False)], now=0)
    assert [r.offset for r in order.release(now=0)] == [2]  # the quiet report is an input of the game
    press = _rec("xq.clock", 3, 130)
    order.add([press], now=30)
    assert order.release(now=40) == [press]  # the arbiter was told; the press is not held for a camera that is off
    order.add([_quiet(4, 140, back=True)], now=40)
    order.release(now=40)
    again = _rec("xq.clock", 5, 145)
    order.add([again], now=45)
    assert order.release(now=164) == []  # frames come again: held for the camera as before
    assert order.release(now=165) == [again]


def test_a_boards_first_progress_after_its_press_lengthens_the_hold() -> None:
    # The board is in no configuration, and the press came in the same poll as, or just before, the first report
    # of its camera: the hold is decided when inputs are released, from what is known then.
    order = EventTimeOrder(frozenset({CAMERA}), hold_s=10, camera_hold_s=120)
    press = _rec("xq.clock", 7, t_s=102)
    order.add([press], now=0)
    order.add([_progress(1, 100)], now=1)
    assert order.release(now=10) == []
    assert order.release(now=120) == [press]


def test_a_partition_given_back_counts_the_unheard_cameras_allowance_again() -> None:
    order = EventTimeOrder(frozenset({CAMERA}), hold_s=10, camera_hold_s=120, camera_boards=frozenset({"1"}))
    order.add([_rec("xq.clock", 1, 100)], now=0)
    assert len(order.release(now=120)) == 1
    order.drop("xq.clock", [0])
    press = _rec("xq.clock", 2, 400)
    order.add([press], now=300)
    assert order.release(now=310) == []
    assert order.release(now=420) == [press]
