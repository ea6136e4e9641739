"""The referee's HTTP API (DESIGN, HTTP contract), the live stream and the web pages, as one Flask blueprint.

- `GET /api/boards`: every board with its current game (players, position, clocks, fouls, alerts), alerts first.
- `GET /api/games/<id>`: the game's current state; `/events?after=N&limit=M`: ledger entries;
  `/state?seq=N`: the state as it was after entry N (position, clocks, fouls, pending obligations);
  `/verify`: the hash chain recomputed; `/frames/<sha256>`: an evidence frame; `/pgn`: the game as PGN with clock
  times (`?notation=chinese|iccs|wxf`, Chinese by default); `POST /actions`: an arbiter's action (arbiter token)
  published to `xq.arbiter`.
- `GET /api/stream`: server-sent events of `xq.game-events`, resumable with Last-Event-ID, with the broadcast delay
  of each board's tournament; `?board=` / `?game=` filter.
- `GET /api/openapi.json`, `GET /metrics`, and the pages at `/` (overview), `/review.html`, `/overlay.html`.

Stream ids are positions, not counters: the id of an event is the list of next offsets per partition of
`xq.game-events` after it, then the event's own partition and a digest of its event id (`"0:15,3:27@3.1f0c..."`).
A client that reconnects with it gets exactly the events it had not seen, in the same order, even after the API
process restarted (it rebuilds its buffer from the topic). Offsets alone would not survive the topic itself
starting over (the embedded broker keeps its topics in memory): the digest is checked against the event now at
that place, and where it is not the same event (or no event is there) the client gets a `reset` event telling it
to re-read the state, then every event the server holds, instead of silently nothing. Where the embedded broker
rolls xq.game-events (two topics, each emptied every other period), the offsets in ids are stream offsets that
name the generation (stream_roll.py): ids keep their meaning across rolls, and one of a generation emptied since is
answered with the reset.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from flask import Blueprint, Response, request, send_file

from xqarb import metrics
from xqarb.events import Event
from xqarb.referee.http_json import ApiError, error_response, int_arg, json_response
from xqarb.referee.stream_roll import generation_of

log = logging.getLogger(__name__)

GAME_EVENTS_TOPIC = "xq.game-events"
SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
HEARTBEAT_S = 15.0
# How long a resuming client waits for a just-started API process to re-read the stream up to its id before it is
# told to reset: reading xq.game-events from its beginning takes about a second per 100,000 events here.
RESUME_WAIT_S = 5.0
WEB_DIR = Path(__file__).resolve().parent / "web"


# --- stream positions (pure) ----------------------------------------------------------------------------------


def encode_position(position: Mapping[int, int]) -> str:
    """`{0: 15, 3: 27}` -> `"0:15,3:27"` (next offset to read per partition)."""
    return ",".join(f"{p}:{o}" for p, o in sorted(position.items()) if o > 0)


# A stream position names at most this many partitions (DESIGN: the partition count is configuration, 12 by
# default), each offset at most 18 digits (a 64-bit offset); anything longer is no position this server gave.
MAX_POSITION_PARTS = 1024
_POSITION_PART = re.compile(r"^([0-9]{1,9}):([0-9]{1,18})$")


# The check after a position: the last event's partition and the first hex digits of SHA-256 of its event id
# (48 bits: two different events at one place collide once in 2^48 restarts).
CHECK_HEX = 12
_CHECK = re.compile(rf"^([0-9]{{1,9}})\.([0-9a-f]{{{CHECK_HEX}}})$")


@dataclass(frozen=True)
class StreamCheck:
    """Which event a stream id was given after: its partition (its offset is the position's next offset - 1) and
    a digest of its event id."""

    partition: int
    digest: str


def event_digest(event_id: str) -> str:
    return hashlib.sha256(event_id.encode("utf-8")).hexdigest()[:CHECK_HEX]


def decode_stream_id(text: str | None) -> tuple[dict[int, int], StreamCheck | None]:
    """A Last-Event-ID: a position, with the check of its last event (ids given since it exists) or without
    (older ids: resumed as before, unchecked); ApiError 400 for anything else."""
    if not text:
        return {}, None
    position_text, at, check_text = text.partition("@")
    position = decode_position(position_text)
    if not at:
        return position, None
    match = _CHECK.fullmatch(check_text)
    if match is None or position.get(int(match[1]), 0) < 1:
        raise ApiError(
            400, "bad_last_event_id", f"Last-Event-ID {text[:80]!r} does not end in a check like '@3.1f0c2a9b7d4e' "
            "naming one of its partitions"
        )
    return position, StreamCheck(int(match[1]), match[2])


def decode_position(text: str | None) -> dict[int, int]:
    """The inverse of `encode_position`; ApiError 400 for anything else."""
    if not text:
        return {}
    parts = text.split(",", MAX_POSITION_PARTS)
    out: dict[int, int] = {}
    for part in parts:
        match = _POSITION_PART.fullmatch(part) if len(parts) <= MAX_POSITION_PARTS else None
        if match is None:
            raise ApiError(
                400, "bad_last_event_id", f"Last-Event-ID {text[:80]!r} is not a stream position like '0:15,3:27'"
            )
        out[int(match[1])] = int(match[2])
    return out


# --- the stream hub -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StreamItem:
    index: int  # place in this hub's buffer
    partition: int
    offset: int
    arrived: float  # monotonic seconds when this hub read it
    event: Event
    position: str  # encoded position after this event
    text: str  # the event's JSON form
    digest: str = ""  # event_digest(event.event_id)

    @property
    def sse_id(self) -> str:
        """The position and the check of this event (the module docstring)."""
        return f"{self.position}@{self.partition}.{self.digest}"


@dataclass
class StreamHub:
    """Every event of xq.game-events read so far, in the order read, with a condition to wait for more.

    Fed by `run(poll)` in a thread (a Kafka reader) or by `add` directly. Keeps at most `capacity` events; a
    client resuming from a position older than the buffer gets a `reset` event telling it to reload.
    """

    capacity: int = 500_000
    clock: Callable[[], float] = time.monotonic
    items: list[StreamItem] = field(default_factory=list)
    dropped: int = 0
    _position: dict[int, int] = field(default_factory=dict)
    _cond: threading.Condition = field(default_factory=threading.Condition)
    _listeners: list[Callable[[StreamItem], None]] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _probe: Callable[[], bool] | None = None  # the reader's own word on whether it reads its partitions
    _since: int = 0  # buffer index of the first event read since the topic last started over
    _caught_up: Callable[[], bool] | None = None  # the reader's word on whether it reached the topic's end once

    def add(self, partition: int, offset: int, event: Event) -> StreamItem | None:
        digest = event_digest(event.event_id)
        with self._cond:
            late = False
            if offset < self._position.get(partition, 0):
                held = self._find(partition, offset)
                # An event of an older generation than the partition's position (stream_roll.py): acknowledged late
                # into the resting topic of a rolled pair, read after newer ones. Streamed where it is read (the
                # position does not go back: a client resuming from an id between them does not get it again).
                late = held is None and generation_of(offset) < generation_of(self._position[partition])
                if not late and (held is None or held.digest == digest):
                    return None  # read twice (a reconnect of the reader): already buffered
                if not late:
                    # Another event where one was read before: the topic started over (a broker that kept it in
                    # memory restarted). Offsets count from there again; ids given before no longer match (reset).
                    log.warning("stream: %s partition %d starts over (offset %d holds another event now)",
                                GAME_EVENTS_TOPIC, partition, offset)
                    self._position.clear()
                    self._since = self.dropped + len(self.items)
            if not late:
                self._position[partition] = offset + 1
            item = StreamItem(
                index=self.dropped + len(self.items),
                partition=partition,
                offset=offset,
                arrived=self.clock(),
                event=event,
                position=encode_position(self._position),
                text=json.dumps(event.to_json_dict(), ensure_ascii=False, separators=(",", ":")),
                digest=digest,
            )
            self.items.append(item)
            if len(self.items) > self.capacity:
                cut = len(self.items) - self.capacity
                del self.items[:cut]
                self.dropped += cut
            self._cond.notify_all()
            listeners = list(self._listeners)
        for listener in listeners:
            listener(item)
        metrics.observe_game_event(event.type, event.data)
        return item

    def listen(self, fn: Callable[[StreamItem], None]) -> None:
        with self._cond:
            self._listeners.append(fn)
            backlog = list(self.items)
        for item in backlog:
            fn(item)

    def position(self) -> dict[int, int]:
        with self._cond:
            return dict(self._position)

    def _find(self, partition: int, offset: int) -> StreamItem | None:
        """The latest buffered event read at (partition, offset), searching back from the newest (resumes are
        mostly recent); call with the condition held."""
        for item in reversed(self._current()):
            if item.partition == partition and item.offset <= offset:
                return item if item.offset == offset else None
        return None

    def resume_index(self, position: Mapping[int, int], check: StreamCheck | None, wait_s: float) -> int | None:
        """Where a client resuming after `position` continues; None when it must reload (reset): its events were
        dropped from the buffer, or the event its id names is not the one at that place now (the topic started
        over). Waits up to `wait_s` for the reader to reach that place (an API process just started re-reads
        the topic from its beginning)."""
        if check is not None:
            offset = position[check.partition] - 1
            deadline = time.monotonic() + wait_s  # real time even where `clock` is a test's
            with self._cond:
                while (self._position.get(check.partition, 0) <= offset and not self.caught_up()
                       and time.monotonic() < deadline):
                    self._cond.wait(min(0.1, max(0.0, deadline - time.monotonic())))
                held = self._find(check.partition, offset)
            if held is None or held.digest != check.digest:
                return None
        return self.start_index(position)

    def caught_up(self) -> bool:
        """Whether the reader has read what the topic held (a hub fed directly always has)."""
        return self._caught_up is None or bool(self._caught_up())

    def start_index(self, position: Mapping[int, int]) -> int | None:
        """The buffer index of the first event not covered by `position`; None when events after `position` were
        already dropped from the buffer (the client must reload instead of resuming)."""
        with self._cond:
            if self.dropped:
                oldest: dict[int, int] = {}
                for item in self.items:
                    oldest.setdefault(item.partition, item.offset)
                for partition, offset in position.items():
                    if partition in oldest and oldest[partition] > offset:
                        return None
            for item in self._current():
                if item.offset >= position.get(item.partition, 0):
                    return item.index
            return self.dropped + len(self.items)

    def _current(self) -> list[StreamItem]:
        """The buffered events read since the topic last started over (positions name places among these)."""
        return self.items[max(0, self._since - self.dropped):]

    def after(self, index: int, timeout: float) -> list[StreamItem]:
        """The buffered events from `index` on, waiting up to `timeout` seconds for one to come."""
        with self._cond:
            if index >= self.dropped + len(self.items):
                self._cond.wait(timeout)
            start = max(0, index - self.dropped)
            return self.items[start:]

    def run(self, poll: Callable[[], Iterable[tuple[int, int, Event]]]) -> None:
        self._probe = getattr(poll, "ready", None)
        self._caught_up = getattr(poll, "caught_up", None)
        while not self._stop.is_set():
            for partition, offset, event in poll():
                self.add(partition, offset, event)

    def start(self, poll: Callable[[], Iterable[tuple[int, int, Event]]]) -> threading.Thread:
        thread = threading.Thread(target=self.run, args=(poll,), name="xq-stream-hub", daemon=True)
        self._thread = thread
        thread.start()
        return thread

    def readiness(self) -> tuple[bool, str]:
        """(ready, why): a hub fed by a reader is ready while the reader runs and reads its partitions; a hub fed
        directly (`add`) always is."""
        if self._thread is not None and not self._thread.is_alive():
            return False, "the reader of xq.game-events stopped"
        if self._probe is not None and not self._probe():
            return False, "the reader of xq.game-events has no partition assigned yet"
        return True, "ok"

    def stop(self) -> None:
        self._stop.set()
        with self._cond:
            self._cond.notify_all()


def kafka_game_events(bootstrap: str, topic: str = GAME_EVENTS_TOPIC, *,
                      wall_clock: Callable[[], float] = time.time) -> Callable[[], list[tuple[int, int, Event]]]:
    """A `poll` for StreamHub.run: reads every partition of xq.game-events from the beginning (no consumer group:
    every API process keeps the whole stream), and of its second topic where the broker rolls it (stream_roll.py:
    the offsets returned are then stream offsets, naming the generation). Messages that do not decode are skipped
    with a note (the referee's own output; the referee already keeps the ledger)."""
    from kafka import KafkaConsumer, TopicPartition

    from xqarb import bus
    from xqarb.codec import CodecError, decode
    from xqarb.offset_holes import OffsetHoles
    from xqarb.referee.stream_roll import RollOrder, stream_offset

    # earliest: when the broker starts over (its topics were in memory), read its new log from the beginning
    # rather than from its end, so no event published meanwhile is skipped (StreamHub.add notices the restart).
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap, enable_auto_commit=False, group_id=None, client_id="xq-api-stream",
        auto_offset_reset="earliest", fetch_max_wait_ms=bus.FETCH_MAX_WAIT_MS,  # a move's latency to the screen
        receive_message_max_bytes=bus.FETCH_RESPONSE_MAX_BYTES, metrics_enabled=bus.CLIENT_METRICS,
    )
    assigned: set[Any] = set()
    caught_up = threading.Event()
    order = RollOrder(consumer, topic, wall_clock)
    holes = OffsetHoles()  # two referees publish to a partition: an event acknowledged but not readable yet
    rolled = [False]  # the broker rolls the topic: its second topic exists

    def refresh() -> None:
        names = bus.with_rolled([topic], consumer.topics())
        tps = {TopicPartition(name, p) for name in names for p in consumer.partitions_for_topic(name) or ()}
        new = tps - assigned
        if new:
            assigned.update(new)
            consumer.assign(sorted(assigned))
            consumer.seek_to_beginning(*new)
            rolled[0] = len(names) > 1

    last_refresh = 0.0

    def poll() -> list[tuple[int, int, Event]]:
        nonlocal last_refresh
        if time.monotonic() - last_refresh > 5 or not assigned:
            refresh()
            last_refresh = time.monotonic()
        if not assigned:
            time.sleep(0.2)
            return []
        if rolled[0]:
            order.order(assigned)
        out = []
        starts = bus.positions_known(consumer)
        batches = bus.up_to_holes(consumer, consumer.poll(timeout_ms=200), starts, holes, "api stream")
        batches = order.seen(batches)  # a rolled pair's records in generation order (stream_roll.py)
        if not batches:
            caught_up.set()  # a poll with nothing to read: the topic's end was reached
        for tp, records in batches.items():
            for rec in records:
                offset = stream_offset(tp.topic, rec.offset, rec.timestamp) if rolled[0] else rec.offset
                try:
                    out.append((tp.partition, offset, decode(rec.value)))
                except CodecError as exc:
                    print(f"api: skipping undecodable message {tp.partition}:{rec.offset} on {tp.topic}: {exc}")
        # a partition's events in stream order, a generation's before the next's (a restarted reader that gets two
        # generations in one poll gives the ids of one that read them as they came)
        return sorted(out, key=lambda item: (generation_of(item[1]), item[0], item[1]))

    poll.ready = lambda: bool(assigned)  # type: ignore[attr-defined]  # for StreamHub.readiness (/readyz)
    poll.caught_up = caught_up.is_set  # type: ignore[attr-defined]  # for StreamHub.resume_index
    return poll


# --- the venue view: every board's game, from the stream ------------------------------------------------------


@dataclass
class BoardView:
    board_id: str
    game_id: str | None = None
    red_player: str = ""
    black_player: str = ""
    fen: str | None = None
    ply: int = 0
    last_move: str | None = None
    last_iccs: str | None = None
    red_ms: int | None = None
    black_ms: int | None = None
    fouls: dict[str, int] = field(default_factory=lambda: {"red": 0, "black": 0})
    alerts: list[dict[str, Any]] = field(default_factory=list)
    result: str | None = None
    updated_at: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "board_id": self.board_id,
            "game_id": self.game_id,
            "red_player": self.red_player,
            "black_player": self.black_player,
            "fen": self.fen,
            "ply": self.ply,
            "last_move": self.last_move,
            "last_iccs": self.last_iccs,
            "red_ms": self.red_ms,
            "black_ms": self.black_ms,
            "fouls": dict(self.fouls),
            "alerts": [a for a in self.alerts if a["open"]],
            "result": self.result,
            "updated_at": self.updated_at,
        }


