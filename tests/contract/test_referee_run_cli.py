"""`xqarb referee run FILE.jsonl [--json]` (DESIGN: Event catalogue, JSON form): input events one a line, every
output event printed as a JSON line."""

from __future__ import annotations

import json

import pytest

from .conftest import (
    START_FEN,
    T0,
    Board,
    board_part,
    check_output_event,
    fen_squares,
    json_lines,
    load_games,
    run_xqarb,
    schema_fields,
    sf_after,
)

PLIES = 16


@pytest.fixture(scope="module")
def schemas():
    return schema_fields()


@pytest.fixture(scope="module")
def real_game(shared_data):
    return load_games(shared_data, "ccpd_dev.jsonl", 1)[0]


def _run(xq, tmp_path, text: str, name: str = "in.jsonl", *extra: str):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    r = xq("referee", "run", str(path), *extra)
    assert "Traceback" not in r.stderr, r.stderr
    return r


def test_real_game_snapshots_give_one_move_made_per_move(xq, tmp_path, real_game, schemas):
    b = Board()
    moves = real_game["iccs"][:PLIES]
    for m in moves:
        b.move(m)
    r = _run(xq, tmp_path, b.jsonl(), "in.jsonl", "--json")
    assert r.returncode == 0, r.stderr
    out = json_lines(r.stdout)
    for e in out:
        check_output_event(e, schemas)
    assert [e["type"] for e in out] == ["MoveMade"] * PLIES, [e["type"] for e in out]
    fen = START_FEN
    for i, (e, m) in enumerate(zip(out, moves, strict=True), start=1):
        fen = sf_after(fen, [m])
        assert e["iccs"] == m and e["ply"] == i and e["side"] == ("red" if i % 2 else "black")
        assert e["game_id"] == "g1" and e["board_id"] == "b1"
        assert e["fen_after"] == fen  # Fairy-Stockfish's FEN, move counters included
    assert out[0]["wxf"] == "C2=5" and out[0]["chinese"] == "炮二平五"  # h2e2
    assert out[1]["wxf"] == "H8+7" and out[1]["chinese"] in ("马8进7", "馬8進7", "马８进７", "馬８進７")
    assert len({e["event_id"] for e in out}) == PLIES, "event ids are unique"


def test_referee_run_and_replay_agree_on_notation(xq, tmp_path, shared_data, real_game):
    b = Board()
    for m in real_game["iccs"][:PLIES]:
        b.move(m)
    run = json_lines(_run(xq, tmp_path, b.jsonl()).stdout)
    pgn = tmp_path / "g.pgn"
    pgn.write_text('[Event "x"]\n\n' + " ".join(real_game["iccs"][:PLIES]) + " *\n", encoding="utf-8")
    rep = [e for e in json_lines(xq("replay", str(pgn), "--json").stdout) if e["type"] == "MoveMade"]
    key = ("iccs", "wxf", "chinese", "ply", "side")
    assert [[e[k] for k in key] for e in run] == [[e[k] for k in key] for e in rep]
    assert [board_part(e["fen_after"]) for e in run] == [board_part(e["fen_after"]) for e in rep]


def test_explicit_ids_and_times_are_accepted(xq, tmp_path, schemas):
    b = Board().move("h2e2").move("h9g7")
    lines = []
    for i, x in enumerate(b.lines, start=1):
        lines.append({**x, "event_id": f"dev-{i}", "source": "clock-7", "source_seq": i,
                      "received_at": x["occurred_at"] + 1000})
    r = _run(xq, tmp_path, "".join(json.dumps(x) + "\n" for x in lines))
    assert r.returncode == 0, r.stderr
    out = json_lines(r.stdout)
    assert [e["iccs"] for e in out] == ["h2e2", "h9g7"]
    for e in out:
        check_output_event(e, schemas)


def test_minimal_game_started_uses_the_defaults(xq, tmp_path):
    """Only the fields without a default in DESIGN: ruleset, level, start_fen, recording_required left out."""
    b = Board()
    b.lines[0].pop("recording_required")
    b.move("h2e2").move("h9g7")
    r = _run(xq, tmp_path, b.jsonl())
    assert r.returncode == 0, r.stderr
    out = json_lines(r.stdout)
    assert [e["iccs"] for e in out if e["type"] == "MoveMade"] == ["h2e2", "h9g7"]


def test_minimal_game_started_and_a_clean_real_game_give_only_moves(xq, tmp_path, real_game):
    b = Board()
    b.lines[0].pop("recording_required")
    for m in real_game["iccs"][:30]:
        b.move(m)
    out = json_lines(_run(xq, tmp_path, b.jsonl()).stdout)
    assert [e["type"] for e in out] == ["MoveMade"] * 30, [(e["type"], e.get("article")) for e in out
                                                           if e["type"] != "MoveMade"]


