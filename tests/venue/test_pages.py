"""The three web pages in a real headless browser (Debian's Chromium): what they show, from a real API."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.venue.gamedata import MOVES
from xqarb.ingest.server import ServerThread

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium is not installed (scripts/setup.sh --dev installs it)"
)

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
]


def browse(
    url: str, tmp: Path, *, screenshot: Path | None = None, budget_ms: int = 4000, size: str = "1280,900"
) -> str:
    """The page's DOM after its scripts ran for `budget_ms` of virtual time (and a screenshot if asked)."""
    profile = tmp / f"profile-{time.monotonic_ns()}"
    args = [
        CHROMIUM,
        *FLAGS,
        f"--user-data-dir={profile}",
        f"--virtual-time-budget={budget_ms}",
        f"--window-size={size}",
    ]
    if screenshot is not None:
        subprocess.run([*args, f"--screenshot={screenshot}", url], capture_output=True, timeout=60, check=True)
        assert screenshot.is_file() and screenshot.stat().st_size > 5000
    out = subprocess.run([*args, "--dump-dom", url], capture_output=True, timeout=60, check=True, text=True)
    return out.stdout


@pytest.fixture
def served(api_setup: dict[str, Any]) -> Any:
    server = ServerThread(api_setup["app"], port=0).start()
    try:
        yield server.url, api_setup
    finally:
        server.stop()


def shot(name: str) -> Path | None:
    """Where to keep a screenshot for a person to look at ($XQARB_SCREENSHOTS); none by default (saves a launch)."""
    where = os.environ.get("XQARB_SCREENSHOTS")
    if not where:
        return None
    Path(where).mkdir(parents=True, exist_ok=True)
    return Path(where) / name


def test_overview_shows_every_board_alerts_first(served: Any, tmp_path: Path, venue: dict[str, Any]) -> None:
    url, _ = served
    dom = browse(f"{url}/", tmp_path, screenshot=shot("overview.png"))
    # Board 7 has a foul (5.3): its card comes first and is marked; board 8 has no game.
    first = dom.index(f'data-board="{venue["b7"]}"')
    assert first < dom.index(f'data-board="{venue["b8"]}"')
    assert "card has-alert" in dom[first - 60 : first]
    assert "湖北李智平" in dom and "吉林胡慶陽" in dom
    assert "fouls: red 0 · black 1" in dom and "5.3" in dom
    assert "59:46" in dom and "59:42" in dom  # the clocks after the last move
    assert dom.count("<svg") >= 2 and dom.count('class="xq-piece') >= 32 + 32
    assert "2 boards" in dom and "1 alert" in dom


def test_review_shows_timeline_state_frames_and_verifies(served: Any, tmp_path: Path) -> None:
    url, setup = served
    game = setup["game"]
    dom = browse(f"{url}/review.html?game={game}", tmp_path, screenshot=shot("review.png"))
    assert 'data-ready="1"' in dom
    assert dom.count("<tr ") >= setup["entries"] - 1  # every ledger entry in the timeline (+ header)
    for _, _, chinese in MOVES:
        assert chinese in dom
    assert "5.3" in dom and "touched piece not moved" in dom  # the ruling with its article
    assert f"/api/games/{game}/frames/{setup['shas'][-1]}" in dom  # evidence frames around the selected entry
    assert f"/api/games/{game}/pgn" in dom
    assert 'data-selected="12"' in dom  # the last move is selected first: its position is drawn
    assert "59:46" in dom or "--:--" in dom


def test_overlay_follows_the_stream(served: Any, tmp_path: Path, venue: dict[str, Any]) -> None:
    url, _ = served
    dom = browse(
        f"{url}/overlay.html?board={venue['b7']}&once=1",
        tmp_path,
        screenshot=shot("overlay.png"),
        size="700,420",
    )
    assert f'data-moves="{len(MOVES)}"' in dom and f'data-last-move="{MOVES[-1][0]}"' in dom
    assert MOVES[-1][2] in dom and "湖北李智平" in dom