START_FEN = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"


def apply_to_view(view: BoardView, event: Event) -> None:
    """Fold one xq.game-events event into a board's summary (pure apart from mutating `view`)."""
    if event.type == "TreeHead":
        return  # a signed head says nothing about the board, and a late one may be of the board's previous game
    data = event.data
    game_id = data.get("game_id")
    if game_id and game_id != view.game_id:
        view.game_id = game_id
        view.fen, view.ply, view.last_move, view.last_iccs, view.result = START_FEN, 0, None, None, None
        view.red_ms = view.black_ms = None
        view.fouls = {"red": 0, "black": 0}
        view.alerts = []
        view.red_player = view.black_player = ""
    if event.type == "GameStarted" and data.get("start_fen") and view.ply == 0:
        view.fen = data["start_fen"]  # (a handicap game, 让子: the board's next game need not start as the last)
    view.updated_at = event.received_at
    if event.type == "GameStarted":
        view.red_player, view.black_player = data.get("red_player") or "", data.get("black_player") or ""
    elif event.type in ("ClockPressed", "ClockPaused", "ClockResumed"):
        # The clock's own reading at the press (the stream carries presses so that overlays can run clocks).
        view.red_ms = data.get("red_ms") if data.get("red_ms") is not None else view.red_ms
        view.black_ms = data.get("black_ms") if data.get("black_ms") is not None else view.black_ms
    elif event.type == "MoveMade":
        view.fen = data["fen_after"]
        view.ply = data["ply"]
        view.last_move = data["chinese"] or data["iccs"]
        view.last_iccs = data["iccs"]
        if data.get("red_ms") is not None:
            view.red_ms = data["red_ms"]
        if data.get("black_ms") is not None:
            view.black_ms = data["black_ms"]
        for alert in view.alerts:  # the game went on: the board change was resolved
            if alert["kind"] == "attention":
                alert["open"] = False
    elif event.type == "Ruling":
        kind = data.get("kind")
        side = data.get("side")
        if kind == "foul" and side in view.fouls:
            view.fouls[side] += 1
        if kind in ("foul", "loss", "warning", "obligation"):
            view.alerts.append(
                {"kind": kind, "side": side, "article": data.get("article"), "message": data.get("message"),
                 "at": event.received_at, "open": True}
            )
    elif event.type == "AttentionNeeded":
        view.alerts.append(
            {"kind": "attention", "side": None, "article": None, "message": data.get("reason"),
             "at": event.received_at, "open": True}
        )
    elif event.type == "GameEnded":
        view.result = data.get("result")
        view.alerts.append(
            {"kind": "result", "side": None, "article": data.get("article"),
             "message": f"{data.get('result')}: {data.get('reason')}", "at": event.received_at, "open": False}
        )
    del view.alerts[:-20]  # the page shows the latest; the ledger keeps them all


