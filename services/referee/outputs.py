"""The referee's output events (MoveMade, Ruling, GameEnded, AttentionNeeded), derived deterministically.

An output's envelope comes from the input event that caused it and the game's state, never from a clock or a
random source: event_id = a hash of (input event_id, index of the output for that input); occurred_at and
received_at are the input's; source is "referee:<game id>" (the referee speaking for that game, "referee:board:<id>"
for an output that belongs to no game) and source_seq the game's running count of outputs (0 outside a game), so
source_seq is monotonic per source as the envelope requires, whichever process referees the game.
Folding the same inputs twice therefore gives byte-identical outputs.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import Any

from xqarb.events import Event, data_fields, freeze

SOURCE = "referee"


@dataclass(frozen=True, slots=True)
class Out:
    """An output before it gets its envelope: the type and its fields."""

    type: str
    fields: tuple[tuple[str, Any], ...]

    @classmethod
    def of(cls, type_: str, **fields: Any) -> Out:
        return cls(type_, tuple(fields.items()))

    def get(self, name: str, default: Any = None) -> Any:
        for k, v in self.fields:
            if k == name:
                return v
        return default


def output_id(input_event_id: str, index: int) -> str:
    digest = hashlib.sha256(f"{input_event_id}\x1f{index}".encode()).hexdigest()
    return f"ref-{digest[:32]}"


_REQUIRED = object()
_PLAIN = frozenset({str, int, bool, float, type(None)})  # already read-only: no need to freeze


@cache
def _template(type_: str) -> tuple[tuple[str, Any], ...]:
    """The type's fields in schema order with their defaults (`_REQUIRED` where the schema has none)."""
    return tuple((f["name"], f.get("default", _REQUIRED)) for f in data_fields(type_))


def build(type_: str, fields: dict[str, Any]) -> MappingProxyType:
    """The `data` of an output: every schema field, in schema order. The referee's outputs are built by this code
    alone, so they are not re-checked field by field here (`make_event` would, at a cost per event the fold
    cannot afford); tests check every output type against the schemas with `make_event`."""
    data: dict[str, Any] = {}
    for name, default in _template(type_):
        if name in fields:
            value = fields[name]
            data[name] = value if type(value) in _PLAIN else freeze(value)
        elif default is _REQUIRED:
            raise KeyError(f"{type_} output without its required field {name!r}")
        else:
            data[name] = freeze(default)
    if len(data) != len(fields) and set(fields) - set(data):
        raise KeyError(f"{type_} has no field(s) {sorted(set(fields) - set(data))}")
    return MappingProxyType(data)


def materialize(cause: Event, outs: tuple[Out, ...], first_seq: int, game_id: str | None) -> tuple[Event, ...]:
    """Give each output its envelope (see the module docstring); `first_seq` is the seq of the first one."""
    if not outs:
        return ()
    source = f"{SOURCE}:{game_id}" if game_id and first_seq > 0 else f"{SOURCE}:board:{cause.board_id}"
    return tuple(
        Event(
            type=out.type,
            event_id=output_id(cause.event_id, i),
            board_id=cause.board_id,
            source=source,
            source_seq=first_seq + i if first_seq > 0 else 0,
            occurred_at=cause.occurred_at,
            received_at=cause.received_at,
            data=build(out.type, dict(out.fields)),
        )
        for i, out in enumerate(outs)
    )
