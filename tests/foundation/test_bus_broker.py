"""The Kafka adapter over the real embedded broker (no mocks): round trips, the dead-letter topic, consumer groups."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable

import pytest

from xqarb import bus, codec
from xqarb.bus import Consumer, DeadLetter, Producer, TopicPartition
from xqarb.events import Event, make_event

from .conftest import sample_json, sample_types

TIMEOUT_S = 30.0
# The group coordinator waits about half the session timeout for members to join; 6 s is Kafka's minimum.
FAST = {"session_timeout_ms": 6_000}


def drain(consumer: Consumer, want: int, timeout_s: float = TIMEOUT_S) -> list[bus.Record]:
    """Poll until `want` records came (or fail after the timeout)."""
    got: list[bus.Record] = []
    deadline = time.monotonic() + timeout_s
    while len(got) < want and time.monotonic() < deadline:
        got.extend(consumer.poll(0.2))
    assert len(got) == want, f"received {len(got)} of {want} records within {timeout_s} s"
    return got


def draw_offer(board: str, seq: int) -> Event:
    return make_event("DrawOffered", board, source="test", source_seq=seq, occurred_at=seq, received_at=seq, side="red")


def test_every_schema_round_trips_through_the_broker(broker: str, unique_topic: Callable[[str], str]) -> None:
    topic = unique_topic("all")
    assert bus.ensure_topics(broker, [topic], partitions=3) == {topic: 3}
    events = []
    for i, event_type in enumerate(sample_types() * 2):  # two boards per type, so keys spread over partitions
        line = {**sample_json(event_type, seq=i + 1), "board_id": f"board-{i % 5}"}
        events.append(Event.from_json_dict(line))
    with Producer(broker) as producer:
        first = producer.send(topic, events[0])
        deliveries = [first, *producer.send_many(topic, events[1:])]
    assert first.topic == topic and first.offset == 0
    with Consumer(broker, unique_topic("group"), [topic], **FAST) as consumer:
        records = drain(consumer, len(events))
    by_id = {r.event.event_id: r for r in records if r.event is not None}
    assert len(by_id) == len(events)
    partition_of_board: dict[str, int] = {}
    for event, delivery in zip(events, deliveries, strict=True):
        record = by_id[event.event_id]
        assert record.event == event
        assert record.event.to_json() == event.to_json()
        assert record.value == codec.encode(event)
        assert record.key == event.board_id
        assert (record.partition, record.offset) == (delivery.partition, delivery.offset)
        # key = board id: one board stays on one partition
        assert partition_of_board.setdefault(event.board_id, record.partition) == record.partition
    # and in order within the board
    for board in partition_of_board:
        seqs = [r.event.source_seq for r in sorted(records, key=lambda r: r.offset) if r.key == board]
        assert seqs == sorted(seqs)


def test_ensure_topics_is_idempotent_and_reports_partitions(broker: str, unique_topic: Callable[[str], str]) -> None:
    a, b = unique_topic("a"), unique_topic("b")
    assert bus.ensure_topics(broker, [a], partitions=2) == {a: 2}
    assert bus.ensure_topics(broker, [a, b], partitions=5) == {a: 2, b: 5}  # existing topics are left alone


def test_undecodable_messages_go_to_the_dlq_with_their_reason_and_consumption_goes_on(
    broker: str, unique_topic: Callable[[str], str]
) -> None:
    topic = unique_topic("in")
    bus.ensure_topics(broker, [topic, bus.DLQ], partitions=1)
    good = [draw_offer("b1", 1), draw_offer("b1", 2), draw_offer("b1", 3)]
    valid = codec.encode(good[0])
    unknown_fp = valid[:2] + (0x0123456789ABCDEF).to_bytes(8, "little") + valid[10:]
    truncated = codec.encode(good[1])[:-2]
    not_avro = b'{"type": "DrawOffered"}'
    with Producer(broker) as producer:
        producer.send(topic, good[0])
        producer.send_raw(topic, "b1", unknown_fp)
        producer.send_raw(topic, "b1", not_avro)
        producer.send(topic, good[1])
        producer.send_raw(topic, "b1", truncated)
        producer.send(topic, good[2])
    group = unique_topic("group")
    with Consumer(broker, group, [topic], **FAST) as consumer:
        records = drain(consumer, 3)
        assert [r.event for r in records] == good
        assert [r.offset for r in records] == [0, 3, 5]
        assert consumer.dead_lettered == 3
        consumer.commit()
        assert consumer.committed(TopicPartition(topic, 0)) == 6

    with bus.Reader(broker, [bus.DLQ], decode=False) as dlq:
        letters: list[DeadLetter] = []
        deadline = time.monotonic() + TIMEOUT_S
        while len(letters) < 3 and time.monotonic() < deadline:
            letters += [DeadLetter.from_record(r) for r in dlq.poll(0.2)]
            letters = [d for d in letters if d.topic == topic]  # the DLQ is shared by the whole session
    assert [(d.partition, d.offset, d.key) for d in letters] == [(0, 1, "b1"), (0, 2, "b1"), (0, 4, "b1")]
    assert [d.value for d in letters] == [unknown_fp, not_avro, truncated]  # the original bytes, untouched
    assert "unknown schema fingerprint 0123456789abcdef" in letters[0].reason
    assert "not an Avro single-object message" in letters[1].reason
    assert "DrawOffered" in letters[2].reason and "does not decode" in letters[2].reason
    assert all(d.source == f"consumer:{group}" for d in letters)

    # The committed offset covers the dead letters: a restarted member neither re-reads nor re-dead-letters.
    with Producer(broker) as producer:
        producer.send(topic, draw_offer("b1", 4))
    with Consumer(broker, group, [topic], **FAST) as again:
        assert [r.event.source_seq for r in drain(again, 1)] == [4]
        assert again.dead_lettered == 0


def test_dead_letter_from_ingest_has_no_origin_topic(broker: str, unique_topic: Callable[[str], str]) -> None:
    bus.ensure_topics(broker, [bus.DLQ])
    marker = unique_topic("rejected").encode()
    with Producer(broker) as producer:
        delivery = bus.dead_letter(producer, None, None, None, marker, "ClockPressed.side: expected one of red/black",
                                   key="b9", source="ingest")  # fmt: skip
    assert delivery.topic == bus.DLQ
    with bus.Reader(broker, [bus.DLQ], decode=False) as dlq:
        found: list[DeadLetter] = []
        deadline = time.monotonic() + TIMEOUT_S
        while not found and time.monotonic() < deadline:
            found = [DeadLetter.from_record(r) for r in dlq.poll(0.2) if r.value == marker]
    assert found == [
        DeadLetter("ClockPressed.side: expected one of red/black", marker, "b9", None, None, None, "ingest")
    ]


def test_a_failing_assignment_callback_stops_the_consumer(broker: str, unique_topic: Callable[[str], str]) -> None:
    topic = unique_topic("t")
    bus.ensure_topics(broker, [topic], partitions=2)

    def load_state(partitions: list[TopicPartition]) -> None:
        raise RuntimeError(f"ledger unreadable for {partitions}")

    with Consumer(broker, unique_topic("g"), [topic], on_assigned=load_state, **FAST) as consumer:
        deadline = time.monotonic() + TIMEOUT_S
        with pytest.raises(RuntimeError, match="ledger unreadable"):
            while time.monotonic() < deadline:
                consumer.poll(0.2)


def test_unreachable_broker_is_a_clear_error() -> None:
    from xqarb.broker import free_port

    with pytest.raises(bus.BusError, match="cannot connect a producer"):
        Producer(f"127.0.0.1:{free_port()}", timeout_s=2.0)


class Member(threading.Thread):
    """One group member processing in its own thread, committing after each poll while `committing` is set."""

    def __init__(self, name: str, broker: str, group: str, topic: str) -> None:
        super().__init__(name=name, daemon=True)
        self.broker, self.group, self.topic = broker, group, topic
        self.received: list[tuple[str, int, int]] = []  # (event id, partition, offset)
        self.uncommitted: set[str] = set()
        self.lost_uncommitted: set[str] = set()  # processed, not committed, partition taken away
        self.assigned: set[int] = set()
        self.outside_assignment: list[tuple[int, int]] = []
        self.history: list[tuple[str, list[int]]] = []
        self.committing = True
        self.leave = threading.Event()
        self.ready = threading.Event()
        self.error: BaseException | None = None
        self.lock = threading.Lock()

    def run(self) -> None:
        try:
            self.consumer = Consumer(
                self.broker, self.group, [self.topic], on_assigned=self.on_assigned, on_revoked=self.on_revoked,
                client_id=self.name, **FAST,
            )  # fmt: skip
            self.ready.set()
            while not self.leave.is_set():
                records = self.consumer.poll(0.2)
                with self.lock:
                    for r in records:
                        if r.partition not in self.assigned:  # on_assigned must run before a partition's records
                            self.outside_assignment.append((r.partition, r.offset))
                        self.received.append((r.event.event_id, r.partition, r.offset))
                        self.uncommitted.add(r.event.event_id)
                if self.committing and records:
                    self.consumer.commit()
                    with self.lock:
                        self.uncommitted.clear()
            with self.lock:
                self.lost_uncommitted |= self.uncommitted
            self.consumer.close()  # leaves the group without committing
        except BaseException as exc:  # reported by the test thread
            self.error = exc

    def on_assigned(self, partitions: list[TopicPartition]) -> None:
        with self.lock:
            self.assigned |= {p.partition for p in partitions}
            self.history.append(("assigned", sorted(p.partition for p in partitions)))

    def on_revoked(self, partitions: list[TopicPartition]) -> None:
        # What a service does before its partitions move: commit what it has processed.
        if self.committing:
            self.consumer.commit()
            with self.lock:
                self.uncommitted.clear()
        with self.lock:
            self.lost_uncommitted |= self.uncommitted
            self.assigned -= {p.partition for p in partitions}
            self.history.append(("revoked", sorted(p.partition for p in partitions)))

    def ids(self) -> list[str]:
        with self.lock:
            return [r[0] for r in self.received]


def wait_for(condition: Callable[[], bool], what: str, members: list[Member], timeout_s: float = 45.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for m in members:
            if m.error is not None:
                raise AssertionError(f"member {m.name} failed") from m.error
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}; " + "; ".join(f"{m.name}: {m.history}" for m in members))


def test_two_members_split_the_partitions_and_the_survivor_takes_over(
    broker: str, unique_topic: Callable[[str], str]
) -> None:
    partitions = 6
    topic = unique_topic("group")
    bus.ensure_topics(broker, [topic], partitions=partitions)
    boards = [f"board-{i:03d}" for i in range(30)]
    produced: list[Event] = []

    def produce(count: int) -> list[Event]:
        batch = [draw_offer(boards[(len(produced) + i) % len(boards)], len(produced) + i) for i in range(count)]
        with Producer(broker) as producer:
            producer.send_many(topic, batch)
        produced.extend(batch)
        return batch

    produce(120)
    group = unique_topic("g")
    a = Member("member-a", broker, group, topic)
    b = Member("member-b", broker, group, topic)
    a.start()
    a.ready.wait(TIMEOUT_S)
    b.start()
    members = [a, b]
    everything = set(range(partitions))
    wait_for(lambda: a.assigned and b.assigned and a.assigned | b.assigned == everything, "the split", members)
    assert not a.assigned & b.assigned, "a partition is held by both members"
    wait_for(lambda: set(a.ids()) | set(b.ids()) >= {e.event_id for e in produced}, "the first batch", members)

    # B goes on processing but stops committing (as if it died between processing and committing) ...
    b.committing = False
    second = produce(120)
    wait_for(lambda: set(a.ids()) | set(b.ids()) >= {e.event_id for e in second}, "the second batch", members)
    with b.lock:
        b_processed_uncommitted = set(b.uncommitted)
    assert b_processed_uncommitted, "B received none of the second batch: the test proves nothing"
    # ... then leaves: A must get all partitions and resume B's partitions from B's committed offsets.
    b.leave.set()
    b.join(TIMEOUT_S)
    assert not b.is_alive() and b.error is None
    wait_for(lambda: a.assigned == everything, "A to hold every partition", members)
    third = produce(60)
    wanted = {e.event_id for e in produced}
    wait_for(lambda: set(a.ids()) >= (b_processed_uncommitted | {e.event_id for e in third}), "A to catch up", [a])
    time.sleep(1.0)  # anything more arriving now would be a duplicate beyond the committed offsets
    a.leave.set()
    a.join(TIMEOUT_S)
    assert a.error is None

    counts = Counter(a.ids() + b.ids())
    assert set(counts) == wanted, "a message was lost (or one nobody produced appeared)"
    duplicates = {event_id for event_id, n in counts.items() if n > 1}
    # Exactly the messages processed but not committed by the member that lost their partitions come twice.
    assert duplicates == b.lost_uncommitted | a.lost_uncommitted
    assert duplicates == b_processed_uncommitted
    assert max(counts.values()) == 2
    # Per partition, each member saw offsets in increasing order, and only of partitions it had been given.
    for m in members:
        assert not m.outside_assignment, (m.name, m.outside_assignment[:5])
        for p in everything:
            offsets = [o for _, part, o in m.received if part == p]
            assert offsets == sorted(offsets), (m.name, p)


def test_when_the_dlq_cannot_be_written_nothing_of_the_batch_is_skipped(
    broker: str, unique_topic: Callable[[str], str]
) -> None:
    from xqarb.broker import EmbeddedBroker

    topic = unique_topic("t")
    bus.ensure_topics(broker, [topic, bus.DLQ], partitions=1)
    with Producer(broker) as producer:
        producer.send(topic, draw_offer("b1", 1))
        producer.send_raw(topic, "b1", b"\xc3\x01broken")
        producer.send(topic, draw_offer("b1", 2))
    with EmbeddedBroker() as doomed:
        unreachable_dlq = Producer(doomed.bootstrap, timeout_s=1.0)
    released: list[list[TopicPartition]] = []
    consumer = Consumer(broker, unique_topic("g"), [topic], dlq_producer=unreachable_dlq, on_revoked=released.append,
                        **FAST)  # fmt: skip
    try:
        deadline = time.monotonic() + TIMEOUT_S
        before: list[bus.Record] = []  # a first batch may end before the broken record
        with pytest.raises(bus.PublishError):
            while time.monotonic() < deadline:
                before += consumer.poll(0.2)
        consumer.commit()  # commits the rewound position: the batch is not skipped
        with Producer(broker) as working:
            consumer._dlq = working  # the DLQ is reachable again
            records = before + drain(consumer, 2 - len(before))
            assert [r.event.source_seq for r in records] == [1, 2]
            assert consumer.dead_lettered == 1
    finally:
        consumer.close()
        unreachable_dlq.close()
    assert released == [[TopicPartition(topic, 0)]]  # close() releases the partitions it held


def test_send_raises_when_the_broker_does_not_acknowledge() -> None:
    from xqarb.broker import EmbeddedBroker

    with EmbeddedBroker() as doomed:
        bus.ensure_topics(doomed.bootstrap, ["t"], partitions=1)
        producer = Producer(doomed.bootstrap, timeout_s=2.0)
        assert producer.send("t", draw_offer("b1", 1)).offset == 0
    try:
        started = time.monotonic()
        with pytest.raises(bus.PublishError, match=r"^t: .*key 'b1'"):
            producer.send("t", draw_offer("b1", 2))
        with pytest.raises(bus.PublishError):
            producer.send_many("t", [draw_offer("b1", 3), draw_offer("b2", 4)])
        with pytest.raises(bus.PublishError):
            producer.acknowledged(producer.send_soon("t", [draw_offer("b1", 5)]))
        assert time.monotonic() - started < 20, "the producer must not wait without bound"
    finally:
        producer.close()  # returns although the broker is gone


def test_sent_soon_messages_go_out_before_they_are_awaited_and_keep_their_order(
    broker: str, unique_topic: Callable[[str], str]
) -> None:
    topic = unique_topic("soon")
    bus.ensure_topics(broker, [topic], partitions=1)
    with Producer(broker) as producer, bus.Reader(broker, [topic]) as reader:
        pending = producer.send_soon(topic, [draw_offer("b1", 1), draw_offer("b1", 2)])
        # nobody waits on the producer: the sender thread delivers them on its own (vision reads on meanwhile)
        records: list[bus.Record] = []
        deadline = time.monotonic() + TIMEOUT_S
        while len(records) < 2 and time.monotonic() < deadline:
            records += reader.poll(0.2)
        pending += producer.send_soon(topic, [draw_offer("b1", 3)])
        deliveries = producer.acknowledged(pending)
    assert [r.event.source_seq for r in records if r.event] == [1, 2]
    assert [(d.topic, d.offset) for d in deliveries] == [(topic, 0), (topic, 1), (topic, 2)]
    assert producer.send_soon(topic, []) == []


def test_a_reader_sees_whole_topics_and_reports_undecodable_records(
    broker: str, unique_topic: Callable[[str], str]
) -> None:
    topic = unique_topic("r")
    bus.ensure_topics(broker, [topic], partitions=3)
    with Producer(broker) as producer:
        producer.send_many(topic, [draw_offer(f"b{i}", i) for i in range(6)])
        producer.send_raw(topic, "b0", b"\xc3\x01" + bytes(8))
    with bus.Reader(broker, [topic]) as reader:
        records: list[bus.Record] = []
        deadline = time.monotonic() + TIMEOUT_S
        while len(records) < 7 and time.monotonic() < deadline:
            records += reader.poll(0.2)
    assert sorted(r.event.source_seq for r in records if r.event) == list(range(6))
    [bad] = [r for r in records if r.event is None]
    assert bad.key == "b0" and "unknown schema fingerprint" in (bad.error or "")
    with pytest.raises(bus.BusError, match="does not exist"):
        bus.Reader(broker, [unique_topic("missing")], timeout_s=1.0)


def test_a_board_s_partitions_of_every_input_topic_go_to_the_same_member(
    broker: str, unique_topic: Callable[[str], str]
) -> None:
    """The referee reads observations, clock and arbiter topics: one board's inputs must reach one process."""
    topics = [unique_topic("obs"), unique_topic("clock")]
    bus.ensure_topics(broker, topics, partitions=3)  # odd: round-robin assignment would split a board's topics
    group = unique_topic("g")
    held: dict[str, set[TopicPartition]] = {"a": set(), "b": set()}
    members = {
        name: Consumer(broker, group, topics, client_id=name, on_assigned=held[name].update,
                       on_revoked=held[name].difference_update, **FAST)
        for name in held
    }  # fmt: skip
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline and not (held["a"] and held["b"] and len(held["a"] | held["b"]) == 6):
            for consumer in members.values():
                consumer.poll(0.1)
        assert held["a"] and held["b"] and len(held["a"] | held["b"]) == 6, held
        for name, parts in held.items():
            per_topic = [{p.partition for p in parts if p.topic == t} for t in topics]
            assert per_topic[0] == per_topic[1], f"{name} holds different partitions per topic: {per_topic}"
        # and the same board key lands on the same partition number in both topics
        with Producer(broker) as producer:
            for board in ("board-1", "board-2", "board-3"):
                event = draw_offer(board, 1)
                assert producer.send(topics[0], event).partition == producer.send(topics[1], event).partition
    finally:
        for consumer in members.values():
            consumer.close()