class VenueView:
    """Every board's summary, kept up to date from the stream hub; players come from the ledger's GameStarted."""

    def __init__(self, board_ids: Iterable[str], players: Callable[[str], tuple[str, str] | None]) -> None:
        self._lock = threading.Lock()
        self._boards: dict[str, BoardView] = {b: BoardView(b) for b in board_ids}
        self._players = players
        self._known_players: dict[str, tuple[str, str]] = {}

    def on_item(self, item: StreamItem) -> None:
        event = item.event
        with self._lock:
            view = self._boards.setdefault(event.board_id, BoardView(event.board_id))
            apply_to_view(view, event)

    def boards(self) -> list[dict[str, Any]]:
        with self._lock:
            views = [v.to_json() for v in self._boards.values()]
        for v in views:
            gid = v["game_id"]
            if gid:
                if gid not in self._known_players:
                    found = self._players(gid)
                    if found:
                        self._known_players[gid] = found
                found = self._known_players.get(gid, (v["red_player"], v["black_player"]))
                v["red_player"], v["black_player"] = found

        return sorted(views, key=board_order)


def board_order(v: Mapping[str, Any]) -> tuple[int, int, str]:
    """Alerts first (most alerts first), then by board number where the ids are numbers."""
    bid = v["board_id"]
    return (-len(v["alerts"]), int(bid) if bid.isdigit() else 1 << 30, bid)


