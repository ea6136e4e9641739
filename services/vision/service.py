"""The vision service: a thin Kafka adapter around the pure tracker (xq.frames -> xq.observations).

Per partition it holds the tracker state of each board seen on it (key = board id, so one board's frames stay in
order on one partition). A partition assigned to this process starts with fresh trackers: the board is calibrated
again from its next frames (a tracker needs no history beyond the last still board), and each board's game and
the position the referee holds are read from xq.game-events and xq.arbiter from their beginning (resume.py; the
referee API's boards complete them where given), so that a game in progress is followed on from there; but a
partition given back that no other process read since this one released it (a rejoin after an embedded broker
restarted empty, whose lost frames ingest sends again) goes on with the trackers it had (`VisionCore.take_back`):
they know the move in progress, which a tracker seeded from the referee's last position does not. Revoked
partitions drop their state after the last offsets are committed. Offsets are committed only after the
observations of the frames were acknowledged by the broker, so a crash replays frames rather than losing them; the
event ids of observations are derived from the frame's event id, so a replay of the same frame gives the same
ids where it gives the same observations. The observations acknowledged and not yet read by the referee group are
kept a while and sent again, in order and before any new one, should the broker lose them (an embedded broker
restarted empty: observations_kept.py). A commit the group refuses (a broker restarted empty, this process paused
past its session timeout) is said and the process polls on: kafka-python rejoins the group at the next poll.

A partition of frames with no committed offset (a venue's first start, offsets expired) starts at its frames of the
last seconds (xqarb.fresh_start), not a day of frames back on Apache Kafka; its boards' games and positions come from
the topics and the API all the same, and the tracker calibrates from the frames it reads.

Frames may be lost by design (refused by ingest under pressure, lost with a broker that restarted empty), but not
silently: the numbers missing from a camera's count between two of its frames read (order.py) are counted
(xq_vision_frames_missed_total) and each gap said. A partition given back to this process with nobody reading it
meanwhile keeps its cameras' counts across the rejoin, so the frames lost with a broker are counted too.

It also reads the positions the rest of the system holds for its boards: the referee's MoveMade (xq.game-events)
and the arbiters' PositionRestored (xq.arbiter). A board's tracker takes them as its known board (`learn`), so a
point it once read poorly is named again by the position the rules inferred, instead of being misread at every
later still board; and the referee's AttentionNeeded where it could not follow a still board, with the
position it holds, from which the tracker looks again. Range assignment gives one process partition p of all
three topics: its boards' positions.

A board plays one game after another: a GameStarted of another game than the one its tracker follows begins the
next game (Tracker.new_game: the last game's board forgotten, the next still board showing the new start its
first) at the first frame that names that game, or, from a camera that names none, at the first frame captured
at or after the game's start; the same game announced again resets nothing.

A board whose corners the venue configuration gives (`boards.N.corners`, an operator's measurement for a fixed
camera) starts from that calibration instead of looking for the board in its frames. The corners may be given in
any consistent turn (given.py settles the way round, ranks against files and Red's end on the first frame). An
operator's new corners (a BoardCalibrated on xq.arbiter, from the calibration page) take effect from the board's
next frame, keeping the position the tracker follows.

Evidence: the JPEG bytes of the last few frames of each board are kept in memory; the frames an observation
names are written to the evidence store (a directory, SHA-256 named) when the observation is produced.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from dataclasses import replace as dataclass_replace
from typing import Any

from xqarb.fresh_start import FRESH_FRAMES_BACK_S
from xqarb.referee.rules import START_FEN

from .board import BoardFit, fit_from_corners
from .evidence import EvidenceStore, sha256_hex
from .in_progress import READ_BACK_US, MovesInProgress
from .order import CameraCounts, FrameOrder, Placed
from .progress import ProgressWatch
from .quiet import CAMERA_QUIET_S, QuietReport, QuietWatch
from .resume import (
    BoardGame,
    HistoryUnread,
    completed,
    games_of,
    games_of_boards,
    moved_in_the_gap,
    partition_of,
    read_boards,
    read_history,
)
from .tracker import Observation, Tracker, TrackerConfig, TrackerState, squares_of_fen

OBSERVATION_NS = uuid.UUID("0b1c7f0e-54a4-5d8e-8f3b-7a1e9d6c2b40")
# At most one log line this often about frames skipped as out of order (VisionCore.place): they come in bursts
# (the frames acknowledged late at a roll of the frames topics, a producer's resend after a broker restart), and
# the counter xq_vision_frames_out_of_order_total has them all.
SKIPPED_LOG_EVERY_S = 10.0
# A vision process to which its group has given no partitions this long after it began to rejoin is made a new
# member (bus.Consumer.renew_after_s), as the referee is (services/referee/service.py, REFEREE_REJOIN_S, which says
# how the embedded broker can leave a rejoining member unanswered): a member kicked out of its group under load was
# seen to leave its boards' frames unread past a period of the frames topics, which the roller then dropped, and
# the moves in them were never seen (bench/faults.py, camera boards). Shorter than that period (bus.FRAMES_ROLL_S).
VISION_REJOIN_S = 20.0


@dataclass
class BoardSlot:
    state: TrackerState
    frames: OrderedDict[str, bytes] = field(default_factory=OrderedDict)  # sha256 -> JPEG (the last few)
    corners: Any = None  # the operator's corners the state's fit was made from (None: none applied yet)
    game: str | None = None  # the game its tracker follows (named by its frames, or announced by GameStarted)
    seen_until: int | None = None  # the capture time of the last frame handled
    named: bool = False  # the last frame named its game (X-Game-Id): the frames say when the next game begins
    # a new game announced while the last one's frames are still coming: (game id, start squares, start time),
    # begun at the first frame captured at or after its start
    next_game: tuple[str, str | None, int] | None = None
    # the FEN of the position a board resumed at (VisionCore.resume), until its first still board: that board may
    # show a move made while no process read the frames (resume.moved_in_the_gap)
    resumed: str | None = None
    # the game a board resumed with (VisionCore.resume), until its first frame: its tracker starts from the position
    # held when that frame was taken (BoardGame.as_of), not the last one, where the frames are read again from
    # before the last move (the previous owner killed between reporting it and committing its frames)
    resumed_game: BoardGame | None = None


class VisionCore:
    """Frames (FrameCaptured events) in, observation events out; no Kafka. The service and tests drive it."""

    def __init__(self, evidence: EvidenceStore, *, source: str = "vision", config: TrackerConfig | None = None,
                 classifier: Any = None, now_us: Callable[[], int] | None = None,
                 calibrations: Mapping[str, BoardFit] | None = None,
                 corners: Mapping[str, Any] | None = None, read_back_us: int = READ_BACK_US) -> None:
        self.tracker = Tracker(config, classifier)
        self.calibrations: Mapping[str, BoardFit] = dict(calibrations or {})  # board id -> the operator's fit
        # board id -> the operator's four corners (any consistent turn), fitted on the board's next frame
        self.corners: dict[str, tuple[tuple[float, float], ...]] = {
            b: _corner_tuple(c) for b, c in (corners or {}).items()}
        self.evidence = evidence
        self.source = source
        self.boards: dict[tuple[int, str], BoardSlot] = {}
        self.starts: dict[tuple[int, str], str | None] = {}  # (partition, board) -> its game's announced start
        self.games: dict[tuple[int, str], str] = {}  # (partition, board) -> its game announced last (GameStarted)
        self._now_us = now_us or (lambda: time.time_ns() // 1000)
        self.quiet = QuietWatch()  # boards whose camera went quiet (CameraQuiet)
        self.progress = ProgressWatch()  # how far each board's frames are read (CameraProgress)
        # each board's move in progress and last still frames: they hold its watermark and its frames' commit
        # (in_progress.py; `read_back_us` 0: no still frames held between moves)
        self.moves = MovesInProgress(read_back_us=read_back_us)
        self.order = FrameOrder()  # each board's frames stepped in capture order (order.py)
        # partition -> its cameras' counts when it was released (order.py: given back by `recount`)
        self.released_counts: dict[int, CameraCounts] = {}
        # partition -> its boards' slots, starts and games when it was released (given back by `take_back`)
        self.released_boards: dict[int, dict[tuple[int, str], tuple[BoardSlot, str | None, str | None]]] = {}

    def drop_partitions(self, partitions: Iterable[int]) -> None:
        gone = set(partitions)
        for key in [k for k in self.boards if k[0] in gone]:
            self.released_boards.setdefault(key[0], {})[key] = (
                self.boards.pop(key), self.starts.get(key), self.games.get(key))
        for key in [k for k in self.starts if k[0] in gone]:
            del self.starts[key]
        for key in [k for k in self.games if k[0] in gone]:
            del self.games[key]
        self.quiet.drop(gone)
        self.progress.drop(gone)
        self.moves.drop(gone)
        for board, cameras in self.order.drop(gone).items():
            self.released_counts.setdefault(board[0], {})[board] = cameras

    def take_back(self, partitions: Iterable[int], unread: Iterable[int]) -> int:
        """Partitions just assigned: the boards this process followed when it released those in `unread` (no other
        process read their frames since: a rejoin after a broker restarted empty, a commit refused) are followed on
        from where it left them, its trackers knowing what stands on the boards and which move is in progress;
        `resume` seeds only the others. The released boards of the rest are forgotten. Returns the boards taken
        back."""
        keep = set(unread)
        back = 0
        for p in set(partitions):
            for key, (slot, start, game) in self.released_boards.pop(p, {}).items():
                if p in keep and key not in self.boards:
                    self.boards[key] = slot
                    if start is not None:
                        self.starts[key] = start
                    if game is not None:
                        self.games[key] = game
                    back += 1
        return back

    def recount(self, partitions: Iterable[int], unread: Iterable[int]) -> None:
        """Partitions just assigned: the cameras' counts this process had when it released them are taken again
        for those in `unread` (no other process read their frames since: order.py, FrameOrder.recount), so that
        the frames that never reached it meanwhile are counted; the others' are forgotten."""
        keep = set(unread)
        for p in set(partitions):
            counts = self.released_counts.pop(p, None)
            if counts and p in keep:
                self.order.recount(counts)

    def place(self, frame: Any, partition: int = 0) -> Placed:
        """Whether a FrameCaptured is to be handled, and at which time of its board's time line (order.py); if so
        it counts as read. A frame its camera took before the last one read of its board and game, or the same one
        again (a frame acknowledged late into a rolled-away topic, a producer's resend), shows nothing the board's
        later frames did not: it is skipped. A new frame of its camera's count whose clock stepped back (or that
        restarted) is handled at the board's time: its capture time plus the camera's offset."""
        return self.order.place((partition, frame.board_id), frame.data.get("game_id"), int(frame.occurred_at),
                                source=str(frame.source), seq=int(frame.source_seq),
                                epoch=int(frame.data.get("source_epoch") or 0), received_us=int(frame.received_at))

    def in_order(self, frame: Any, partition: int = 0) -> bool:
        """Whether a FrameCaptured is to be handled (`place`); if so it counts as read."""
        return self.place(frame, partition).admitted

    def resume(self, games: Mapping[str, BoardGame], partition: int = 0) -> int:
        """Boards of a partition just assigned, with their games as the venue's topics tell them so far
        (resume.games_of): each board's tracker waits for the position its game stands at (the referee's last, or
        the game's start) as its first still board, instead of the standard start, and follows the game from
        there; a board whose game ended waits for its last position, so that the next GameStarted begins a new
        game; a game without a move yet, after another on the board, waits for its start and not the last game's
        pieces (Tracker.new_game). Boards this process holds already are left as they are. Returns the boards
        seeded."""
        seeded = 0
        for board, known in games.items():
            key = (partition, board)
            if key in self.boards:
                continue
            self.boards[key] = self._seeded(board, known)
            self.starts[key], self.games[key] = known.start, known.game
            seeded += 1
        return seeded

    def _seeded(self, board: str, known: BoardGame) -> BoardSlot:
        """A board's slot whose tracker waits for the position `known` tells as its first still board."""
        state = self.tracker.initial(self.calibrations.get(board), known.stands)
        if known.left is not None and known.position is None:
            state = dataclass_replace(state, left=known.left)
        gap = None if known.ended or (known.left is not None and known.position is None) else (
            known.fen or START_FEN)
        return BoardSlot(state, game=known.game, resumed=gap, resumed_game=known)

    def handle(self, frame: Any, partition: int = 0, at_us: int | None = None,
               stored: tuple[Hashable, int] | None = None) -> list[Any]:
        """One FrameCaptured event -> the observation events it gives (xqarb.events.Event values). `at_us`: the
        frame's time on its board's time line (`place`; None: its capture time). `stored`: where the frame is
        stored (its log and offset), read again from there should this process stop in a move in progress
        (in_progress.py). The tracker steps at that time,
        and the observations carry it as their occurred_at: it is the capture time, except after the camera's
        clock stepped back, where it is the capture time plus the camera's offset (order.py). The referee folds a
        board's observations and clock presses in event time (services/referee/ordering.py): the camera's raw
        times after a step back would put the next move's still board before the clock press that ended the last
        move, and its watermark (CameraProgress) would stand still until the camera's clock caught up."""
        import cv2
        import numpy as np

        from xqarb.events import make_event

        board = frame.board_id
        key = (partition, board)
        slot = self.boards.get(key)
        if slot is None:
            slot = self.boards[key] = BoardSlot(self.tracker.initial(self.calibrations.get(board),
                                                                     self.starts.get(key)),
                                                game=frame.data.get("game_id") or self.games.get(key))
        named = frame.data.get("game_id")
        at = int(frame.occurred_at) if at_us is None else at_us
        if slot.resumed_game is not None:
            then = slot.resumed_game.as_of(at)
            if then is not slot.resumed_game:
                slot = self.boards[key] = self._seeded(board, then)
            slot.resumed_game = None
        if named and slot.game and named != slot.game:
            # the camera names the board's next game: it begins with this frame, its GameStarted before or after
            # it (the frames and the venue's events reach this process on topics of their own, in no common order)
            if slot.next_game is None or slot.next_game[0] != named:
                slot.next_game = (named, self.starts.get(key) if self.games.get(key) == named else None, 0)
            self._begin_next_game(slot)
        elif not named and slot.next_game is not None and at >= slot.next_game[2]:
            self._begin_next_game(slot)  # (a camera that does not name games: the game's start time tells)
        slot.seen_until, slot.named = at, bool(named)
        data = bytes(frame.data["image"])
        sha = frame.data.get("frame_sha256") or sha256_hex(data)
        slot.frames[sha] = data
        while len(slot.frames) > self.tracker.config.evidence_keep + 1:
            slot.frames.popitem(last=False)
        image = small = None
        wanted = self.corners.get(board)
        recalibrate = wanted is not None and slot.corners != wanted
        if data:
            buf = np.frombuffer(data, np.uint8)
            # a 1/8-scale decode first: a frame like the last one needs no full decode (most frames of a board)
            small = cv2.imdecode(buf, cv2.IMREAD_REDUCED_GRAYSCALE_8)
            if small is not None and not recalibrate and not self.tracker.needs_image(slot.state, small):
                image = None
            else:
                image = cv2.imdecode(buf, cv2.IMREAD_COLOR)
        if recalibrate and image is not None:
            slot.state, slot.corners = _given_state(slot.state, wanted, image), wanted
        first = slot.state.known is None
        slot.state, observations = self.tracker.step(slot.state, image, at, sha, small=small)
        self.moves.frame(key, at, _still(slot.state), *(stored or (None, None)))
        if slot.resumed is not None and first and slot.state.known is not None:
            observations = self._resumed_at(slot, observations)
        out = []
        for k, obs in enumerate(observations):
            for ev_sha in obs.evidence:
                jpeg = slot.frames.get(ev_sha)
                if jpeg is not None:
                    self.evidence.put(jpeg)
            out.append(make_event(
                obs.type, board, source=self.source, source_seq=int(frame.source_seq) * 16 + k,
                occurred_at=at, received_at=self._now_us(),
                event_id=str(uuid.uuid5(OBSERVATION_NS, f"{frame.event_id}/{k}/{obs.type}")),
                **_fields(obs, frame)))
        return out

    def learn(self, event: Any, partition: int = 0) -> bool:
        """A position the rest of the system holds for a board: the referee's MoveMade (`fen_after`, from
        xq.game-events) or an arbiter's PositionRestored (`fen`, from xq.arbiter). The board's tracker takes it as
        its known board (Tracker.adopt), so that a point it read poorly once is not misread again at every later
        still board. Returns whether the tracker took it (a move's position that disagrees with the last snapshot
        is one the referee inferred from an earlier snapshot: the tracker is ahead and keeps its own). Other event
        types and boards this process does not track are ignored. A GameStarted's start position (a handicap
        game) is what the board's first still board is matched against (Tracker.expect_start), also for a board
        whose frames have not come yet. A GameStarted of another game than the one a board's tracker follows is
        the board's next game: the tracker begins it (Tracker.new_game) with the first frame that names it
        (X-Game-Id), or from a camera that names no game, the first frame captured at or after the game's start,
        so that the last game's frames still on their way are read as that game's; the same game announced again
        changes nothing. An AttentionNeeded that carries the referee's position (`fen`: a
        board change it could not follow) has the tracker look again from it at the next still board. A position
        of another game than the one followed (the last game's, arriving late) is not the board's."""
        key = (partition, event.board_id)
        slot = self.boards.get(key)
        if event.type == "BoardCalibrated":
            # an operator's corners (xq.arbiter: the calibration page, source "arbiter:<id>"); vision's own go to
            # xq.observations, and are never taken back as an operator's should they come round
            if not str(event.source).startswith("arbiter:"):
                return False
            try:
                self.corners[event.board_id] = _corner_tuple(event.data["corners"])
            except (TypeError, ValueError, KeyError):
                return False  # the API checked them; a malformed one changes nothing
            return True
        if slot is not None and event.type in ("GameStarted", "MoveMade", "PositionRestored", "AttentionNeeded"):
            slot.resumed_game = None  # (what it tells is newer than the history the board resumed with)
        if event.type == "GameStarted":
            return self._game_started(event, key, slot)
        if slot is None:
            return False
        named = event.data.get("game_id")
        if named and slot.game and named != slot.game:
            return False
        if event.type == "AttentionNeeded":
            # the referee could not follow the board's last still board: its tracker looks again from the
            # position the referee holds (Tracker.not_followed); other attentions (a clock, a record) carry none
            fen = event.data.get("fen")
            if not fen:
                return False
            before = slot.state
            try:
                slot.state = self.tracker.not_followed(slot.state, str(fen))
            except ValueError:
                return False  # a bad FEN is the referee's to report, not a reason to lose the board
            return slot.state is not before
        if event.type == "MoveMade":
            fen, restored = event.data.get("fen_after"), False
        elif event.type == "PositionRestored":
            fen, restored = event.data.get("fen"), True
        else:
            return False
        try:
            squares = squares_of_fen(str(fen))
        except ValueError:
            return False  # a bad FEN is the referee's to report (AttentionNeeded), not a reason to lose the board
        before = slot.state
        slot.state = self.tracker.adopt(slot.state, squares, restored=restored)
        return slot.state is not before

    def _game_started(self, event: Any, key: tuple[int, str], slot: BoardSlot | None) -> bool:
        try:
            start = squares_of_fen(str(event.data["start_fen"])) if event.data.get("start_fen") else None
        except ValueError:
            return False  # the referee reports the bad FEN
        game = str(event.data.get("game_id") or "").strip()
        if not game:
            return False  # no game to start (the referee says so)
        if slot is not None and slot.next_game is not None and slot.next_game[0] == game:
            slot.next_game, self.starts[key] = (game, start, slot.next_game[2]), start  # announced again, not begun
            return False
        if slot is not None and game == slot.game:
            # the game followed, announced again (a device's retry, a replay): it goes on; or announced after its
            # frames began it: its start, where the tracker still waits for one
            if slot.state.known is not None or slot.next_game is not None:
                return False
            self.starts[key], self.games[key] = start, game
            before = slot.state
            slot.state = self.tracker.expect_start(slot.state, start)
            return slot.state is not before
        self.starts[key], self.games[key] = start, game
        if slot is None:
            return True
        if slot.state.known is None:
            # nothing followed yet (or a start still awaited): the first still board is matched against this start
            before, slot.next_game = slot.state, None
            if not slot.named:  # (a camera that names the game says itself when the game changes)
                slot.game = game
            slot.state = self.tracker.expect_start(slot.state, start)
            return slot.state is not before
        if slot.game is None:
            # followed since before any game was named (this process started mid-game): the start of the game it
            # follows announced late cannot be told from a new one, and a game in progress is not reset
            return False
        slot.next_game = (game, start, int(event.occurred_at))
        if not slot.named and slot.seen_until is not None and slot.seen_until >= slot.next_game[2]:
            self._begin_next_game(slot)  # its frames are already here: the board is looked at again for the start
        return True

    def _begin_next_game(self, slot: BoardSlot) -> None:
        assert slot.next_game is not None
        game, start, _ = slot.next_game
        slot.state = self.tracker.new_game(slot.state, start)
        slot.game, slot.next_game, slot.resumed = game, None, None

    def _resumed_at(self, slot: BoardSlot, observations: list[Observation]) -> list[Observation]:
        """A resumed board's first still board, taken as the position it resumed at: where it clearly shows one
        move on from there instead (a move made while no process read its frames), it is reported as that move's
        position, so that the referee makes the move, and the tracker follows on from it."""
        fen, slot.resumed = slot.resumed, None
        assert fen is not None
        reading = slot.state.ref_reading
        if reading is None or slot.state.known != squares_of_fen(fen):
            return observations  # (read otherwise than the position resumed at: the referee judges what was read)
        moved = moved_in_the_gap(fen, reading)
        if moved is None:
            return observations
        slot.state = self.tracker.adopt(slot.state, moved, restored=True)
        return [dataclass_replace(obs, fields={**obs.fields, "squares": moved}) if obs.type == "BoardStable"
                else obs for obs in observations]

    def camera_quiet(self, records: Iterable[Any], at: Mapping[str, int] | None = None,
                     behind: Iterable[int] = ()) -> list[Any]:
        """CameraQuiet observations (quiet.py) after one poll's records (frames, GameStarted and GameEnded): a
        board whose camera has sent no frame for the setting, and the first frame of one reported so. `at`: the
        frames' times on their boards' time lines by event id (`place`; a frame not there: its capture time).
        `behind`: partitions whose frames are not read to their end (their boards' silences not judged yet)."""
        from xqarb.events import make_event

        now = self._now_us() / 1e6
        reports: list[QuietReport] = []
        for rec in records:
            e = rec.event
            key = (rec.partition, e.board_id) if e is not None else None
            if key is None:
                continue
            if e.type == "FrameCaptured":
                game = e.data.get("game_id") or self.games.get(key)
                captured = (at or {}).get(e.event_id, int(e.occurred_at))
                back = self.quiet.frame(key, e.event_id, int(e.source_seq), captured, game, now)
                reports.extend([back] if back is not None else [])
            elif e.type in ("GameStarted", "GameEnded") and e.data.get("game_id"):
                self.quiet.game(key, str(e.data["game_id"]), e.type == "GameEnded", now)
        reports.extend(self.quiet.due(now, behind))
        return [make_event(
            "CameraQuiet", r.key[1], source=self.source, source_seq=r.frame_seq * 16 + (14 if r.back else 15),
            occurred_at=r.at, received_at=self._now_us(),
            event_id=str(uuid.uuid5(OBSERVATION_NS, f"{r.frame_event_id}/{'back' if r.back else 'quiet'}")),
            since=r.since, quiet_ms=round(self.quiet.quiet_s * 1000), back=r.back, game_id=r.game)
            for r in reports]

    def camera_progress(self, records: Iterable[Any], at: Mapping[str, int] | None = None) -> list[Any]:
        """CameraProgress observations (progress.py) after one poll's records: how far each board's frames are
        read, about once a second of its frames, so that the referee holds its clock presses until then. `at`: the
        frames' times on their boards' time lines by event id (`place`; a frame not there: its capture time)."""
        from xqarb.events import make_event

        for rec in records:
            e = rec.event
            if e is not None and e.type == "FrameCaptured":
                key = (rec.partition, e.board_id)
                game = e.data.get("game_id") or self.games.get(key)
                read_to = (at or {}).get(e.event_id, int(e.occurred_at))
                # (not past a move in progress: the presses it holds wait for its still board)
                self.progress.frame(key, self.moves.watermark(key, read_to), e.event_id, int(e.source_seq), game)
        return [make_event(
            "CameraProgress", r.key[1], source=self.source, source_seq=r.frame_seq * 16 + 13, occurred_at=r.at,
            received_at=self._now_us(), event_id=str(uuid.uuid5(OBSERVATION_NS, f"{r.frame_event_id}/progress")),
            frames=r.frames, game_id=r.game)
            for r in self.progress.due()]


