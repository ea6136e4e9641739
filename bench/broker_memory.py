"""The embedded broker's memory against what it holds, and which ways of removing records it honours.

    .venv/bin/python bench/broker_memory.py [--mb 50] [--record-kb 50]

Starts the embedded broker (Tansu, in-memory storage), produces `--mb` of frame-sized records to a topic, and
reports the broker's resident memory (VmRSS) after each step: producing; a DeleteRecords request up to the end of
each partition (what a trimmer of consumed frames would send); deleting the topic. Under a minute of CPU.
Only the last frees memory, so `xqarb.broker.FramesRoller` empties frames by deleting whole topics; the same
broker's sqlite://, slatedb://, turso:// and postgres:// storage are not built into this binary
("FeatureNotEnabled"). `bench/broker_memory_hour.py` runs the roller for an hour.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

from probe import rss_mb

from xqarb import bus
from xqarb.broker import EmbeddedBroker

TOPIC = "bench.broker-memory"
PARTITIONS = 2



def admin_request(bootstrap: str, request: Any) -> str:
    """Send one admin request with kafka-python's low-level client (its admin client chokes on this broker's
    metadata); the answer, or the error."""
    from kafka.client_async import KafkaClient

    client = KafkaClient(bootstrap_servers=bootstrap, request_timeout_ms=10_000)
    try:
        client.poll(future=client.cluster.request_update(), timeout_ms=5000)
        node = next(iter(client.cluster.brokers())).nodeId
        deadline = time.monotonic() + 5
        while not client.ready(node) and time.monotonic() < deadline:
            client.poll(timeout_ms=100)
        future = client.send(node, request)
        client.poll(future=future, timeout_ms=10_000)
        return repr(future.value) if future.succeeded() else f"failed: {future.exception!r}"
    finally:
        client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=int, default=50, help="megabytes of records to produce")
    parser.add_argument("--record-kb", type=int, default=50, help="size of one record (a 1280x720 JPEG: ~50-100)")
    args = parser.parse_args()
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.protocol.admin import DeleteRecordsRequest, DeleteTopicsRequest

    with EmbeddedBroker() as broker:
        assert broker._process is not None
        pid = broker._process.pid
        bus.ensure_topics(broker.bootstrap, [TOPIC], partitions=PARTITIONS)
        print(f"broker {broker.bootstrap}: {rss_mb(pid):.0f} MB resident at start")
        producer = KafkaProducer(bootstrap_servers=broker.bootstrap, max_request_size=bus.MAX_REQUEST_BYTES)
        payload = os.urandom(args.record_kb * 1024)
        count = args.mb * 1024 // args.record_kb
        for i in range(count):
            producer.send(TOPIC, key=str(i % 8).encode(), value=payload)
        producer.flush()
        producer.close()
        print(f"after {count} records of {args.record_kb} KB ({args.mb} MB): {rss_mb(pid):.0f} MB resident")

        consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=None)
        parts = [TopicPartition(TOPIC, p) for p in range(PARTITIONS)]
        ends = consumer.end_offsets(parts)
        request = DeleteRecordsRequest[0](
            topics=[(TOPIC, [(tp.partition, offset) for tp, offset in ends.items()])], timeout_ms=5000
        )
        answer = admin_request(broker.bootstrap, request)
        time.sleep(1)
        alive = broker.running
        print(f"DeleteRecords up to the end: {answer[:100]}; broker {'running' if alive else 'gone'}, "
              f"{rss_mb(pid) if alive else float('nan'):.0f} MB resident")
        if not alive or "panicked" in broker.log_tail(40):
            print("  broker log:", " | ".join(line for line in broker.log_tail(40).splitlines() if "panick" in line
                                               or "not yet implemented" in line)[:300])
        consumer.close()
        answer = admin_request(broker.bootstrap, DeleteTopicsRequest[0](topics=[TOPIC], timeout=5000))
        time.sleep(1)
        print(f"DeleteTopics: {answer[:100]}; {rss_mb(pid):.0f} MB resident")


if __name__ == "__main__":
    main()
