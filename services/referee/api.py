"""The referee's HTTP API (DESIGN, HTTP contract), the live stream and the web pages, as one Flask blueprint.

- `GET /api/boards`: every board with its current game (players, position, clocks, fouls, alerts), alerts first.
- `GET /api/games/<id>`: the game's current state; `/events?after=N&limit=M`: ledger entries;
  `/state?seq=N`: the state as it was after entry N (position, clocks, fouls, pending obligations);
  `/verify`: the hash chain recomputed; `/frames/<sha256>`: an evidence frame; `/pgn`: the game as PGN with clock
  times; `POST /actions`: an arbiter's action (arbiter token) published to `xq.arbiter`.
- `GET /api/stream`: server-sent events of `xq.game-events`, resumable with Last-Event-ID, with the broadcast delay
  of each board's tournament; `?board=` / `?game=` filter.
- `GET /api/openapi.json`, `GET /metrics`, and the pages at `/` (overview), `/review.html`, `/overlay.html`.

Stream ids are positions, not counters: the id of an event is the list of next offsets per partition of
`xq.game-events` after it (`"0:15,3:27"`). A client that reconnects with it gets exactly the events it had not
seen, in the same order, even after the API process restarted (it rebuilds its buffer from the topic).
"""

from __future__ import annotations

import json
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

GAME_EVENTS_TOPIC = "xq.game-events"
SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
HEARTBEAT_S = 15.0
WEB_DIR = Path(__file__).resolve().parent / "web"


