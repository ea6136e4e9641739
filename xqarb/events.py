"""The events of DESIGN's catalogue as values: one immutable `Event` type, built and checked against the schemas.

An `Event` is the common envelope (`event_id`, `board_id`, `source`, `source_seq`, `occurred_at`, `received_at`,
times in microseconds since the epoch, UTC) plus `data`: the fields of its type (the Avro record named by `type`),
read-only, always complete (fields the producer left out hold the schema's default), so that an event built from
JSON and the same event decoded from Kafka compare equal.

The JSON form (CLI, HTTP, `referee run` input) is flat: `{"type": ..., <envelope>..., <fields>...}`, with
`bytes` fields (the frame `image`) in base64 and `time_control` as a JSON object.

Nothing here reads a clock or does I/O beyond loading the packaged schemas: whatever is filled in for omitted
envelope fields is passed in by the caller, so that replaying the same input gives byte-identical output.
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from types import MappingProxyType
from typing import Any

ENVELOPE_FIELDS: tuple[str, ...] = ("event_id", "board_id", "source", "source_seq", "occurred_at", "received_at")
# DESIGN, event catalogue: these "may be omitted and are then filled in".
FILLABLE_FIELDS: frozenset[str] = frozenset({"event_id", "source", "source_seq", "received_at"})
# A field whose Avro type is `string` but whose JSON and `data` form is a JSON object carries this attribute.
JSON_FIELD_ATTRIBUTE = "xqarb.json"
# Namespace for event ids derived from (source, source_seq, type, board): a retry gets the same id.
EVENT_ID_NAMESPACE = uuid.UUID("6f3d2b8e-1c55-5d0e-9a57-7871a0c9e3d1")

_INT_RANGE = (-(2**31), 2**31 - 1)
_LONG_RANGE = (-(2**63), 2**63 - 1)
_TIME_CONTROL_SCHEMES: dict[str, tuple[str, ...]] = {
    # scheme -> required keys (6.1 increment, 6.2 moves in time, 6.3/6.4 sudden death)
    "increment": ("base_ms", "increment_ms"),
    "moves_in_time": ("periods",),
    "sudden_death": ("base_ms",),
}


class EventError(ValueError):
    """An event that does not match its schema. `problem` says what kind of wrong (one of PROBLEMS), `field`
    which field, `event_type` which type; the message says all of it for a person."""

    UNKNOWN_TYPE = "unknown_type"
    MISSING = "missing"  # a required field (or `type`) is absent
    WRONG_TYPE = "wrong_type"  # a value of the wrong JSON/Avro type, out of range, or not an allowed symbol
    UNKNOWN_FIELD = "unknown_field"
    INVALID = "invalid"  # well-typed but unusable: empty id, bad base64, a time control missing its keys, not JSON
    PROBLEMS = frozenset({UNKNOWN_TYPE, MISSING, WRONG_TYPE, UNKNOWN_FIELD, INVALID})

    def __init__(
        self,
        message: str,
        *,
        problem: str = INVALID,
        event_type: str | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message)
        if problem not in self.PROBLEMS:
            raise ValueError(f"unknown EventError problem {problem!r}")
        self.problem = problem
        self.event_type = event_type
        self.field = field


# --------------------------------------------------------------------------------------------- schemas


@cache
def load_schemas() -> Mapping[str, Mapping[str, Any]]:
    """The current schema of every event type (record name -> the `.avsc` JSON), from the `xqarb.schemas` package."""
    found: dict[str, Mapping[str, Any]] = {}
    for entry in sorted(resources.files("xqarb.schemas").iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".avsc"):
            continue
        schema = json.loads(entry.read_text(encoding="utf-8"))
        name = schema["name"]
        if entry.name != f"{name}.avsc":
            raise RuntimeError(f"schema file {entry.name} holds record {name}; the file must be named {name}.avsc")
        names = [f["name"] for f in schema["fields"]]
        if tuple(names[: len(ENVELOPE_FIELDS)]) != ENVELOPE_FIELDS:
            raise RuntimeError(f"schema {name} does not start with the common envelope {ENVELOPE_FIELDS}")
        found[name] = schema
    return MappingProxyType(found)


def schema_of(event_type: str) -> Mapping[str, Any]:
    """The current schema of one event type; `EventError` if there is no such type."""
    try:
        return load_schemas()[event_type]
    except KeyError:
        raise EventError(
            f"unknown event type {event_type!r}; known types: {', '.join(sorted(load_schemas()))}",
            problem=EventError.UNKNOWN_TYPE,
            event_type=event_type,
        ) from None


EVENT_TYPES: frozenset[str] = frozenset(load_schemas())


@cache
def data_fields(event_type: str) -> tuple[Mapping[str, Any], ...]:
    """The type's own fields (after the envelope), in schema order."""
    return tuple(schema_of(event_type)["fields"][len(ENVELOPE_FIELDS) :])


