"""The venue's configuration for ingest and the API: boards, device tokens, arbiter tokens, tournaments, limits.

A JSON or TOML file:

```toml
[limits]
max_frame_bytes = 4_000_000   # one JPEG
max_json_bytes = 65_536       # one clock or catalogue event
max_skew_s = 300              # a device clock further than this from the server's is refused
max_in_flight = 256           # sends waiting for the broker; beyond that 503 + Retry-After
ack_timeout_s = 10            # how long a request waits for the broker's acknowledgement

[tournaments.open]
broadcast_delay_s = 900       # the public stream shows this tournament's boards 15 minutes late

[boards.7]
tournament = "open"
# optional, for a fixed camera: its image pixels of the corners a9, i9, i0, a0 (vision then does not look for the
# board); any consistent turn (start at any corner, either way round: vision settles which is which); the
# calibration page (/calibrate.html?board=7) writes them here
corners = [[412.0, 96.5], [868.0, 98.0], [902.5, 640.0], [380.0, 637.5]]

devices = { "cam-7" = "secret-token-cam-7", "clock-7" = "secret-token-clock-7" }
# each device's role: camera, clock or scoresheet; a device without one may send what any device may (as before
# roles existed). Also written inline: "cam-7" = { token = "...", role = "camera" }.
roles = { "cam-7" = "camera", "clock-7" = "clock" }

[arbiters.chief]
token = "secret-token-chief"
boards = ["*"]                # or a list of the boards this arbiter watches
```

Tokens are compared in constant time. A device token is bound to its board and its role: it can post only for
that board, and only what its role sends (`xqarb.ingest.validate.ROLE_TYPES`: a camera frames, a clock its presses
and offers, a scoresheet its entries and offers). An arbiter's token is never taken for a device's.
"""

from __future__ import annotations

import hmac
import json
import secrets
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xqarb.ingest.validate import DEVICE_ROLES, ROLE_TYPES


class ConfigError(ValueError):
    """The configuration file is malformed; the message says where."""


@dataclass(frozen=True)
class Limits:
    max_frame_bytes: int = 4_000_000
    max_json_bytes: int = 65_536
    max_skew_s: float = 300.0
    max_in_flight: int = 256
    ack_timeout_s: float = 10.0


@dataclass(frozen=True)
class Alerts:
    """The venue's `[alerts]` table: when the arbiter is told before anything is ruled (issue 38; watch.py)."""

    # 4.1.6: the running side's time left (s) at which the arbiter is told its flag is about to fall: time enough to
    # walk to the board and watch the flag.
    flag_warning_s: float = 60.0
    # A board with a game in progress whose camera has sent no frame this long (s) is reported quiet: cameras send
    # several frames a second, so this is a camera unplugged, covered or stalled, not a still board.
    camera_quiet_s: float = 20.0


@dataclass(frozen=True)
class Principal:
    """Who a bearer token belongs to: a device bound to one board, or an arbiter watching some boards."""

    id: str
    role: str  # "camera", "clock", "scoresheet", "device" (a token without a role: any of these) or "arbiter"
    boards: frozenset[str]  # for a device exactly one; for an arbiter the boards, or {"*"} for all

    def may_post_for(self, board_id: str) -> bool:
        return "*" in self.boards or board_id in self.boards

    def may_send(self, event_type: str) -> bool:
        """Whether this token's role sends events of this type (ROLE_TYPES)."""
        return event_type in ROLE_TYPES.get(self.role, frozenset())

    @property
    def is_arbiter(self) -> bool:
        return self.role == "arbiter"


@dataclass(frozen=True)
class Board:
    id: str
    tournament: str | None = None
    # The board's four corners a9, i9, i0, a0 in the camera's image pixels, where an operator measured them for a
    # fixed camera: vision then takes this calibration instead of looking for the board in the frames. Any
    # consistent turn is taken (vision/given.py tells ranks from files and Red's end by the picture).
    corners: tuple[tuple[float, float], ...] | None = None