def _still(state: TrackerState) -> bool:
    """Whether a board's tracker holds a still board with nothing in progress (no hand over it, no change since the
    last BoardStable): a move that began since is told whole only at the next still board. A camera fault (a frame
    that does not decode, the board lost) holds no move: read again, its frames would tell the same fault."""
    return state.known is not None and not state.hand and (not state.pending or state.fault is not None)


def _fields(obs: Observation, frame: Any) -> dict[str, Any]:
    fields = dict(obs.fields)
    fields["frame_sha256"] = obs.frame_sha256 or ""
    fields["evidence"] = list(obs.evidence)
    game = frame.data.get("game_id")
    if game is not None:
        fields["game_id"] = game
    return fields


def _corner_tuple(raw: Any) -> tuple[tuple[float, float], ...]:
    """Four [x, y] points as a hashable, comparable value; ValueError when they are not four pairs of numbers."""
    out = tuple((float(x), float(y)) for x, y in raw)
    if len(out) != 4:
        raise ValueError(f"four corners are needed, not {len(out)}")
    return out


def _given_state(state: TrackerState, corners: tuple[tuple[float, float], ...], image: Any) -> TrackerState:
    """The tracker's state calibrated at an operator's corners (given.py: any consistent turn) from this frame on:
    the fit is measured again on this frame, the position followed so far is kept. Corners that cannot be a board
    in this picture (a camera replaced by one of another size) are taken as given, in the order a9 i9 i0 a0, as
    before given.py: the venue never stalls on them."""
    from dataclasses import replace

    from .board import fit_from_corners
    from .given import BadCorners, fit_given_corners

    try:
        fit = fit_given_corners(image, corners)
        fit = replace(fit, method="operator")
    except BadCorners as exc:
        print(f"vision: the operator's corners {list(corners)} do not fit the frame ({exc.reason}); taken as given",
              file=sys.stderr)
        fit = fit_from_corners(corners, "operator", 1.0)
    return replace(state, fit=fit, fit_given=True, calibrated=False, ref_view=None, last_full=None,
                   last_small=None, pending=True)


