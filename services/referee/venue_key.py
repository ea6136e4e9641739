"""The venue's Ed25519 signing key: where it is kept, made on first use, and how its public half is written.

The private key signs the ledger's tree heads (tree_head.py); whoever holds the public key can check a head
without our server. It lives in the data directory as `venue-key.pem` (PKCS#8 PEM, unencrypted, mode 0600: only
the venue's own user reads it), made on the first `xqarb up` or `xqarb referee serve` when missing.

A public key is written as PEM (SubjectPublicKeyInfo) or as 64 hex digits (the raw 32 bytes); both are read back.
Its key id is the SHA-256 of the raw 32 bytes, in hex: a head names the key that signed it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from xqarb.config import data_dir

KEY_FILE = "venue-key.pem"
KEY_PATH_ENV = "XQARB_VENUE_KEY"  # another place for the private key (e.g. a mounted secret)
PRIVATE_KEY_MODE = 0o600  # read and written by the venue's own user only


class VenueKeyError(Exception):
    """A key file or key text that cannot be used (missing, unreadable, not an Ed25519 key)."""


def key_path(environ: Mapping[str, str] = os.environ) -> Path:
    """Where the venue's private key is: `$XQARB_VENUE_KEY`, else `venue-key.pem` in the data directory."""
    return Path(environ.get(KEY_PATH_ENV) or data_dir(environ) / KEY_FILE)


def load_private_key(path: Path) -> Ed25519PrivateKey:
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except OSError as exc:
        raise VenueKeyError(f"cannot read the venue key {path}: {exc.strerror or exc}") from exc
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        raise VenueKeyError(f"{path} holds no unencrypted PEM private key: {exc}") from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise VenueKeyError(f"{path} holds a {type(key).__name__}, not an Ed25519 key")
    return key


def load_or_create_key(path: Path) -> Ed25519PrivateKey:
    """The key at `path`; when there is none, a new one written there with mode 0600 (never overwriting)."""
    if path.exists():
        return load_private_key(path)
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        # O_EXCL: two processes starting at once must not each write their own key; the loser reads the winner's.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_KEY_MODE)
    except FileExistsError:
        return load_private_key(path)
    with os.fdopen(fd, "wb") as out:
        out.write(pem)
    os.chmod(path, PRIVATE_KEY_MODE)  # the umask may have taken bits away, never added: make it exact
    return key


def raw_public(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def key_id(key: Ed25519PublicKey) -> str:
    return hashlib.sha256(raw_public(key)).hexdigest()


def public_pem(key: Ed25519PublicKey) -> str:
    return key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()


def public_key_json(key: Ed25519PublicKey) -> dict[str, str]:
    """How the API and the CLI show a public key."""
    return {"algorithm": "Ed25519", "key_id": key_id(key), "public_key_hex": raw_public(key).hex(),
            "public_key_pem": public_pem(key)}


def parse_public_key(text: str) -> Ed25519PublicKey:
    """A public key from PEM text or 64 hex digits."""
    text = text.strip()
    if text.startswith("-----BEGIN"):
        try:
            key = serialization.load_pem_public_key(text.encode())
        except (ValueError, UnsupportedAlgorithm) as exc:
            raise VenueKeyError(f"not a PEM public key: {exc}") from exc
        if not isinstance(key, Ed25519PublicKey):
            raise VenueKeyError(f"the PEM key is a {type(key).__name__}, not an Ed25519 key")
        return key
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        raise VenueKeyError("a public key is PEM text or 64 hex digits") from None
    if len(raw) != 32:
        raise VenueKeyError(f"an Ed25519 public key is 32 bytes (64 hex digits), not {len(raw)}")
    return Ed25519PublicKey.from_public_bytes(raw)


def read_public_key(spec: str) -> Ed25519PublicKey:
    """`--public-key KEY`: a file holding PEM or hex, or the hex itself."""
    path = Path(spec)
    if path.is_file():
        try:
            return parse_public_key(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise VenueKeyError(f"cannot read the public key file {path}: {exc}") from exc
    return parse_public_key(spec)
