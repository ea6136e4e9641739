"""Snapshots of a board's state: a restart resumes a long game from one instead of folding all its inputs again.

A snapshot is the board's state after a ledger entry (ledger.put_snapshot keeps it with that entry's hash; the
entries stay the truth). It is only used by the fold that made it: its bytes start with the versions of the fold
and of the rule sets (version.py), and a snapshot of any other version is ignored (the game is folded again from
its inputs, as before snapshots). The state is pickled; reading admits only the referee's own classes and plain
builtins, so a ledger file edited by hand cannot make the referee run anything.

Measured (bench/referee_restart.py, the longest shared game, 342 plies, CPU time on a shared machine): rebuilding
the board from the ledger took 124 ms (685 inputs, a BoardStable and a press per ply) and 287 ms (2,395 inputs as
a camera board sends them; two thirds of it reading the entries); from a snapshot and a 50-input tail, 14 and
18 ms (9x and 16x). Taking the snapshot (149 kB) took 6 ms.
"""

from __future__ import annotations

import io
import pickle
from types import MappingProxyType
from typing import Any, ClassVar

from xqarb.referee.version import FOLD_VERSION, RULESET_VERSIONS

# Builtins a state holds besides what pickle writes by itself (tuples, dicts, strings, numbers, frozensets).
_BUILTINS = frozenset({"set", "frozenset", "slice", "complex", "bytearray"})
_PACKAGE = "xqarb."
# The shape of the pickled state (game_state.py), beside the fold's version: a snapshot of another shape names
# fields this code does not have, so it is refused like another version's and the game is folded again from its
# inputs. 2: the state grouped into parts, one SideState per side; 3: `Sides` a named tuple, not a dataclass.
STATE_SHAPE = 3


class SnapshotError(ValueError):
    """A snapshot that cannot be read back (another version's, cut short, or naming a class it may not)."""


def _read_only(d: dict[str, Any]) -> MappingProxyType:
    return MappingProxyType(d)


def _reduce_read_only(m: MappingProxyType) -> tuple[Any, tuple[dict[str, Any]]]:
    return _read_only, (dict(m),)


def header() -> bytes:
    """What a snapshot starts with: the versions of the code that made it (one line)."""
    rules = ",".join(f"{name}={v}" for name, v in sorted(RULESET_VERSIONS.items()))
    return f"xqarb-snapshot fold={FOLD_VERSION} state={STATE_SHAPE} {rules}\n".encode()


class _Pickler(pickle.Pickler):
    dispatch_table: ClassVar[dict[type, Any]] = {MappingProxyType: _reduce_read_only}


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if module.startswith(_PACKAGE) or (module == "builtins" and name in _BUILTINS):
            return super().find_class(module, name)
        raise SnapshotError(f"a snapshot may not name {module}.{name}")


def encode(state: Any) -> bytes:
    out = io.BytesIO()
    out.write(header())
    _Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(state)
    return out.getvalue()


def decode(blob: bytes) -> Any:
    """The state a snapshot holds; SnapshotError if this fold did not make it or it cannot be read."""
    want = header()
    if not bytes(blob).startswith(want):
        first = bytes(blob[:120]).split(b"\n", 1)[0].decode("utf-8", "replace")
        raise SnapshotError(f"a snapshot of another version ({first!r}; installed: {want.decode().strip()!r})")
    try:
        return _Unpickler(io.BytesIO(bytes(blob)[len(want):])).load()
    except SnapshotError:
        raise
    except Exception as exc:  # pickle raises many types on damaged bytes; all mean the same here
        raise SnapshotError(f"a snapshot that cannot be read: {type(exc).__name__}: {exc}") from exc