@dataclass(frozen=True)
class VenueConfig:
    boards: Mapping[str, Board]
    tokens: Mapping[str, Principal]  # token -> who
    broadcast_delay_s: Mapping[str, float] = field(default_factory=dict)  # tournament -> delay
    limits: Limits = Limits()
    alerts: Alerts = Alerts()

    def principal(self, token: str | None) -> Principal | None:
        """The owner of a bearer token, compared in constant time so that timing does not leak tokens."""
        if not token:
            return None
        found = None
        for known, who in self.tokens.items():
            if hmac.compare_digest(known.encode(), token.encode()):
                found = who
        return found

    def delay_for_board(self, board_id: str) -> float:
        board = self.boards.get(board_id)
        if board is None or board.tournament is None:
            return 0.0
        return float(self.broadcast_delay_s.get(board.tournament, 0.0))

    def device_tokens(self) -> dict[str, tuple[str, str]]:
        """board -> (device id, token) of the first device of each board (the demo's cameras use these)."""
        out: dict[str, tuple[str, str]] = {}
        for token, who in self.tokens.items():
            if who.may_send("FrameCaptured"):
                board = next(iter(who.boards))
                out.setdefault(board, (who.id, token))
        return out

    def camera_boards(self) -> frozenset[str]:
        """The boards with a device that may send frames (a camera, or a device without a role)."""
        return frozenset(next(iter(who.boards)) for who in self.tokens.values() if who.may_send("FrameCaptured"))

    def device_tokens_all(self) -> dict[str, list[tuple[str, str]]]:
        """board -> [(device id, token), ...] in configuration order."""
        out: dict[str, list[tuple[str, str]]] = {}
        for token, who in self.tokens.items():
            if not who.is_arbiter:
                out.setdefault(next(iter(who.boards)), []).append((who.id, token))
        return out

    def arbiter_token(self) -> str | None:
        """A token of an arbiter allowed on every board (the demo's organiser uses it to start games)."""
        for token, who in self.tokens.items():
            if who.is_arbiter and "*" in who.boards:
                return token
        return None


def parse_config(raw: Mapping[str, Any]) -> VenueConfig:
    """A VenueConfig from the parsed JSON/TOML document; ConfigError naming the bad entry otherwise."""
    if not isinstance(raw, Mapping):
        raise ConfigError("the configuration must be an object with boards, arbiters, tournaments, limits")
    limits_raw = raw.get("limits", {})
    known_limits = set(Limits.__dataclass_fields__)
    unknown = set(limits_raw) - known_limits
    if unknown:
        raise ConfigError(f"limits: unknown key(s) {sorted(unknown)}; known: {sorted(known_limits)}")
    limits = Limits(**limits_raw)
    alerts = _alerts(raw.get("alerts", {}))
    tournaments = raw.get("tournaments", {})
    delays: dict[str, float] = {}
    for name, t in tournaments.items():
        delay = t.get("broadcast_delay_s", 0)
        if not isinstance(delay, int | float) or delay < 0:
            raise ConfigError(f"tournaments.{name}.broadcast_delay_s must be a number >= 0, not {delay!r}")
        delays[str(name)] = float(delay)
    boards: dict[str, Board] = {}
    tokens: dict[str, Principal] = {}

    def add_token(token: Any, who: Principal, where: str) -> None:
        if not isinstance(token, str) or len(token) < 8:
            raise ConfigError(f"{where}: a token must be a string of at least 8 characters")
        if token in tokens:
            raise ConfigError(f"{where}: the same token is given twice (also for {tokens[token].id})")
        tokens[token] = who

    for board_id, b in raw.get("boards", {}).items():
        board_id = str(board_id)
        tournament = b.get("tournament")
        if tournament is not None and tournament not in delays:
            delays[str(tournament)] = 0.0
        boards[board_id] = Board(board_id, tournament, _corners(b.get("corners"), f"boards.{board_id}.corners"))
        devices = b.get("devices", {})
        if not isinstance(devices, Mapping):
            raise ConfigError(f"boards.{board_id}.devices must map device ids to tokens")
        roles = b.get("roles", {})
        if not isinstance(roles, Mapping) or set(roles) - set(devices):
            raise ConfigError(f"boards.{board_id}.roles must map device ids of boards.{board_id}.devices to roles")
        for device_id, entry in devices.items():
            where = f"boards.{board_id}.devices.{device_id}"
            token, role = _device_entry(entry, roles.get(device_id), where)
            add_token(token, Principal(str(device_id), role, frozenset({board_id})), where)
    for arbiter_id, a in raw.get("arbiters", {}).items():
        watched = a.get("boards", ["*"])
        if isinstance(watched, str):
            watched = [watched]
        for board_id in watched:
            if board_id != "*" and str(board_id) not in boards:
                raise ConfigError(f"arbiters.{arbiter_id}.boards names board {board_id!r}, which is not configured")
        add_token(
            a.get("token"),
            Principal(f"arbiter:{arbiter_id}", "arbiter", frozenset(str(b) for b in watched)),
            f"arbiters.{arbiter_id}",
        )
    return VenueConfig(boards=boards, tokens=tokens, broadcast_delay_s=delays, limits=limits, alerts=alerts)


