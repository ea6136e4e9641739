"""The referee service: Kafka in, ledger and `xq.game-events` out, around the pure game fold.

For every input (observations, clock and arbiter events), in partition order:
  1. the board's state comes from memory, or is rebuilt from the ledger the first time the board is seen after
     a partition was assigned (the inputs of the board's latest game folded again: state = fold(events), from
     the game's snapshot where this fold took one, snapshot.py);
  2. an input already in the ledger (found by its event id, in whatever game it went to) changes nothing. Only
     the very record appended before (the same topic, partition and offset: a redelivery after a crash or a
     rebalance) has the outputs that followed it published again (at least once on `xq.game-events`; their event
     ids are stable, so consumers drop doubles); the same event posted again (a replay: another record) publishes
     nothing. An input whose event id its game already holds with another time is refused too (the ledger's
     key is the time and the id; the ids of the game a board plays are kept in memory). A device that counts
     from 1 again in a later game (a restart, with no epoch) is not refused: its ids name another game's inputs;
  3. otherwise the fold steps, and the input with its outputs is appended to the game's ledger in one
     transaction, then the outputs are published (acknowledged by the broker). The first input this referee
     appends to a chain records its fold's and rule set's versions where the chain is new or another version
     wrote it (version.py);
  4. offsets are committed only after the batch was appended and published.
A broker that dies and comes back (the embedded one restarts empty) is ridden through, not restarted around: the
outputs it did not acknowledge are sent again until it does, the consumer rejoins its group (a rejoin that does not
end makes a new member, REFEREE_REJOIN_S) and reads the new topics from their start, and what ingest's outbox and
vision send again is folded once (the ledger finds every input it holds by its event id).
A board event that belongs to no game (nothing started on the board yet) goes to the board's own chain
`board:<id>` so that nothing accepted is lost.
"""

from __future__ import annotations

import argparse
import logging
import pickle
import signal
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from xqarb.collector import tune_for_service
from xqarb.events import Event, make_event
from xqarb.referee import snapshot
from xqarb.referee.ledger import Batch, Ledger, LedgerConflict, LedgerError, Origin, Pending
from xqarb.referee.ordering import VISION_OBSERVATIONS
from xqarb.referee.version import Versions, differs, installed, recorded_in
from xqarb.referee.version import record as version_record
from xqarb.referee.watch import FLAG_WARNING_MS, flag_check_due

log = logging.getLogger("xqarb.referee")

UNASSIGNED_PREFIX = "board:"
INPUT_TOPICS: tuple[str, ...] = ("xq.observations", "xq.clock", "xq.arbiter")
DEFAULT_GROUP = "xq-referee"
# Inputs published on xq.game-events as they are appended, besides the referee's outputs (DESIGN, /api/stream): an
# overlay learns the players from GameStarted and runs the clocks from each press and pause.
STREAM_INPUTS = frozenset({"GameStarted", "ClockPressed", "ClockPaused", "ClockResumed"})
# A board's state is kept as a snapshot once this many inputs were folded since its last one, so that a restart
# folds about this many again (a few ms) instead of the whole game: 124-287 ms for the longest shared game,
# 14-18 ms from a snapshot with a 50-input tail (bench/referee_restart.py). Snapshots are taken when the referee
# is idle (a poll with nothing to fold), when it gives partitions away and when it stops, never on the hot path:
# pickling a long game's state costs about 6 ms, as much as folding a hundred inputs.
SNAPSHOT_AFTER_INPUTS = 100
SNAPSHOTS_PER_IDLE_POLL = 4  # an idle poll stays short (each snapshot a few ms) however many boards are due
# Outputs the broker did not acknowledge (it died; the producer's own retries and timeout are spent) are sent again
# after this pause, until it takes them: the supervisor restarts an embedded broker within a second or two, a
# venue's broker host reboots in 30-120 s; a pause this short keeps a ruling's delay near the broker's own outage.
REPUBLISH_PAUSE_S = 1.0
# A referee to which its group has given no partitions this long after it began to rejoin is made a new member of
# the group (bus.Consumer.renew_after_s): what bounds its recovery from a broker restart, beyond the broker's own
# outage. The restarted embedded broker was seen never to answer a rejoining leader's SyncGroup (55 s and more), while
# its join rounds take about 5 s each, two after a restart (before and after `up` made the topics again); Apache
# Kafka waits for a slow member up to its max poll interval, and a member made anew there only costs a rebalance.
# Measured (two referees, the broker SIGKILLed and restarted): 7-8 s to fold again without that stall, 37 s with it
# and 30 s here; a third of the tries stalled so.
REFEREE_REJOIN_S = 20.0


