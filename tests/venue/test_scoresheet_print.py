"""The scoresheet's print view in a real headless browser (Debian's Chromium): a signed 60-round game prints on
one A4 page, as a paper scoresheet does (article 9: the sheet is signed at the board when the game ends)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.referee.test_scoresheet import Ledger, moves, started
from tests.venue.test_pages import CHROMIUM, FLAGS
from xqarb.referee.scoresheet import render_html, scoresheet_of

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (scripts/setup.sh --dev)")

A4_PT = (595.3, 841.9)  # 210 x 297 mm in PDF points (1/72 inch)
# How far Chromium's page box may be from A4 (points): it rounds the page to whole CSS pixels (measured 594.96).
PAGE_TOLERANCE_PT = 2.0


def test_a_signed_sixty_round_game_prints_on_one_a4_page(tmp_path: Path) -> None:
    led = Ledger()
    started(led, {"scheme": "increment", "base_ms": 5_400_000, "increment_ms": 30_000})
    moves(led, [("red" if i % 2 == 0 else "black", "炮二平五" if i % 2 == 0 else "马８进７") for i in range(120)])
    led.add("Ruling", kind="foul", side="black", article="8.1.5", ruleset="cxa-2021", ply=12, message="touched",
            evidence=[])
    led.add("GameEnded", at_s=5000, result="1/2-1/2", article="4.2.1", reason="agreed", ruleset="cxa-2021")
    led.add("ArbiterDecision", entry="input", at_s=5100, source="arbiter:chief", result="1/2-1/2", article="9",
            note="", action="sign_off")
    sheet = scoresheet_of(led.entries, remaining=(1_000_000, 2_000_000))
    assert len(sheet.rounds) == 60
    page = tmp_path / "sheet.html"
    page.write_text(render_html(sheet), encoding="utf-8")
    pdf = tmp_path / "sheet.pdf"
    subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--no-pdf-header-footer",
                    f"--print-to-pdf={pdf}", page.as_uri()], capture_output=True, timeout=60, check=True)
    data = pdf.read_bytes()
    pages = re.findall(rb"/Type\s*/Page(?![a-z])", data)
    boxes = {tuple(float(x) for x in m) for m in re.findall(rb"/MediaBox\s*\[\s*0 0 ([\d.]+) ([\d.]+)\s*\]", data)}
    assert len(pages) == 1, f"the sheet printed on {len(pages)} pages"
    [(width, height)] = boxes
    assert abs(width - A4_PT[0]) <= PAGE_TOLERANCE_PT and abs(height - A4_PT[1]) <= PAGE_TOLERANCE_PT