def _alerts(raw: Any) -> Alerts:
    """The `[alerts]` table: each setting a number of seconds above 0; ConfigError naming the bad one."""
    if not isinstance(raw, Mapping):
        raise ConfigError(f"alerts must be a table of settings, not {type(raw).__name__}")
    known = set(Alerts.__dataclass_fields__)
    unknown = set(raw) - known
    if unknown:
        raise ConfigError(f"alerts: unknown key(s) {sorted(unknown)}; known: {sorted(known)}")
    for key, value in raw.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 86_400:
            raise ConfigError(f"alerts.{key} must be a number of seconds above 0 and under a day, not {value!r}")
    return Alerts(**{key: float(value) for key, value in raw.items()})


def _device_entry(entry: Any, listed_role: Any, where: str) -> tuple[Any, str]:
    """(token, role) of a device: a token with its role in the board's `roles`, or `{token = ..., role = ...}`;
    without a role, "device": what any device may send, as before roles existed."""
    role = listed_role if listed_role is not None else "device"
    token = entry
    if isinstance(entry, Mapping):
        unknown = set(entry) - {"token", "role"}
        if unknown:
            raise ConfigError(f"{where}: unknown key(s) {sorted(unknown)}; a device has a token and a role")
        token = entry.get("token")
        role = entry.get("role", role)
    if role not in DEVICE_ROLES:
        raise ConfigError(f"{where}: role must be one of {', '.join(sorted(DEVICE_ROLES))}, not {role!r} (arbiters "
                          "are configured under [arbiters])")
    return token, str(role)


def _corners(raw: Any, where: str) -> tuple[tuple[float, float], ...] | None:
    """A board's corners as the venue file gives them: [[x, y] x 4] in image pixels, a9, i9, i0, a0; or None."""
    if raw is None:
        return None
    if not isinstance(raw, list | tuple) or len(raw) != 4:
        raise ConfigError(f"{where} must be four [x, y] points (a9, i9, i0, a0 in image pixels), not {raw!r}")
    out = []
    for pt in raw:
        if (not isinstance(pt, list | tuple) or len(pt) != 2
                or not all(isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 for v in pt)):
            raise ConfigError(f"{where}: each corner must be [x, y] with non-negative numbers, not {pt!r}")
        out.append((float(pt[0]), float(pt[1])))
    (ax, ay), (bx, by), (cx, cy), (dx, dy) = out
    # The quadrilateral a9 -> i9 -> i0 -> a0 must turn one way at every corner: a crossed or folded one is a typo.
    turns = [(x2 - x1) * (y3 - y2) - (y2 - y1) * (x3 - x2) for (x1, y1), (x2, y2), (x3, y3) in (
        ((ax, ay), (bx, by), (cx, cy)), ((bx, by), (cx, cy), (dx, dy)), ((cx, cy), (dx, dy), (ax, ay)),
        ((dx, dy), (ax, ay), (bx, by)))]
    if not (all(t > 0 for t in turns) or all(t < 0 for t in turns)):
        raise ConfigError(f"{where}: the corners a9, i9, i0, a0 must go round the board in order (got {out})")
    return tuple(out)


def load_config(path: str | Path) -> VenueConfig:
    path = Path(path)
    text = path.read_bytes()
    try:
        raw = tomllib.loads(text.decode("utf-8")) if path.suffix == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid {'TOML' if path.suffix == '.toml' else 'JSON'}: {exc}") from None
    try:
        return parse_config(raw)
    except (TypeError, AttributeError) as exc:
        raise ConfigError(f"{path}: {exc}") from None


def generate_config(board_ids: Iterable[str], *, tournament: str = "demo", delay_s: float = 0.0) -> dict[str, Any]:
    """A fresh configuration with random tokens: one camera and one clock per board, one chief arbiter."""
    boards = {}
    for board_id in board_ids:
        boards[str(board_id)] = {
            "tournament": tournament,
            "devices": {f"cam-{board_id}": secrets.token_urlsafe(18), f"clock-{board_id}": secrets.token_urlsafe(18)},
            # Roles beside the tokens: whoever reads the devices' tokens from this file reads them as before.
            "roles": {f"cam-{board_id}": "camera", f"clock-{board_id}": "clock"},
        }
    return {
        "limits": {},
        "tournaments": {tournament: {"broadcast_delay_s": delay_s}},
        "boards": boards,
        "arbiters": {"chief": {"token": secrets.token_urlsafe(18), "boards": ["*"]}},
    }
