"""One board, one game after another: the vision service and the referee's fold, as `xqarb up` runs them, without
Kafka. Between games the pieces are set up again by hand; every game on the board is followed from its own start,
whichever of the board's reset and the new game's GameStarted the vision learns of first."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from xqarb.events import Event, make_event

BOARD = "7"
STEP = 250_000  # 4 frames per second
PLIES = 4  # the first plies of each game


@dataclass
class Venue:
    """The vision core and the referee's board fold wired as the services are: the referee folds GameStarted and
    the observations, and its MoveMade and AttentionNeeded go back to the vision (`VisionCore.learn`)."""

    core: Any
    referee: Any = None
    moves: dict[str, list[str]] = field(default_factory=dict)  # game id -> the referee's moves (ICCS)
    attention: list[str] = field(default_factory=list)
    held: list[Event] = field(default_factory=list)  # a GameStarted not yet at the referee (it is in time order)
    seq: int = 0

    def referee_takes(self, event: Event) -> None:
        from xqarb.referee.board import step

        self.referee, done = step(self.referee, event)
        for out in done.outputs:
            if out.type == "MoveMade":
                self.moves.setdefault(out.data["game_id"], []).append(out.data["iccs"])
            elif out.type == "AttentionNeeded":
                self.attention.append(f"{out.data['game_id']}: {out.data['reason']}")
            if out.type in ("MoveMade", "AttentionNeeded"):
                self.core.learn(out)

    def announce(self, game_id: str, t_us: int, *, to_referee: bool = True) -> Event:
        """The arbiter starts a game: the vision learns of it now, the referee now or (held) in time order."""
        self.seq += 1
        event = make_event("GameStarted", BOARD, source="arbiter", source_seq=self.seq, occurred_at=t_us,
                           received_at=t_us, game_id=game_id, red_player="Red", black_player="Black",
                           time_control={"scheme": "sudden_death", "base_ms": 3_600_000})
        self.core.learn(event)
        if to_referee:
            self.referee_takes(event)
        else:
            self.held.append(event)
        return event

    def resign(self, game_id: str, t_us: int) -> None:
        self.seq += 1
        self.referee_takes(make_event("Resigned", BOARD, source="clock", source_seq=self.seq, occurred_at=t_us,
                                      received_at=t_us, side="black", game_id=game_id))

    def frame(self, image: Any, t_us: int, game_id: str | None) -> None:
        from xqarb.vision.render import jpeg

        self.seq += 1
        frame = make_event("FrameCaptured", BOARD, source="cam", source_seq=self.seq, occurred_at=t_us,
                           received_at=t_us, camera_id="cam", width=image.shape[1], height=image.shape[0],
                           encoding="jpeg", image=jpeg(image), game_id=game_id)
        for obs in self.core.handle(frame):
            while self.held and self.held[0].occurred_at <= obs.occurred_at:
                self.referee_takes(self.held.pop(0))
            self.referee_takes(obs)


def _games(shared_data, n: int) -> list[list[str]]:
    """The first plies of the first `n` games of the real games file that start from the standard start."""
    out = []
    for line in (shared_data / "games" / "ccpd_dev.jsonl").read_text().splitlines():
        game = json.loads(line)
        if game["start_fen"].startswith("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w"):
            out.append(game["iccs"][:PLIES])
        if len(out) == n:
            return out
    raise AssertionError("not enough games")


def _video(moves: list[str], seed: int, scene: Any) -> Iterator[Any]:
    from xqarb.vision.render import render_game

    start = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"
    return render_game(start, moves, seed, fps=1e6 / STEP, difficulty="easy", misplace_rate=0.0, nudge_rate=0.0,
                       scene=scene)


@pytest.mark.parametrize("named", [True, False], ids=["camera-names-the-game", "camera-does-not"])
def test_three_games_in_a_row_on_one_board_are_each_followed(shared_data, named: bool) -> None:
    """Three real games' first plies on one board and one camera. The second game is announced as the first one's
    last move is still on its way to the vision (its frames come after the GameStarted) and before the pieces are
    set up again: the last game's board stands for a while after it; the third is announced only once its start
    stands on the board. A GameStarted of the game in progress, sent again, resets nothing. The camera names the
    game of each frame (X-Game-Id), or does not: then the GameStarted's time tells where the next game begins."""
    from xqarb.vision.evidence import MemoryEvidenceStore
    from xqarb.vision.render import random_scene
    from xqarb.vision.service import VisionCore

    games = _games(shared_data, 3)
    scene = random_scene(5, difficulty="easy")  # one board, one camera, one light for all three games
    venue = Venue(VisionCore(MemoryEvidenceStore(), source="vision-test", now_us=lambda: 1))
    ids = [f"g{k}" for k in range(1, 4)]
    t, last = 0, None
    venue.announce(ids[0], t)
    for number, (gid, moves) in enumerate(zip(ids, games, strict=True)):
        frames = list(_video(moves, 40 + number, scene))
        t0 = t
        if number == 1:
            # (the last game's board, still, until the pieces are set up again)
            assert last is not None
            for _ in range(8):
                venue.frame(last.image, t, ids[0] if named else None)
                t += STEP
            t0 = t
        if number == 2:
            # the start set up and still before the game is announced: vision learns of it 2 s later
            for k in range(12):
                venue.frame(frames[0].image, t, gid if named else None)
                if k == 8:
                    venue.announce(gid, t)
                t += STEP
            t0 = t
        for k, f in enumerate(frames):
            t = t0 + f.t_us
            if number == 0 and k == len(frames) - 6:
                # the next game starts after this game's last frames were taken, but the vision learns of it
                # before it has read them (the referee, in time order)
                venue.announce(ids[1], t0 + frames[-1].t_us + STEP, to_referee=False)
            venue.frame(f.image, t, gid if named else None)
            if number == 1 and k == len(frames) // 2:
                venue.announce(gid, t)  # the same game announced again mid-game: a device's retry
        last = frames[-1]
        t += STEP
        if number < 2:
            venue.resign(gid, t)
    for gid, moves in zip(ids, games, strict=True):
        assert venue.moves.get(gid) == moves, (gid, venue.moves, venue.attention)
    # (the referee refuses the repeated GameStarted, and the late-announced game's first observations, sent
    # before it had started; no board it could not follow)
    assert not [a for a in venue.attention if "legal move" in a or "points changed" in a], venue.attention
    assert sum("already started" in a for a in venue.attention) == 1


