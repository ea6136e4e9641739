"""Rendered games through the tracker: do the BoardStable snapshots give the game's moves?

The referee's inference, as the rules core allows it: a snapshot that differs from the known position is matched
against the position after each legal move (`X` / `x` match any red / black piece, `?` anything); exactly one match
is the move. A piece left between two points (5.10) leaves `?` on both candidates: the opponent designates, so the
check takes the game's move when it is among the matches and PieceMisaligned named its two points. A snapshot that
differs only by `?` shows a move only where some `?` is new (the point was not unsure on the last snapshot): a
point left unsure and seen again is no move.

Run: `python tests/vision/gamecheck.py [--start 0] --games 200 --moves 40 [--difficulty hard] [--truth-fit]
[--causes] [--adopt moves|restored] [--hard OPTIONS]` (prints the figures; `--start K` begins at the K-th game, scene
seed `--seed0` + K, so that games tuned on and games held out can be run apart). `--truth-fit` calibrates each board
with the renderer's true corners, so that the figures are the tracker's own, board finding aside; `--causes`
prints, for every snapshot that fits no move, how it differs from the true board (empty / occupied, colour, type,
'?', a hand in view, a snapshot missing between two moves); `--adopt` feeds the accepted positions back to the
tracker as the service does (the referee's MoveMade, and its AttentionNeeded with the position it holds where a
snapshot fits no move; with `restored` also an arbiter's restored position).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from xqarb.vision.render import FrameTruth  # noqa: E402  (after the path set-up, for running as a script)


def matches(squares: str, board: str) -> bool:
    for s, b in zip(squares, board, strict=True):
        if s == "?":
            continue
        if s == "X":
            if not b.isupper():
                return False
        elif s == "x":
            if not b.islower():
                return False
        elif s != b:
            return False
    return True


@dataclass
class GameResult:
    moves: int = 0  # moves of the game played in the video
    inferred_ok: int = 0
    given: int = 0  # moves before the video (`from_ply`): their position given to the tracker as the game's start
    wrong: list[str] = field(default_factory=list)
    causes: list[list[str]] = field(default_factory=list)  # per failed snapshot: what differs from the truth
    misaligned_truth: int = 0
    misaligned_reported: int = 0
    misaligned_false: int = 0  # pairs reported where no piece stood between those two points
    misaligned_missed: list[str] = field(default_factory=list)  # "ply N a/b": pieces half-way never reported
    misaligned_false_pairs: list[str] = field(default_factory=list)  # "ply N a/b": pairs reported where none stood
    false_lifts: int = 0
    captured_lifts: int = 0  # of those, the taken piece lifted off the board by the taker's hand (a real lift)
    lifts_reported: int = 0
    nudges_truth: int = 0
    nudges_reported: int = 0
    false_touches: int = 0  # PieceNudged where nothing was touched since the last snapshot (no nudge, no move)
    false_touched: list[str] = field(default_factory=list)  # "ply N point" of each
    false_lifted: list[str] = field(default_factory=list)  # "ply N point" of each false lift
    restores: int = 0  # positions an arbiter restored (--adopt restored) where a snapshot fitted nothing
    # the points the tracker said at calibration its camera does not see (CameraFault, tops.unseen_reason): such a
    # camera cannot follow a game there, and the game is counted apart ("camera misses points")
    unseen_reported: list[str] = field(default_factory=list)
    # the points whose disc on the board's plane lies mostly outside the first frame (the renderer's true corners):
    # a floor for what the tracker must report (tall pieces' tops, leaning out, may leave the picture too)
    unseen_truth: list[str] = field(default_factory=list)
    wrong_inferred: int = 0  # moves inferred that are not the game's (a move invented, or the wrong one)
    frames: int = 0
    seconds: float = 0.0

    @property
    def followed(self) -> int:
        """The game's moves the check holds at the end: those given before the video, and those inferred."""
        return self.given + self.inferred_ok