# --- PGN (pure) -------------------------------------------------------------------------------------------------


def pgn_of(game_id: str, entries: Iterable[Mapping[str, Any]], notation: str = "chinese") -> str:
    """The game as PGN from its ledger entries (xqarb.referee.formats): moves in Chinese notation (7.5), ICCS or
    WXF, each side's clock after the move as `{[%clk h:mm:ss]}`, rulings as comments after the move they follow."""
    from xqarb.referee.formats import facts_from_entries, write_pgn

    return write_pgn(facts_from_entries(game_id, entries), notation)


# --- game state at an entry ---------------------------------------------------------------------------------


class StateCache:
    """States folded from ledger entries, memoised by (game, seq): a ledger entry never changes once written."""

    def __init__(self, fold_json: Callable[[list[Event]], dict[str, Any]], size: int = 512) -> None:
        self._fold_json = fold_json
        self._cache: OrderedDict[tuple[str, int], dict[str, Any]] = OrderedDict()
        self._lock = threading.Lock()
        self._size = size

    def state(self, game_id: str, seq: int, inputs: Callable[[], list[Event]]) -> dict[str, Any]:
        key = (game_id, seq)
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        value = self._fold_json(inputs())
        with self._lock:
            self._cache[key] = value
            while len(self._cache) > self._size:
                self._cache.popitem(last=False)
        return value