@cache
def json_fields(event_type: str) -> frozenset[str]:
    """Fields carried as JSON text in Avro and as a JSON object in `data` and the JSON form (e.g. `time_control`)."""
    return frozenset(f["name"] for f in data_fields(event_type) if f.get(JSON_FIELD_ATTRIBUTE))


# --------------------------------------------------------------------------------------------- values


def freeze(value: Any) -> Any:
    """A read-only copy of a JSON-able value: dicts become MappingProxyType, lists tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({k: freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """The plain (mutable, json.dumps-able) form of a frozen value: dicts and lists again."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [thaw(v) for v in value]
    return value


@dataclass(frozen=True, slots=True)
class Event:
    type: str
    event_id: str
    board_id: str
    source: str
    source_seq: int
    occurred_at: int
    received_at: int
    data: Mapping[str, Any]

    def __post_init__(self) -> None:
        if not isinstance(self.data, MappingProxyType):
            object.__setattr__(self, "data", freeze(self.data))

    def __hash__(self) -> int:
        # `data` (a mappingproxy) is not hashable; equal events share these, which is all a hash needs.
        return hash((self.type, self.event_id, self.board_id, self.source, self.source_seq))

    @property
    def game_id(self) -> str | None:
        """The game, where the event names one (every type has a `game_id` field, nullable on board-level ones)."""
        return self.data.get("game_id")

    def envelope(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in ENVELOPE_FIELDS}

    def record(self) -> dict[str, Any]:
        """The plain Avro record (envelope + fields, mutable copies); JSON-object fields are still objects here."""
        return {**self.envelope(), **thaw(self.data)}

    def to_json_dict(self) -> dict[str, Any]:
        """DESIGN's flat JSON form: `{"type": ..., <envelope>, <fields>}`, bytes as base64."""
        out: dict[str, Any] = {"type": self.type, **self.envelope()}
        for name, value in self.data.items():
            out[name] = base64.b64encode(value).decode("ascii") if isinstance(value, bytes) else thaw(value)
        return out

    def to_json(self) -> str:
        """One line of JSON (no spaces, keys in schema order, non-ASCII kept): the form `--json` prints."""
        return json.dumps(self.to_json_dict(), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json_dict(cls, obj: Mapping[str, Any], *, defaults: Mapping[str, Any] | None = None) -> Event:
        """Check a JSON-form event against its schema and build it.

        `event_id`, `source`, `source_seq` and `received_at` may be omitted (DESIGN); they are filled from
        `defaults` (keys `source`, `source_seq`, `received_at`; e.g. the file name and line number of a
        `referee run` input): `received_at` falls back to `occurred_at`, and `event_id` is derived from
        (source, source_seq, type, board) so that the same input line always gets the same id.
        """
        if not isinstance(obj, Mapping):
            raise EventError(f"an event must be a JSON object, not {type(obj).__name__}", problem=EventError.WRONG_TYPE)
        event_type = obj.get("type")
        if not isinstance(event_type, str):
            raise EventError(
                "field 'type' (the event type, e.g. 'BoardStable') is missing or not a string",
                problem=EventError.MISSING if "type" not in obj else EventError.WRONG_TYPE,
                field="type",
            )
        schema_of(event_type)
        defaults = defaults or {}
        unknown_defaults = set(defaults) - {"source", "source_seq", "received_at"}
        if unknown_defaults:
            raise TypeError(f"defaults may only fill source, source_seq, received_at, not {sorted(unknown_defaults)}")
        fields = dict(obj)
        del fields["type"]
        envelope = {name: fields.pop(name) for name in ENVELOPE_FIELDS if name in fields}
        for name in ("source", "source_seq", "received_at"):
            if name not in envelope and name in defaults:
                envelope[name] = defaults[name]
        if "received_at" not in envelope and "occurred_at" in envelope:
            envelope["received_at"] = envelope["occurred_at"]
        for name in ENVELOPE_FIELDS:
            if name not in envelope and name != "event_id":
                raise EventError(
                    f"{event_type}: field {name!r} is missing",
                    problem=EventError.MISSING,
                    event_type=event_type,
                    field=name,
                )
        bytes_fields = {f["name"] for f in data_fields(event_type) if _is_bytes_type(f["type"])}
        for name in bytes_fields & fields.keys():
            if isinstance(fields[name], str):
                try:
                    fields[name] = base64.b64decode(fields[name], validate=True)
                except (binascii.Error, ValueError) as exc:
                    raise EventError(
                        f"{event_type}.{name}: not valid base64 ({exc})", event_type=event_type, field=name
                    ) from None
        return make_event(
            event_type,
            envelope["board_id"],
            source=envelope["source"],
            source_seq=envelope["source_seq"],
            occurred_at=envelope["occurred_at"],
            received_at=envelope["received_at"],
            event_id=envelope.get("event_id"),
            **fields,
        )

    @classmethod
    def from_json(cls, text: str | bytes, *, defaults: Mapping[str, Any] | None = None) -> Event:
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise EventError(f"not JSON: {exc}") from None
        return cls.from_json_dict(obj, defaults=defaults)


def stable_event_id(event_type: str, board_id: str, source: str, source_seq: int) -> str:
    """The id of an event that came without one: the same (source, seq, type, board) always gives the same id."""
    return str(uuid.uuid5(EVENT_ID_NAMESPACE, json.dumps([source, source_seq, event_type, board_id])))


def make_event(
    type: str,  # the catalogue's word for it (the Avro record name)
    board_id: str,
    *,
    source: str,
    source_seq: int,
    occurred_at: int,
    received_at: int,
    event_id: str | None = None,
    **fields: Any,
) -> Event:
    """Build an event of a catalogue type, checking every field against the schema and filling defaults."""
    schema = schema_of(type)
    named = _named_types_of(type)
    envelope = {
        "board_id": board_id,
        "source": source,
        "source_seq": source_seq,
        "occurred_at": occurred_at,
        "received_at": received_at,
    }
    envelope["event_id"] = event_id
    for spec in schema["fields"][: len(ENVELOPE_FIELDS)]:
        name = spec["name"]
        if name == "event_id" and envelope[name] is None:
            continue
        _check(envelope[name], spec["type"], named, f"{type}.{name}", type, name)
    if envelope["event_id"] is None:
        envelope["event_id"] = stable_event_id(type, board_id, source, source_seq)
    for name in ("event_id", "board_id", "source"):  # the board id is the Kafka key; ids must identify
        if not envelope[name]:
            raise EventError(f"{type}.{name}: must not be empty", event_type=type, field=name)

    specs = data_fields(type)
    known = {spec["name"] for spec in specs}
    unknown = set(fields) - known
    if unknown:
        raise EventError(
            f"{type}: unknown field(s) {', '.join(sorted(unknown))}; {type} has {', '.join(sorted(known))}",
            problem=EventError.UNKNOWN_FIELD,
            event_type=type,
            field=sorted(unknown)[0],
        )
    data: dict[str, Any] = {}
    for spec in specs:
        name = spec["name"]
        if name in fields:
            value = fields[name]
        elif "default" in spec:
            value = spec["default"]
        else:
            raise EventError(
                f"{type}: field {name!r} is missing ({spec.get('doc', '')})",
                problem=EventError.MISSING,
                event_type=type,
                field=name,
            )
        if spec.get(JSON_FIELD_ATTRIBUTE):
            value = _check_json_field(type, name, value)
        else:
            value = _check(value, spec["type"], named, f"{type}.{name}", type, name)
        data[name] = freeze(value)
    return Event(type=type, data=MappingProxyType(data), **envelope)


# --------------------------------------------------------------------------------------------- checking


def _is_bytes_type(avro_type: Any) -> bool:
    if avro_type == "bytes":
        return True
    return isinstance(avro_type, list) and "bytes" in avro_type


@cache
def _named_types_of(event_type: str) -> Mapping[str, Mapping[str, Any]]:
    return MappingProxyType(_named_types(schema_of(event_type)))


def _named_types(schema: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """Named types (enums, records) defined inside a schema, by short and full name."""
    found: dict[str, Mapping[str, Any]] = {}

    def walk(t: Any, namespace: str) -> None:
        if isinstance(t, list):
            for member in t:
                walk(member, namespace)
        elif isinstance(t, Mapping):
            kind = t.get("type")
            if kind in ("enum", "record", "fixed"):
                ns = t.get("namespace", namespace)
                found[t["name"]] = t
                found[f"{ns}.{t['name']}"] = t
                if kind == "record":
                    for f in t["fields"]:
                        walk(f["type"], ns)
            elif kind == "array":
                walk(t["items"], namespace)
            elif kind == "map":
                walk(t["values"], namespace)

    walk(schema, schema.get("namespace", ""))
    return found


def _describe(avro_type: Any) -> str:
    if isinstance(avro_type, str):
        return avro_type
    if isinstance(avro_type, list):
        return " or ".join(_describe(t) for t in avro_type)
    kind = avro_type.get("type")
    if kind == "enum":
        return "one of " + "/".join(avro_type["symbols"])
    if kind == "array":
        return f"array of {_describe(avro_type['items'])}"
    return str(kind)


def _check(value: Any, avro_type: Any, named: Mapping[str, Any], where: str, event_type: str, field: str) -> Any:
    """`value` checked against an Avro type and normalized (ints accepted for doubles); EventError otherwise."""

    def fail(expected: str) -> EventError:
        shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
        return EventError(
            f"{where}: expected {expected}, got {type(value).__name__} {shown}",
            problem=EventError.WRONG_TYPE,
            event_type=event_type,
            field=field,
        )

    if isinstance(avro_type, list):  # union: the first member that accepts the value
        for member in avro_type:
            try:
                return _check(value, member, named, where, event_type, field)
            except EventError:
                continue
        raise fail(_describe(avro_type))
    if isinstance(avro_type, str) and avro_type in named:
        avro_type = named[avro_type]
    if isinstance(avro_type, Mapping):
        kind = avro_type["type"]
        if kind == "enum":
            if isinstance(value, str) and value in avro_type["symbols"]:
                return value
            raise fail(_describe(avro_type))
        if kind == "array":
            if not isinstance(value, list | tuple):
                raise fail(_describe(avro_type))
            return [
                _check(v, avro_type["items"], named, f"{where}[{i}]", event_type, field) for i, v in enumerate(value)
            ]
        if kind == "map":
            if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
                raise fail("object")
            return {
                k: _check(v, avro_type["values"], named, f"{where}.{k}", event_type, field) for k, v in value.items()
            }
        if kind == "record":
            if not isinstance(value, Mapping):
                raise fail(f"record {avro_type['name']}")
            out = {}
            for f in avro_type["fields"]:
                if f["name"] in value:
                    out[f["name"]] = _check(
                        value[f["name"]], f["type"], named, f"{where}.{f['name']}", event_type, field
                    )
                elif "default" in f:
                    out[f["name"]] = f["default"]
                else:
                    raise EventError(
                        f"{where}: field {f['name']!r} is missing",
                        problem=EventError.MISSING,
                        event_type=event_type,
                        field=field,
                    )
            return out
        if isinstance(kind, str) and kind not in ("enum", "array", "map", "record", "fixed"):
            return _check(value, kind, named, where, event_type, field)  # {"type": "long", "logicalType": ...}
        raise fail(str(kind))
    if avro_type == "null":
        if value is None:
            return None
        raise fail("null")
    if avro_type == "boolean":
        if isinstance(value, bool):
            return value
        raise fail("boolean")
    if avro_type in ("int", "long"):
        low, high = _INT_RANGE if avro_type == "int" else _LONG_RANGE
        if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
            return value
        raise fail(f"{avro_type} (an integer)")
    if avro_type in ("float", "double"):
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        raise fail(f"{avro_type} (a number)")
    if avro_type == "string":
        if isinstance(value, str):
            return value
        raise fail("string")
    if avro_type == "bytes":
        if isinstance(value, bytes | bytearray | memoryview):
            return bytes(value)
        raise fail("bytes (base64 in JSON)")
    raise EventError(f"{where}: unsupported schema type {avro_type!r}", event_type=event_type, field=field)


def _check_json_field(event_type: str, name: str, value: Any) -> Any:
    """A JSON-object field (`time_control`): a JSON object; for time controls one of DESIGN's three schemes."""
    if isinstance(value, str):  # accepted as JSON text too (that is how Avro carries it)
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise EventError(
                f"{event_type}.{name}: not a JSON object ({exc})", event_type=event_type, field=name
            ) from None
    if not isinstance(value, Mapping):
        raise EventError(
            f"{event_type}.{name}: expected a JSON object, got {type(value).__name__}",
            problem=EventError.WRONG_TYPE,
            event_type=event_type,
            field=name,
        )
    value = thaw(value)
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise EventError(f"{event_type}.{name}: not JSON-able ({exc})", event_type=event_type, field=name) from None
    if name == "time_control":
        scheme = value.get("scheme")
        if scheme not in _TIME_CONTROL_SCHEMES:
            raise EventError(
                f"{event_type}.time_control.scheme: expected one of {', '.join(_TIME_CONTROL_SCHEMES)}, got {scheme!r}",
                problem=EventError.WRONG_TYPE,
                event_type=event_type,
                field=name,
            )
        missing = [k for k in _TIME_CONTROL_SCHEMES[scheme] if k not in value]
        if missing:
            raise EventError(
                f"{event_type}.time_control: scheme {scheme} needs {', '.join(missing)}",
                problem=EventError.MISSING,
                event_type=event_type,
                field=name,
            )
    return value


def iter_json_lines(lines: Iterator[str] | list[str], *, source: str) -> Iterator[Event]:
    """Events from JSON lines (blank lines and `#` comments skipped); omitted envelope fields are filled from
    `source` and the line number, so the same file always gives the same events (and event ids)."""
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        try:
            yield Event.from_json(text, defaults={"source": source, "source_seq": number})
        except EventError as exc:
            raise EventError(
                f"line {number}: {exc}", problem=exc.problem, event_type=exc.event_type, field=exc.field
            ) from None
