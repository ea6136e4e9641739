"""The tracker over time: faults, calibration, hand, a move with its letter carried, misaligned and nudged pieces,
the service core's events and evidence, and a short rendered game through the referee's inference."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import pytest
from synthetic import START_SQUARES, draw_board
from trackerpatch import patch_tracker

from xqarb.vision.evidence import DirectoryEvidenceStore, MemoryEvidenceStore, sha256_hex
from xqarb.vision.grid import point_index
from xqarb.vision.tracker import Tracker, TrackerConfig, interpret

STEP = 250_000  # 4 frames per second


def _moved(squares: str, frm: str, to: str) -> str:
    sq = list(squares)
    sq[point_index(to)] = sq[point_index(frm)]
    sq[point_index(frm)] = "."
    return "".join(sq)


def _with_hand(image: np.ndarray, centre: tuple[float, float], seed: int = 0) -> np.ndarray:
    """A skin-coloured hand and forearm reaching in from the bottom edge of the frame to `centre`."""
    out = image.copy()
    x, y = int(centre[0]), int(centre[1])
    cv2.ellipse(out, (x, y), (70, 55), 15, 0, 360, (120, 160, 215), -1)
    pts = np.array([[x - 45, y + 20], [x + 45, y + 20], [x + 80, image.shape[0]], [x - 80, image.shape[0]]])
    cv2.fillPoly(out, [pts.astype(np.int32)], (110, 150, 205))
    return out


@pytest.fixture(scope="module")
def views():
    kw = {"seed": 5, "tilt": 18.0, "rotate": 6.0, "line_colour": (30, 30, 150), "glare": False, "fill": 0.85}
    start = draw_board(START_SQUARES, **kw)
    after = draw_board(_moved(START_SQUARES, "h2", "e2"), **kw)
    return start, after, kw


def _run(tracker: Tracker, frames: list[np.ndarray | None], t0: int = 0):
    state = tracker.initial()
    seen = []
    for k, img in enumerate(frames):
        state, obs = tracker.step(state, img, t0 + k * STEP, f"{k:064x}")
        seen.extend(obs)
    return state, seen


def test_faults_are_reported_never_raised(views) -> None:
    start, _, _ = views
    tracker = Tracker()
    black = np.zeros_like(start.image)
    blurred = cv2.GaussianBlur(start.image, (0, 0), 9)
    noise = cv2.GaussianBlur(np.random.default_rng(0).integers(0, 255, start.image.shape, dtype=np.uint8), (0, 0), 2)
    # after a frame with no board, the next look for one is `find_every_us` (2 s) later
    frames = [None, black, black, noise] + [start.image] * 10 + [blurred]
    _, seen = _run(tracker, frames)
    faults = [o.fields["reason"] for o in seen if o.type == "CameraFault"]
    assert faults[0].startswith("corrupt frame")
    assert faults[1].startswith("black frame")
    assert len([f for f in faults if f.startswith("black frame")]) == 1  # once per onset, not per frame
    assert faults[2].startswith("no board found")
    assert faults[3].startswith("blurred frame")
    assert [o.type for o in seen].count("BoardCalibrated") == 1


def test_a_move_made_while_the_view_was_blurred_is_found_when_it_clears(views) -> None:
    """Hard game 206: the last move was made during 2.5 s of blurred frames (CameraFault); when the view cleared,
    the board was never looked at again, and the move was lost. What the camera could not see may have changed."""
    start, after, _ = views
    blurred = cv2.GaussianBlur(after.image, (0, 0), 9)
    _, seen = _run(Tracker(), [start.image] * 5 + [blurred] * 6 + [after.image] * 6)
    assert [o.type for o in seen].count("CameraFault") == 1
    stable = [o for o in seen if o.type == "BoardStable"]
    assert [o.fields["squares"] for o in stable] == [START_SQUARES, _moved(START_SQUARES, "h2", "e2")]


def test_calibration_then_stable_start_position(views) -> None:
    start, _, _ = views
    _, seen = _run(Tracker(), [start.image] * 5)
    types = [o.type for o in seen]
    assert types[0] == "BoardCalibrated"
    stable = [o for o in seen if o.type == "BoardStable"]
    assert len(stable) == 1 and stable[0].fields["squares"] == START_SQUARES
    # 5.7: not before the board was still for the configured time
    assert stable[0].t_us >= TrackerConfig().stable_us
    corners = np.array(seen[0].fields["corners"])
    assert np.abs(corners - start.corners).max() < 3


def test_a_move_keeps_its_letter_and_no_lift_is_invented(views) -> None:
    start, after, _ = views
    h2 = start.points[point_index("h2")]
    e2 = after.points[point_index("e2")]
    frames = [start.image] * 5
    frames += [_with_hand(start.image, h2), _with_hand(start.image, (h2 + e2) / 2), _with_hand(after.image, e2)]
    frames += [after.image] * 6
    _, seen = _run(Tracker(), frames)
    types = [o.type for o in seen]
    assert types.count("HandEntered") == 1 and types.count("HandLeft") == 1
    assert types.index("HandEntered") < types.index("HandLeft")
    stable = [o.fields["squares"] for o in seen if o.type == "BoardStable"]
    assert stable == [START_SQUARES, _moved(START_SQUARES, "h2", "e2")]
    placed = [o.fields["point"] for o in seen if o.type == "PiecePlaced"]
    assert placed == ["e2"]
    lifted = [o.fields["point"] for o in seen if o.type == "PieceLifted"]
    assert set(lifted) <= {"h2"}  # the piece in the hand, nothing else
    assert not [o for o in seen if o.type in ("PieceNudged", "PieceMisaligned")]
    # every observation names the frame it was seen in and the evidence around it
    assert all(o.frame_sha256 and o.frame_sha256 in o.evidence for o in seen)


def test_where_the_referee_could_not_follow_the_board_is_read_again_from_its_position(views) -> None:
    """The referee's AttentionNeeded with the position it holds (Tracker.not_followed): the next still board is read
    from the last one the referee followed (here the start: nothing was fed back), with the rules' moves from its
    position, and the move found is reported as the still board it left (PiecePlaced, BoardStable)."""
    start, after, _ = views
    h2, e2 = start.points[point_index("h2")], after.points[point_index("e2")]
    tracker = Tracker()
    frames = [start.image] * 5 + [_with_hand(start.image, h2), _with_hand(after.image, e2)] + [after.image] * 6
    state, seen = _run(tracker, frames)
    moved = _moved(START_SQUARES, "h2", "e2")
    assert [o.fields["squares"] for o in seen if o.type == "BoardStable"] == [START_SQUARES, moved]
    start_fen = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"
    # a position that is not the one the tracker last saw the referee hold: the tracker keeps its own board
    other = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b - - 1 1"
    assert tracker.not_followed(state, other) is state
    with pytest.raises(ValueError, match="no FEN"):
        tracker.not_followed(state, "not a position")
    held = tracker.not_followed(state, start_fen)
    assert held.held == start_fen and held.pending
    t = len(frames) * STEP
    again, obs = tracker.step(held, after.image, t)
    assert [(o.type, o.fields) for o in obs] == [("PiecePlaced", {"point": "e2"}),
                                                 ("BoardStable", {"squares": moved})]
    assert again.known == moved and again.held is None
    # the board stays as it is: nothing more is reported
    _, obs = tracker.step(again, after.image, t + STEP)
    assert not obs


def test_the_still_boards_since_the_referee_followed_are_read_again_in_turn(views) -> None:
    """Two moves, each on its own still board, before the referee said it could not follow the first (here it
    holds the start, nothing fed back): the tracker reads both still boards again from the start, each against the
    one before it, and reports the two moves in turn, each as the still board it left."""
    start, after, kw = views
    moved = _moved(START_SQUARES, "h2", "e2")
    moved2 = _moved(moved, "h9", "g7")
    after2 = draw_board(moved2, **kw)
    h2, e2 = start.points[point_index("h2")], after.points[point_index("e2")]
    h9, g7 = after.points[point_index("h9")], after2.points[point_index("g7")]
    tracker = Tracker()
    frames = [start.image] * 5 + [_with_hand(start.image, h2), _with_hand(after.image, e2)] + [after.image] * 6
    frames += [_with_hand(after.image, h9), _with_hand(after2.image, g7)] + [after2.image] * 6
    state, seen = _run(tracker, frames)
    assert [o.fields["squares"] for o in seen if o.type == "BoardStable"] == [START_SQUARES, moved, moved2]
    assert len(state.anchor.trail) == 2 and state.anchor.squares == START_SQUARES
    start_fen = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"
    again, obs = tracker.step(tracker.not_followed(state, start_fen), after2.image, len(frames) * STEP)
    assert [(o.type, o.fields) for o in obs] == [("PiecePlaced", {"point": "e2"}), ("BoardStable", {"squares": moved}),
                                                 ("PiecePlaced", {"point": "g7"}),
                                                 ("BoardStable", {"squares": moved2})]
    # the last still board is the next anchor: the referee takes these moves
    assert again.known == moved2 and again.anchor.squares == moved2 and again.anchor.trail == ()


def test_piece_between_two_points_names_both(views) -> None:
    start, _, kw = views
    # the cannon h2 moved to half-way between e2 and f2
    sq = _moved(START_SQUARES, "h2", "f2")
    half = draw_board(sq, offsets={point_index("f2"): (-0.5, 0.0)}, **kw)
    tracker = Tracker()
    state, _ = _run(tracker, [start.image] * 5)
    known, ref_view, ref_reading = state.known, state.ref_view, state.ref_reading
    from xqarb.vision.occupancy import read_view, warp_board

    view = warp_board(half.image, state.fit.homography).bgr
    squares, _placed, nudged, misaligned = interpret(known, ref_view, ref_reading, view, read_view(view),
                                                    tracker.config)
    assert misaligned == [(point_index("f2"), point_index("e2"))] or misaligned == [
        (point_index("e2"), point_index("f2"))]
    assert squares[point_index("h2")] == "." and squares[point_index("e2")] == "?" and squares[point_index("f2")] == "?"
    assert not nudged


def test_a_nudge_is_not_a_move(views) -> None:
    start, _, kw = views
    nudged = draw_board(START_SQUARES, offsets={point_index("c3"): (0.18, 0.0)}, **kw)
    tracker = Tracker()
    state, _ = _run(tracker, [start.image] * 5)
    from xqarb.vision.occupancy import read_view, warp_board

    view = warp_board(nudged.image, state.fit.homography).bgr
    squares, placed, nudges, misaligned = interpret(state.known, state.ref_view, state.ref_reading, view,
                                                    read_view(view), tracker.config)
    assert squares == START_SQUARES
    assert nudges == [point_index("c3")] and not placed and not misaligned


def test_evidence_stores(tmp_path) -> None:
    mem = MemoryEvidenceStore(capacity=2)
    a, b, c = b"\xff\xd8a", b"\xff\xd8b", b"\xff\xd8c"
    ka = mem.put(a)
    assert ka == sha256_hex(a) and mem.get(ka) == a
    mem.put(b)
    mem.put(c)
    assert mem.get(ka) is None and len(mem) == 2  # the oldest is forgotten
    d = DirectoryEvidenceStore(tmp_path / "ev")
    k = d.put(a)
    assert d.put(a) == k and d.get(k) == a and d.path_of(k).name == f"{k}.jpg"
    assert d.get("0" * 64) is None
    with pytest.raises(ValueError):
        d.path_of("../etc/passwd")


def test_core_turns_frames_into_catalogue_events(views) -> None:
    from xqarb.events import make_event
    from xqarb.vision.service import VisionCore

    start, _, _ = views
    _ok, jpg = cv2.imencode(".jpg", start.image, [cv2.IMWRITE_JPEG_QUALITY, 90])
    store = MemoryEvidenceStore()
    core = VisionCore(store, source="vision-test", now_us=lambda: 1)
    out = []
    for k in range(5):
        frame = make_event("FrameCaptured", "board-7", source="cam-7", source_seq=k, occurred_at=k * STEP,
                           received_at=k * STEP, camera_id="cam-7", width=1280, height=720, encoding="jpeg",
                           image=bytes(jpg))
        out.extend(core.handle(frame, partition=3))
    bad = make_event("FrameCaptured", "board-7", source="cam-7", source_seq=9, occurred_at=9 * STEP,
                     received_at=9 * STEP, camera_id="cam-7", width=1280, height=720, encoding="jpeg",
                     image=b"not a jpeg")
    out.extend(core.handle(bad, partition=3))
    assert [e.type for e in out] == ["BoardCalibrated", "BoardStable", "CameraFault"]
    assert all(e.board_id == "board-7" for e in out)
    stable = out[1]
    assert stable.data["squares"] == START_SQUARES
    assert stable.data["frame_sha256"] == sha256_hex(bytes(jpg)) and store.get(stable.data["frame_sha256"])
    assert "decoded" in out[2].data["reason"]

    # the positions the rest of the system holds: the referee's MoveMade, an arbiter's PositionRestored
    def move_made(board: str, fen: str):
        return make_event("MoveMade", board, source="referee", source_seq=1, occurred_at=0, received_at=0,
                          game_id="g", ply=1, side="red", iccs="h2e2", wxf="C2=5", chinese="炮二平五",
                          fen_after=fen, red_ms=None, black_ms=None)

    after = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b - - 1 1"
    start_fen = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"
    assert not core.learn(move_made("board-7", after), partition=3)  # the camera has not seen h2e2: not taken
    assert not core.learn(move_made("board-8", start_fen), partition=3)  # a board this process does not track
    assert not core.learn(move_made("board-7", start_fen), partition=2)  # ... nor on that partition
    assert not core.learn(move_made("board-7", "not a fen"), partition=3)
    assert not core.learn(out[1], partition=3)  # an observation is no position held
    assert core.learn(move_made("board-7", start_fen), partition=3)
    restored = make_event("PositionRestored", "board-7", source="arbiter", source_seq=1, occurred_at=0,
                          received_at=0, fen=after, article="5.8.2", game_id=None)
    assert core.learn(restored, partition=3)
    assert core.boards[(3, "board-7")].state.known == _moved(START_SQUARES, "h2", "e2")
    # the referee could not follow a still board: with the position it holds, the tracker looks again from there

    def attention(fen: str | None):
        return make_event("AttentionNeeded", "board-7", source="referee", source_seq=2, occurred_at=0,
                          received_at=0, game_id="g", reason="board change is no single legal move", evidence=[],
                          fen=fen)

    assert not core.learn(attention(None), partition=3)  # an attention about something else: no position
    assert not core.learn(attention("not a fen"), partition=3)
    assert not core.learn(attention(start_fen), partition=3)  # not the position the tracker last took
    assert core.learn(attention(after), partition=3)
    assert core.boards[(3, "board-7")].state.held == after

    # a handicap game announced before the board's first frame: its tracker starts from that position
    def game_started(board: str, fen: str | None):
        return make_event("GameStarted", board, source="desk", source_seq=1, occurred_at=0, received_at=0,
                          game_id="g2", red_player="A", black_player="B", start_fen=fen,
                          time_control={"scheme": "sudden_death", "base_ms": 900_000})

    handicap = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/R1BAKABNR w - - 0 1"
    assert core.learn(game_started("board-9", handicap), partition=3)
    assert not core.learn(game_started("board-9", "R1BAKABNR"), partition=3)  # no position: kept as it was
    core.handle(make_event("FrameCaptured", "board-9", source="cam-9", source_seq=1, occurred_at=0, received_at=0,
                           camera_id="cam-9", width=1280, height=720, encoding="jpeg", image=bytes(jpg)), partition=3)
    assert core.boards[(3, "board-9")].state.start == _unsure(START_SQUARES, "b0", mark=".")
    # the board-7 game's own start was announced after its board was followed: what the camera saw stays
    assert not core.learn(game_started("board-7", handicap), partition=3)
    core.drop_partitions([3])
    assert not core.boards and not core.starts


def test_short_rendered_game_gives_its_moves(shared_data) -> None:
    import json

    from gamecheck import check_game

    line = (shared_data / "games" / "ccpd_dev.jsonl").read_text().splitlines()[0]
    game = json.loads(line)
    res = check_game(game["start_fen"], game["iccs"][:6], seed=1000, difficulty="easy", misplace_rate=0.0,
                     nudge_rate=0.0)
    assert res.inferred_ok == 6, res.wrong
    assert res.false_lifts == 0


def test_a_reading_that_is_no_position_is_not_reported() -> None:
    from xqarb.vision.occupancy import PointReading
    from xqarb.vision.tracker import _implausible

    def reading(occ: np.ndarray, red: np.ndarray) -> PointReading:
        return PointReading(occ, red, np.zeros((90, 2)), occ, red)

    full = np.ones(90)
    assert "90 points" in _implausible(reading(full, np.zeros(90)))
    some = np.zeros(90)
    some[:30] = 1
    assert "30 red" in _implausible(reading(some, np.ones(90)))
    start = np.array([c != "." for c in START_SQUARES], float)
    colours = np.array([c.isupper() for c in START_SQUARES], float)
    assert _implausible(reading(start, colours)) is None


# ---------------------------------------------------------------------------------------------------------------
# Rendered scenes (the renderer's own pieces, light and noise) with the board calibrated by hand from the truth


def _scene(seed: int, difficulty: str = "easy"):
    from xqarb.vision.render import random_scene

    return random_scene(seed, difficulty=difficulty)


def _given_fit(rendered):
    from xqarb.vision.board import fit_from_corners

    return fit_from_corners(rendered.corners, "given", 0.0)


def _play(tracker: Tracker, fit, frames: list[np.ndarray]):
    state = tracker.initial(fit)
    seen = []
    for k, img in enumerate(frames):
        state, obs = tracker.step(state, img, k * STEP, f"{k:064x}")
        seen.extend(obs)
    return state, seen


def test_a_board_calibrated_by_hand_is_used_as_given() -> None:
    from xqarb.vision.render import render_position

    scene = _scene(1001)
    start = render_position(START_SQUARES, scene)
    fit = _given_fit(start)
    _, seen = _play(Tracker(), fit, [start.image] * 4)
    assert [o.type for o in seen] == ["BoardCalibrated", "BoardStable"]
    assert np.abs(np.array(seen[0].fields["corners"]) - start.corners).max() < 1e-6
    assert seen[1].fields["squares"] == START_SQUARES


def test_two_pieces_side_by_side_on_edge_points_are_no_arm() -> None:
    # A rook moved along the edge to the neighbouring point: the change (two discs with their shadows, touching
    # the edge of the view) is the board's, and the snapshot comes as soon as the board is still, not 2 s later.
    from xqarb.vision.render import render_position

    scene = _scene(1001)
    start = render_position(START_SQUARES, scene)
    after_sq = _moved(START_SQUARES, "a9", "a8")
    after = render_position(after_sq, scene)
    _, seen = _play(Tracker(), _given_fit(start), [start.image] * 4 + [after.image] * 6)
    stable = [o.fields["squares"] for o in seen if o.type == "BoardStable"]
    assert stable == [START_SQUARES, after_sq]


def test_a_piece_pushed_off_an_edge_point_is_not_gone() -> None:
    # A rook on a corner pushed outwards: part of its ink lies beyond the board's frame. It did not leave.
    from xqarb.vision.render import render_position

    scene = _scene(1008)
    start = render_position(START_SQUARES, scene)
    pushed = render_position(START_SQUARES, scene, offsets={"a0": (-0.25, -0.2)})
    _, seen = _play(Tracker(), _given_fit(start), [start.image] * 4 + [pushed.image] * 6)
    stable = [o.fields["squares"] for o in seen if o.type == "BoardStable"]
    a0 = point_index("a0")
    assert all(s[a0] in "R?" for s in stable), stable


def test_a_hand_over_a_corner_is_a_changed_frame() -> None:
    # the mean change of the whole picture stays tiny when a hand reaches in over a corner of the view
    from xqarb.vision.render import render_position
    from xqarb.vision.tracker import eighth

    scene = _scene(1004)
    start = render_position(START_SQUARES, scene)
    tracker = Tracker()
    state, _ = _play(tracker, _given_fit(start), [start.image] * 4)
    corner = start.image.copy()
    x, y = (int(v) for v in start.corners[0])
    cv2.circle(corner, (x, y), 28, (120, 160, 215), -1)
    small = eighth(corner).astype(np.float32)
    assert float(np.abs(small - state.last_small).mean()) < tracker.config.unchanged_level
    assert tracker.needs_image(state, eighth(corner))
    assert not tracker.needs_image(state, eighth(start.image))


def _snapshots_after(seed: int, after_sq: str, offsets: dict[str, tuple[float, float]]) -> tuple[list[str], list]:
    """The start position, then `after_sq` with the given offsets (files, ranks), each still for a while: the
    BoardStable squares and all observations."""
    from xqarb.vision.render import render_position

    scene = _scene(seed)
    start = render_position(START_SQUARES, scene)
    after = render_position(after_sq, scene, offsets=offsets)
    _, seen = _play(Tracker(), _given_fit(start), [start.image] * 4 + [after.image] * 6)
    return [o.fields["squares"] for o in seen if o.type == "BoardStable"], seen


def test_a_piece_half_way_from_an_edge_point_names_both() -> None:
    # the rook i0 moved to h0 and left half-way towards h1 (5.10): the peak seen from the edge point is pulled by
    # the frame, the two together still make one piece between them
    after_sq = _moved(START_SQUARES, "i0", "h0")
    stable, seen = _snapshots_after(1034, after_sq, {"h0": (0.0, 0.5)})
    mis = [sorted(o.fields["points"]) for o in seen if o.type == "PieceMisaligned"]
    assert mis == [["h0", "h1"]]
    last = stable[-1]
    assert last[point_index("h0")] == "?" and last[point_index("h1")] == "?" and last[point_index("i0")] == "."


def test_a_piece_set_down_off_its_point_is_one_piece() -> None:
    # the cannon h2 to h5, set down 0.3 towards the empty g5: one piece on h5, and g5 is not claimed to hold one
    after_sq = _moved(START_SQUARES, "h2", "h5")
    stable, _ = _snapshots_after(1036, after_sq, {"h5": (-0.3, 0.0)})
    last = stable[-1]
    assert last[point_index("h2")] == "." and last[point_index("h5")] == "C"
    assert last[point_index("g5")] in ".?"


def test_a_move_under_a_shadow_over_the_board() -> None:
    # dappled shade (light through a plant or a lattice) falls over the board while a pawn advances: the light
    # changed a great many points, the pawn's points changed for a piece
    from xqarb.vision.render import render_position

    scene = _scene(1010)
    start = render_position(START_SQUARES, scene)
    after_sq = _moved(START_SQUARES, "c3", "c4")
    after = render_position(after_sq, scene).image.astype(np.float32)
    w = after.shape[1]
    xx = np.arange(w, dtype=np.float32)[None, :, None]
    spacing = float(np.linalg.norm(start.corners[1] - start.corners[0])) / 8
    # stripes of shade 1.5 spacings apart, up to 35 % deep: too fine for the view's normalisation to cancel
    shade = 1.0 - 0.35 * (0.5 + 0.5 * np.sin(2 * np.pi * xx / (1.5 * spacing)))
    shaded = np.clip(after * shade, 0, 255).astype(np.uint8)
    # (a change all over the view, touching its edges, is taken for an arm until it has been still for 2 s)
    stable, _ = _snapshots_after_frames(start, [shaded] * 16)
    assert stable[-1] == after_sq, [point_name_diff(stable[-1], after_sq)]


def _snapshots_after_frames(start, frames: list[np.ndarray]) -> tuple[list[str], list]:
    _, seen = _play(Tracker(), _given_fit(start), [start.image] * 4 + frames)
    return [o.fields["squares"] for o in seen if o.type == "BoardStable"], seen


def point_name_diff(a: str, b: str) -> list[str]:
    from xqarb.vision.grid import point_name

    return [f"{point_name(i)} {x}/{y}" for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]


def test_the_start_told_by_the_pieces_outlines_where_their_inks_wash_out() -> None:
    # (hard game 36, seed 1036) a blurred board: the pieces' characters wash out while the frame and the river's
    # text read as ink (35 points read as pieces), so the inks do not tell the start; the round outlines do
    from xqarb.vision.render import render_position

    scene = _scene(1036, "hard")
    start = render_position(START_SQUARES, scene)
    _, seen = _play(Tracker(), _given_fit(start), [start.image] * 6)
    stable = [o.fields["squares"] for o in seen if o.type == "BoardStable"]
    assert stable == [START_SQUARES]
    assert not [o for o in seen if o.type == "CameraFault"]


def _unsure(squares: str, *points: str, mark: str = "?") -> str:
    sq = list(squares)
    for p in points:
        sq[point_index(p)] = mark
    return "".join(sq)


@pytest.fixture(scope="module")
def after_seen(views):
    """The board after the cannon h2-e2, as the tracker calibrated on the start sees it: (state, canonical view,
    reading)."""
    from xqarb.vision.occupancy import read_view, warp_board

    start, after, _ = views
    state, _ = _run(Tracker(), [start.image] * 5)
    view = warp_board(after.image, state.fit.homography).bgr
    return state, view, read_view(view)


def test_a_move_missed_is_corrected_once_the_board_has_shown_it_twice(views, after_seen) -> None:
    """The cannon h2-e2 missed at its still board (the known board still has it on h2): ink and outline plainly
    show h2 empty and a piece on e2. Once may be a shadow: the first still board only notes it; the second, which
    shows the same, moves the cannon with its letter. What showed otherwise the first time is not corrected."""
    from xqarb.vision.occupancy import read_view, warp_board
    from xqarb.vision.tracker import Outlines, as_seen_twice, plainly_seen

    start = views[0]
    state, view, reading = after_seen
    outlines = Outlines(view, None)
    h2, e2 = point_index("h2"), point_index("e2")
    squares, doubted, unsure_of, _ = as_seen_twice(START_SQUARES, START_SQUARES, outlines, reading, {}, {}, [])
    assert squares == START_SQUARES and unsure_of == {}
    assert doubted == {h2: ".", e2: "X"}
    squares, doubted, _, _ = as_seen_twice(START_SQUARES, START_SQUARES, outlines, reading, doubted, {}, [])
    assert squares == _moved(START_SQUARES, "h2", "e2") and doubted == {}
    squares, doubted, _, _ = as_seen_twice(START_SQUARES, START_SQUARES, outlines, reading, {h2: "."}, {}, [])
    assert squares == _unsure(START_SQUARES, "h2", mark=".") and doubted == {e2: "X"}
    # where only points whose ink alone disagreed before and that did not change since disagree, the outlines (43
    # ms) are not computed again
    unscored = Outlines(view, None)
    seen, ink_only = plainly_seen(START_SQUARES, unscored, reading, {}, frozenset(range(90)))
    assert seen == {} and unscored.computed() is None and {h2, e2} <= set(ink_only)
    # the start board shows what the known board says: nothing to correct
    start_view = warp_board(start.image, state.fit.homography).bgr
    assert as_seen_twice(START_SQUARES, START_SQUARES, Outlines(start_view, None), read_view(start_view), {h2: "."},
                         {}, [])[:3] == (START_SQUARES, {}, {})


def test_a_piece_is_seen_come_only_where_its_point_changed(after_seen) -> None:
    """A piece plainly seen on a point known empty came there by a move only where the point changed: at the still
    board where the move was missed, by half the level or more. Where it did not, what reads as a piece is the
    board's print (a paper board's marks read as a dark piece on every still board): it is not even doubted, and a
    piece known gone there (h2) is doubted as before."""
    from xqarb.vision.tracker import Outlines, as_seen_twice

    _, view, reading = after_seen
    outlines = Outlines(view, None)
    h2, e2 = point_index("h2"), point_index("e2")
    _, doubted, _, _ = as_seen_twice(START_SQUARES, START_SQUARES, outlines, reading, {}, {}, [],
                                     changed=frozenset({h2}))
    assert doubted == {h2: "."}
    squares, doubted, _, _ = as_seen_twice(START_SQUARES, START_SQUARES, outlines, reading, doubted, {}, [],
                                           changed=frozenset())
    assert squares == _unsure(START_SQUARES, "h2", mark=".") and doubted == {}
    # changed where the move was missed: doubted, then moved with its letter at the next still board
    _, doubted, _, _ = as_seen_twice(START_SQUARES, START_SQUARES, outlines, reading, {}, {}, [],
                                     changed=frozenset({h2, e2}))
    assert doubted == {h2: ".", e2: "X"}
    squares, _, _, _ = as_seen_twice(START_SQUARES, START_SQUARES, outlines, reading, doubted, {}, [],
                                     changed=frozenset())
    assert squares == _moved(START_SQUARES, "h2", "e2")


def test_a_piece_is_seen_gone_only_where_its_point_changed(after_seen) -> None:
    """A known piece plainly seen gone left its point by a move only where the point changed (at the still board
    where the move was missed, by half the level or more). Where it never did, what reads as no piece is the light
    (a pale piece in glare: no ink, a faint outline): it is not even doubted, however often it is seen so, and the
    piece stays."""
    from xqarb.vision.tracker import Outlines, as_seen_twice

    _, view, reading = after_seen
    outlines = Outlines(view, None)
    h2 = point_index("h2")
    doubted: dict[int, str] = {}
    for _ in range(3):
        squares, doubted, _, _ = as_seen_twice(START_SQUARES, START_SQUARES, outlines, reading, doubted, {}, [],
                                               changed=frozenset())
        assert squares == START_SQUARES and h2 not in doubted
    # the same board where h2 changed: doubted, then taken off at the next still board
    _, doubted, _, _ = as_seen_twice(START_SQUARES, START_SQUARES, outlines, reading, {}, {}, [],
                                     changed=frozenset({h2}))
    assert doubted.get(h2) == "."


def test_a_piece_left_unsure_keeps_its_letter_when_plainly_seen_again(after_seen) -> None:
    """The cannon h2 went to e2 but was reported between e2 and f2 (both unsure): the tracker keeps its letter for
    those points. Seen plainly on e2 on two still boards, e2 is the cannon again (not the ink's colour, which can
    read wrongly) and f2, the other point it was between, is empty."""
    from xqarb.vision.tracker import Outlines, as_seen_twice

    _, view, reading = after_seen
    outlines = Outlines(view, None)
    between = _unsure(_moved(START_SQUARES, "h2", "e2"), "e2", "f2")
    e2, f2 = point_index("e2"), point_index("f2")
    pair = [(e2, f2)]
    # (other points left unsure keep no letter: a change that told nothing sure)
    assert as_seen_twice(START_SQUARES, between, outlines, reading, {}, {}, [])[2] == {}
    squares, doubted, unsure_of, _ = as_seen_twice(START_SQUARES, between, outlines, reading, {}, {}, pair)
    assert squares == between and unsure_of == {e2: "C", f2: "C"} and doubted == {e2: "C", f2: "."}
    squares, doubted, unsure_of, _ = as_seen_twice(between, between, outlines, reading, doubted, unsure_of, [])
    assert squares == _moved(START_SQUARES, "h2", "e2") and doubted == {} and unsure_of == {}


def test_the_referees_position_names_what_a_snapshot_left_unsure(views) -> None:
    """A point read poorly once stays poorly known (each still board is judged against the last one); the
    position the referee accepted from that snapshot names it again, and the next snapshot carries the letters."""
    start, after, _ = views
    tracker = Tracker()
    state, _ = _run(tracker, [start.image] * 5)
    assert state.known == START_SQUARES
    # as if the last snapshot had read a9 poorly and lost the types of the pawns a6 and c3
    poor = _unsure(_unsure(START_SQUARES, "a9"), "a6", mark="x")
    poor = _unsure(poor, "c3", mark="X")
    state = replace(state, known=poor)
    taken = tracker.adopt(state, START_SQUARES)
    assert taken.known == START_SQUARES
    h2 = start.points[point_index("h2")]
    frames = [_with_hand(start.image, h2), _with_hand(after.image, h2)] + [after.image] * 6

    def snapshots(s):
        seen = []
        for k, img in enumerate(frames):
            s, obs = tracker.step(s, img, (10 + k) * STEP, f"{k:064x}")
            seen.extend(o.fields["squares"] for o in obs if o.type == "BoardStable")
        return seen

    assert snapshots(taken) == [_moved(START_SQUARES, "h2", "e2")]
    # without the referee's position the unsure point and the lost types stay as they were read
    assert snapshots(state) == [_moved(poor, "h2", "e2")]


def test_a_position_that_contradicts_the_last_snapshot_is_not_taken(views) -> None:
    start, _, _ = views
    tracker = Tracker()
    state, _ = _run(tracker, [start.image] * 5)
    # the referee is a move behind the camera: its position has the cannon on h2, the snapshot on e2
    ahead = replace(state, known=_moved(START_SQUARES, "h2", "e2"))
    assert tracker.adopt(ahead, START_SQUARES) is ahead
    # a piece of the other colour where the snapshot was sure of the colour: no either
    red_a9 = _unsure(START_SQUARES, "a9", mark="R")
    assert tracker.adopt(state, red_a9) is state
    # an arbiter's restored position (5.8.2) is taken as it is
    assert tracker.adopt(ahead, START_SQUARES, restored=True).known == START_SQUARES
    # before the first still board there is nothing to correct: the start is read from the board
    fresh = tracker.initial()
    assert tracker.adopt(fresh, START_SQUARES, restored=True) is fresh
    with pytest.raises(ValueError, match="90 points"):
        tracker.adopt(state, START_SQUARES[:-1])


def test_a_piece_between_two_points_stays_unsure_when_the_referee_places_it(views) -> None:
    start, _, _ = views
    tracker = Tracker()
    state, _ = _run(tracker, [start.image] * 5)
    # the cannon h2 left between e2 and f2 (both '?'), and a pawn's point read poorly elsewhere
    between = _unsure(_moved(START_SQUARES, "h2", "f2"), "e2", "f2", "i3")
    state = replace(state, known=between)
    placed = _moved(START_SQUARES, "h2", "e2")  # 5.10: the opponent designated e2
    known = tracker.adopt(state, placed).known
    assert known == _unsure(placed, "e2", "f2")


def test_a_handicap_start_announced_by_the_venue_is_read_as_such() -> None:
    """让子: Red plays without the horse b0. The first still board has nearly the start's occupancy, so without the
    venue's word the tracker takes the full start (a ghost horse on b0, and every later snapshot contradicts the
    referee's position); with GameStarted's start position it reads the handicap start."""
    kw = {"seed": 11, "tilt": 12.0, "rotate": -4.0, "line_colour": (30, 30, 150), "glare": False, "fill": 0.85}
    handicap = _unsure(START_SQUARES, "b0", mark=".")
    board = draw_board(handicap, **kw)
    tracker = Tracker()

    def first_snapshot(state):
        for k in range(5):
            state, obs = tracker.step(state, board.image, k * STEP, f"{k:064x}")
            for o in obs:
                if o.type == "BoardStable":
                    return o.fields["squares"]
        return None

    assert first_snapshot(tracker.initial()) == START_SQUARES
    assert first_snapshot(tracker.initial(start=handicap)) == handicap
    assert first_snapshot(tracker.expect_start(tracker.initial(), handicap)) == handicap
    # a board already followed keeps what the camera saw
    followed = replace(tracker.initial(), known=START_SQUARES)
    assert tracker.expect_start(followed, handicap) is followed
    with pytest.raises(ValueError, match="90 points"):
        tracker.initial(start=handicap[:89])


def _rendered_from(fen: str, moves: list[str], seed: int, first: int):
    """(index, frame) of the hard video of `moves` (scene `seed`, as gamecheck renders it), from frame `first` (counted
    from 0) on. Only the frames from the last still board at or before `first` are drawn (`render_game`'s
    `from_ply`: byte for byte the whole video's frames; its plan, without pixels, tells where each still board
    begins): a stretch late in a game costs its own frames, not the whole game's before it."""
    from xqarb.vision.render import game_truth, render_game

    plan = game_truth(fen, moves, seed, difficulty="hard", misplace_rate=0.05, nudge_rate=0.03)
    starts = [next(i for i, (_, t) in enumerate(plan) if t.ply >= ply and not t.hand_present)
              for ply in range(len(moves) + 1)]
    ply = max(p for p, i in enumerate(starts) if i <= first)
    video = render_game(fen, moves, seed, difficulty="hard", misplace_rate=0.05, nudge_rate=0.03, from_ply=ply)
    for k, frame in enumerate(video, start=starts[ply]):
        assert frame.t_us == plan[k][0]  # (the frame the plan has at that index)
        if k >= first:
            yield k, frame


