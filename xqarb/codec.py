"""Avro single-object encoding of events (DESIGN, Kafka: wire format), and their JSON form.

A message is `C3 01`, the 8-byte little-endian CRC-64-AVRO fingerprint of the writer schema's parsing canonical
form, then the Avro binary body (fastavro). The fingerprint names the schema: the registry maps every fingerprint
it knows (the current schemas in `schemas/` and the earlier versions kept in `schemas/history/`) to its writer
schema, and a message is always read into the *current* schema of its type, so a message written before a field
was added (with a default) is still read, the field holding its default (Avro schema resolution).

Errors: `UnknownSchema` (a fingerprint no schema here has), `UndecodableMessage` (not single-object encoded, or a
body that does not decode with its schema); both are `CodecError`, and a consumer sends such messages to `xq.dlq`.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from types import MappingProxyType
from typing import Any

import fastavro
from fastavro.schema import to_parsing_canonical_form

from xqarb.events import (
    ENVELOPE_FIELDS,
    Event,
    EventError,
    freeze,
    json_fields,
    load_schemas,
)

MAGIC = b"\xc3\x01"
HEADER_SIZE = len(MAGIC) + 8

# CRC-64-AVRO (Avro specification, "Schema Fingerprints"): the empty-string fingerprint and its 256-entry table.
_CRC64_EMPTY = 0xC15D213AA4D7A795


def _crc64_table() -> tuple[int, ...]:
    table = []
    for i in range(256):
        fp = i
        for _ in range(8):
            fp = (fp >> 1) ^ (_CRC64_EMPTY & -(fp & 1))
        table.append(fp)
    return tuple(table)


_CRC64_TABLE = _crc64_table()


def crc64_avro(data: bytes) -> int:
    """The 64-bit Rabin fingerprint the Avro specification calls CRC-64-AVRO."""
    fp = _CRC64_EMPTY
    for byte in data:
        fp = (fp >> 8) ^ _CRC64_TABLE[(fp ^ byte) & 0xFF]
    return fp


def fingerprint(schema: Mapping[str, Any] | str) -> int:
    """CRC-64-AVRO of the schema's parsing canonical form (doc, defaults and custom attributes do not count)."""
    canonical = to_parsing_canonical_form(fastavro.parse_schema(_plain(schema), _write_hint=False))
    return crc64_avro(canonical.encode("utf-8"))


def _plain(schema: Any) -> Any:
    """A deep, mutable copy (fastavro wants dicts and lists, and parse_schema must not alter our cached schemas)."""
    return json.loads(json.dumps(schema)) if not isinstance(schema, str) else schema


class CodecError(ValueError):
    """A message that cannot be turned into an event; `reason` is what the dead-letter record says."""

    @property
    def reason(self) -> str:
        return str(self)


class UnknownSchema(CodecError):
    """The message names a schema (by fingerprint) that this registry does not have."""

    def __init__(self, fp: int) -> None:
        super().__init__(
            f"unknown schema fingerprint {fp:016x} (CRC-64-AVRO, as written little-endian in the message: "
            f"{fp.to_bytes(8, 'little').hex()}); no current or historical schema in schemas/ has it"
        )
        self.fingerprint = fp


class UndecodableMessage(CodecError):
    """Not an Avro single-object message, or a body that does not decode with the schema it names."""


@dataclass(frozen=True)
class SchemaVersion:
    name: str  # the record name, i.e. the event type
    fingerprint: int
    schema: Mapping[str, Any]  # the .avsc JSON
    parsed: Any  # fastavro's parsed form
    current: bool


class SchemaRegistry:
    """Fingerprint -> writer schema, for the current schemas and older versions kept to read old messages."""

    def __init__(self, current: Mapping[str, Mapping[str, Any]], history: Iterable[Mapping[str, Any]] = ()) -> None:
        self._by_fp: dict[int, SchemaVersion] = {}
        self._current: dict[str, SchemaVersion] = {}
        for name, schema in current.items():
            version = self._version(schema, current=True)
            if version.name != name:
                raise ValueError(f"schema registered as {name} is the record {version.name}")
            self._current[name] = version
            self._by_fp[version.fingerprint] = version
        for schema in history:
            self.add(schema)

    @staticmethod
    def _version(schema: Mapping[str, Any], *, current: bool) -> SchemaVersion:
        plain = _plain(schema)
        parsed = fastavro.parse_schema(plain)
        return SchemaVersion(
            name=schema["name"], fingerprint=fingerprint(schema), schema=schema, parsed=parsed, current=current
        )

    def add(self, schema: Mapping[str, Any]) -> int:
        """Register an older (writer) version of a current schema; returns its fingerprint."""
        version = self._version(schema, current=False)
        if version.name not in self._current:
            raise ValueError(f"historical schema {version.name} has no current version to be read into")
        self._by_fp.setdefault(version.fingerprint, version)
        return version.fingerprint

    def current(self, name: str) -> SchemaVersion:
        try:
            return self._current[name]
        except KeyError:
            raise EventError(f"unknown event type {name!r}", problem=EventError.UNKNOWN_TYPE, event_type=name) from None

    def writer(self, fp: int) -> SchemaVersion:
        try:
            return self._by_fp[fp]
        except KeyError:
            raise UnknownSchema(fp) from None

    def fingerprints(self) -> Mapping[int, SchemaVersion]:
        return MappingProxyType(self._by_fp)


