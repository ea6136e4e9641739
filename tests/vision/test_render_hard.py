"""The renderer's hard options do what their names say, and leave a scene without them as it was drawn."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from xqarb.vision.render import RenderError, point_index, random_scene, render_position
from xqarb.vision.render_assets import crop_files, crop_sprite
from xqarb.vision.render_effects import PlasticSheet, Sunlight
from xqarb.vision.render_hard import HARD_OPTIONS, HardOptions, draw_options, harden, parse, preset
from xqarb.vision.squares import START_SQUARES

EMPTY = "." * 90


def _one(letter: str, point: str) -> str:
    sq = list(EMPTY)
    sq[point_index(point)] = letter
    return "".join(sq)


@pytest.fixture(scope="module")
def plain():
    """Straight above, even light, no noise: what an option changes can be measured exactly."""
    return random_scene(3, difficulty="plain")


def _grey(img: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(img, cv2.COLOR_BGR2GRAY).astype(float)


def _red_centroid(img: np.ndarray) -> np.ndarray:
    b, g, r = (img[..., i].astype(int) for i in range(3))
    ys, xs = np.nonzero(r - np.maximum(g, b) > 60)
    return np.array([xs.mean(), ys.mean()])


def test_no_options_draw_the_scene_as_it_was(plain):
    for scene in (plain, random_scene(7, difficulty="hard", light_on_dark=True)):
        assert harden(scene, HardOptions()) == scene
        a = render_position(_one("K", "e0"), scene).image
        b = render_position(_one("K", "e0"), harden(scene, HardOptions())).image
        assert np.array_equal(a, b)


def test_a_tall_piece_seen_at_an_angle_shows_its_top_off_its_point(plain):
    """Camera on Red's side, 40 degrees from straight down: a top face h spacings up is seen h * sin(40) spacings
    further up the picture than the point it stands on (to within the perspective's small change of scale)."""
    tilt, ratio = 40.0, 0.5
    scene = harden(plain, HardOptions(tilt_deg=tilt))
    flat = render_position(_one("K", "e4"), harden(scene, HardOptions(piece_height=0.0)))
    tall = render_position(_one("K", "e4"), harden(scene, HardOptions(piece_height=ratio, wall_shade=0.8)))
    shift = _red_centroid(tall.image) - _red_centroid(flat.image)
    spacing_px = np.linalg.norm(tall.points[point_index("f4")] - tall.points[point_index("e4")])
    expected = ratio * scene.piece_diameter * math.sin(math.radians(tilt)) * spacing_px
    assert expected > 10  # pixels: a shift any reader of the board must allow for
    assert shift[1] == pytest.approx(-expected, rel=0.15)  # up the picture, away from the camera
    assert abs(shift[0]) < 1.5
    # Below the top face the side wall shows where the flat piece's board was: darker than the top's disc.
    x, y = np.round(tall.points[point_index("e4")] + [0, 0.3 * spacing_px]).astype(int)
    assert _grey(tall.image)[y, x] < _grey(flat.image)[y, x] - 20


def test_a_quarter_turned_picture_turns_the_board_clockwise(plain):
    base = render_position(EMPTY, plain)
    turned = render_position(EMPTY, harden(plain, HardOptions(turn=1)))
    a9, a0 = base.points[point_index("a9")], base.points[point_index("a0")]
    assert a9[0] < 640 and a9[1] < 360 and a0[0] < 640 and a0[1] > 360  # as drawn: a9 top left, a0 bottom left
    t9, t0 = turned.points[point_index("a9")], turned.points[point_index("a0")]
    assert t9[0] > 640 and t9[1] < 360  # turned clockwise: top left goes to top right
    assert t0[0] < 640 and t0[1] < 360  # and bottom left to top left
    # the truth follows the print: the grid's lines are dark under the turned truth's points
    g = _grey(turned.image)
    x, y = np.round(turned.points[point_index("e5")]).astype(int)
    assert g[y, x] < g[y + 8, x + 8] - 40


def test_a_plastic_sheets_glare_washes_out_the_board_under_it_and_not_the_table(plain):
    scene = replace(plain, board=replace(plain.board, base=(120, 140, 150)))
    sheet = PlasticSheet(glare=((0.5, 0.5, 0.15, 0.06, 0.0, 200.0),), creases=(), haze=0.0)
    before = _grey(render_position(EMPTY, scene).image)
    after = _grey(render_position(EMPTY, harden(scene, HardOptions(sheet=sheet))).image)
    core = (slice(350, 370), slice(630, 650))
    assert after[core].mean() > before[core].mean() + 80
    # the printed rank line through the middle (rank 5 / 4 are near it) loses its contrast under the glare
    assert after[core].min() > before[core].min() + 80
    assert after[5:20, 5:20].mean() == pytest.approx(before[5:20, 5:20].mean(), abs=1)  # the table is not under it


def test_a_sheets_wrinkle_is_a_bright_line(plain):
    scene = replace(plain, board=replace(plain.board, base=(120, 140, 150)))
    sheet = PlasticSheet(glare=(), creases=((0.3, 0.4, 0.7, 0.4, 0.0, 100.0),), haze=0.0)
    before = _grey(render_position(EMPTY, scene).image)
    after = _grey(render_position(EMPTY, harden(scene, HardOptions(sheet=sheet))).image)
    y = round(0.4 * 720)
    assert (after[y - 1:y + 2, 500:700].max(0) - before[y - 1:y + 2, 500:700].max(0)).mean() > 50
    assert np.abs(after[y + 30] - before[y + 30]).max() < 3  # away from it nothing changed


def test_outdoor_sun_leaves_a_hard_blue_shadow(plain):
    sun = Sunlight(edge=(0.5, 0.5, 0.0, 0.0), dapples=(), shade=0.4, penumbra=1.0, sun_gain=1.1, seed=1)
    img = render_position(EMPTY, harden(plain, HardOptions(sun=sun))).image.astype(float)
    lit, shade = img[300:420, 520:600], img[300:420, 680:760]  # the shade lies right of the picture's middle
    assert shade.mean() < 0.5 * lit.mean()
    assert shade[..., 0].mean() / shade[..., 2].mean() > 1.2 * lit[..., 0].mean() / lit[..., 2].mean()  # bluer
    edge = _grey(img.astype(np.uint8))[360, 600:680]
    assert np.argmax(np.abs(np.diff(edge))) in range(34, 46)  # the edge is sharp and where it was put


@pytest.mark.parametrize("ink, channel", [((40, 95, 10), 1), ((95, 35, 15), 0)])  # dark green, blue-black (BGR)
def test_dark_inks_draw_blacks_characters_in_their_colour(plain, ink, channel):
    img = render_position(_one("k", "e9"), harden(plain, HardOptions(black_ink=ink))).image
    x, y = np.round(render_position(EMPTY, plain).points[point_index("e9")]).astype(int)
    disc = img[y - 15:y + 16, x - 15:x + 16].reshape(-1, 3).astype(int)
    darkest = disc[np.argsort(disc.sum(1))[:40]]
    assert (darkest[:, channel] - darkest[:, 2]).mean() > 30  # green or blue over red: not black ink


def test_light_on_dark_draws_light_characters_on_dark_discs(plain):
    opts = HardOptions(light_on_dark=((35, 35, 35), None, (230, 235, 240)))
    img = render_position(_one("k", "e9"), harden(plain, opts)).image
    x, y = np.round(render_position(EMPTY, plain).points[point_index("e9")]).astype(int)
    disc = _grey(img)[y - 15:y + 16, x - 15:x + 16]
    assert np.median(disc) < 90 and np.percentile(disc, 97) > 170


def test_camera_options_steep_small_filling():
    scene = random_scene(5, difficulty="easy")
    steep = render_position(EMPTY, harden(scene, HardOptions(tilt_deg=50)))
    far = np.linalg.norm(steep.points[point_index("a9")] - steep.points[point_index("i9")])
    near = np.linalg.norm(steep.points[point_index("a0")] - steep.points[point_index("i0")])
    assert min(far, near) / max(far, near) < 0.8  # foreshortened as a 50 degree view is

    small = render_position(EMPTY, harden(scene, draw_options(["small frame"], 2)))
    assert small.image.shape[1] <= 480 and small.image.shape[0] <= 360

    for seed in range(3):
        fill = render_position(EMPTY, harden(scene, draw_options(["filling"], seed)))
        h, w = fill.image.shape[:2]
        span = np.ptp(fill.points, axis=0)
        assert 0.82 < max(span[0] / w, span[1] / h) <= 1.0
        assert (fill.points >= 0).all() and (fill.points[:, 0] < w).all() and (fill.points[:, 1] < h).all()


def test_busy_background_is_a_glass_wood_or_cloth_table_with_things_on_it():
    scene = random_scene(5, difficulty="easy")
    kinds = {harden(scene, draw_options(["busy background"], s)).board.table for s in range(12)}
    assert "glass" in kinds and kinds <= {"glass", "wood", "cloth_checks", "cloth_stripes"}
    glass = next(harden(scene, draw_options(["busy background"], s)) for s in range(12)
                 if harden(scene, draw_options(["busy background"], s)).board.table == "glass")
    assert glass.board.clutter >= 5
    img = _grey(render_position(EMPTY, glass).image)
    before = _grey(render_position(EMPTY, scene).image)
    assert img[:60].std() > before[:60].std()  # the table beside the board is busier


def test_real_tops_are_cut_from_the_piece_photos(shared_data: Path, plain):
    root = str(shared_data / "piece_crops" / "valid")
    files = crop_files(root)
    assert set(files) == set("KABNRCPkabnrcp") and all(files.values())
    sprite = crop_sprite(files["N"][0], 40)
    assert sprite.shape == (40, 40, 4) and sprite[0, 0, 3] == 0 and sprite[20, 20, 3] == 1
    crop = cv2.imread(files["N"][0])
    centre = crop[crop.shape[0] // 2, crop.shape[1] // 2].astype(float)
    assert np.abs(sprite[19:21, 19:21, :3].mean((0, 1)) - centre).max() < 40
    drawn = render_position(_one("N", "e4"), plain).image
    real = render_position(_one("N", "e4"), harden(plain, draw_options(["real tops"], 1, crops=root))).image
    assert np.abs(drawn.astype(int) - real.astype(int)).max() > 60


def test_options_and_the_preset_are_drawn_per_seed():
    assert preset("hard", 4) == preset("hard", 4)
    assert len({preset("hard", s) for s in range(8)}) == 8
    assert all(preset("hard", s) != HardOptions() for s in range(30))
    both = parse("tall pieces, small frame", 3)
    assert both.piece_height is not None and both.frame is not None and both.sheet is None
    assert draw_options(["tall pieces"], 3) == replace(both, frame=None, fill=None)  # one option's draw is its own
    assert 0.35 <= both.piece_height <= 0.6
    assert all(draw_options(["turned picture"], s).turn in (1, 2, 3) for s in range(10))
    assert draw_options(["real tops"], 1) == HardOptions()  # no crops folder given: nothing to cut from
    assert len(HARD_OPTIONS) == 16
    with pytest.raises(RenderError, match="hard option"):
        parse("glossy", 1)
    with pytest.raises(RenderError, match="preset"):
        preset("brutal", 1)


def _outside(shot) -> np.ndarray:
    h, w = shot.image.shape[:2]
    return (shot.points < 0).any(axis=1) | (shot.points[:, 0] >= w) | (shot.points[:, 1] >= h)


def test_the_preset_frames_every_point_and_cuts_only_the_margin():
    # A camera missing points cannot follow a game (the tracker reports it at calibration): the preset's cut is
    # "cut margin", a camera framed tight off centre, never "cut picture".
    assert all(preset("hard", s).cut is None for s in range(300))
    assert sum(preset("hard", s).margin_shift is not None for s in range(300)) > 15
    shots = [render_position(START_SQUARES, harden(random_scene(s, difficulty="easy"),
                                                    draw_options(["cut margin"], s))) for s in range(3)]
    assert not any(_outside(shot).any() for shot in shots)
    # (pushed off centre: the grid nearer one edge of the picture than the other)
    off = [abs(float(shot.points[:, 0].min()) - (shot.image.shape[1] - float(shot.points[:, 0].max())))
           + abs(float(shot.points[:, 1].min()) - (shot.image.shape[0] - float(shot.points[:, 1].max())))
           for shot in shots]
    assert max(off) > 20.0


def test_heavy_glare_washes_out_much_more_of_the_print_than_a_plain_sheet():
    """Near-white lamps over the board's middle: the printed lines' contrast (grid.support_score on the true
    lattice) falls below 3/4 of the board's without a sheet, and below the ordinary sheet's."""
    from xqarb.vision.board import response_map
    from xqarb.vision.grid import board_to_image, support_score

    scene = random_scene(5, difficulty="easy")

    def contrast(opts: HardOptions) -> float:
        shot = render_position(EMPTY, harden(scene, opts))
        return support_score(response_map(shot.image), board_to_image(shot.corners))

    bare = contrast(HardOptions())
    for s in range(3):
        heavy = contrast(draw_options(["heavy glare"], s))
        assert heavy < 0.75 * bare and heavy < contrast(draw_options(["plastic sheet"], s)), (s, heavy, bare)


def test_paper_print_is_thin_lines_with_a_double_border_numbers_and_a_curled_sheet():
    scene = random_scene(5, difficulty="easy")
    paper = harden(scene, draw_options(["paper print"], 2))
    look = paper.board
    assert look.material == "paper" and look.line_width < 0.016 and look.double_frame and look.numbers
    assert look.creases >= 4 and look.wave
    # the curl bows the printed grid: its points are no longer one homography of the board
    shot = render_position(EMPTY, paper)
    from xqarb.vision.grid import POINTS_UV, apply_h, board_to_image

    straight = apply_h(board_to_image(shot.corners), POINTS_UV)
    spacing = np.linalg.norm(shot.corners[1] - shot.corners[0]) / 8
    assert np.linalg.norm(straight - shot.points, axis=1).max() > 0.01 * spacing
    # more print beyond the grid than the scene as drawn: the border and the numbers
    plain_img = _grey(render_position(EMPTY, scene).image)
    assert not np.array_equal(_grey(shot.image), plain_img)


def test_a_cut_picture_leaves_part_of_the_board_outside_and_most_of_it_in():
    scene = random_scene(5, difficulty="easy")
    outside = [int(_outside(render_position(EMPTY, harden(scene, draw_options(["cut picture"], s)))).sum())
               for s in range(6)]
    assert all(n <= 30 for n in outside) and sum(n > 0 for n in outside) >= 5, outside


def test_a_tight_crop_is_a_small_picture_the_grid_nearly_fills():
    scene = random_scene(5, difficulty="easy")
    for s in range(3):
        shot = render_position(EMPTY, harden(scene, draw_options(["tight crop"], s)))
        h, w = shot.image.shape[:2]
        assert 200 <= w <= 300 and not _outside(shot).any()
        span = np.ptp(shot.points, axis=0)
        assert 0.85 < max(span[0] / w, span[1] / h) <= 0.97


def test_render_command_takes_hard_options(tmp_path: Path, shared_data: Path, capsys):
    import argparse

    from xqarb.vision.render_cli import add_arguments, main_render

    ap = argparse.ArgumentParser()
    add_arguments(ap)
    games = str(shared_data / "games" / "ccpd_dev.jsonl")
    args = ap.parse_args(["--out", str(tmp_path / "a"), "--frames", "2", "--games", games, "--hard",
                          "tall pieces,plastic sheet"])
    assert main_render(args) == 0 and len(list((tmp_path / "a").glob("frame_*.jpg"))) == 2
    bad = ap.parse_args(["--out", str(tmp_path / "b"), "--frames", "2", "--games", games, "--hard", "glossy"])
    assert main_render(bad) == 2
    assert "hard option must be one of" in capsys.readouterr().err