def test_a_new_game_waits_for_its_start_and_keeps_the_calibration() -> None:
    """After a game, the board still shows its last position when the next game is announced: that board is not
    the new game's (no BoardStable), nor is it read as its start though a few points differ; once the pieces stand
    on the start, it is the new game's first still board. The camera's calibration is kept throughout (the board
    has not moved: no BoardCalibrated)."""
    from synthetic import START_SQUARES, draw_board

    from xqarb.referee.rules import Move, Position
    from xqarb.vision.tracker import Tracker

    position = Position.from_fen("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1")
    for move in ("h2e2", "h9g7", "h0g2", "i9h9"):
        position = position.play(Move.parse(move))
    final = position.squares()
    kw = {"seed": 5, "tilt": 18.0, "rotate": 6.0, "line_colour": (30, 30, 150), "glare": False, "fill": 0.85}
    last_board, start_board = draw_board(final, **kw).image, draw_board(START_SQUARES, **kw).image
    tracker = Tracker()
    state, t = tracker.initial(start=final), 0

    def run(image, n: int) -> list:
        nonlocal state, t
        seen = []
        for _ in range(n):
            state, obs = tracker.step(state, image, t, f"{t:064x}")
            seen.extend(obs)
            t += STEP
        return seen

    assert [o.fields["squares"] for o in run(last_board, 6) if o.type == "BoardStable"] == [final]
    fit = state.fit
    state = tracker.new_game(state, None)
    assert state.known is None and state.left == final and state.fit is fit
    assert run(last_board, 8) == []  # the last game's board: nothing of the new game yet
    seen = run(start_board, 6)
    assert [o.type for o in seen] == ["BoardStable"] and seen[0].fields["squares"] == START_SQUARES
    assert state.known == START_SQUARES and state.left is None and state.fit is fit
    # an arbiter's restored position, where a new game's start is awaited, is what the board is matched against
    awaiting = tracker.new_game(state, None)
    assert tracker.adopt(awaiting, final, restored=True).start == final
    assert tracker.adopt(awaiting, final).start is None  # (a move's position is no start)
