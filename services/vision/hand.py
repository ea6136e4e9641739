"""A hand over the board: where the view changed against the last still board, which blobs are a hand or an arm
reaching in over the edge, whether what changed since the last frame moved, and where the hand's fingertips went.
Pure: arrays in, values out."""

from __future__ import annotations

import cv2
import numpy as np

from .occupancy import MARGIN, S
from .settings import DEFAULTS, TrackerConfig


def _changed(step_change: np.ndarray, cfg: TrackerConfig = DEFAULTS) -> bool:
    """Whether the view changed since the last frame: more than `moved_share` of it beyond the change level."""
    return float(step_change.mean()) > cfg.moved_share


def dark_weight(view: np.ndarray, cfg: TrackerConfig = DEFAULTS) -> np.ndarray | None:
    """Per pixel of the view, how much its normalised change (the grey over its local mean, one spacing across) is
    worth: 1 where the local mean is `dark_floor` or brighter, less in proportion below it. The camera's noise is a
    few grey levels whatever the light, so in deep shade (a sun's shadow, a dark strip at the picture's edge) it is
    a large share of the local mean, and the normalised change there is mostly noise that would read as a hand that
    never leaves; a change counts there only as many grey levels as at `dark_floor`. None where no part of the view
    is that dark (most views: nothing to weigh)."""
    grey = cv2.cvtColor(view, cv2.COLOR_BGR2GRAY).astype(np.float32)
    local = cv2.blur(grey, (S + 1, S + 1))
    if float(local.min()) >= cfg.dark_floor:
        return None
    return np.minimum(local * (1.0 / cfg.dark_floor), 1.0)


def seen_change(change: np.ndarray, weight: np.ndarray | None, outside: np.ndarray | None,
                noise: np.ndarray | None = None) -> np.ndarray:
    """A normalised change map (`frames._norm_change`) as far as the camera can tell it: weighed by `dark_weight`,
    nothing where the view shows no pixel of the picture (`outside`, `tops.outside_picture`), and scaled down where
    the camera's own noise reaches the change level (`noise`: `noise_scale`)."""
    if weight is not None:
        change = change * weight
    if outside is not None:
        change = np.where(outside, np.float32(0.0), change)
    if noise is not None:
        change = change * noise
    return change


def noise_levels(change: np.ndarray, cfg: TrackerConfig = DEFAULTS) -> np.ndarray:
    """How far the camera's noise reaches in each cell of the view (a grid spacing square, the view's last row and
    column of cells cut short): the `noise_quantile` of `change`, a `seen_change` map between two frames in which
    nothing moved (no hand, no piece), so that all of it is the camera's. The noise is the picture's, not the
    board's: a small picture blown up to the view, dim and grainy, and within it the parts in shade, where the
    normalised change divides the same few grey levels by a small local mean, reach far more than the sunlit ones
    (e.g. 0.13-0.15 under a tree's shade against 0.04-0.06 in its sunlit patches of the same view)."""
    step = cfg.noise_every
    sub = change[::step, ::step]  # (the map is smoothed over a couple of pixels: every other pixel tells as much)
    k = S // step
    h, w = sub.shape
    rows, cols = -(-h // k), -(-w // k)
    # (the cells cut short filled by reflection: their own pixels, about as many times each)
    sub = np.pad(sub, ((0, rows * k - h), (0, cols * k - w)), mode="reflect")
    cells = sub.reshape(rows, k, cols, k).transpose(0, 2, 1, 3).reshape(rows, cols, k * k)
    return np.quantile(cells, cfg.noise_quantile, axis=-1).astype(np.float32)


def noisy(levels: tuple[np.ndarray, ...], cfg: TrackerConfig = DEFAULTS) -> bool:
    """Whether the camera's noise (`noise_levels` of the last frames in which nothing moved) reaches over the change
    level in `grainy_share` of the view's cells or more: a picture grainy all over, not one with a shaded corner."""
    if not levels:
        return False
    reach = np.median(np.stack(levels), axis=0)
    return float(np.mean(reach > cfg.change_level)) >= cfg.grainy_share


def noise_scale(levels: tuple[np.ndarray, ...], shape: tuple[int, int],
                cfg: TrackerConfig = DEFAULTS) -> np.ndarray | None:
    """Per pixel of a view of `shape`, how much a change is worth against the camera's noise there: `levels`, the
    cells' `noise_levels` of the last few frames in which nothing moved, their median (one frame whose change was
    not all noise does not count); where that reaches over the change level, a change counts only as far as it
    stands out of the noise (scaled by the level over the noise's reach), elsewhere in full. A hand or a piece moved
    changes its pixels far beyond the noise's reach; the noise alone then no longer crosses the level but in lone
    specks, and a still board is seen still. None where the noise stays under the level everywhere (most views,
    every clear one: nothing to scale) or nothing is measured yet."""
    if not levels:
        return None
    reach = np.median(np.stack(levels), axis=0)
    if float(reach.max()) <= cfg.change_level:
        return None
    # (the level over the noise where the noise reaches over it; 1, in full, elsewhere)
    cell = np.float32(cfg.change_level) / np.maximum(reach, np.float32(cfg.change_level))
    rows, cols = cell.shape
    # (from cell to cell linearly, as the light that sets the noise changes; cut to the view's own size)
    full = cv2.resize(cell.astype(np.float32), (cols * S, rows * S), interpolation=cv2.INTER_LINEAR)
    return full[:shape[0], :shape[1]]


def _changed_mask(changed: np.ndarray, cfg: TrackerConfig) -> np.ndarray:
    """Where the view differs from the last still board over the change level, specks of a pixel or two left out."""
    return cv2.morphologyEx((changed > cfg.change_level).astype(np.uint8), cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))


