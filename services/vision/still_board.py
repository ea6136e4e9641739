"""The still-board state machine: one board's frames over time in, observations out (the public entry is
`tracker`).

`step(state, image, t_us, frame_sha256) -> (state, observations)`: `image` is the decoded frame (BGR) or None when
it could not be decoded; `frame_sha256` names the JPEG the frame came from (the evidence). No clock, no I/O.

What it reports (DESIGN, event catalogue, "from vision"), never what it means:
- BoardCalibrated when the board is found (again: the camera or the board moved), or on the first frame when the
  board's calibration was given (`Tracker.initial(fit)`: an operator marked the corners by hand);
- HandEntered / HandLeft: a large change over the grid against the last still board (a hand or arm);
- PieceLifted: a piece known to stand on a point is gone while the hand is over the board, the point itself in view;
- PiecePlaced / PieceNudged / PieceMisaligned / BoardStable once the board has been still for `stable_us` after the
  hand left (5.7: a move is complete when the hand leaves the piece): what changed against the last stable board.
  A piece standing between two points gives both candidates (5.10: the opponent designates);
- CameraFault (reason) for a frame that does not decode, is black or washed out, blurred, or shows no board; and at
  calibration where the picture cuts the board: which points the camera does not see (`tops.unseen_reason`).

Types: the tracker keeps the last stable board with full FEN letters where it knows them (the start position when
the first board seen has the start's occupancy and colours; afterwards a moved piece keeps its letter, found from
what changed: one point vacated and one point newly occupied or changed). A point it cannot explain gets X / x
from the ink colour, or `?`. Every point is judged against the last still board (its change, its own ink then
and now), not by this frame's reading alone: a move changes two points, a touch one, the light many a little.
Where the inks do not tell (a red ink that barely reads on a yellow board, an emptied point whose printed marks or
frame read as ink), the pieces' round outlines do: a move takes one point's disc away and brings one to another,
a capture takes the taker's disc away and leaves a disc where it took. And what the board plainly shows (ink and
outline agreeing) stands over the known board where the two have disagreed on two still boards running: a move
missed once is not carried for the rest of the game.
Where the rules end on a board in no single move's shape (a piece gone and nothing arrived, a piece come from
nowhere) or see nothing, the move fit (`movefit`) weighs every move the pieces' geometry allows by each point's
evidence and takes the one, or the two moves of a board not still between them, that clearly explain the board;
else the rules' reading stands and the referee calls an arbiter.
The positions the rest of the system holds come back: the referee's moves and an arbiter's restored position are
taken as the known board (`adopt`); where the referee could not follow a still board (`not_followed`), the next one
is read again from the last still board it followed, over the moves the rules allow from its position; where the
evidence of each point cannot tell those moves apart, by the rules' readings of those still boards, each a legal
move but at one point read otherwise whose view did not change (`misread`), that point then kept as the referee's
position holds it while its view stays so.
A board plays one game after another: at the next game (`new_game`) the last game's board is forgotten, the
calibration kept, and the next still board that shows the new game's start is its first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import Any

import cv2
import numpy as np

from .board import BoardFit, NoBoardFound, find_board, fit_from_h
from .frames import (
    _half_scale_shift,
    _keep_orientation,
    _norm,
    _norm_change,
    _pt,
    _sharpness,
    _shift_fit,
    _shifted,
    _still_shift,
    _view_support,
    eighth,
)
from .grid import neighbours, point_index, point_name
from .hand import (
    _blobs_moved,
    _changed,
    _creeping_in,
    _hand_mask,
    _hand_tip,
    _reaches_in,
    _set_down_shift,
    _solid,
    _whole_hull,
    dark_weight,
    hand_moved,
    noise_levels,
    noise_scale,
    noisy,
    seen_change,
)
from .interpret import _set_onto_by_outline, _settled_from_between, as_seen_twice, interpret
from .joint_reading import joint_reading
from .look_colour import look_colour
from .misread import read_over
from .move_checks import unseen_partners
from .movefit import (
    Followed,
    MoveModel,
    change_table,
    follow,
    follow_step,
    in_doubt,
    point_features,
    refit,
    start_following,
    unlike_then,
)
from .occupancy import (
    POINTS_PX,
    PointReading,
    S,
    ink_weight_at_points,
    orientation_vote,
    read_view,
    warp_board,
)
from .point_evidence import (
    Outlines,
    _change_level,
    _implausible,
    _ink_order,
    _joint_order,
    _line_contrast,
    _lines_hidden,
    _lines_shown,
    _outline_scores,
    _point_change,
)
from .settings import TrackerConfig
from .squares import _agrees, _require_90
from .still_clear import unclear
from .tops import Tops, half_turned, marks_at, measure_tops, outside_picture, tops_h, unseen_points, unseen_reason

# the step's emitter: an observation's type and its fields
Emit = Callable[..., None]


@dataclass(frozen=True)
class Observation:
    """One thing seen: `type` is the event type of the catalogue, `fields` its data fields (without evidence)."""

    type: str
    t_us: int
    fields: dict[str, Any]
    frame_sha256: str | None
    evidence: tuple[str, ...] = ()


@dataclass(frozen=True)
class Still:
    """A still board read since the anchor: its view (until the change to the next one is weighed: the view is
    needed only for that), its reading and round outlines, the squares the tracker read on it, and the change from
    the still board before it to it (`movefit.change_table`) once weighed."""

    view: np.ndarray | None
    reading: PointReading
    circles: np.ndarray | None
    squares: str
    table: np.ndarray | None = None


@dataclass(frozen=True)
class Anchor:
    """The last still board whose position the referee holds (its MoveMade, an arbiter's restored position, or the
    start): where the tracker looks again from when the referee could not follow a later one (`not_followed`),
    with the still boards read since (`trail`) and, once it looked again, the positions the referee's legal moves
    may have reached on them (`following`, from the position `following_fen`)."""

    squares: str
    view: np.ndarray
    reading: PointReading
    circles: np.ndarray | None
    trail: tuple[Still, ...] = ()
    following: tuple[Followed, ...] | None = None
    following_fen: str | None = None

    def then(self, still: Still) -> Anchor | None:
        """The anchor with one more still board read since; None where looking again from it is given up (the
        referee has not followed the board for `MAX_TRAIL` still boards, or has said nothing of `MAX_UNWEIGHED`)."""
        trail = (*self.trail, still)
        if len(trail) > MAX_TRAIL or sum(s.table is None for s in trail) > MAX_UNWEIGHED:
            return None
        return replace(self, trail=trail)


# still boards followed from one anchor: past these the referee has not followed the board for so long that an
# arbiter is needed (and their changes, 6 kB each, are not kept any longer); views kept before the referee said it
# could not follow (it says so within a still board or two)
MAX_TRAIL = 48
MAX_UNWEIGHED = 4


@dataclass(frozen=True)
class TrackerState:
    fit: BoardFit | None = None
    calibrated: bool = False  # the calibration frame has been seen (support and sharpness measured on it)
    fit_given: bool = False  # the fit came from outside (an operator calibrated the board by hand): it is oriented
    calib_support: float = 0.0
    calib_sharpness: float = 0.0
    ref_view: np.ndarray | None = None  # canonical view of the last stable board (BGR)
    ref_norm: np.ndarray | None = None  # the same, normalised (_norm): compared with every frame
    ref_reading: PointReading | None = None
    ref_circles: np.ndarray | None = None  # its circle score (Outlines), where a rule asked for it
    known: str | None = None  # squares of the last BoardStable
    start: str | None = None  # the position this board's game starts from where the venue said so (GameStarted's
    # start_fen: a handicap game, 让子); None: the configuration's start_squares
    last_small: np.ndarray | None = None  # the last frame at 1/8 scale (grey): "unchanged" test
    last_view: np.ndarray | None = None  # the last frame's canonical view (grey, normalised)
    hand: bool = False
    hand_moved_at: int | None = None  # the last frame in which the hand blob moved
    # the hand blob moved in the last frame looked at (False: it stood still over that frame, and moves again only
    # in a hand's parts, `hand_stir_cells`)
    hand_stirred: bool = False
    still_since: int | None = None
    # the first frame since which the view has not changed from frame to frame (the hand's last motion, a piece
    # set down, the hand leaving): the quick still board (`quick_stable_us`) counts from it
    quiet_since: int | None = None
    quick_tried: int | None = None  # the still time (`still_since`) whose board was read early and was not clear
    pending: bool = True  # something may have changed since the last BoardStable
    lifted: frozenset[int] = frozenset()
    maybe_lifted: frozenset[int] = frozenset()  # seen gone in the last frame with the hand: lifted if seen again
    fault: str | None = None
    last_find: int | None = None  # when a board was last looked for (none found yet)
    recent: tuple[str, ...] = ()  # SHA-256 of the last frames (evidence)
    last_full: np.ndarray | None = None  # the last decoded frame's canonical view (BGR)
    frames: int = 0
    skipped: int = 0
    # points where the last snapshot contradicted what the board plainly showed, with what it showed
    # (as_seen_twice): the next one that does too is corrected
    doubted: tuple[tuple[int, str], ...] = ()
    # points whose ink contradicted the known board at the last still board while their outline did not: unchanged
    # since, they are not looked at again (the outlines cost 43 ms a view; a board's printed marks read as ink at
    # every still board)
    ink_only: tuple[int, ...] = ()
    unsure_of: tuple[tuple[int, str], ...] = ()  # points left unsure ('?'), with the letter of the piece that was there
    anchor: Anchor | None = None
    # the referee's position (FEN) where it said it could not follow the last still board: the next still board is
    # read again from the anchor with the rules' legal moves (`_look_again`)
    held: str | None = None
    # points read otherwise than the referee's position holds them, their view unchanged since (`misread.read_over`):
    # while their view stays so, the reading there is the camera's old misreading and the position's letter stands
    misread: frozenset[int] = frozenset()
    # the fingertips of the hand over the board in each frame of its last visit (`_hand_tip`): where it set a piece
    # down, against where it took it up (`_set_down_shift`)
    hand_tips: tuple[tuple[float, float, int], ...] = ()
    # the position the last game left on the board, while a new game's start is awaited (`new_game`): a still
    # board is the new game's first only where it shows the start, not the last game's pieces before they were set up
    left: str | None = None
    # the pieces' top faces' homothety where tall pieces seen steeply stand far off their points (`tops.py`): the
    # view is then taken through their plane
    tops: tuple[float, float, float] | None = None
    # the points the picture does not show (it cuts the board: `tops.unseen_points`): reported '?', their letters
    # kept as known (the start, the referee's positions)
    unseen: frozenset[int] = frozenset()
    # where the view shows no pixel of the picture (grown), and the band just inside the picture's edge
    # (`tops.outside_picture`): no change is measured outside, and an arm reaching in enters at the band
    outside: tuple[np.ndarray, np.ndarray] | None = None
    # how far the camera's noise reaches in each cell of the view, on the last few frames in which nothing moved
    # (`hand.noise_levels`): a change counts as far as it stands out of it (`hand.noise_scale`)
    noise: tuple[np.ndarray, ...] = ()
    # where that noise reaches over the change level: the canonical views (BGR) of the frames since the view last
    # changed at 1/8 scale, summed, and their count (the still board is read from their mean)
    still_views: tuple[np.ndarray, int] | None = None

    @property
    def beyond_picture(self) -> np.ndarray | None:
        """Where the view shows no pixel of the picture (`outside`'s first mask; None: the picture holds it all)."""
        return self.outside[0] if self.outside is not None else None

    @property
    def picture_edge(self) -> np.ndarray | None:
        """The band just inside the picture's edge where it cuts the view (`outside`'s second mask; None: none)."""
        return self.outside[1] if self.outside is not None else None

    def as_reported(self, squares: str) -> str:
        """A still board as BoardStable reports it: '?' on the points the picture does not show (`unseen`)."""
        return "".join("?" if i in self.unseen else c for i, c in enumerate(squares))


def _seen_known(known: str, unseen: frozenset[int]) -> str:
    """`known` with the points out of the picture as '?': what is read there is not judged by."""
    return "".join("?" if i in unseen else c for i, c in enumerate(known))


def _changed_points(change: np.ndarray | None, cfg: TrackerConfig) -> np.ndarray | None:
    """Per point, whether it changed since the last still board: `change_half` of this board's change level or more
    (None: no still board before)."""
    return None if change is None else change >= cfg.change_half * _change_level(change, cfg)


class Tracker:
    """Holds the configuration; `step` is pure (state in, state and observations out)."""

    def __init__(self, config: TrackerConfig | None = None, classifier: Any = None,
                 move_model: MoveModel | str | None = "packaged") -> None:
        """`move_model`: where the rules read a still board in no single move's shape, the move that clearly best
        explains it (`movefit`); "packaged" loads the model shipped with xqarb, None leaves the rules' reading."""
        self.config = config or TrackerConfig()
        self.classifier = classifier
        if isinstance(move_model, str) and move_model != "packaged":
            raise ValueError(f"move_model: a MoveModel, 'packaged' or None, not {move_model!r}")
        self.move_model = MoveModel.load() if move_model == "packaged" else move_model

    def initial(self, fit: BoardFit | None = None, start: str | None = None) -> TrackerState:
        """A board's first state. `fit`: the board's calibration when it is known beforehand (an operator marked the
        four corners a9, i9, i0, a0 by hand, or a venue fixed its cameras): the tracker then does not look for the
        board, measures the line support and sharpness of the calibration on the first frame, and takes Red's side
        as the fit says. Without it the board is found in the frames. `start`: the squares the game starts from
        (see `expect_start`)."""
        if start is not None:
            _require_90(start, "a start position")
        if fit is None:
            return TrackerState(start=start)
        return TrackerState(fit=fit, fit_given=True, start=start)

    def expect_start(self, state: TrackerState, squares: str | None) -> TrackerState:
        """The position the board's game starts from, as the venue announced it (GameStarted's start_fen): the
        first still board is matched against it instead of the standard start, so that a handicap game (让子: a
        piece or more taken off before the start) is not read as the full start with a ghost where a piece is
        missing; None: the standard start. A board already followed keeps what it knows (its pieces are where the
        camera saw them): the start of the game it follows, announced late; a new game is `new_game`."""
        if squares is not None:
            _require_90(squares, "a start position")
        if state.known is not None:
            return state
        return replace(state, start=squares)

    def new_game(self, state: TrackerState, squares: str | None) -> TrackerState:
        """The board's next game begins (a GameStarted for another game than the one followed), from `squares`
        (its announced start; None: the standard start). Between games the pieces are set up again by hand, so
        the last game's board is no longer what stands there: the tracker forgets it (the known board, the last
        still board, the anchor and every doubt) and keeps only what belongs to the board and the camera, its
        calibration. The next still board that shows the start is the new game's first (BoardStable); one that
        does not (the last game's pieces, or some of them set up) is not reported, as no move of the new game
        can be on it."""
        if squares is not None:
            _require_90(squares, "a start position")
        return TrackerState(
            fit=state.fit, calibrated=state.calibrated, fit_given=state.fit_given,
            calib_support=state.calib_support, calib_sharpness=state.calib_sharpness, start=squares,
            tops=state.tops, unseen=state.unseen, outside=state.outside, noise=state.noise,
            left=state.known if state.known is not None else state.left,
            last_small=state.last_small, last_view=state.last_view, last_full=state.last_full,
            still_since=None if state.hand else state.still_since, pending=True, fault=state.fault,
            quiet_since=None if state.hand else state.quiet_since,
            last_find=state.last_find, recent=state.recent, frames=state.frames, skipped=state.skipped)

    def adopt(self, state: TrackerState, squares: str, *, restored: bool = False) -> TrackerState:
        """The position the referee holds now (a MoveMade's position after the move; `restored`: an arbiter's
        restored position, 5.8.2) taken as the known board. The tracker judges each still board against the last
        one, so a point it read poorly once ('?', a piece of unknown type, a colour lost in glare) would stay
        poorly known; the referee's position, inferred from that snapshot and the rules, names every piece.

        A move's position is taken only where it agrees with the last snapshot (every point the snapshot was sure
        of has the same occupancy and colour): one that does not was inferred from an earlier snapshot (the
        referee is behind the camera) or contradicts what the camera saw, and the tracker keeps its own. A
        restored position is an arbiter's word and is taken as it is."""
        _require_90(squares, "a position")
        if restored and state.known is None and state.left is not None:
            # a new game whose start the board has not shown: the arbiter's position is what to wait for
            return replace(state, start=squares, pending=True)
        if state.known is None or state.ref_view is None:
            return state  # no still board yet: the start is read from the board itself
        if not restored and not _agrees(state.known, squares):
            return state
        known = state.known
        # A piece standing between two points left both unsure ('?', PieceMisaligned); the referee's position has
        # it on the point the opponent designated (5.10), but the camera still sees it between: the pair stays
        # unsure, so that the piece is followed when it is set right or moves on (interpret's unsure points).
        between = {i for i in range(90) if known[i] == "?" and squares[i] != "?" and any(
            known[k] == "?" and (squares[k] == ".") != (squares[i] == ".") for k in neighbours(i))}
        known = "".join("?" if i in between else q for i, q in enumerate(squares))
        anchor = (Anchor(known, state.ref_view, state.ref_reading, state.ref_circles)
                  if state.ref_reading is not None else None)
        return replace(state, known=known, anchor=anchor, held=None)

    def not_followed(self, state: TrackerState, fen: str) -> TrackerState:
        """The referee could not make a move of the last still board (AttentionNeeded, with the position it holds
        as `fen`): at the next still board, the still boards since the last one the referee did follow (the anchor)
        are read again with the moves the rules allow from its position (`movefit.follow`): each still board one
        move, none, or two, against the one before it. A still board read wrongly
        (a capture seen as the taker gone, a piece set down in glare) would otherwise leave the tracker's known
        board apart from the referee's for the rest of the game: every later move would be read against it. Kept
        as it is where there is no anchor, no move model, or the anchor is not of this position (the referee is
        behind the camera: the tracker's own board stands)."""
        from xqarb.referee.rules import FenError, Position

        try:
            squares = Position.from_fen(fen).squares()
        except FenError as exc:
            raise ValueError(f"not_followed: the referee's position is no FEN: {exc}") from exc
        a = state.anchor
        if a is None or not isinstance(self.move_model, MoveModel) or not _agrees(a.squares, squares):
            return state
        return replace(state, held=fen, pending=True)

    # -----------------------------------------------------------------------------------------------------------
    def needs_image(self, state: TrackerState, small: np.ndarray) -> bool:
        """False when a frame whose 1/8-scale grey picture is `small` is the same as the last one: the adapter
        then need not decode it at full size (JPEG decoders give 1/8 scale for a fraction of the cost); but the
        first `noise_frames` such frames measure the camera's noise (`_measure_noise`)."""
        return not self._unchanged(state, small.astype(np.float32)) or len(state.noise) < self.config.noise_frames

    def _unchanged(self, state: TrackerState, small: np.ndarray) -> bool:
        if not (state.fit is not None and state.fault is None and not state.hand
                and float(small.mean()) >= self.config.black_level):
            return False
        # (where the camera's noise reaches over the change level, every frame of a still board is looked at: the
        # board is read from their mean)
        return self._same_small(state, small) and not noisy(state.noise, self.config)

    def _same_small(self, state: TrackerState, small: np.ndarray) -> bool:
        """Whether the frame at 1/8 scale (`small`, grey) is the last one looked at: nothing moved (no hand, no
        piece), whatever the camera's noise, which averages out at that scale."""
        if state.last_small is None or state.last_small.shape != small.shape:
            return False
        diff = np.abs(small - state.last_small)
        if float(diff.mean()) >= self.config.unchanged_level:
            return False
        return float(cv2.blur(diff, (3, 3)).max()) < self.config.unchanged_peak

    def step(self, state: TrackerState, image: np.ndarray | None, t_us: int, frame_sha256: str | None = None, *,
             small: np.ndarray | None = None) -> tuple[TrackerState, list[Observation]]:
        """One frame. `small` (optional) is the frame at 1/8 scale in grey, e.g. from a reduced JPEG decode; with
        it, `image` may be None when `needs_image` said the frame is unchanged."""
        cfg = self.config
        recent = state.recent
        if frame_sha256 is not None:
            recent = (*recent, frame_sha256)[-cfg.evidence_keep:]
        state = replace(state, recent=recent, frames=state.frames + 1)
        obs: list[Observation] = []

        def emit(kind: str, **fields: Any) -> None:
            obs.append(Observation(kind, t_us, fields, frame_sha256, recent))

        def fault(reason: str) -> tuple[TrackerState, list[Observation]]:
            return self._fault(state, reason, emit, obs)

        valid = isinstance(image, np.ndarray) and image.ndim == 3 and image.size > 0
        if small is None:
            if not valid:
                return fault("corrupt frame: the image could not be decoded")
            small = eighth(image)
        small = small.astype(np.float32)
        mean, std = float(small.mean()), float(small.std())
        if mean < cfg.black_level:
            return fault(f"black frame (mean brightness {mean:.0f} of 255): lens covered, no light or camera off")
        if mean > cfg.washed_level and std < cfg.washed_spread:
            return fault("washed-out frame: overexposed or glare over the whole view")

        # The same picture as the last frame: nothing to look at, only time passes (the cheap path).
        if self._unchanged(state, small):
            state = replace(state, skipped=state.skipped + 1)
            if valid and len(state.noise) < cfg.noise_frames:
                state = self._measure_noise(state, image)
            return self._maybe_stable(state, None, t_us, emit, obs)
        if not valid:
            return fault("corrupt frame: the image could not be decoded")

        if state.fit is None or not state.calibrated:
            return self._calibrate(state, image, small, t_us, emit, obs)

        view = warp_board(image, tops_h(state.fit.homography, state.tops)).bgr
        sharp = _sharpness(view)
        if sharp < cfg.blur_ratio * state.calib_sharpness:
            return fault(f"blurred frame (sharpness {sharp:.0f}, calibrated at {state.calib_sharpness:.0f}): "
                         "focus, motion or a smudged lens")
        nv = _norm(view)
        weight = dark_weight(view, cfg)
        last_view = state.last_view
        noise = noise_scale(state.noise, nv.shape, cfg)
        quiet = not state.hand and self._same_small(state, small)
        step_seen: list[np.ndarray] = []  # the last change since the last frame, before the noise's scale

        def step_map(nv: np.ndarray) -> np.ndarray | None:
            """Where the view changed since the last frame (noise and light drift stay below the change level)."""
            if last_view is None:
                return None
            step_seen[:] = [seen_change(_norm_change(last_view, nv), weight, state.beyond_picture)]
            return (step_seen[0] if noise is None else step_seen[0] * noise) > cfg.change_level

        step_change = step_map(nv)
        # the camera is sometimes bumped a little: follow small shifts of the whole view (a shift changes the
        # lines all over the view: a frame that did not change cannot have been one)
        if step_change is not None and _changed(step_change, cfg):
            dx, dy, resp = _half_scale_shift(last_view, nv)
            if resp > cfg.bump_response and cfg.shift_least_px < np.hypot(dx, dy) < cfg.shift_most * S:
                fit = _shift_fit(state.fit, dx, dy)
                view = warp_board(image, tops_h(fit.homography, state.tops)).bgr
                nv, weight = _norm(view), dark_weight(view, cfg)
                step_change = step_map(nv)
                state = replace(state, fit=fit)

        def ref_map(nv: np.ndarray) -> np.ndarray | None:
            """How the view differs from the last still board, point by point (None before there is one)."""
            if state.ref_view is None:
                return None
            return seen_change(_norm_change(self._ref_norm(state), nv), weight, state.beyond_picture, noise)

        changed = ref_map(nv)
        edge = state.picture_edge
        hand_mask = _hand_mask(changed, cfg, edge) if changed is not None else None
        hand = hand_mask is not None and bool(hand_mask.any())
        support = _view_support(view, state.tops)
        # (what moved on the board, for stillness: the camera's specks of noise left out)
        moved = _solid(step_change, cfg) if step_change is not None else None
        still = moved is not None and not _changed(moved, cfg)
        lost = still and support < cfg.lost_ratio * state.calib_support
        if (not hand or lost) and support < cfg.support_ratio * state.calib_support and state.ref_view is not None:
            # A bump while a hand was over the board is not followed frame to frame (the hand's own motion hides
            # the shift): line the view up with the last still board first, which keeps that board to compare
            # with (e.g. the camera moved 5 px as the rook b0-b6 was set down; found again from scratch,
            # the board had nothing to compare with and the move was lost)
            realigned = self._realigned(state, image, nv)
            if realigned is not None:
                fit, view, nv = realigned
                weight = dark_weight(view, cfg)
                state = replace(state, fit=fit)
                support = _view_support(view, state.tops)
                step_change = step_map(nv)
                moved = _solid(step_change, cfg) if step_change is not None else None
                changed = ref_map(nv)
                assert changed is not None
                hand_mask = _hand_mask(changed, cfg, edge)
                hand = bool(hand_mask.any())
        if (not hand or lost) and support < cfg.support_ratio * state.calib_support:
            found = self._found_again(state, image, t_us, emit)
            if isinstance(found, str):
                return fault(found)
            state, view = found
            edge = state.picture_edge
            nv, weight = _norm(view), dark_weight(view, cfg)
            step_change = step_map(nv)
            moved = _solid(step_change, cfg) if step_change is not None else None
            changed, hand_mask, hand = None, None, False
        state = replace(state, fault=None)
        # something on the board moved since the last frame
        moving = moved is None or (_changed(moved, cfg) and _blobs_moved(moved, cfg))
        if not hand and not moving and changed is not None and step_change is not None:
            moving = _creeping_in(changed, step_change, cfg, edge)
        if hand:
            assert hand_mask is not None
            state, hand = self._hand_stays(state, hand_mask, moved, nv, t_us, ref_map)

        if hand:
            if not state.hand:
                emit("HandEntered")
            tip = _hand_tip(hand_mask, cfg)
            tips = (state.hand_tips if state.hand else ()) + ((tip,) if tip is not None else ())
            lifted, maybe = self._lifts(state, view, hand_mask, emit)
            state = replace(state, hand=True, still_since=None, quiet_since=state.hand_moved_at, pending=True,
                            lifted=frozenset(lifted),
                            maybe_lifted=frozenset(maybe), hand_tips=tips, still_views=None,
                            last_small=small, last_view=nv, last_full=view)
            return state, obs

        if state.hand:
            emit("HandLeft")
            # 5.7: the board has been still since the hand last moved
            left = state.hand_moved_at if state.hand_moved_at is not None else t_us
            state = replace(state, hand=False, still_since=left, hand_moved_at=None, maybe_lifted=frozenset(),
                            quiet_since=t_us if moving else left)
        elif moving and state.still_since is not None:
            state = replace(state, still_since=t_us, quiet_since=t_us, pending=True)
        elif state.still_since is None:
            state = replace(state, still_since=t_us, quiet_since=t_us)
        state = self._camera_noise(state, quiet, step_seen[0] if step_seen else None, view)
        state = replace(state, last_small=small, last_view=nv, last_full=view)
        return self._maybe_stable(state, view, t_us, emit, obs)

    def _camera_noise(self, state: TrackerState, quiet: bool, step_seen: np.ndarray | None,
                      view: np.ndarray) -> TrackerState:
        """A frame with no hand in view: its change since the last frame (`step_seen`, before the noise's scale) is
        the camera's noise where nothing moved (`quiet`), and where that noise is grainy the frames since the view
        last changed are summed (the still board is read from their mean)."""
        cfg = self.config
        if quiet and step_seen is not None:
            # nothing moved since the last frame, and no hand was over the board: all its change is the camera's
            state = replace(state, noise=(*state.noise, noise_levels(step_seen, cfg))[-cfg.noise_frames:])
        if noisy(state.noise, cfg):
            # the camera's noise is new in each frame, the board is not: the frames since the view last changed kept
            kept = state.still_views
            kept = (kept[0] + view, kept[1] + 1) if quiet and kept is not None else (view.astype(np.float32), 1)
            state = replace(state, still_views=kept)
        elif state.still_views is not None:
            state = replace(state, still_views=None)
        return state

    def _measure_noise(self, state: TrackerState, image: np.ndarray) -> TrackerState:
        """The state with the camera's noise measured (`hand.noise_levels`) on a frame that is the last one looked at
        to 1/8 scale (`_unchanged`: nothing moved since): its change against that one, in full, is all the camera's.
        At 1/8 scale a grainy picture's noise averages out; in full it may cross the change level over much of the
        view, and read as a hand that never leaves. Nothing else of the state changes: the frame is skipped as
        ever."""
        if state.fit is None or state.last_view is None:
            return state
        cfg = self.config
        view = warp_board(image, tops_h(state.fit.homography, state.tops)).bgr
        change = seen_change(_norm_change(state.last_view, _norm(view)), dark_weight(view, cfg), state.beyond_picture)
        return replace(state, noise=(*state.noise, noise_levels(change, cfg))[-cfg.noise_frames:])

    def _found_again(self, state: TrackerState, image: np.ndarray, t_us: int,
                     emit: Emit) -> tuple[TrackerState, np.ndarray] | str:
        """The lines are no longer where the board was (the camera or the board moved): the board found again,
        BoardCalibrated (and the points the picture now misses), and the state to read the still board afresh in
        the new geometry, with its view; or why no board was found."""
        try:
            fit = find_board(image)
        except NoBoardFound as exc:
            return f"board lost: the camera or the board moved ({exc.reason})"
        fit = _keep_orientation(state.fit, fit)
        view = warp_board(image, tops_h(fit.homography, state.tops)).bgr
        unseen, outside = self._board_seen(image.shape, fit, state.tops, emit, reported=state.unseen)
        # the reference must be re-taken in the new geometry: keep the known squares, re-read at stability
        # (and the anchor's view is of the old one: no looking again from it until the referee's next move)
        return replace(state, fit=fit, calib_support=_view_support(view, state.tops),
                       calib_sharpness=_sharpness(view), fault=None, still_since=t_us, unseen=unseen,
                       outside=outside, ref_view=None, pending=True, anchor=None, held=None, noise=(),
                       still_views=None, misread=frozenset()), view

    def _board_seen(self, image_shape: tuple[int, ...], fit: BoardFit, tops: Tops | None, emit: Emit,
                    reported: frozenset[int] = frozenset(),
                    ) -> tuple[frozenset[int], tuple[np.ndarray, np.ndarray] | None]:
        """BoardCalibrated for the board found (`fit`), and the points its picture does not show, said in a
        CameraFault unless they are those already `reported` (the operator must know at calibration that the camera
        misses points, not find it out from moves lost): (those points, `tops.outside_picture`)."""
        cfg = self.config
        emit("BoardCalibrated", corners=[[float(x), float(y)] for x, y in fit.corners],
             homography=[float(v) for v in (fit.homography / fit.homography[2, 2]).ravel()])
        unseen = unseen_points(image_shape, fit.homography, tops, cfg)
        if unseen and unseen != reported:
            emit("CameraFault", reason=unseen_reason(unseen))
        return unseen, outside_picture(image_shape, fit.homography, tops, cfg)

    def _fault(self, state: TrackerState, reason: str, emit: Emit,
               obs: list[Observation]) -> tuple[TrackerState, list[Observation]]:
        # one CameraFault per onset (and per change of reason), not one per frame
        if state.fault != reason:
            emit("CameraFault", reason=reason)
        # (and the board is looked at again once the camera sees it: a move made while it could not, a hand's
        # work under a blurred view, is found then; e.g. the last move made during 2.5 s of blur)
        return replace(state, fault=reason, last_small=None, still_since=None, quiet_since=None, pending=True), obs

    def _calibrate(self, state: TrackerState, image: np.ndarray, small: np.ndarray, t_us: int, emit: Emit,
                   obs: list[Observation]) -> tuple[TrackerState, list[Observation]]:
        """A frame of a board not yet calibrated: the board found (or the given fit measured on it), BoardCalibrated,
        and the still board read once the time is up."""
        cfg = self.config
        if state.fit is not None:
            fit = state.fit  # given from outside: this first frame only measures it
        else:
            # finding a board costs seconds: while none is found, look again only every `find_every_us`
            if state.last_find is not None and 0 <= t_us - state.last_find < cfg.find_every_us:
                return state, obs
            state = replace(state, last_find=t_us)
            try:
                fit = find_board(image)
            except NoBoardFound as exc:
                return self._fault(state, f"no board found: {exc.reason}", emit, obs)
        view = warp_board(image, fit.homography).bgr
        # tall pieces seen steeply: their top faces stand far off their points; read through their plane
        tops = measure_tops(view, fit.homography, cfg)
        if tops is not None:
            view = warp_board(image, tops_h(fit.homography, tops)).bgr
        sharp = _sharpness(view)
        unseen, outside = self._board_seen(image.shape, fit, tops, emit)
        state = replace(state, fit=fit, calibrated=True, calib_support=_view_support(view, tops), tops=tops,
                        unseen=unseen, outside=outside,
                        calib_sharpness=sharp, fault=None, last_small=small, last_view=_norm(view),
                        still_since=t_us, quiet_since=t_us, pending=True,
                        ref_view=None, hand=False, last_full=view, noise=(), still_views=None)
        return self._maybe_stable(state, view, t_us, emit, obs)

    def _hand_stays(self, state: TrackerState, hand_mask: np.ndarray, moved: np.ndarray | None, nv: np.ndarray,
                    t_us: int, ref_map: Callable[[np.ndarray], np.ndarray | None]) -> tuple[TrackerState, bool]:
        """Whether the hand seen (`hand_mask`) is still over the board, and the state with when it last moved."""
        cfg = self.config
        hand = True
        # A hand moves. A large change that stands still is the board's (a piece moved next to another, a
        # vacated edge point with its shadow), unless it was a moving hand a moment ago: a hand resting on a
        # piece (5.1 touch) stays a hand for `hand_rest_us` (its frames' times give or take `frame_jitter_us`), or
        # `hand_still_us` while it reaches in over the edge of the board.
        # (or, where a hand was over the board a frame ago, anything on the board moved as a hand moves: the
        # mask's share alone is diluted where the mask is larger than the hand. e.g. a camera
        # shifted by under a pixel made the hand's mask 68 cells, the fingers over g0 and h0 at the corner
        # moved 800-1,700 px a frame, 1.2 % of the mask; the hand read as resting, was lined up at 3.6 cells,
        # under an arm's 4, and gone, and the board read still at once with the fingers on it as touches)
        # A blob that stood still over the last frame looked at (a hand at rest, or the board's own change once the
        # hand has gone) moves again only where a part of it as large as a hand's stir changed: the camera's noise
        # on a still blob flickers in lone specks at random, which alone made 2-4 % of a still blob at the view's
        # edge in one frame in four, and it read as a hand for as long as the board stood still (the next move fell
        # into the same still board). A hand in motion keeps moving on smaller parts (fingers settling on a piece):
        # counted in full, as a hand entering is.
        settled = state.hand and not state.hand_stirred
        if (moved is None or hand_moved(moved, hand_mask, cfg.hand_stir_cells if settled else 0.0, cfg)
                or (state.hand and _changed(moved, cfg) and _blobs_moved(moved, cfg))):
            return replace(state, hand_moved_at=t_us, hand_stirred=True), True
        state = replace(state, hand_stirred=False)
        if not state.hand or state.hand_moved_at is None:
            hand = False
        else:
            rest = t_us - state.hand_moved_at
            resting = rest >= cfg.hand_rest_us - cfg.frame_jitter_us
            edge = state.picture_edge
            if rest >= cfg.hand_still_us or (resting and not _reaches_in(hand_mask, cfg, edge)):
                hand = False
            elif resting and state.ref_view is not None:
                # A camera shifted by under a pixel while the hand was over the board (too little to follow
                # from frame to frame) changes every line against the last still board, and those changes
                # join the move's into one blob over the edge that stays "an arm" (e.g. 0.8
                # view px; 16,500 px changed, 2,400 once lined up; the board was still for 1.25 s before the
                # next move's hand came, and that move's snapshot was lost): look at it lined up
                shift = _still_shift(self._ref_norm(state), nv, cfg.resting_shift_px, cfg=cfg)
                lined_up = ref_map(_shifted(nv, *shift)) if shift is not None else None
                if lined_up is not None:
                    hand = _reaches_in(_hand_mask(lined_up, cfg, edge), cfg, edge)
        return state, hand

    def _lifts(self, state: TrackerState, view: np.ndarray, hand_mask: np.ndarray,
               emit: Emit) -> tuple[set[int], set[int]]:
        """The pieces lifted with the hand over the board (PieceLifted for each new one), and those seen gone in
        this frame only (lifted if seen again in the next)."""
        cfg = self.config
        lifted = set(state.lifted)
        maybe: set[int] = set()
        if state.known is not None and state.ref_reading is not None:
            reading = read_view(view, quick=True, tops=state.tops)
            # a piece next to the hand is partly hidden by it: only points well clear of the hand count
            # (and an arm is one: the hull of all its blobs, for its middle over plain board changes too little
            # to show and may split it in two; e.g. pieces under a forearm between the fist and the
            # sleeve at the edge, read as lifted)
            k = round(cfg.clear_of_hand * S) | 1
            cover = cv2.dilate(_whole_hull(hand_mask), np.ones((k, k), np.uint8))

            def under_hand(p: int) -> bool:
                x, y = _pt(p)
                return bool(cover[min(y, cover.shape[0] - 1), min(x, cover.shape[1] - 1)])

            held = [i for i in range(90) if state.known[i] not in ".?"]
            typical = float(np.median(state.ref_reading.density[held])) if held else 0.0
            outlines: Outlines | None = None
            grey: np.ndarray | None = None  # (the view in grey and the empty points' printed lines: once asked)
            bare: list[float] = []
            for i in range(90):
                if state.known[i] in ".?" or i in lifted or i in state.unseen:  # only a piece known to stand there
                    # (and seen) is lifted
                    continue
                if under_hand(i):
                    continue  # under the hand: nothing can be told
                # and its own ink, not only its share of this frame's strongest (a hand's edges are strong
                # ink too and lower every other point's share), is mostly gone
                # (and only for a piece whose ink read clearly before: a faint one's reading is mostly noise)
                if (reading.occupied[i] < cfg.lift_ink_gone and state.ref_reading.occupied[i] > cfg.lift_ink_was
                        and reading.density[i] < cfg.lift_ink_left * state.ref_reading.density[i]
                        and state.ref_reading.density[i] >= cfg.lift_ink_typical * typical):
                    # in two frames running: one frame's dip (exposure reacting to the hand, its shadow
                    # passing) is no lift
                    if i in state.maybe_lifted:
                        # and its round outline left with it: a piece whose ink washes out on a blurred or
                        # glaring frame still stands there (e.g. ten and five false lifts
                        # of 40 moves; over those and 200, a lifted piece's outline fell by 0.51-0.67, that of
                        # a piece still there moved by under 0.12)
                        if state.ref_view is not None:
                            outlines = outlines or Outlines(view, state.ref_view, state.ref_circles, cfg)
                            if float(outlines.rise()[i]) > -cfg.lift_outline_fall:
                                continue
                        # and the point shows the board's printed lines, as a lifted piece leaves it: a palm
                        # or a forearm the hand's mask missed (skin on yellow wood changes the view little)
                        # hides them and the piece alike (e.g. a palm over d8 as the cannon
                        # c6 was lifted, the lines there 0.00 of the empty points' median)
                        if grey is None:
                            grey = cv2.cvtColor(view, cv2.COLOR_BGR2GRAY).astype(np.float32)
                            crossings = marks_at(POINTS_PX, state.tops)
                            bare = [_line_contrast(grey, k, cfg=cfg, at=crossings[k]) for k in range(90)
                                    if state.known[k] == "." and not under_hand(k)]
                        if _lines_hidden(_line_contrast(grey, i, cfg=cfg, at=crossings[i]), bare, cfg.lift_lines,
                                         cfg=cfg):
                            continue
                        lifted.add(i)
                        emit("PieceLifted", point=point_name(i))
                    else:
                        maybe.add(i)
        return lifted, maybe

    @staticmethod
    def _ref_norm(state: TrackerState) -> np.ndarray:
        assert state.ref_view is not None
        return state.ref_norm if state.ref_norm is not None else _norm(state.ref_view)

    def _realigned(self, state: TrackerState, image: np.ndarray,
                   nv: np.ndarray) -> tuple[BoardFit, np.ndarray, np.ndarray] | None:
        """The fit shifted so that the view lines up with the last still board again, with the view and its
        normalised form, where the shift brings the board's lines back (a camera bumped a little); else None."""
        assert state.fit is not None
        cfg = self.config
        # (windowed: unwindowed, the view's edges, where the warp ends, outweigh the board's lines, and a shift of
        # several view pixels is found as one or two)
        dx, dy, resp = _half_scale_shift(self._ref_norm(state), nv, windowed=True)
        if resp < cfg.realign_response or not cfg.shift_least_px < np.hypot(dx, dy) < cfg.shift_most * S:
            return None
        fit = _shift_fit(state.fit, dx, dy)
        view = warp_board(image, tops_h(fit.homography, state.tops)).bgr
        if _view_support(view, state.tops) < self.config.support_ratio * state.calib_support:
            return None
        return fit, view, _norm(view)

    # -----------------------------------------------------------------------------------------------------------
    def _maybe_stable(self, state: TrackerState, view: np.ndarray | None, t_us: int, emit,
                      obs: list[Observation]) -> tuple[TrackerState, list[Observation]]:
        """The still board read once the board has been still for `stable_us` since the hand's last motion (5.7),
        or already after `quick_stable_us` where what it shows is clear (`still_clear`): else nothing yet."""
        if state.hand or not state.pending or state.still_since is None or state.fit is None:
            return state, obs
        if t_us - state.still_since >= self.config.stable_us:
            return self._stable(state, view, t_us, emit, obs)
        if not self._may_be_quick(state, t_us):
            return state, obs
        # read now: taken where the evidence is clear, else forgotten (read again at the full still time, from the
        # state as it was: what it finds then is what it would have found without this look)
        mark = len(obs)
        read, _ = self._stable(state, view, t_us, emit, obs)
        if self._quick_unclear(state, read, obs[mark:]) is None:
            return read, obs
        del obs[mark:]
        return replace(state, quick_tried=state.still_since), obs

    def _may_be_quick(self, state: TrackerState, t_us: int) -> bool:
        """Whether the still board may be read before `stable_us`: the view unchanged from frame to frame, and the
        hand's last motion, `quick_stable_us` ago; a still board to compare with (not the game's first, nor one
        read again from the anchor), and not already read early in this still time."""
        cfg = self.config
        least = cfg.quick_stable_us - cfg.frame_jitter_us
        return (cfg.quick_stable_us < cfg.stable_us and state.quiet_since is not None
                and t_us - state.quiet_since >= least and state.still_since is not None
                and t_us - state.still_since >= least and state.quick_tried != state.still_since
                and state.known is not None and state.ref_view is not None and state.held is None)

    def _quick_unclear(self, before: TrackerState, read: TrackerState, obs: list[Observation]) -> str | None:
        """Why the still board read early (`read`, with its observations `obs`) is not to be taken yet; None where
        its evidence is clear (`still_clear.unclear`)."""
        stable = [o for o in obs if o.type == "BoardStable"]
        if (not stable or before.known is None or before.ref_reading is None or read.ref_view is None
                or read.ref_reading is None):
            return "nothing new"
        placed = [point_index(o.fields["point"]) for o in obs if o.type == "PiecePlaced"]
        touched = any(o.type in ("PieceNudged", "PieceMisaligned") for o in obs)
        changed = _norm_change(self._ref_norm(before), _norm(read.ref_view))
        return unclear(before.known, stable[-1].fields["squares"], placed, touched, read.ref_reading,
                       before.ref_reading, changed, self.config)

    def _stable(self, state: TrackerState, view: np.ndarray | None, t_us: int, emit,
                obs: list[Observation]) -> tuple[TrackerState, list[Observation]]:
        """The still board read: what changed against the last one, reported (PiecePlaced ... BoardStable)."""
        cfg = self.config
        if view is None:
            # the frame did not change but the still time is up: the last full view stands
            view = state.last_full
            if view is None:
                return state, obs
        if state.still_views is not None and state.still_views[1] > 1:
            # a grainy picture (the camera's noise over the change level): the still frames' mean, whose noise is
            # a square root of their count smaller
            view = np.clip(np.rint(state.still_views[0] / state.still_views[1]), 0, 255).astype(np.uint8)
        if state.ref_view is not None:
            # the camera may have been bumped while the hand was over the board: line the view up with the last
            # still board before comparing them point by point
            shift = _still_shift(self._ref_norm(state), _norm(view), cfg.stable_shift_px, cfg=cfg)
            if shift is not None:
                view = _shifted(view, *shift)
                state = replace(state, fit=_shift_fit(state.fit, *shift))
        reading = read_view(view, self.classifier, tops=state.tops)
        # (the last still board's score is carried only with its view: state.ref_circles is set with ref_view)
        outlines = Outlines(view, state.ref_view, state.ref_circles if state.ref_view is not None else None, cfg)
        # (each point's change against the last still board, made once: the joint reading and the interpretation)
        change = _point_change(state.ref_view, view, cfg=cfg) if state.ref_view is not None else None
        if state.known is not None:
            reading = self._joint(reading, state.known, view, outlines, state, change)
            # (and the sides of the pieces on the points that changed from their look where the ink's colour fails
            # on this camera)
            reading = look_colour(reading, _seen_known(state.known, state.unseen), view,
                                  _changed_points(change, cfg), cfg=cfg)
        weighed_now = False  # the change to this still board was weighed in looking again (the anchor's trail)
        if state.held is not None and state.anchor is not None and isinstance(self.move_model, MoveModel):
            looked, weighed = self._look_again(state, view, reading, emit)
            if looked is not None:
                return looked, obs
            state, weighed_now = self._not_looked(state, weighed, emit)
        if state.known is None:
            start = state.start or cfg.start_squares
            squares = self._first_squares(reading, start, cfg, oriented=state.fit_given, view=view,
                                          unseen=state.unseen, tops=state.tops)
            if state.left is not None:
                # a new game (`new_game`): the start, or nothing yet (the pieces are still being set up)
                if squares is None or start is None or _ink_order(reading, start) < _ink_order(reading, state.left):
                    return replace(state, pending=False), obs
                if squares[0] != "!":  # (seen from the other end, it is compared again once turned)
                    state = replace(state, left=None)
            fit = state.fit
            doubt = _implausible(reading, cfg=cfg) if squares is None else None
            if doubt is not None:
                # the lattice found is not a board with a position on it (a tablecloth, the wrong lines): say so
                # and look again later rather than report a guess
                emit("CameraFault", reason=f"board not confirmed: {doubt}")
                # (a fit given by hand is kept: the operator said where the board is; its frame is re-measured)
                return replace(state, fit=fit if state.fit_given else None, calibrated=False,
                               fault="board not confirmed", ref_view=None, last_full=None,
                               last_small=None, last_find=t_us, pending=True), obs
            if squares is not None and squares[0] == "!":  # the start position seen from the other end
                squares = squares[1:]
                from .board import rotate_half_turn

                fit = fit_from_h(rotate_half_turn(fit.board_to_image), fit.method, fit.score)
                emit("BoardCalibrated", corners=[[float(x), float(y)] for x, y in fit.corners],
                     homography=[float(v) for v in (fit.homography / fit.homography[2, 2]).ravel()])
                return replace(state, fit=fit, pending=True, ref_view=None, last_full=None,
                               tops=half_turned(state.tops)), obs
            if squares is None:
                squares = reading.squares()
            else:  # (the start's points read, as every later board's, from the cues together where the ink fails)
                reading = self._joint(reading, squares, view, outlines, state, None)
            placed, nudged, misaligned, doubted, unsure_of, ink_only = [], [], [], {}, {}, []
            ref_circles = None
        else:
            lvl = _change_level(change, cfg) if change is not None else cfg.change_level
            squares, placed, nudged, misaligned = interpret(state.known, state.ref_view, state.ref_reading, view,
                                                            reading, cfg, outlines, change,
                                                            _set_down_shift(state.hand_tips, cfg), state.tops)
            squares = _settled_from_between(state.known, squares, placed, dict(state.unsure_of))
            if change is not None:
                squares, placed = _set_onto_by_outline(state.known, squares, placed, dict(state.unsure_of),
                                                       outlines, change, lvl, cfg)
            if (isinstance(self.move_model, MoveModel) and change is not None and state.ref_reading is not None
                    and not misaligned and in_doubt(state.known, squares)):
                # (the features need both views' round outlines, 2 x 20 ms: only where the rules are in doubt)
                feats = point_features(state.known, change, lvl, reading, state.ref_reading,
                                       outlines.discs(), outlines.ref_discs(), unlike_then(state.ref_view, view))
                fitted = refit(self.move_model, state.known, squares, feats)
                if fitted is not None:
                    squares, placed = fitted
                    nudged = [i for i in nudged if squares[i] == state.known[i]]
            # (a point left unsure that changed since may hold another piece now: e.g. a rook took the
            # cannon standing half-way; one whose ink alone disagreed is looked at again once it changed)
            unsure_of, settled = dict(state.unsure_of), frozenset[int]()
            if (unsure_of or state.ink_only) and change is not None:
                # (but a pair's point still unsure where a piece from elsewhere came to the other is the pair's
                # piece set onto its point under that hand: e.g. the rook between i8 and i7 and the
                # horse h9-i7)
                unsure_of = {i: c for i, c in unsure_of.items() if change[i] <= lvl
                             or (squares[i] == "?" and any(k in placed and unsure_of.get(k) == c
                                                           for k in neighbours(i)))}
                settled = frozenset(i for i in state.ink_only if change[i] <= lvl and squares[i] == state.known[i])
            changed = (frozenset(i for i in range(90) if change[i] >= cfg.change_half * lvl)
                       if change is not None else None)
            squares, doubted, unsure_of, ink_only = as_seen_twice(state.known, squares, outlines, reading,
                                                                  dict(state.doubted), unsure_of, misaligned, settled,
                                                                  cfg=cfg, changed=changed)
            ref_circles = outlines.computed()
            squares, misread = _misread_kept(state.known, squares, state.misread, change, lvl, cfg)
            state = replace(state, misread=misread)
        if state.unseen and state.known is not None:
            # a move with an end out of view is one move only where what is seen shows it plainly
            squares, placed = unseen_partners(state.known, squares, placed, state.unseen, reading, cfg)
            # what the picture does not show is as it was known (a move there is seen where it leaves or arrives)
            squares = "".join(state.known[i] if i in state.unseen else c for i, c in enumerate(squares))
            placed = [i for i in placed if i not in state.unseen]
            nudged = [i for i in nudged if i not in state.unseen]
            misaligned = [(a, b) for a, b in misaligned if a not in state.unseen and b not in state.unseen]
        for p in placed:
            emit("PiecePlaced", point=point_name(p))
        for p in nudged:
            emit("PieceNudged", point=point_name(p))
        # A piece between two points is reported once: seen again where both points are still unsure, it is no
        # news (re-reported with a still board that shows nothing new, the pair alone would read as the piece
        # moving from the one to the other: e.g. a rook set down off h9 towards the corner i9)
        misaligned = [(a, b) for a, b in misaligned if not (state.known[a] == "?" and state.known[b] == "?")]
        for a, b in misaligned:
            emit("PieceMisaligned", points=[point_name(a), point_name(b)])
        if squares != state.known or state.ref_view is None or placed or nudged or misaligned:
            emit("BoardStable", squares=state.as_reported(squares))
        new_known = "".join(("?" if c == "?" else c) for c in squares)
        # (the start is the referee's position too: the first anchor)
        if state.known is None:
            anchor = Anchor(new_known, view, reading, ref_circles)
        elif weighed_now and state.anchor is not None:
            last = replace(state.anchor.trail[-1], circles=ref_circles, squares=new_known)
            anchor = replace(state.anchor, trail=(*state.anchor.trail[:-1], last))
        else:
            anchor = state.anchor.then(Still(view, reading, ref_circles, new_known)) if state.anchor else None
        return replace(state, known=new_known, ref_view=view, ref_norm=_norm(view), ref_reading=reading, pending=False,
                       lifted=frozenset(), ref_circles=ref_circles, doubted=tuple(sorted(doubted.items())),
                       anchor=anchor, hand_tips=(),
                       ink_only=tuple(ink_only),
                       unsure_of=tuple(sorted(unsure_of.items()))), obs

    def _joint(self, reading: PointReading, known: str, view: np.ndarray, outlines: Outlines,
               state: TrackerState, change: np.ndarray | None) -> PointReading:
        """`reading` with its occupancy from the joint of the ink, the round outlines and the printed lines shown,
        calibrated on the position `known`, where the ink alone fails there (`joint_reading`); the points out of the
        picture (`state.unseen`) are not judged by. `change`: each point's change since the last still board.
        Only where the tracker reads through the pieces' top faces (`state.tops`: tall pieces seen steeply): on the
        board's plane the rules were tuned on faint inks read as they are (their outlines, marks read as ink), and
        the joint there cost four of test_tracker's hard scenes (a colour, a piece half-way, two moves)."""
        cfg = self.config
        if state.tops is None:
            return reading
        return joint_reading(reading, _seen_known(known, state.unseen), outlines.discs,
                             lambda: _lines_shown(view, marks_at(POINTS_PX, state.tops), cfg=cfg), cfg=cfg,
                             ink_weight=ink_weight_at_points((view.shape[1], view.shape[0]), state.tops),
                             changed=_changed_points(change, cfg),
                             ref_density=None if state.ref_reading is None else state.ref_reading.density,
                             ref_occupied=None if state.ref_reading is None else state.ref_reading.occupied)

    def _look_again(self, state: TrackerState, view: np.ndarray, reading: PointReading,
                    emit) -> tuple[TrackerState | None, Anchor]:
        """The still board `view` and those since the anchor read again, where the referee could not follow
        (`not_followed`): the legal moves from its position that clearly best explain them (`movefit.follow`),
        each reported as the still board it left (PiecePlaced, BoardStable), so that the referee takes them one
        by one. The state is None where none clearly does yet (the board is then read as ever, and the positions
        followed are carried on at the next still board; an arbiter may restore the position meanwhile); with it,
        the anchor with the changes weighed and the positions followed (this still board the last of its trail)."""
        cfg = self.config
        from xqarb.referee.rules import Position

        a, fen, model = state.anchor, state.held, self.move_model
        assert a is not None and fen is not None and isinstance(model, MoveModel)
        steps = [*a.trail, Still(view, reading, None, "")]
        prev = Still(a.view, a.reading, a.circles, a.squares)
        unsure: list[frozenset[int]] = []
        circles = None
        for k, st in enumerate(steps):
            unsure.append(frozenset(i for i in range(90) if prev.squares[i] == "?"))
            if st.table is None:
                assert prev.view is not None and st.view is not None
                outlines = Outlines(st.view, prev.view, prev.circles, cfg)
                change = _point_change(prev.view, st.view, cfg=cfg)
                feats = point_features(prev.squares, change, _change_level(change, self.config), st.reading,
                                       prev.reading, outlines.discs(), outlines.ref_discs(),
                                       unlike_then(prev.view, st.view))
                st = steps[k] = replace(st, table=change_table(model, prev.squares, feats))
                circles = outlines.computed()
                if k > 0:  # (its view was needed for this change only)
                    steps[k - 1] = replace(steps[k - 1], view=None)
            prev = st
        position = Position.from_fen(fen)
        # (the positions followed were carried through the still boards weighed then: those with their change)
        following, done = a.following, sum(st.table is not None for st in a.trail)
        if following is None or a.following_fen != fen:
            following, done = start_following(position), 0
        for k in range(done, len(steps)):
            following = follow_step(following, steps[k].table, k, unsure[k])
        weighed = replace(a, trail=tuple(steps), following=following, following_fen=fen)
        boards = follow(model, position.squares(), following, [st.table for st in steps], unsure)
        if boards is None:
            return None, weighed
        if _ends_out_of_view(position.squares(), boards, state.unseen):
            return None, weighed
        # The points the anchor left unsure (a piece between two points) stay so, the pair's piece followed, unless
        # a move took it off or put another there (e.g. the rook between a1 and a0, designated a1, then
        # a1-h1, told by h1 and the moves after): then the pair is as the moves left it.
        before, moved = position.squares(), set[int]()
        for board in boards:
            moved |= {i for i in range(90) if board[i] != before[i]}
            before = board
        moved |= {k for i in moved if a.squares[i] == "?" for k in neighbours(i) if a.squares[k] == "?"}

        def kept_unsure(board: str) -> str:
            return "".join("?" if a.squares[i] == "?" and i not in moved else board[i] for i in range(90))

        _report_moves(position.squares(), boards, kept_unsure, state, emit)
        known = kept_unsure(boards[-1])
        # (the referee takes these moves: this still board is the next anchor)
        anchor = Anchor(known, view, reading, circles)
        return replace(state, known=known, ref_view=view, ref_norm=_norm(view), ref_reading=reading, pending=False,
                       lifted=frozenset(), ref_circles=circles, doubted=(), ink_only=(), held=None, anchor=anchor,
                       hand_tips=(),
                       unsure_of=tuple((i, c) for i, c in state.unsure_of if known[i] == "?")), weighed

    def _not_looked(self, state: TrackerState, weighed: Anchor, emit: Emit) -> tuple[TrackerState, bool]:
        """The state to read a still board in as ever where looking again (`_look_again`, its anchor `weighed`) did
        not follow it, and whether its change was weighed in the anchor's trail (this still board the last)."""
        over = self._read_over(state, weighed, emit)
        if over is not None:
            # the still boards before this one followed by their readings: this one is read as ever against the
            # last of them, from the position the moves reached
            return over, False
        # nothing clearly explains it from there yet: the board is read as ever (against the last still board,
        # which may be this one: then nothing is new), and followed on from the anchor at the next one
        return replace(state, held=None, anchor=weighed), True

    def _read_over(self, state: TrackerState, weighed: Anchor, emit: Emit) -> TrackerState | None:
        """Where the move fit could not follow the still boards since the anchor (`_look_again`'s `weighed`: their
        changes weighed, this still board the last), those before this one followed by their rules' readings
        (`misread.read_over`: one legal move each, or none, at most one point read otherwise, its view unchanged),
        each move reported as the still board it left (PiecePlaced, BoardStable). The state, its known board the
        position the moves reach (the points read otherwise kept as it holds them, `misread`) and its anchor the last
        of those still boards (the last still board read: `ref_view`), this one yet to be read; None where they do
        not clearly show the moves."""
        from xqarb.referee.rules import Position

        model, fen = self.move_model, state.held
        trail = weighed.trail[:-1]
        if (not trail or fen is None or not isinstance(model, MoveModel) or state.ref_view is None
                or state.ref_reading is None or any(st.table is None for st in trail)):
            return None
        position = Position.from_fen(fen)
        over = read_over(position, [st.squares for st in trail], [st.table for st in trail], model.max_other,
                         model.min_end)
        if over is None or any(c == "?" for c in weighed.squares):
            return None  # (a piece left between two points: the move fit's, which follows such a pair)
        start = position.squares()
        if _ends_out_of_view(start, over.boards, state.unseen):
            return None
        _report_moves(start, over.boards, lambda board: board, state, emit)
        known = over.boards[-1]
        anchor = Anchor(known, state.ref_view, state.ref_reading, state.ref_circles)
        return replace(state, known=known, held=None, anchor=anchor, doubted=(), ink_only=(), unsure_of=(),
                       misread=over.misread)

    def _first_squares(self, reading: PointReading, start: str | None, cfg: TrackerConfig, *,
                       oriented: bool = False, view: np.ndarray | None = None,
                       unseen: frozenset[int] = frozenset(), tops: Tops | None = None) -> str | None:
        """The `start` position when the first board seen has its occupancy (colours decide which end is Red, unless
        the fit is `oriented`: given by hand with Red's corners named). `view`: the canonical view read, for the
        pieces' outlines and the printed lines where their inks do not tell (`tops`: the view is taken through the
        pieces' top faces, `tops.py`). The points `unseen` (outside the picture) are not compared."""
        if start is None:
            return None
        seen = np.array([i not in unseen for i in range(90)])
        occ = (reading.occupied > cfg.ink_piece)[seen]
        want = np.array([c != "." for c in start])[seen]
        dens = reading.density[seen]
        # a few points misread (glare, a shadow) do not make it another position: the game starts from the start.
        # Where the reading's scale is off (wood grain, a dim and blurred view), the points with the most ink
        # still are the start's: the strongest as many as the start has pieces, against the start's points
        n = int(want.sum())
        strongest = np.zeros(len(dens), bool)
        strongest[np.argsort(-dens, kind="stable")[:n]] = True
        # Where the edge points read like pieces (a board's frame, its printed numbers) and the corner pieces
        # faintly, the start is still told by the order of the inks: nearly every start point shows more ink than
        # nearly every other point (a random lattice or cloth orders them by chance, about half the pairs).
        order = float(np.mean(dens[want][:, None] > dens[~want][None, :]))
        if (min(int((occ != want).sum()), int((strongest != want).sum())) > cfg.start_tolerance
                and order < cfg.start_order):
            # The inks do not tell (a blurred board whose characters wash out, while the frame and the river's
            # text still read as ink), but the pieces' round outlines do: the same order, of how much a piece-sized
            # circle is centred near each point (e.g. the start's points 0.47 and more, the others 0.09
            # at most, where the inks ordered 81 % of the pairs)
            if view is None:
                return None
            disc = _outline_scores(view, cfg=cfg)[seen]
            if float(np.mean(disc[want][:, None] > disc[~want][None, :])) < cfg.start_order:
                # Nor one cue alone, but the cues together: a small blurred picture washes the characters out
                # and merges the tall pieces' outlines, while the bold printed lines still show where no piece
                # covers them (e.g. inks ordering 0.77 of the pairs, outlines 0.88, hidden lines 0.93: the
                # three's summed ranks 0.94). Without the inks too: where no character shows, the lines' ink left
                # bare at the empty points orders the inks backwards. A random lattice orders each cue, and so
                # their sums, by chance
                lines = _lines_shown(view, marks_at(POINTS_PX, tops), cfg=cfg)[seen]
                if max(_joint_order(want, dens, disc, -lines), _joint_order(want, disc, -lines)) < cfg.start_order:
                    return None
        if oriented:
            return start
        vote = orientation_vote(reading)
        if vote < 0:
            return "!" + start
        return start


# ---------------------------------------------------------------------------------------------------------------
# interpretation of a still board against the last one


# ---------------------------------------------------------------------------------------------------------------


def _ends_out_of_view(start: str, boards: Sequence[str], unseen: frozenset[int]) -> bool:
    """Whether a move of `boards` (each the board after one move from the one before, from `start`) has an end out
    of view: nothing there tells it from the other moves the change fits."""
    return any(board[i] != before[i] for before, board in pairwise([start, *boards]) for i in unseen)


def _report_moves(start: str, boards: Sequence[str], known_of: Callable[[str], str], state: TrackerState,
                  emit: Emit) -> None:
    """Each move of `boards` (from `start`, one after another) reported as the still board it left, so that the
    referee takes them one by one: a PiecePlaced for each point a piece came to, then the BoardStable of the board
    as the tracker holds it (`known_of`)."""
    for before, board in pairwise([start, *boards]):
        for i in range(90):
            if board[i] != "." and board[i] != before[i]:
                emit("PiecePlaced", point=point_name(i))
        emit("BoardStable", squares=state.as_reported(known_of(board)))


def _misread_kept(known: str, squares: str, misread: frozenset[int], change: np.ndarray | None, level: float,
                  cfg: TrackerConfig) -> tuple[str, frozenset[int]]:
    """`squares` with the points read otherwise than the referee's position holds them (`misread`) kept as `known`
    has them where their view has not changed since the last still board (under `change_half` of its `level`): the
    reading there is the camera's misreading, seen again. A point whose view changed (a piece moved off or onto it)
    is read as ever, and no longer so kept (a point read as the position holds it stays so kept while its view is
    unchanged: the rules read a point against the last still board, and the misreading may come back)."""
    if not misread or change is None:
        return squares, frozenset()
    kept = frozenset(i for i in misread if change[i] < cfg.change_half * level and known[i] != "?")
    return "".join(known[i] if i in kept else c for i, c in enumerate(squares)), kept
