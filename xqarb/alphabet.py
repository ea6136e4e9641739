"""The board alphabet shared by vision and the referee: a snapshot of the 90 points (rank 9 first, files a..i) says
of each point a FEN letter (a piece of that type and side), '.' (empty), 'X' / 'x' (a red / black piece whose type
is not told) or '?' (unsure). Pure: no imports beyond the standard library."""

from __future__ import annotations

CASED = "KABNRCPXkabnrcpx"  # the letters that name a side (not '.' or '?')


def consistent(letter: str, seen: str) -> bool:
    """Is a board point holding `letter` ('.' for empty) consistent with what the camera saw (`seen`)?"""
    if seen == "?" or seen == letter:
        return True
    if letter == ".":
        return False
    if seen == "X" or seen.isupper():
        return letter.isupper()
    if seen == "x" or seen.islower():
        return letter.islower()
    return False