def corners_of(boards: Mapping[str, Any]) -> dict[str, tuple[tuple[float, float], ...]]:
    """The corners the venue configuration gives its boards (xqarb.ingest.config.Board values), any turn."""
    return {board_id: b.corners for board_id, b in boards.items() if b.corners is not None}


def calibrations_of(boards: Mapping[str, Any]) -> dict[str, BoardFit]:
    """The fits of the boards whose corners the venue configuration gives (xqarb.ingest.config.Board values)."""
    return {board_id: fit_from_corners(b.corners, "operator", 1.0) for board_id, b in boards.items()
            if b.corners is not None}


def serve(args: argparse.Namespace) -> int:
    """`xqarb vision serve`: run until interrupted."""
    source = args.source or f"vision-{socket.gethostname()}-{os.getpid()}"
    from xqarb.config import evidence_dir

    from .cli import _classifier

    calibrations: dict[str, tuple[tuple[float, float], ...]] = {}
    quiet_s = CAMERA_QUIET_S
    if args.config:
        from xqarb.ingest.config import ConfigError, load_config

        try:
            venue = load_config(args.config)
            calibrations, quiet_s = corners_of(venue.boards), venue.alerts.camera_quiet_s
        except (ConfigError, OSError) as exc:
            print(f"xqarb vision serve: {args.config}: {exc}", file=sys.stderr)
            return 2
        print(f"vision: {len(calibrations)} board(s) calibrated by the venue configuration", file=sys.stderr)
    from .sweep import open_venue_store  # the venue's [evidence] store: a directory, or a shared PostgreSQL

    store, _ = open_venue_store(args.config, args.evidence_dir or evidence_dir())
    core = VisionCore(store, source=source,
                      config=TrackerConfig(stable_us=args.stable_ms * 1000), classifier=_classifier(),
                      corners=calibrations)
    core.quiet = QuietWatch(quiet_s)  # the venue's [alerts] camera_quiet_s
    try:
        run(args.bootstrap_servers, args.group, core, max_records=args.max_records,
            state_url=args.state_url, partitions=args.partitions)
    except KeyboardInterrupt:
        return 0
    return 0


