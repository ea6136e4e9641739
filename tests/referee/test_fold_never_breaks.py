"""Whatever arrives, the fold goes on: random input sequences (fixed seeds) never raise, and every output is a
valid event. Bad input gets AttentionNeeded or a ruling, never an exception."""

from __future__ import annotations

import random

from xqarb.events import Event
from xqarb.referee.board import step
from xqarb.referee.rules import START_FEN, Position

POINTS = [f"{f}{r}" for f in "abcdefghi" for r in range(10)]
SIDES = ("red", "black")


def _squares(rng: random.Random, current: str) -> str:
    sq = list(current)
    for _ in range(rng.choice((1, 2, 2, 3))):
        i = rng.randrange(90)
        sq[i] = rng.choice(".?XxKABNRCPkabnrcp")
    return "".join(sq)


def _random_event(rng: random.Random, t: int, legal_squares: str) -> dict:
    kind = rng.choice(["BoardStable", "BoardStable", "BoardStable", "ClockPressed", "PieceLifted", "PieceNudged",
                       "PieceMisaligned", "PointDesignated", "TouchReported", "ClockPaused", "ClockResumed",
                       "ScoresheetEntry", "DrawOffered", "DrawAnswered", "NaturalLimitClaimed", "PositionRestored",
                       "FoulReported", "ArbiterDecision", "HandEntered", "CameraFault", "Resigned"])
    side = rng.choice(SIDES)
    fields: dict = {
        "BoardStable": {"squares": legal_squares if rng.random() < 0.6 else _squares(rng, legal_squares),
                        "frame_sha256": "0" * 64},
        "ClockPressed": {"side": side, "red_ms": rng.choice([None, rng.randrange(-5000, 4_000_000)]),
                         "black_ms": rng.choice([None, rng.randrange(0, 4_000_000)])},
        "PieceLifted": {"point": rng.choice(POINTS)},
        "PieceNudged": {"point": rng.choice(POINTS)},
        "PieceMisaligned": {"points": rng.sample(POINTS, 2)},
        "PointDesignated": {"point": rng.choice(POINTS)},
        "TouchReported": {"side": side, "point": rng.choice(POINTS), "adjust": rng.random() < 0.3},
        "ClockPaused": {"by": rng.choice(["red", "black", "arbiter", "arbiter"])},
        "ClockResumed": {"by": rng.choice(["red", "black", "arbiter", "arbiter"])},
        "ScoresheetEntry": {"side": side, "ply": rng.randrange(-1, 12), "text": rng.choice(["炮二平五", "h2e2", "C2=5",
                                                                                         "馬8進7", "??", ""])},
        "DrawOffered": {"side": side},
        "DrawAnswered": {"side": side, "accepted": rng.random() < 0.3},
        "NaturalLimitClaimed": {"side": side},
        "PositionRestored": {"fen": rng.choice([START_FEN, "bad fen", "4k4/9/9/9/9/9/9/9/9/3K5 w - - 0 1"]),
                             "article": "5.8.2"},
        "FoulReported": {"side": side, "article": rng.choice(["8.1.1", ""]), "note": "x"},
        "ArbiterDecision": {"result": rng.choice(["", "", "1-0", "draw?"]), "article": rng.choice(["5.6", "23", "9"]),
                            "note": ""},
        "HandEntered": {},
        "CameraFault": {"reason": "glare"},
        "Resigned": {"side": side},
    }[kind]
    return {"type": kind, "board_id": "b", "occurred_at": t, **fields}


def test_random_inputs_never_break_the_fold():
    outputs = 0
    for seed in range(40):
        rng = random.Random(seed)
        lines = [{"type": "GameStarted", "board_id": "b", "occurred_at": 0, "game_id": f"g{seed}",
                  "red_player": "a", "black_player": "b", "level": rng.choice(["national", "provincial"]),
                  "rapid": rng.random() < 0.3, "ruleset": rng.choice(["cxa-2021", "cxa-2011"]),
                  "time_control": {"scheme": "increment", "base_ms": 600_000, "increment_ms": 1000}}]
        position = Position.from_fen(START_FEN)
        t = 0
        for _ in range(40):
            t += rng.randrange(0, 20_000_000)
            if rng.random() < 0.4 and position.legal_moves():
                position = position.play(rng.choice(position.legal_moves()))
            lines.append(_random_event(rng, t, position.squares()))
        state = None
        for i, line in enumerate(lines, start=1):
            event = Event.from_json_dict(line, defaults={"source": "fuzz", "source_seq": i})
            state, st = step(state, event)
            for o in st.outputs:
                assert Event.from_json_dict(o.to_json_dict()) == o
                assert "no cxa-" not in str(o.data.get("article")), o.to_json()  # every ruling has its article
            outputs += len(st.outputs)
            state.to_json()
    assert outputs > 100
