"""What a running broker holds, topic by topic: records and bytes (key + value + headers), and its resident memory.

    nice -n 10 .venv/bin/python bench/topic_sizes.py --bootstrap 127.0.0.1:PORT [--pid BROKER_PID] \
        [--minutes 10] [--every-s 60] [--skip xq.frames,xq.frames.roll]

Every `--every-s` one JSON line: minutes since the start, the broker's VmRSS (MB) where its pid is given, and for
each topic the records it holds now and their bytes, read from every partition's start up to its end as reported
at the start of the read, with a group-less consumer (the embedded broker's ListOffsets is not exact: the records
are read, not the offsets subtracted).
Topics in `--skip` (the rolled camera frames: large, and bounded on their own) are counted by offsets only.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from probe import rss_mb

READ_MAX_S = 30.0  # reading every topic once takes at most this long (a loaded machine: a few seconds)


def topic_sizes(bootstrap: str, skip: frozenset[str] = frozenset()) -> dict[str, dict[str, int]]:
    """topic -> {"records": n, "bytes": b} for every topic of the broker (internal ones aside)."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                             client_id="xq-topic-sizes", receive_message_max_bytes=256 * 1024 * 1024)
    try:
        topics = sorted(t for t in consumer.topics() if not t.startswith("__"))
        out: dict[str, dict[str, int]] = {t: {"records": 0, "bytes": 0} for t in topics}
        read = [TopicPartition(t, p) for t in topics if t not in skip
                for p in sorted(consumer.partitions_for_topic(t) or ())]
        counted = [TopicPartition(t, p) for t in topics if t in skip
                   for p in sorted(consumer.partitions_for_topic(t) or ())]
        for tp, end in consumer.end_offsets(counted).items():
            out[tp.topic]["records"] += int(end or 0)
        if read:
            # Read up to the ends as they are now (records produced meanwhile are the next line's): this broker
            # reports the last batch's first offset + 1 as the end, and batches come whole, so the last is read too.
            ends = {tp: int(end or 0) for tp, end in consumer.end_offsets(read).items()}
            consumer.assign(read)
            consumer.seek_to_beginning(*read)
            deadline = time.monotonic() + READ_MAX_S
            while time.monotonic() < deadline and any(consumer.position(tp) < end for tp, end in ends.items()):
                batches = consumer.poll(timeout_ms=200, max_records=10_000)
                for tp, records in batches.items():
                    size = out[tp.topic]
                    for r in records:
                        size["records"] += 1
                        size["bytes"] += (len(r.key or b"") + len(r.value or b"")
                                          + sum(len(k) + len(v or b"") for k, v in (r.headers or [])))
        return out
    finally:
        consumer.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--pid", type=int, default=None, help="the broker's process id (for its VmRSS)")
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--every-s", type=float, default=60.0)
    parser.add_argument("--skip", default="xq.frames,xq.frames.roll", help="topics counted by offsets only")
    args = parser.parse_args()
    skip = frozenset(t for t in args.skip.split(",") if t)
    t0 = time.monotonic()
    while True:
        line: dict[str, Any] = {"min": round((time.monotonic() - t0) / 60, 1),
                                "utc": time.strftime("%H:%M:%S", time.gmtime())}
        if args.pid:
            line["rss_mb"] = round(rss_mb(args.pid), 1)
        line["topics"] = topic_sizes(args.bootstrap, skip)
        print(json.dumps(line), flush=True)
        if time.monotonic() - t0 + args.every_s > args.minutes * 60:
            return 0
        time.sleep(max(0.0, args.every_s - (time.monotonic() - t0) % args.every_s))


if __name__ == "__main__":
    sys.exit(main())