def _game_stills(shared_data, game: int, plies: tuple[int, ...]):
    """Hard game `game` of the games file rendered as gamecheck renders it (scene 1000 + game, 40 moves): the
    true calibration, the position after each of `plies` moves and the still frames (hand away) that show it."""
    from gamecheck import load_games

    from xqarb.referee.rules import Move, Position
    from xqarb.vision.render import game_truth

    fen, moves = load_games(shared_data / "games" / "ccpd_dev.jsonl", game + 1, 40)[game]
    positions = [Position.from_fen(fen)]
    for m in moves[:max(plies)]:
        positions.append(positions[-1].play(Move.parse(m)))
    still: dict[int, list] = {p: [] for p in plies}
    # the calibration of the video's first frame (its truth alone: no pixels drawn); the frames from the first
    # still board of min(plies) on, the first that can show it
    plan = game_truth(fen, moves, 1000 + game, difficulty="hard", misplace_rate=0.05, nudge_rate=0.03)
    fit = _given_fit(plan[0][1])
    first = next(i for i, (_, t) in enumerate(plan) if t.ply >= min(plies) and not t.hand_present)
    for _, frame in _rendered_from(fen, moves, 1000 + game, first):
        t = frame.truth
        if t.ply in still and not t.hand_present and t.event is None:
            still[t.ply].append(frame.image)
        if t.ply > max(plies) or len(still[max(plies)]) >= 6:
            break
    return fit, moves, {p: positions[p].squares() for p in plies}, still