def test_committed_offsets_of_many_partitions_in_one_look(broker: str, unique_topic: Callable[[str], str]) -> None:
    from kafka import KafkaConsumer, OffsetAndMetadata
    from kafka import TopicPartition as KafkaTopicPartition

    topic = unique_topic("committed")
    bus.ensure_topics(broker, [topic], partitions=3)
    tps = [KafkaTopicPartition(topic, p) for p in range(3)]
    group = f"g-{topic}"
    writer = KafkaConsumer(bootstrap_servers=broker, group_id=group, enable_auto_commit=False)
    probe = KafkaConsumer(bootstrap_servers=broker, group_id=group, enable_auto_commit=False)
    try:
        writer.assign(tps[:2])
        writer.commit({tps[0]: OffsetAndMetadata(7, "", -1), tps[1]: OffsetAndMetadata(0, "", -1)})
        assert bus.committed_offsets(probe, tps) == {tps[0]: 7, tps[1]: 0, tps[2]: None}
        # the same as asking partition by partition
        assert bus.committed_offsets(probe, tps) == {tp: probe.committed(tp) for tp in tps}
    finally:
        writer.close()
        probe.close()


def test_a_member_says_which_partitions_it_has_not_read_to_their_end(
    broker: str, unique_topic: Callable[[str], str]
) -> None:
    """The referee holds a board's observations while its device topics are behind (services/referee/ordering.py)."""
    obs, clock = unique_topic("obs"), unique_topic("clock")
    bus.ensure_topics(broker, [obs, clock], partitions=2)
    with Producer(broker) as producer:
        partition = {producer.send(clock, draw_offer("board-1", seq)).partition for seq in range(1, 4)}.pop()
    consumer = Consumer(broker, unique_topic("g"), [obs, clock], **FAST)
    try:
        got: list[bus.Record] = []
        deadline = time.monotonic() + TIMEOUT_S
        while not got and time.monotonic() < deadline:
            got = consumer.poll(0.2, max_records=1)
        assert len(got) == 1
        assert partition in consumer.behind([clock])  # two of three still unread
        assert consumer.behind([obs]) == frozenset({0, 1})  # a poll that returned its most: any may hold more
        got += drain(consumer, 2)
        while consumer.poll(0.2):
            pass
        # read to the ends the fetches reported, empty partitions included
        assert consumer.behind([clock]) == frozenset() and consumer.behind([obs]) == frozenset()
    finally:
        consumer.close()


