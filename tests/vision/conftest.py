"""Vision tests: the local board drawer (`synthetic.py`) is importable from here."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