def referee_fold_json(events: list[Event]) -> dict[str, Any]:
    """The referee's game state after the given input events, as JSON (the referee's own fold)."""
    from xqarb.referee.board import fold

    if not events:
        return {}
    state = fold(events).to_json()
    return state.get("game") or state


# --- the blueprint ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GameRef:
    game_id: str
    board_id: str
    entries: int
    head_hash: str


class RefereeApi:
    """The API's state: where the ledger, the evidence frames and the stream are; the blueprint serves them."""

    def __init__(
        self,
        *,
        ledger: Any,  # xqarb.referee.ledger.Ledger
        hub: StreamHub,
        board_ids: Iterable[str],
        load_frame: Callable[[str], bytes | None],
        ingest: Any | None = None,  # xqarb.ingest.app.Ingest, for arbiter actions
        delay_for_board: Callable[[str], float] = lambda board: 0.0,
        fold_json: Callable[[list[Event]], dict[str, Any]] = referee_fold_json,
    ) -> None:
        self.ledger = ledger
        self.hub = hub
        self.load_frame = load_frame
        self.ingest = ingest
        self.delay_for_board = delay_for_board
        self.states = StateCache(fold_json)
        self.venue = VenueView(board_ids, self._players)
        hub.listen(self.venue.on_item)
        from xqarb.referee.public_reads import PublicReads  # the broadcast delay on every public read

        self.public = PublicReads(ledger=ledger, delay_for_board=delay_for_board,
                                  principal=ingest.config.principal if ingest is not None else None)
        self.public.view = VenueView(board_ids, self._players)
        hub.listen(self.public.on_item)
        if ingest is not None and getattr(ingest, "games", None) is not None and ingest.games.lookup is None:
            ingest.games.lookup = self._board_of_game  # a frame naming another board's game is refused

    def _board_of_game(self, game_id: str) -> str | None:
        first = self.ledger.entries(game_id, 0, 1)
        return first[0].event.board_id if first else None

    def ready(self) -> tuple[bool, dict[str, str]]:
        """Readiness as each part can tell: the ledger answers a query, the stream reader is running and reading
        its partitions, and (with ingest here) the broker accepts a connection."""
        checks: dict[str, str] = {}
        ok = True
        try:
            self.ledger.head("readyz-probe")
            checks["ledger"] = "ok"
        except Exception as exc:  # a probe: any failure means not ready, and says which
            ok, checks["ledger"] = False, f"{type(exc).__name__}: {exc}"
        hub_ok, checks["stream"] = self.hub.readiness()
        ok = ok and hub_ok
        if self.ingest is not None:
            from xqarb.ingest.app import publisher_ready

            broker_ok, checks["broker"] = publisher_ready(self.ingest.publisher)
            ok = ok and broker_ok
        return ok, checks

    def _players(self, game_id: str) -> tuple[str, str] | None:
        for entry in self.ledger.entries(game_id, 0, 5):
            if entry.event.type == "GameStarted":
                return entry.event.data["red_player"], entry.event.data["black_player"]
        return None

    def _game(self, game_id: str) -> GameRef:
        """The game's board and head, from two indexed look-ups (not a scan of every game)."""
        seq, head = self.ledger.head(game_id)
        first = self.ledger.entries(game_id, 0, 1) if seq else []
        if not first:
            raise ApiError(404, "unknown_game", f"no game {game_id!r} in the ledger")
        return GameRef(game_id, first[0].event.board_id, seq, head)

    def _public_game(self, game_id: str) -> GameRef:
        """The game as this request may see it: live for an arbiter of its board, else its public prefix (the
        board's broadcast delay); a game with nothing public yet is unknown to the public."""
        from xqarb.ingest.app import bearer_token
        from xqarb.referee.public_reads import UnknownToken

        info = self._game(game_id)
        try:
            if self.public.live_for(bearer_token(), info.board_id):
                return info
        except UnknownToken as exc:
            raise ApiError(401, "unauthorized", str(exc)) from None
        seq = self.public.visible_seq(game_id, info.board_id, info.entries)
        if seq == info.entries:
            return info
        if seq == 0:
            raise ApiError(404, "unknown_game", f"no game {game_id!r} public yet (the board's broadcast delay)")
        return GameRef(game_id, info.board_id, seq, self.ledger.entries(game_id, seq - 1, 1)[0].hash)

    def _state(self, game_id: str, seq: int) -> dict[str, Any]:
        def inputs() -> list[Event]:
            return [e.event for e in self.ledger.entries(game_id, 0, seq) if e.kind == "input"]

        state = self.states.state(game_id, seq, inputs)
        return {"game_id": game_id, "seq": seq, "state": state}

    # --- the stream --------------------------------------------------------------------------------------------

    def stream(self, position: dict[int, int], board: str | None, game: str | None, once: bool,
               check: StreamCheck | None = None) -> Iterator[str]:
        """SSE text: every event after `position` (filtered), each held until its board's broadcast delay passed;
        a `reset` first where the position cannot be honoured (see the module docstring)."""
        hub = self.hub
        index = hub.resume_index(position, check, RESUME_WAIT_S if position else 0.0)
        metrics.STREAM_CLIENTS.inc()
        try:
            yield "retry: 1000\n\n"
            if index is None:
                yield ("event: reset\ndata: {\"reason\": \"the stream cannot go on from this id (older than the "
                       "server's buffer, or the stream started over); re-read the state\"}\n\n")
                index = hub.dropped
            last_beat = time.monotonic()
            while True:
                items = hub.after(index, timeout=1.0 if not once else 0.05)
                if not items and once:
                    return
                for item in items:
                    if item.index < index:
                        continue
                    delay = self.delay_for_board(item.event.board_id)
                    wait = item.arrived + delay - hub.clock()
                    if wait > 0:
                        # Broadcast delay (against cheating from the broadcast): hold the event until it is due.
                        time.sleep(min(wait, 1.0))
                        break
                    index = item.index + 1
                    if board and item.event.board_id != board:
                        continue
                    if game and item.event.game_id != game:
                        continue
                    yield f"id: {item.sse_id}\nevent: {item.event.type}\ndata: {item.text}\n\n"
                if time.monotonic() - last_beat > HEARTBEAT_S:
                    last_beat = time.monotonic()
                    yield ": keep-alive\n\n"
        finally:
            metrics.STREAM_CLIENTS.dec()

    # --- routes ------------------------------------------------------------------------------------------------

    def blueprint(self) -> Blueprint:
        bp = Blueprint("referee_api", __name__, static_folder=None)

        @bp.errorhandler(ApiError)
        def _api_error(exc: ApiError) -> Response:
            return error_response(exc)

        self._game_routes(bp)
        self._action_routes(bp)
        self._venue_routes(bp)
        return bp

    def _game_routes(self, bp: Blueprint) -> None:
        """The public reads: boards, games, their entries, states, frames, records and proofs."""
        @bp.get("/api/boards")
        def boards() -> Response:
            from xqarb.ingest.app import bearer_token
            from xqarb.referee.public_reads import UnknownToken

            try:
                shown = self.public.boards(self.venue.boards(), bearer_token(), board_order,
                                           lambda board: BoardView(board).to_json())
            except UnknownToken as exc:
                raise ApiError(401, "unauthorized", str(exc)) from None
            return json_response({"boards": shown})

        @bp.get("/api/games")
        def games() -> Response:
            from xqarb.ingest.app import bearer_token
            from xqarb.referee.public_reads import UnknownToken

            board = request.args.get("board")
            try:
                shown = self.public.listing(self.ledger.games(board), bearer_token())
            except UnknownToken as exc:
                raise ApiError(401, "unauthorized", str(exc)) from None
            return json_response(
                {"games": [
                    {"game_id": g.game_id, "board_id": g.board_id, "entries": entries, "head_hash": head}
                    for g, entries, head in shown
                ]}
            )

        @bp.get("/api/games/<game_id>")
        def game(game_id: str) -> Response:
            info = self._public_game(game_id)
            out = self._state(game_id, info.entries)
            out.update({"board_id": info.board_id, "entries": info.entries, "head_hash": info.head_hash})
            return json_response(out)

        @bp.get("/api/games/<game_id>/events")
        def events(game_id: str) -> Response:
            info = self._public_game(game_id)
            after = int_arg("after", 0)
            limit = int_arg("limit", 1000, minimum=1)
            assert after is not None and limit is not None
            limit = max(0, min(limit, 5000, info.entries - after))
            entries = self.ledger.entries(game_id, after, limit) if limit else []
            return json_response(
                {"game_id": game_id, "board_id": info.board_id, "head_seq": info.entries,
                 "entries": [e.to_json() for e in entries]}
            )

        @bp.get("/api/games/<game_id>/state")
        def state(game_id: str) -> Response:
            info = self._public_game(game_id)
            seq = int_arg("seq", info.entries)
            assert seq is not None
            if seq > info.entries:
                raise ApiError(404, "unknown_entry", f"game {game_id} has {info.entries} entries, not {seq}")
            out = self._state(game_id, seq)
            out["board_id"] = info.board_id
            return json_response(out)

        @bp.get("/api/games/<game_id>/verify")
        def verify(game_id: str) -> Response:
            self._game(game_id)
            return json_response(self.ledger.verify(game_id).to_json())

        @bp.get("/api/games/<game_id>/frames/<sha256>")
        def frame(game_id: str, sha256: str) -> Response:
            info = self._public_game(game_id)
            if not SHA256_RE.fullmatch(sha256):
                raise ApiError(400, "bad_sha256", f"{sha256!r} is not a SHA-256 in lowercase hex (64 characters)")
            from xqarb.ingest.app import bearer_token

            # A frame is stored before the referee rules on it: the public sees only those its public entries name.
            live = self.public.live_for(bearer_token(), info.board_id)
            public = live or self.public.frame_is_public(game_id, info.entries, sha256)
            data = self.load_frame(sha256) if public else None
            if data is None:
                raise ApiError(404, "unknown_frame", f"no evidence frame {sha256}")
            resp = Response(data, mimetype="image/jpeg")
            from xqarb.vision.retention import thinned_from

            full = thinned_from(data)  # a frame the retention policy thinned: the size of the frame it shows
            if full is not None:
                resp.headers["X-Frame-Thinned"] = f"{full[0]}x{full[1]}"
            # Content-addressed: the bytes under this name never change (but for the one thinning of a frame no
            # ruling names: a copy of the full frame cached before it stays right).
            resp.headers["Cache-Control"] = "public, max-age=31536000, immutable"
            return resp

        @bp.get("/api/games/<game_id>/pgn")
        def pgn(game_id: str) -> Response:
            info = self._public_game(game_id)
            notation = request.args.get("notation", "chinese")
            if notation not in ("chinese", "iccs", "wxf"):
                raise ApiError(400, "bad_parameter", f"notation must be chinese, iccs or wxf, not {notation!r}")
            entries = [e.to_json() for e in self.ledger.entries(game_id, 0, info.entries)]
            resp = Response(pgn_of(game_id, entries, notation), mimetype="application/x-chess-pgn")
            resp.headers["Content-Disposition"] = f'attachment; filename="{game_id}.pgn"'
            return resp

    def _action_routes(self, bp: Blueprint) -> None:
        """An arbiter's actions on a game that exists (through ingest's checks, onto the arbiter topic)."""
        @bp.post("/api/games/<game_id>/actions")
        def actions(game_id: str) -> Response:
            if self.ingest is None:
                raise ApiError(503, "no_ingest", "this API process does not accept arbiter actions")
            info = self._game(game_id)
            from xqarb.ingest.bounds import parse_json
            from xqarb.ingest.validate import ARBITER_EVENT_TYPES, CLOCK_TYPES, TOPIC_ARBITER, Refusal, json_post
            from xqarb.referee.scoresheet_api import prepare_action

            payload = None
            source = "?"
            try:
                who = self.ingest.authenticate(info.board_id)
                source = who.id
                if not who.is_arbiter:
                    raise Refusal(403, "arbiter_only", "arbiter actions need an arbiter's token")
                payload = self.ingest.read_body(self.ingest.config.limits.max_json_bytes)
                obj = parse_json(payload)
                if isinstance(obj, dict):
                    if obj.get("game_id") not in (None, game_id):
                        raise Refusal(
                            400, "game_mismatch", f"the action names game {str(obj['game_id'])[:60]!r}, not {game_id!r}"
                        )
                    obj = {**obj, "game_id": game_id}
                obj = prepare_action(self, game_id, obj)  # 9: a scoresheet sign-off only once the game has ended
                # An action is on a game that exists: it cannot start one (GameStarted goes through ingest).
                event = self.ingest.accept(json_post(
                    obj, board_id=info.board_id, principal_id=who.id, role=who.role,
                    allowed=(ARBITER_EVENT_TYPES | CLOCK_TYPES) - {"GameStarted"}, now_us=time.time_ns() // 1000,
                    max_skew_s=self.ingest.config.limits.max_skew_s,
                ))
            except Refusal as refusal:
                return self.ingest.refuse(refusal, payload, board_id=info.board_id, source=source, topic=TOPIC_ARBITER)
            return self.ingest.publish(TOPIC_ARBITER, event)

    def _venue_routes(self, bp: Blueprint) -> None:
        """Health, readiness, the live stream, the API's description, metrics and the web pages."""
        @bp.get("/healthz")
        def healthz() -> Response:
            return json_response({"status": "ok"})

        @bp.get("/readyz")
        def readyz() -> Response:
            ok, checks = self.ready()
            if not ok:
                failing = "; ".join(f"{k}: {v}" for k, v in checks.items() if v != "ok")
                return json_response({"error": "not_ready", "detail": failing, "checks": checks}, 503)
            return json_response({"status": "ready", "checks": checks})

        @bp.get("/api/stream")
        def stream() -> Response:
            last = request.headers.get("Last-Event-ID") or request.args.get("last_event_id")
            position, check = decode_stream_id(last)
            once = request.args.get("once") == "1"
            gen = self.stream(position, request.args.get("board"), request.args.get("game"), once, check)
            resp = Response(gen, mimetype="text/event-stream")
            resp.headers["Cache-Control"] = "no-cache"
            resp.headers["X-Accel-Buffering"] = "no"
            return resp

        @bp.get("/api/openapi.json")
        def openapi() -> Response:
            return json_response(load_openapi())

        @bp.get("/metrics")
        def _metrics() -> tuple[bytes, int, dict[str, str]]:
            return metrics.metrics_response()

        @bp.get("/")
        def index() -> Response:
            return send_file(WEB_DIR / "index.html")

        @bp.get("/<path:name>")
        def static_file(name: str) -> Response:
            path = (WEB_DIR / name).resolve()
            if WEB_DIR not in path.parents or not path.is_file():
                raise ApiError(404, "not_found", f"no page {name!r}")
            return send_file(path)


