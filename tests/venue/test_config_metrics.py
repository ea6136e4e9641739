"""The venue configuration, the broadcast delay of the stream, the metrics, and `xqarb up` starting and stopping."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from xqarb import bus, metrics
from xqarb.events import make_event
from xqarb.ingest.config import Alerts, ConfigError, generate_config, load_config, parse_config
from xqarb.referee.api import RefereeApi, StreamHub

ROOT = Path(__file__).resolve().parents[2]


def test_deploy_example_configuration_loads() -> None:
    config = load_config(ROOT / "deploy" / "config" / "venue.example.toml")
    assert config.delay_for_board("1") == 900.0
    who = config.principal("REPLACE-ME-cam-1")
    assert who is not None and who.may_post_for("1") and not who.may_post_for("2") and not who.is_arbiter
    assert config.principal("REPLACE-ME-chief").is_arbiter
    assert config.principal("REPLACE-ME-cam-") is None and config.principal("") is None


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"limits": {"max_frame_byts": 1}}, "unknown key"),
        ({"boards": {"1": {"devices": {"cam": "short"}}}}, "at least 8"),
        ({"boards": {"1": {"devices": {"a": "same-token-1"}}, "2": {"devices": {"b": "same-token-1"}}}}, "twice"),
        ({"arbiters": {"x": {"token": "arbiter-token-1", "boards": ["9"]}}}, "not configured"),
        ({"tournaments": {"t": {"broadcast_delay_s": -5}}}, ">= 0"),
        ({"alerts": {"flag_warning": 30}}, "unknown key"),
        ({"alerts": {"camera_quiet_s": 0}}, "alerts.camera_quiet_s must be a number of seconds above 0"),
        ({"alerts": {"flag_warning_s": "60"}}, "alerts.flag_warning_s"),
        ({"alerts": {"flag_warning_s": True}}, "alerts.flag_warning_s"),
        ({"alerts": 5}, "alerts must be a table"),
    ],
)
def test_bad_configuration_says_where(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config(raw)


def test_alert_settings_default_and_as_the_venue_sets_them() -> None:
    assert parse_config({}).alerts == Alerts(flag_warning_s=60.0, camera_quiet_s=20.0)
    assert parse_config({"alerts": {"flag_warning_s": 90, "camera_quiet_s": 7.5}}).alerts == Alerts(90.0, 7.5)
    example = load_config(ROOT / "deploy" / "config" / "venue.example.toml")
    assert example.alerts == Alerts(60.0, 20.0)


def test_generated_configuration_has_a_camera_clock_and_chief() -> None:
    config = parse_config(generate_config(["1", "2"]))
    devices = config.device_tokens_all()
    assert sorted(devices) == ["1", "2"] and [d for d, _ in devices["1"]] == ["cam-1", "clock-1"]
    assert config.arbiter_token() is not None


def _attention(board: str, n: int) -> Any:
    return make_event(
        "AttentionNeeded",
        board,
        source="t",
        source_seq=n,
        occurred_at=n,
        received_at=n,
        game_id=f"g{board}",
        reason=f"r{n}",
    )


def test_broadcast_delay_holds_events_of_a_delayed_tournament(tmp_path: Path) -> None:
    from xqarb.referee.ledger import SqliteLedger

    hub = StreamHub()
    api = RefereeApi(
        ledger=SqliteLedger(tmp_path / "l.sqlite"),
        hub=hub,
        board_ids=["live", "delayed"],
        load_frame=lambda sha: None,
        delay_for_board=lambda b: 1.5 if b == "delayed" else 0.0,
    )
    hub.add(0, 0, _attention("delayed", 1))
    start = time.monotonic()
    gen = api.stream({}, "delayed", None, once=False)
    assert next(gen).startswith("retry:")
    first = next(gen)
    waited = time.monotonic() - start
    assert "r1" in first and 1.3 <= waited < 4, f"the delayed event came after {waited:.2f} s, not 1.5 s"
    gen.close()
    hub.add(1, 0, _attention("live", 2))
    live = api.stream({}, "live", None, once=True)
    next(live)
    start = time.monotonic()
    assert "r2" in next(live) and time.monotonic() - start < 0.5


def test_lag_sampler_reads_committed_offsets(topics: str, unique_topic: Any) -> None:
    from kafka import KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata

    topic = unique_topic("lag")
    group = f"lag-{topic}"
    bus.ensure_topics(topics, [topic], partitions=1)
    with bus.Producer(topics) as producer:
        for n in range(5):
            producer.send(topic, _attention("b", n))
    consumer = KafkaConsumer(bootstrap_servers=topics, group_id=group, enable_auto_commit=False)
    consumer.commit({TopicPartition(topic, 0): OffsetAndMetadata(2, "", -1)})
    consumer.close()
    sampler = metrics.LagSampler(metrics.kafka_lag(topics, [group], [topic]))
    assert sampler.sample_once() == 1
    assert metrics.CONSUMER_LAG.labels(group, topic, "0")._value.get() == 3


def test_ingest_counts_frames_in_and_refused(ingest_client: Any, venue: dict[str, Any]) -> None:
    from tests.venue.conftest import jpeg, now_us

    b7 = venue["b7"]
    before_in = metrics.FRAMES_IN._value.get()
    before_bad = metrics.FRAMES_REFUSED.labels("not_jpeg")._value.get()
    headers = {"Authorization": f"Bearer tok-cam-{b7}", "X-Capture-Time": str(now_us()), "X-Sequence": "1"}
    assert ingest_client.post(f"/ingest/v1/boards/{b7}/frames", data=jpeg(), headers=headers).status_code == 202
    assert ingest_client.post(f"/ingest/v1/boards/{b7}/frames", data=b"GIF89a" * 50, headers=headers).status_code == 415
    assert metrics.FRAMES_IN._value.get() == before_in + 1
    assert metrics.FRAMES_REFUSED.labels("not_jpeg")._value.get() == before_bad + 1
    text = ingest_client.get("/metrics").get_data(as_text=True)
    assert "xq_frames_in_total" in text and 'xq_frames_refused_total{reason="not_jpeg"}' in text


def test_up_starts_serves_and_stops_on_sigterm(tmp_path: Path) -> None:
    from xqarb.broker import free_port

    port = free_port()
    log = (tmp_path / "up.log").open("w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "xqarb.cli",
            "up",
            "--boards",
            "3",
            "--port",
            str(port),
            "--data-dir",
            str(tmp_path),
            "--partitions",
            "2",
            "--quiet",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        deadline = time.monotonic() + 60
        while "xqarb is up" not in (tmp_path / "up.log").read_text():
            assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "up.log").read_text()
            time.sleep(0.3)
        boards = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/api/boards", timeout=10).read())
        assert [b["board_id"] for b in boards["boards"]] == ["1", "2", "3"]
        venue = json.loads((tmp_path / "venue.json").read_text())
        assert (
            sorted(venue["boards"]) == ["1", "2", "3"] and oct((tmp_path / "venue.json").stat().st_mode)[-3:] == "600"
        )
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
        assert "xqarb up: stopped" in (tmp_path / "up.log").read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
        log.close()
