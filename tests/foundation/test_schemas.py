"""The schema files: the catalogue's fields under DESIGN's names, and every published version still readable."""

from __future__ import annotations

import io
import json
from pathlib import Path

import fastavro
import pytest

from xqarb import codec
from xqarb.events import ENVELOPE_FIELDS, json_fields, load_schemas

from .conftest import sample_json

HISTORY = Path(__file__).resolve().parents[2] / "schemas" / "history"

# DESIGN's event catalogue: the fields each type must have (more may be added; none renamed).
CATALOGUE: dict[str, set[str]] = {
    "FrameCaptured": {"camera_id", "width", "height", "encoding", "image"},
    "ClockPressed": {"side", "red_ms", "black_ms"},
    "ClockPaused": {"by", "red_ms", "black_ms"},
    "ClockResumed": {"by", "red_ms", "black_ms"},
    "GameStarted": {"game_id", "red_player", "black_player", "ruleset", "rapid", "level", "time_control",
                    "start_fen", "recording_required"},
    "ScoresheetEntry": {"side", "ply", "text"},
    "DrawOffered": {"side"},
    "DrawAnswered": {"side", "accepted"},
    "Resigned": {"side"},
    "NaturalLimitClaimed": {"side"},
    "PointDesignated": {"point"},
    "PositionRestored": {"fen", "article"},
    "TouchReported": {"side", "point"},
    "FoulReported": {"side", "article", "note"},
    "ArbiterDecision": {"result", "article", "note"},
    "BoardCalibrated": {"corners", "homography"},
    "HandEntered": set(),
    "HandLeft": set(),
    "PieceLifted": {"point"},
    "PiecePlaced": {"point"},
    "PieceNudged": {"point"},
    "PieceMisaligned": {"points"},
    "BoardStable": {"squares", "frame_sha256"},
    "CameraFault": {"reason"},
    "MoveMade": {"game_id", "ply", "side", "iccs", "wxf", "chinese", "fen_after", "red_ms", "black_ms"},
    "Ruling": {"game_id", "kind", "side", "article", "message"},
    "GameEnded": {"game_id", "result", "article", "reason"},
    "AttentionNeeded": {"game_id", "reason"},
}  # fmt: skip


@pytest.mark.parametrize("event_type", sorted(CATALOGUE))
def test_schema_has_the_envelope_and_the_catalogue_fields(event_type: str) -> None:
    schema = load_schemas()[event_type]
    assert schema["namespace"] == "xqarb" and schema["type"] == "record"
    fields = {f["name"]: f for f in schema["fields"]}
    assert tuple(fields)[: len(ENVELOPE_FIELDS)] == ENVELOPE_FIELDS
    assert fields["occurred_at"]["type"] == "long" and fields["received_at"]["type"] == "long"
    assert fields["source_seq"]["type"] == "long"
    missing = CATALOGUE[event_type] - set(fields)
    assert not missing, f"{event_type} lacks DESIGN's fields {missing}"
    assert "game_id" in fields
    for name, spec in fields.items():
        assert spec.get("doc"), f"{event_type}.{name} has no doc"


def test_clock_times_are_null_where_a_device_does_not_say() -> None:
    for event_type in ("ClockPressed", "ClockPaused", "ClockResumed"):
        fields = {f["name"]: f for f in load_schemas()[event_type]["fields"]}
        for name in ("red_ms", "black_ms"):
            assert fields[name]["type"] == ["null", "long"] and fields[name]["default"] is None


def _published() -> dict[int, str]:
    out = {}
    for line in (HISTORY / "published.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, fp_hex = line.split()
            out[int.from_bytes(bytes.fromhex(fp_hex), "little")] = name
    return out


def test_every_published_version_is_still_readable_and_every_current_one_is_published() -> None:
    registry = codec.default_registry()
    known = registry.fingerprints()
    published = _published()
    for fp, name in published.items():
        assert fp in known and known[fp].name == name, (
            f"{name} version {fp.to_bytes(8, 'little').hex()} was published but no schema here has it: keep the "
            f"old file in schemas/history/ (see schemas/README.md)"
        )
    for name in load_schemas():
        current = registry.current(name)
        line = f"{name} {current.fingerprint.to_bytes(8, 'little').hex()}"
        assert current.fingerprint in published, (
            f"{name} changed; keep the previous version in schemas/history/ and add this line to "
            f"schemas/history/published.txt: {line}"
        )


@pytest.mark.parametrize("path", sorted(HISTORY.glob("*.avsc")), ids=lambda p: p.name)
def test_each_kept_version_resolves_to_the_current_schema(path: Path) -> None:
    old = json.loads(path.read_text())
    registry = codec.default_registry()
    fp = codec.fingerprint(old)
    assert registry.writer(fp).name == old["name"]
    current = load_schemas()[old["name"]]
    sample = codec.decode(codec.encode(codec.from_json_dict(sample_json(old["name"])))).record()
    wire = {**sample, **{name: json.dumps(sample[name]) for name in json_fields(old["name"])}}
    body = io.BytesIO()
    fastavro.schemaless_writer(body, fastavro.parse_schema(old), {f["name"]: wire[f["name"]] for f in old["fields"]})
    event = codec.decode(b"\xc3\x01" + fp.to_bytes(8, "little") + body.getvalue())
    old_names = {f["name"] for f in old["fields"]}
    for spec in current["fields"]:
        if spec["name"] not in old_names:
            assert "default" in spec, f"{old['name']}.{spec['name']} was added without a default"
            assert event.record()[spec["name"]] == spec["default"]
        else:
            assert event.record()[spec["name"]] == sample[spec["name"]]