def test_records_given_back_are_read_again_after_the_commit(broker: str, unique_topic: Callable[[str], str]) -> None:
    """A member that stops half-way through a batch (a rebalance due) commits only what it handled."""
    topic = unique_topic("back")
    bus.ensure_topics(broker, [topic], partitions=1)
    with Producer(broker) as producer:
        producer.send_many(topic, [draw_offer("board-1", seq) for seq in range(1, 7)])
    group = unique_topic("g")
    first = Consumer(broker, group, [topic], **FAST)
    try:
        batch = drain(first, 6)
        first.give_back(batch[2:])
        first.commit()
    finally:
        first.close()
    again = Consumer(broker, group, [topic], **FAST)
    try:
        rest = drain(again, 4)
    finally:
        again.close()
    assert [r.offset for r in rest] == [r.offset for r in batch[2:]]
    assert [r.event.event_id for r in rest] == [r.event.event_id for r in batch[2:]]


def test_records_held_are_read_again_by_the_next_member(broker: str, unique_topic: Callable[[str], str]) -> None:
    """A commit that holds a partition back (records read whose outcome is not given yet) stops it there; the
    partitions not held are committed where the member read to."""
    topic = unique_topic("held")
    bus.ensure_topics(broker, [topic], partitions=1)
    with Producer(broker) as producer:
        producer.send_many(topic, [draw_offer("board-1", seq) for seq in range(1, 7)])
    group = unique_topic("g")
    first = Consumer(broker, group, [topic], **FAST)
    try:
        batch = drain(first, 6)
        first.commit(held={bus.TopicPartition(topic, 0): batch[3].offset, bus.TopicPartition("elsewhere", 0): 0})
        assert first.committed(bus.TopicPartition(topic, 0)) == batch[3].offset
    finally:
        first.close()
    again = Consumer(broker, group, [topic], **FAST)
    try:
        rest = drain(again, 3)
        again.commit(held={bus.TopicPartition(topic, 0): 10_000})  # (held beyond the position: the position)
        assert again.committed(bus.TopicPartition(topic, 0)) == batch[-1].offset + 1
    finally:
        again.close()
    assert [r.offset for r in rest] == [r.offset for r in batch[3:]]