def _rendered_stretch(shared_data, games: str, game: int, seed: int, plies: int, first: int, last: int):
    """Frames `first`..`last` (counted from 1) of game `game` of the games file `games`, rendered as gamecheck renders
    it (scene `seed`, hard), with the true calibration at `first`, the position after `plies` moves, the moves and
    each frame's truth."""
    from gamecheck import load_games

    from xqarb.referee.rules import Move, Position

    fen, moves = load_games(shared_data / "games" / games, game + 1, 40)[game]
    position = Position.from_fen(fen)
    for m in moves[:plies]:
        position = position.play(Move.parse(m))
    frames, truths = [], []
    for k, frame in _rendered_from(fen, moves, seed, first - 1):
        frames.append(frame.image)
        truths.append(frame.truth)
        if k == last - 1:
            break
    return _given_fit(truths[0]), position, moves, frames, truths


def _observed(fit, start: str, frames: list[np.ndarray]) -> list:
    tracker = Tracker()
    state, seen = tracker.initial(fit, start=start), []
    for k, img in enumerate(frames):
        state, obs = tracker.step(state, img, k * STEP, f"{k:064x}")
        seen.extend(obs)
    return seen


def test_a_move_made_as_the_camera_was_bumped_is_seen(shared_data) -> None:
    """Liu game 121 (scene 7121), ply 38: the camera moved 5 px, a quarter of a spacing, while the hand set the red
    rook b0-b6 down, and the hand's own motion hid the shift from one frame to the next. The board's lines were
    lost; found again from scratch, the board had no still board to compare with and the move was lost. Lined up
    with the last still board, the board and the move are both kept."""
    from xqarb.referee.rules import Move

    fit, position, moves, frames, truths = _rendered_stretch(shared_data, "liu_dahua_iccs.jsonl", 121, 7121, 38,
                                                             730, 750)
    assert moves[38] == "b0b6"
    assert len({tuple(np.round(t.corners).ravel()) for t in truths}) == 2  # (the bump)
    seen = _observed(fit, position.squares(), frames)
    stable = [o.fields["squares"] for o in seen if o.type == "BoardStable"]
    assert stable == [position.squares(), position.play(Move.parse("b0b6")).squares()]
    # (the shift followed, not a new calibration: the given one only)
    assert [o.type for o in seen].count("BoardCalibrated") == 1


def test_fingers_reaching_in_over_an_edge_piece_are_no_still_board(shared_data) -> None:
    """Hard game 963 (scene 1963), ply 8: fingertips came in over the red rook h0 for three frames before the hand
    showed as one, their change against the last still board too small for a hand's; read as still, the board
    showed the rook gone from h0 and, under a glare, taking the black cannon h7, and the game's remaining 32 moves
    were lost. What comes in over the edge and changes from frame to frame is not still."""
    fit, position, moves, frames, truths = _rendered_stretch(shared_data, "ccpd_dev.jsonl", 963, 1963, 8, 150, 163)
    assert moves[8] == "h0h6"
    reaching = [k for k, t in enumerate(truths) if t.hand_present]
    assert reaching and reaching[0] == 9 and not truths[reaching[0]].lifted  # (the hand coming, nothing lifted yet)
    seen = _observed(fit, position.squares(), frames)
    assert [o.fields["squares"] for o in seen if o.type == "BoardStable"] == [position.squares()]
    assert not [o for o in seen if o.type in ("PiecePlaced", "PieceLifted", "PieceNudged")]


