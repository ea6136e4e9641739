"""Frames in capture order per board: a frame not later than one already read is not given to the tracker.

A board's frames reach vision in the order the broker holds them, which is nearly always the order they were
captured, but not always: on a broker that rolls frames between two topics (xqarb.bus.frames_topics_at) a frame
sent just before a switch may be acknowledged into the old topic after the consumer went on to the new one's
frames, and a producer that sends again after a broker restart sends frames already read. The tracker steps a
board forward in time (the still-board rule measures time from frame to frame; a touch is a hand seen between two
still boards), so an older frame stepped after a newer one would have the board go back in time. What such a
frame shows, later frames already showed: it is skipped (and counted by the service), never stepped.

Per game as well as per board: a camera replaced between games may keep a clock behind the last one's, and the
next game's frames are not judged by the last game's times; the last game's frames still on their way are judged
by that game's own.

Pure: capture times in, verdicts out; no clock is read.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field

# Games remembered per board: the one played and the last few before it, whose frames may still be on their way
# (a board plays one game after another; a late frame of a game older than these is not looked for).
GAMES_KEPT = 4

Board = tuple[int, str]  # (partition, board id)


@dataclass
class FrameOrder:
    """The capture time of the last frame read, per board and game (the game the frame names, None where the camera
    names none)."""

    games_kept: int = GAMES_KEPT
    _last: dict[Board, OrderedDict[str | None, int]] = field(default_factory=dict)

    def admit(self, board: Board, game: str | None, captured_us: int) -> bool:
        """Whether a frame captured at `captured_us` is later than every frame of its board and game read so far;
        if so it is taken as read (the next frame must be later still)."""
        games = self._last.setdefault(board, OrderedDict())
        last = games.get(game)
        if last is not None and captured_us <= last:
            return False
        games[game] = captured_us
        games.move_to_end(game)
        while len(games) > self.games_kept:
            games.popitem(last=False)
        return True

    def last(self, board: Board, game: str | None) -> int | None:
        """The capture time of the last frame of a board and game read (None: none yet)."""
        return self._last.get(board, {}).get(game)

    def drop(self, partitions: Iterable[int]) -> None:
        """Partitions released: their boards start again from their next frames (as their trackers do)."""
        gone = set(partitions)
        for board in [b for b in self._last if b[0] in gone]:
            del self._last[board]