def test_start_fen_is_honoured(xq, tmp_path):
    fen = "3k5/9/9/9/9/9/9/9/R8/4K3R w - - 0 1"
    b = Board(fen=fen).move("a1d1")  # mate (4.1.1)
    out = json_lines(_run(xq, tmp_path, b.jsonl()).stdout)
    assert [e["type"] for e in out] == ["MoveMade", "GameEnded"], out
    assert out[1]["result"] == "1-0" and out[1]["article"] == "4.1.1"


def test_clock_press_without_a_move_is_ruled_8_1_7(xq, tmp_path, schemas):
    b = Board().move("h2e2").move("h9g7")
    b.press("red", dt=3.0)  # Red presses without having moved ...
    b.stable(dt=2.0)  # ... and the camera still sees the same position
    r = _run(xq, tmp_path, b.jsonl())
    assert r.returncode == 0, r.stderr
    out = json_lines(r.stdout)
    rulings = [e for e in out if e["type"] == "Ruling"]
    assert len(rulings) == 1, out
    check_output_event(rulings[0], schemas)
    assert rulings[0]["article"] == "8.1.7" and rulings[0]["side"] == "red" and rulings[0]["kind"] == "foul"
    assert rulings[0]["game_id"] == "g1" and rulings[0]["board_id"] == "b1"


@pytest.mark.parametrize("side,result", [("black", "1-0"), ("red", "0-1")])
def test_resignation_ends_the_game_4_1_12(xq, tmp_path, side, result, schemas):
    b = Board().move("h2e2").move("h9g7").move("h0g2")
    b.add("Resigned", dt=2.0, side=side)
    out = json_lines(_run(xq, tmp_path, b.jsonl()).stdout)
    ends = [e for e in out if e["type"] == "GameEnded"]
    assert len(ends) == 1 and out[-1] is ends[0], out
    check_output_event(ends[0], schemas)
    assert ends[0]["result"] == result and ends[0]["article"] == "4.1.12" and ends[0]["game_id"] == "g1"


def test_illegal_move_seen_by_the_camera_is_ruled(xq, tmp_path):
    b = Board().move("h2e2")
    sq = list(fen_squares(b.fen))
    # Black's horse b9 jumps to b5 (a rook's move): the camera sees it and Black presses.
    sq[(9 - 5) * 9 + 1], sq[(9 - 9) * 9 + 1] = sq[(9 - 9) * 9 + 1], "."
    b.stable("".join(sq), dt=5.0).press("black")
    out = json_lines(_run(xq, tmp_path, b.jsonl()).stdout)
    judged = [e for e in out if e["type"] in ("Ruling", "GameEnded", "AttentionNeeded")]
    assert judged, out
    assert any(e.get("article") in ("4.1.8", "8.1.8") for e in judged), judged


def test_event_for_a_board_without_a_game_and_the_run_goes_on(xq, tmp_path, schemas):
    stray = Board(board="b9", game="none")
    stray.lines.clear()
    stray.press("red").stable(fen_squares(START_FEN))
    b = Board().move("h2e2").move("h9g7")
    r = _run(xq, tmp_path, stray.jsonl() + b.jsonl())
    out = json_lines(r.stdout)
    for e in out:
        check_output_event(e, schemas)
    about_b9 = [e for e in out if e["board_id"] == "b9"]
    assert all(e["type"] == "AttentionNeeded" for e in about_b9)
    assert about_b9 or ("b9" in r.stderr), (r.stdout, r.stderr)
    assert [e["iccs"] for e in out if e["type"] == "MoveMade"] == ["h2e2", "h9g7"]


def test_a_malformed_line_is_a_clear_error_naming_the_line_and_the_run_goes_on(xq, tmp_path):
    b = Board().move("h2e2").move("h9g7")
    lines = b.jsonl().splitlines()
    lines.insert(3, "this is not json {")  # line 4
    lines.insert(5, json.dumps({"type": "NoSuchEvent", "board_id": "b1", "occurred_at": 1}))  # line 6
    lines.insert(6, json.dumps({"type": "BoardStable", "board_id": "b1"}))  # line 7: fields missing
    r = _run(xq, tmp_path, "\n".join(lines) + "\n")
    assert "line 4" in r.stderr and "line 6" in r.stderr and "line 7" in r.stderr, r.stderr
    assert r.returncode != 0
    assert [e["iccs"] for e in json_lines(r.stdout) if e["type"] == "MoveMade"] == ["h2e2", "h9g7"]