def load_history() -> list[Mapping[str, Any]]:
    """Earlier versions of the schemas (`schemas/history/<Type>.v<N>.avsc`), kept so old messages stay readable."""
    folder = resources.files("xqarb.schemas").joinpath("history")
    if not folder.is_dir():
        return []
    return [
        json.loads(entry.read_text(encoding="utf-8"))
        for entry in sorted(folder.iterdir(), key=lambda e: e.name)
        if entry.name.endswith(".avsc")
    ]


@cache
def default_registry() -> SchemaRegistry:
    return SchemaRegistry(load_schemas(), load_history())


# --------------------------------------------------------------------------------------------- binary


def encode(event: Event, registry: SchemaRegistry | None = None) -> bytes:
    """The event as one Avro single-object message, written with the current schema of its type."""
    version = (registry or default_registry()).current(event.type)
    record = event.record()
    for name in json_fields(event.type):
        record[name] = json.dumps(record[name], ensure_ascii=False, separators=(",", ":"))
    out = io.BytesIO()
    out.write(MAGIC)
    out.write(version.fingerprint.to_bytes(8, "little"))
    try:
        fastavro.schemaless_writer(out, version.parsed, record)
    except (ValueError, TypeError, KeyError, OverflowError) as exc:
        # make_event checked the fields already; this is an Event built by hand with wrong values.
        raise EventError(f"{event.type}: cannot encode ({exc})", event_type=event.type) from exc
    return out.getvalue()


def peek_fingerprint(data: bytes) -> int:
    """The writer-schema fingerprint of a message (`UndecodableMessage` if it is not single-object encoded)."""
    if len(data) < HEADER_SIZE or data[:2] != MAGIC:
        head = bytes(data[:HEADER_SIZE]).hex()
        raise UndecodableMessage(
            f"not an Avro single-object message: expected magic c301 and an 8-byte fingerprint, "
            f"got {len(data)} bytes starting {head or '(empty)'}"
        )
    return int.from_bytes(data[2:HEADER_SIZE], "little")


def decode(data: bytes, registry: SchemaRegistry | None = None) -> Event:
    """The event in a message, read into the current schema of its type (older writer versions resolved)."""
    registry = registry or default_registry()
    writer = registry.writer(peek_fingerprint(data))
    reader = registry.current(writer.name)
    body = io.BytesIO(memoryview(data)[HEADER_SIZE:])
    try:
        record = fastavro.schemaless_reader(body, writer.parsed, None if writer is reader else reader.parsed)
        if body.tell() != len(data) - HEADER_SIZE:
            raise UndecodableMessage(
                f"{writer.name} (schema {writer.fingerprint:016x}): {len(data) - HEADER_SIZE - body.tell()} "
                f"bytes left over after the record"
            )
        for name in json_fields(writer.name):
            record[name] = json.loads(record[name])
    except UndecodableMessage:
        raise
    except Exception as exc:  # untrusted bytes: every way fastavro can fail means "does not decode"
        raise UndecodableMessage(
            f"{writer.name} (schema {writer.fingerprint:016x}): body does not decode: {type(exc).__name__}: {exc}"
        ) from exc
    field_names = [f["name"] for f in reader.schema["fields"][len(ENVELOPE_FIELDS) :]]
    data_fields = MappingProxyType({name: freeze(record[name]) for name in field_names})
    return Event(type=writer.name, data=data_fields, **{name: record[name] for name in ENVELOPE_FIELDS})


# --------------------------------------------------------------------------------------------- JSON form


def to_json(event: Event) -> str:
    """One JSON line in DESIGN's flat form (what `--json` prints and the HTTP API returns)."""
    return event.to_json()


def to_json_dict(event: Event) -> dict[str, Any]:
    return event.to_json_dict()


def from_json(text: str | bytes, *, defaults: Mapping[str, Any] | None = None) -> Event:
    """An event from its JSON form, checked against the schema (`EventError` says what is wrong)."""
    return Event.from_json(text, defaults=defaults)


def from_json_dict(obj: Mapping[str, Any], *, defaults: Mapping[str, Any] | None = None) -> Event:
    return Event.from_json_dict(obj, defaults=defaults)
