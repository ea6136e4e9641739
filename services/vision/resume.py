"""What a starting vision process learns of its boards' games from the venue's topics (a restart mid-game).

A vision process that starts while games are in progress (a crashed one restarted by `xqarb up`, a consumer group
rebalanced onto a new member) resumes the frames of its boards where the last one committed them, but its trackers
would not know what stands on the boards: the first still board would be matched against the standard start, and
nothing followed until an arbiter put the board right. The venue's topics say what it needs, from their beginning:
`xq.game-events` the game each board plays (GameStarted, republished by the referee as it appends it), whether it
ended (GameEnded) and the position the referee holds (MoveMade's `fen_after`, AttentionNeeded's `fen`);
`xq.arbiter` the arbiters' restored positions (PositionRestored) and operators' corners (BoardCalibrated). An
embedded broker that restarted has lost them (its storage is in memory): where the referee's API is known
(`vision serve --state-url`), its `/api/boards` completes them. The folds are pure (`games_of`,
`games_of_boards`, `completed`); the service reads the topics and the API (`read_history`, `read_boards`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .occupancy import PointReading
from .tracker import squares_of_fen

# A move made while no vision process read the board (its frames not replayed: a process killed with a hand over the
# board resumes after the move's frames it had read): the first still board is taken as one move on from the
# position the referee holds where the reading of the move's points is this much likelier (natural log of the
# likelihood ratio, over the points the move changes) than the position without it, and than with any other
# move: e^3, 20 to 1. A matched start tolerates a few misread points (TrackerConfig.start_tolerance), so a move's
# two points would otherwise be read as misread and the move lost.
GAP_MOVE_MARGIN = 3.0
# (a probability read is never taken as certain: one point read wholly wrong costs this much, not infinity)
READING_FLOOR = 1e-3

# Reading a board's history at assignment waits this long for the broker at most: `xq.game-events` of a long event
# (a few hundred thousand events) reads in a few seconds; past this the process starts as before, knowing nothing.
HISTORY_READ_S = 60.0
# The referee's API (`/api/boards`) is asked this long at most: one local HTTP read of a few hundred boards.
API_READ_S = 10.0


class HistoryUnread(RuntimeError):
    """The topics' history could not be read to its end, or the API's boards not at all (no answer in time)."""


@dataclass(frozen=True)
class BoardGame:
    """A board's game as the venue's events tell it, up to a point in the topics."""

    game: str  # the game id of the board's last GameStarted
    start: str | None = None  # its start (GameStarted's start_fen as squares); None: the standard start
    position: str | None = None  # squares of the position the referee or an arbiter held last; None: none since
    fen: str | None = None  # that position's FEN (its side to move), or the start's (None: the standard start)
    at: int = 0  # when that position was held (the event's occurred_at, µs): a later report replaces it
    ended: bool = False  # GameEnded: the pieces stand where the game left them until the next game is set up
    left: str | None = None  # the position the board's previous game left, while this game has no move yet
    # the positions this game held before `position`, oldest first, each (when held, squares, FEN; squares None:
    # the start): the frames a next owner reads again may begin before `at` (a process killed between a move's
    # observation and its next commit), and its tracker must start from the position those frames show
    earlier: tuple[tuple[int, str | None, str | None], ...] = ()

    def as_of(self, t: int) -> BoardGame:
        """The game as the events told it at time `t` (µs, the board's time line): the position held last at or
        before `t`; the oldest known where `t` is before all of them."""
        if t >= self.at or not self.earlier:
            return self
        k = max((i for i, (at, _, _) in enumerate(self.earlier) if at <= t), default=0)
        at, position, fen = self.earlier[k]
        return replace(self, position=position, fen=fen, at=at,
                       earlier=self.earlier[:k])

    @property
    def stands(self) -> str | None:
        """The squares the board shows now as far as the events tell (the position held, else the start)."""
        return self.position if self.position is not None else self.start


def games_of(events: Iterable[Any]) -> dict[str, BoardGame]:
    """Board id -> its game, from events of `xq.game-events` and `xq.arbiter` (xqarb.events.Event values) in event
    time (occurred_at), as the referee folds its inputs. A position of another game than the board's last one (a
    late report) is not the board's. Malformed events are skipped: the referee reports them."""
    boards: dict[str, BoardGame] = {}
    for event in events:
        board = event.board_id
        known = boards.get(board)
        game = str(event.data.get("game_id") or "").strip()
        if event.type == "GameStarted":
            if not game or (known is not None and known.game == game):
                continue  # (the game in progress announced again: a device's retry, a replay)
            try:
                start = squares_of_fen(str(event.data["start_fen"])) if event.data.get("start_fen") else None
            except ValueError:
                continue
            left = None if known is None else known.stands if known.position is not None else known.left
            boards[board] = BoardGame(game, start, fen=str(event.data.get("start_fen") or "") or None,
                                      at=int(event.occurred_at), left=left)
            continue
        if known is None or (game and game != known.game):
            continue
        if event.type == "GameEnded":
            boards[board] = replace(known, ended=True)
            continue
        fen = {"MoveMade": "fen_after", "AttentionNeeded": "fen", "PositionRestored": "fen"}.get(event.type)
        if fen is None or not event.data.get(fen) or int(event.occurred_at) < known.at:
            continue
        try:
            squares = squares_of_fen(str(event.data[fen]))
        except ValueError:
            continue
        boards[board] = replace(known, position=squares, fen=str(event.data[fen]), at=int(event.occurred_at),
                                left=None, earlier=(*known.earlier, (known.at, known.position, known.fen)))
    return boards


