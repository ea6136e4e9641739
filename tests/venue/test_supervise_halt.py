"""`up` halting its referee thread when the broker went down (xqarb/supervise.py, RefereeThread.halt): the supervisor
is not held up while the old service closes against the dead broker, and the next start is a new service at once."""

from __future__ import annotations

import threading
import time

from xqarb.supervise import RefereeThread


class DeadBrokerService:
    """A referee service whose close waits (as kafka-python's producer does for a broker that is gone), and whose
    loop ends with an error once told to stop (its last publish failed)."""

    CLOSE_S = 1.0

    def __init__(self) -> None:
        self.stopped, self.closed = threading.Event(), threading.Event()

    def run(self) -> None:
        self.stopped.wait(30)
        raise RuntimeError("the broker did not acknowledge the outputs")

    def stop(self) -> None:
        self.stopped.set()

    def close(self) -> None:
        time.sleep(self.CLOSE_S)
        self.closed.set()


def test_a_halted_referee_closes_in_the_background_and_a_new_one_starts_at_once() -> None:
    made: list[DeadBrokerService] = []

    def make() -> DeadBrokerService:
        made.append(DeadBrokerService())
        return made[-1]

    part = RefereeThread(make)
    part.start()
    assert part.alive()
    t0 = time.monotonic()
    part.halt()
    assert time.monotonic() - t0 < 0.5 * DeadBrokerService.CLOSE_S  # (it used to wait for the close)
    assert made[0].stopped.is_set() and not made[0].closed.is_set()
    t0 = time.monotonic()
    part.start()  # the broker is back
    assert time.monotonic() - t0 < 0.5 * DeadBrokerService.CLOSE_S
    assert len(made) == 2 and part.service is made[1] and part.alive()
    assert made[0].closed.wait(5)  # the old service was closed, in the background
    assert part.error is None  # the old loop's last error is not the new service's
    part.begin_stop()
    part.finish_stop()
    assert made[1].closed.is_set() and not part.alive()