def diagnose(squares: str, truth: FrameTruth, known: str) -> list[str]:
    """Why a snapshot is not the true board, point by point: the categories of its errors (with the points).

    `truth` is the renderer's truth of the frame the snapshot came from, `known` the position the check had
    before it (to tell the points the move touched from the rest)."""
    from xqarb.vision.grid import point_name

    out = []
    if truth.hand_present:
        out.append("hand in view")
    half = set(truth.misaligned or ())
    for i, (s, t) in enumerate(zip(squares, truth.squares, strict=True)):
        name = point_name(i)
        if s == t or (s == "X" and t.isupper()) or (s == "x" and t.islower()):
            continue
        if name in half and s == "?":
            continue  # 5.10: both candidates unsure is what is asked for
        moved = "moved" if known[i] != t else "still"
        if s == "?":
            kind = "unsure"
        elif s == ".":
            kind = "empty read, piece there"
        elif t == ".":
            kind = "piece read, empty"
        elif s.isupper() != t.isupper():
            kind = "colour"
        else:
            kind = "type"
        out.append(f"{kind} ({moved}) {name} {s}/{t}")
    return out


def check_game(start_fen: str, moves: list[str], seed: int, difficulty: str = "hard", fps: float = 4.0,
               misplace_rate: float = 0.05, nudge_rate: float = 0.03, truth_fit: bool = False,
               referee: bool = False, adopt: str = "none", adopt_lag: int = 2,
               movefit: bool = True, from_ply: int = 0, stable_us: int | None = None, hard: str | None = None,
               piece_crops: str | None = None, until_ply: int | None = None) -> GameResult:
    """One rendered game through the tracker. `truth_fit`: calibrate the tracker with the renderer's true corners
    (as an operator would by hand) instead of letting it find the board, so that the figures are the tracker's own.
    `referee`: judge each snapshot with the referee's own inference (`xqarb.referee.inference.infer`), which is more
    lenient than this check's matching in two ways: a snapshot that contradicts the position nowhere ('?' or a
    different type of the right colour are no contradiction) is no move, and a type read wrongly does not stop a
    move being found.
    `adopt`: give the tracker the positions the check accepted, as the service gives it the referee's MoveMade
    ("moves"); "restored" also models the arbiter called by the referee's AttentionNeeded: the true position where
    the check resynchronised, and where no later true position fits the snapshot, the position standing on the
    board (hand away) are given as an arbiter's PositionRestored. Each reaches the tracker `adopt_lag` frames
    later (the round trip through Kafka and the referee).
    `movefit`: the tracker with its move fit (as the service runs it), or its rules alone.
    `stable_us`: the still-board time (TrackerConfig.stable_us) where not the default.
    `hard`: the renderer's hard options (`render_hard.parse`: a preset's name or option names separated by commas),
    drawn for `seed` over the scene of `difficulty`; `piece_crops` the real crops' split folder for "real tops".
    Without it the videos are the plain `render_game` ones, frame for frame.
    `from_ply`: the video from the board left still after that many moves (`render_game`'s `from_ply`: the same
    frames as the whole video's from there), the tracker told that position as the game's start
    (`Tracker.expect_start`, as the service does with a GameStarted's start position); the moves before count as
    `given`, and the figures are the video's from there.
    `until_ply`: the video up to the frame before the one where the move after `until_ply` moves is set down (the
    board's still time after the `until_ply`-th move and the next hand's coming drawn, the rest not): the figures are
    the whole video's over its first `until_ply` moves (the video, the scene and the tracker's frames up to there
    are the whole game's), at the cost of those moves alone.
    """
    from xqarb.referee.inference import infer
    from xqarb.referee.rules import Move, Position
    from xqarb.vision.board import fit_from_corners
    from xqarb.vision.grid import point_name
    from xqarb.vision.render import render_game
    from xqarb.vision.tracker import Tracker

    end = len(moves) if until_ply is None else until_ply
    if not from_ply <= end <= len(moves):
        raise ValueError(f"until_ply must be within {from_ply}..{len(moves)}, not {until_ply}")
    res = GameResult(given=from_ply)
    t0 = time.time()
    from xqarb.vision.settings import TrackerConfig

    config = TrackerConfig() if stable_us is None else TrackerConfig(stable_us=stable_us)
    tracker = Tracker(config) if movefit else Tracker(config, move_model=None)
    pos = Position.from_fen(start_fen)
    truth_positions = [pos]
    for mv in moves:
        truth_positions.append(truth_positions[-1].play(Move.parse(mv)))
    pos, ply = truth_positions[from_ply], from_ply
    state = tracker.expect_start(tracker.initial(), pos.squares() if from_ply else None)
    first = True
    pending_designation: list[Move] = []
    truth_misaligned: dict[tuple[str, str], int] = {}  # each pair a piece stood half-way between: its ply
    reported_misaligned: dict[tuple[str, str], int] = {}  # each pair reported: the ply it was first reported at
    lifted_truth: set[str] = set()
    captured_truth: set[str] = set()  # points whose taken piece the hand lifted off the board
    # the points touched since the last BoardStable: nudged, or changed by a move, or a piece half-way
    touched: set[str] = set()
    last_stable_truth: str | None = None
    # what the rest of the system tells the tracker, on its way: (due frame, kind, squares or FEN); kind "move" (a
    # MoveMade's position), "restored" (an arbiter's), "attention" (the referee could not follow a snapshot: its
    # AttentionNeeded, with the FEN it holds)
    held: list[tuple[int, str, str]] = []
    last_sq: str | None = None  # the last BoardStable's squares
    scene = None
    if hard is not None:
        from xqarb.vision.render import random_scene
        from xqarb.vision.render_hard import harden, parse

        scene = harden(random_scene(seed, difficulty=difficulty), parse(hard, seed, crops=piece_crops))
    for frame in render_game(start_fen, moves, seed, fps=fps, difficulty=difficulty, misplace_rate=misplace_rate,
                             nudge_rate=nudge_rate, from_ply=from_ply, scene=scene):
        tr = frame.truth
        if tr.ply > end:
            break  # the move after `until_ply` set down: the rest of the video is not looked at
        res.frames += 1
        if tr.misaligned:
            truth_misaligned.setdefault(tuple(sorted(tr.misaligned)), tr.ply)
        if tr.lifted:
            lifted_truth.add(tr.lifted)
        if tr.event == "capture_removed" and tr.ply < len(moves):
            captured_truth.add(moves[tr.ply][2:4])
        if tr.event == "nudge" and tr.nudged:
            res.nudges_truth += 1
        if tr.nudged:
            touched.add(tr.nudged)
        if tr.misaligned:
            touched.update(tr.misaligned)
        if last_stable_truth is not None:
            touched.update(point_name(i) for i, (a, b) in enumerate(zip(last_stable_truth, tr.squares, strict=True))
                           if a != b)
        if first:
            res.unseen_truth = _out_of_picture(tr.corners, frame.image.shape)
        if first and truth_fit:
            state = tracker.expect_start(tracker.initial(fit_from_corners(tr.corners, "given", 0.0)),
                                         pos.squares() if from_ply else None)
        first = False
        while held and held[0][0] <= res.frames:
            _, kind, what = held.pop(0)
            if kind == "attention":
                state = tracker.not_followed(state, what)
            else:
                state = tracker.adopt(state, what, restored=kind == "restored")
        state, obs = tracker.step(state, frame.image, frame.t_us)
        for o in obs:
            if o.type == "PieceLifted":
                res.lifts_reported += 1
                if o.fields["point"] not in lifted_truth and o.fields["point"] != tr.nudged:
                    res.false_lifts += 1
                    res.false_lifted.append(f"ply {tr.ply} {o.fields['point']}")
                    res.captured_lifts += o.fields["point"] in captured_truth
            elif o.type == "PieceMisaligned":
                reported_misaligned.setdefault(tuple(sorted(o.fields["points"])), tr.ply)
            elif o.type == "PieceNudged":
                res.nudges_reported += 1
                if o.fields["point"] not in touched:
                    res.false_touches += 1
                    res.false_touched.append(f"ply {tr.ply} {o.fields['point']}")
            elif o.type == "CameraFault" and "does not see" in o.fields["reason"]:
                res.unseen_reported = o.fields["reason"].split("(", 1)[1].split(")", 1)[0].split(", ")
            elif o.type == "BoardStable":
                sq = o.fields["squares"]
                last_stable_truth, touched = tr.squares, set(tr.misaligned or ())
                # (a '?' can show a move only where the point was not unsure on the last still board already: a
                # point left unsure and seen again is no move; a re-seen pair read as the piece moving between them)
                # (nor where the tracker said at calibration that its camera does not see the point: '?' there is
                # what it always reports, never a sign of a move)
                new_doubt = any(c == "?" and (last_sq is None or last_sq[i] != "?")
                                and point_name(i) not in res.unseen_reported for i, c in enumerate(sq))
                last_sq = sq
                if referee:
                    inf = infer(pos, pos.squares(), sq)
                    if inf.kind == "unchanged":
                        continue
                    cands = list(inf.moves) if inf.kind in ("move", "ambiguous") else []
                elif matches(sq, pos.squares()) and not new_doubt:
                    continue
                else:
                    cands = [m for m in pos.legal_moves() if matches(sq, pos.play(m).squares())]
                if len(cands) == 1 or (len(cands) > 1 and "?" in sq and ply < len(moves)
                                       and Move.parse(moves[ply]) in cands):
                    # 5.10: between two points the opponent designates; take the game's move if it is a candidate
                    m = cands[0] if len(cands) == 1 else Move.parse(moves[ply])
                    if ply < len(moves) and str(m) == moves[ply]:
                        res.inferred_ok += 1
                    else:
                        res.wrong.append(f"ply {ply}: inferred {m}, game {moves[ply] if ply < len(moves) else '-'}")
                        res.wrong_inferred += 1
                        res.causes.append(["wrong move inferred", *diagnose(sq, tr, pos.squares())])
                    pos = pos.play(m)
                    ply += 1
                    if adopt != "none":
                        held.append((res.frames + adopt_lag, "move", pos.squares()))
                elif matches(sq, pos.squares()):
                    continue  # only '?' where the known position has pieces: no move
                else:
                    res.wrong.append(f"ply {ply}: snapshot fits {len(cands)} legal moves ({sq})")
                    why = diagnose(sq, tr, pos.squares())
                    if (ply + 2 <= len(moves) and not tr.hand_present
                            and matches(sq, truth_positions[ply + 2].squares())):
                        why.insert(0, "a snapshot missing between two moves")
                    res.causes.append(why)
                    # The referee would call an arbiter (AttentionNeeded), who restores the record: resynchronise
                    # with the game where a later true position fits, so each move is judged on its own.
                    # Where it does not (the snapshot is wrong, not only ahead), the referee's AttentionNeeded with
                    # the position it holds reaches the tracker, which looks again (Tracker.not_followed).
                    held_before, ply_before = len(held), ply
                    for j in range(ply + 1, min(len(moves), ply + 3) + 1):
                        if matches(sq, truth_positions[j].squares()):
                            pos, ply = truth_positions[j], j
                            if adopt == "restored":
                                held.append((res.frames + adopt_lag, "restored", pos.squares()))
                            break
                    else:
                        if adopt == "restored" and not tr.hand_present:
                            # the arbiter looks at the board and restores what stands there (5.8.2): the
                            # tracker takes it as an arbiter's PositionRestored
                            for j in range(ply, min(len(moves), ply + 3) + 1):
                                if truth_positions[j].squares() == tr.squares:
                                    pos, ply = truth_positions[j], j
                                    held.append((res.frames + adopt_lag, "restored", pos.squares()))
                                    res.restores += 1
                                    break
                    # (only where the referee would say so: a snapshot that reads as one illegal move is a foul
                    # ruled with its obligation to replay, not an AttentionNeeded)
                    if (adopt != "none" and ply == ply_before and len(held) == held_before
                            and infer(pos, pos.squares(), sq).kind in ("unexplained", "ambiguous")):
                        held.append((res.frames + adopt_lag, "attention", pos.fen()))
                    pending_designation = cands
        # a lifted piece put back on its point is no move; a snapshot matched nothing is reported above
    del pending_designation
    res.moves = end - from_ply
    res.misaligned_truth = len(truth_misaligned)
    res.misaligned_reported = len(truth_misaligned.keys() & reported_misaligned)
    res.misaligned_false_pairs = [f"ply {k} {a}/{b}" for (a, b), k in reported_misaligned.items()
                                  if (a, b) not in truth_misaligned]
    res.misaligned_false = len(res.misaligned_false_pairs)
    res.misaligned_missed = [f"ply {k} {a}/{b}" for (a, b), k in truth_misaligned.items()
                             if (a, b) not in reported_misaligned]
    res.seconds = time.time() - t0
    if ply < end and not res.wrong:
        res.wrong.append(f"only {ply} of {end} moves inferred")
    return res