def unassigned_chain(board_id: str) -> str:
    """The ledger chain of a board's events that belong to no game."""
    return f"{UNASSIGNED_PREFIX}{board_id}"


@dataclass
class GameIds:
    """The input event ids of the game a board plays (an event id is accepted once in a game)."""

    game_id: str | None = None
    ids: set[str] = field(default_factory=set)

    def holds(self, event_id: str, game_id: str | None) -> bool:
        return game_id == self.game_id and event_id in self.ids

    def add(self, event_id: str, game_id: str | None) -> None:
        if game_id != self.game_id:
            # Another game (or the board's own chain): the last game's ids are left to the ledger.
            self.game_id, self.ids = game_id, set()
        self.ids.add(event_id)


@dataclass
class Referee:
    """The ledger-backed adapter around the fold, without Kafka: feed it inputs, it returns what to publish.

    Holds the states of the boards it currently owns; everything else lives in the ledger.
    """

    ledger: Ledger
    _boards: dict[str, Any] = field(default_factory=dict)
    _partition_of: dict[str, tuple[str, int]] = field(default_factory=dict)
    _ids: dict[str, GameIds] = field(default_factory=dict)
    # chain -> (board, the versions that wrote its latest outputs): this referee's first entry on a chain records
    # its own versions when they are not those (version.py)
    _versions: dict[str, tuple[str, Versions | None]] = field(default_factory=dict)
    _current: dict[str, str] = field(default_factory=dict)  # chain -> board: chains whose versions are this referee's
    _unsnapped: dict[str, int] = field(default_factory=dict)  # board -> inputs folded since its last snapshot
    snapshots: int = 0  # snapshots taken
    resumed: int = 0  # boards rebuilt from a snapshot and the entries after it
    duplicates: int = 0
    replays: int = 0  # inputs already in the ledger that came as another record: nothing published again
    reused_ids: int = 0  # inputs whose event id their game held for another input: refused
    appended: int = 0
    last_games: tuple[str, ...] = ()  # the ledger chains the last batch appended to (for signed tree heads)
    flag_warning_ms: int = FLAG_WARNING_MS  # watch.py: the remaining time at which a flag warning comes due
    # board -> (when it is due on `monotonic`, the service's clock in seconds; its time in the game's clock, µs;
    # the side; the game): the board's next ClockCheck, built when it comes due (most are planned again first)
    _checks: dict[str, tuple[float, int, str, str]] = field(default_factory=dict)
    monotonic: Callable[[], float] = time.monotonic

    def handle_batch(self, items: Sequence[tuple[Event, Origin | None]]) -> tuple[Event, ...]:
        """Fold a batch of inputs in order and append them all in one ledger transaction.

        The boards' new states are kept only once the append succeeded: a failed append leaves the referee as
        it was, and the same batch can be handled again.
        """
        from xqarb.referee.board import step

        known = self.ledger.find_events([event for event, _ in items])
        staged: dict[str, Any] = {}
        # One batch per game: each game's chain keeps the inputs' order; the chains of different games are
        # independent, and they are all appended in one transaction.
        per_game: dict[str, tuple[str, list[Pending]]] = {}
        outputs: list[Event] = []
        seen: set[str] = set()
        accepted: list[tuple[str, str, str]] = []  # (board, event id, game) of each input appended
        staged_versions: dict[str, tuple[str, Versions | None]] = {}
        staged_current: dict[str, str] = {}
        current = self._current
        duplicates = 0
        for event, origin in items:
            if event.event_id in known:
                duplicates += 1
                game_id, seq = known[event.event_id]
                if self._redelivered(game_id, seq, origin):
                    if event.type in STREAM_INPUTS:
                        outputs.append(event)
                    outputs.extend(self._outputs_after(game_id, seq))
                else:
                    # Posted again, or sent again by a vision process that restarted: the ledger has it, and its
                    # outputs were published when it was appended.
                    self.replays += 1
                    log.info("referee: input %s of board %s is already in the ledger (%s #%d) and came again as "
                                "another record %s: nothing published again", event.event_id, event.board_id,
                                game_id, seq, origin)
                continue
            if event.event_id in seen:
                duplicates += 1  # the same input twice in one batch (a device retry)
                continue
            seen.add(event.event_id)
            board = event.board_id
            if board in staged:
                state = staged[board]
            elif board in self._boards:
                state = self._boards[board]
            else:
                state = self.rebuild(board)
            new_state, result = step(state, event)
            game_id = result.game_id or unassigned_chain(board)
            if board in self._ids and self._ids[board].holds(event.event_id, game_id):
                self.reused_ids += 1  # the step is dropped: the board stays as it was
                log.warning("referee: input %s (%s) on board %s reuses the event id of an earlier input of game %s "
                            "with another time: refused", event.event_id, event.type, board, game_id)
                continue
            staged[board] = new_state
            accepted.append((board, event.event_id, game_id))
            chain = per_game.get(game_id)
            if chain is None:
                chain = per_game[game_id] = (board, [])
            if game_id in current or game_id in staged_current:
                chain[1].append(Pending("input", event, origin))
            else:
                chain[1].append(self._first_input(game_id, board, event, origin, new_state, staged_versions))
                if result.game_id is None or (new_state.game is not None and new_state.game.game_id == game_id):
                    staged_current[game_id] = board  # (a game that could not start yet has no rule set to record)
            if event.type in STREAM_INPUTS:
                outputs.append(event)
            if result.outputs:
                chain[1].extend(Pending("output", out) for out in result.outputs)
                outputs.extend(result.outputs)
        if per_game:
            batches = [Batch(game_id, board, tuple(chain)) for game_id, (board, chain) in per_game.items()]
            self.appended += self.ledger.append_looked_up(batches)  # looked up above
        self.last_games = tuple(per_game)
        self._boards.update(staged)
        self._versions.update(staged_versions)
        current.update(staged_current)
        unsnapped = self._unsnapped
        for board, event_id, game_id in accepted:
            self._ids.setdefault(board, GameIds()).add(event_id, game_id)
            unsnapped[board] = unsnapped.get(board, 0) + 1
        for event, origin in items:
            if origin is not None:
                self._partition_of[event.board_id] = (origin.topic, origin.partition)
        for board, state in staged.items():
            self._plan_check(board, state)
        self.duplicates += duplicates
        return tuple(outputs)

    def _plan_check(self, board: str, state: Any) -> None:
        """The board's next ClockCheck (watch.py), from its game's clock as folded: one per warning, at the moment
        the running side's time reaches the setting, then one when its time runs out; none while no clock runs."""
        game = state.game if state is not None else None
        due = None if game is None or game.result is not None else flag_check_due(
            game.clock, game.watch, game.last_at, self.flag_warning_ms)
        deadline = None if game is None else game.deadline()
        if deadline is not None and (due is None or deadline < due[0]):
            # 4.1.6 / 4.1.7: a check at the moment the running side's time runs out (or its late-arrival limit
            # passes) lets the fold rule it then, not at whatever input comes next: a player whose flag fell
            # while nobody touched the board has lost at that moment, and the venue shows it at once.
            due = max(deadline, game.last_at), game.clock.running
        if due is None:
            self._checks.pop(board, None)
            return
        at, side = due
        # Due once as much time has passed here since the board's latest input as its clock needs from that
        # input's time: the events' clocks (devices) and this process's need not agree, and a game fed from an
        # old record gets no check until that much time has really passed.
        self._checks[board] = (self.monotonic() + (at - game.last_at) / 1e6, at, side, game.game_id)

    def due_checks(self, waiting: Callable[[str], bool] = lambda board: False) -> list[Event]:
        """The ClockChecks due now, each given once, except for boards with inputs still held for ordering
        (`waiting`): those are folded first, and the check planned again from the state they leave."""
        now = self.monotonic()
        due = [board for board, (when, *_) in self._checks.items() if when <= now and not waiting(board)]
        checks = []
        for board in due:
            _, at, side, game_id = self._checks.pop(board)
            # The id names the game, the side and the moment: the same check twice (a restart) is one input.
            checks.append(make_event("ClockCheck", board, source="referee", source_seq=at, occurred_at=at,
                                     received_at=at, event_id=f"clock-check:{game_id}:{side}:{at}",
                                     game_id=game_id, side=side, warn_ms=self.flag_warning_ms))
        return checks

    def rebuild(self, board_id: str) -> Any:
        """The board's state from the ledger: the inputs of its latest game folded again, from its snapshot (the
        state after an entry, taken by this fold) where there is one."""
        from xqarb.referee.board import fold

        games = [g for g in self.ledger.games(board_id=board_id) if not g.game_id.startswith(UNASSIGNED_PREFIX)]
        if not games:
            return None
        game_id = games[-1].game_id
        state, recorded, after = self._snapshot_of(game_id)
        entries = self.ledger.entries(game_id, after=after)
        inputs = [entry.event for entry in entries if entry.kind == "input"]
        ids = self.ledger.input_ids(game_id) if after else {event.event_id for event in inputs}
        self._ids[board_id] = GameIds(game_id, ids)
        state = fold(inputs, state)
        versions = recorded_in(entries)
        recorded = versions[-1][1] if versions else recorded
        self._versions[game_id] = (board_id, recorded)
        game = state.game
        change = differs(recorded, installed(game.cfg.ruleset if game is not None else None))
        if change is not None:
            # The game goes on with this referee's fold; its next entries record the change (version.py).
            log.warning("referee: the installed fold differs from the one that wrote game %s of board %s (%s): "
                        "its next outputs are this version's and the ledger records the change", game_id, board_id,
                        change)
        return state

    def _snapshot_of(self, game_id: str) -> tuple[Any, Versions | None, int]:
        """(state, versions recorded, entry it follows) of the game's snapshot; (None, None, 0) where there is no
        snapshot this fold can use."""
        from xqarb.referee.board import BoardState

        found = self.ledger.latest_snapshot(game_id)
        if found is None:
            return None, None, 0
        seq, blob = found
        try:
            state, recorded = snapshot.decode(blob)
        except (snapshot.SnapshotError, TypeError, ValueError) as exc:
            log.info("referee: the snapshot of game %s after entry %d is not used (%s): its inputs are folded "
                     "again", game_id, seq, exc)
            return None, None, 0
        if not isinstance(state, BoardState) or state.game is None or state.game.game_id != game_id:
            log.warning("referee: the snapshot of game %s after entry %d holds another state: not used", game_id, seq)
            return None, None, 0
        self.resumed += 1
        return state, recorded, seq

    def take_snapshots(self, min_inputs: int = SNAPSHOT_AFTER_INPUTS, limit: int | None = None,
                       boards: Iterable[str] | None = None) -> int:
        """Keep the state of each board (of `boards`, or all) that folded at least `min_inputs` inputs since its
        last snapshot, at most `limit` of them. Returns how many were taken. A snapshot only speeds up a restart:
        one that cannot be written is logged and the entries stay the truth."""
        wanted = None if boards is None else set(boards)
        taken = 0
        for board in [b for b, n in self._unsnapped.items() if n >= min_inputs and (wanted is None or b in wanted)]:
            if limit is not None and taken >= limit:
                break
            del self._unsnapped[board]
            state = self._boards.get(board)
            game = state.game if state is not None else None
            if game is None:
                continue
            seq = self.ledger.head(game.game_id)[0]  # the state is the one after the chain's last entry
            recorded = self._versions.get(game.game_id, (board, None))[1]
            try:
                self.ledger.put_snapshot(game.game_id, seq, snapshot.encode((state, recorded)))
            except (LedgerError, sqlite3.Error, pickle.PicklingError, TypeError) as exc:
                log.warning("referee: no snapshot of game %s (%s); a restart folds its inputs again", game.game_id,
                            exc)
                continue
            taken += 1
        self.snapshots += taken
        return taken

    def release(self, topic: str, partitions: Iterable[int]) -> list[str]:
        """Forget the boards of partitions given to another process (it rebuilds them from the ledger, from the
        snapshots taken here first)."""
        gone = {(topic, p) for p in partitions}
        boards = [b for b, tp in self._partition_of.items() if tp in gone]
        self.take_snapshots(min_inputs=1, boards=boards)
        self.forget(boards)
        return boards

    def forget(self, boards: Iterable[str]) -> None:
        """Drop what this referee holds of the boards, without a snapshot: they are rebuilt from the ledger when
        next needed (after `release`, or when another writer appended to their games: what is held is stale)."""
        boards = set(boards)
        for chain in [c for c, (b, _) in self._versions.items() if b in boards]:
            del self._versions[chain]  # another referee (perhaps of another version) may write it meanwhile
        for chain in [c for c, b in self._current.items() if b in boards]:
            del self._current[chain]
        for board in boards:
            self._boards.pop(board, None)
            self._checks.pop(board, None)
            self._unsnapped.pop(board, None)
            self._partition_of.pop(board, None)
            self._ids.pop(board, None)

    def _redelivered(self, game_id: str, seq: int, origin: Origin | None) -> bool:
        """Whether the input at (game, seq) was appended from this very record (topic, partition, offset): a
        redelivery after a crash, whose outputs may never have been published."""
        if origin is None:
            return False
        stored = self.ledger.entries(game_id, after=seq - 1, limit=1)
        return bool(stored) and stored[0].origin == origin

    def _outputs_after(self, game_id: str, seq: int) -> tuple[Event, ...]:
        outputs: list[Event] = []
        for entry in self.ledger.entries(game_id, after=seq, limit=64):
            if entry.kind == "input":
                break
            outputs.append(entry.event)
        return tuple(outputs)

    def _first_input(self, chain: str, board: str, event: Event, origin: Origin | None, state: Any,
                     staged: dict[str, tuple[str, Versions | None]]) -> Pending:
        """The entry of this referee's first input on a chain (in this process): it records this referee's
        versions where the chain is new or another version (or none) wrote it before."""
        recorded = self._chain_versions(chain, board, staged)
        game = state.game
        now = installed(game.cfg.ruleset if game is not None and game.game_id == chain else None)
        if recorded == now:
            return Pending("input", event, origin)
        staged[chain] = (board, now)
        return Pending("input", event, origin, version_record(now, recorded))

    def _chain_versions(self, chain: str, board: str,
                        staged: dict[str, tuple[str, Versions | None]]) -> Versions | None:
        """The versions that wrote the chain's latest outputs (None: none recorded, or a new chain)."""
        known = staged.get(chain) or self._versions.get(chain)
        if known is None:
            # Once per chain per process (a new game: one indexed look-up that finds nothing).
            recorded = None
            if self.ledger.head(chain)[0]:
                versions = recorded_in(self.ledger.entries(chain))
                recorded = versions[-1][1] if versions else None
            known = staged[chain] = (board, recorded)
        return known[1]