def load_openapi() -> dict[str, Any]:
    """The OpenAPI description of ingest and this API (services/referee/web/openapi.json, package data)."""
    return json.loads(resources.files("xqarb.referee").joinpath("web", "openapi.json").read_text(encoding="utf-8"))


def frame_loader(directories: Iterable[Path]) -> Callable[[str], bytes | None]:
    """Evidence frames from content-addressed directories: `<dir>/<sha[:2]>/<sha>.jpg` or `<dir>/<sha>.jpg`."""
    dirs = [Path(d) for d in directories]

    def load(sha256: str) -> bytes | None:
        for d in dirs:
            for candidate in (d / sha256[:2] / f"{sha256}.jpg", d / f"{sha256}.jpg", d / sha256[:2] / sha256,
                              d / sha256[:2] / f"{sha256}.thin.jpg"):  # (thinned: vision/retention.py)
                if candidate.is_file():
                    return candidate.read_bytes()
        return None

    return load


def create_app(api: RefereeApi, ingest: Any | None = None) -> Any:
    """One Flask app with the referee API, the web pages, /metrics and (when given) the ingest endpoints."""
    from flask import Flask

    from xqarb.ingest.app import install_json_errors

    app = Flask("xqarb.referee.api")
    install_json_errors(app)
    if ingest is not None:
        app.register_blueprint(ingest.blueprint())
    app.register_blueprint(api.blueprint())
    from xqarb.referee.proof_api import proof_blueprint  # tree heads, inclusion and consistency proofs

    app.register_blueprint(proof_blueprint(api.ledger, api.hub))
    from xqarb.referee.tournament_api import tournament_blueprint

    app.register_blueprint(tournament_blueprint(api.ledger, delay_for_board=api.delay_for_board))  # /api/tournament*
    from xqarb.referee.scoresheet_api import scoresheet_blueprint

    app.register_blueprint(scoresheet_blueprint(api))  # /api/games/<id>/scoresheet, /games/<id>/scoresheet.html
    from xqarb.referee.calibrate_api import calibrate_blueprint

    app.register_blueprint(calibrate_blueprint(api))  # /api/boards/<board>/{calibration,frame,corners}
    app.extensions["xq_api"] = api
    return app