def run(bootstrap: str, group: str, core: VisionCore, *, max_records: int = 64,
        stop: Callable[[], bool] = lambda: False, poll_s: float = 1.0, state_url: str | None = None,
        referee_group: str | None = None, partitions: int | None = None) -> int:
    """Consume xq.frames and produce xq.observations until `stop()` says so; returns the frames handled.
    `state_url`: the referee's API, whose boards complete the games the topics tell of (resume). `referee_group`:
    the group reading the observations (bus.REFEREE_GROUP by default), whose commits say which observations kept
    to be sent again after a broker restart may be forgotten (observations_kept.py). `partitions`: of the topics it
    makes where missing (bus.DEFAULT_PARTITIONS by default)."""
    from xqarb import bus

    from .observations_kept import ObservationReplay

    bus.ensure_topics(bootstrap, partitions=partitions or bus.DEFAULT_PARTITIONS)
    producer = bus.Producer(bootstrap, client_id=core.source)
    # the observations the broker acknowledged and the referee has not read yet, sent again should the broker lose
    # them (an embedded broker restarted empty)
    replay = ObservationReplay.connect(bootstrap, referee_group or bus.REFEREE_GROUP)
    consumer: bus.Consumer | None = None

    # (topic, partition) of the frames topics -> the offset after the last record polled, and that offset as this
    # process last committed it: a partition given back whose group offset is still that one (or none: a broker
    # that restarted empty) was read by no other process meanwhile (VisionCore.recount)
    read_to: dict[tuple[str, int], int] = {}
    committed_to: dict[tuple[str, int], int] = {}

    def commit() -> None:
        assert consumer is not None
        # a move in progress is read again by the next owner, from the still board before it (in_progress.py)
        held = core.moves.read_from()
        consumer.commit(held={bus.TopicPartition(*log): offset for log, offset in held.items()})
        committed_to.update({log: min(offset, held.get(log, offset)) for log, offset in read_to.items()})

    def revoked(partitions: Iterable[bus.TopicPartition]) -> None:
        parts = list(partitions)
        if consumer is not None:
            try:
                commit()
            except bus.CommitFailed as exc:
                print(f"vision: commit before release failed ({exc}); the next owner replays", file=sys.stderr)
        core.drop_partitions(tp.partition for tp in parts)

    # (topic, partition) -> the offset up to which its history was folded when assigned (resume): the group's
    # records before it are not taken again
    folded: dict[tuple[str, int], int] = {}

    def assigned(partitions: Iterable[bus.TopicPartition]) -> None:
        parts = sorted({tp.partition for tp in partitions})
        replay.check(producer, now=True)  # a rejoin: after a broker restart, the observations it lost go first
        core.drop_partitions(parts)  # start fresh: calibrate from the next frames, with each board's game and
        if parts:  # position as the venue has them; but a partition nobody else read since goes on as it was
            unread = unread_since(consumer, partitions, committed_to)
            core.take_back(parts, unread)
            resume(bootstrap, core, parts, folded, state_url)
            core.recount(parts, unread)

    # xq.game-events and xq.arbiter too: the positions the referee accepted and the arbiters restored (learn).
    # Range assignment gives this process partition p of every topic, so those of the boards whose frames it reads.
    topics = [bus.FRAMES, bus.GAME_EVENTS, bus.ARBITER]
    # Frames only: a partition with no offset to resume from starts some seconds back from now, not a retention's
    # worth of frames back (xqarb.fresh_start); `assigned` seeds its boards with their games' positions meanwhile.
    consumer = bus.Consumer(bootstrap, group, topics, on_assigned=assigned, on_revoked=revoked,
                            dlq_producer=producer, client_id=core.source,
                            fresh_back_s={bus.FRAMES: FRESH_FRAMES_BACK_S}, renew_after_s=VISION_REJOIN_S)
    print(f"vision: consuming {', '.join(topics)} as {core.source} in group {group}", file=sys.stderr, flush=True)
    handled = 0
    skipped = SkippedLog()
    try:
        while not stop():
            records = consumer.poll(poll_s, max_records=max_records)
            sent: list[bus.Pending] = []
            out: list[Any] = []  # the observations of `sent`, in order (to send again: deliver)
            read: list[bus.Record] = []  # the records taken (all but the frames skipped as out of order)
            times: dict[str, int] = {}  # frame event id -> its time on its board's time line (order.py)
            for i, rec in enumerate(records):
                if consumer.rebalance_due():
                    # The group is rebalancing: this member rejoins within the broker's join round, not after the
                    # batch (seconds of frames under load); the rest is read again, by this member or the next owner.
                    consumer.give_back(records[i:])
                    break
                if bus.base_topic(rec.topic) == bus.FRAMES:
                    read_to[(rec.topic, rec.partition)] = rec.offset + 1
                if rec.event is None:
                    continue
                if rec.event.type != "FrameCaptured":
                    read.append(rec)
                    if rec.offset >= folded.get((rec.topic, rec.partition), 0):
                        core.learn(rec.event, rec.partition)
                    continue
                placed = core.place(rec.event, rec.partition)
                if placed.missed:
                    frames_missed(rec, placed.missed)
                if not placed.admitted:
                    skipped.frame(rec, time.monotonic())  # counted; its offset is committed with the batch's
                    continue
                if placed.step_us:
                    clock_stepped(rec, placed)
                read.append(rec)
                times[rec.event.event_id] = placed.at_us
                # each frame's observations go out at once, not after the rest of the batch is read (a batch of
                # frames queued under load takes seconds): the move reaches the referee that much sooner
                seen = core.handle(rec.event, rec.partition, placed.at_us, ((rec.topic, rec.partition), rec.offset))
                out += seen
                sent += producer.send_soon(bus.OBSERVATIONS, seen)
                handled += 1
            reports = [
                # boards gone quiet, and frames again (quiet.py); not while their frames are read behind
                *core.camera_quiet(read, times, consumer.behind([bus.FRAMES])),
                *core.camera_progress(read, times),  # how far the boards' frames are read (progress.py)
            ]  # fmt: skip
            out += reports
            sent += producer.send_soon(bus.OBSERVATIONS, reports)
            # acknowledged before the offsets move on; a batch sent again goes after the kept observations a
            # restarted broker lost
            replay.kept(out, deliver(producer, sent, out, stop, before_resend=lambda: replay.check(producer, now=True)))
            replay.check(producer)  # about once a second: those the referee read forgotten, or those lost sent again
            if records:
                try:
                    commit()
                except bus.CommitFailed as exc:
                    # The group no longer knows this member (a broker restarted, this process paused past its
                    # session timeout): kafka-python rejoins at the next poll, which releases the partitions and
                    # takes those assigned again from their committed offsets: these frames are read again (or, on
                    # a broker restarted empty, were lost with it), never a stopped process.
                    print(f"vision: {exc}; rejoining the group", file=sys.stderr, flush=True)
    finally:
        consumer.close()
        replay.close()
        producer.close()
    return handled


