"""A vision process that starts while a game is in progress (a crashed one restarted, a group rebalanced onto a new
member) learns each board's game and the referee's position from xq.game-events and xq.arbiter, and follows the
game on from there: over the real embedded broker with the real referee service, and the pure parts by hand."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from xqarb.events import Event, make_event
from xqarb.referee.rules import START_FEN, Move, Position
from xqarb.vision.occupancy import PointReading
from xqarb.vision.resume import BoardGame, games_of, moved_in_the_gap
from xqarb.vision.tracker import squares_of_fen

BOARD = "3"
STEP = 250_000  # 4 frames per second
MOVES = ["h2e2", "h9g7", "h0g2", "i9h9"]  # cannon to the centre, horses out, a rook


@dataclass(frozen=True)
class _Said:
    """What games_of reads of an event (the catalogue's other fields do not matter to it)."""

    type: str
    occurred_at: int
    data: dict[str, Any]
    board_id: str = BOARD


def _event(type_: str, t: int, **data: Any) -> _Said:
    return _Said(type_, t, data)


def _fen_after(plies: int) -> str:
    position = Position.from_fen(START_FEN)
    for move in MOVES[:plies]:
        position = position.play(Move.parse(move))
    return position.fen()


def test_games_of_follows_each_board_to_its_last_position() -> None:
    restored = "3k5/9/9/9/9/9/9/9/9/4K4 w - - 0 1"
    events = [
        _event("GameStarted", 1, game_id="g1"),
        _event("MoveMade", 2, game_id="g1", fen_after=_fen_after(1)),
        _event("MoveMade", 3, game_id="g1", fen_after=_fen_after(2)),
        _event("GameStarted", 4, game_id="g1"),  # (announced again: nothing reset)
    ]
    assert games_of(events) == {BOARD: BoardGame("g1", None, squares_of_fen(_fen_after(2)), _fen_after(2), 3, earlier=(
        (1, None, None), (2, squares_of_fen(_fen_after(1)), _fen_after(1))))}
    # an arbiter's restored position is the board's from then on; a late report of another game is not
    events += [_event("PositionRestored", 5, fen=restored, article="5.8.2", game_id=None),
               _event("MoveMade", 6, game_id="g0", fen_after=_fen_after(3))]
    assert games_of(events)[BOARD].position == squares_of_fen(restored)
    # a game ended: its last position stands; the next game, without a move yet, waits for its start
    events += [_event("GameEnded", 7, game_id="g1", result="1-0", article="7.1", reason="resigned")]
    assert games_of(events)[BOARD].ended
    events += [_event("GameStarted", 8, game_id="g2", start_fen="4k4/9/9/9/9/9/9/9/9/4K4 w - - 0 1")]
    assert games_of(events) == {BOARD: BoardGame("g2", squares_of_fen("4k4/9/9/9/9/9/9/9/9/4K4 w - - 0 1"),
                                                 fen="4k4/9/9/9/9/9/9/9/9/4K4 w - - 0 1", at=8,
                                                 left=squares_of_fen(restored))}
    assert games_of(events)[BOARD].stands == squares_of_fen("4k4/9/9/9/9/9/9/9/9/4K4 w - - 0 1")


def test_a_game_tells_the_position_it_held_at_any_earlier_time() -> None:
    events = [_event("GameStarted", 10, game_id="g1"),
              _event("MoveMade", 20, game_id="g1", fen_after=_fen_after(1)),
              _event("AttentionNeeded", 25, game_id="g1", reason="a look", fen=_fen_after(1)),
              _event("MoveMade", 30, game_id="g1", fen_after=_fen_after(2))]
    game = games_of(events)[BOARD]
    assert game.as_of(30) is game and game.as_of(99) is game
    assert game.as_of(29).position == squares_of_fen(_fen_after(1)) and game.as_of(29).fen == _fen_after(1)
    assert game.as_of(20).at == 20 and game.as_of(24).position == squares_of_fen(_fen_after(1))
    # before the first move: the start (the standard one here); before the game's start: the oldest known
    assert game.as_of(19).position is None and game.as_of(19).stands is None and game.as_of(19).at == 10
    assert game.as_of(5).at == 10 and game.as_of(5).earlier == ()
    assert game.as_of(29).as_of(15) == game.as_of(15)


def _reading(squares: str, doubt: dict[int, float] | None = None) -> PointReading:
    """A reading sure of every point of `squares`, but those in `doubt`: occupied with that probability."""
    occ = np.array([0.02 if c == "." else 0.98 for c in squares])
    for i, p in (doubt or {}).items():
        occ[i] = p
    red = np.array([0.95 if c.isupper() else 0.05 for c in squares])
    zeros = np.zeros(90)
    return PointReading(occ, red, np.zeros((90, 2)), occ, zeros)


def test_a_move_made_while_no_process_read_the_board_is_told_from_the_first_still_board() -> None:
    fen = _fen_after(2)
    one_on = squares_of_fen(_fen_after(3))
    assert moved_in_the_gap(fen, _reading(one_on)) == one_on  # h0g2: h0 empty, g2 a red piece
    assert moved_in_the_gap(fen, _reading(squares_of_fen(fen))) is None  # no move
    # h0 read half empty, g2 unread: no move clearly told (the referee judges the board as read)
    g2, h0 = (9 - 2) * 9 + 6, 9 * 9 + 7
    assert moved_in_the_gap(fen, _reading(squares_of_fen(fen), {h0: 0.5})) is None
    assert moved_in_the_gap(fen, _reading(one_on, {g2: 0.5, h0: 0.5})) is None


class _Run:
    """A thread running a vision process's consumer loop until stopped: its state is dropped when it stops."""

    def __init__(self, bootstrap: str) -> None:
        from xqarb.vision.evidence import MemoryEvidenceStore
        from xqarb.vision.service import VisionCore, run

        self.core = VisionCore(MemoryEvidenceStore(), source="vision-test")
        self.done = threading.Event()
        self.thread = threading.Thread(
            target=lambda: run(bootstrap, "vision-resume-test", self.core, stop=self.done.is_set, poll_s=0.2),
            daemon=True)
        self.thread.start()

    def handled_until(self, t_us: int, timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        while not any(s.seen_until is not None and s.seen_until >= t_us for s in self.core.boards.values()):
            assert time.monotonic() < deadline, "the vision process did not read its frames in time"
            time.sleep(0.1)

    def stop(self) -> None:
        self.done.set()
        self.thread.join(30)


def test_a_game_in_progress_is_followed_on_after_a_vision_restart(tmp_path) -> None:
    """A game's first plies followed; the vision process stopped and a new one, knowing nothing, started while
    the board is still: it follows the next moves. Stopped again with a hand over the board in the middle of a
    move, and a third started: the move made while none read the frames, then the next, are followed too. The
    referee makes every move, and no board change is left for an arbiter."""
    from xqarb import bus
    from xqarb.broker import BrokerError, EmbeddedBroker
    from xqarb.referee.ledger import SqliteLedger
    from xqarb.referee.service import RefereeService
    from xqarb.vision.render import jpeg, render_game

    video = list(render_game(START_FEN, MOVES, 11, fps=1e6 / STEP, difficulty="plain", misplace_rate=0.0,
                             nudge_rate=0.0))
    # The first restart comes after ply 1's still board was read, and the board stands still for 2 s more (the
    # player thinks; the camera sends the same picture): the new process reads that board first. The second comes
    # with the hand over the board in ply 3, the piece lifted.
    last_still_1 = max(k for k, f in enumerate(video) if f.truth.ply == 1 and f.truth.stable)
    thinking = 8
    images = [f.image for f in video[:last_still_1 + 1]] + [video[last_still_1].image] * thinking + [
        f.image for f in video[last_still_1 + 1:]]
    frames = [(k * STEP, image) for k, image in enumerate(images)]
    lifted_3 = thinking + next(k for k, f in enumerate(video) if f.truth.ply == 2 and f.truth.lifted)
    cuts = [last_still_1 + 1, lifted_3 + 1, len(frames)]
    try:
        broker = EmbeddedBroker(log_path=tmp_path / "broker.log").start()
    except BrokerError as exc:
        pytest.skip(f"no embedded broker here: {exc}")
    referee = None
    try:
        bus.ensure_topics(broker.bootstrap, partitions=1)
        referee = RefereeService(broker.bootstrap, SqliteLedger(tmp_path / "ledger.db"), poll_timeout_s=0.2,
                                 hold_s=0.3)
        threading.Thread(target=referee.run, daemon=True).start()
        t0 = 1_764_460_800_000_000
        with bus.Producer(broker.bootstrap, client_id="test") as producer:
            producer.send(bus.ARBITER, make_event(
                "GameStarted", BOARD, source="arbiter", source_seq=1, occurred_at=t0 - STEP, received_at=t0,
                game_id="g1", red_player="Red", black_player="Black",
                time_control={"scheme": "sudden_death", "base_ms": 3_600_000}))
            begin = 0
            for end in cuts:
                vision = _Run(broker.bootstrap)
                producer.send_many(bus.FRAMES, [make_event(
                    "FrameCaptured", BOARD, source="cam", source_seq=k, occurred_at=t0 + frames[k][0],
                    received_at=t0 + frames[k][0], camera_id="cam", width=frames[k][1].shape[1],
                    height=frames[k][1].shape[0], encoding="jpeg", image=jpeg(frames[k][1]))
                    for k in range(begin, end)])
                vision.handled_until(t0 + frames[end - 1][0])
                vision.stop()  # (its trackers are gone with it)
                begin = end
        got: list[Event] = []
        with bus.Reader(broker.bootstrap, [bus.GAME_EVENTS]) as reader:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and sum(e.type == "MoveMade" for e in got) < len(MOVES):
                got.extend(r.event for r in reader.poll(0.3) if r.event is not None)
        assert [e.data["iccs"] for e in got if e.type == "MoveMade"] == MOVES
        assert [e.data["reason"] for e in got if e.type == "AttentionNeeded"] == []
    finally:
        if referee is not None:
            referee.stop()
        broker.stop()


def _frame(k: int, image: Any, t0: int) -> Event:
    from xqarb.vision.render import jpeg

    return make_event("FrameCaptured", BOARD, source="cam", source_seq=k, occurred_at=t0 + k * STEP,
                      received_at=t0 + k * STEP, camera_id="cam", width=image.shape[1], height=image.shape[0],
                      encoding="jpeg", image=jpeg(image))


@pytest.mark.parametrize("first_still_of", [1, 2])
def test_frames_read_again_from_before_the_last_move_start_from_the_position_they_show(first_still_of: int) -> None:
    """The previous owner reported ply 2's still board and was killed before committing its frames: the next owner
    reads them again from ply 1's still board (or from ply 2's, the press that made the move coming later), its
    tracker seeded with the game as the referee told it. It starts from the position held when its first frame was
    taken, not the last one: every still board it reports is the game's position then, and no board goes back."""
    from xqarb.vision.evidence import MemoryEvidenceStore
    from xqarb.vision.render import render_game
    from xqarb.vision.service import VisionCore

    video = list(render_game(START_FEN, MOVES[:3], 11, fps=1e6 / STEP, difficulty="plain", misplace_rate=0.0,
                             nudge_rate=0.0))
    still = {n: [k for k, f in enumerate(video) if f.truth.ply == n and f.truth.stable] for n in (1, 2)}
    t0 = 1_764_460_800_000_000
    # ply 2 made at the press after its still board (its MoveMade's time is the press's)
    events = [_event("GameStarted", t0 - STEP, game_id="g1"),
              _event("MoveMade", t0 + still[1][0] * STEP, game_id="g1", fen_after=_fen_after(1)),
              _event("MoveMade", t0 + still[2][-1] * STEP, game_id="g1", fen_after=_fen_after(2))]
    core = VisionCore(MemoryEvidenceStore(), source="vision-test")
    core.resume(games_of(events))
    reported = [e.data["squares"] for k in range(still[first_still_of][1], len(video))
                for e in core.handle(_frame(k, video[k].image, t0)) if e.type == "BoardStable"]
    plies = [next(n for n in range(4) if squares == squares_of_fen(_fen_after(n))) for squares in reported]
    assert plies == list(range(first_still_of, 4)), plies


def test_a_board_resumed_then_told_its_next_game_is_not_sent_back_to_the_last_one() -> None:
    """What the venue tells a resumed board before its first frame (its next game here) is newer than the history
    it resumed with: a first frame taken before the last game's last position does not seed that game again."""
    from xqarb.vision.evidence import MemoryEvidenceStore
    from xqarb.vision.service import VisionCore

    t0 = 1_764_460_800_000_000
    core = VisionCore(MemoryEvidenceStore(), source="vision-test")
    core.resume(games_of([_event("GameStarted", t0, game_id="g1"),
                          _event("MoveMade", t0 + 10 * STEP, game_id="g1", fen_after=_fen_after(1))]))
    core.learn(make_event("GameStarted", BOARD, source="arbiter", source_seq=2, occurred_at=t0 + 20 * STEP,
                          received_at=t0 + 20 * STEP, game_id="g2", red_player="R", black_player="B",
                          time_control={"scheme": "sudden_death", "base_ms": 600_000}))
    core.handle(_frame(5, np.full((72, 128, 3), 90, np.uint8), t0))
    assert core.boards[(0, BOARD)].game == "g2"


def test_the_api_completes_what_a_restarted_broker_lost() -> None:
    """An embedded broker restarted empty holds only what ingest sent again (the GameStarted, no move): the
    referee API's boards give the position; a board the topics know better, or of another game, keeps theirs."""
    from xqarb.vision.resume import completed, games_of_boards, partition_of

    api = games_of_boards([
        {"board_id": "3", "game_id": "g1", "fen": _fen_after(3), "result": None, "updated_at": 9},
        {"board_id": "4", "game_id": "g4", "fen": _fen_after(1), "result": "1-0", "updated_at": 5},
        {"board_id": "5", "game_id": "g5", "fen": _fen_after(2), "result": None},
        {"board_id": "6", "game_id": None, "fen": None},  # (no game: nothing to follow)
        {"board_id": "7", "game_id": "g7", "fen": "not a fen"},
    ])
    assert sorted(api) == ["3", "4", "5"]
    assert api["4"].ended and api["4"].stands == squares_of_fen(_fen_after(1))
    topics = {"3": BoardGame("g1", at=1),  # (GameStarted sent again by ingest's outbox: no position)
              "5": BoardGame("g6", at=1)}  # (a game the API has not seen yet)
    merged = completed(topics, api)
    assert merged["3"] == BoardGame("g1", position=squares_of_fen(_fen_after(3)), fen=_fen_after(3), at=1)
    assert merged["4"] == api["4"]
    assert merged["5"] == topics["5"]
    # a board's partition is where the producers put its key (the Kafka clients' default partitioner)
    from kafka.partitioner.default import DefaultPartitioner

    parts = [0, 1, 2, 3]
    boards = [str(b) for b in range(40)] + ["board-1"]
    assert [partition_of(b, 4) for b in boards] == [DefaultPartitioner()(b.encode(), parts, parts) for b in boards]
    assert {partition_of(b, 4) for b in boards} == set(parts)