def _out_of_picture(corners: tuple[tuple[float, float], ...], shape: tuple[int, ...]) -> list[str]:
    """The points whose disc (on the board's plane, detect.SEEN_RADIUS) is mostly outside a picture of `shape` whose
    grid corners a9, i9, i0, a0 are `corners` (under TrackerConfig.in_view_least of it inside)."""
    import numpy as np

    from xqarb.vision.board import fit_from_corners
    from xqarb.vision.detect import disc_in_view
    from xqarb.vision.grid import POINTS_UV, point_name
    from xqarb.vision.settings import TrackerConfig

    share = disc_in_view(shape, fit_from_corners(corners, "given", 0.0).homography, POINTS_UV)
    return [point_name(int(i)) for i in np.flatnonzero(share < TrackerConfig().in_view_least)]


def load_games(path: Path, n: int, max_moves: int) -> list[tuple[str, list[str]]]:
    out = []
    with path.open() as f:
        for line in f:
            g = json.loads(line)
            if len(g["iccs"]) < 4:
                continue
            out.append((g["start_fen"], g["iccs"][:max_moves]))
            if len(out) >= n:
                break
    return out


def check_hard_window(shared: Path, k: int, from_ply: int, plies: int) -> GameResult:
    """Plies `from_ply` .. `from_ply + plies` of the hard set's game `k` (seed 1000 + k, the real crops' tops), as
    the whole-set run reads them (`--truth-fit --adopt moves --hard hard`): the window a test keeps of a case."""
    fen, moves = load_games(shared / "games" / "ccpd_dev.jsonl", k + 1, 20)[k]
    return check_game(fen, moves, 1000 + k, truth_fit=True, adopt="moves", hard="hard", from_ply=from_ply,
                      until_ply=from_ply + plies, piece_crops=str(shared / "piece_crops" / "valid"))


