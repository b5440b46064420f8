"""Periodic scrapes of every broker's Prometheus endpoint into the run's `metrics.jsonl`.

One line per broker per scrape: `{"ts": <ms>, "node": "broker2", "ok": true,
"metrics": {"<name>{<labels>}": <value>, ...}}`; a failed scrape is a line with `ok`
false and the error, so gaps in the figures are explained rather than silent. Only
gauges and counters are kept (summaries as their `_count` and `_sum`).

`MetricsScraper` runs one daemon thread, `chaos-metrics-scraper`; `parse_metrics` is pure.
Every scrape goes to a loopback address (the brokers' published ports).
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from chaos.errors import ChaosError
from eventlog.jsonlines import JsonLinesWriter

#: Seconds between scrapes, and the deadline of one scrape.
INTERVAL_S = 2.0
TIMEOUT_S = 2.0


def parse_metrics(text: str) -> dict[str, float]:
    """Prometheus text exposition -> `{"name{label=value,...}": value}`, labels sorted."""
    values: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
            values[f"{sample.name}{{{labels}}}" if labels else sample.name] = float(sample.value)
    return values


def fetch_metrics(url: str) -> str:
    """The text a Prometheus endpoint answers (`OSError` when it does not)."""
    with urllib.request.urlopen(url, timeout=TIMEOUT_S) as reply:
        body: bytes = reply.read()
    return body.decode("utf-8", errors="replace")


class MetricsScraper:
    """Scrapes `endpoints` (node -> `http://127.0.0.1:<port>/metrics`) every `interval_s`
    into `path` until `stop()`. `endpoints` is a callable so that a broker whose published
    port changed after a restart is found again."""

    def __init__(
        self,
        path: Path,
        endpoints: Callable[[], Mapping[str, str]],
        interval_s: float = INTERVAL_S,
        fetch: Callable[[str], str] = fetch_metrics,
    ) -> None:
        self._writer = JsonLinesWriter(path)
        self._endpoints = endpoints
        self._interval_s = interval_s
        self._fetch = fetch
        self._halt = threading.Event()
        self._thread = threading.Thread(target=self._run, name="chaos-metrics-scraper", daemon=True)
        self.scrapes = 0

    def start(self) -> None:
        """Start scraping."""
        self._thread.start()

    def stop(self) -> None:
        """Stop after the scrape in progress and close the file."""
        self._halt.set()
        if self._thread.is_alive():
            self._thread.join()
        self._writer.close()

    def scrape_once(self) -> None:
        """One scrape of every endpoint (also what the thread does each interval)."""
        try:
            endpoints = dict(self._endpoints())
        except (ChaosError, OSError) as exc:  # the cluster handle failed: one line says so
            self._line({"ts": _now_ms(), "node": "*", "ok": False, "error": repr(exc)})
            return
        for node, url in sorted(endpoints.items()):
            line: dict[str, object] = {"ts": _now_ms(), "node": node}
            try:
                line.update(ok=True, metrics=parse_metrics(self._fetch(url)))
            except (OSError, urllib.error.URLError, ValueError) as exc:
                line.update(ok=False, error=f"{type(exc).__name__}: {exc}")
            self._line(line)
        self.scrapes += 1

    def _line(self, line: Mapping[str, object]) -> None:
        self._writer.append(json.dumps(line, separators=(",", ":"), sort_keys=True))

    def _run(self) -> None:
        while not self._halt.is_set():
            self.scrape_once()
            self._halt.wait(self._interval_s)


def _now_ms() -> int:
    return int(time.time() * 1000)
