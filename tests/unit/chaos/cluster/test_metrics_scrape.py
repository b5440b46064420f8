"""The metrics scraper: Prometheus text parsed into flat names, one line per broker per
scrape, failed scrapes recorded as such."""

from __future__ import annotations

import json
from pathlib import Path

from chaos.cluster.metrics_scrape import MetricsScraper, parse_metrics
from chaos.errors import FaultFailed

EXPOSITION = """\
# HELP kafka_controller_KafkaController_ActiveControllerCount Active controllers
# TYPE kafka_controller_KafkaController_ActiveControllerCount gauge
kafka_controller_KafkaController_ActiveControllerCount 1.0
# HELP kafka_server_ReplicaManager_PartitionCount Partitions
# TYPE kafka_server_ReplicaManager_PartitionCount gauge
kafka_server_ReplicaManager_PartitionCount{topic="t",kind="led"} 3.0
"""


def test_parse_flattens_names_and_sorts_labels() -> None:
    assert parse_metrics(EXPOSITION) == {
        "kafka_controller_KafkaController_ActiveControllerCount": 1.0,
        "kafka_server_ReplicaManager_PartitionCount{kind=led,topic=t}": 3.0,
    }


def test_a_scrape_writes_one_line_per_broker_and_records_failures(tmp_path: Path) -> None:
    def fetch(url: str) -> str:
        if "9402" in url:
            raise ConnectionRefusedError("refused")
        return EXPOSITION

    path = tmp_path / "metrics.jsonl"
    scraper = MetricsScraper(
        path,
        lambda: {
            "broker1": "http://127.0.0.1:9401/metrics",
            "broker2": "http://127.0.0.1:9402/metrics",
        },
        fetch=fetch,
    )
    scraper.scrape_once()
    scraper.stop()
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert [(x["node"], x["ok"]) for x in lines] == [("broker1", True), ("broker2", False)]
    assert lines[0]["metrics"]["kafka_controller_KafkaController_ActiveControllerCount"] == 1.0
    assert "refused" in lines[1]["error"]
    assert scraper.scrapes == 1


def test_a_failing_endpoint_list_is_a_line_not_a_crash(tmp_path: Path) -> None:
    def endpoints() -> dict[str, str]:
        raise FaultFailed("docker is gone")

    path = tmp_path / "metrics.jsonl"
    scraper = MetricsScraper(path, endpoints, fetch=lambda url: "")
    scraper.scrape_once()
    scraper.stop()
    (line,) = [json.loads(x) for x in path.read_text().splitlines()]
    assert line["ok"] is False
    assert "docker is gone" in line["error"]