def build_api_app(bootstrap: str, ledger: Any, *, config: Any | None = None, evidence_dir: Path | None = None,
                  ingest: Any | None = None, venue_path: Path | None = None) -> tuple[Any, StreamHub]:
    """The API app of a referee process (`xqarb referee serve --port`): a stream hub reading xq.game-events, the
    ledger, the evidence frames, and the venue configuration (boards, broadcast delays, arbiter tokens; without
    one, boards come from the ledger and arbiter actions are refused); `venue_path`, the file it was read from,
    is where the calibration page keeps a board's corners. Returns (Flask app, hub): stop the hub."""
    from xqarb.config import evidence_dir as default_evidence_dir
    from xqarb.vision.sweep import venue_frame_loader  # (a shared PostgreSQL store where the venue has one)

    hub = StreamHub()
    hub.start(kafka_game_events(bootstrap))
    boards = list(config.boards) if config is not None else sorted({g.board_id for g in ledger.games()})
    api = RefereeApi(
        ledger=ledger, hub=hub, board_ids=boards,
        load_frame=venue_frame_loader(venue_path, [evidence_dir or default_evidence_dir()]), ingest=ingest,
        delay_for_board=config.delay_for_board if config is not None else (lambda board: 0.0),
    )
    if venue_path is not None:
        api.venue_path = venue_path  # (calibrate_api: else the data directory's venue.json)
    return create_app(api), hub