class RefereeService:
    """The Kafka consumer group member: `run()` until `stop()`."""

    def __init__(
        self,
        bootstrap: str,
        ledger: Ledger,
        *,
        group_id: str = DEFAULT_GROUP,
        topics: Sequence[str] = INPUT_TOPICS,
        game_events_topic: str = "xq.game-events",
        poll_timeout_s: float = 0.5,
        on_outputs: Callable[[Sequence[Event]], None] | None = None,
        hold_s: float = 10.0,
        tree_heads: Any | None = None,  # head_publisher.TreeHeadPublisher: signed heads after each append
        flag_warning_ms: int = FLAG_WARNING_MS,
        camera_boards: Iterable[str] = (),  # the venue's boards with a camera (VenueConfig.camera_boards)
    ) -> None:
        from xqarb import bus
        from xqarb.referee.ordering import EventTimeOrder

        self.referee = Referee(ledger, flag_warning_ms=flag_warning_ms)
        # The observations topic is the first of the input topics (DESIGN's order: observations, clock, arbiter),
        # with its second topic where the embedded broker rolls it (bus.ROLLED).
        # The venue's camera boards hold their presses for the camera from the first input on, after a restart too.
        cameras = frozenset(topics[:1]) | frozenset(bus.ROLLED[t] for t in topics[:1] if t in bus.ROLLED)
        self.device_topics = tuple(topics[1:])  # clock and arbiter: an observation waits while they are behind
        self.order = EventTimeOrder(cameras, hold_s=hold_s, camera_boards=frozenset(camera_boards))
        self._next_offset: dict[tuple[str, int], int] = {}
        self._committed: dict[tuple[str, int], int] = {}  # what this member committed last, per partition
        self.game_events_topic = game_events_topic
        self.poll_timeout_s = poll_timeout_s
        self.on_outputs = on_outputs
        self.tree_heads = tree_heads
        self._stop = threading.Event()
        self.producer = bus.Producer(bootstrap, client_id=f"xqarb-{group_id}")
        self.consumer = bus.Consumer(
            bootstrap,
            group_id,
            topics,
            on_assigned=self._assigned,
            on_revoked=self._revoked,
            dlq_producer=self.producer,
            renew_after_s=REFEREE_REJOIN_S,
            request_timeout_s=bus.GROUP_REQUEST_TIMEOUT_MS / 1000,  # a SyncGroup never answered: given up, rejoined
        )
        self.processed = 0
        self.republished = 0  # outputs sent again after the broker did not acknowledge them (`_publish`)
        self.conflicts = 0  # batches folded again after another writer appended to their games first (`_fold`)

    def _assigned(self, partitions: list[Any]) -> None:
        # Boards are rebuilt lazily from the ledger when their first event arrives: a partition's boards are
        # only known from its records.
        log.info("referee: assigned %s", ", ".join(f"{p.topic}[{p.partition}]" for p in partitions))

    def _revoked(self, partitions: list[Any]) -> None:
        by_topic: dict[str, list[int]] = {}
        for p in partitions:
            by_topic.setdefault(p.topic, []).append(p.partition)
        for topic, parts in by_topic.items():
            self.referee.release(topic, parts)
            self.order.drop(topic, parts)
            for p in parts:
                self._next_offset.pop((topic, p), None)
                self._committed.pop((topic, p), None)
        log.info("referee: revoked %s", ", ".join(f"{p.topic}[{p.partition}]" for p in partitions))

    def run_once(self) -> int:
        """Poll one batch, fold what may be folded, append, publish, commit. Returns the records released."""
        from xqarb import bus

        try:
            polled = self.consumer.poll(self.poll_timeout_s)
        except bus.BusError as exc:
            # The broker away (or a dead letter it did not take: the batch was rewound): nothing was taken, and
            # kafka-python reconnects and rejoins at the next poll. Said, and polled again, rather than ending the
            # loop: a process that goes on keeps what it holds for ordering.
            log.warning("referee: %s; polling again in %.1f s", exc, REPUBLISH_PAUSE_S)
            self._stop.wait(REPUBLISH_PAUSE_S)
            return 0
        for r in polled:
            # (records come in offset order: a rolled topic emptied and made again counts from 0 again)
            key = (r.topic, r.partition)
            if r.offset < self._committed.get(key, 0):
                del self._committed[key]  # read from before the last commit: the topic was made again
            self._next_offset[key] = r.offset + 1
        # A board's clock and arbiter inputs wait until its camera has seen the board at their time (ordering.py).
        self.order.add(polled, time.monotonic())
        # ... and its observations until the device topics of its partition are read up to their ends.
        records = self.order.release(time.monotonic(), self.consumer.behind(self.device_topics))
        outputs: list[Event] = []
        if records:
            appended_before = self.referee.appended
            outputs.extend(self._fold([(r.event, Origin(r.topic, r.partition, r.offset)) for r in records]))
            self._observe(records, outputs, self.referee.appended - appended_before)
            if self.tree_heads is not None:
                self.tree_heads.touched(self.referee.last_games, outputs)
        elif not polled:
            self.referee.take_snapshots(limit=SNAPSHOTS_PER_IDLE_POLL)  # idle: nothing waits for the fold
        outputs.extend(self._clock_checks())
        if self.tree_heads is not None:  # after the games' own outputs, and also when a quiet game's head is due
            outputs.extend(self.tree_heads.due(time.monotonic(), time.time_ns() // 1000))
        if outputs:
            self._publish(outputs)
            if self.on_outputs is not None:
                self.on_outputs(outputs)
        if polled or records:
            # DESIGN: offsets are committed only after the ledger append (and the publication); never past an
            # input still held for ordering.
            held = self.order.held_from()
            offsets = {key: min(next_offset, held.get(key, next_offset))
                       for key, next_offset in self._next_offset.items()}
            # Only what moved on: a rolled topic that was consumed, emptied and made again (bus.ROLLED) must not get
            # its old offset back, which would tell the roller that its next records were read.
            moved = {key: offset for key, offset in offsets.items() if self._committed.get(key) != offset}
            try:
                self.consumer.commit({bus.TopicPartition(*key): offset for key, offset in moved.items()})
                self._committed.update(moved)
            except bus.CommitFailed as exc:
                # The group gave this member's partitions to another while it did not answer (paused or starved
                # past its session timeout): what it appended is in the ledger, and the new owner reads on from
                # the last commit (the ledger knows the inputs it sees again). This member lets its boards go and
                # rejoins at its next poll, instead of exiting.
                log.warning("referee: %s; its partitions are released, and it rejoins the group", exc)
                self._revoked([bus.TopicPartition(t, p) for t, p in list(self._next_offset)])
        self.processed += len(records)
        return len(records)

    def _fold(self, batch: list[tuple[Event, Origin | None]]) -> tuple[Event, ...]:
        """`Referee.handle_batch`; where another writer appended to one of the batch's games first (two members
        holding the same partitions for a moment while their group rebalances), the batch's boards are read again
        from the ledger and the batch folded once more: what the other appended is found there and not appended
        twice, and the rest follows it in the chain. A second conflict ends the loop (the supervisor restarts it)."""
        try:
            return self.referee.handle_batch(batch)
        except LedgerConflict as exc:
            boards = sorted({event.board_id for event, _ in batch})
            self.conflicts += 1
            log.warning("referee: %s: board(s) %s read again from the ledger and the batch folded again", exc,
                        ", ".join(boards))
            self.referee.forget(boards)
            return self.referee.handle_batch(batch)

    def _publish(self, outputs: Sequence[Event]) -> None:
        """Publish a batch's outputs, appended to the ledger already, until the broker acknowledged them all: sent
        again, the same events in order, after each refusal (a broker that died and is restarted, empty, on the same
        address), rather than ending the loop. A referee that ended here lost those outputs for good after a broker
        restart: the inputs come back from ingest's outbox as other records, and an input already in the ledger
        from another record publishes nothing again (a replay, `Referee.handle_batch`). Sending again is safe: the
        same event ids, which consumers take once. Nothing is polled and no offset moves meanwhile (the consumer's
        background heartbeat keeps the member in its group up to its max poll interval). A `stop()` said meanwhile
        ends the wait with the PublishError: the offsets were not committed, so the next owner of the partitions
        reads the same records again and publishes the outputs that followed them (`_redelivered`), where the
        broker still has them."""
        from xqarb import bus

        tries = 0
        while True:
            try:
                self.producer.send_many(self.game_events_topic, outputs)
                if tries:
                    log.warning("referee: %d output(s) acknowledged at try %d", len(outputs), tries + 1)
                return
            except bus.PublishError as exc:
                if self._stop.is_set():
                    raise
                tries += 1
                self.republished += len(outputs)
                log.warning("referee: %d output(s) not acknowledged (%s); sending them again in %.1f s (try %d)",
                            len(outputs), exc, REPUBLISH_PAUSE_S, tries + 1)
                self._stop.wait(REPUBLISH_PAUSE_S)

    def _clock_checks(self) -> list[Event]:
        """Record and fold the flag warnings come due (watch.py): each ClockCheck is an input of the ledger."""
        checks = self.referee.due_checks(self.order.waiting)
        if not checks:
            return []
        outputs = list(self.referee.handle_batch([(check, None) for check in checks]))
        if self.tree_heads is not None:
            self.tree_heads.touched(self.referee.last_games, outputs)
        return outputs

    @staticmethod
    def _observe(records: Sequence[Any], outputs: Sequence[Event], appended: int) -> None:
        """Metrics: ledger appends, capture -> observation (vision's stamps), observation -> output (now)."""
        from xqarb import metrics

        metrics.LEDGER_APPENDS.inc(appended)
        now_us = time.time_ns() // 1000
        for record in records:
            event = record.event
            if event is None or event.type not in VISION_OBSERVATIONS:
                continue
            # vision stamps an observation with the frame's capture time (occurred_at) and its own (received_at)
            metrics.CAPTURE_TO_OBSERVATION.observe(max(0.0, (event.received_at - event.occurred_at) / 1e6))
            if outputs:
                metrics.OBSERVATION_TO_RULING.observe(max(0.0, (now_us - event.received_at) / 1e6))

    def run(self) -> None:
        while not self._stop.is_set():
            self.run_once()

    def stop(self) -> None:
        self._stop.set()

    def close(self) -> None:
        try:
            self.referee.take_snapshots(min_inputs=1)  # a restart resumes every board from here
        finally:
            self.consumer.close()
        self.producer.close()


def venue_settings(config: str | None) -> tuple[int, frozenset[str]]:
    """(flag warning in ms, camera boards) of the venue's file: `config`, else the one `xqarb up` keeps in the data
    directory (a referee started beside it), else the defaults. ConfigError or OSError for a file that is bad."""
    from xqarb.config import venue_path
    from xqarb.ingest.config import ConfigError, load_config

    path = config or (venue_path() if venue_path().is_file() else None)
    if path is None:
        return FLAG_WARNING_MS, frozenset()
    try:
        venue = load_config(path)
    except OSError as exc:
        raise OSError(f"{path}: {exc.strerror or exc}") from None
    except ConfigError as exc:
        raise ConfigError(str(exc) if str(path) in str(exc) else f"{path}: {exc}") from None
    return round(venue.alerts.flag_warning_s * 1000), venue.camera_boards()  # the venue's [alerts], its cameras


def cmd_serve(args: argparse.Namespace) -> int:
    """`xqarb referee serve --bootstrap-servers HOST:PORT [--group G] [--db PATH] [--partitions N] [--config F]`."""
    from xqarb import bus
    from xqarb.config import ledger_target
    from xqarb.ingest.config import ConfigError
    from xqarb.referee.ledger import open_ledger

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    try:
        flag_warning_ms, camera_boards = venue_settings(getattr(args, "config", None))
    except (ConfigError, OSError) as exc:
        print(f"xqarb referee serve: {exc}", file=sys.stderr)
        return 2
    bus.ensure_topics(args.bootstrap_servers, partitions=getattr(args, "partitions", None) or bus.DEFAULT_PARTITIONS)
    ledger = open_ledger(ledger_target(getattr(args, "db", None)))  # a file, or a postgresql:// URL
    from xqarb.referee.head_publisher import TreeHeadPublisher

    service = RefereeService(args.bootstrap_servers, ledger, group_id=getattr(args, "group", None) or DEFAULT_GROUP,
                             tree_heads=TreeHeadPublisher.for_venue(ledger), flag_warning_ms=flag_warning_ms,
                             camera_boards=camera_boards)

    def stop(signum: int, frame: object) -> None:
        service.stop()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    tune_for_service()  # the fold's many short-lived objects (collector.py says why)
    print(f"referee: consuming {', '.join(INPUT_TOPICS)} from {args.bootstrap_servers}, ledger {ledger.path}",
          file=sys.stderr)
    try:
        service.run()
    finally:
        service.close()
        ledger.close()
    return 0
