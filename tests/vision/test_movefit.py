"""The move fit: the one move that best explains a still board where the tracker's rules read no single move."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from xqarb.vision import movefit as M
from xqarb.vision.grid import point_name
from xqarb.vision.tracker import START_SQUARES

IDX = {point_name(i): i for i in range(90)}


def _moved(squares: str, src: str, dst: str, letter: str | None = None) -> str:
    out = list(squares)
    out[IDX[dst]] = letter or out[IDX[src]]
    out[IDX[src]] = "."
    return "".join(out)


def _features(known: str, left: list[str] = (), came: list[str] = (), red_came: bool = True,
              black_came: list[str] = ()) -> np.ndarray:
    """Evidence as a still board shows it: every point quiet and as it was, a piece gone from `left` (its point
    changed, no ink, no outline) and one come to `came` (changed, ink and outline risen; red where `red_came`) and
    a black one to `black_came`."""
    f = np.zeros((90, M.N_FEATURES))
    piece = np.array([c in M._CASED for c in known], float)
    f[:, 0] = 1.0
    f[:, 1] = np.log(0.2 + 0.05)  # a fifth of the change level
    f[:, 2] = 0.2
    f[:, 3] = f[:, 4] = 0.95 * piece + 0.03 * (1 - piece)
    f[:, 5] = 0.0
    own = np.where(piece > 0, 0.9, 0.5)
    f[:, 6] = f[:, 7] = own
    f[:, 8] = own * f[:, 3]
    f[:, 9] = 1.0 * piece + 0.3 * (1 - piece)
    f[:, 10] = 0.0
    for p in left:
        i = IDX[p]
        f[i, 1:6] = [np.log(4.0 + 0.05), 4.0, 0.02, 0.95, np.log(0.03 / 0.5)]
        f[i, 8] = f[i, 6] * 0.02
        f[i, 9:11] = [0.3, -0.7]
    for p in [*came, *black_came]:
        i = IDX[p]
        f[i, 1:6] = [np.log(4.0 + 0.05), 4.0, 0.95, 0.03, np.log(0.5 / 0.03)]
        f[i, 6] = 0.9 if red_came and p in came else 0.1
        f[i, 8] = f[i, 6] * 0.95
        f[i, 9:11] = [1.0, 0.7]
    return f


@pytest.fixture(scope="module")
def model() -> M.MoveModel:
    return M.MoveModel.load()


def test_single_move_reads_one_piece_moved_by_its_geometry() -> None:
    after = _moved(START_SQUARES, "h2", "e2")
    assert M.single_move(START_SQUARES, after) == (IDX["h2"], IDX["e2"])
    # its side's piece of unknown type on the point is the same move
    assert M.single_move(START_SQUARES, _moved(START_SQUARES, "h2", "e2", "X")) == (IDX["h2"], IDX["e2"])
    # a rook cannot jump its own pawn; a piece gone and nothing come; the other side's letter come
    assert M.single_move(START_SQUARES, _moved(START_SQUARES, "a0", "a4")) is None
    gone = list(START_SQUARES)
    gone[IDX["h2"]] = "."
    assert M.single_move(START_SQUARES, "".join(gone)) is None
    assert M.single_move(START_SQUARES, _moved(START_SQUARES, "h2", "e2", "x")) is None
    # a cannon takes over exactly one screen (炮打隔子): b2 takes the horse b9 over the cannon b7
    took = _moved(START_SQUARES, "b2", "b9")
    assert M.single_move(START_SQUARES, took) == (IDX["b2"], IDX["b9"])


def test_the_packaged_model_takes_the_move_the_board_shows(model) -> None:
    # h2 left, e2 came: the red cannon's 炮二平五, whatever the rules made of it
    best = M.best_move(model, START_SQUARES, _features(START_SQUARES, left=["h2"], came=["e2"]))
    assert best is not None and (best.src, best.dst) == (IDX["h2"], IDX["e2"])
    # b9 left, c7 came (a black piece): the black horse b9-c7 (马2进3)
    after = _moved(START_SQUARES, "h2", "e2")
    best = M.best_move(model, after, _features(after, left=["b9"], came=["c7"], red_came=False))
    assert best is not None and (best.src, best.dst) == (IDX["b9"], IDX["c7"])


def test_no_move_where_the_board_shows_none_or_two_alike(model) -> None:
    assert M.best_move(model, START_SQUARES, _features(START_SQUARES)) is None
    # h2 left and two points it could go to came alike: not for the camera to choose
    assert M.best_move(model, START_SQUARES, _features(START_SQUARES, left=["h2"], came=["e2", "f2"])) is None


def test_refit_keeps_the_rules_one_move_and_mends_the_rest(model) -> None:
    feats = _features(START_SQUARES, left=["h2"], came=["e2"])
    one = _moved(START_SQUARES, "h2", "g2")
    assert M.refit(model, START_SQUARES, one, feats) is None  # the rules' one move stands
    assert M.refit(model, START_SQUARES, START_SQUARES, _features(START_SQUARES)) is None  # nothing, as seen
    # the rules saw nothing where the board plainly shows a move: the fit's
    assert M.refit(model, START_SQUARES, START_SQUARES, feats) == (_moved(START_SQUARES, "h2", "e2"), [IDX["e2"]])
    gone = list(START_SQUARES)
    gone[IDX["h2"]] = "."
    fitted = M.refit(model, START_SQUARES, "".join(gone), feats)  # a piece gone, nowhere come: the fit says where
    assert fitted == (_moved(START_SQUARES, "h2", "e2"), [IDX["e2"]])
    # a piece left between two points (both unsure) that the rules moved on is theirs to follow
    pair = list(START_SQUARES)
    pair[IDX["e3"]] = pair[IDX["e4"]] = "?"
    known = "".join(pair)
    moved_on = list(known)
    moved_on[IDX["e3"]] = moved_on[IDX["e4"]] = "."
    moved_on[IDX["h2"]] = "."
    assert M.refit(model, known, "".join(moved_on), _features(known, left=["h2"], came=["e2"])) is None


def test_two_moves_in_one_still_board(model) -> None:
    """The board not still between two moves (a player answering at once): 炮二平五 then 马8进7 in one snapshot. No one
    move explains it (the other move's two points would be left unexplained); the two together do."""
    feats = _features(START_SQUARES, left=["h2", "h9"], came=["e2"], black_came=["g7"])
    assert M.best_move(model, START_SQUARES, feats) is None
    both = _moved(_moved(START_SQUARES, "h2", "e2"), "h9", "g7")
    assert M.two_moves(model, START_SQUARES, feats) == both
    gone = list(START_SQUARES)
    gone[IDX["h2"]] = gone[IDX["h9"]] = "."
    assert M.refit(model, START_SQUARES, "".join(gone), feats) == (both, [IDX["g7"], IDX["e2"]])
    # one move's evidence alone is one move, not two
    assert M.two_moves(model, START_SQUARES, _features(START_SQUARES, left=["h2"], came=["e2"])) is None


def test_a_piece_with_no_move_is_not_moved_by_two_moves(model) -> None:
    """A rook hemmed in by its own pieces (a red pawn on a1 beside the horse b0) reaches nowhere: the two moves
    weighed never move it, however plainly its point and a far one changed (an empty reach once read as "anywhere",
    as for a piece of unknown type)."""
    out = list(START_SQUARES)
    out[IDX["a1"]] = "P"
    known = "".join(out)
    feats = _features(known, left=["a0", "h9"], came=["a5"], black_came=["g7"])
    assert M.two_moves(model, known, feats) is None


def test_a_file_that_is_no_move_model_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "movefit.npz"
    bad.write_bytes(b"not an npz")
    with pytest.raises(M.MoveModelError, match="not a move model"):
        M.MoveModel.load(bad)
    np.savez(bad, piece_w=np.zeros((3, 3)), empty_w=np.zeros((3, 3)), mean=np.zeros(3), scale=np.ones(3),
             min_score=1.0, min_margin=1.0, min_end=0.0, max_other=1.0)
    with pytest.raises(M.MoveModelError, match="features"):
        M.MoveModel.load(bad)


def test_a_move_the_rules_read_in_no_move_shape_is_taken_from_the_fit(shared_data) -> None:
    """Hard game 921 (one the model was trained on), move 3: the red horse h0-g2 from a corner whose frame keeps ink.
    The rules read the king e0 gone to f2 (a board in no single move's shape: the referee would have called an
    arbiter, and the game's next moves were judged against that board); the fit finds h0-g2 (score 10.6, margin
    9.3 over the next move)."""
    from gamecheck import check_game, load_games

    fen, moves = load_games(shared_data / "games" / "ccpd_dev.jsonl", 922, 5)[921]
    assert moves[2] == "h0g2"
    # (from the board left still after the first move: the tracker told that position, as the referee's)
    with_fit = check_game(fen, moves, 1921, difficulty="hard", truth_fit=True, from_ply=1)
    assert (with_fit.followed, with_fit.wrong) == (5, [])
    rules_alone = check_game(fen, moves, 1921, difficulty="hard", truth_fit=True, movefit=False, from_ply=1)
    assert rules_alone.followed < 5 and "ply 2" in rules_alone.wrong[0]


def test_unlike_then_sees_another_piece_on_a_point_and_not_a_change_of_light() -> None:
    """A capture whose taker's ink reads in the taken piece's colour still puts another character on the point: its
    patch is unlike the last still board's, and so is the bare point a piece left; the same board under other light
    is not."""
    from xqarb.vision.board import fit_from_corners
    from xqarb.vision.occupancy import warp_board
    from xqarb.vision.render import random_scene, render_position

    scene = random_scene(4321, difficulty="hard")
    still = {p: (0.0, 0.0) for p in IDX}  # pieces where they stood: only what the test changes differs
    before = render_position(START_SQUARES, scene, offsets=still)
    h = fit_from_corners(before.corners, "given", 0.0).homography
    ref = warp_board(before.image, h).bgr
    # the same board, darker and with a cast (the light changed): every patch alike
    dim = np.clip(before.image.astype(np.float32) * np.array([0.75, 0.8, 0.7]) + 12, 0, 255).astype(np.uint8)
    same = M.unlike_then(ref, warp_board(dim, h).bgr)
    assert same.max() < 0.15, (point_name(int(same.argmax())), same.max())
    # the red cannon h2 takes the black horse h9: another piece on h9, the bare point on h2, the rest as it was
    took = _moved(START_SQUARES, "h2", "h9")
    after = render_position(took, scene, offsets=still)
    unlike = M.unlike_then(ref, warp_board(after.image, h).bgr)
    rest = [i for i in range(90) if i not in (IDX["h2"], IDX["h9"])]
    assert unlike[IDX["h9"]] > 3 * float(np.percentile(unlike[rest], 95)) + 0.05
    assert unlike[IDX["h2"]] > 3 * float(np.percentile(unlike[rest], 95)) + 0.05
    feats = M.point_features(START_SQUARES, np.zeros(90), 1.0, _reading(), _reading(), np.ones(90), np.ones(90), unlike)
    assert feats.shape == (90, M.N_FEATURES)
    k = M.FEATURES.index("log unlike / median x occupied now")
    assert feats[IDX["h9"], k] > 2.0 and abs(float(np.median(feats[:, k]))) < 0.5  # log over the board's median


def _reading():
    from xqarb.vision.occupancy import PointReading

    piece = np.array([c in M._CASED for c in START_SQUARES], float)
    return PointReading(piece, np.full(90, 0.5), np.zeros((90, 2)), piece, np.zeros(90))


def test_a_move_is_taken_where_the_piece_that_came_reads_in_the_other_colour(model) -> None:
    """Hard game 827: the black cannon b7-b8, its ink at b8 read red (log-odds 2.1 of a red piece come, -0.4 of a
    black one). Where it went is what its point and b8 show; the colour read there is no reason to doubt it (the
    mover's side is its point's)."""
    odds = np.full((90, 2), -5.0)
    odds[IDX["b7"]] = [8.6, 2.5]  # left (and not taken: nothing of red's stands there)
    odds[IDX["b8"]] = [2.1, -0.4]
    ranked = M.ranked_moves(model, START_SQUARES, np.zeros((90, M.N_FEATURES)), odds)
    fit = M._best_of(model, START_SQUARES, odds, ranked)
    assert fit is not None and (fit.src, fit.dst) == (IDX["b7"], IDX["b8"])
    assert fit.score > 8.6 + 2.1  # both colours' arrival counted
    # nothing come anywhere: no move, however plainly the cannon left
    odds[IDX["b8"]] = [-5.0, -5.0]
    assert M._best_of(model, START_SQUARES, odds, M.ranked_moves(model, START_SQUARES, None, odds)) is None



def _table(known: str, odds: np.ndarray) -> np.ndarray:
    """A still board's change table (`change_table`) from odds measured against `known` (`point_odds`): the rows
    of the sides `known` does not have at a point are quiet (a change to them unlikely)."""
    t = np.full((90, 3, 3), -7.0)
    for i, c in enumerate(known):
        t[i, [0, 1, 2], [0, 1, 2]] = 0.0
        if c == "?":
            t[i] = 0.0
        elif c == ".":
            t[i, 0, 1] = t[i, 0, 2] = np.logaddexp(odds[i, 0], odds[i, 1])
        else:
            s = 1 if c.isupper() else 2
            t[i, s, 0], t[i, s, 3 - s] = odds[i, 0], odds[i, 1]
    return t


def _looked_again(model: M.MoveModel, known: str, odds: np.ndarray, pos) -> list[str] | None:
    """One still board looked at again from the referee's position `pos` (the board before it `known`)."""
    following = M.follow_step(M.start_following(pos), _table(known, odds), 0)
    return M.follow(model, pos.squares(), following, [_table(known, odds)],
                    [frozenset(i for i, c in enumerate(known) if c == "?")])

def _position(*moves: str):
    from xqarb.referee.rules import Move, Position

    pos = Position.start()
    for m in moves:
        pos = pos.play(Move.parse(m))
    return pos


def test_looking_again_from_the_referees_position_takes_the_legal_move_the_board_shows(model) -> None:
    """Liu game 104: the black rook i9-h9 set down under a glare that also changed the elephant g9 (4.4 log-odds of
    having left): the fit, weighing every piece's geometry, takes nothing (another point changed as plainly), and
    the snapshot fitted no move. Looked at again from the position the referee holds, with its legal moves only
    (Black to move, the elephant's moves no answer to anything the board shows), the rook's move stands out."""
    pos = _position("h2e2", "h9g7", "h0g2")
    known = pos.squares()
    odds = np.full((90, 2), -7.0)
    odds[IDX["i9"]] = [6.2, 0.9]
    odds[IDX["g9"]] = [4.4, 0.3]
    odds[IDX["h9"]] = [-3.5, -5.8]
    assert M._best_of(model, known, odds, M.ranked_moves(model, known, None, odds)) is None
    boards = _looked_again(model, known, odds, pos)
    assert boards == [_moved(known, "i9", "h9")]
    # the same evidence with Red to move: no move of Red's shows, and Black's are not Red's
    red = _position("h2e2", "h9g7", "h0g2", "g6g5")
    assert _looked_again(model, red.squares(), odds, red) is None


def test_looking_again_takes_nothing_where_two_moves_fit_alike(model) -> None:
    """Hard game 866: the rook c4 left, where it went barely shows (c4-c9 7.7, c4-i4 7.0): no answer, an arbiter's."""
    pos = _position("h2e2", "h9g7")
    known = pos.squares()
    odds = np.full((90, 2), -7.0)
    odds[IDX["i0"]] = [9.0, 2.0]  # the rook left the corner
    odds[IDX["i1"]] = [-1.5, -1.8]
    odds[IDX["i2"]] = [-2.0, -2.0]
    assert _looked_again(model, known, odds, pos) is None


def test_looking_again_finds_a_move_missed_and_the_answer_to_it(model) -> None:
    """A red move the camera did not see (the cannon h2-e2, faint at e2), then Black's horse h9-g7 plainly: the
    referee holds the start with Red to move, and the board is explained by the two in turn."""
    pos = _position()
    known = pos.squares()
    odds = np.full((90, 2), -7.0)
    odds[IDX["h2"]] = [5.0, 0.0]
    odds[IDX["e2"]] = [-1.0, -3.0]
    odds[IDX["h9"]] = [8.0, 1.0]
    odds[IDX["g7"]] = [-4.0, 3.0]
    first = _moved(known, "h2", "e2")
    assert _looked_again(model, known, odds, pos) == [first, _moved(first, "h9", "g7")]


def test_looking_again_moves_a_piece_off_a_point_left_unsure_where_its_other_point_tells(model) -> None:
    """Liu game 72: the red rook left between a1 and a0 (both unsure), the referee holding it on a1 as designated
    (5.10), then a1-h1: a1 tells nothing either way, h1 plainly shows the rook come, and no other move of Red's
    explains it."""
    pos = _position("a0a1", "h9g7")
    known = "".join("?" if i in (IDX["a1"], IDX["a0"]) else c for i, c in enumerate(pos.squares()))
    odds = np.full((90, 2), -7.0)
    odds[IDX["h1"]] = [4.0, -1.0]
    assert _looked_again(model, known, odds, pos) == [_moved(pos.squares(), "a1", "h1")]
    # (an unsure point counts for nothing: with h1 quiet, no move shows at all)
    odds[IDX["h1"]] = [-7.0, -7.0]
    assert _looked_again(model, known, odds, pos) is None


def _quiet(known: str, **points: tuple[float, float]) -> np.ndarray:
    """A still board's change table against `known`: every point quiet but `points` (their odds, `point_odds`)."""
    odds = np.full((90, 2), -5.0)
    for p, o in points.items():
        odds[IDX[p]] = o
    return _table(known, odds)


def _followed(model: M.MoveModel, pos, tables: list[np.ndarray]) -> list[str] | None:
    following = M.start_following(pos)
    for k, t in enumerate(tables):
        following = M.follow_step(following, t, k)
    return M.follow(model, pos.squares(), following, tables, [frozenset()] * len(tables))


def test_a_move_that_barely_showed_is_told_by_the_still_boards_after_it(model) -> None:
    """Hard game 820's shape: the black cannon b7-d7 set down in glare (d7 barely shows it, no more than the points
    it did not go to), then Red's horse b0-c2; which way the cannon went is not told. Then it moves on, d7-d6, d6
    plainly: only a cannon on d7 could have come to d6, and the three moves are taken in turn."""
    pos = _position("g0e2")
    start = pos.squares()
    one = _moved(start, "b7", "d7")
    two = _moved(one, "b0", "c2")
    tables = [_quiet(start, b7=(6.0, 1.0), d7=(-4.0, -4.0)), _quiet(one, b0=(9.0, 1.0), c2=(-5.0, 6.0))]
    assert _followed(model, pos, tables) is None
    tables.append(_quiet(two, d7=(3.0, 0.0), d6=(-5.0, 6.0)))
    assert _followed(model, pos, tables) == [one, two, _moved(two, "d7", "d6")]


def test_two_faint_readings_do_not_add_up_to_a_clear_one(model) -> None:
    """Hard game 874's shape: the red rook g6-i6, faint at i6 (g5 a little less so), later Black's rook g8 set down
    on g4 towards g5 (g5 reads it taken, g4 not): g6-g5 and g8 taking on g5 lead the game's moves by the margin
    twice over summed, but on each still board by less than it. Nothing is taken."""
    from xqarb.referee.rules import Position

    pos = Position.from_fen("4k4/6r2/9/6R2/9/9/9/9/9/3K5 w - - 0 1")
    start = pos.squares()
    one = _moved(start, "g6", "i6")
    tables = [_quiet(start, g6=(14.5, 1.0), i6=(-3.2, -9.0), g5=(-2.5, -9.0)),
              _quiet(one, g8=(17.2, 1.0), g4=(-9.0, -1.3))]
    tables[1][IDX["g5"], 1, 2] = 1.5  # (where the misreading has the red rook: taken by Black there)
    assert _followed(model, pos, tables) is None
    # the game's moves, each plain
    tables[0][IDX["i6"], 0, 1] = tables[1][IDX["g4"], 0, 2] = 5.0
    assert _followed(model, pos, tables) == [one, _moved(one, "g8", "g4")]


def test_looking_again_takes_nothing_where_a_third_move_shows(model) -> None:
    """Hard game 820: the black cannon b7-d7 (faint at d7), red's horse b0-c2, black's pawn c6-c5, all before the
    referee was told: the best two moves (c6-c5, b0-c2) leave b7's leaving unexplained, which b7-d7 explains better
    than nothing; two moves are not the answer (taking them made c6-c5 Black's move in place of b7-d7)."""
    pos = _position("g0e2")
    known = pos.squares()
    odds = np.full((90, 2), -5.0)
    odds[IDX["b0"]] = [11.9, 1.5]
    odds[IDX["c2"]] = [9.5, 6.1]
    odds[IDX["c6"]] = [10.5, 2.2]
    odds[IDX["c5"]] = [-0.4, -0.2]
    odds[IDX["b7"]] = [6.5, 2.0]
    odds[IDX["d7"]] = [-4.5, -3.9]
    assert _looked_again(model, known, odds, pos) is None
    # the same without the cannon's leaving: c6-c5 and b0-c2 are the board
    odds[IDX["b7"]] = [-5.0, -5.0]
    first = _moved(known, "c6", "c5")
    assert _looked_again(model, known, odds, pos) == [first, _moved(first, "b0", "c2")]


def test_a_change_beside_where_a_piece_was_set_down_is_that_piece_s(model) -> None:
    """A tall rook set down on h0, seen steeply: its body stands over h1 in the view, which changed plainly (9.3).
    No other move is needed to explain it (the black cannon h7-h1, which plainly stayed, would explain it a little
    better than nothing, but a point next to one the move changed changes with it); looked at again, the rook's
    move i0-h0 is the board. The same change two points off (h2, beside neither end) is another move's, and nothing
    is taken."""
    pos = _position("h2e2", "h9g7", "h0g2", "i9h9")
    known = pos.squares()
    odds = np.full((90, 2), -7.0)
    odds[IDX["i0"]] = [9.0, 2.0]  # the rook left the corner
    odds[IDX["h0"]] = [3.0, 0.0]  # ... and came to h0
    odds[IDX["h7"]] = [-9.0, -9.0]  # the black cannon plainly stayed
    odds[IDX["h1"]] = [9.3, 0.0]
    assert _looked_again(model, known, odds, pos) == [_moved(known, "i0", "h0")]
    odds[IDX["h1"]] = [-7.0, -7.0]
    odds[IDX["h2"]] = [9.3, 0.0]
    assert _looked_again(model, known, odds, pos) is None


def test_after_a_snapshot_that_fits_no_move_a_piece_read_beside_its_point_is_followed(model) -> None:
    """Hard game 212's shape: the black elephant g9-e7 set down towards f7, read there: f7 plainly shows a black
    piece come (no legal move reaches it but the cannon b7's, which plainly stayed), e7 shows nothing, and the
    elephant's other point i7 nothing either. The referee could not follow it; looked at again from its position,
    with Red's horse b0-c2 next, the elephant's move to the point beside the arrival is taken, and the game goes on
    from there. The same arrival on a point beside
    neither e7 nor i7 tells the one from the other: nothing is taken."""
    pos = _position("g0e2", "g6g5", "c3c4")
    start = pos.squares()
    one = _moved(start, "g9", "e7")
    two = _moved(one, "b0", "c2")
    quiet = {"g9": (3.4, 0.9), "e7": (-4.0, -4.0), "i7": (-3.8, -3.8), "b7": (-5.7, -3.5)}
    tables = [_quiet(start, f7=(6.4, 6.4), **quiet), _quiet(one, b0=(9.0, 1.0), c2=(-5.0, 6.0))]
    assert _followed(model, pos, tables) == [one, two]
    # the same arrival on d6 (beside neither e7 nor i7): no record is clear
    tables[0] = _quiet(start, d6=(6.4, 6.4), **quiet)
    assert _followed(model, pos, tables) is None


def test_a_source_read_replaced_rather_than_bare_is_a_piece_gone(model) -> None:
    """Hard game 230's shape: the black pawn c6-c5, the model reading c6 as taken by Red (1.8) rather than left bare
    (-0.8), c5 plainly come; then Red's horse b0-a2. The pawn's point shows its piece gone, and the record is
    taken; where c6 shows no change of either kind, nothing is."""
    pos = _position("h2e2", "h9g7", "h0g2", "b9c7", "i0h0", "i9h9", "g3g4")
    start = pos.squares()
    one = _moved(start, "c6", "c5")
    two = _moved(one, "b0", "a2")
    tables = [_quiet(start, c6=(-0.8, 1.8), c5=(5.6, 5.6)), _quiet(one, b0=(9.0, 1.0), a2=(6.0, -5.0))]
    assert _followed(model, pos, tables) == [one, two]
    tables[0] = _quiet(start, c6=(-0.8, -3.0), c5=(5.6, 5.6))
    assert _followed(model, pos, tables) is None