def start_api_server(bootstrap: str, ledger: Any, *, host: str = "127.0.0.1", port: int = 8080,
                     config: Any | None = None, evidence_dir: Path | None = None,
                     venue_path: Path | None = None) -> tuple[Any, StreamHub]:
    """Serve the API, pages, stream and /metrics of a referee process in a thread (for `xqarb referee serve
    --host H --port P [--config VENUE]`). With a venue configuration, arbiter actions are accepted (published to
    xq.arbiter) and broadcast delays apply. Returns (server, hub): call `server.stop()` and `hub.stop()`."""
    from xqarb.ingest.server import ServerThread

    ingest = None
    if config is not None:
        from xqarb.config import data_dir
        from xqarb.ingest.app import Ingest
        from xqarb.ingest.outbox import OutboxPublisher

        # Arbiter actions answered 202 are on disk first (an outbox of this process's own), then published.
        outbox = data_dir() / "outbox" / "api.sqlite"
        ingest = Ingest(config, OutboxPublisher.connect(bootstrap, outbox, ack_timeout_s=config.limits.ack_timeout_s))
    app, hub = build_api_app(bootstrap, ledger, config=config, evidence_dir=evidence_dir, ingest=ingest,
                             venue_path=venue_path)
    return ServerThread(app, host, port).start(), hub


def cmd_web(args: Any) -> int:
    """`xqarb referee web`: the API, pages, stream and arbiter actions on their own (deploy/compose.yaml's `web`),
    reading the ledger the referee processes write. Runs until SIGINT or SIGTERM."""
    import signal
    import sys
    import threading

    from xqarb.config import evidence_dir, ledger_target
    from xqarb.ingest.config import load_config
    from xqarb.referee.ledger import open_ledger

    config = load_config(args.config) if args.config else None
    ledger = open_ledger(ledger_target(args.db))  # a file, or a postgresql:// URL
    evidence = Path(args.evidence_dir) if args.evidence_dir else evidence_dir()
    server, hub = start_api_server(args.bootstrap_servers, ledger, host=args.host, port=args.port, config=config,
                                   evidence_dir=evidence, venue_path=Path(args.config) if args.config else None)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    print(f"referee web: serving on {server.url}, ledger {ledger.path}", file=sys.stderr, flush=True)
    try:
        stop.wait()
    finally:
        server.stop()
        hub.stop()
        ledger.close()
    return 0
