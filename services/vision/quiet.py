"""A board's camera gone quiet: which boards have sent no frame for a while, and which sent one again after that.

Vision is the place that knows: every frame of its boards passes through it. Pure: the caller passes the time in
(its own clock, when a frame was handled and when it asks); the reports name the capture times (the camera's
clock), so the referee reads them on the board's own time line. A board is watched from its first frame; after
the GameEnded of the game it plays, a silence is expected (the camera switched off between games) and is not
reported until its next game starts. A silence is reported once; the first frame after it reports the end.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

# How long (s) a board's camera may send no frame before the arbiter is told: cameras send frames several times a
# second (DESIGN: 4 frames/s), so 20 s is no network hiccup but a camera off, unplugged or turned away, while
# a move can be made and pressed in that time that the referee will not see until frames come again.
CAMERA_QUIET_S = 20.0
# A look at the boards this long (s) after the last one means the watching process was away (paused, starved of the
# CPU; it looks about once a second): the time away is not counted as any board's silence, since the frames sent
# meanwhile are waiting unread, and the consumer's idea of how far behind it is was learned before it went away.
AWAY_S = 5.0


@dataclass(frozen=True, slots=True)
class QuietReport:
    """A silence begun (`back` False) or ended (`back` True) on one board."""

    key: tuple[int, str]  # (partition, board)
    since: int  # µs, capture time of the last frame before the silence
    at: int  # µs: since + the setting (begun); the capture time of the first frame again (ended)
    back: bool
    frame_event_id: str  # the frame the report is tied to (the last before, or the first after)
    frame_seq: int  # that frame's source_seq
    game: str | None


@dataclass
class _Board:
    captured: int  # µs: the last frame's capture time
    seen: float  # s, the caller's clock: when the last frame came
    event_id: str
    seq: int
    game: str | None = None
    ended: bool = False  # the game it plays has ended: a silence is expected
    told: bool = False  # a silence reported, no frame since


class QuietWatch:
    def __init__(self, quiet_s: float = CAMERA_QUIET_S, away_s: float = AWAY_S) -> None:
        self.quiet_s = quiet_s
        self.away_s = away_s
        self._boards: dict[tuple[int, str], _Board] = {}
        self._looked: float | None = None  # the caller's clock at the last `due`

    def frame(self, key: tuple[int, str], event_id: str, seq: int, captured: int, game: str | None,
              now: float) -> QuietReport | None:
        """A frame of the board came at `now`: the end of its reported silence, if it had one."""
        b = self._boards.get(key)
        if b is None:
            self._boards[key] = _Board(captured, now, event_id, seq, game)
            return None
        report = QuietReport(key, b.captured, captured, True, event_id, seq, game or b.game) if b.told else None
        if game and game != b.game:
            b.game, b.ended = game, False
        b.captured, b.seen, b.event_id, b.seq, b.told = captured, now, event_id, seq, False
        return report

    def game(self, key: tuple[int, str], game: str, ended: bool, now: float) -> None:
        """The board's game started (GameStarted) or ended (GameEnded) at `now`. A game that starts on a board
        whose camera was off between games has the setting from its start before a silence is reported."""
        b = self._boards.get(key)
        if b is None or (ended and b.game is not None and game != b.game):
            return  # (the end of an earlier game, arriving late, says nothing about the one played)
        if not ended and b.ended:
            b.seen = max(b.seen, now)
        b.game, b.ended = game, ended

    def due(self, now: float, behind: Iterable[int] = ()) -> list[QuietReport]:
        """The silences longer than the setting at `now` not yet reported (each once). `behind`: partitions whose
        frames the caller has not read to their end: its boards there are not judged (a process that was paused,
        or reads a backlog, has not yet read the frames their cameras sent meanwhile; told quiet, the referee
        would fold the presses of that time before the moves in those frames)."""
        if self._looked is not None and now - self._looked > self.away_s:
            for b in self._boards.values():  # (away: that time is no silence)
                b.seen += now - self._looked
        self._looked = now
        out = []
        unread = set(behind)
        for key, b in self._boards.items():
            if b.told or b.ended or key[0] in unread or now - b.seen < self.quiet_s:
                continue
            b.told = True
            out.append(QuietReport(key, b.captured, b.captured + round(self.quiet_s * 1e6), False, b.event_id,
                                   b.seq, b.game))
        return out

    def drop(self, partitions: Iterable[int]) -> None:
        gone = set(partitions)
        for key in [k for k in self._boards if k[0] in gone]:
            del self._boards[key]