def test_a_camera_shifted_under_a_pixel_under_the_hand_leaves_no_arm(shared_data) -> None:
    """Hard game 962 (scene 1962), ply 20: the camera moved by one pixel (0.8 of a view pixel) while the hand set
    the bishop c0 down on e2. Every line of the board then differed from the last still board, and those changes
    joined the move's into one blob over the lower edge, still "an arm reaching in" when the next move's hand came
    1.5 s later: that move's snapshot was lost. Lined up with the last still board, the blob is the move's alone."""
    from xqarb.referee.rules import Move

    fit, position, moves, frames, truths = _rendered_stretch(shared_data, "ccpd_dev.jsonl", 962, 1962, 20, 404, 428)
    assert moves[20] == "c0e2"
    assert len({tuple(np.round(t.corners).ravel()) for t in truths}) == 2  # (the shift)
    # (the hand gone for the last five frames, 1 s: the board still in them, as it was for 1.25 s in the game)
    assert truths[-6].hand_present and not any(t.hand_present for t in truths[-5:])
    seen = _observed(fit, position.squares(), frames)
    stable = [o.fields["squares"] for o in seen if o.type == "BoardStable"]
    assert stable == [position.squares(), position.play(Move.parse("c0e2")).squares()]


def test_fingers_moving_at_the_corner_under_a_shifted_camera_are_a_hand_moving(shared_data) -> None:
    """Liu game 254 (scene 7254), ply 24: the camera, bumped at ply 15, was followed to under a pixel, so the hand's
    mask against the last still board covered 68 cells, most of them lines; the fingers moving over g0 and h0 at the
    corner changed 800-1,700 px a frame, 1.2 % of the mask, under the 2 % that counted as the hand moving. The hand
    read as resting, lined up it was 3.6 cells, under an arm's 4, and so gone: the board read still at once with
    the fingers on it, g0 and h0 as touched (false 5.1 touches), and h0 again at the next still board. (The whole
    game as gamecheck runs it: the tracker's own following of the bump is what leaves the shift.)"""
    from gamecheck import check_game, load_games

    fen, moves = load_games(shared_data / "games" / "liu_dahua_iccs.jsonl", 255, 40)[254]
    # (the 40 moves' video, played to three moves after the case)
    res = check_game(fen, moves, 7254, difficulty="hard", truth_fit=True, adopt="moves", until_ply=27)
    assert res.false_touched == []
    assert res.inferred_ok == 27, res.wrong


def test_a_still_change_at_the_edge_is_the_boards_after_five_frames_whatever_their_jitter(shared_data) -> None:
    """Hard game 835 (scene 1835), ply 33: the advisor d9-e8 leaves a change at the edge of the view as large as an
    arm reaching in. Still from the hand's last motion, it was held as an arm for 1.247 s, five frames at 4 a
    second but 3 ms short of the 1.25 s after which a still blob is the board's; the next move's hand came at
    1.5 s, and d9-e8 and e2-h2 fell in one snapshot that fits no legal move (two moves lost). The whole game as
    gamecheck runs it: the hand's timing is the tracker's own."""
    from gamecheck import check_game, load_games

    fen, moves = load_games(shared_data / "games" / "ccpd_dev.jsonl", 836, 40)[835]
    assert moves[33:35] == ["d9e8", "e2h2"]
    # (the 40 moves' video, played to two moves after the case)
    res = check_game(fen, moves, 1835, difficulty="hard", truth_fit=True, adopt="moves", until_ply=36)
    assert res.inferred_ok == 36, res.wrong


def test_a_piece_set_down_beside_another_does_not_touch_it(shared_data) -> None:
    """Hard game 830 (scene 1830), ply 39: the black cannon b7-b6, set down beside the pawn a6. The outline nearest
    a6 was then the cannon's, 0.92 of a spacing off towards b6, and the pawn read as touched (a false 5.1 touch)."""
    from xqarb.referee.rules import Move

    fit, position, moves, frames, truths = _rendered_stretch(shared_data, "ccpd_dev.jsonl", 830, 1830, 39, 838, 862)
    assert moves[39] == "b7b6"
    assert not any(t.nudged for t in truths)  # (nothing touched in these frames)
    seen = _observed(fit, position.squares(), frames)
    assert not [o.fields["point"] for o in seen if o.type == "PieceNudged"]
    stable = [o.fields["squares"] for o in seen if o.type == "BoardStable"]
    assert stable == [position.squares(), position.play(Move.parse("b7b6")).squares()]


def test_a_taker_set_down_short_of_half_way_stands_on_the_point_it_took(shared_data) -> None:
    """Liu game 335 (scene 7335), ply 15: the black rook c9 takes the red pawn c5 and is set down 0.31 of a spacing
    off c5 towards the empty c6 (as careless as a set-down comes, under half-way). Its ink peak and c6's leant
    towards each other, and it was reported half-way between c5 and c6: a false 5.10 pair, both points left unsure,
    and six moves on the cannon a6xe6 read as the rook b6 taking (18 of 40 moves lost). Read by the ink alone, the
    taken pawn's red mixed in left c5 not surely dark, and the move read as c9-c6. The rook's round outline, plain
    and 0.31 off c5, says it stands on c5. (The whole game as gamecheck runs it: from a true calibration at ply 15
    the ink peaks do not pair, and only the second reading shows.)"""
    from gamecheck import check_game, load_games

    fen, moves = load_games(shared_data / "games" / "liu_dahua_iccs.jsonl", 336, 40)[335]
    assert moves[15] == "c9c5"
    # (the 40 moves' video, played to eight moves after the case: past the six moves on where it told)
    res = check_game(fen, moves, 7335, difficulty="hard", truth_fit=True, adopt="moves", until_ply=23)
    assert res.misaligned_false_pairs == []
    assert res.inferred_ok == 23, res.wrong


def test_a_faint_capture_told_by_the_emptied_point_and_the_prey_that_changed(shared_data) -> None:
    """Liu game 269 (scene 7269), ply 8: the red rook h6 takes the black rook h9 on a board whose red ink reads
    faintly. h9 changed 0.071 at the level 0.090 and still read black; h6's ink fell to 0.15 of what it was (not
    under 0.1) while its round outline went. Read as the rook gone nowhere, the referee could not follow, and
    looking again it took h6-g6: 17 of the game's 40 moves were lost."""
    from xqarb.referee.rules import Move

    fit, position, moves, frames, truths = _rendered_stretch(shared_data, "liu_dahua_iccs.jsonl", 269, 7269, 8,
                                                             158, 182)
    assert moves[8] == "h6h9" and position.squares()[point_index("h9")] == "r"
    assert not truths[0].hand_present and not truths[-1].hand_present
    seen = _observed(fit, position.squares(), frames)
    stable = [o.fields["squares"] for o in seen if o.type == "BoardStable"]
    assert stable == [position.squares(), position.play(Move.parse("h6h9")).squares()]


def test_a_piece_between_two_points_set_onto_one_told_by_its_outline(shared_data) -> None:
    """Liu game 286 (scene 7286), ply 23: the black rook left between b4 and b3 (both unsure, the rook's letter
    kept) goes to b3, on a board whose black ink washes out: b3's ink read 0.007 with the rook on it, the river's
    text at b4 0.043. Read as b3 emptied, the rook was lost for the rest of the game (17 moves). Its round outline,
    0.42 off b3 before, stands on b3 now, and none is left at b4: it was set onto b3."""
    from xqarb.referee.rules import Move

    fit, position, moves, frames, truths = _rendered_stretch(shared_data, "liu_dahua_iccs.jsonl", 286, 7286, 22,
                                                             462, 512)
    assert moves[22:24] == ["e6e4", "b4b3"] and truths[0].misaligned == ("b4", "b3")
    b4, b3 = point_index("b4"), point_index("b3")
    tracker = Tracker()
    state, seen, paired = tracker.initial(fit, start=position.squares()), [], False
    for k, img in enumerate(frames):
        state, obs = tracker.step(state, img, k * STEP, f"{k:064x}")
        if not paired and any(o.type == "BoardStable" for o in obs):
            # the tracker as it stood in the game: the rook reported between the two (PieceMisaligned), both unsure
            assert state.known == position.squares()
            pair = "".join("?" if i in (b4, b3) else c for i, c in enumerate(state.known))
            state, paired = replace(state, known=pair, unsure_of=((b4, "r"), (b3, "r"))), True
            continue
        seen.extend(obs)
    assert paired
    stable = [o.fields["squares"] for o in seen if o.type == "BoardStable"]
    after = position.play(Move.parse("e6e4")).play(Move.parse("b4b3")).squares()
    assert stable[-1] == after
    assert "b3" in [o.fields["point"] for o in seen if o.type == "PiecePlaced"]


def test_a_piece_left_between_two_points_under_a_change_of_light_left_its_point(shared_data) -> None:
    """Liu game 291 (scene 7291), ply 19: the black pawn g6-g5 left between g5 and h5 while the light changed the
    whole board, raising the change level to 0.29: g6 changed 0.21, its ink fell by half and its round outline
    went. The pair was reported and g6 kept its pawn: two pawns where there was one, a snapshot that fits no move."""
    fit, position, moves, frames, truths = _rendered_stretch(shared_data, "liu_dahua_iccs.jsonl", 291, 7291, 19,
                                                             373, 398)
    assert moves[19] == "g6g5" and truths[-1].misaligned == ("g5", "h5")
    seen = _observed(fit, position.squares(), frames)
    stable = [o.fields["squares"] for o in seen if o.type == "BoardStable"]
    after = list(position.squares())
    after[point_index("g6")], after[point_index("g5")], after[point_index("h5")] = ".", "?", "?"
    assert stable == [position.squares(), "".join(after)]
    assert [o.fields["points"] for o in seen if o.type == "PieceMisaligned"] == [["g5", "h5"]]


def test_a_piece_touched_whose_outline_still_stands_took_nothing(shared_data) -> None:
    """Liu game 253 (scene 7253), ply 16: the red rook h0 nudged (no move), its ink halved and its round outline
    fell by a third but still stood on h0, 0.11 off. Read as gone with no disc come anywhere, it was taken to
    have taken the only piece it could, the black cannon h7, whose point changed 0.025: a silent wrong move
    (h0-h7 for the game's h0-h4, and 24 moves lost)."""
    fit, position, moves, frames, truths = _rendered_stretch(shared_data, "liu_dahua_iccs.jsonl", 253, 7253, 16,
                                                             290, 306)
    assert moves[16] == "h0h4" and [t.nudged for t in truths if t.nudged] == ["h0"]
    assert not any(t.lifted for t in truths)
    seen = _observed(fit, position.squares(), frames)
    assert {o.fields["squares"] for o in seen if o.type == "BoardStable"} == {position.squares()}
    assert not [o for o in seen if o.type == "PiecePlaced"]


def test_a_disc_found_beside_the_line_is_no_piece_between_two_points(shared_data) -> None:
    """Liu game 54 (scene 7054), ply 12: the red horse c2-d4, whose red ink does not read on this board, found by
    its round outline coming at d4. The disc nearest d4 within 0.7 was found 0.69 off, 0.41 across the line to d3:
    another point's, yet read as the horse standing between d4 and d3 (a false 5.10 pair, the horse's letter lost,
    6 moves lost later)."""
    from xqarb.referee.rules import Move

    fit, position, moves, frames, truths = _rendered_stretch(shared_data, "liu_dahua_iccs.jsonl", 54, 7054, 12,
                                                             233, 256)
    assert moves[12] == "c2d4" and truths[-1].ply == 13 and not truths[-1].hand_present
    seen = _observed(fit, position.squares(), frames)
    assert ["d3", "d4"] not in [sorted(o.fields["points"]) for o in seen if o.type == "PieceMisaligned"]
    after = [o.fields["squares"] for o in seen if o.type == "BoardStable"][-1]
    moved = position.play(Move.parse("c2d4")).squares()
    assert [after[point_index(p)] for p in ("c2", "d4", "d3")] == [moved[point_index(p)] for p in ("c2", "d4", "d3")]


def test_a_move_told_by_a_round_outline_come_to_stand_on_its_point(shared_data) -> None:
    """Liu game 54 (scene 7054), ply 22: the red pawn e3-e4 on a board whose red ink does not read. e3's outline
    fell from 0.60 to 0.28; e4's rose only to 0.39 (under the 0.2 rise looked for) but now stands on e4, 0.19 off,
    where none stood before, and e4 changed 0.025, over the board's median. Read as e3 touched, the move was lost
    and the game with it from there (22 of its 40 moves inferred). (The game as gamecheck runs it: the state the
    tracker had built by then is what made e4's change what it was. Its ply 34 is still lost: not mended.)"""
    from gamecheck import check_game, load_games

    fen, moves = load_games(shared_data / "games" / "liu_dahua_iccs.jsonl", 55, 40)[54]
    assert moves[22] == "e3e4"
    # (the 40 moves' video, played to one move after ply 34)
    res = check_game(fen, moves, 7054, difficulty="hard", truth_fit=True, adopt="moves", until_ply=35)
    first_lost = min((int(w.split(":")[0].split()[1]) for w in res.wrong if w.startswith("ply ")), default=35)
    assert first_lost >= 34, res.wrong


def test_a_capture_from_a_pawn_point_whose_marks_read_as_ink(shared_data, monkeypatch) -> None:
    """Hard game 4 (scene 1004), ply 38: the red pawn g3 takes the black pawn g4. On this board the pawn point's
    printed marks show more ink once uncovered than the red pawn did, and red ink reads weakly: both points still
    read as dark pieces. The pieces' round outlines tell that the source was emptied."""

    fit, moves, position, still = _game_stills(shared_data, 4, (38, 39))
    assert moves[38] == "g3g4"
    before = position[38]
    frames = still[38][-4:] + still[39][:6]
    tracker = Tracker()

    def snapshots() -> list[str]:
        state, seen = tracker.initial(fit, start=before), []
        for k, img in enumerate(frames):
            state, obs = tracker.step(state, img, k * STEP, f"{k:064x}")
            seen.extend(o.fields["squares"] for o in obs if o.type == "BoardStable")
        return seen

    assert snapshots() == [before, position[39]]
    # without the outlines the move is not seen: the taken pawn stays on g4, the taker on g3 or unsure (both rules
    # that ask them switched off: the source's outline gone, and the outline that fell clearly most)
    patch_tracker(monkeypatch, "refit", _no_refit)  # the rule alone: the move fit off
    patch_tracker(monkeypatch, "_outline_gone", lambda *a, **k: False)
    patch_tracker(monkeypatch, "_clearly_most", lambda *a, **k: None)
    last = snapshots()[-1]
    assert last[point_index("g4")] == "p" and last[point_index("g3")] in "P?"


