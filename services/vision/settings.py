"""The tracker's thresholds: every one a named field with its meaning (spacings are grid spacings of the board; the
canonical top view draws one spacing as `occupancy.S` pixels)."""

from __future__ import annotations

from dataclasses import dataclass

from .squares import START_SQUARES


@dataclass(frozen=True)
class TrackerConfig:
    stable_us: int = 750_000  # still this long after the hand left before BoardStable (5.7)
    hand_cells: float = 2.4  # a changed blob this many grid cells large is a hand (a piece moved to a neighbour
    # point changes two discs side by side: about 1.3 cells)
    hand_rest_us: int = 500_000  # a hand blob still this long (not reaching in over the edge) has left
    hand_still_us: int = 1_200_000  # even reaching in over the edge, a blob still this long is the board's: longer
    # than a player's pause between moves (1-3 s) holds a shadow over the board as an "arm" until the next move's
    # hand comes, and two moves fall into one snapshot; shorter loses hands resting on a piece. 1.2 s is five frames
    # at 4 a second, which at 1.25 s stood on either side of the limit by the jitter of the frames' times.
    lift_outline_fall: float = 0.25  # a piece lifted: its round outline fell at least this much (circle score)
    lift_lines: float = 0.35  # ... and its point shows the printed lines at least this share as plainly as the
    # board's empty points do (rendered games: points lifted from 0.65, a palm over a point 0.00)
    touch_moved: float = 0.09  # a piece touched: its round outline moved this far (spacings), at least
    touch_window: float = 0.6  # what changed on a touched piece's point is looked at within this of its top face
    # (spacings: a top's radius, about 0.45, and the most a touch moves it on its point)
    touch_off_centre: float = 0.25  # ... and is its own only where centred under this off the top face: a touch
    # changes the top where it stood and where it stands, both sides alike (centred within half its shift, at most
    # 0.15); a moved neighbour's shadow, tall body or rim changes one side (rendered: touches 0.04-0.11, tall pieces
    # set down or taken up beside a piece, with their shadows, 0.37-0.51)
    arm_cells: float = 4.0  # a blob at the edge of the view this many cells large is an arm reaching in (a hand
    # with its forearm is at least two spacings by two; two pieces side by side on edge points with their shadows
    # are about 2.5 cells)
    change_level: float = 0.09  # normalised appearance change that counts at a point
    unchanged_level: float = 2.5  # mean grey change (1/8 scale) below which a frame may be the same as the last
    unchanged_peak: float = 7.0  # ... if no 3 x 3 patch (1/8 scale) changed more: a hand reaching in over a corner
    # changes a small part of the picture a lot (rendered games: still frames up to 4.7, hands from 9.8; the mean
    # change of a frame with a hand in it can be as low as 0.23)
    black_level: float = 14.0  # mean grey below which the frame is black
    blur_ratio: float = 0.2  # sharpness below this share of the calibration frame's: blurred
    support_ratio: float = 0.45  # line support below this share of the calibration's (no hand): board moved
    # ... and below this share in a frame that stands still, even where the whole changed view reads as a hand: a
    # hand over the board leaves most of its lines in view (a camera moved for good keeps about 1 % of them)
    lost_ratio: float = 0.15
    misaligned_from: float = 0.4  # a piece this far (spacings) from its point along a line stands between two
    # (a piece set down carelessly stands up to about 0.3 off its point and is still on it)
    nudge_from: float = 0.08  # a piece moved this far on its point (spacings) was nudged
    evidence_keep: int = 4  # evidence frames named per observation (the frame itself and those before it)
    find_every_us: int = 2_000_000  # while no board is found, look for one this often
    max_changed: int = 8  # more changed points than this at once is no move (light, camera, board disturbed)
    start_squares: str | None = START_SQUARES  # the position assumed when the first board has its occupancy
    start_tolerance: int = 6  # points whose occupancy may read otherwise on that first board
    start_order: float = 0.9  # ... or the share of (start point, other point) pairs whose inks are in the start's order
    # (or the pieces' outlines, or the outlines and the printed lines left bare, with or without the inks, their
    # ranks summed: `point_evidence._joint_order`)
    # -- the hand and what moved between frames (hand.py); areas in cells (one spacing squared), lengths in spacings
    moved_share: float = 0.002  # the share of the view that must change (over `change_level`) for the view to have
    # changed since the last frame
    hand_join: float = 0.2  # a hand's fingers, knuckles and arm show as separate outlines: joined within this
    edge_hand_cells: float = 1.1  # a changed blob touching the view's edge and this large may be a hand reaching in
    # (a piece on an edge point with its shadow is about one cell)
    tip_depth: float = 0.4  # the fingertips: the part of the hand's blob within this of its farthest reach
    reach_in_step: float = 0.3  # reaching in, each frame's fingertips lie at least this much deeper than the last
    draw_back: float = 0.15  # the hand drew back where its fingertips came this much nearer its edge again
    solid_across: float = 1 / 6  # a change since the last frame counts for stillness only this wide (the camera's
    # noise leaves specks of a few pixels, densest along the pieces' edges)
    moved_part_cells: float = 0.1  # ... and only in parts this large in area (a hand or a piece moving changes far
    # more; on a board in shadow specks survived the opening and added up to 0.66 % of the view)
    creep_cells: float = 0.2  # a change at the edge this large, still changing from frame to frame, is fingertips
    # reaching in over an edge piece (smaller than a hand's blob)
    creep_step_cells: float = 0.1  # ... by at least this much area from one frame to the next
    creep_near_px: int = 9  # ... within this many top-view pixels of the blob (a 9 x 9 dilation)
    light_share: float = 0.8  # a changed blob over this share of the view is the light (a lamp, the sun, a shadow
    # over the board), not an arm: a hand does not change the view everywhere
    # -- a frame (still_board.py)
    washed_level: float = 245.0  # mean grey (of 255) over which, with ...
    washed_spread: float = 6.0  # ... a standard deviation under this, the frame is washed out (glare, overexposed)
    bump_response: float = 0.2  # phase correlation's response over which a shift of the whole view since the last
    # frame is the camera bumped (a frame whose lines all moved)
    shift_least_px: float = 1.0  # ... a shift over this many top-view pixels, and
    shift_most: float = 0.4  # ... under this much of a spacing (more is the board found again)
    realign_response: float = 0.1  # the response over which the view lines up with the last still board again
    hand_moving_share: float = 0.02  # a hand moves where this share of its blob changed since the last frame
    hand_stir_cells: float = 0.18  # ... and a blob that stood still over the last frame looked at moves again only
    # in parts this large in area: a hand stirring moves its fingers or its outline a fifth of a cell at once (202
    # pixels and more at 32 a spacing); the camera's noise on a still blob flickers in lone specks of up to 180
    # pixels, 0.18 of a cell, at random from frame to frame. A hand in motion slows in smaller parts (fingers
    # settling as they reach a piece, 25-160 pixels a frame): counted in full while it has not stood still
    resting_shift_px: float = 0.3  # a resting hand's view lined up with the last still board where it is shifted
    # by more than this (top-view pixels): a camera shifted by under a pixel joins every line's change to the hand's
    stable_shift_px: float = 0.7  # the still board lined up with the last one where shifted by more than this
    clear_of_hand: float = 0.7  # a point this near the hand's hull (spacings) is partly hidden by it: not judged
    lift_ink_gone: float = 0.2  # a piece lifted: its point reads under this occupancy now, ...
    lift_ink_was: float = 0.5  # ... read over this on the last still board, ...
    lift_ink_left: float = 0.4  # ... keeps under this share of its own ink, ...
    lift_ink_typical: float = 0.5  # ... and its ink was at least this share of the pieces' median (a faint
    # piece's reading is mostly noise)
    # -- a point's ink (point_evidence.py, interpret.py, move_checks.py): occupancy and redness read 0..1 on the
    # board's own scale (`occupancy.PointReading`); density is the raw ink, compared with the same point's on the
    # last still board
    ink_piece: float = 0.5  # occupancy over which a point reads as holding a piece
    ink_plain: float = 0.8  # ... over which it plainly holds one (ink and outline agreeing about a piece were never
    # wrong on six hard games' still boards, 12,000 points)
    ink_none: float = 0.2  # ... under which it plainly holds none
    unseen_arrival_ink: float = 0.8  # where the camera misses points, a piece read arriving on a point in view
    # whose source is out of view, or which could have gone out of view instead, is kept only where its own ink
    # reads over this (plainly a piece, `ink_plain`'s level): no departure seen confirms it, and an unseen point
    # gives no evidence against the other moves
    ink_trace: float = 0.05  # ... under which not a trace of a piece is left (an emptied point's printed marks and
    # an edge point's frame read more)
    ink_rim: float = 0.02  # the least occupancy of a point that half a disc stands over (a piece between two points)
    ink_faint: float = 0.15  # the least occupancy at which a piece that reads faintly may have arrived
    ink_under_scale: float = 0.3  # the least occupancy (up to `ink_piece`) of an arrival whose ink rose many-fold,
    # though it reads under the board's piece scale (a board whose edge points read like pieces sets it high)
    ink_centred: float = 0.25  # an ink peak this near its point (spacings, parallax removed) is centred on it, not
    # leaning over from a neighbour's piece
    red_sure: float = 0.8  # redness over which a point's ink is surely red
    dark_sure: float = 0.2  # redness under which it is surely dark
    red_even: float = 0.5  # redness over which a point reads on the red side
    red_swing: float = 0.3  # redness that rose (fell) this much moved half-way over to the other side's colour (one
    # piece's ink in another's place, on a board whose colours split poorly)
    type_sure: float = 0.8  # the piece classifier's confidence over which a point's type is taken
    ink_lost: float = 0.5  # a point's ink density under this share of the last still board's: its piece left
    ink_left: float = 0.6  # ... under this share where some ink stays (an edge point's frame, a dim piece)
    ink_fell_light: float = 0.7  # ... under this share where the light changed the whole board
    ink_most_gone: float = 0.25  # ... under this share: most of its ink is gone
    ink_all_gone: float = 0.1  # ... under this share: all of it
    ink_held: float = 0.8  # a point's ink density at least this share of the last still board's: it kept its ink
    ink_all_kept: float = 0.9  # ... this share: a touched piece that kept all of it
    ink_rose: float = 1.3  # a point's ink density over this multiple of the last still board's: ink arrived
    ink_rose_faint: float = 1.5  # ... this multiple, for a piece that arrives reading faintly
    ink_doubled: float = 2.0  # ... this multiple: ink arrived though the point changed only at the base level
    ink_manyfold: float = 3.0  # ... this multiple: a piece arrived, whatever the board's scale says
    ink_rise_least: float = 0.05  # ... and rose by at least this much density (a faint point's ink doubling from
    # next to nothing is noise)
    ink_rise_least_low: float = 0.02  # ... by this much at the base change level
    ink_rise_least_faint: float = 0.01  # ... by this much for a piece arriving faintly
    density_floor: float = 0.001  # the least density a ratio of inks is taken against (an empty point has about none)
    most_pieces: int = 32  # more points read as pieces than this is no Xiangqi position
    most_of_a_side: int = 20  # ... nor more of one colour than this (16 pieces; colours read less surely)
    # -- a point's change (`_point_change`, normalised appearance) against the level of this still board
    change_disc: float = 0.4  # a point's change is measured in a disc of this radius (spacings)
    typical_change_times: float = 3.0  # where the light changed the whole board, the level is this multiple of the
    # board's median change
    low_level: float = 0.6  # nothing changed at the level and the board changed little: look again at this share of
    # `change_level` (a piece reading faintly, in glare or on a blurred board, changes its points less)
    change_half: float = 0.5  # a point changed by this share of the level: half a disc, a piece seen faintly or
    # in part (a piece set down off its point, its neighbour)
    change_quarter: float = 0.25  # ... this share: a point that read dimly already (a dark corner, glare)
    set_down_change: float = 0.3  # ... this share: where the hand's fingertips set a piece down
    change_clear: float = 1.5  # ... this multiple of the level: changed clearly
    change_strong: float = 2  # ... this multiple: a piece arrived, whether or not its ink rose
    edge_left_change: float = 3  # ... this multiple, at an edge point whose ink fell: its piece left (the frame's
    # ink stays)
    nudge_change_most: float = 3  # a piece beside a move changed under this multiple of the level, and shifted: it
    # was nudged, not taken
    arrival_change_share: float = 0.5  # at the low level, an arrival changed at least this share of the empty point
    # that changed most (where that one changed more, the piece went there, its ink not read)
    calm_share: float = 0.4  # a move told by its changes alone: the rest of the board changed under this share of
    # the least changed of the two points (and under half the level)
    clear_margin: float = 2  # the best of several candidates is clear where over this multiple of the next (changes,
    # outlines risen or fallen)
    came_change_typical: float = 2  # a disc came where its point changed at least this multiple of the board's median
    # change (a blurred view shifts circle scores where nothing came)
    bare_change_share: float = 0.8  # an empty point that changed most is where the piece went, where it changed over
    # this share of the emptied point's change
    bare_margin: float = 1.5  # ... and over this multiple of the next empty point's
    dest_margin: float = 1.5  # where a piece could go, the point that changed most is where it went where it changed
    # over this multiple of any other's
    dest_margin_beside: float = 1.2  # ... of a neighbour's (the same piece set down off its point changes it too)
    twin_change: float = 0.7  # a neighbour of an arrival that changed over this share of it: perhaps the same piece
    # between the two
    left_occ_weight: float = 1.5  # where a piece left: the point with the most change x (this - occupancy) (a move
    # empties its point, though an edge point keeps some ink of the frame)
    unexplained_most: int = 3  # at most this many changed empty points are reported unsure where none clearly
    # received the piece
    departure_outdone: float = 2.0  # a point read left by its ink alone (changed under the level) is where the piece
    # left only where no other piece that could have made the move changed clearly and over this multiple of it (a
    # dark or small picture's ink reads a shadow as a piece and a piece as gone; the disc leaving changes its point)
    # -- where ink peaks and round outlines stand (spacings of the board plane, the camera's parallax removed)
    parallax_least: int = 3  # at least this many pieces to take their ink peaks' median offset as the parallax
    lean_far: float = 0.5  # an ink peak this far towards a neighbour lies well over there (a piece leaning onto it)
    lean_some: float = 0.25  # ... this far: it leans towards it
    lean_margin: float = 0.15  # of two neighbours' peaks, the one leaning further by this much is the piece's lean
    between_short: float = 0.1  # a peak this much short of `misaligned_from` is looked at for a piece between two
    # points (the mean shift starts at the point and stops short of half-way)
    peaks_sum_least: float = 0.7  # two neighbours' peaks towards each other add up to at least this for one piece
    # between them (requiring 0.85 lost 3 of 13 pieces half-way)
    peaks_sum_most: float = 1.3  # ... and to at most this
    found_to: float = 0.05  # peaks and discs are found to about this (a pixel or two): the margin off
    # `misaligned_from`
    set_down_within: float = 0.5  # a point this near where the hand's fingertips went is where they set a piece down
    disc_reach_on: float = 0.3  # a piece's round outline is looked for within this of its point (top faces stand a
    # little off their points)
    disc_reach_near: float = 0.7  # ... within this where it may stand between two points (0.5 from each)
    disc_reach_point: float = 0.15  # ... within this of a point, to compare with a disc between two
    disc_reach_gone: float = 0.4  # ... within this before a piece is said gone (one set down off its point is not)
    stands_within: float = 0.3  # an outline centred within this of a point stands on it (a piece set down
    # carelessly or touched)
    plainly_on_within: float = 0.4  # an outline within this of a point left unsure is plainly on it again
    outline_own: float = 0.6  # an outline found this far or more off a point is a neighbour's piece's, not its own
    middle_across: float = 0.2  # a disc between two points lies under this to the side of their line (looked for at
    # their middle)
    towards_across: float = 0.3  # ... under this (looked for from one of the points)
    towards_cos: float = 0.75  # an offset within 41 degrees of a line (this cosine) points to that neighbour (the four
    # lie 90 degrees apart)
    # -- round outlines (detect's circle score: standing pieces about 0.6-0.9, empty points up to about 0.5)
    least_standing: int = 5  # at least this many standing pieces to judge an outline by (their median, the
    # parallax of their top faces)
    least_standing_many: int = 6  # ... this many for rules that judge one piece against all the others (a move told
    # by outlines alone, a touch)
    outline_plain: float = 0.8  # an outline at least this share of the standing pieces' median is plain
    outline_plain_taker: float = 0.75  # ... this share, for a taker left between two points
    outline_gone_share: float = 0.5  # an outline under this share of the standing pieces' median is gone (standing
    # pieces 0.59-0.79, empty points up to 0.52, an emptied point 0.23)
    outline_fall: float = 0.3  # a piece's outline fell by at least this (and clearly most): it left
    outline_fall_weak: float = 0.2  # ... by this, where its point emptied too or glare hides its ink
    outline_kept: float = 0.15  # the other piece's outline fell by less than this: it stays
    outline_rise: float = 0.2  # an outline rose by at least this (and clearly most): a piece came
    outline_rise_weak: float = 0.15  # ... by this, where the piece that left is known
    outline_rise_set_down: float = 0.1  # ... by this, where the hand's fingertips set a piece down
    outline_rise_trace: float = 0.05  # ... by this, where the point changed over the board's median too
    twin_rise_ratio: float = 1.3  # of an arrival and the neighbour beside it, the neighbour's outline rose this
    # multiple of the arrival's (and by `outline_rise`): the piece is there
    skirt_reach: float = 0.8  # a piece's whole look (top face, side wall, shadow) lies within this of its point
    # (spacings): where the change a piece leaving made is centred, looked for this far about its point
    skirt_least: float = 0.1  # the look's centre this far (spacings) off the point along a line: its side wall and
    # shadow reach over the neighbour on that side
    skirt_margin: float = 1.25  # of two neighbours one piece's look changed, the change measured where a piece's look
    # would stand on each: the point's over this multiple of the other's is where the piece stands (an arrival split
    # over two; a taker whose shadow reads as some ink on the neighbour: one half-way changes both about alike)
    look_radius: float = 0.6  # a piece's look (top face, side wall, shadow) is compared within this (spacings) of
    # its centre: where a piece went is where the look its point showed on the last still board is found again
    look_margin: float = 1.2  # the look found on one placement (a point, or half-way between two) under 1/this of its
    # difference on another stands there rather than there (a piece half-way is found so at the two points' middle;
    # measured: a piece on its point 0.061 there, 0.079 and 0.098 at its two middles with neighbours); where it took,
    # under 1/this of the taken piece's look there (pieces of a set look alike: 0.060 against 0.076)
    look_found: float = 1.4  # a piece's look is found on an empty point only where the view there is under 1/this of
    # what the same place showed on the last still board (its look came whole: 0.061 against 0.121, 0.067 against
    # 0.101; a rook gone from the corner, whose look held the frame's print, 0.144 against 0.173 at its best point,
    # is found nowhere)
    pair_fall: float = 0.1  # the outlines near a pair of unsure points fell by at least this together (and by twice
    # any other pair's): the piece between them left
    glare_outline_change: float = 0.3  # under full glare, where no point changed, a piece's outline fell (rose) by at
    # least this where it left (arrived)
    lines_glare_share: float = 0.25  # a piece is plainly gone only where its point shows at least this share of the
    # empty points' grey spread (glare over a piece washes out its ink, its outline and the lines alike)
    plainly_most: int = 3  # more points than this contradicting a snapshot is the light or the camera, not a move
    # missed
    # -- the printed lines a point shows (`_line_contrast`), sampled along each line leaving it
    lines_from: float = 0.22  # from this (spacings from the point; a piece there covers them) ...
    lines_to: float = 0.46  # ... to this ...
    lines_step: float = 0.04  # ... every this
    lines_least_bare: int = 5  # at least this many empty points clear of the hand to judge hidden lines by
    # -- the quick still board (still_board.py, still_clear.py): BoardStable before `stable_us` where the evidence
    # is clear. The full wait guards against a hand resting a moment, a shadow leaving, a piece settling; where the
    # board already shows one move plainly and nothing else, waiting longer tells nothing new
    quick_stable_us: int = 500_000  # the view unchanged from frame to frame this long, the hand gone, and the hand's
    # last motion as long ago: the still board may be taken (two frames at 2 a second, three at 4; one frame shows
    # no stillness). At least `hand_rest_us`, so that a hand resting on a piece is no longer taken for the board's
    frame_jitter_us: int = 150_000  # frames' capture times stray this much from their rate (a loaded sender sent
    # 2 fps frames up to 130 ms late on the e2e bench): `quick_stable_us` and a resting hand's `hand_rest_us`, waits
    # of whole frames, are met this much early, so that they end on the frame meant and not one later, half the
    # time, by a few ms (under a frame: at 4 fps, 250 ms apart, the same frames as without it)
    quick_reach: float = 1.0  # ... only where everything that changed against the last still board lies within
    # this (spacings) of the move's two points: a piece's disc with its shadow, widened by the change map's blur
    # (rendered moves: up to 0.89-0.95); fingers, a hand over the board, a shadow leaving reach farther
    quick_stray_cells: float = 0.1  # ... a change elsewhere of this many cells (area) at most: specks of the camera's
    # noise that survived the opening (a fingertip is about a third of a cell)
    # -- tall pieces seen steeply (tops.py): the view taken through the plane of the top faces
    tops_from: float = 0.3  # where some piece's top face stands this far off its point (spacings; the camera's
    # parallax, a homothety over the board) the tracker reads the view through the tops' plane: the readings about
    # each point reach 0.3 (disc_reach_on); flat pieces seen at up to 36 degrees stand up to about 0.25 off, and
    # the board's plane, which the tracker was tuned on, serves them (0.25 changed a hard game's pair at 0.248)
    tops_least: int = 8  # ... measured on the calibration frame's pieces whose round outlines stand out, at least
    # this many (an empty board or a few pieces leave the board's plane)
    # (through the tops' plane a piece's top face stands on its point and its side wall and its foot's shadow reach
    # from there towards the camera, as far again as the top leans (the foot is seen at the point less the lean):
    # a piece set down changes its own point and its neighbour on the camera's side, never the one beyond its top;
    # `interpret._read_at_its_top`. Rendered arrivals: the camera-side neighbour changed 1.5-2.3 times the change
    # level, the far one 0.15-0.22; arrivals read one point towards the camera: the camera-side one 0.13-0.20, the
    # far one, where the top face stood, 0.54-1.95, its round outline risen 0.19-0.35, against 0.00-0.02)
    body_side_quiet: float = 0.5  # an arrival whose neighbour on the camera's side (empty before) changed under
    # this share of the change level shows no side wall of its own: its top face may stand one point further
    top_beyond_changed: float = 0.4  # ... and the point beyond it, away from the camera, changed at least this share
    # of the change level
    top_beyond_rise: float = 0.1  # ... and a round outline rose there by at least this (circle score; a standing
    # piece's about 0.6-0.9): the top face stands there, the arrival read is its side wall
    top_gone_fall: float = 0.1  # a point read emptied is its neighbour beyond's side wall gone where that
    # neighbour's round outline fell by at least this (circle score) and its own did not
    dark_floor: float = 60.0  # grey level (0..255) under which a normalised change is weighed down (hand.dark_weight):
    # the camera's noise, 2-4 grey levels, is a tenth of a local mean of 25 (deep shade), over the change level
    # -- the camera's noise where it is (hand.noise_levels, hand.noise_scale): measured per cell of the view on the
    # change between frames in which nothing moved, the change counted only as far as it stands out of it
    noise_quantile: float = 0.99  # the noise's reach in a cell: the change this share of its pixels stays under
    # between two frames in which nothing moved. A change counts in full where the reach is under the change level
    # (a large picture's noise, averaged down to the view: 0.02-0.08), elsewhere scaled by the level over the reach:
    # the noise then crosses the level in about 1 % of a cell, lone specks that the hand's opening leaves out
    noise_frames: int = 3  # the noise's reach is the median over this many such frames (one that was not all noise,
    # a piece set down between two frames, does not count)
    grainy_share: float = 0.4  # where the noise reaches over the change level in this share of the view's cells
    # (`hand.noisy`), the still board is read from the mean of its still frames, whose noise is a square root of
    # their count smaller: the readers were tuned on single frames whose noise stays under the level but in a shaded
    # corner (e.g. 17 of 110 cells just over it, 0.09-0.12), and leaving those as they were keeps them; a small dim
    # picture blown up to the view reaches 0.10-0.23 in most of its cells
    noise_every: int = 2  # the noise is measured on every this-many-th pixel each way (the change map is smoothed
    # over a couple of pixels)
    outside_grow: float = 0.25  # the view's part outside the picture, grown by this (spacings), gives no change
    # (tops.outside_picture): the warp repeats the picture's edge there, and its noise is no hand or piece
    in_view_least: float = 0.85  # a point is seen where this share of its top face's disc (0.45 spacing about where
    # the top stands) lies inside the picture (a picture cutting the board: detect.MIN_IN_VIEW); the others are '?'
    # -- the occupancy from the joint of the cues where the ink alone fails (joint_reading.py), calibrated on the
    # position the tracker holds
    joint_from: int = 4  # the ink's occupancy misreading more of the known position's points than this is no move
    # (a move changes two or three points, a piece left half-way one more): the ink fails on this camera
    joint_margin: int = 3  # ... and the joint of the cues, fitted on the known position, must misread at least this
    # many fewer of its points to be taken instead (a fit over 90 points reads a few as the ink does by chance)
    joint_least: int = 5  # at least this many known pieces and known empty points to fit the cues on
    joint_ridge: float = 1.0  # the fit's ridge on each standardised cue: a cue that separates the known points alone
    # stays finite (its weight would grow without bound), one that separates nothing is weighed near 0
    joint_steps: int = 25  # Newton's steps of the fit (on rendered boards the probabilities move under 1e-15 after 8)
    joint_ink_masked: float = 0.4  # a point whose ink weight (the share of the ink about it that counts, off the
    # printed marks as the view shows them) is under this share of the board's median has its character masked:
    # its ink is no cue (through the tops' plane the river's band is seen over one bank's points, 0.16-0.2 of a
    # median 0.6; on the board's plane the palace middles, where the diagonals cross, are the least, 0.43 of it)
    joint_emptied: float = 0.05  # a point that held a piece, read by the joint (the ink failing), reads under this
    # probability of a piece: emptied, whatever ink it shows (`ink_trace`'s level: not a trace of a piece left;
    # a horse lifted off a pale board in glare read 0.02, its bared printed marks 2 times its character's ink)
    joint_ink_floor: float = 0.01  # the ink density added before its log: the empty points' noise (0.00-0.01 where
    # a red character on a pink face reads 0.01-0.06 and a black one 0.2-0.4)
    # -- the pieces' colours from their look where the ink's colour fails (look_colour.py), calibrated on the
    # position the tracker holds
    hue_from: float = 0.2  # the ink's colour misreading the side of more than this share of the known pieces
    # fails on this camera (an ink at chance misreads half; one that reads the board misreads a piece or two, and
    # on a faint one up to a fifth, where the ink's sure readings are still mostly right; past a fifth the look is
    # weighed, and taken only where it reads the known sides `hue_margin` better: a capture's taker read as the
    # prey's side by the ink, 7 of 32 pieces misread, the look 3)
    hue_margin: int = 3  # ... and the look, fitted on the known pieces, must misread at least this many fewer of
    # their sides to be taken instead (a fit over thirty pieces reads a few as the ink does by chance)
    hue_least: int = 5  # at least this many known pieces of each side to fit the look on
    hue_radius: float = 0.25  # the face's middle whose mean hue is a piece's look (spacings; a face's radius is
    # about 0.45, its character's strokes stand within about 0.3 of its centre)
    hue_red_floor: float = 0.01  # the ink's P(red) is held within this of 0 and 1 before its log-odds, a cue of the
    # look's fit beside the hue (the ink reader's surest readings, 1e-6 off, must not outweigh the rest)


DEFAULTS = TrackerConfig()  # the settings a pure function uses where its caller passes none
