"""The demo boards against a real ingest and broker: a game started, every frame and a press per move on Kafka."""

from __future__ import annotations

import threading

from tests.venue.conftest import read_topic
from xqarb.demo import DemoBoards, DemoOptions, SimClock, shipped_games
from xqarb.ingest.app import create_app
from xqarb.ingest.config import generate_config, parse_config
from xqarb.ingest.publish import BusPublisher
from xqarb.ingest.server import ServerThread


def test_shipped_games_are_real_and_attributed() -> None:
    from importlib import resources

    games = shipped_games()
    assert len(games) >= 30 and all(len(g["iccs"]) >= 30 for g in games)
    readme = resources.files("xqarb").joinpath("data", "games", "README.md").read_text(encoding="utf-8")
    assert "CC BY 4.0" in readme and "MIT" in readme


def test_sim_clock_counts_down_the_side_to_move_with_increment() -> None:
    clock = SimClock(60_000, 60_000, 5_000)
    clock.press("red", 1_000_000)  # the first press starts the clock: nothing elapsed yet
    assert (clock.red_ms, clock.black_ms) == (65_000, 60_000)
    clock.press("black", 4_000_000)  # black thought 3 s
    assert (clock.red_ms, clock.black_ms) == (65_000, 62_000)
    clock.press("black", 5_000_000)  # Black's clock is not running: the button does nothing, like a real device
    assert (clock.red_ms, clock.black_ms, clock.running) == (65_000, 62_000, "red")


def test_demo_board_posts_a_game_over_http(topics: str) -> None:
    raw = generate_config(["1"])
    config = parse_config(raw)
    publisher = BusPublisher.connect(topics)
    server = ServerThread(create_app(config, publisher), port=0).start()
    options = DemoOptions(
        max_moves=2,
        games_per_board=1,
        speed=20.0,
        misplace_rate=0.0,
        nudge_rate=0.0,
        press_without_move_rate=0.0,
        run_id=raw["arbiters"]["chief"]["token"][:6],
    )
    demo = DemoBoards(server.url, config, ["1"], options)
    try:
        demo.start()
        demo.boards[0].thread.join(120)
        stats = demo.boards[0].stats
        assert stats.finished and stats.errors == 0, stats.last_error
        assert stats.games == 1 and stats.moves == 2 and stats.presses == 2
        game_id = demo.boards[0].game_id
        found = read_topic(topics, "xq.arbiter", lambda it: it[1].data.get("game_id") == game_id, count=2)
        started, ended = [e for _, e in sorted(found, key=lambda it: it[0].offset)]
        assert started.type == "GameStarted" and started.data["red_player"] == shipped_games()[0]["red"]
        # its first plies played, the game ends as the record did (0-1): Red resigns
        assert (ended.type, ended.data["side"]) == ("Resigned", "red")
        frames = read_topic(topics, "xq.frames", lambda it: it[1].data.get("game_id") == game_id, count=stats.frames)
        assert len(frames) == stats.frames > 10
        assert [e.source_seq for _, e in frames] == list(range(1, stats.frames + 1))
        presses = read_topic(topics, "xq.clock", lambda it: it[1].data.get("game_id") == game_id, count=2)
        assert [e.data["side"] for _, e in presses] == ["red", "black"]
    finally:
        demo.stop()
        server.stop()
        publisher.close()


