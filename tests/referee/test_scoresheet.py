"""The article 9 scoresheet from a game's ledger entries (services/referee/scoresheet.py), on hand-built games."""

from __future__ import annotations

from typing import Any

import pytest

from xqarb.referee.scoresheet import (
    Round,
    SignOffRefused,
    check_sign_off,
    render_html,
    scoresheet_of,
    time_control_text,
)

T0 = 1_780_000_000_000_000  # µs
MOVES = [("red", "炮二平五"), ("black", "马８进７"), ("red", "马二进三"), ("black", "车９平８"), ("red", "车一平二")]


class Ledger:
    """Ledger entries in their JSON form (as GET /api/games/<id>/events gives them), numbered and hashed."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []

    def add(self, type_: str, entry: str = "output", at_s: float = 0, source: str = "referee", **data: Any) -> None:
        seq = len(self.entries) + 1
        event = {"type": type_, "event_id": f"e{seq}", "board_id": "b7", "source": source, "source_seq": seq,
                 "occurred_at": T0 + int(at_s * 1e6), "received_at": T0 + int(at_s * 1e6), "game_id": "g1", **data}
        self.entries.append({"game_id": "g1", "seq": seq, "kind": entry, "event": event, "origin": None,
                             "prev_hash": f"{seq - 1:064x}", "hash": f"{seq:064x}"})


def started(ledger: Ledger, time_control: dict[str, Any]) -> None:
    ledger.add("GameStarted", entry="input", source="arbiter:chief", red_player="许银川", black_player="吕钦",
               ruleset="cxa-2021", rapid=False, level="national", time_control=time_control, event="全国个人赛",
               round=3, board_no=5)


def moves(ledger: Ledger, plies: list[tuple[str, str]], first: int = 1,
          device: list[tuple[int, int]] | None = None) -> None:
    for i, (side, text) in enumerate(plies):
        red_ms, black_ms = device[i] if device else (None, None)
        ledger.add("MoveMade", at_s=10 * (first + i), ply=first + i, side=side, iccs="a0a1", wxf="", chinese=text,
                   fen_after="", red_ms=red_ms, black_ms=black_ms)


def resigned_after_foul() -> Ledger:
    """Black touches a piece it cannot move (8.1.5); Red presses without moving (8.1.7) and resigns at once (8.2)."""
    led = Ledger()
    started(led, {"scheme": "increment", "base_ms": 3_600_000, "increment_ms": 30_000})
    moves(led, MOVES[:2])
    led.add("Ruling", kind="foul", side="black", article="8.1.5", ruleset="cxa-2021", ply=2,
            message="black touched a piece it cannot move", evidence=[])
    moves(led, MOVES[2:], first=3)
    led.add("Ruling", kind="foul", side="red", article="8.1.7", ruleset="cxa-2021", ply=5,
            message="red pressed the clock without moving", evidence=[])
    led.add("Ruling", kind="correction", side="red", article="8.2", ruleset="cxa-2021", ply=5,
            message="red resigned at once after the foul (8.1.7): the foul is waived", evidence=[])
    led.add("GameEnded", at_s=70, result="0-1", article="4.1.12", reason="red resigned", ruleset="cxa-2021")
    return led


def test_scoresheet_holds_result_time_used_fouls_and_moves() -> None:
    sheet = scoresheet_of(resigned_after_foul().entries, remaining=(3_500_000, 3_550_000))
    assert (sheet.result, sheet.result_article, sheet.result_reason) == ("0-1", "4.1.12", "red resigned")
    # 6.1: given = base + 30 s per move made (Red 3, Black 2); used = given - left.
    assert sheet.red_used_ms == 3_600_000 + 3 * 30_000 - 3_500_000 == 190_000
    assert sheet.black_used_ms == 3_600_000 + 2 * 30_000 - 3_550_000 == 110_000
    assert sheet.rounds == (
        Round(1, "炮二平五", "马８进７"), Round(2, "马二进三", "车９平８"), Round(3, "车一平二", ""))
    assert [(f.side, f.article, f.ply, f.waived) for f in sheet.fouls] == [
        ("black", "8.1.5", 2, False), ("red", "8.1.7", 5, True)]  # 8.2: resigning at once waives the foul
    assert (sheet.event, sheet.round, sheet.board_no) == ("全国个人赛", 3, 5)
    assert (sheet.red_player, sheet.black_player, sheet.ruleset, sheet.level) == ("许银川", "吕钦", "cxa-2021",
                                                                                    "national")
    assert sheet.time_control_text == "每方基本用时60分钟，每走一步加30秒 (6.1)"
    assert (sheet.head_seq, sheet.sign_off) == (10, None)
    js = sheet.to_json()
    assert js["fouls_count"] == {"red": 0, "black": 1} and js["rounds"][2] == [3, "车一平二", ""]
    assert js["result_text"] == "黑胜 Black wins" and js["sign_off_article"] == "9"


def test_time_used_in_periods_from_the_device_times_of_the_last_move() -> None:
    # 6.2: 10 minutes for 2 moves, then 1 minute per move, repeating: Red's 3 moves reached two more periods.
    led = Ledger()
    started(led, {"scheme": "moves_in_time", "periods": [{"moves": 2, "ms": 600_000},
                                                         {"moves": 1, "ms": 60_000, "repeat": True}]})
    moves(led, MOVES, device=[(590_000, 600_000), (590_000, 580_000), (640_000, 580_000), (640_000, 630_000),
                              (675_000, 630_000)])
    sheet = scoresheet_of(led.entries)
    assert sheet.red_used_ms == 600_000 + 60_000 + 60_000 - 675_000 == 45_000
    assert sheet.black_used_ms == 600_000 + 60_000 - 630_000 == 30_000
    assert sheet.result is None and sheet.time_control_text == "10分钟走满2着，1分钟走满1着（以后每时限同） (6.2)"


def test_a_restored_position_drops_the_cancelled_moves() -> None:
    # 5.8.2: after a restore the referee makes ply 3 again; the sheet keeps only the moves that stand.
    led = Ledger()
    started(led, {"scheme": "sudden_death", "base_ms": 900_000})
    moves(led, MOVES[:4])
    moves(led, [("red", "兵七进一")], first=3)
    sheet = scoresheet_of(led.entries)
    assert sheet.rounds == (Round(1, "炮二平五", "马８进７"), Round(2, "兵七进一", ""))
    assert sheet.plies == 3 and sheet.time_control_text == "每方15分钟包干 (6.4)"
    handicap = {"scheme": "increment", "base_ms": 600_000, "increment_ms": 5_000, "black_base_ms": 480_000}
    assert time_control_text(handicap) == "每方基本用时10分钟，每走一步加5秒 (6.1)；黑方贴时：基本用时8分钟 (6.5)"


def test_sign_off_only_once_the_game_has_ended_and_only_once() -> None:
    led = resigned_after_foul()
    ended = led.entries
    in_progress = scoresheet_of(ended[:-1])
    with pytest.raises(SignOffRefused) as exc:
        check_sign_off(in_progress, "")
    assert exc.value.error == "game_in_progress" and "has not ended" in exc.value.detail
    sheet = scoresheet_of(ended)
    check_sign_off(sheet, "0-1")
    with pytest.raises(SignOffRefused) as exc:
        check_sign_off(sheet, "1-0")
    assert exc.value.error == "result_mismatch" and "0-1" in exc.value.detail
    led.add("ArbiterDecision", entry="input", at_s=90, source="arbiter:chief", result="0-1", article="9",
            note="both players signed", action="sign_off")
    signed = scoresheet_of(led.entries)
    assert signed.sign_off is not None
    assert (signed.sign_off.by, signed.sign_off.seq, signed.sign_off.hash) == ("arbiter:chief", 11, f"{11:064x}")
    assert signed.sign_off.at_us == T0 + 90_000_000
    with pytest.raises(SignOffRefused) as exc:
        check_sign_off(signed, "")
    assert exc.value.error == "already_signed" and "seq 11" in exc.value.detail


def test_a_sign_off_before_the_end_is_not_a_signature() -> None:
    led = Ledger()
    started(led, {"scheme": "sudden_death", "base_ms": 900_000})
    led.add("ArbiterDecision", entry="input", source="arbiter:chief", result="", article="9", action="sign_off")
    led.add("GameEnded", result="1/2-1/2", article="4.2.1", reason="agreed", ruleset="cxa-2021")
    assert scoresheet_of(led.entries).sign_off is None


def test_html_is_a_printable_a4_sheet_with_signature_lines_and_the_ledger_tie() -> None:
    led = resigned_after_foul()
    unsigned = render_html(scoresheet_of(led.entries, remaining=(3_500_000, 3_550_000)))
    for text in ("size: A4", "@media print", "许银川", "吕钦", "全国个人赛", "红方签字", "黑方签字", "监局裁判签字",
                 "4.1.12", "8.1.5", "8.1.7", "免判", "0:03:10", "0:01:50", "炮二平五", "车一平二"):
        assert text in unsigned, text
    assert "Signed off" not in unsigned
    led.add("ArbiterDecision", entry="input", at_s=90, source="arbiter:chief", result="0-1", article="9",
            note="", action="sign_off")
    signed = render_html(scoresheet_of(led.entries))
    assert "Signed off by the arbiter: <b>arbiter:chief</b>" in signed
    assert f"ledger seq 11 · hash {11:064x}" in signed
    led.entries[0]["event"]["red_player"] = "<script>x</script>"
    assert "<script>x" not in render_html(scoresheet_of(led.entries))  # names are escaped, not markup


def test_the_fold_never_ends_a_game_on_a_sign_off_and_ignores_it_after_the_result() -> None:
    from tests.referee.conftest import Scenario

    # Posted past the actions route (which refuses it with 409), a sign-off during play changes nothing.
    early = Scenario().moves("h2e2", "h9g7").add("ArbiterDecision", result="1-0", article="9", action="sign_off")
    r = early.run()
    assert r.ended is None and r.moves == ["h2e2", "h9g7"]
    assert r.attention == ["ArbiterDecision sign_off before the game has ended: the scoresheet is signed once the "
                           "result stands (9); not applied"]
    late = Scenario().move("h2e2").add("ArbiterDecision", result="0-1", article="4.1.12")
    late.add("ArbiterDecision", result="0-1", article="9", action="sign_off")
    r = late.run()
    assert r.ended is not None and r.ended["result"] == "0-1" and r.attention == []
    assert [o.type for o in r.outputs] == ["MoveMade", "GameEnded"]
