"""The garbage collector's settings for a long-running service process (the referee's fold is its hot path).

CPython runs its cyclic collector every 700 new container objects (gen 0) and now and then over every object the
process holds (gen 2). The referee's fold allocates a few hundred small containers per move (positions, records,
tuples of state), nearly all of them freed by reference counting or kept as game state: the young collections
find almost nothing to collect, and they cost about a tenth of the referee's time per input (measured with the
collector on and off, `bench/referee_throughput.py`). A gen-0 threshold of 50,000 gave most of that back on the same
run (about 6 %, within 2 % of the collector switched off); the memory held between two collections stays a few
megabytes. The collector stays on: a cycle of garbage is still collected, only in larger, rarer batches.

`gc.freeze()` moves what the process built while starting (modules, the Kafka clients, the ledger's connection) to
a generation that is never scanned again: it lives as long as the process does.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 50_000


def tune_for_service() -> None:
    """Settings for a service process, called once its start-up is done (the bench calls it too, so that its
    figures are the service's)."""
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, older, oldest)