def test_demo_board_with_moves_goes_on_to_its_next_game(topics: str) -> None:
    """`--moves`: each game's first plies, then its result as the record has it (the loser resigns through the
    events endpoint, as a board's device reports it), then the board's next game from its start."""
    raw = generate_config(["1"])
    config = parse_config(raw)
    publisher = BusPublisher.connect(topics)
    server = ServerThread(create_app(config, publisher), port=0).start()
    run = "next" + raw["arbiters"]["chief"]["token"][:6]
    options = DemoOptions(max_moves=1, games_per_board=2, speed=20.0, misplace_rate=0.0, nudge_rate=0.0,
                          press_without_move_rate=0.0, run_id=run, clock_mode="strict")
    demo = DemoBoards(server.url, config, ["1"], options)
    try:
        demo.start()
        demo.boards[0].thread.join(120)
        stats = demo.boards[0].stats
        assert stats.finished and stats.errors == 0, stats.last_error
        assert stats.games == 2 and stats.moves == 2 and stats.presses == 2
        games = shipped_games()[:2]
        assert [g["result"] for g in games] == ["0-1", "1-0"]  # (the records the board plays: both won)
        mine = read_topic(topics, "xq.arbiter", lambda it: str(it[1].data.get("game_id")).startswith(f"demo-{run}-"),
                          count=4)
        events = [e for _, e in sorted(mine, key=lambda it: it[0].offset)]
        assert [(e.type, e.data.get("side")) for e in events] == [
            ("GameStarted", None), ("Resigned", "red"), ("GameStarted", None), ("Resigned", "black")]
        assert events[0].data["game_id"] == events[1].data["game_id"] != events[2].data["game_id"]
    finally:
        demo.stop()
        server.stop()
        publisher.close()


def test_stop_ends_the_boards_promptly(topics: str) -> None:
    raw = generate_config(["1", "2"])
    config = parse_config(raw)
    publisher = BusPublisher.connect(topics)
    server = ServerThread(create_app(config, publisher), port=0).start()
    demo = DemoBoards(server.url, config, ["1", "2"], DemoOptions(run_id="stop"))
    try:
        demo.start()
        threading.Event().wait(3)
        demo.stop()
        assert all(not b.thread.is_alive() for b in demo.boards)
        assert all(b.stats.errors == 0 for b in demo.boards)
    finally:
        server.stop()
        publisher.close()


def test_a_nudge_that_would_oblige_another_move_is_announced_as_an_adjustment() -> None:
    """5.1 / 5.2 against the shipped game's next move; touches that only cost an 8.1.5 foul stay plain touches."""
    from xqarb.demo import START_FEN, adjustment_needed
    from xqarb.referee.rules import Position

    start = Position.from_fen(START_FEN).squares()
    assert adjustment_needed(start, "red", "g3", "b0c2")  # own soldier touched, another piece moves: 5.1
    assert not adjustment_needed(start, "red", "g3", "g3g4")  # the touched soldier is the one that moves
    assert adjustment_needed(start, "red", "a0", None)  # own rook, the game over: nothing honours it
    assert not adjustment_needed(start, "red", "i6", "b0c2")  # Black's soldier, no Red piece can take it: a foul
    assert not adjustment_needed(start, "red", "e5", "b0c2")  # nothing stands there
    # Black's cannon b7 can take the horse on b0 (over the cannon on b2): touching it obliges the capture (5.2)
    assert adjustment_needed(start, "black", "b0", "h9g7") and not adjustment_needed(start, "black", "b0", "b7b0")


def test_the_arbiter_desk_numbers_and_sends_one_event_at_a_time() -> None:
    """All boards send the arbiter's events through one device (`arbiter:chief`), whose sequence ingest checks: from
    many board threads at once, every event reaches the server in the order of its number (before, two boards'
    GameStarted could cross, one was refused with 409 sequence_backwards and that board stopped playing)."""
    import threading
    import time

    from xqarb.demo import ArbiterDesk

    desk = ArbiterDesk("token-of-the-chief")
    arrived: list[int] = []

    def post(token: str, event: dict) -> dict:
        assert token == "token-of-the-chief"
        time.sleep(0.001)  # the request on its way: another thread would overtake here
        arrived.append(event["source_seq"])
        return {}

    threads = [threading.Thread(target=lambda: [desk.send(post, {"type": "TouchReported"}) for _ in range(20)])
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(arrived) == 80 and arrived == sorted(set(arrived))
    assert arrived[0] >= time.time_ns() // 1000 - 60_000_000  # ingest's own default numbering: the time in us