def moved_in_the_gap(fen: str, reading: PointReading, *, margin: float = GAP_MOVE_MARGIN) -> str | None:
    """The squares one legal move on from `fen` that the still board `reading` clearly shows rather than `fen`'s
    position or any other move's (see GAP_MOVE_MARGIN); None where the reading shows no move that clearly."""
    import numpy as np

    from xqarb.referee.rules import FenError, Position

    try:
        position = Position.from_fen(fen)
    except FenError:
        return None
    logp = np.log(np.maximum(reading.probabilities(), READING_FLOOR))
    here = position.squares()

    def gain(squares: str) -> float:
        """log P(reading | squares) - log P(reading | here), over the points that differ."""
        out = 0.0
        for i, (a, b) in enumerate(zip(here, squares, strict=True)):
            if a != b:
                out += float(logp[i, _klass(b)] - logp[i, _klass(a)])
        return out

    scored = sorted(((gain(q), q) for q in (position.play(m).squares() for m in position.legal_moves())),
                    reverse=True)
    if not scored or scored[0][0] < margin or (len(scored) > 1 and scored[0][0] - scored[1][0] < margin):
        return None
    return scored[0][1]


def _klass(ch: str) -> int:
    """The column of PointReading.probabilities for a square's letter: empty, red piece, black piece."""
    return 0 if ch == "." else 1 if ch.isupper() else 2


def games_of_boards(boards: Iterable[Mapping[str, Any]]) -> dict[str, BoardGame]:
    """Board id -> its game, from the referee API's `/api/boards` (each board's current game, position and
    result, as the API folded xq.game-events while it ran). Boards without a game, or with a position that is no
    FEN, are left out."""
    out: dict[str, BoardGame] = {}
    for board in boards:
        game, fen = str(board.get("game_id") or "").strip(), board.get("fen")
        if not game or not board.get("board_id"):
            continue
        try:
            squares = squares_of_fen(str(fen)) if fen else None
        except ValueError:
            continue
        out[str(board["board_id"])] = BoardGame(game, position=squares, fen=str(fen) if fen else None,
                                                at=int(board.get("updated_at") or 0),
                                                ended=board.get("result") is not None)
    return out


