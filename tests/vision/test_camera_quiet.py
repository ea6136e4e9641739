"""A board whose camera went quiet (issue 38 item 3): vision notices that a board's frames stopped for longer than
the setting (quiet.py) and reports CameraQuiet; the first frame after that reports the silence ended. Folded by
the referee, the reports raise AttentionNeeded `kind: camera_quiet` naming the board and since when, and the
`camera_back` notice. Frames are captured at 4 a second on the camera's clock, from T0; vision's own clock is the
test's `now`."""

from __future__ import annotations

from types import SimpleNamespace

from xqarb.events import make_event
from xqarb.referee.board import step
from xqarb.vision.evidence import MemoryEvidenceStore
from xqarb.vision.quiet import CAMERA_QUIET_S
from xqarb.vision.service import VisionCore

T0 = 1_767_225_600_000_000  # 2026-01-01 00:00:00 UTC, µs


class Clock:
    def __init__(self) -> None:
        self.s = 1000.0

    def us(self) -> int:
        return round(self.s * 1e6)

    def watch(self, core: VisionCore, seconds: float, behind: set[int] | None = None) -> list:
        """`seconds` on, `core` looking at its boards about once a second meanwhile (as `run` does with no frame):
        the reports of those looks."""
        out: list = []
        while seconds > 1e-9:
            step = min(1.0, seconds)
            self.s, seconds = self.s + step, seconds - step
            out += core.camera_quiet([], behind=behind or set())
        return out


def _frame(board: str, seq: int, game: str | None = "g7"):
    fields = {"game_id": game} if game else {}
    return make_event("FrameCaptured", board, source=f"cam-{board}", source_seq=seq, occurred_at=T0 + seq * 250_000,
                      received_at=T0 + seq * 250_000, camera_id=f"cam-{board}", width=1280, height=720,
                      encoding="jpeg", image=b"", **fields)


def _records(*events, partition: int = 0):
    return [SimpleNamespace(event=e, partition=partition) for e in events]


def test_frames_stop_then_resume_quiet_then_back():
    assert CAMERA_QUIET_S == 20.0
    clock = Clock()
    core = VisionCore(MemoryEvidenceStore(), source="vision-test", now_us=clock.us)
    assert core.camera_quiet(_records(*[_frame("7", n) for n in range(1, 5)])) == []  # frames 1-4 by T0 + 1 s
    assert clock.watch(core, 19.9) == []  # 19.9 s: not yet
    [quiet] = clock.watch(core, 0.2)
    assert (quiet.type, quiet.board_id, quiet.data["game_id"], quiet.data["back"]) == ("CameraQuiet", "7", "g7", False)
    assert quiet.data["since"] == T0 + 1_000_000 and quiet.occurred_at == T0 + 21_000_000
    assert quiet.data["quiet_ms"] == 20_000
    assert clock.watch(core, 30) == []  # reported once
    [back] = core.camera_quiet(_records(_frame("7", 201)))  # frames again, captured at T0 + 50.25 s
    assert back.data["back"] is True and back.occurred_at == T0 + 50_250_000 and back.data["since"] == T0 + 1_000_000
    # The referee folds them: the alert naming the board and since when, then the notice.
    started = make_event("GameStarted", "7", source="arbiter", source_seq=1, occurred_at=T0, received_at=T0,
                         game_id="g7", red_player="R", black_player="B", recording_required=False,
                         time_control={"scheme": "increment", "base_ms": 3_600_000, "increment_ms": 30_000})
    state, outs = None, []
    for e in (started, quiet, back):
        state, st = step(state, e)
        outs.extend(st.outputs)
    assert [(o.type, o.data["kind"]) for o in outs] == [("AttentionNeeded", "camera_quiet"),
                                                        ("AttentionNeeded", "camera_back")]
    assert "board 7" in outs[0].data["reason"] and "since 2026-01-01 00:00:01 UTC" in outs[0].data["reason"]


def test_after_the_game_ended_a_silence_is_not_reported_until_the_next_game():
    clock = Clock()
    core = VisionCore(MemoryEvidenceStore(), source="vision-test", now_us=clock.us)
    ended = make_event("GameEnded", "7", source="referee:g7", source_seq=9, occurred_at=T0 + 2_000_000,
                       received_at=T0 + 2_000_000, game_id="g7", result="1-0", article="4.1.1", reason="mate")
    core.camera_quiet(_records(_frame("7", 1), ended))
    assert clock.watch(core, 60) == []
    nxt = make_event("GameStarted", "7", source="arbiter", source_seq=2, occurred_at=T0 + 70_000_000,
                     received_at=T0 + 70_000_000, game_id="g8", red_player="R", black_player="B",
                     recording_required=False, time_control={"scheme": "sudden_death", "base_ms": 900_000})
    assert core.camera_quiet(_records(nxt)) == []
    assert [q.data["game_id"] for q in clock.watch(core, 20)] == ["g8"]


def test_each_board_on_its_own_and_dropped_partitions_forgotten():
    clock = Clock()
    core = VisionCore(MemoryEvidenceStore(), source="vision-test", now_us=clock.us)
    core.camera_quiet(_records(_frame("7", 1)) + _records(_frame("8", 1), partition=1))
    assert clock.watch(core, 15) == []
    core.camera_quiet(_records(_frame("8", 60), partition=1))
    assert [q.board_id for q in clock.watch(core, 6)] == ["7"]  # board 8 sent a frame 6 s ago
    core.drop_partitions([1])
    assert clock.watch(core, 60) == []  # board 7 told already; board 8 is another process's now


def test_a_board_whose_frames_are_read_behind_is_not_told_quiet():
    # Until its partition's frames are read to their end, a board's silence is not judged: its camera's frames
    # may be waiting unread (a backlog); then the frames read decide.
    clock = Clock()
    core = VisionCore(MemoryEvidenceStore(), source="vision-test", now_us=clock.us)
    assert core.camera_quiet(_records(*[_frame("7", n) for n in range(1, 5)], partition=1)) == []
    assert clock.watch(core, 40, behind={1}) == []
    backlog = _records(*[_frame("7", n) for n in range(5, 165)], partition=1)  # (frames every 0.25 s all along)
    assert core.camera_quiet(backlog) == []
    assert clock.watch(core, CAMERA_QUIET_S - 1) == []
    [quiet] = clock.watch(core, 2, behind={0})  # a board of a partition read to its end: judged as before
    assert (quiet.board_id, quiet.data["since"]) == ("7", T0 + 164 * 250_000)


def test_a_process_away_counts_no_silence():
    # Paused past the setting (SIGSTOP, starved of the CPU), a process has not read what its cameras sent
    # meanwhile, and its consumer's idea of its backlog dates from before: the time away is no silence.
    clock = Clock()
    core = VisionCore(MemoryEvidenceStore(), source="vision-test", now_us=clock.us)
    assert core.camera_quiet(_records(*[_frame("7", n) for n in range(1, 5)], partition=1)) == []
    clock.s += 65.0  # away: no look meanwhile
    assert core.camera_quiet([]) == []
    backlog = _records(*[_frame("7", n) for n in range(5, 265)], partition=1)
    assert core.camera_quiet(backlog) == []  # the frames sent meanwhile, read
    assert clock.watch(core, CAMERA_QUIET_S - 1) == []
    [quiet] = clock.watch(core, 2)  # then a real silence is told as before
    assert (quiet.board_id, quiet.data["since"]) == ("7", T0 + 264 * 250_000)