# A broker host rebooting takes 30-120 s at a venue, longer than the producer waits for an acknowledgement (its
# timeout, 30 s): observations it gave up on are sent again after this pause, until the broker takes them.
RESEND_PAUSE_S = 1.0


def deliver(producer: Any, sent: Sequence[Any], events: Sequence[Any], stop: Callable[[], bool],
            before_resend: Callable[[], object] | None = None) -> list[Any]:
    """Wait until the broker acknowledged a batch's observations (`sent`: `events` handed to `send_soon`), sending
    them all again, in order, each time it did not (a broker away longer than the producer's timeout), rather than
    ending the process: a process that goes on keeps its boards' trackers and its cameras' counts (the frames lost
    with a broker restarted empty are counted), and waits for no fresh start. Sending again is safe: the same
    events, the same ids, which the referee takes once. Memory stays bounded by the one batch: nothing more is
    polled meanwhile (at most `max_records` frames' observations, with the batch's quiet and progress reports), and
    the offsets do not move on. A `stop()` said meanwhile ends the wait with the PublishError: nothing was
    acknowledged, so nothing is lost (the frames are read again by the next owner, or were lost with the broker).
    `before_resend` is called before each sending again (the observations a restarted broker lost go first).
    Returns where the broker stored them (bus.Delivery, in the order of `events`)."""
    from xqarb import bus

    tries = 0
    while True:
        try:
            if tries:
                if before_resend is not None:
                    before_resend()
                sent = producer.send_soon(bus.OBSERVATIONS, events)
            return producer.acknowledged(sent)
        except bus.PublishError as exc:
            if stop():
                raise
            tries += 1
            print(f"vision: {len(events)} observation(s) not acknowledged ({exc}); sending them again in "
                  f"{RESEND_PAUSE_S:.0f} s (try {tries + 1})", file=sys.stderr, flush=True)
            time.sleep(RESEND_PAUSE_S)