def test_no_move_by_the_changes_into_a_point_a_piece_left(shared_data) -> None:
    """Hard game 106 (scene 1106), ply 16: the red pawn left between g3 and g4 (both unsure) takes the black pawn
    g5. g4 and g5 changed, the rest little: the changes alone would say the black pawn went g5 -> g4, but g4 lost
    the ink of the piece it showed: a piece left there. The game's first 18 moves through gamecheck. (Where that
    rule is switched off, the correction by sight now puts the board right two still boards later: both off, the
    game loses moves.)"""
    from gamecheck import check_game, load_games

    fen, moves = load_games(shared_data / "games" / "ccpd_dev.jsonl", 107, 18)[106]
    res = check_game(fen, moves, 1106, difficulty="hard", truth_fit=True, from_ply=14)  # (from two moves before)
    assert res.followed == 18, res.wrong
    # (With that rule and the correction by sight switched off, the game lost moves until the rules of 2026-12-01
    # came: where a piece's move reaches, and the outlines of a capture's source, now read this snapshot too.)


def _no_refit(*_args: object) -> None:
    """The move fit switched off (`tracker.refit`): a counterfactual shows what a rule of the tracker's own does, and
    the fit, weighing every move by each point's evidence, answers some of the rules' cases too."""
    return None


def _first_moves(shared_data, game: int, n: int, since: int = 0, until: int | None = None):
    """Hard game `game`'s first `n` moves through gamecheck (scene 1000 + game, the board calibrated as given). The
    video is that of the `n` moves (the scene's light and shadows depend on them); `since`: only its frames from
    the board left still after that many moves are drawn and tracked, the tracker told that position as the
    game's start (gamecheck's `from_ply`): a case at a late move is played from a move or two before it. `until`:
    only the video's first `until` moves are played (gamecheck's `until_ply`: the same frames as the whole video's up
    to there): a case early in a long video is played to a move or two after it."""
    from gamecheck import check_game, load_games

    fen, moves = load_games(shared_data / "games" / "ccpd_dev.jsonl", game + 1, n)[game]
    return check_game(fen, moves, 1000 + game, difficulty="hard", truth_fit=True, from_ply=since, until_ply=until)


def _first_moves_inferred(shared_data, game: int, n: int, since: int = 0,
                          until: int | None = None) -> tuple[int, list[str]]:
    """How many of hard game `game`'s first `n` moves the check followed (the `since` given at the start and those
    inferred from the snapshots), and what went wrong."""
    res = _first_moves(shared_data, game, n, since, until)
    return res.followed, res.wrong


def test_a_piece_of_the_movers_own_side_is_never_taken(shared_data) -> None:
    """Hard game 201, move 7: the red rook h0-h6 while a shadow fell over the first rank, whose red pieces changed
    as much as a piece taken does. Taking one's own piece is no move (3.1): before, the tracker had the rook take
    the red rook a0 and missed h6, and lost the game's remaining 34 moves."""
    inferred, wrong = _first_moves_inferred(shared_data, 201, 8, 4)
    assert inferred == 8, wrong


def test_a_piece_set_down_off_the_point_it_went_to_is_no_touch(shared_data) -> None:
    """Hard game 204, move 6: the black pawn g6-g5 set down off g5 towards g6, so that g6 kept nearly all of the
    pawn's ink. The ink peaks place the pawn nearer g5 (0.21 of a spacing back from it, 0.64 on from g6): it went
    there, it was not pushed on its point (before: read as a touch, g6 unsure, g5 empty)."""
    inferred, wrong = _first_moves_inferred(shared_data, 204, 7, 3)
    assert inferred == 7, wrong


def test_a_move_told_by_the_pieces_outlines_where_the_inks_do_not(shared_data, monkeypatch) -> None:
    """Hard game 219, move 3: the red horse h0-g2 on a board whose red ink all but vanishes (g2 read 0.11 occupied
    after the move, h0 still 0.65): no ink told the move; the outlines did (h0 fell by 0.52, g2 rose by 0.56, no
    other point by more than 0.14). And hard game 215, move 3: the pawn g3-g4, whose emptied point's printed marks
    read as ink. (219's horse is told by the changes alone too: only h0 and g2 changed at the level, and h0's ink,
    still read, is no touch, g2 being no neighbour of it; so the rule is checked with that pass off.)"""
    import xqarb.vision.interpret as interpret_module

    for game in (219, 215):
        inferred, wrong = _first_moves_inferred(shared_data, game, 4)
        assert inferred == 4, (game, wrong)
    patch_tracker(monkeypatch, "refit", _no_refit)  # the rule alone: the move fit off
    monkeypatch.setattr(interpret_module, "_PASSES", tuple(p for p in interpret_module._PASSES
                                                          if p.__name__ != "_captures_read_faintly"))
    inferred, wrong = _first_moves_inferred(shared_data, 219, 4)
    assert inferred == 4, wrong
    patch_tracker(monkeypatch, "_clearly_most", lambda *a, **k: None)
    assert _first_moves_inferred(shared_data, 219, 4)[0] < 4
    # (215's pawn, left half-way between g3 and g4 in this video, is now found without the outlines too: its disc
    # half-way, its old point's marks reading another colour)


def test_a_piece_between_two_points_found_by_its_outline_names_both(shared_data) -> None:
    """Hard game 235, move 5: the red horse b0-c2 left half-way between c2 and c1, on a board whose red ink barely
    reads (c1 0.18 occupied, c2 0.07): its outline told the move, and its disc's centre, the camera's parallax
    removed, lies half-way: PieceMisaligned names both points (before: the horse was placed on c1, no move fitted
    and the game was lost from there)."""
    res = _first_moves(shared_data, 235, 6, 2)
    assert res.followed == 6, res.wrong
    assert (res.misaligned_truth, res.misaligned_reported) == (1, 1)


def test_which_of_two_faint_pieces_took_told_by_their_outlines(shared_data) -> None:
    """Hard game 164, move 30: the black pawn e3 took the red bishop e2 on a board whose inks read faintly; after
    the move both points read 0.10 occupied, and neither emptied outright: by the inks either could have taken (both
    were reported touched, and the game was lost from there). The taker's outline left e3; a disc still stands on
    e2."""
    inferred, wrong = _first_moves_inferred(shared_data, 164, 31, 28)
    assert inferred == 31, wrong


def test_a_piece_set_down_half_way_found_by_the_disc_that_came(shared_data, monkeypatch) -> None:
    """Hard game 244, move 14: the black rook a8-d8 set down half-way between d8 and d7. a8's outline left (fell by
    0.60), but no point's outline within 0.3 rose by more than 0.13, and no ink read at either point: the move was
    read as a touch of a8, and the game was lost from there. Looked for within 0.7 of the empty points, the disc
    that came rose by 0.43 and 0.30 beside d7 and d8 and at most 0.03 elsewhere: both points named."""

    res = _first_moves(shared_data, 244, 15, 11)
    assert res.followed == 15, res.wrong
    assert (res.misaligned_truth, res.misaligned_reported) == (1, 1)
    patch_tracker(monkeypatch, "refit", _no_refit)  # the rule alone: the move fit off
    patch_tracker(monkeypatch, "_disc_came", lambda *a, **k: None)
    assert _first_moves(shared_data, 244, 15, 11).followed < 15


def test_a_capture_told_by_the_takers_outline_and_the_change_where_it_took(shared_data) -> None:
    """Hard game 243, move 21: the red pawn c3 took the black pawn c4 on a blurred board whose red ink reads as
    none, while c3's printed pawn marks, left bare, read as a black piece (0.93 occupied). c3's outline left (fell
    by 0.52), no disc came anywhere, and of the pieces the pawn may take only c4 changed (0.08, no other over 0.02):
    the pawn took there (before: c3 read as touched, and the game was lost from there)."""
    inferred, wrong = _first_moves_inferred(shared_data, 243, 22, 18)
    assert inferred == 22, wrong


def test_a_piece_set_down_between_two_points_is_where_its_disc_is(shared_data) -> None:
    """Hard game 272, move 21: the red horse f4-d5 set down towards e5 on a board whose red ink reads as none. The
    ink read at e5 (0.97 occupied, the disc's edge and shadow) and not at d5 (0.04); both changed alike (0.17). The
    disc that came rose most beside d5 (0.46, e5 0.30): the horse went to d5 (before: to e5, and the game was lost
    from there). And on the still boards after it, d5, where neither its ink nor an outline centred within 0.3 shows,
    is no piece gone: its outline lies within 0.4."""
    inferred, wrong = _first_moves_inferred(shared_data, 272, 23, 18)
    assert inferred == 23, wrong


def test_a_move_goes_to_one_point_though_a_shadow_changed_another_piece(shared_data) -> None:
    """Hard game 276, move 13: the red rook h6-h4 while a shadow crossed the black king's rank. The rook's arrival
    on h4 read plainly; the king's point changed as much as a capture does, and was taken for one: two targets, both
    reported as pieces of unknown type, and no move fitted (the game was lost from there). The king's point did not
    turn to red: the rook arrived, the king stays. (The whole game's video: the scene drawn depends on the moves.)"""
    inferred, wrong = _first_moves_inferred(shared_data, 276, 40, 10, until=15)  # (to two moves after it)
    assert inferred == 15, wrong


def test_a_piece_half_way_beside_where_its_ink_reads_names_both(shared_data) -> None:
    """Hard game 27, move 33: the red bishop g0-e2 left half-way between e2 and f2; both points changed alike. Its
    disc's centre, the parallax removed, lies half-way: PieceMisaligned names both (the game's move is among the
    candidates; before the disc was looked at, the ink put the bishop on e2 by chance, and on f2 once the disc's
    rise alone was asked, 0.27 beside f2 against 0.25)."""
    res = _first_moves(shared_data, 27, 34, 30)
    assert res.followed == 34, res.wrong
    assert res.misaligned_reported >= 1


def test_a_piece_still_half_way_is_not_taken_as_set_right(shared_data) -> None:
    """Hard game 101, move 2: the black horse left between g7 and g8 (reported so). At g8 its ink reads plainly and an
    outline lies within 0.3, but its disc is 0.54 off the point: it still stands between the two, and the letter the
    tracker kept for the pair is not put on g8 (that lost the whole game while the correction by sight took any
    plain reading for the piece set right)."""
    res = _first_moves(shared_data, 101, 40, until=4)  # (the 40 moves' video, played to two moves after it)
    assert res.inferred_ok == 4, res.wrong
    assert (res.misaligned_truth, res.misaligned_reported) == (1, 1)


def test_a_piece_moved_one_point_and_left_half_way_back_names_both(shared_data, monkeypatch) -> None:
    """Hard game 326, move 24: the red cannon e2-f2 left half-way back towards e2, on a board whose red ink reads as
    none at f2. e2 kept its ink and changed most: the move read as a touch of e2, and the game was lost from there.
    The cannon's disc lies 0.49 off e2 towards f2, which changed too (a touched piece stays within 0.3 of its
    point): PieceMisaligned names both."""

    res = _first_moves(shared_data, 326, 25, 22)
    assert res.followed == 25, res.wrong
    assert (res.misaligned_truth, res.misaligned_reported) == (1, 1)
    patch_tracker(monkeypatch, "refit", _no_refit)  # the rule alone: the move fit off
    patch_tracker(monkeypatch, "_half_way_towards", lambda *a: None)
    assert _first_moves(shared_data, 326, 25, 22).followed < 25


def test_where_a_piece_came_from_or_took_is_where_its_move_reaches(shared_data) -> None:
    """Hard game 350, move 28: the red cannon b5 took the black rook h5 over a screen, its red ink read as none: h5
    changed 0.049 and black pieces the cannon cannot reach up to 0.04, so that no capture was clearly most. Hard game
    358, move 6: the red horse h0-g2, h0 in a dim corner (read 0.10 occupied before the move): of the pieces whose
    points read empty, only the horse can reach g2. Before the pieces' moves were looked at, both games were lost
    there."""
    for game, n, since in ((350, 29, 26), (358, 7, 4)):
        inferred, wrong = _first_moves_inferred(shared_data, game, n, since)
        assert inferred == n, (game, wrong)
    # (Both are now found without the pieces' reach too: 358's horse is the only piece whose round outline is gone,
    # test_a_piece_gone_from_an_edge_point_that_still_reads_like_a_piece; and since a hand's moving is told by
    # anything on the board moving, 350's still boards fall at other frames, and move 28 was read without it (why,
    # not looked into). What the reach does on 350's readings of that move is shown by
    # test_tracker_interpret.py::test_a_capture_whose_taker_reads_as_none_is_where_its_move_reaches.)


def test_a_piece_left_between_two_points_that_takes(shared_data, monkeypatch) -> None:
    """Hard game 345, move 27: the black pawn left between c4 and d4 (both unsure) took the red horse b4, whose red
    ink read faintly; both unsure points lost their ink, b4 changed. Before, b4 read as touched and the pawn as still
    there. And hard game 359, move 28: the red cannon left between c2 and c3 took the black cannon g2; the taker,
    whose letter is not known, is put down as a red piece (before: g2 kept the black cannon and c2-c3 was inferred,
    a wrong move). Without the test that the unsure points lost the ink they showed, both fail (359 with the pieces'
    colours from their look off too: where the ink's colour fails, the look reads the taker's side, and the move
    is found without the pair's test)."""

    for game, n, since in ((345, 28, 20), (359, 29, 12)):  # (from before the piece was left between the two)
        inferred, wrong = _first_moves_inferred(shared_data, game, n, since)
        assert inferred == n, (game, wrong)
    patch_tracker(monkeypatch, "refit", _no_refit)  # the rule alone: the move fit off
    patch_tracker(monkeypatch, "_left_by_a_piece", lambda *a, **k: False)
    patch_tracker(monkeypatch, "_pair_left", lambda *a, **k: None)  # nor by its disc leaving the pair
    assert _first_moves_inferred(shared_data, 345, 28, 20)[0] < 28
    patch_tracker(monkeypatch, "look_colour", lambda reading, *a, **k: reading)
    assert _first_moves_inferred(shared_data, 359, 29, 12)[0] < 29


