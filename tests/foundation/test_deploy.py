"""deploy/ cannot run here (no Docker): check that the Compose file parses, names every service and topic the
code uses, and that every xqarb command in it is accepted by the real command line."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest
import yaml

from xqarb import bus
from xqarb.cli import build_parser

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
XQARB_SERVICES = ("ingest", "vision", "referee", "web")


def load_compose() -> dict:
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text())


def parses(argv: list[str]) -> tuple[bool, str]:
    """Whether `xqarb <argv>` is accepted by the real parser (and the subcommand is built, not a placeholder)."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            args = build_parser().parse_args(argv)
    except SystemExit:
        return False, err.getvalue()
    handler = getattr(args, "handler", None)
    placeholder = handler is not None and handler.__qualname__.startswith("_placeholder")
    return (handler is not None and not placeholder), err.getvalue()


def test_compose_has_kafka_in_kraft_mode_the_services_and_prometheus() -> None:
    services = load_compose()["services"]
    assert {"kafka", "topics", *XQARB_SERVICES, "prometheus"} <= set(services)
    kafka = services["kafka"]
    assert kafka["image"].startswith("apache/kafka:")
    env = kafka["environment"]
    assert "controller" in env["KAFKA_PROCESS_ROLES"] and "broker" in env["KAFKA_PROCESS_ROLES"]
    assert "ZOOKEEPER" not in " ".join(env)
    assert str(env["KAFKA_AUTO_CREATE_TOPICS_ENABLE"]).lower() == "false"
    for name in XQARB_SERVICES:
        command = services[name]["command"]
        assert command[0] == "xqarb", name
        assert "--bootstrap-servers kafka:9092" in " ".join(command), name
        assert services[name]["depends_on"]["topics"]["condition"] == "service_completed_successfully", name
    assert services["prometheus"]["image"].startswith("prom/prometheus")


@pytest.mark.parametrize(("service", "subcommand"), [("ingest", "ingest serve"), ("vision", "vision serve"),
                                                     ("referee", "referee serve")])  # fmt: skip
def test_service_commands_are_accepted_by_the_real_command_line(service: str, subcommand: str) -> None:
    command = load_compose()["services"][service]["command"]
    assert " ".join(command[1:]).startswith(subcommand)
    ok, err = parses(command[1:])
    assert ok, f"`{' '.join(command)}` is refused by xqarb's parser: {err}"


def test_the_web_command_is_accepted_by_the_real_command_line() -> None:
    command = load_compose()["services"]["web"]["command"]
    ok, err = parses(command[1:])
    assert ok, f"`{' '.join(command)}` is refused by xqarb's parser: {err}"


def test_the_topic_job_creates_every_topic_of_the_code() -> None:
    script = " ".join(load_compose()["services"]["topics"]["command"])
    for topic in bus.TOPICS:
        assert f" {topic} " in f" {script} ".replace(";", " "), topic
    # The broker accepts the largest frame the producer may send.
    env = load_compose()["services"]["kafka"]["environment"]
    assert int(env["KAFKA_MESSAGE_MAX_BYTES"]) >= bus.MAX_REQUEST_BYTES


def test_prometheus_scrapes_the_http_services() -> None:
    config = yaml.safe_load((DEPLOY / "prometheus.yml").read_text())
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    compose = load_compose()["services"]
    for name in ("ingest", "web"):
        published = {int(p.split(":")[-1]) for p in compose[name]["ports"]}
        assert jobs[name]["dns_sd_configs"][0]["port"] in published, name
        assert jobs[name]["dns_sd_configs"][0]["names"] == [name]


def test_the_image_and_example_config_exist() -> None:
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert "pip install" in dockerfile
    build = load_compose()["x-xqarb"]["build"]
    assert (DEPLOY / build["context"] / build["dockerfile"]).resolve() == (DEPLOY / "Dockerfile").resolve()
    for directory in ("xqarb", "schemas", "services"):
        assert f"COPY {directory} ./{directory}" in dockerfile
    assert (DEPLOY / "config" / "venue.example.toml").is_file()
    assert "/etc/xqarb/venue.toml" in load_compose()["services"]["ingest"]["command"]


def test_the_example_venue_configuration_loads() -> None:
    from xqarb.ingest.config import load_config

    config = load_config(str(DEPLOY / "config" / "venue.example.toml"))
    assert config.limits.max_frame_bytes <= bus.MAX_REQUEST_BYTES - 64 * 1024  # room for the envelope