def completed(topics: Mapping[str, BoardGame], api: Mapping[str, BoardGame]) -> dict[str, BoardGame]:
    """The topics' account of each board, completed by the API's where the topics hold no position of the board's
    game: a broker that restarted empty (its storage in memory) keeps only what was sent to it again since (ingest
    re-sends the inputs it acknowledged, GameStarted among them; the referee's outputs are not sent again). The
    topics' account is the live one: a board whose game they name otherwise keeps theirs."""
    out = dict(topics)
    for board, known in api.items():
        mine = out.get(board)
        if mine is None:
            out[board] = known
        elif mine.game == known.game and mine.position is None and known.position is not None:
            out[board] = replace(mine, position=known.position, fen=known.fen, ended=mine.ended or known.ended,
                                 left=None)
    return out


def read_boards(url: str, *, timeout_s: float = API_READ_S) -> list[dict[str, Any]]:
    """`GET <url>/api/boards`: the boards as the referee's API shows them (the public view: with a broadcast delay
    configured, a position that many seconds old). HistoryUnread where it does not answer with them."""
    import json
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url.rstrip("/") + "/api/boards", timeout=timeout_s) as resp:
            boards = json.loads(resp.read())["boards"]
    except (OSError, urllib.error.URLError, ValueError, KeyError, TypeError) as exc:
        raise HistoryUnread(f"{url}/api/boards: {exc}") from exc
    if not isinstance(boards, list):
        raise HistoryUnread(f"{url}/api/boards: no list of boards")
    return [b for b in boards if isinstance(b, dict)]


def partition_of(board: str, partitions: int) -> int:
    """The partition a board's events go to (key = board id) with the Kafka clients' default partitioner."""
    from kafka.partitioner.default import murmur2

    return (murmur2(board.encode()) & 0x7FFFFFFF) % partitions


def read_history(bootstrap: str, topics: Sequence[str], partitions: Sequence[int], *,
                 timeout_s: float = HISTORY_READ_S, client_id: str = "xqarb-vision-resume"
                 ) -> tuple[list[Any], dict, int]:
    """Every record of `topics` in `partitions` from the beginning to the end each partition has now, in each
    partition's order, and those ends ((topic, partition) -> offset of the next record): the consumer group then
    goes on from its committed offsets, and the records before these ends were folded here already; and how many
    partitions the first topic has."""
    from xqarb import bus

    records: list[Any] = []
    # (rolled: both topics of a pair the embedded broker rolls, bus.ROLLED)
    with bus.Reader(bootstrap, topics, partitions=partitions, client_id=client_id, timeout_s=timeout_s,
                    rolled=True) as reader:
        ends = reader.end_offsets()
        deadline = time.monotonic() + timeout_s
        while any(reader.position(tp) < end for tp, end in ends.items()):
            if time.monotonic() > deadline:
                raise HistoryUnread(f"{list(topics)} partitions {list(partitions)} not read to their ends in "
                                    f"{timeout_s:.0f} s")
            for rec in reader.poll(0.5):
                tp = bus.TopicPartition(rec.topic, rec.partition)
                if rec.offset < ends.get(tp, 0):
                    records.append(rec)
        count = reader.partition_counts.get(topics[0], 0)
        # Where the broker rolls a topic (both topics of the pair read), no end is handed on: the roller empties
        # each topic of the pair and makes it again, its offsets counting from 0, and an end kept from before
        # would have the consumer skip that many of the next records. The records between the group's commit and
        # these ends are then taken twice, which `VisionCore.learn` allows (an older position than the tracker's
        # is not taken; the same game announced again changes nothing).
        rolled = {t for t in reader.partition_counts if bus.base_topic(t) != t}
        rolled |= {bus.base_topic(t) for t in rolled}
        ends = {tp: end for tp, end in ends.items() if tp.topic not in rolled}
    return records, ends, count
