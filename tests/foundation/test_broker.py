"""The embedded broker: found, started on a free port, answering Kafka clients, stopped cleanly; `xqarb broker`."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from xqarb import bus
from xqarb.broker import BINARY_ENV, BrokerError, EmbeddedBroker, find_binary

ROOT = Path(__file__).resolve().parents[2]


def port_open(bootstrap: str) -> bool:
    host, port = bootstrap.rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=0.5):
            return True
    except OSError:
        return False


def test_the_binary_is_found_in_the_installed_wheel() -> None:
    path = find_binary()
    assert path.is_file() and os.access(path, os.X_OK)


def test_a_missing_binary_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(BINARY_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(BrokerError, match="not an executable file"):
        EmbeddedBroker().start()


def test_a_binary_that_dies_at_once_is_reported_with_its_log(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake = tmp_path / "broker"
    fake.write_text("#!/bin/sh\necho 'cannot bind: address in use' >&2\nexit 3\n")
    fake.chmod(0o755)
    monkeypatch.setenv(BINARY_ENV, str(fake))
    with pytest.raises(BrokerError, match=r"exited with code 3(.|\n)*cannot bind"):
        EmbeddedBroker(log_path=tmp_path / "log").start()


def test_start_answer_and_stop(tmp_path: Path) -> None:
    log = tmp_path / "broker.log"
    with EmbeddedBroker(log_path=log) as broker:
        assert broker.running and port_open(broker.bootstrap)
        assert bus.ensure_topics(broker.bootstrap, ["probe"], partitions=3) == {"probe": 3}
        bootstrap = broker.bootstrap
    assert not broker.running
    assert not port_open(bootstrap)
    assert log.is_file()


def test_xqarb_broker_runs_until_interrupted() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "xqarb.cli", "broker", "--port", "0", "--partitions", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        line = process.stdout.readline()
        match = re.search(r"listening on (\S+:\d+)", line)
        assert match, f"unexpected first line {line!r}; stderr: {process.stderr.read() if process.poll() else ''}"
        bootstrap = match.group(1)
        # The xq.* topics exist with the requested partition count (ensure_topics leaves existing ones alone).
        assert bus.ensure_topics(bootstrap, bus.TOPICS, partitions=7) == dict.fromkeys(bus.TOPICS, 2)
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 0
        deadline = time.monotonic() + 5
        while port_open(bootstrap) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not port_open(bootstrap), "the broker outlived `xqarb broker`"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_nothing_but_the_broker_module_knows_which_broker_it_is() -> None:
    offenders = []
    for folder in ("xqarb", "services"):
        for path in (ROOT / folder).rglob("*.py"):
            if path == ROOT / "xqarb" / "broker.py":
                continue
            if "tansu" in path.read_text(errors="replace").lower():
                offenders.append(str(path.relative_to(ROOT)))
    assert not offenders, f"these modules depend on the embedded broker being Tansu: {offenders}"


def test_the_broker_dies_with_a_killed_parent() -> None:
    """A test run or `xqarb up` killed outright (SIGKILL) must not leave a broker running on the machine."""
    script = (
        "import time\n"
        "from xqarb.broker import EmbeddedBroker\n"
        "print(EmbeddedBroker().start().bootstrap, flush=True)\n"
        "time.sleep(60)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        bootstrap = parent.stdout.readline().strip()
        assert port_open(bootstrap)
        parent.kill()
        parent.wait(timeout=10)
        deadline = time.monotonic() + 10
        while port_open(bootstrap) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not port_open(bootstrap), "the broker outlived its killed parent"
    finally:
        if parent.poll() is None:
            parent.kill()


def test_xqarb_broker_stops_on_sigint_though_started_with_it_ignored() -> None:
    """A process started from a background job inherits SIGINT ignored, and Python then raises no
    KeyboardInterrupt: the broker sets its own handler, so SIGINT (Ctrl-C) still stops it (a fresh clone's test run,
    started in the background, hung here)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "xqarb.cli", "broker", "--port", "0", "--partitions", "1", "--no-topics"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        assert "listening on" in process.stdout.readline()
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