def test_the_same_file_twice_gives_byte_identical_output(xq, tmp_path, real_game):
    b = Board().move("h2e2").move("h9g7")
    b.press("red", dt=3.0).stable(dt=2.0)
    for m in real_game["iccs"][2:10]:
        b.move(m)
    b.add("DrawOffered", side=b.side).add("DrawAnswered", side="black" if b.side == "red" else "red",
                                          accepted=False)
    b.add("Resigned", side="red")
    first = _run(xq, tmp_path, b.jsonl(), "same.jsonl")
    second = xq("referee", "run", str(tmp_path / "same.jsonl"), "--json")
    assert first.returncode == second.returncode == 0
    assert first.stdout and first.stdout == second.stdout
    assert first.stdout.encode() == second.stdout.encode()


def test_missing_input_file(xq, tmp_path):
    r = xq("referee", "run", str(tmp_path / "absent.jsonl"))
    assert r.returncode != 0 and "absent.jsonl" in r.stderr and "Traceback" not in r.stderr


def test_several_boards_interleaved_in_one_file(xq, tmp_path, schemas):
    """Boards are independent: each one's lines, interleaved by time with the others', give its own rulings."""
    flag = Board(board="b-flag", game="g-flag", time_control={"scheme": "sudden_death", "base_ms": 3000})
    flag.move("h2e2")  # 5 s on a 3 s clock: Red's flag has fallen (4.1.6)
    draw = Board(board="b-draw", game="g-draw").move("h2e2").move("h9g7")
    draw.fen = sf_after(draw.fen, ["h0g2"])
    draw.stable(dt=5.0).add("DrawOffered", side="red").press("red")  # 22.1: after one's move, before the press
    draw.add("DrawAnswered", side="black", accepted=True)  # 4.2.1
    touch = Board(board="b-touch", game="g-touch").move("h2e2")
    touch.add("TouchReported", side="black", point="b9").move("h9g7")  # 5.1: touched b9, moved h9
    clean = Board(board="b-clean", game="g-clean").move("h2e2").move("h9g7").move("h0g2")
    lines = sorted(flag.lines + draw.lines + touch.lines + clean.lines, key=lambda x: x["occurred_at"])
    r = _run(xq, tmp_path, "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines))
    assert r.returncode == 0, r.stderr
    out = json_lines(r.stdout)
    for e in out:
        check_output_event(e, schemas)

    def of(board):
        return [e for e in out if e["board_id"] == board]

    ends = [e for e in of("b-flag") if e["type"] == "GameEnded"]
    assert len(ends) == 1 and ends[0]["result"] == "0-1" and ends[0]["article"] == "4.1.6", of("b-flag")
    ends = [e for e in of("b-draw") if e["type"] == "GameEnded"]
    assert len(ends) == 1 and ends[0]["result"] == "1/2-1/2" and ends[0]["article"] == "4.2.1", of("b-draw")
    assert not [e for e in of("b-draw") if e["type"] == "Ruling"], of("b-draw")
    rulings = [e for e in of("b-touch") if e["type"] == "Ruling"]
    assert rulings and rulings[0]["article"] == "5.1" and rulings[0]["side"] == "black", of("b-touch")
    assert [e["type"] for e in of("b-clean")] == ["MoveMade"] * 3
    assert {e["game_id"] for e in of("b-clean")} == {"g-clean"}


def test_output_source_seq_is_monotonic_per_source(xq, tmp_path):
    a = Board(board="b1", game="g1").move("h2e2").move("h9g7")
    b = Board(board="b2", game="g2").move("h2e2").move("h9g7")
    lines = sorted(a.lines + b.lines, key=lambda x: x["occurred_at"])
    out = json_lines(_run(xq, tmp_path, "".join(json.dumps(x) + "\n" for x in lines)).stdout)
    assert len(out) == 4
    last: dict[str, int] = {}
    for e in out:
        assert e["source_seq"] > last.get(e["source"], 0), (e["source"], e["source_seq"], last)
        last[e["source"]] = e["source_seq"]


def test_snapshots_with_colour_only_and_unsure_points(xq, tmp_path, real_game):
    """BoardStable `squares` may say X / x (a red / black piece of unknown type) and `?` (unsure): the referee
    still follows a real game from colours alone, and waits out an unsure point."""
    import re

    b = Board()
    for i, m in enumerate(real_game["iccs"][:12]):
        side = b.side
        b.fen = sf_after(b.fen, [m])
        colours = re.sub("[kabnrcp]", "x", re.sub("[KABNRCP]", "X", fen_squares(b.fen)))
        if i == 5:  # the camera is unsure of the destination first, then sees it
            unsure = list(colours)
            unsure[(9 - int(m[3])) * 9 + "abcdefghi".index(m[2])] = "?"
            b.stable("".join(unsure), dt=3.0)
        b.stable(colours, dt=3.0).press(side)
    out = json_lines(_run(xq, tmp_path, b.jsonl()).stdout)
    assert [e["type"] for e in out] == ["MoveMade"] * 12, out
    assert [e["iccs"] for e in out] == real_game["iccs"][:12]
    assert out[-1]["fen_after"] == b.fen


def test_snapshots_alone_without_clock_presses_give_the_moves(xq, tmp_path, real_game):
    """GameStarted and BoardStable snapshots only (no clock device): one MoveMade per move, nothing else."""
    b = Board()
    for m in real_game["iccs"][:20]:
        b.fen = sf_after(b.fen, [m])
        b.stable(dt=5.0)
    out = json_lines(_run(xq, tmp_path, b.jsonl()).stdout)
    assert [e["type"] for e in out] == ["MoveMade"] * 20, out
    assert [e["iccs"] for e in out] == real_game["iccs"][:20] and out[-1]["fen_after"] == b.fen


def test_press_well_before_the_move_is_8_1_7(xq, tmp_path):
    b = Board().move("h2e2").move("h9g7")
    b.press("red", dt=3.0)  # Red presses without having moved ...
    b.fen = sf_after(b.fen, ["h0g2"])
    b.stable(dt=5.0)  # ... and the camera's frame 5 s later is the first to show Red's move
    out = json_lines(_run(xq, tmp_path, b.jsonl()).stdout)
    rulings = [e for e in out if e["type"] == "Ruling"]
    assert [(r["article"], r["side"]) for r in rulings] == [("8.1.7", "red")], out


def test_camera_lagging_behind_the_clock_is_not_a_press_without_move(xq, tmp_path):
    b = Board()
    snapshots = []
    for m in ("h2e2", "h9g7", "h0g2"):
        side = b.side
        b.fen = sf_after(b.fen, [m])
        b.t += 5.0
        snapshots.append({"type": "BoardStable", "board_id": "b1", "occurred_at": T0 + round(b.t * 1e6),
                          "squares": fen_squares(b.fen), "frame_sha256": f"{len(snapshots):064x}"})
        b.press(side, dt=0.5)
    # Arrival order: the presses first (the clock's path is fast), the vision's snapshots seconds later, each
    # still stamped with its frame's capture time.
    lines = b.lines + snapshots
    out = json_lines(_run(xq, tmp_path, "".join(json.dumps(x) + "\n" for x in lines)).stdout)
    assert [(e["type"], e.get("iccs") or e.get("article")) for e in out] == [
        ("MoveMade", "h2e2"), ("MoveMade", "h9g7"), ("MoveMade", "h0g2")]


def _two_presses_without_a_move_black_last() -> Board:
    """Red and Black each press once without moving, three moves follow, and Black presses again without a move:
    the last line of the file. No camera report comes after it."""
    b = Board()
    b.press("red", dt=3.0).stable(fen_squares(START_FEN), dt=1.0)  # Red's 8.1.7 foul
    b.press("black", dt=2.0)  # Black's 8.1.7 foul, settled by Red's move that the camera sees next
    b.move("h2e2").move("h9g7").move("h0g2")
    return b.press("black", dt=3.0)


def test_a_press_without_a_move_on_the_last_line_is_folded_at_the_end_of_the_input(xq, tmp_path, schemas):
    b = _two_presses_without_a_move_black_last()
    r = _run(xq, tmp_path, b.jsonl())
    assert r.returncode == 0, r.stderr
    out = json_lines(r.stdout)
    for e in out:
        check_output_event(e, schemas)
    assert [(e["type"], e.get("side"), e.get("article") or e.get("iccs")) for e in out] == [
        ("Ruling", "red", "8.1.7"), ("MoveMade", "red", "h2e2"), ("Ruling", "black", "8.1.7"),
        ("MoveMade", "black", "h9g7"), ("MoveMade", "red", "h0g2"), ("GameEnded", None, "4.1.9")]
    end = out[-1]
    assert end["result"] == "1-0" and "black" in end["reason"]
    # Its time is the last input's (nothing later is known), and it follows the game's own output numbering.
    assert end["occurred_at"] == b.lines[-1]["occurred_at"]
    assert end["source"] == "referee:g1" and end["source_seq"] == out[-2]["source_seq"] + 1
    # The same file again gives the same bytes; from standard input, the same outputs (ids aside: the inputs'
    # ids are filled in from the source's name).
    again = xq("referee", "run", str(tmp_path / "in.jsonl"))
    assert again.returncode == 0 and again.stdout.encode() == r.stdout.encode()
    piped = json_lines(xq("referee", "run", "-", stdin=b.jsonl()).stdout)
    assert [{k: v for k, v in e.items() if k not in ("event_id", "source", "evidence")} for e in piped] == [
        {k: v for k, v in e.items() if k not in ("event_id", "source", "evidence")} for e in out]


def test_a_first_press_without_a_move_on_the_last_line_is_a_foul_with_the_press_as_evidence(xq, tmp_path):
    b = Board().move("h2e2").move("h9g7")
    b.press("red", dt=3.0)  # the last line: Red presses and the camera never shows a move
    b.lines[-1]["event_id"] = "press-without-move"
    out = json_lines(_run(xq, tmp_path, b.jsonl()).stdout)
    rulings = [e for e in out if e["type"] == "Ruling"]
    assert [(e["kind"], e["side"], e["article"]) for e in rulings] == [("foul", "red", "8.1.7")], out
    assert not [e for e in out if e["type"] == "GameEnded"]
    assert rulings[0]["evidence"] == ["press-without-move"]


def test_a_move_pressed_on_the_last_line_gives_nothing_more_at_the_end_of_the_input(xq, tmp_path):
    b = Board().move("h2e2").move("h9g7")  # the last line is Black's press after its move, seen by the camera
    out = json_lines(_run(xq, tmp_path, b.jsonl()).stdout)
    assert [e["type"] for e in out] == ["MoveMade", "MoveMade"], out


def test_a_perpetual_check_is_told_to_the_arbiter_unasked_and_confirming_it_ends_the_game(xq, tmp_path, schemas):
    """23.2: red checks round one cycle (i8i9 e9e8 i9i8 e8e9 ...): AttentionNeeded names each side's moves and the
    ruling it points to, once; the arbiter's confirmation ends the game by 4.1.4."""
    b = Board(fen="4k4/8R/9/9/9/9/9/9/9/3K5 w - - 0 1")
    for m in ["i8i9", "e9e8", "i9i8", "e8e9"] * 3:  # six checks
        b.move(m)
    out = json_lines(_run(xq, tmp_path, b.jsonl()).stdout)
    for e in out:
        check_output_event(e, schemas)
    alerts = [e for e in out if e["type"] == "AttentionNeeded"]
    assert len(alerts) == 1 and not [e for e in out if e["type"] in ("Ruling", "GameEnded")], out
    a = alerts[0]
    assert (a["kind"], a["outcome"], a["side"], a["result"]) == ("repetition", "loss", "red", "0-1")
    assert a["patterns"] == {"red": "长将", "black": "闲"} and a["article"].startswith("4.1.4")
    b.add("ArbiterDecision", result="", article="23", action="confirm", alert=a["event_id"])
    out = json_lines(_run(xq, tmp_path, b.jsonl()).stdout)
    assert out[-1]["type"] == "GameEnded" and out[-1]["result"] == "0-1" and out[-1]["article"].startswith("4.1.4")


def test_a_natural_limit_coming_due_is_told_to_the_arbiter(xq, tmp_path, schemas):
    """23.3 / 4.2.4: 55 of 60 rounds without a capture: AttentionNeeded (kind natural_limit), once."""
    b = Board(fen="rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 106 54")
    for m in ["h0g2", "h9g7", "b0c2", "b9c7", "g2h0", "g7h9"]:
        b.move(m)
    out = json_lines(_run(xq, tmp_path, b.jsonl()).stdout)
    for e in out:
        check_output_event(e, schemas)
    notices = [e for e in out if e["type"] == "AttentionNeeded"]
    assert [(e["kind"], e["article"]) for e in notices] == [("natural_limit", "4.2.4")], out
    assert "55 of 60 rounds" in notices[0]["reason"] and not [e for e in out if e["type"] in ("Ruling", "GameEnded")]


def test_referee_serve_refuses_a_bad_alerts_table_before_it_touches_the_broker(tmp_path) -> None:
    venue = tmp_path / "venue.json"
    venue.write_text(json.dumps({"alerts": {"flag_warning_s": -1}}))
    # No broker listens on port 9: the configuration is read, and refused, first.
    r = run_xqarb(["referee", "serve", "--bootstrap-servers", "127.0.0.1:9", "--config", venue], cwd=tmp_path,
                  timeout=60)
    assert r.returncode == 2, r.stderr
    assert "alerts.flag_warning_s must be a number of seconds above 0" in r.stderr