def _components(mask: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    """The 8-connected blobs of a 0/1 uint8 mask: their count (background included), labels and stats, as
    `cv2.connectedComponentsWithStats` gives them. By Grana's block-based labelling, which gives the same labels
    and stats as OpenCV's default for 8-connectivity (Spaghetti) at a third of the time on the top view (0.26 ms
    against 0.77, one core): five calls a changing frame made it a tenth of the tracker's time."""
    n, labels, stats, _ = cv2.connectedComponentsWithStatsWithAlgorithm(mask, 8, cv2.CV_32S, cv2.CCL_GRANA)
    return n, labels, stats


def _edges_touched(stat: np.ndarray, h: int, w: int) -> list[bool]:
    """Which edges of an h x w view a blob (its row of `connectedComponentsWithStats`' stats) touches: top,
    bottom, left, right."""
    x, y, bw, bh = (int(v) for v in stat[:4])
    return [y <= 1, y + bh >= h - 1, x <= 1, x + bw >= w - 1]  # (within a pixel of the edge)


def _touches_edge(stat: np.ndarray, h: int, w: int) -> bool:
    """Whether a blob (its row of `connectedComponentsWithStats`' stats) touches the edge of an h x w view."""
    return any(_edges_touched(stat, h, w))


def _at_picture_edge(labels: np.ndarray, edge: np.ndarray | None) -> set[int]:
    """The blobs (labels) that touch `edge`, the band just inside the picture's edge where the picture cuts the
    view (`tops.outside_picture`): an arm reaching in over the picture's edge enters the view there, not at the
    view's own edge (the change beyond the picture is not measured)."""
    if edge is None:
        return set()
    return {int(k) for k in np.unique(labels[edge])} - {0}


def _hand_mask(changed: np.ndarray, cfg: TrackerConfig, edge: np.ndarray | None = None) -> np.ndarray:
    """Changed blobs too large to be a piece, or reaching in over the edge of the view (or of the picture, `edge`:
    `_at_picture_edge`): a hand or an arm."""
    m = _changed_mask(changed, cfg)
    if not m.any():
        return m  # nothing changed against the last still board (most frames): no blob to look at
    # fingers, knuckles and the arm show as separate outlines: join what lies within `hand_join`
    k = round(cfg.hand_join * S) | 1
    m = cv2.morphologyEx(m, cv2.MORPH_CLOSE, np.ones((k, k), np.uint8))
    n, labels, stats = _components(m)
    out = np.zeros_like(m)
    cell = S * S
    h, w = m.shape
    cut = _at_picture_edge(labels, edge)
    for k in range(1, n):
        area = stats[k, cv2.CC_STAT_AREA]
        at_edge = _touches_edge(stats[k], h, w) or k in cut
        # an arm reaches in over the edge; a piece on an edge point (with its shadow) can touch the edge too
        if area > cfg.hand_cells * cell or (at_edge and area > cfg.edge_hand_cells * cell):
            # the inside of a hand or arm is uniform and shows little change once lighting is normalised away:
            # the blob's convex hull is what it covers (that of its outline, found within its bounding box: the
            # same hull as of all its pixels, a twelfth of the time)
            x0, y0, bw, bh = (int(v) for v in stats[k, :4])
            blob = (labels[y0:y0 + bh, x0:x0 + bw] == k).astype(np.uint8)
            outline, _ = cv2.findContours(blob, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE, offset=(x0, y0))
            cv2.fillPoly(out, [cv2.convexHull(np.vstack(outline))], 1)
    return out


def _whole_hull(mask: np.ndarray) -> np.ndarray:
    """The convex hull of all of `mask`'s blobs together, as a mask (0/1, uint8)."""
    out = np.zeros(mask.shape, np.uint8)
    # (of the blobs' outer outlines: the same hull as of all their pixels, 0.12 ms instead of 2.3 for an arm)
    outlines, _ = cv2.findContours(mask.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if outlines:
        cv2.fillPoly(out, [cv2.convexHull(np.vstack(outlines))], 1)
    return out


def _hand_tip(mask: np.ndarray, cfg: TrackerConfig = DEFAULTS) -> tuple[float, float, int] | None:
    """Where the fingertips are of a hand reaching in over one edge of the view (`_hand_mask`'s largest blob that
    touches exactly one edge): (u, v) on the board's grid in spacings (the middle of the blob's part farthest from
    that edge, within `tip_depth`), and the edge (0 top, 1 bottom, 2 left, 3 right); None where no blob does."""
    n, labels, stats = _components(mask.astype(np.uint8))
    h, w = mask.shape
    best, best_edge = 0, -1
    for k in range(1, n):
        sides = _edges_touched(stats[k], h, w)
        if sum(sides) == 1 and (best == 0 or stats[k, cv2.CC_STAT_AREA] > stats[best, cv2.CC_STAT_AREA]):
            best, best_edge = k, sides.index(True)
    if best == 0:
        return None
    # (within the blob's bounding box: the whole view's labels compared cost 2 ms a frame)
    x0, y0, bw, bh = (int(v) for v in stats[best, :4])
    ys, xs = np.nonzero(labels[y0:y0 + bh, x0:x0 + bw] == best)
    ys, xs = ys + y0, xs + x0
    depth = (ys, h - 1 - ys, xs, w - 1 - xs)[best_edge]
    far = depth >= depth.max() - cfg.tip_depth * S
    return float(xs[far].mean()) / S - MARGIN, float(ys[far].mean()) / S - MARGIN, best_edge


def _set_down_shift(tips: tuple[tuple[float, float, int], ...], cfg: TrackerConfig = DEFAULTS) -> np.ndarray | None:
    """How far the hand's fingertips (`_hand_tip`, frame by frame over one visit) went from where they first
    stopped reaching in (where the hand took a piece up, or touched one) to where they were before the hand drew
    back for good (where it set the piece down): (across, down) in spacings. The hand's height and the camera's
    angle place the fingertips off the point under them by the same amount at both, so the difference is the
    move's. None where the visit shows no such path (a hand seen in under two frames, or over two edges)."""
    if len(tips) < 2 or len({e for _, _, e in tips}) != 1:
        return None
    edge = tips[0][2]
    depth = [(v, -v, u, -u)[edge] for u, v, _ in tips]
    # (reaching in, each frame's fingertips lie a good part of the way deeper than the last one's)
    took = next((i for i in range(len(tips) - 1) if depth[i + 1] < depth[i] + cfg.reach_in_step), len(tips) - 1)
    put = len(tips) - 1
    while put > 0 and depth[put] < depth[put - 1] - cfg.draw_back:
        put -= 1
    if put < took:
        return None
    return np.array([tips[put][0] - tips[took][0], tips[put][1] - tips[took][1]])


def _solid(step_change: np.ndarray, cfg: TrackerConfig = DEFAULTS) -> np.ndarray:
    """What changed since the last frame (`step_change`, a mask), counting only changes at least a sixth of a spacing
    across. The camera's noise leaves specks of change a few pixels wide, densest along the pieces' edges: where a
    hand's blob covers pieces that moved (one left an edge point, its shadow with it), the specks alone made up 2.5 %
    of it, and the hand seemed to move on for two seconds after it had gone; and a board whose specks cover 0.4 % of
    the view was never still (e.g. two and three moves fell into one still board)."""
    k = round(S * cfg.solid_across) | 1
    return cv2.morphologyEx(step_change.astype(np.uint8), cv2.MORPH_OPEN, np.ones((k, k), np.uint8))


def _blobs_moved(moved: np.ndarray, cfg: TrackerConfig = DEFAULTS) -> bool:
    """Whether the parts of what moved (`_solid`) at least a tenth of a spacing squared in area (102 pixels at 32 a
    spacing) cover more of the view than `_changed` allows: a hand or a piece moving changes far more. On a board in
    shadow, whose normalised view amplifies the camera's noise, specks survive the opening and added up to 0.66 % of
    the view: the board was never still for two seconds after a move, and the next move fell into the same still
    board.
    Measured over rendered frames with no hand and no move: specks of up to 180 pixels, but at
    most 0.17 % of the view in parts of 102 pixels and more, under the 0.2 % that counts as moving (`_changed`)."""
    _, _, stats = _components(moved)
    areas = stats[1:, cv2.CC_STAT_AREA]  # label 0 is what did not move
    return float(areas[areas >= cfg.moved_part_cells * S * S].sum()) > cfg.moved_share * moved.size


def hand_moved(moved: np.ndarray, hand_mask: np.ndarray, least_part: float, cfg: TrackerConfig = DEFAULTS) -> bool:
    """Whether the hand's blob (`hand_mask`) moved since the last frame: `hand_moving_share` of it or more changed
    (`moved`, `_solid`), counting only the parts of that change at least `least_part` of a cell in area (0: all of
    it). A hand moving changes its outline and its fingers in parts of a fifth of a cell and more; the camera's
    noise leaves lone specks, densest on a piece's high-contrast top, and inside a blob that is the board's own
    change (a piece just set down on an edge point, with its shadow, over the edge of the view) such specks alone
    made 2-4 % of it in one frame in four."""
    inside = ((moved > 0) & (hand_mask > 0)).astype(np.uint8)
    area = float(np.count_nonzero(hand_mask))
    if area == 0.0 or not inside.any():
        return False
    if least_part <= 0.0:
        return float(np.count_nonzero(inside)) >= cfg.hand_moving_share * area
    _, _, stats = _components(inside)
    parts = stats[1:, cv2.CC_STAT_AREA]  # label 0 is what did not move
    return float(parts[parts >= least_part * S * S].sum()) >= cfg.hand_moving_share * area


def _creeping_in(changed: np.ndarray, step_change: np.ndarray, cfg: TrackerConfig,
                 edge: np.ndarray | None = None) -> bool:
    """Whether something is coming in over the edge of the view: a change against the last still board (`changed`)
    that touches the edge, larger than a fifth of a cell, and still changing from frame to frame (`step_change`, by
    a tenth of a cell squared). Fingertips reaching in over an edge piece are smaller than a hand's blob
    (`_hand_mask`), and their thin bands of change from one frame to the next fall to `_solid`'s opening: the board
    read as still under them (e.g. fingers over the red rook h0 for three frames, 185-420 pixels
    changed in each, read as the rook gone to h7 and taking there: 32 of its 40 moves lost). Where no hand was in
    view, such a change at the edge was never seen to change from frame to frame."""
    least = cfg.creep_step_cells * S * S
    if float(step_change.sum()) < least:
        return False
    m = _changed_mask(changed, cfg)
    n, labels, stats = _components(m)
    h, w = m.shape
    cut = _at_picture_edge(labels, edge)
    for k in range(1, n):
        if stats[k, cv2.CC_STAT_AREA] > cfg.creep_cells * S * S and (_touches_edge(stats[k], h, w) or k in cut):
            n_px = cfg.creep_near_px
            near = cv2.dilate((labels == k).astype(np.uint8), np.ones((n_px, n_px), np.uint8)) > 0
            if int(np.count_nonzero(step_change & near)) >= least:
                return True
    return False


def _reaches_in(mask: np.ndarray, cfg: TrackerConfig, edge: np.ndarray | None = None) -> bool:
    """A blob of the mask touches the edge of the view and is larger than a piece with its shadow: an arm. Not one
    that covers nearly the whole view: that is the light (a lamp, the sun, a shadow over the board), which a hand
    does not change everywhere (e.g. the light changed while a hand was over the board; every point then
    differed from the last still board, and the "arm" was taken to stay until the next move's hand came)."""
    n, labels, stats = _components(mask.astype(np.uint8))
    h, w = mask.shape
    cut = _at_picture_edge(labels, edge)
    for k in range(1, n):
        area = stats[k, cv2.CC_STAT_AREA]
        if ((_touches_edge(stats[k], h, w) or k in cut) and area > cfg.arm_cells * S * S
                and area < cfg.light_share * h * w):
            return True
    return False
