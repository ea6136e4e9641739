"""Records a live reader never gets: several producers on one partition of the embedded broker, read at its tail.

    .venv/bin/python bench/tail_holes.py [--producers 8] [--rounds 1500]

Each of `--producers` threads (one producer each, as ingest's outbox, the bench's cameras or two referees) sends
one record to the same partition at the same moment, `--rounds` times, and notes each record's acknowledged offset.
Three readers follow the partition's tail meanwhile: kafka-python's KafkaConsumer as it is, `bus.Reader` and a
`bus.Consumer` in a group (both wait on a missing offset, xqarb.offset_holes). Reported per reader: the
acknowledged records it never returned, and what the partition holds when read again from its start afterwards.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections.abc import Callable
from typing import Any

TOPIC = "xq.bench-holes"


def produce(bootstrap: str, producers: int, rounds: int) -> dict[str, int]:
    """Every producer's records, sent together round by round: value -> acknowledged offset."""
    from kafka import KafkaProducer

    acked: dict[str, int] = {}
    lock = threading.Lock()
    together = threading.Barrier(producers)

    def run(k: int) -> None:
        producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=2,
                                 max_in_flight_requests_per_connection=1)
        for i in range(rounds):
            together.wait()
            meta = producer.send(TOPIC, f"{k}/{i}".encode(), partition=0).get(timeout=30)
            with lock:
                acked[f"{k}/{i}"] = meta.offset
        producer.close()

    threads = [threading.Thread(target=run, args=(k,)) for k in range(producers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return acked


def follow(poll: Callable[[], list[tuple[int, bytes]]], got: dict[str, int], stop: threading.Event) -> None:
    """Polls until `stop`, then 3 s more (what is readable by then is read)."""
    end = None
    while end is None or time.monotonic() < end:
        for offset, value in poll():
            got[value.decode()] = offset
        if end is None and stop.is_set():
            end = time.monotonic() + 3.0


def readers(bootstrap: str) -> dict[str, tuple[Callable[[], list[tuple[int, bytes]]], Callable[[], None], Any]]:
    """name -> (poll, close, its OffsetHoles or None): each reading partition 0 of TOPIC from its start."""
    from kafka import KafkaConsumer, TopicPartition

    from xqarb import bus

    plain = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, fetch_max_wait_ms=100)
    plain.assign([TopicPartition(TOPIC, 0)])
    plain.seek_to_beginning()
    reader = bus.Reader(bootstrap, [TOPIC], decode=False, partitions=[0])
    member = bus.Consumer(bootstrap, "bench-holes", [TOPIC], decode=False)

    def plain_poll() -> list[tuple[int, bytes]]:
        return [(m.offset, m.value) for ms in plain.poll(timeout_ms=200).values() for m in ms]

    def bus_poll(source: Any) -> Callable[[], list[tuple[int, bytes]]]:
        return lambda: [(r.offset, r.value) for r in source.poll(0.2)]

    return {"kafka-python KafkaConsumer": (plain_poll, plain.close, None),
            "bus.Reader": (bus_poll(reader), reader.close, reader.holes),
            "bus.Consumer (group)": (bus_poll(member), member.close, member.holes)}


def main() -> None:
    from xqarb import bus
    from xqarb.broker import EmbeddedBroker

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--producers", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=1500)
    args = parser.parse_args()
    with EmbeddedBroker() as broker:
        bus.ensure_topics(broker.bootstrap, [TOPIC], partitions=1)
        live = readers(broker.bootstrap)
        stop = threading.Event()
        got: dict[str, dict[str, int]] = {name: {} for name in live}
        threads = [threading.Thread(target=follow, args=(poll, got[name], stop)) for name, (poll, _, _) in live.items()]
        for t in threads:
            t.start()
        started = time.monotonic()
        acked = produce(broker.bootstrap, args.producers, args.rounds)
        sent_s = time.monotonic() - started
        stop.set()
        for t in threads:
            t.join()
        again: dict[str, int] = {}
        with bus.Reader(broker.bootstrap, [TOPIC], decode=False) as reader:
            deadline = time.monotonic() + 10
            while len(again) < len(acked) and time.monotonic() < deadline:
                again.update((r.value.decode(), r.offset) for r in reader.poll(0.3))
        result = {
            "producers": args.producers, "acknowledged": len(acked), "sent_s": round(sent_s, 1),
            "never_returned": {name: sorted(acked[v] for v in acked if v not in seen) for name, seen in got.items()},
            "holes_filled_passed": {name: (holes.waited, holes.passed) for name, (_, _, holes) in live.items()
                                    if holes is not None},
            "missing_when_read_again_from_start": sum(1 for v in acked if v not in again),
        }
        for _, close, _ in live.values():
            close()
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
