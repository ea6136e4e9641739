"""deploy/ cannot run here (no Docker): check that the Compose file parses and names everything the code uses."""

from __future__ import annotations

from pathlib import Path

import yaml

from xqarb import bus

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def load_compose() -> dict:
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text())


def test_compose_has_kafka_in_kraft_mode_the_services_and_prometheus() -> None:
    services = load_compose()["services"]
    assert {"kafka", "topics", "ingest", "vision", "referee", "prometheus"} <= set(services)
    kafka = services["kafka"]
    assert kafka["image"].startswith("apache/kafka:")
    env = kafka["environment"]
    assert "controller" in env["KAFKA_PROCESS_ROLES"] and "broker" in env["KAFKA_PROCESS_ROLES"]
    assert "ZOOKEEPER" not in " ".join(env)
    assert str(env["KAFKA_AUTO_CREATE_TOPICS_ENABLE"]).lower() == "false"
    commands = {name: " ".join(services[name]["command"]) for name in ("ingest", "vision", "referee")}
    assert commands["ingest"].startswith("xqarb ingest serve")
    assert commands["vision"].startswith("xqarb vision serve")
    assert commands["referee"].startswith("xqarb referee serve")
    for name, command in commands.items():
        assert "--bootstrap-servers kafka:9092" in command, name
        assert services[name]["depends_on"]["topics"]["condition"] == "service_completed_successfully", name
    assert services["prometheus"]["image"].startswith("prom/prometheus")


def test_the_topic_job_creates_every_topic_of_the_code() -> None:
    script = " ".join(load_compose()["services"]["topics"]["command"])
    for topic in bus.TOPICS:
        assert f" {topic} " in f" {script} ".replace(";", " "), topic
    # The broker accepts the largest frame the producer may send.
    env = load_compose()["services"]["kafka"]["environment"]
    assert int(env["KAFKA_MESSAGE_MAX_BYTES"]) >= bus.MAX_REQUEST_BYTES


def test_prometheus_scrapes_every_service_that_serves_metrics() -> None:
    config = yaml.safe_load((DEPLOY / "prometheus.yml").read_text())
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    assert {"ingest", "vision", "referee"} <= set(jobs)
    compose = load_compose()["services"]
    for name in ("ingest", "referee"):
        published = {int(p.split(":")[-1]) for p in compose[name]["ports"]}
        assert jobs[name]["dns_sd_configs"][0]["port"] in published, name


def test_the_image_and_example_config_exist() -> None:
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert "pip install" in dockerfile
    build = load_compose()["x-xqarb"]["build"]
    assert (DEPLOY / build["context"] / build["dockerfile"]).resolve() == (DEPLOY / "Dockerfile").resolve()
    assert (DEPLOY / "config" / "venue.example.toml").is_file()
    assert "/etc/xqarb/venue.toml" in load_compose()["services"]["ingest"]["command"]
