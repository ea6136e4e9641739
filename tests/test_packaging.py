"""The distribution lists every package directory, so a non-editable install has all of the code."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_directory_is_declared() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    declared: set[str] = set(config["packages"])
    found: set[str] = set()
    for package, directory in config["package-dir"].items():
        base = ROOT / directory
        for init in base.rglob("__init__.py"):
            rel = init.parent.relative_to(base)
            found.add(".".join((package, *rel.parts)))
    missing = found - declared
    assert not missing, f"package directories not listed in pyproject.toml [tool.setuptools] packages: {missing}"


def test_help_lists_every_subcommand_of_the_contract() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "xqarb.cli", "--help"], capture_output=True, text=True, check=True
    ).stdout
    for command in ("up", "rules", "replay", "referee", "vision", "verify"):
        assert f"    {command}" in out, f"`xqarb --help` does not list `{command}`:\n{out}"
