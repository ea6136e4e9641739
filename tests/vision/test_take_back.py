"""A vision process given back partitions nobody else read since it released them (a rejoin after the broker
restarted empty, a commit refused) follows their boards on from where it left them: the trackers that knew the
position and the move in progress are taken back, not seeded afresh from the referee's last position
(VisionCore.take_back); partitions another process read meanwhile start afresh."""

from __future__ import annotations

from xqarb.vision.evidence import MemoryEvidenceStore
from xqarb.vision.resume import BoardGame
from xqarb.vision.service import VisionCore

START = "rnbakabnr..........c.....c.p.p.p.p.p..................P.P.P.P.P.C.....C..........RNBAKABNR"


def test_boards_of_partitions_nobody_read_since_are_taken_back_as_they_were() -> None:
    core = VisionCore(MemoryEvidenceStore(), source="vision-test")
    core.resume({"7": BoardGame("g7"), "8": BoardGame("g8")}, partition=0)
    core.resume({"9": BoardGame("g9")}, partition=1)
    followed = {key: core.boards[key] for key in core.boards}
    core.drop_partitions([0, 1])  # released at the rejoin
    core.drop_partitions([0, 1])  # (and again as they are assigned: what was released stays released)
    assert core.boards == {}
    assert core.take_back([0, 1], unread=[0]) == 2  # partition 1 was read by another process meanwhile
    assert core.boards == {(0, "7"): followed[(0, "7")], (0, "8"): followed[(0, "8")]}
    assert core.games == {(0, "7"): "g7", (0, "8"): "g8"}
    # the referee's account seeds only the boards not taken back
    assert core.resume({"7": BoardGame("g7", position=START), "9": BoardGame("g9")}, partition=0) == 1
    assert core.boards[(0, "7")] is followed[(0, "7")]
    assert core.take_back([1], unread=[1]) == 0  # forgotten once not taken back
