"""Evidence frames: JPEG bytes kept by their SHA-256 (content address), so an arbiter can look at them later.

`EvidenceStore` is the interface the tracker's adapter and the referee's API use: `put(jpeg) -> sha256` and
`get(sha256) -> bytes | None`. `MemoryEvidenceStore` keeps a bounded number of frames (tests, the pure core's
callers); `DirectoryEvidenceStore` keeps files `<root>/<first 2 hex>/<sha256>.jpg` (the service). Putting the
same frame twice stores it once.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections import OrderedDict
from pathlib import Path
from typing import Protocol

_SHA = re.compile(r"^[0-9a-f]{64}$")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class EvidenceStore(Protocol):
    def put(self, jpeg: bytes) -> str: ...

    def get(self, sha256: str) -> bytes | None: ...


class MemoryEvidenceStore:
    """In-memory store, oldest frames forgotten first beyond `capacity`."""

    def __init__(self, capacity: int = 1000) -> None:
        self.capacity = capacity
        self._frames: OrderedDict[str, bytes] = OrderedDict()

    def put(self, jpeg: bytes) -> str:
        key = sha256_hex(jpeg)
        self._frames[key] = jpeg
        self._frames.move_to_end(key)
        while len(self._frames) > self.capacity:
            self._frames.popitem(last=False)
        return key

    def get(self, sha256: str) -> bytes | None:
        return self._frames.get(sha256)

    def __contains__(self, sha256: str) -> bool:
        return sha256 in self._frames

    def __len__(self) -> int:
        return len(self._frames)


class DirectoryEvidenceStore:
    """Frames as files under `root`, written atomically (temp file + rename), never overwritten."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    def path_of(self, sha256: str) -> Path:
        if not _SHA.match(sha256):
            raise ValueError(f"{sha256!r} is not a lower-case hex SHA-256")
        return self.root / sha256[:2] / f"{sha256}.jpg"

    def put(self, jpeg: bytes) -> str:
        key = sha256_hex(jpeg)
        path = self.path_of(key)
        if path.exists():
            return key
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(jpeg)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return key

    def get(self, sha256: str) -> bytes | None:
        try:
            return self.path_of(sha256).read_bytes()
        except FileNotFoundError:
            return None