def unread_since(consumer: Any, partitions: Iterable[Any], committed_to: Mapping[tuple[str, int], int]) -> list[int]:
    """The partitions (numbers) just assigned whose frames no other process read since this one last committed
    them: the group's committed offset on each of their frames topics is the one this process committed last, or
    none at all (a broker that restarted empty lost them with its frames). A partition whose group offset another
    process moved, or that the broker does not answer for, is not among them (its cameras' counts start afresh)."""
    from kafka.errors import KafkaError

    from xqarb import bus

    frames = [tp for tp in partitions if bus.base_topic(tp.topic) == bus.FRAMES]
    unread = {tp.partition for tp in frames}
    for tp in frames:
        try:
            offset = consumer.committed(tp)
        except (KafkaError, OSError) as exc:  # the counts then start afresh: nothing else depends on them
            print(f"vision: the committed offset of {tp.topic}[{tp.partition}] was not read ({exc})",
                  file=sys.stderr, flush=True)
            unread.discard(tp.partition)
            continue
        if offset is not None and offset != committed_to.get((tp.topic, tp.partition)):
            unread.discard(tp.partition)
    return sorted(unread)


def frames_missed(rec: Any, missed: int) -> None:
    """Frames of a camera's count that never reached vision (order.py: between its last frame read and this one):
    counted (Prometheus) and said, one line per gap."""
    from xqarb import metrics

    metrics.FRAMES_MISSED.inc(missed)
    e = rec.event
    seq, epoch = int(e.source_seq), e.data.get("source_epoch") or 0
    print(f"vision: board {e.board_id} camera {e.source}: {missed} frame(s) never read, numbers {epoch}/"
          f"{seq - missed}..{epoch}/{seq - 1} (refused by ingest, lost by the broker, or dropped; {rec.topic}"
          f"[{rec.partition}]@{rec.offset})", file=sys.stderr, flush=True)