class ApiError(Exception):
    def __init__(self, status: int, error: str, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.error = error
        self.detail = detail


# --- stream positions (pure) ----------------------------------------------------------------------------------


def encode_position(position: Mapping[int, int]) -> str:
    """`{0: 15, 3: 27}` -> `"0:15,3:27"` (next offset to read per partition)."""
    return ",".join(f"{p}:{o}" for p, o in sorted(position.items()) if o > 0)


def decode_position(text: str | None) -> dict[int, int]:
    """The inverse of `encode_position`; ApiError 400 for anything else."""
    if not text:
        return {}
    out: dict[int, int] = {}
    for part in text.split(","):
        p, sep, o = part.partition(":")
        if not sep or not p.isdigit() or not o.isdigit():
            raise ApiError(
                400, "bad_last_event_id", f"Last-Event-ID {text!r} is not a stream position like '0:15,3:27'"
            )
        out[int(p)] = int(o)
    return out


# --- the stream hub -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StreamItem:
    index: int  # place in this hub's buffer
    partition: int
    offset: int
    arrived: float  # monotonic seconds when this hub read it
    event: Event
    position: str  # encoded position after this event: its SSE id
    text: str  # the event's JSON form


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

    def add(self, partition: int, offset: int, event: Event) -> StreamItem | None:
        with self._cond:
            if offset < self._position.get(partition, 0):
                return None  # read twice (a reconnect of the reader): already buffered
            self._position[partition] = offset + 1
            item = StreamItem(
                index=self.dropped + len(self.items),
                partition=partition,
                offset=offset,
                arrived=self.clock(),
                event=event,
                position=encode_position(self._position),
                text=json.dumps(event.to_json_dict(), ensure_ascii=False, separators=(",", ":")),
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
            for item in self.items:
                if item.offset >= position.get(item.partition, 0):
                    return item.index
            return self.dropped + len(self.items)

    def after(self, index: int, timeout: float) -> list[StreamItem]:
        """The buffered events from `index` on, waiting up to `timeout` seconds for one to come."""
        with self._cond:
            if index >= self.dropped + len(self.items):
                self._cond.wait(timeout)
            start = max(0, index - self.dropped)
            return self.items[start:]

    def run(self, poll: Callable[[], Iterable[tuple[int, int, Event]]]) -> None:
        while not self._stop.is_set():
            for partition, offset, event in poll():
                self.add(partition, offset, event)

    def start(self, poll: Callable[[], Iterable[tuple[int, int, Event]]]) -> threading.Thread:
        thread = threading.Thread(target=self.run, args=(poll,), name="xq-stream-hub", daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        self._stop.set()
        with self._cond:
            self._cond.notify_all()


def kafka_game_events(bootstrap: str, topic: str = GAME_EVENTS_TOPIC) -> Callable[[], list[tuple[int, int, Event]]]:
    """A `poll` for StreamHub.run: reads every partition of xq.game-events from the beginning (no consumer group:
    every API process keeps the whole stream). Messages that do not decode are skipped with a note (the referee's
    own output; the referee already keeps the ledger)."""
    from kafka import KafkaConsumer, TopicPartition

    from xqarb.codec import CodecError, decode

    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap, enable_auto_commit=False, group_id=None, client_id="xq-api-stream"
    )
    assigned: set[int] = set()

    def refresh() -> None:
        parts = consumer.partitions_for_topic(topic) or set()
        if parts - assigned:
            assigned.update(parts)
            tps = [TopicPartition(topic, p) for p in sorted(assigned)]
            consumer.assign(tps)
            consumer.seek_to_beginning(*[tp for tp in tps if tp.partition in parts])

    last_refresh = 0.0

    def poll() -> list[tuple[int, int, Event]]:
        nonlocal last_refresh
        if time.monotonic() - last_refresh > 5 or not assigned:
            refresh()
            last_refresh = time.monotonic()
        if not assigned:
            time.sleep(0.2)
            return []
        out = []
        for tp, records in consumer.poll(timeout_ms=200).items():
            for rec in records:
                try:
                    out.append((tp.partition, rec.offset, decode(rec.value)))
                except CodecError as exc:
                    print(f"api: skipping undecodable message {tp.partition}:{rec.offset} on {topic}: {exc}")
        return out

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
    if event.type == "MoveMade":
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
                v["red_player"], v["black_player"] = self._known_players.get(gid, ("", ""))

        def key(v: dict[str, Any]) -> tuple[int, int, str]:
            # Alerts first (most alerts first), then by board number where the ids are numbers.
            bid = v["board_id"]
            return (-len(v["alerts"]), int(bid) if bid.isdigit() else 1 << 30, bid)

        return sorted(views, key=key)


# --- PGN (pure) -------------------------------------------------------------------------------------------------


def _clock_text(ms: int | None) -> str | None:
    if ms is None:
        return None
    s = max(0, ms) // 1000
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def pgn_of(game_id: str, entries: Iterable[Mapping[str, Any]]) -> str:
    """The game as PGN from its ledger entries: headers from GameStarted/GameEnded, moves in Chinese notation (7.5)
    with each side's clock after the move as `{[%clk h:mm:ss]}`."""
    started: Mapping[str, Any] = {}
    result = "*"
    moves: list[Mapping[str, Any]] = []
    for entry in entries:
        ev = entry["event"]
        if ev["type"] == "GameStarted":
            started = ev
        elif ev["type"] == "MoveMade":
            moves.append(ev)
        elif ev["type"] == "GameEnded":
            result = ev["result"]
    date = ""
    if started:
        date = time.strftime("%Y.%m.%d", time.gmtime(started["occurred_at"] / 1e6))
    tags = [
        ("Game", "Chinese Chess"),
        ("Event", started.get("event", "") if started else ""),
        ("Site", f"board {started.get('board_id', '')}" if started else ""),
        ("Date", date),
        ("Red", started.get("red_player", "") if started else ""),
        ("Black", started.get("black_player", "") if started else ""),
        ("Result", result),
        ("FEN", (started.get("start_fen") if started else None) or START_FEN),
        ("Format", "Chinese"),
        ("GameId", game_id),
    ]
    lines = [f'[{k} "{v}"]' for k, v in tags]
    lines.append("")
    body: list[str] = []
    for mv in moves:
        ply = mv["ply"]
        if ply % 2 == 1:
            body.append(f"{(ply + 1) // 2}.")
        body.append(mv["chinese"] or mv["iccs"])
        clk = _clock_text(mv.get("red_ms") if mv["side"] == "red" else mv.get("black_ms"))
        if clk:
            body.append(f"{{[%clk {clk}]}}")
    body.append(result)
    text, line = [], ""
    for token in body:
        if len(line) + len(token) + 1 > 78:
            text.append(line)
            line = token
        else:
            line = f"{line} {token}" if line else token
    text.append(line)
    return "\n".join(lines + text) + "\n"


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


def _json(obj: Any, status: int = 200) -> Response:
    return Response(json.dumps(obj, ensure_ascii=False), status=status, mimetype="application/json")


def _error(exc: ApiError) -> Response:
    return _json({"error": exc.error, "detail": exc.detail}, exc.status)


def _int_arg(name: str, default: int | None, *, minimum: int = 0) -> int | None:
    raw = request.args.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(400, "bad_parameter", f"{name} must be an integer, not {raw!r}") from None
    if value < minimum:
        raise ApiError(400, "bad_parameter", f"{name} must be at least {minimum}, not {value}")
    return value


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

    def _state(self, game_id: str, seq: int) -> dict[str, Any]:
        def inputs() -> list[Event]:
            return [e.event for e in self.ledger.entries(game_id, 0, seq) if e.kind == "input"]

        state = self.states.state(game_id, seq, inputs)
        return {"game_id": game_id, "seq": seq, "state": state}

    # --- the stream --------------------------------------------------------------------------------------------

    def stream(self, position: dict[int, int], board: str | None, game: str | None, once: bool) -> Iterator[str]:
        """SSE text: every event after `position` (filtered), each held until its board's broadcast delay passed."""
        hub = self.hub
        index = hub.start_index(position)
        metrics.STREAM_CLIENTS.inc()
        try:
            yield "retry: 1000\n\n"
            if index is None:
                yield "event: reset\ndata: {\"reason\": \"position older than the server's buffer; reload\"}\n\n"
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
                    yield f"id: {item.position}\nevent: {item.event.type}\ndata: {item.text}\n\n"
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
            return _error(exc)

        @bp.get("/api/boards")
        def boards() -> Response:
            return _json({"boards": self.venue.boards()})

        @bp.get("/api/games")
        def games() -> Response:
            board = request.args.get("board")
            return _json(
                {"games": [
                    {"game_id": g.game_id, "board_id": g.board_id, "entries": g.entries, "head_hash": g.head_hash}
                    for g in self.ledger.games(board)
                ]}
            )

        @bp.get("/api/games/<game_id>")
        def game(game_id: str) -> Response:
            info = self._game(game_id)
            out = self._state(game_id, info.entries)
            out.update({"board_id": info.board_id, "entries": info.entries, "head_hash": info.head_hash})
            return _json(out)

        @bp.get("/api/games/<game_id>/events")
        def events(game_id: str) -> Response:
            info = self._game(game_id)
            after = _int_arg("after", 0)
            limit = _int_arg("limit", 1000, minimum=1)
            assert after is not None and limit is not None
            limit = min(limit, 5000)
            entries = self.ledger.entries(game_id, after, limit)
            return _json(
                {"game_id": game_id, "board_id": info.board_id, "head_seq": info.entries,
                 "entries": [e.to_json() for e in entries]}
            )

        @bp.get("/api/games/<game_id>/state")
        def state(game_id: str) -> Response:
            info = self._game(game_id)
            seq = _int_arg("seq", info.entries)
            assert seq is not None
            if seq > info.entries:
                raise ApiError(404, "unknown_entry", f"game {game_id} has {info.entries} entries, not {seq}")
            out = self._state(game_id, seq)
            out["board_id"] = info.board_id
            return _json(out)

        @bp.get("/api/games/<game_id>/verify")
        def verify(game_id: str) -> Response:
            self._game(game_id)
            return _json(self.ledger.verify(game_id).to_json())

        @bp.get("/api/games/<game_id>/frames/<sha256>")
        def frame(game_id: str, sha256: str) -> Response:
            self._game(game_id)
            if not SHA256_RE.match(sha256):
                raise ApiError(400, "bad_sha256", f"{sha256!r} is not a SHA-256 in lowercase hex (64 characters)")
            data = self.load_frame(sha256)
            if data is None:
                raise ApiError(404, "unknown_frame", f"no evidence frame {sha256}")
            resp = Response(data, mimetype="image/jpeg")
            # Content-addressed: the bytes under this name never change.
            resp.headers["Cache-Control"] = "public, max-age=31536000, immutable"
            return resp

        @bp.get("/api/games/<game_id>/pgn")
        def pgn(game_id: str) -> Response:
            self._game(game_id)
            entries = [e.to_json() for e in self.ledger.entries(game_id, 0, None)]
            resp = Response(pgn_of(game_id, entries), mimetype="application/x-chess-pgn")
            resp.headers["Content-Disposition"] = f'attachment; filename="{game_id}.pgn"'
            return resp

        @bp.post("/api/games/<game_id>/actions")
        def actions(game_id: str) -> Response:
            if self.ingest is None:
                raise ApiError(503, "no_ingest", "this API process does not accept arbiter actions")
            info = self._game(game_id)
            from xqarb.ingest.validate import ARBITER_EVENT_TYPES, CLOCK_TYPES, TOPIC_ARBITER, Refusal, json_event

            payload = None
            source = "?"
            try:
                who = self.ingest.authenticate(info.board_id)
                source = who.id
                if not who.is_arbiter:
                    raise Refusal(403, "arbiter_only", "arbiter actions need an arbiter's token")
                payload = self.ingest.read_body(self.ingest.config.limits.max_json_bytes)
                try:
                    obj = json.loads(payload)
                except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                    raise Refusal(400, "bad_json", f"the body is not JSON: {exc}") from None
                if isinstance(obj, dict):
                    if obj.get("game_id") not in (None, game_id):
                        raise Refusal(
                            400, "game_mismatch", f"the action names game {obj['game_id']!r}, not {game_id!r}"
                        )
                    obj = {**obj, "game_id": game_id}
                event = json_event(
                    obj, board_id=info.board_id, principal_id=who.id, is_arbiter=True,
                    allowed=ARBITER_EVENT_TYPES | CLOCK_TYPES - {"GameStarted"}, now_us=time.time_ns() // 1000,
                    max_skew_s=self.ingest.config.limits.max_skew_s,
                )
                self.ingest.sequences.reserve(event.source, event.source_seq)
            except Refusal as refusal:
                return self.ingest.refuse(refusal, payload, board_id=info.board_id, source=source, topic=TOPIC_ARBITER)
            return self.ingest.publish(TOPIC_ARBITER, event)

        @bp.get("/api/stream")
        def stream() -> Response:
            last = request.headers.get("Last-Event-ID") or request.args.get("last_event_id")
            position = decode_position(last)
            once = request.args.get("once") == "1"
            gen = self.stream(position, request.args.get("board"), request.args.get("game"), once)
            resp = Response(gen, mimetype="text/event-stream")
            resp.headers["Cache-Control"] = "no-cache"
            resp.headers["X-Accel-Buffering"] = "no"
            return resp

        @bp.get("/api/openapi.json")
        def openapi() -> Response:
            return _json(load_openapi())

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

        return bp


def load_openapi() -> dict[str, Any]:
    """The OpenAPI description of ingest and this API (services/referee/web/openapi.json, package data)."""
    return json.loads(resources.files("xqarb.referee").joinpath("web", "openapi.json").read_text(encoding="utf-8"))


def frame_loader(directories: Iterable[Path]) -> Callable[[str], bytes | None]:
    """Evidence frames from content-addressed directories: `<dir>/<sha[:2]>/<sha>.jpg` or `<dir>/<sha>.jpg`."""
    dirs = [Path(d) for d in directories]

    def load(sha256: str) -> bytes | None:
        for d in dirs:
            for candidate in (d / sha256[:2] / f"{sha256}.jpg", d / f"{sha256}.jpg", d / sha256[:2] / sha256):
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
    app.extensions["xq_api"] = api
    return app


def build_api_app(bootstrap: str, ledger: Any, *, config: Any | None = None, evidence_dir: Path | None = None,
                  ingest: Any | None = None) -> tuple[Any, StreamHub]:
    """The API app of a referee process (`xqarb referee serve --port`): a stream hub reading xq.game-events, the
    ledger, the evidence frames, and the venue configuration (boards, broadcast delays, arbiter tokens; without
    one, boards come from the ledger and arbiter actions are refused). Returns (Flask app, hub): stop the hub."""
    from xqarb.config import evidence_dir as default_evidence_dir

    hub = StreamHub()
    hub.start(kafka_game_events(bootstrap))
    boards = list(config.boards) if config is not None else sorted({g.board_id for g in ledger.games()})
    api = RefereeApi(
        ledger=ledger, hub=hub, board_ids=boards,
        load_frame=frame_loader([evidence_dir or default_evidence_dir()]), ingest=ingest,
        delay_for_board=config.delay_for_board if config is not None else (lambda board: 0.0),
    )
    return create_app(api), hub


def start_api_server(bootstrap: str, ledger: Any, *, host: str = "127.0.0.1", port: int = 8080,
                     config: Any | None = None, evidence_dir: Path | None = None) -> tuple[Any, StreamHub]:
    """Serve the API, pages, stream and /metrics of a referee process in a thread (for `xqarb referee serve
    --host H --port P [--config VENUE]`). With a venue configuration, arbiter actions are accepted (published to
    xq.arbiter) and broadcast delays apply. Returns (server, hub): call `server.stop()` and `hub.stop()`."""
    from xqarb.ingest.server import ServerThread

    ingest = None
    if config is not None:
        from xqarb.ingest.app import Ingest
        from xqarb.ingest.publish import BusPublisher

        ingest = Ingest(config, BusPublisher.connect(bootstrap, ack_timeout_s=config.limits.ack_timeout_s))
    app, hub = build_api_app(bootstrap, ledger, config=config, evidence_dir=evidence_dir, ingest=ingest)
    return ServerThread(app, host, port).start(), hub


def cmd_web(args: Any) -> int:
    """`xqarb referee web`: the API, pages, stream and arbiter actions on their own (deploy/compose.yaml's `web`),
    reading the ledger the referee processes write. Runs until SIGINT or SIGTERM."""
    import signal
    import sys
    import threading

    from xqarb.config import evidence_dir, ledger_path
    from xqarb.ingest.config import load_config
    from xqarb.referee.ledger import SqliteLedger

    config = load_config(args.config) if args.config else None
    ledger = SqliteLedger(Path(args.db) if args.db else ledger_path())
    evidence = Path(args.evidence_dir) if args.evidence_dir else evidence_dir()
    server, hub = start_api_server(args.bootstrap_servers, ledger, host=args.host, port=args.port, config=config,
                                   evidence_dir=evidence)
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
