"""Vision's layering (DESIGN, services/vision/): vision reports what it sees and uses, of the referee, only the pure
rules core (the legal moves from the referee's position); values both sides share (the board alphabet) live in the
shared modules of xqarb/. So no module under services/vision imports the referee's internals, the tournament
service, or another service's modules, and the pure cores import no message bus."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VISION = ROOT / "services" / "vision"
SHARED = {p.stem for p in (ROOT / "xqarb").glob("*.py") if p.stem != "__init__"}

# Imports of another service a module may make, and why: the venue configuration (boards, cameras, corners) is
# ingest's file format, read by vision's service adapter to know each board's calibration; the evidence sweep
# learns which frames a ruling, alert or move rests on from the ledger's entries (read only) and finds the frames
# where the API serves them from.
ALLOWED_ELSEWHERE = {("service.py", "xqarb.ingest.config"), ("sweep.py", "xqarb.referee.ledger.open_ledger"),
                     ("sweep.py", "xqarb.referee.api.frame_loader")}
# The adapters: the Kafka loop, the command line, the training scripts, the evidence store (files), the evidence
# sweep (a store and the ledger), the resume of a restarted process (the topics' history, the API's boards), the
# observations kept for a broker that restarts empty (the logs' ends and the referee group's commits).
# Every other module is a pure core: values in, values out.
ADAPTERS = {"service.py", "cli.py", "render_cli.py", "evidence.py", "movefit_train.py", "pieces_train.py",
            "sweep.py", "resume.py", "observations_kept.py"}
BUS = ("xqarb.bus", "xqarb.broker", "confluent_kafka", "kafka", "flask", "http", "socket")


def imports_of(source: str, package: str = "xqarb.vision") -> list[str]:
    """Every name a source imports (at the top or inside functions), dotted in full: `from a.b import c` is a.b.c
    (c may be a module or a name in one), relative imports made absolute."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                assert node.module is not None
                module = node.module
            out.extend(f"{module}.{a.name}" for a in node.names)
    return out


def violations(name: str, source: str) -> list[str]:
    """What `name` (a file under services/vision) imports against the layering."""
    bad = []
    for mod in imports_of(source):
        parts = mod.split(".")
        if parts[0] == "services":  # (the on-disk path: the same packages as xqarb.<service>)
            parts = ["xqarb", *parts[1:]]
        if parts[0] != "xqarb" or len(parts) == 1:
            if name not in ADAPTERS and mod.startswith(BUS):
                bad.append(f"{name}: {mod} (a pure core imports no bus or server)")
            continue
        full = ".".join(parts)
        if parts[1] == "vision" or parts[1] in SHARED:
            ok = True
        else:
            ok = any(name == n and (full == m or full.startswith(m + ".")) for n, m in ALLOWED_ELSEWHERE)
            if parts[1] == "referee":
                ok = ok or (len(parts) >= 3 and parts[2] == "rules")  # the pure rules core only
        if not ok:
            bad.append(f"{name}: {full}")
        if name not in ADAPTERS and full.startswith(BUS):
            bad.append(f"{name}: {full} (a pure core imports no bus or server)")
    return bad


def test_vision_imports_of_the_referee_only_its_rules_core() -> None:
    found = [v for path in sorted(VISION.glob("*.py")) for v in violations(path.name, path.read_text("utf-8"))]
    assert found == []


def test_the_layering_check_flags_the_referees_internals_and_a_bus_in_a_core() -> None:
    assert violations("tracker.py", "from xqarb.referee.inference import consistent\n") == [
        "tracker.py: xqarb.referee.inference.consistent"]
    assert violations("tracker.py", "def f():\n    from services.referee import api\n") == [
        "tracker.py: xqarb.referee.api"]
    assert violations("interpret.py", "from xqarb.tournament import pairing\n") == [
        "interpret.py: xqarb.tournament.pairing"]
    core_bus = ["hand.py: xqarb.bus (a pure core imports no bus or server)"]
    assert violations("hand.py", "from xqarb import bus\n") == core_bus
    assert violations("hand.py", "import xqarb.bus\n") == core_bus
    assert violations("hand.py", "import confluent_kafka\n") == [
        "hand.py: confluent_kafka (a pure core imports no bus or server)"]
    # allowed: the rules core, the shared alphabet, vision's own modules, relative or absolute
    assert violations("still_board.py", "from xqarb.referee.rules import Position\nfrom xqarb.alphabet import CASED\n"
                                        "from .grid import neighbours\nfrom xqarb.vision.board import BoardFit\n") == []
    assert violations("service.py", "from xqarb.ingest.config import load_config\nfrom xqarb import bus\n") == []
