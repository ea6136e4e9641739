"""One realistic event of every catalogue type, in the JSON form of DESIGN (shared by the foundation tests)."""

from __future__ import annotations

import base64
import hashlib

import pytest

from xqarb.events import Event

START_FEN = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"
# BoardStable squares for the start position: rank 9 first, files a..i within a rank.
START_SQUARES = (
    "rnbakabnr" + "." * 9 + ".c.....c." + "p.p.p.p.p" + "." * 18 + "P.P.P.P.P" + ".C.....C." + "." * 9 + "RNBAKABNR"
)
JPEG = b"\xff\xd8\xff\xe0" + bytes(range(256)) * 4 + b"\xff\xd9"  # not a picture; bytes that must survive intact
FRAME_SHA = hashlib.sha256(JPEG).hexdigest()
T0 = 1_764_460_800_000_000  # 2025-11-30 00:00 UTC in microseconds

_FIELDS: dict[str, dict] = {
    "FrameCaptured": {
        "camera_id": "cam-07",
        "width": 1280,
        "height": 720,
        "encoding": "jpeg",
        "image": base64.b64encode(JPEG).decode(),
        "frame_sha256": FRAME_SHA,
    },
    "ClockPressed": {"side": "red", "red_ms": 3_571_250, "black_ms": None},
    "ClockPaused": {"by": "arbiter", "red_ms": 3_000_000, "black_ms": 2_999_000},
    "ClockResumed": {"by": "arbiter", "red_ms": 3_000_000, "black_ms": 2_999_000},
    "GameStarted": {
        "game_id": "r3-b07",
        "red_player": "王天一",
        "black_player": "郑惟桐",
        "ruleset": "cxa-2021",
        "rapid": False,
        "level": "national",
        "time_control": {
            "scheme": "moves_in_time",
            "periods": [{"moves": 30, "ms": 3_600_000}, {"moves": 10, "ms": 600_000, "repeat": True}],
            "late_forfeit_ms": 900_000,
        },
        "start_fen": None,
        "recording_required": True,
    },
    "ScoresheetEntry": {"side": "red", "ply": 1, "text": "炮二平五"},
    "DrawOffered": {"side": "black"},
    "DrawAnswered": {"side": "red", "accepted": False},
    "Resigned": {"side": "black"},
    "NaturalLimitClaimed": {"side": "red"},
    "PointDesignated": {"point": "e4"},
    "PositionRestored": {"fen": START_FEN, "article": "5.8.2"},
    "TouchReported": {"side": "black", "point": "h7"},
    "FoulReported": {"side": "red", "article": "8.1.3", "note": "spoke to the opponent"},
    "ArbiterDecision": {"result": "1/2-1/2", "article": "23.2", "note": "drawn repetition past three cycles"},
    "BoardCalibrated": {
        "corners": [[101.5, 42.0], [1180.25, 44.0], [1178.0, 690.5], [99.0, 688.0]],
        "homography": [1.01, 0.02, -98.5, -0.01, 0.99, -40.25, 0.0, 0.0, 1.0],
        "frame_sha256": FRAME_SHA,
    },
    "HandEntered": {"frame_sha256": FRAME_SHA, "evidence": [FRAME_SHA]},
    "HandLeft": {"frame_sha256": FRAME_SHA},
    "PieceLifted": {"point": "h2", "frame_sha256": FRAME_SHA},
    "PiecePlaced": {"point": "e2", "frame_sha256": FRAME_SHA},
    "PieceNudged": {"point": "a3"},
    "PieceMisaligned": {"points": ["e4", "e5"], "evidence": [FRAME_SHA, "00" * 32]},
    "BoardStable": {"squares": START_SQUARES, "frame_sha256": FRAME_SHA, "game_id": "r3-b07"},
    "CameraFault": {"reason": "no board found in 40 frames"},
    "CameraQuiet": {"since": 1_767_225_600_000_000, "quiet_ms": 20_000, "back": False},
    "CameraProgress": {"frames": 2, "game_id": "r3-b07"},
    "ClockCheck": {"game_id": "r3-b07", "side": "red", "warn_ms": 60_000},
    "MoveMade": {
        "game_id": "r3-b07",
        "ply": 1,
        "side": "red",
        "iccs": "h2e2",
        "wxf": "C2=5",
        "chinese": "炮二平五",
        "fen_after": "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b - - 1 1",
        "red_ms": 3_571_250,
        "black_ms": 3_600_000,
    },
    "Ruling": {
        "game_id": "r3-b07",
        "kind": "foul",
        "side": "red",
        "article": "8.1.7",
        "message": "clock pressed without a move",
        "ruleset": "cxa-2021",
        "ply": 12,
        "evidence": ["2f0c6b7e-0000-5000-8000-000000000001"],
    },
    "GameEnded": {"game_id": "r3-b07", "result": "1-0", "article": "6.3", "reason": "Black's flag fell"},
    "AttentionNeeded": {"game_id": None, "reason": "board change is no legal move: e3 and e6 both emptied"},
    "TreeHead": {"game_id": "r3-b07", "tree_size": 41, "root_hash": "ab" * 32, "timestamp": 1_767_225_600_000_000,
                 "key_id": "cd" * 32, "signature": "c2lnbmF0dXJl"},
}


def sample_json(event_type: str, seq: int = 1) -> dict:
    """The JSON form of one sample event, with a full envelope."""
    return {
        "type": event_type,
        "event_id": f"sample-{event_type}-{seq}",
        "board_id": "board-007",
        "source": "test-device",
        "source_seq": seq,
        "occurred_at": T0 + seq,
        "received_at": T0 + seq + 1500,
        **_FIELDS[event_type],
    }


def sample_types() -> list[str]:
    return sorted(_FIELDS)


@pytest.fixture(scope="session")
def samples() -> dict[str, Event]:
    """Every catalogue type -> one sample Event."""
    return {t: Event.from_json_dict(sample_json(t)) for t in sample_types()}
