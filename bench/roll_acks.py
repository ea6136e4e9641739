"""How late frames are acknowledged into the frames topic the embedded broker's roll switched away from, and how
many a consumer then reads out of their board's capture order for a given hold after each switch.

    .venv/bin/python bench/roll_acks.py [--boards 25] [--fps 2] [--kb 165] [--seconds 60] [--roll-s 5]
        [--hold-s 0.25]

An embedded broker with its FramesRoller; one bus.Producer shared by one thread per board, each sending a frame and
waiting for its acknowledgement as an ingest request does (`Producer.send_raw`: routed to the topic of the moment,
`bus.frames_topics_at`). The roll's period is cut to --roll-s in this process (bus.FRAMES_ROLL_S, the roller's
ROLL_LEAD_S with it) so that a minute holds a dozen switches. A consumer of the vision group (bus.Consumer,
bus.ROLL_HOLD_S set to --hold-s) reads the frames and counts those that come after a later frame of their board:
what vision's order guard (services/vision/order.py) skips.

Reported (JSON): switches seen; frames acknowledged into the topic switched away from, after the switch (the
lateness is the acknowledgement's time after the switch: when it was stored at the latest); frames read out of
order; from each frame's send to the consumer's poll, for the frames sent in the second after a switch and the
others (run with another checkout's Python to compare its roll: bus.ROLL_HOLD_S only set where it exists).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time

from xqarb import broker as broker_module
from xqarb import bus


def sender(producer: bus.Producer, board: str, stop: threading.Event, late: list[float], sent: list[int],
           start_at: float) -> None:
    payload = os.urandom(ARGS.kb * 1000)
    seq = 0
    while not stop.is_set():
        due = start_at + seq / ARGS.fps
        wait = due - time.time()
        if wait > 0 and stop.wait(wait):
            return
        delivery = producer.send_raw(bus.FRAMES, board, b"%d:%.6f:" % (seq, time.time()) + payload)
        acked = time.time()
        if delivery.topic != bus.frames_topics_at(acked)[0]:  # stored into the topic switched away from
            late.append(bus.since_switch_s(acked))
        sent[0] += 1
        seq += 1


def spread(values: list[float]) -> dict[str, float | int]:
    """n, p50, p99 and max of durations (s), in ms."""
    values = sorted(values)
    if not values:
        return {"n": 0}
    return {"n": len(values), "p50": round(statistics.median(values) * 1000),
            "p99": round(values[min(len(values) - 1, int(0.99 * len(values)))] * 1000),
            "max": round(values[-1] * 1000)}


def main() -> int:
    bus.FRAMES_ROLL_S = ARGS.roll_s
    if hasattr(bus, "ROLL_HOLD_S"):
        bus.ROLL_HOLD_S = ARGS.hold_s
    broker_module.ROLL_LEAD_S = min(broker_module.ROLL_LEAD_S, ARGS.roll_s * 0.3)
    with broker_module.EmbeddedBroker() as broker:
        bus.ensure_topics(broker.bootstrap, partitions=12)
        roller = broker_module.FramesRoller(broker.bootstrap, partitions=12).start()
        producer = bus.Producer(broker.bootstrap, client_id="bench-ingest")
        consumer = bus.Consumer(broker.bootstrap, bus.VISION_GROUP, [bus.FRAMES], decode=False)
        stop = threading.Event()
        late: list[float] = []
        sent = [0]
        while not consumer.assignment():
            consumer.poll(0.2)
        start = time.time() + 1
        threads = [threading.Thread(target=sender, args=(producer, str(b + 1), stop, late, sent,
                                                          start + b / ARGS.boards / ARGS.fps), daemon=True)
                   for b in range(ARGS.boards)]
        for t in threads:
            t.start()
        last: dict[str, int] = {}
        after_switch: list[float] = []
        others: list[float] = []
        read = out_of_order = 0
        switches = 0
        period = int(time.time() // ARGS.roll_s)
        end = start + ARGS.seconds
        while time.time() < end + 3:
            if time.time() >= end:
                stop.set()
            for r in consumer.poll(0.2):
                seq_text, sent_text, _ = r.value.split(b":", 2)
                seq, sent_at = int(seq_text), float(sent_text)
                # from the send to the consumer's poll: the frames sent in the second after a switch apart
                (after_switch if bus.since_switch_s(sent_at) < 1.0 else others).append(time.time() - sent_at)
                read += 1
                if r.key in last and seq <= last[r.key]:
                    out_of_order += 1
                else:
                    last[r.key] = seq
            consumer.commit()
            now_period = int(time.time() // ARGS.roll_s)
            if now_period != period and time.time() < end:
                switches += now_period - period
            period = now_period
        for t in threads:
            t.join(5)
        consumer.close()
        producer.close()
        roller.stop()
    late.sort()
    result = {
        "load_average_1m_at_start": LOAD_AT_START,
        "boards": ARGS.boards, "fps": ARGS.fps, "kb": ARGS.kb, "seconds": ARGS.seconds, "roll_s": ARGS.roll_s,
        "hold_s": getattr(bus, "ROLL_HOLD_S", None), "settle_s": bus.ROLL_SETTLE_S, "switches": switches,
        "frames_sent": sent[0], "frames_read": read,
        "late_acks": len(late), "late_acks_per_switch": round(len(late) / max(1, switches), 2),
        "late_ms_median": round(statistics.median(late) * 1000, 1) if late else None,
        "late_ms_max": round(late[-1] * 1000, 1) if late else None,
        "late_ms_all": [round(x * 1000, 1) for x in late],
        "read_out_of_order": out_of_order,
        "send_to_read_ms": {"sent_in_the_second_after_a_switch": spread(after_switch), "other_frames": spread(others)},
        "frames_expired_by_roller": roller.expired,
    }
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--boards", type=int, default=25)
    parser.add_argument("--fps", type=float, default=2.0)
    parser.add_argument("--kb", type=int, default=165, help="frame size (the e2e bench's rendered frames: 165 KB)")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--roll-s", type=float, default=5.0, help="the roll's period in this process")
    parser.add_argument("--hold-s", type=float, default=0.25, help="bus.ROLL_HOLD_S in this process")
    ARGS = parser.parse_args()
    LOAD_AT_START = round(os.getloadavg()[0], 1)
    sys.exit(main())
