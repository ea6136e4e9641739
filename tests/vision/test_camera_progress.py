"""How far each board's frames are read (progress.py): vision reports CameraProgress about once a second of each
board's frames, so that the referee holds a board's clock presses until the camera has been read up to them."""

from __future__ import annotations

from types import SimpleNamespace

from xqarb.events import make_event
from xqarb.vision.evidence import MemoryEvidenceStore
from xqarb.vision.progress import PROGRESS_EVERY_US, ProgressWatch
from xqarb.vision.service import VisionCore

T0 = 1_767_225_600_000_000  # 2026-01-01 00:00:00 UTC, µs


def _frame(board: str, seq: int, game: str | None = "g7"):
    """Frame `seq` of a camera capturing 4 a second from T0."""
    fields = {"game_id": game} if game else {}
    return make_event("FrameCaptured", board, source=f"cam-{board}", source_seq=seq, occurred_at=T0 + seq * 250_000,
                      received_at=T0 + seq * 250_000, camera_id=f"cam-{board}", width=1280, height=720,
                      encoding="jpeg", image=b"", **fields)


def test_a_board_is_reported_at_its_first_frame_then_once_a_second_of_its_frames() -> None:
    watch = ProgressWatch()
    watch.frame((0, "7"), T0, "f0", 0, "g7")
    [first] = watch.due()
    assert (first.at, first.frames, first.game) == (T0, 1, "g7")
    for seq in (1, 2, 3):  # 0.75 s of frames: not yet
        watch.frame((0, "7"), T0 + seq * 250_000, f"f{seq}", seq, "g7")
        assert watch.due() == []
    watch.frame((0, "7"), T0 + PROGRESS_EVERY_US, "f4", 4, "g7")
    [second] = watch.due()
    assert (second.at, second.frames, second.frame_event_id) == (T0 + PROGRESS_EVERY_US, 4, "f4")
    watch.drop({0})
    assert watch.due() == []


def test_a_frame_arriving_late_does_not_move_the_board_back() -> None:
    watch = ProgressWatch()
    watch.frame((0, "7"), T0 + 2_000_000, "late", 8, None)
    watch.frame((0, "7"), T0, "early", 0, None)
    [report] = watch.due()
    assert report.at == T0 + 2_000_000 and report.frames == 2


def test_the_service_core_reports_each_board_with_a_stable_id() -> None:
    def core_reports():
        core = VisionCore(MemoryEvidenceStore(), source="vision-test", now_us=lambda: T0)
        records = [SimpleNamespace(event=_frame(b, s), partition=0) for s in range(5) for b in ("1", "2")]
        return core.camera_progress(records)

    reports = core_reports()
    assert [(e.type, e.board_id, e.occurred_at, e.data["frames"]) for e in reports] == [
        ("CameraProgress", "1", T0 + 1_000_000, 5), ("CameraProgress", "2", T0 + 1_000_000, 5)]
    # The id derives from the frame read last: a process that reads the same frames again reports the same event.
    assert [e.event_id for e in core_reports()] == [e.event_id for e in reports]


def test_the_service_core_reports_a_board_no_further_than_its_move_in_progress() -> None:
    """A board whose tracker waits for the still board that ends a move (a hand over it) is reported read only up to
    its last still frame: a press made as the hand left waits for the move (in_progress.py)."""
    core = VisionCore(MemoryEvidenceStore(), source="vision-test", now_us=lambda: T0)
    core.moves.frame((0, "1"), T0, still=True)
    for seq in range(1, 5):
        core.moves.frame((0, "1"), T0 + seq * 250_000, still=False)
    [report] = core.camera_progress([SimpleNamespace(event=_frame("1", s), partition=0) for s in range(5)])
    assert report.occurred_at == T0
    core.moves.frame((0, "1"), T0 + 1_250_000, still=True)  # the still board that shows the move
    [report] = core.camera_progress([SimpleNamespace(event=_frame("1", 5), partition=0)])
    assert report.occurred_at == T0 + 1_250_000