def test_a_touched_piece_whose_ink_never_reads_is_not_gone(shared_data) -> None:
    """Hard game 329, a board where neither ink reads plainly: the red pawn e3 and later the red cannon c2 (0.01
    occupied throughout) were touched (0.09 and 0.10 changed) and read as gone, as nothing else changed; their round
    outlines still stood there. And a rook set down off h9 towards the corner i9, reported between the two, was
    reported again with each later still board, which read as the rook moving to i9. Before, the game was lost at
    move 9; now at move 33 (the rook leaves the pair for h1, where its ink does not read). The whole game's video:
    the scene drawn depends on the moves."""
    inferred, wrong = _first_moves_inferred(shared_data, 329, 40, until=33)  # (played to move 33)
    assert inferred == 33, wrong


def test_a_piece_pushed_towards_its_neighbour_still_stands_on_its_point(shared_data, monkeypatch) -> None:
    """Hard game 218, before move 19: the black pawn g5 touched towards f5, whose marks read like ink already; with
    the pawn's ink leaning in, f5 read as its arrival and g5 as emptied (no move fitted, and the game was lost from
    there). The pawn's round outline still stands plainly on g5, 0.18 off it: a touch."""

    inferred, wrong = _first_moves_inferred(shared_data, 218, 20, 17)
    assert inferred == 20, wrong
    patch_tracker(monkeypatch, "refit", _no_refit)  # the rule alone: the move fit off
    patch_tracker(monkeypatch, "_stands_on", lambda *a, **k: False)
    assert _first_moves_inferred(shared_data, 218, 20, 17)[0] < 20


def test_a_piece_left_half_way_back_under_a_change_of_light(shared_data) -> None:
    """Hard game 232, move 14: the red rook i0-i1 left half-way back towards the corner, while the light changed
    the whole board (the change level rose to 0.09; i1 changed 0.082). Its disc half-way names both points."""
    res = _first_moves(shared_data, 232, 15, 12)
    assert res.followed == 15, res.wrong
    assert (res.misaligned_truth, res.misaligned_reported) == (1, 1)


def test_a_piece_between_two_points_is_reported_once(views) -> None:
    """The piece left between e2 and f2 is reported with the still board that first shows it; a touch elsewhere
    later is reported without it (re-reported with each still board, the unsure pair alone read as the piece moving
    from the one point to the other)."""
    start, _, kw = views
    sq = _moved(START_SQUARES, "h2", "f2")
    half = draw_board(sq, offsets={point_index("f2"): (-0.5, 0.0)}, **kw)
    touched = draw_board(sq, offsets={point_index("f2"): (-0.5, 0.0), point_index("c3"): (0.18, 0.0)}, **kw)
    hand_at = half.corners.mean(axis=0)
    frames = ([start.image] * 5 + [_with_hand(start.image, hand_at)] * 3 + [half.image] * 8
              + [_with_hand(half.image, hand_at)] * 3 + [touched.image] * 8)
    _, seen = _run(Tracker(), frames)
    stable = [k for k, o in enumerate(seen) if o.type == "BoardStable"]
    assert len(stable) == 3, [o.type for o in seen]
    pairs = [(k, sorted(o.fields["points"])) for k, o in enumerate(seen) if o.type == "PieceMisaligned"]
    assert len(pairs) == 1 and pairs[0][1] == ["e2", "f2"] and pairs[0][0] < stable[1]
    nudges = [(k, o.fields["point"]) for k, o in enumerate(seen) if o.type == "PieceNudged"]
    assert [p for k, p in nudges if k > stable[1]] == ["c3"]
    assert seen[stable[2]].fields["squares"] == seen[stable[1]].fields["squares"]


def test_a_touched_piece_whose_ink_leans_over_is_not_between_two_points(shared_data, monkeypatch) -> None:
    """Hard game 9, before move 24: the red rook b0 touched towards b1. b1's ink peak lay 0.47 towards b0, and the
    pair was reported as a piece between b0 and b1: the rook moving to b1 fitted, a silent wrong move. The rook's
    round outline stands 0.16 off b0: a touch."""

    inferred, wrong = _first_moves_inferred(shared_data, 9, 25, 22)
    assert inferred == 25, wrong
    patch_tracker(monkeypatch, "refit", _no_refit)  # the rule alone: the move fit off
    patch_tracker(monkeypatch, "_stands_on", lambda *a, **k: False)
    assert _first_moves_inferred(shared_data, 9, 25, 22)[1][:1] == ["ply 24: inferred b0b1, game b2b4"]


def test_only_a_known_pieces_outline_can_leave(shared_data) -> None:
    """Hard game 36, move 26: the red cannon b3 took the pawn g3 over a screen, its red ink read as none. b3's
    outline fell by 0.41, an empty point's (a4) by 0.21: no fall was clearly most, and the capture was missed (the
    game lost from there). Only a piece's outline can leave. (The whole game's video: the scene depends on the
    moves.)"""
    inferred, wrong = _first_moves_inferred(shared_data, 36, 40, 24, until=28)  # (to two moves after it)
    assert inferred == 28, wrong


def test_a_piece_between_two_points_set_onto_one_keeps_its_letter(shared_data, monkeypatch) -> None:
    """Hard game 33, move 29: the black pawn reported between c5 and c4 was set onto c4, where its ink read red
    (0.95): the snapshot said a red piece, and the game was lost from there. It moved from the one unsure point to
    the other: the letter kept for the pair."""

    inferred, wrong = _first_moves_inferred(shared_data, 33, 30, 5)
    assert inferred == 30, wrong
    patch_tracker(monkeypatch, "refit", _no_refit)  # the rule alone: the move fit off
    # (and the colour as the ink reads it: the pieces' look reads the pawn black on c4, look_colour.py)
    patch_tracker(monkeypatch, "look_colour", lambda reading, *args, **kwargs: reading)
    patch_tracker(monkeypatch, "_settled_from_between", lambda known, squares, placed, unsure_of: squares)
    assert _first_moves_inferred(shared_data, 33, 30, 5)[0] < 30


def test_a_piece_that_took_its_neighbour_and_was_left_half_way_names_both(shared_data) -> None:
    """Hard game 376, move 13: the black pawn c5 took the red pawn c4 and was left in the river between them. Both
    points read half a piece (0.55) and neither emptied: two touches, the capture missed and the game lost from
    there (13 of 14 moves). Its disc stands half-way between the two: the pair is reported, and the capture fits."""
    res = _first_moves(shared_data, 376, 14, 11)
    assert res.followed == 14, res.wrong
    assert res.misaligned_reported == res.misaligned_truth == 1


def test_where_a_piece_went_is_looked_for_only_where_it_could_go(shared_data) -> None:
    """Where a piece went, when the inks leave it in doubt, is looked for only among the points its move reaches.
    Hard game 366, move 0: the cannon h2-e2 left between e2 and d2; i2 beside h2 and i1, where a cannon from h2
    cannot go, rose nearly as much as the two (0.18 and 0.11 against 0.22 and 0.20), and the move was missed.
    Hard game 365, move 31: the rook h3 took g3 while the light changed; the edge points i1 and i2 read the frame's
    ink as two pieces arriving. Hard game 379, move 37: the rook g0 took the cannon in the corner i0, which changed
    0.107; g1, beside g0, 0.073 from the rook lifted off it. Hard game 370, move 28: the red rook c4 took c2 and
    leant towards d2 on a board whose red ink reads dark. Hard game 12, move 38: the rook h7-g7 set down off g7
    towards g8, where a rook from h7 cannot go; g8 read 0.93 occupied, g7 0.04. Each game was lost from there."""
    for game, n, since in ((366, 1, 0), (365, 32, 29), (379, 38, 35), (370, 29, 26), (12, 39, 36)):
        inferred, wrong = _first_moves_inferred(shared_data, game, n, since)
        assert inferred == n, (game, wrong)


def test_a_piece_between_two_points_found_by_its_outline_where_the_inks_lean(shared_data) -> None:
    """Hard game 387, move 7: the rook i8-d8 left between d8 and c8. Both points read a piece; the ink peaks, less
    the board's median parallax, placed it 0.30 from c8, and the move was read as i8-c8: a silent wrong move. Its
    round outline stands 0.50 off each: between the two, both named (and so for hard game 360, move 35)."""
    res = _first_moves(shared_data, 387, 8, 5)
    assert res.followed == 8 and not res.wrong, res.wrong
    assert res.misaligned_reported == res.misaligned_truth == 1
    res = _first_moves(shared_data, 360, 36, 33)
    assert res.followed == 36 and res.misaligned_reported == res.misaligned_truth == 1, res.wrong


def test_a_piece_between_two_points_set_right_when_another_comes_beside_it(shared_data) -> None:
    """Hard game 372, move 29: the red cannon between c2 and d2 set onto d2 under the hand of the black horse
    d4-c2. d2, where a horse from d4 cannot go, changed most and was read as where the horse went; the move was
    lost. The horse went to c2, and d2 keeps the pair's letter."""
    inferred, wrong = _first_moves_inferred(shared_data, 372, 31, 10)
    assert inferred == 31, wrong


def test_camera_noise_over_a_hands_blob_is_no_hand_moving(shared_data, monkeypatch) -> None:
    """Hard game 389, moves 7-9: after the hand left, the blob of the pieces it moved (one off an edge point, with
    its shadow) kept 2.5 % of its pixels changing from frame to frame, the camera's noise along the pieces' edges:
    the hand seemed to move on for two seconds, and three moves fell into one still board. Specks of change a few
    pixels wide are no movement. (And move 19: the board, its specks covering 0.4 % of the view, was never still.
    Move 16, then: the red horse e6 took g7 while the light changed the board, e6 changed 0.40 and its outline left,
    g7 0.19 at the level 0.20 and turned surely red: read as a touch of e6 before.)"""

    inferred, wrong = _first_moves_inferred(shared_data, 389, 21, 4)
    assert inferred == 21, wrong
    patch_tracker(monkeypatch, "refit", _no_refit)  # the rule alone: the move fit off
    patch_tracker(monkeypatch, "_solid", lambda step, *_: step.astype(np.uint8))
    # (and a still blob's motion counted in parts of any size: `hand_moved`'s least part is a second guard)
    from xqarb.vision.hand import hand_moved

    patch_tracker(monkeypatch, "hand_moved", lambda moved, mask, _least, *rest: hand_moved(moved, mask, 0.0, *rest))
    assert _first_moves_inferred(shared_data, 389, 11, 4)[0] < 11


def test_a_piece_between_two_points_that_moved_on_keeps_its_letter() -> None:
    """The pair's letter goes with its piece: hard game 370, the red rook between h0 and i0 went to h4, whose red
    ink read dark (a black piece of unknown type); hard game 372, the cannon between c2 and d2 set onto d2 as a
    horse came to c2, d2 read as a red piece of unknown type."""
    from xqarb.vision.tracker import _settled_from_between

    def board(**at: str) -> str:
        sq = ["."] * 90
        for p, c in at.items():
            sq[point_index(p)] = c
        return "".join(sq)

    h0, i0, h4 = point_index("h0"), point_index("i0"), point_index("h4")
    known = board(h0="?", i0="?", e0="K")
    after = _settled_from_between(known, board(h4="x", e0="K"), [h4], {h0: "R", i0: "R"})
    assert after == board(h4="R", e0="K")
    # not where the pair's points did not both empty: the piece there may still stand between them
    assert _settled_from_between(known, board(h4="x", i0="?", e0="K"), [h4], {h0: "R", i0: "R"})[h4] == "x"
    c2, d2 = point_index("c2"), point_index("d2")
    known = board(c2="?", d2="?", d4="n")
    after = _settled_from_between(known, board(c2="n", d2="X"), [c2], {c2: "C", d2: "C"})
    assert after == board(c2="n", d2="C")
    # a piece of the other colour read there is not the pair's
    assert _settled_from_between(known, board(c2="n", d2="x"), [c2], {c2: "C", d2: "C"})[d2] == "x"


def test_a_piece_under_glare_is_not_taken_off_the_board(shared_data) -> None:
    """Hard game 212: glare over the top left corner washed out the black horse b9's ink and outline, and the
    tracker took it off the board (its point read plainly empty twice): the game was lost at its second move. The
    printed lines it covers stay unseen there too (grey spread 6 against the empty points' 60-75); a piece is
    plainly gone only where they show. The horse's move b9-a7, its black ink reading faintly, is found by the
    outline that came at a7."""
    inferred, wrong = _first_moves_inferred(shared_data, 212, 40, until=29)  # (played to move 29)
    assert inferred == 29, wrong


def test_the_source_of_a_capture_is_the_piece_whose_outline_left(shared_data) -> None:
    """Hard game 229, move 27: the black pawn c4 took c3, whose red ink turned only half-way. c3 changed most (0.19
    against 0.15) and was taken for the source: no capture fitted, and the game was lost from there."""
    inferred, wrong = _first_moves_inferred(shared_data, 229, 40, 19, until=29)  # (to two moves after it)
    assert inferred == 29, wrong


def test_an_arrival_where_the_piece_that_left_cannot_go_is_the_boards(shared_data) -> None:
    """Hard game 235, move 11: the cannon b7-d7 while the edge point g0's double frame line read as a black piece
    arriving; the snapshot had two pieces come for one gone."""
    inferred, wrong = _first_moves_inferred(shared_data, 235, 12, 9)
    assert inferred == 12, wrong