def clock_stepped(rec: Any, placed: Placed) -> None:
    """A new frame of a camera captured before its board's last frame read (order.py: a clock stepped back, a
    camera restarted): counted (Prometheus) and said, each (a rare event an operator wants to see); and the
    camera's clock gone forward again (its offset given back): said."""
    from xqarb import metrics

    e = rec.event
    captured = int(e.occurred_at)
    if placed.step_us > 0:
        metrics.CAMERA_CLOCK_STEPS.inc()
        what = f"clock {placed.step_us / 1e6:.3f} s behind the board's last frame read"
    else:
        what = f"clock gone forward again, {-placed.step_us / 1e6:.3f} s of its offset given back"
    print(f"vision: board {e.board_id} camera {e.source}: {what} (frame {e.data.get('source_epoch') or 0}/"
          f"{int(e.source_seq)} captured at {captured} us); its frames go on at the board's time, "
          f"{(placed.at_us - captured) / 1e6:.3f} s after their capture times ({rec.topic}[{rec.partition}]@"
          f"{rec.offset})", file=sys.stderr, flush=True)


class SkippedLog:
    """Frames skipped as out of order: each counted (Prometheus), a log line at most every SKIPPED_LOG_EVERY_S."""

    def __init__(self, every_s: float = SKIPPED_LOG_EVERY_S) -> None:
        self.every_s = every_s
        self.total = 0
        self._unsaid = 0
        self._said_at: float | None = None

    def frame(self, rec: Any, now: float) -> None:
        from xqarb import metrics

        metrics.FRAMES_OUT_OF_ORDER.inc()
        self.total += 1
        self._unsaid += 1
        if self._said_at is not None and now - self._said_at < self.every_s:
            return
        e = rec.event
        print(f"vision: {self._unsaid} frame(s) skipped as late or repeated (their camera's count, or their time, "
              f"not after a frame of their board already read), the last board {e.board_id} camera {e.source} "
              f"number {e.data.get('source_epoch') or 0}/{int(e.source_seq)} captured at {int(e.occurred_at)} us "
              f"({rec.topic}[{rec.partition}]@"
              f"{rec.offset}); {self.total} in all", file=sys.stderr, flush=True)
        self._said_at, self._unsaid = now, 0


