"""The standings page in headless Chromium: the table as a browser lays it out, checked on its screenshot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.venue.test_pages import CHROMIUM, browse
from tests.venue.test_tournament_api import tournament_app  # noqa: F401  (the fixture)
from xqarb.ingest.server import ServerThread

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed")
HEADER_RGB = (0xF3, 0xED, 0xE0)  # the table header's background in the page's style


def test_standings_page_in_chromium(tournament_app: Any, tmp_path: Path) -> None:  # noqa: F811
    import numpy as np
    from PIL import Image

    server = ServerThread(tournament_app, port=0).start()
    try:
        shot = tmp_path / "standings.png"
        dom = browse(f"{server.url}/tournament.html", tmp_path, screenshot=shot, size="900,500")
    finally:
        server.stop()
    rows = dom[dom.index("<tbody>"):]
    assert rows.index("甲") < rows.index("乙") < rows.index("丙") < rows.index("丁")
    assert "对手分" in dom and "第1轮后 after round 1" in dom
    img = Image.open(shot).convert("RGB")
    pixels = np.asarray(img).astype(int)
    header = int((np.abs(pixels - np.array(HEADER_RGB)).max(axis=2) <= 4).sum())
    ink = int((pixels.sum(axis=2) < 200).sum())  # dark text: the title, names and numbers were drawn
    # Measured: 18,245 header pixels (the row spans the table, 665 x 33 px) and 5,185 dark text pixels.
    assert header > 5_000, header
    assert ink > 2_000, ink
    # The header band lies above the dark text of the rows: the table is laid out, not an empty page.
    header_rows = [y for y in range(img.height) if img.getpixel((40, y)) == HEADER_RGB]
    assert header_rows and min(header_rows) < img.height // 2