def test_a_piece_between_two_points_found_and_followed_by_its_disc_where_inks_do_not_tell(shared_data) -> None:
    """Hard game 211, on a board whose empty points read like pieces: the rook i9-h9 left between h9 and g9 (move
    25; the outline came at both, 0.19 and 0.21, and the move was lost), then went on to h5 (move 37: the pair's
    ink did not fall). Hard game 238, move 34: the rook between a3 and b3 went to a1, red ink reading as none. The
    discs tell both: one came half-way between two points, and one left the pair and came at one point."""
    res = _first_moves(shared_data, 211, 38, 23)
    assert res.followed == 38 and res.misaligned_reported == res.misaligned_truth == 1, res.wrong
    inferred, wrong = _first_moves_inferred(shared_data, 238, 35, 22)
    assert inferred == 35, wrong


def test_a_piece_moved_to_its_neighbour_and_left_half_way_back_names_both(shared_data) -> None:
    """Hard game 20, move 32: the rook a3-b3 left half-way between the two; a3 still read 0.90 occupied and b3
    0.42, and the move was reported as made, the piece between two points not at all. Its disc stands half-way."""
    res = _first_moves(shared_data, 20, 40, 30, until=34)  # (to two moves after it)
    assert res.followed == 34 and res.misaligned_reported == res.misaligned_truth == 1, res.wrong


def test_a_piece_left_half_way_back_whose_old_point_reads_another_colour_names_both(shared_data) -> None:
    """Hard game 256, move 34: the red pawn g4-g5 left half-way between the two; the half left on g4 read dark ink,
    a colour that changed unexplained, and the piece between two points went unreported (the game was lost from
    the next move). Its disc stands half-way towards g5."""
    res = _first_moves(shared_data, 256, 36, 32)
    assert res.followed == 36 and res.misaligned_reported == res.misaligned_truth == 1, res.wrong


def test_of_two_points_showing_one_pieces_ink_it_stands_where_its_outline_does(shared_data) -> None:
    """Hard game 214, move 22: the rook g7-g6 set down towards g5; g6 changed 0.30 and g5 0.12, and the ink peaks,
    less the board's median parallax, leant the wrong way: g7-g5 was inferred, a silent wrong move. The rook's
    round outline stands within 0.3 of g6."""
    res = _first_moves(shared_data, 214, 24, 20)
    assert res.followed == 24 and not res.wrong, res.wrong


def test_a_piece_half_way_whose_ink_leans_part_way_and_a_rook_leaving_a_corner(shared_data) -> None:
    """Hard game 481 (40 moves; a set never looked at before, 8/40): move 9, the cannon b2-b6 left between b6 and c6,
    where it cannot go; b6 changed under the level and the ink peak lay only 0.41 over towards it: its disc half-way
    names both points. Move 14, the rook a9-a8: the corner a9 kept the frame's ink, so the piece that left was known
    only after the rules for two arrivals had made a8 and b8 (the rook's ink leaning, changed under the level) both
    unsure, and the rook's letter was lost."""
    res = _first_moves(shared_data, 481, 40, 6, until=16)  # (to two moves after the second case)
    assert res.followed == 16 and not res.wrong, res.wrong
    assert (res.misaligned_truth, res.misaligned_reported) == (1, 1)


def test_a_pair_whose_piece_left_empties_both_points(shared_data) -> None:
    """Hard game 508, move 9: the rook between h0 and h1 went to h6; h1 changed 0.085 under the level, its ink gone,
    and stayed unsure: two moves on, the rook h6-g6 (whose ink does not read) was inferred as h6-h1, a silent wrong
    move."""
    res = _first_moves(shared_data, 508, 12, 2)
    assert res.followed == 12 and not res.wrong, res.wrong


def test_no_disc_came_where_the_view_did_not_change(shared_data) -> None:
    """Hard game 496, move 23, on a heavily blurred board: the cannon e6 took a6, which changed under half the level.
    The circle score beside e6 rose on the blurred view where the point changed no more than the board's median, and
    the move was inferred as e6-e5: a silent wrong move. Not now (the move is still not found: the arbiter is
    called)."""
    res = _first_moves(shared_data, 496, 40, 21, until=25)  # (to two moves after it)
    assert res.followed == 22, res.wrong
    assert not [w for w in res.wrong if "inferred" in w], res.wrong


def test_a_capture_under_a_change_of_light(shared_data) -> None:
    """Hard game 507, move 27: the black cannon b3 took e3 while the light changed the whole board: the level rose
    to 0.116, e3 changed 0.115 (its ink turned from surely red to surely dark) and b3 0.076 (its ink gone). Nothing
    changed over the level, and the game was lost from there."""
    res = _first_moves(shared_data, 507, 28, 25)
    assert res.followed == 28 and not res.wrong, res.wrong


def test_a_cannon_moving_beside_a_piece_between_two_points(shared_data) -> None:
    """Hard game 215, move 20: the black cannon h3-g3 beside the red pawn left between g3 and g4. reach counted the
    unsure g3 a piece the cannon could neither move onto nor take, so g3 was no arrival; g4 was, and the cannon was
    read as having taken on g4."""
    res = _first_moves(shared_data, 215, 21)
    assert res.inferred_ok == 21 and not res.wrong, res.wrong


@pytest.mark.slow  # 30-40 s of rendered game: run with -m slow (the suite stays under 20 minutes)
def test_specks_of_noise_on_a_board_in_shadow_do_not_keep_it_moving(shared_data, monkeypatch) -> None:
    """Hard game 481 rendered for 25 moves, move 12: after the horse c7-b5 the board stood still for 2.2 s, but the
    camera's noise, amplified where the board lies in shadow, left specks of change in every frame that survived
    the opening and added up to 0.3-0.7 % of the view: the board never counted as still, and the horse's move fell
    into one still board with the next (two moves, no single one inferred). Only parts of a tenth of a spacing
    squared count as the board moving."""

    res = _first_moves(shared_data, 481, 25)
    assert res.inferred_ok == 25 and not res.wrong, res.wrong
    patch_tracker(monkeypatch, "refit", _no_refit)  # the rule alone: the move fit off
    patch_tracker(monkeypatch, "_blobs_moved", lambda moved, *_: True)  # every speck counts
    assert _first_moves(shared_data, 481, 25).inferred_ok < 25


def test_a_piece_whose_ink_washes_out_under_the_hand_is_not_lifted(shared_data) -> None:
    """Hard game 503, first 30 moves: on a board whose inks read faintly, pieces well clear of the hand lost their
    ink for two frames running while it moved, and five were reported lifted though none was (one true lift). A
    lifted piece's round outline goes with it (it fell by 0.51-0.67 on the lifts looked at); theirs stayed."""
    res = _first_moves(shared_data, 503, 30)
    assert res.inferred_ok == 30, res.wrong
    assert res.false_lifts == 0 and res.lifts_reported >= 1, (res.false_lifts, res.lifts_reported)


@pytest.mark.slow  # 30-40 s of rendered game: run with -m slow (the suite stays under 20 minutes)
def test_a_piece_whose_ink_shifted_under_a_change_of_light_was_not_touched(shared_data) -> None:
    """Hard game 516: a change of light over the board shifted the ink peaks of the black cannon b7 (move 10) and
    of the horse h9 (move 26), and each was reported touched, though no hand came near (a touch is evidence for
    5.1: the touched piece must be moved). A touched piece's round outline moves with it (0.13-0.22 of a spacing
    on the touches looked at); theirs moved 0.01 and 0.03. The game's three true touches are still reported."""
    res = _first_moves(shared_data, 516, 40)
    assert res.inferred_ok == 40, res.wrong
    assert res.false_touches == 0 and res.nudges_reported >= 3, (res.false_touches, res.nudges_reported)


def test_a_piece_half_way_towards_a_neighbour_that_reads_under_half_a_piece(shared_data) -> None:
    """Hard game 270, move 22: the cannon b7-e7 left between e7 and f7. f7 changed 0.10 but read only 0.30 occupied,
    and the ink peaks, less the board's median parallax (0.28 of a spacing across), did not agree on a piece
    half-way: it was reported on e7 and the pair went unreported. Its round outline stands half-way."""
    res = _first_moves(shared_data, 270, 23, 19)
    assert res.followed == 23 and not res.wrong, res.wrong
    assert (res.misaligned_truth, res.misaligned_reported) == (1, 1)


@pytest.mark.slow  # 30-40 s of rendered game: run with -m slow (the suite stays under 20 minutes)
def test_a_pair_that_moved_on_by_the_river_and_a_cannon_taking_a_cannon(shared_data) -> None:
    """Hard game 265 (30/40 at dde3664): move 31, the rook left between f5 and g5 went to c5; g5, by the river's
    characters, read 0.86 occupied by a dark piece before and after, and was left a black piece: no round outline
    stands there, and a pair is one piece. Move 34, the black cannon e7 took the red cannon e4 on a board where red
    ink reads dark: e4 changed 0.034 at the level 0.09, its ink as before; the only piece the cannon could take, a
    disc still standing there."""
    res = _first_moves(shared_data, 265, 40)
    assert res.inferred_ok == 40 and not res.wrong, res.wrong


def test_a_touched_piece_whose_ink_reads_the_other_colour_keeps_its_letter(shared_data) -> None:
    """Hard game 406 (held out; 6/40 until now): after move 2 the red cannon h2 was touched and its ink read surely
    dark from then on; it was left unsure and its letter lost, and when it moved (h2-i2, move 7) it was read as a
    black piece there. Nothing else changed and its disc still stood on h2: no piece can have come there, it is the
    same cannon."""
    res = _first_moves(shared_data, 406, 8)
    assert res.inferred_ok == 8 and not res.wrong, res.wrong


@pytest.mark.slow  # 30-40 s of rendered game: run with -m slow (the suite stays under 20 minutes)
def test_a_piece_gone_from_an_edge_point_that_still_reads_like_a_piece(shared_data) -> None:
    """Hard game 421 (held out; 2/40 until now), move 3: the horse h0-g2; h0, on the edge, still read 0.97 occupied
    by the frame's ink and changed 0.088 at the level 0.09: no source was found, g2 was left unsure, and the game
    was lost from there. The one piece that could go to g2, whose point changed at half the level, has lost its round
    outline."""
    res = _first_moves(shared_data, 421, 40)
    assert res.inferred_ok == 40 and not res.wrong, res.wrong


@pytest.mark.slow  # 30-40 s of rendered game: run with -m slow (the suite stays under 20 minutes)
def test_a_piece_that_took_and_was_left_half_way_beyond_the_prey(shared_data) -> None:
    """Hard game 417 (held out; 20/40 until now), move 21: the cannon e2 took the pawn e5 and was left between e5 and
    f5; e5 read 0.50 occupied and f5 0.98, so two pieces' points seemed emptied and an empty one filled: e5 was read
    empty, f5 unsure, and the game was lost from there. The taker's round outline stands half-way. And hard game 408
    (held out; 37/40), move 29: the cannon a2 took a6 and was left towards a5, which read 0.77 occupied while a6
    still read 0.90: read as the cannon going to a5, where it cannot go."""
    for game in (417, 408):
        res = _first_moves(shared_data, game, 40)
        assert res.inferred_ok == 40 and not res.wrong, (game, res.wrong)
        assert res.misaligned_reported == res.misaligned_truth >= 1, game


@pytest.mark.slow  # 30-40 s of rendered game: run with -m slow (the suite stays under 20 minutes)
def test_no_arrival_at_the_lower_level_beside_a_point_that_changed_far_more(shared_data) -> None:
    """Hard game 541 (a set never looked at before), move 28: the cannon left between e2 and f2 went to h2, whose red
    ink reads as none on that board. Those three points changed over the level, but none counted as a piece leaving
    or arriving, and the board was looked at again at 0.6 of the level, where i2 beside h2 (0.059, h2 0.160) read as
    the arrival: e2-i2 was inferred, a silent wrong move. (Skipping the lower level wherever an unsure point changed
    lost held-out game 413, whose cannon between b3 and b4 took g4 at 0.082, at 0.09 the level: 40 -> 20.)"""
    res = _first_moves(shared_data, 541, 40)
    assert res.inferred_ok >= 29 and not [w for w in res.wrong if "inferred" in w], res.wrong


def test_a_piece_between_two_points_set_onto_one_as_another_piece_comes_to_the_other(shared_data) -> None:
    """Hard game 573, move 4: the red horse h0-i2 left between i2 and i1; move 8, the rook i0-i1 came while the
    horse was set onto i2. Both points showed a piece: both were left unsure and the horse's letter dropped (the
    points changed), and on this board, whose red ink reads dark, the rook leaving i1 two moves on was read black."""
    res = _first_moves(shared_data, 573, 11, 2)
    assert res.followed == 11 and not res.wrong, res.wrong
    assert (res.misaligned_truth, res.misaligned_reported) == (1, 1)


def test_a_move_under_full_glare_told_by_the_outlines(shared_data, monkeypatch) -> None:
    """Hard game 609 (scene 1609), move 2: the black cannon b7-c7 on a board in full glare, the characters washed
    out: b7 changed 0.022 and c7 0.047 at the level 0.09, so nothing changed at either level and the move was never
    seen (the game lost all but one move). The cannon's round outline fell 0.45 at b7 and rose 0.58 at c7."""
    from gamecheck import load_games

    from xqarb.referee.rules import Move, Position
    from xqarb.vision.render import render_game

    fen, moves = load_games(shared_data / "games" / "ccpd_dev.jsonl", 610, 40)[609]
    assert moves[1] == "b7c7"
    before = Position.from_fen(fen).play(Move.parse(moves[0]))
    after = before.play(Move.parse(moves[1])).squares()
    frames, fit, still_after = [], None, 0
    for frame in render_game(fen, moves, 1609, difficulty="hard", misplace_rate=0.05, nudge_rate=0.03):
        # every frame from the first move made until the board has been still for six frames after the second
        fit = fit or _given_fit(frame.truth)
        if frame.truth.ply >= 1:
            frames.append(frame.image)
        still_after += frame.truth.ply == 2 and not frame.truth.hand_present
        if still_after >= 6:
            break

    def snapshots() -> list[str]:
        tracker = Tracker()
        state, seen = tracker.initial(fit, start=before.squares()), []
        for k, img in enumerate(frames):
            state, obs = tracker.step(state, img, k * STEP, f"{k:064x}")
            seen.extend(o.fields["squares"] for o in obs if o.type == "BoardStable")
        return seen

    assert snapshots()[-1] == after
    patch_tracker(monkeypatch, "refit", _no_refit)  # the rule alone: the move fit off
    patch_tracker(monkeypatch, "_outline_left", lambda *a, **k: None)
    assert snapshots()[-1] == before.squares()