def test_a_member_is_told_of_a_rebalance_before_its_next_poll(broker: str, unique_topic: Callable[[str], str]) -> None:
    """Its heartbeat learns that the group rebalances; the member's poll then rejoins and the partitions are split."""
    topic = unique_topic("due")
    bus.ensure_topics(broker, [topic], partitions=2)
    group = unique_topic("g")
    a = Consumer(broker, group, [topic], **FAST)
    b: Consumer | None = None
    stop = threading.Event()
    joining: threading.Thread | None = None
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while len(a.assignment()) < 2 and time.monotonic() < deadline:
            a.poll(0.2)
        assert len(a.assignment()) == 2 and not a.rebalance_due()
        b = Consumer(broker, group, [topic], **FAST)
        joining = threading.Thread(target=lambda: [b.poll(0.2) for _ in iter(stop.is_set, True)], daemon=True)
        joining.start()
        deadline = time.monotonic() + TIMEOUT_S
        while not a.rebalance_due() and time.monotonic() < deadline:
            time.sleep(0.1)  # (no poll: a member busy with a batch)
        assert a.rebalance_due(), "the member was not told of the rebalance"
        while not (len(a.assignment()) == 1 and len(b.assignment()) == 1) and time.monotonic() < deadline:
            a.poll(0.2)
        assert len(a.assignment()) == 1 and len(b.assignment()) == 1 and not a.rebalance_due()
    finally:
        stop.set()
        if joining is not None:
            joining.join(TIMEOUT_S)
        a.close()
        if b is not None:
            b.close()