def resume(bootstrap: str, core: VisionCore, partitions: Sequence[int], folded: dict[tuple[str, int], int],
           state_url: str | None = None) -> None:
    """Partitions just assigned: their boards' games and positions read from `xq.game-events` and `xq.arbiter` from
    their beginning (resume.py), completed by the referee API's `/api/boards` at `state_url` where given (after an
    embedded broker restarted empty), seed the boards' trackers (VisionCore.resume); `folded` gets the offsets read
    up to. A broker that does not answer leaves the boards to be read from their frames alone, as before."""
    from xqarb import bus

    t0 = time.monotonic()
    try:
        records, ends, count = read_history(bootstrap, [bus.GAME_EVENTS, bus.ARBITER], partitions,
                                            client_id=f"{core.source}-resume")
    except (HistoryUnread, bus.BusError) as exc:
        print(f"vision: the games in progress were not read ({exc}); boards are followed from their frames",
              file=sys.stderr, flush=True)
        return
    api: dict[str, BoardGame] = {}
    if state_url and count:
        try:
            api = games_of_boards(read_boards(state_url))
        except HistoryUnread as exc:
            print(f"vision: {exc}; the games in progress are as the topics tell them", file=sys.stderr, flush=True)
    seeded = 0
    for p in partitions:
        # (in event time, as the referee folds them: the two topics keep no common order; xq.game-events first
        # at equal times, as the referee's outputs there follow from the inputs)
        mine = sorted((r for r in records if r.partition == p and r.event is not None),
                      key=lambda r: (int(r.event.occurred_at), r.topic != bus.GAME_EVENTS, r.offset))
        events = [r.event for r in mine]
        for event in events:
            if event.type == "BoardCalibrated":
                core.learn(event, p)  # an operator's corners (the calibration page) hold after a restart too
        mine = {board: known for board, known in api.items() if partition_of(board, count) == p}
        seeded += core.resume(completed(games_of(events), mine), p)
    folded.update({(tp.topic, tp.partition): end for tp, end in ends.items()})
    print(f"vision: partitions {list(partitions)}: {seeded} board(s) resumed from {len(records)} event(s) in "
          f"{time.monotonic() - t0:.1f} s", file=sys.stderr, flush=True)
