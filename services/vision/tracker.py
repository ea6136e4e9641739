"""The tracker: one board's frames over time in, observations out. A pure state machine, in modules by job:

- `still_board`: the state machine (`Tracker.step`, `TrackerState`): calibration, faults, the hand, lifts, the
  still board (5.7) and what the referee's positions tell it;
- `still_clear`: whether a still board read before the full still time is clear enough to be taken;
- `hand`: a hand or an arm over the board, what moved since the last frame, where the fingertips went;
- `frames`: whole-frame measures of the top view (the 1/8-scale picture, sharpness, line support, shifts);
- `point_evidence`: per-point evidence against the last still board (change, ink, round outlines, printed lines);
- `move_checks`: where a piece could go, and whether a point says it took there;
- `interpret`: what changed between two still boards (placed, nudged, between two points) and its corrections;
- `touch`: whether what changed on a piece's point is its own top face moved (a touch) or something beside it;
- `settings`: every threshold, named (`TrackerConfig`); `squares`: the 90-point board and the start position.

This module is the public entry: what the service, the tests and the benchmarks import.
"""

from __future__ import annotations

from .frames import eighth
from .hand import (
    _changed_mask,
    _components,
    _hand_mask,
    _hand_tip,
    _reaches_in,
    _set_down_shift,
    _touches_edge,
    _whole_hull,
)
from .interpret import _settled_from_between, as_seen_twice, interpret, plainly_seen
from .point_evidence import Outlines, _implausible, _line_contrast, _lines_hidden
from .settings import TrackerConfig
from .squares import START_SQUARES, squares_of_fen
from .still_board import Observation, Tracker, TrackerState

__all__ = [
    "START_SQUARES",
    "Observation",
    "Outlines",
    "Tracker",
    "TrackerConfig",
    "TrackerState",
    "_changed_mask",
    "_components",
    "_hand_mask",
    "_hand_tip",
    "_implausible",
    "_line_contrast",
    "_lines_hidden",
    "_reaches_in",
    "_set_down_shift",
    "_settled_from_between",
    "_touches_edge",
    "_whole_hull",
    "as_seen_twice",
    "eighth",
    "interpret",
    "plainly_seen",
    "squares_of_fen",
]