def shared_dir() -> Path:
    """The shared data folder: $XQARB_SHARED, else ../shared beside the checkout (as the tests find it)."""
    env = os.environ.get("XQARB_SHARED")
    return Path(env) if env else HERE.parents[1].parent / "shared"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--start", type=int, default=0,
                    help="first game (its index in the data file's usable games; scene seed is seed0 + index)")
    ap.add_argument("--moves", type=int, default=40, help="moves per game (the first N of each game)")
    ap.add_argument("--difficulty", default="hard")
    ap.add_argument("--data", default=str(shared_dir() / "data" / "games" / "ccpd_dev.jsonl"))
    ap.add_argument("--seed0", type=int, default=1000)
    ap.add_argument("--truth-fit", action="store_true",
                    help="calibrate with the renderer's true corners (the tracker's own accuracy, board finding aside)")
    ap.add_argument("--causes", action="store_true", help="print each failed snapshot's differences from the truth")
    ap.add_argument("--referee", action="store_true",
                    help="judge snapshots with the referee's own inference instead of this check's stricter matching")
    ap.add_argument("--adopt", choices=("none", "moves", "restored"), default="none",
                    help="feed the tracker the position the check accepted after each move (moves), and also the "
                         "true position where the check resynchronised as an arbiter would restore it (restored)")
    ap.add_argument("--adopt-lag", type=int, default=2, help="frames between a position's acceptance and the "
                    "tracker taking it (the round trip through Kafka and the referee)")
    ap.add_argument("--fps", type=float, default=4.0, help="frames per second of the rendered videos")
    ap.add_argument("--stable-ms", type=int, default=None, help="the still-board time (default: the tracker's)")
    ap.add_argument("--no-movefit", action="store_true", help="the tracker's rules alone, without its move fit")
    ap.add_argument("--hard", default=None, metavar="OPTIONS",
                    help="the renderer's hard options over each scene: a preset's name (hard) or option names "
                         "separated by commas (render_hard.HARD_OPTIONS)")
    crops = shared_dir() / "data" / "piece_crops" / "valid"
    ap.add_argument("--piece-crops", default=str(crops) if crops.is_dir() else None, metavar="DIR",
                    help="the real crops' split folder for the option 'real tops' (default: shared valid split)")
    args = ap.parse_args(argv)
    games = load_games(Path(args.data), args.start + args.games, args.moves)[args.start:]
    # A camera that does not see every point cannot follow a game there: the tracker must say so at calibration
    # (CameraFault naming the points) and must invent nothing from them; such games are counted apart, with the
    # checks that hold for them (the report, no move inferred wrongly, no false touch, lift or pair), and their
    # moves are not in the moves figure, which is of cameras a venue would run (every point in view).
    tot, cut = GameResult(), GameResult()
    cut_games: list[str] = []
    counts: Counter[str] = Counter()
    for k, (fen, mv) in enumerate(games, start=args.start):
        r = check_game(fen, mv, args.seed0 + k, difficulty=args.difficulty, truth_fit=args.truth_fit,
                       referee=args.referee, adopt=args.adopt, adopt_lag=args.adopt_lag, movefit=not args.no_movefit,
                       fps=args.fps, stable_us=None if args.stable_ms is None else args.stable_ms * 1000,
                       hard=args.hard, piece_crops=args.piece_crops)
        missed = bool(r.unseen_reported or r.unseen_truth)
        if missed:
            cut_games.append(f"{k} ({len(r.unseen_reported)} points reported, {len(r.unseen_truth)} out on the "
                             f"board's plane{'' if set(r.unseen_truth) <= set(r.unseen_reported) else ', NOT ALL'})")
        for why in r.causes:
            # one count per kind of error per failed snapshot (a bad frame's twenty points are one cause)
            if not missed:
                counts.update({w.rsplit(" ", 2)[0] if "(" in w else w for w in why} or {"no difference"})
            if args.causes:
                print(f"  game {k} seed {args.seed0 + k}: {why}", flush=True)
        into = cut if missed else tot
        for f in ("moves", "inferred_ok", "misaligned_truth", "misaligned_reported", "misaligned_false", "false_lifts",
                  "captured_lifts", "wrong_inferred",
                  "lifts_reported", "nudges_truth", "nudges_reported", "false_touches", "frames", "restores"):
            setattr(into, f, getattr(into, f) + getattr(r, f))
        into.seconds += r.seconds
        print(f"game {k}: {r.inferred_ok}/{r.moves} moves, misaligned {r.misaligned_reported}/{r.misaligned_truth} "
              f"({r.misaligned_false} false), "
              f"false lifts {r.false_lifts} ({r.captured_lifts} a taken piece), false touches {r.false_touches}, "
              f"{r.frames} frames, {r.seconds:.0f}s  "
              + (f"CAMERA MISSES {len(r.unseen_reported)} points (reported at calibration; {len(r.unseen_truth)} "
                 f"out on the board's plane)  " if missed else "")
              + f"{r.wrong[:2]}" + (f"  half-way not reported: {r.misaligned_missed}" if r.misaligned_missed else "")
              + (f"  pairs where none stood: {r.misaligned_false_pairs}" if r.misaligned_false_pairs else "")
              + (f"  touched where none: {r.false_touched}" if r.false_touched else "")
              + (f"  lifted where none: {r.false_lifted}" if r.false_lifted else ""),
              flush=True)
    seen = len(games) - len(cut_games)
    pct = 100.0 * tot.inferred_ok / max(1, tot.moves)
    print(f"TOTAL {seen} games with every point in view: moves inferred {tot.inferred_ok}/{tot.moves} = {pct:.2f}% "
          f"({tot.wrong_inferred} inferred wrongly); misaligned reported "
          f"{tot.misaligned_reported}/{tot.misaligned_truth} ({tot.misaligned_false} pairs where none stood); "
          f"false lifts {tot.false_lifts} ({tot.captured_lifts} of "
          f"them a taken piece lifted off by the taker's hand) of {tot.lifts_reported} "
          f"lifts reported; nudges {tot.nudges_reported} reported / {tot.nudges_truth} true, {tot.false_touches} where "
          f"nothing was touched; {tot.restores} positions restored by the arbiter; {tot.frames} frames "
          f"in {tot.seconds:.0f}s")
    if cut_games:
        print(f"CAMERA MISSES POINTS: {len(cut_games)} games left out of the figure above: {', '.join(cut_games)}; "
              f"there: moves inferred {cut.inferred_ok}/{cut.moves}, {cut.wrong_inferred} inferred wrongly; "
              f"misaligned reported {cut.misaligned_reported}/{cut.misaligned_truth} ({cut.misaligned_false} pairs "
              f"where none stood); false lifts {cut.false_lifts} ({cut.captured_lifts} a taken piece), false "
              f"touches {cut.false_touches}")
    if counts:
        print("failed snapshots by cause: " + ", ".join(f"{k} {v}" for k, v in counts.most_common()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
