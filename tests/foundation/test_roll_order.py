"""The order in which a reader reads one partition of a rolled pair (xqarb.roll_order): generations, whatever rests."""

from __future__ import annotations

from typing import NamedTuple

from xqarb.roll_order import NOTHING_OLDER, RollSide, roll_goes, roll_merge, roll_plan

UNKNOWN = RollSide(unread=True, head=None)  # records not read yet, of a generation not known
READ = RollSide(unread=False, head=None)


class Part(NamedTuple):
    topic: str
    partition: int


def test_a_reader_caught_up_reads_the_topic_taking_new_records_once_the_hold_after_a_switch_is_over() -> None:
    assert roll_goes(UNKNOWN, READ, current=True, holding=False)
    assert not roll_goes(UNKNOWN, READ, current=True, holding=True)  # late acknowledgements into the other
    assert roll_goes(UNKNOWN, READ, current=False, holding=True)  # the resting one is read whenever


def test_the_topic_whose_next_record_is_older_goes_first_whichever_rests() -> None:
    # More than a period behind: the topic taking new records (current) holds generation 7 before 9, the resting
    # one generation 8.
    current, resting = RollSide(True, 7.0), RollSide(True, 8.0)
    assert roll_goes(current, resting, current=True, holding=False)
    assert not roll_goes(resting, current, current=False, holding=False)
    # once its generation 7 is read (9 held back), the resting topic's 8 goes first
    current = RollSide(True, 9.0)
    assert not roll_goes(current, resting, current=True, holding=False)
    assert roll_goes(resting, current, current=False, holding=False)


def test_a_topic_whose_next_generation_is_not_known_is_fetched_to_learn_it_and_the_other_waits() -> None:
    known = RollSide(True, 8.0)
    assert roll_goes(UNKNOWN, known, current=True, holding=False)
    assert roll_goes(UNKNOWN, known, current=True, holding=True)  # even while holding: it returns nothing yet
    assert not roll_goes(known, UNKNOWN, current=False, holding=False)
    # nothing unread at the look: what the current topic takes from then on is newer than the other's records
    assert not roll_goes(READ, UNKNOWN, current=True, holding=False)
    assert roll_goes(READ, UNKNOWN, current=False, holding=False)  # (late acknowledgements into the resting one)
    assert roll_goes(UNKNOWN, UNKNOWN, current=True, holding=False) and roll_goes(UNKNOWN, UNKNOWN, current=False,
                                                                                 holding=False)


def test_records_without_a_time_in_both_topics_read_the_resting_one_first_never_both_waiting() -> None:
    oldest = RollSide(True, float("-inf"))
    assert roll_goes(oldest, oldest, current=False, holding=False)
    assert not roll_goes(oldest, oldest, current=True, holding=False)


def test_the_plan_pauses_a_partition_until_the_other_topic_is_read() -> None:
    a, b = "xq.observations", "xq.observations.roll"
    parts = [Part(a, 0), Part(b, 0), Part(a, 1), Part(b, 1), Part(a, 2)]
    sides = {
        Part(a, 0): RollSide(True, 9.0), Part(b, 0): RollSide(True, 8.0),  # behind: b's 8 first
        Part(a, 1): RollSide(True, 7.0), Part(b, 1): RollSide(True, 8.0),  # behind: a's 7 first
        Part(a, 2): UNKNOWN,  # its partner not held: read as if read
    }
    wait, go, behind = roll_plan(parts, a, b, sides, holding=False)
    assert sorted(wait) == [Part(a, 0), Part(b, 1)]
    assert sorted(go) == [Part(a, 1), Part(a, 2), Part(b, 0)]
    assert behind == {Part(a, 0): Part(b, 0), Part(b, 1): Part(a, 1)}
    # while holding, the current topic's partition waits without a partner to release it
    wait, go, behind = roll_plan([Part(a, 2)], a, b, {Part(a, 2): UNKNOWN}, holding=True)
    assert (wait, go, behind) == ([Part(a, 2)], [], {})


def test_a_poll_that_fetched_three_generations_reads_them_in_order() -> None:
    # resting topic: generation 8; current: 7, 7, 9, 9; nothing older comes from either after these
    runs = roll_merge([8.0, 8.0], [7.0, 7.0, 9.0, 9.0], NOTHING_OLDER, NOTHING_OLDER)
    assert runs == [(1, 0, 2), (0, 0, 2), (1, 2, 4)]


def test_records_that_may_come_after_records_not_fetched_are_held_back() -> None:
    # The resting topic has more not fetched yet (generation unknown): the current one's 9 waits, its 7 does not
    # (the resting topic's fetched 8 is newer, and what follows it is newer still).
    assert roll_merge([8.0], [7.0, 9.0], None, NOTHING_OLDER) == [(1, 0, 1), (0, 0, 1)]
    # Nothing fetched of the resting topic and its next generation not known: nothing of the current goes.
    assert roll_merge([], [9.0, 9.0], None, NOTHING_OLDER) == []
    # Its next generation known (held back before): older current records go, newer wait.
    assert roll_merge([], [7.0, 9.0], 8.0, NOTHING_OLDER) == [(1, 0, 1)]
    # The caught-up case after a switch: the resting topic's last records, then the new ones.
    assert roll_merge([8.0, 8.0], [9.0], NOTHING_OLDER, NOTHING_OLDER) == [(0, 0, 2), (1, 0, 1)]