def test_a_pale_board_whose_pieces_ink_reads_faintly_followed_by_the_outlines(shared_data) -> None:
    """Hard game 615, on a pale board whose red inks read faintly. Move 7, the pawn c3-c4: c3 kept 0.18 of a piece's
    ink and changed more than c4, so the pawn was read as touched and the game lost from there; its outline went from
    c3 and one stands on c4. Move 9, the rook h0-h6 left between h6 and h5: h5 changed most, and the rook was read as
    gone to h5 (a silent wrong move); its outline stands half-way towards h6."""
    res = _first_moves(shared_data, 615, 10, 4)
    assert res.followed == 10 and not res.wrong, res.wrong
    assert (res.misaligned_truth, res.misaligned_reported, res.misaligned_false) == (1, 1, 0)


def test_a_piece_set_down_in_glare_is_where_the_hand_set_it(shared_data) -> None:
    """Hard game 820 (scene 1820), ply 1: the black cannon b7-d7 set down under a glare spot. b7 lost its ink, but
    no point the cannon could go to changed clearly more than the others (d7 0.069 at the level 0.13, a7 0.056, b4
    0.052) and d7 reads no ink: the cannon was read gone from the board, and 39 of the game's 40 moves were lost.
    The hand's fingertips went on from b7, where they took the cannon up, two files across before they drew back:
    d7."""
    from xqarb.referee.rules import Move

    fit, position, moves, frames, truths = _rendered_stretch(shared_data, "ccpd_dev.jsonl", 820, 1820, 1, 22, 42)
    assert moves[1] == "b7d7" and truths[-1].ply == 2 and not truths[-1].hand_present
    seen = _observed(fit, position.squares(), frames)
    assert [o.fields["squares"] for o in seen if o.type == "BoardStable"][-1] == \
        position.play(Move.parse("b7d7")).squares()


def test_no_capture_by_a_rook_through_a_piece(shared_data) -> None:
    """Hard game 820 (scene 1820), ply 32: the red rook d4-d5 in glare. d5 read no piece; the black advisor d9, behind
    the black cannon on d7, read 0.86 red and changed 0.070 at the level 0.127: read as the rook taking it, over
    the cannon."""
    from xqarb.referee.rules import Move

    fit, position, moves, frames, truths = _rendered_stretch(shared_data, "ccpd_dev.jsonl", 820, 1820, 32, 657, 680)
    assert moves[32] == "d4d5" and truths[-1].ply == 33 and not truths[-1].hand_present
    seen = _observed(fit, position.squares(), frames)
    after = [o.fields["squares"] for o in seen if o.type == "BoardStable"][-1]
    assert after[point_index("d9")] == "a"
    assert after == position.play(Move.parse("d4d5")).squares()


@pytest.mark.parametrize(("games", "game", "seed", "plies", "first", "last", "move", "pair"), [
    # the rook's disc 0.48 off d8; from d7 a stronger circle of the board's print lay towards d6
    ("liu_dahua_iccs.jsonl", 271, 7271, 9, 163, 190, "i8d8", ("d7", "d8")),
    # the horse's ink peak at h4 leant only 0.13 towards h5, h5's 0.28 back towards h4; the disc 0.47 and 0.54 off
    ("liu_dahua_iccs.jsonl", 321, 7321, 30, 581, 616, "i2h4", ("h4", "h5")),
    # the cannon took e4 and neither point's ink read: both pieces' points read empty
    ("liu_dahua_iccs.jsonl", 377, 7377, 27, 514, 555, "e8e4", ("e4", "e5")),
    # d4 changed 0.025 (a disc as light as the wood) while its ink rose 0.001 -> 0.100
    ("ccpd_dev.jsonl", 966, 1966, 6, 119, 148, "c3c4", ("c4", "d4")),
    # the horse took the rook d5 and was left towards c5; its disc 0.78 as plain as the standing pieces'
    ("ccpd_dev.jsonl", 820, 1820, 34, 699, 736, "b4d5", ("c5", "d5")),
])
def test_a_piece_left_half_way_is_reported_between_its_two_points(shared_data, games, game, seed, plies, first,
                                                                     last, move, pair) -> None:
    """5.10: every piece left half-way between two points is reported with both (PieceMisaligned), however the
    reading of its ink fails. Five pieces of the 480-game run of 2026-12-04 that were read as set down on one point
    (or, liu 377, as two pieces gone): from a true calibration and the position before the move, the move's still
    board reports the pair."""
    fit, position, moves, frames, truths = _rendered_stretch(shared_data, games, game, seed, plies, first, last)
    assert moves[plies] == move and tuple(sorted(truths[-1].misaligned)) == pair
    assert not truths[0].hand_present
    seen = _observed(fit, position.squares(), frames)
    reported = [tuple(sorted(o.fields["points"])) for o in seen if o.type == "PieceMisaligned"]
    assert reported == [pair]


def test_no_lift_where_a_palm_hides_the_point(shared_data) -> None:
    """A piece lifted leaves its point showing the board's printed lines; a palm or a forearm that the hand's mask
    missed hides the piece and the lines alike. Hard game 974 (scene 1974), ply 11: a palm over d8 as the cannon c6
    was lifted, skin on yellow wood changing the view too little to be masked as the hand, reported as the piece on
    d8 lifted in the 480-game run of 2026-12-04. (Liu game 57's forearm over g5, the other such lift of that run,
    shows only in the whole game: gamecheck there gives no false lift now.)"""
    fit, position, moves, frames, truths = _rendered_stretch(shared_data, "ccpd_dev.jsonl", 974, 1974, 10, 190, 226)
    truly, covered = {t.lifted for t in truths if t.lifted}, "d8"
    assert covered not in truly and moves[11] == "c6c5"

    def lifted(config: TrackerConfig) -> list[str]:
        tracker = Tracker(config)
        state, seen = tracker.initial(fit, start=position.squares()), []
        for k, img in enumerate(frames):
            state, obs = tracker.step(state, img, k * STEP, f"{k:064x}")
            seen.extend(obs)
        return [o.fields["point"] for o in seen if o.type == "PieceLifted"]

    # (the move before read at the full still time, as when the case was found: read a frame earlier by the quick
    # still board, against that still board d8 under the palm reads as no lift even without the lines)
    full = TrackerConfig(quick_stable_us=TrackerConfig().stable_us)
    assert covered in lifted(replace(full, lift_lines=0.0))  # the lines not looked at: the false lift of the run
    assert set(lifted(full)) <= truly
    assert set(lifted(TrackerConfig())) <= truly


def test_printed_lines_show_on_empty_points_and_not_under_pieces() -> None:
    """`_line_contrast`: the wood beside the printed lines less the lines, where a lifted piece leaves the point
    bare: plain on the empty points of a rendered board, about none under a piece."""
    from xqarb.vision.occupancy import warp_board
    from xqarb.vision.render import render_position
    from xqarb.vision.tracker import _line_contrast

    for seed in (3, 11):
        shot = render_position(START_SQUARES, _scene(seed))
        grey = cv2.cvtColor(warp_board(shot.image, _given_fit(shot).homography).bgr, cv2.COLOR_BGR2GRAY)
        grey = grey.astype(np.float32)
        empty = [_line_contrast(grey, i) for i, c in enumerate(START_SQUARES) if c == "."]
        pieces = [_line_contrast(grey, i) for i, c in enumerate(START_SQUARES) if c != "."]
        assert float(np.median(empty)) > 10.0, seed
        assert float(np.median(pieces)) < 0.35 * float(np.median(empty)), (seed, np.median(pieces))


def test_lines_count_as_hidden_only_against_enough_empty_points() -> None:
    """`_lines_hidden`: a lift needs its point's printed lines at least `share` as plain as the median empty point
    clear of the hand; with fewer than five such points (a hand over nearly the whole board) there is nothing to
    judge by, and a lift is not dropped for it, whatever the point's own contrast (even below 0: glare)."""
    from xqarb.vision.tracker import _lines_hidden

    bare = [20.0, 22.0, 18.0, 25.0, 21.0]
    assert _lines_hidden(0.5, bare, 0.35)  # a palm: no lines at all
    assert not _lines_hidden(0.35 * 21.0 + 0.01, bare, 0.35)
    assert _lines_hidden(0.35 * 21.0 - 0.01, bare, 0.35)
    assert not _lines_hidden(-3.0, bare[:4], 0.35)
    assert not _lines_hidden(-3.0, [], 0.35)


def test_a_piece_on_its_point_is_not_reported_half_way_from_one_side(shared_data) -> None:
    """A disc seen half-way from one point alone may stand on the other (set down a little off it) or be another
    circle (the board's print): a pair needs it half-way seen from both points or found at their midpoint. Hard game
    984 (scene 1984), ply 14: the horse b9-d8, its ink not read; from d8 a faint circle 0.55 towards c8 (0.29
    across), none seen from c8: reported between d8 and c8 in the 480-game run of 2026-12-04, now read as set down
    on d8. (That run's other such pair, liu game 192, ply 23, the rook a0-a1 0.21 off a1 towards a2, shows only in
    the whole game: gamecheck there reports no pair now.)"""
    from xqarb.referee.rules import Move

    fit, position, moves, frames, truths = _rendered_stretch(shared_data, "ccpd_dev.jsonl", 984, 1984, 13, 247, 283)
    move = "b9d8"
    assert moves[13] == move and not any(t.misaligned for t in truths)
    seen = _observed(fit, position.squares(), frames)
    assert [o for o in seen if o.type == "PieceMisaligned"] == []
    stable = [o.fields["squares"] for o in seen if o.type == "BoardStable"]
    assert stable[-1] == position.play(Move.parse(move)).squares()


def test_blobs_are_labelled_as_opencvs_default_labelling_labels_them() -> None:
    """`_components` (Grana's labelling, three times faster) gives the very labels and stats of
    `cv2.connectedComponentsWithStats` (8-connected): on masks of specks, of opened changes and of grown blobs."""
    from xqarb.vision.tracker import _components

    rng = np.random.default_rng(4)
    for trial in range(120):
        m = (rng.random((336, 304)) < rng.uniform(0.001, 0.6)).astype(np.uint8)
        if trial % 2:
            m = cv2.morphologyEx(m, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        if trial % 3 == 0:
            m = cv2.dilate(m, np.ones((5, 5), np.uint8))
        n, labels, stats, _ = cv2.connectedComponentsWithStats(m)
        got = _components(m)
        assert got[0] == n and np.array_equal(got[1], labels) and np.array_equal(got[2], stats), trial


def test_the_quick_reading_blurs_the_ink_at_the_points_as_the_whole_view_blur_does() -> None:
    """`_blur_at_points`, the lift check's ink density taken at the 90 points alone, is the whole view's Gaussian
    blur (OpenCV's kernel width, its reflected edges) sampled there, to float32's precision: on random ink, on ink
    along the view's edges, and on a rendered board's."""
    from xqarb.vision.occupancy import POINTS_PX, _blur_at_points, _ink, warp_board
    from xqarb.vision.render import render_position

    rng = np.random.default_rng(2)
    edges = np.zeros((336, 304), np.float32)
    edges[:6], edges[:, -5:] = 1.0, 0.5
    shot = render_position(START_SQUARES, _scene(7))
    rendered = _ink(warp_board(shot.image, _given_fit(shot).homography).bgr)[0]
    for img in (rng.random((336, 304)).astype(np.float32), edges, rendered.astype(np.float32)):
        for sigma in (6.4, 3.0):
            whole = cv2.GaussianBlur(img, (0, 0), sigma)[POINTS_PX[:, 1], POINTS_PX[:, 0]]
            at = _blur_at_points(img, sigma)
            assert at.shape == (90,) and np.abs(at - whole).max() <= 1e-6 * max(float(whole.max()), 1e-3)


def test_a_hands_mask_is_the_hull_of_all_its_blobs_pixels() -> None:
    """`_hand_mask` fills each hand-sized blob's convex hull from its outline: the same mask as the hull of every
    pixel of the blob (what it did before, twelve times slower), on changes of many shapes, some over the edge."""
    from xqarb.vision.tracker import _changed_mask, _hand_mask, _touches_edge

    cfg = TrackerConfig()
    rng = np.random.default_rng(6)
    kept = 0
    for trial in range(60):
        m = np.zeros((336, 304), np.uint8)
        for _ in range(int(rng.integers(1, 5))):
            pts = rng.integers(-40, [344, 376], size=(int(rng.integers(3, 9)), 2)).astype(np.int32)
            cv2.fillPoly(m, [pts], 1)
        m &= (rng.random(m.shape) < rng.uniform(0.4, 1.0)).astype(np.uint8)
        changed = m.astype(np.float32) * (2.0 * cfg.change_level)
        got = _hand_mask(changed, cfg)
        # as it was: the blobs joined and kept by the same rule, each filled as the hull of all its pixels
        joined = cv2.morphologyEx(_changed_mask(changed, cfg), cv2.MORPH_CLOSE,
                                  np.ones((round(0.2 * 32) | 1,) * 2, np.uint8))
        n, labels, stats, _ = cv2.connectedComponentsWithStats(joined)
        want = np.zeros_like(joined)
        for k in range(1, n):
            area = stats[k, cv2.CC_STAT_AREA]
            if area > cfg.hand_cells * 32 * 32 or (_touches_edge(stats[k], *joined.shape) and area > 1.1 * 32 * 32):
                ys, xs = np.nonzero(labels == k)
                cv2.fillPoly(want, [cv2.convexHull(np.column_stack([xs, ys]).astype(np.int32))], 1)
                kept += 1
        assert np.array_equal(got, want), trial
    assert kept >= 30  # the check compared hands (45 blobs kept of these shapes)
