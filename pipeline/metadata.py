"""Controller failover until every live broker's metadata is current: for each controller
election, when the last of the brokers the new controller found live applied an
UpdateMetadata of its epoch.

The brokers it found live are those it queued an UpdateMetadata of its epoch for
(`control_request_sent`, `api` UpdateMetadata) up to its `controller_failover_done`: the
failover's `update_metadata_sent` step tells every live broker. A broker applied it at
its first `request_accepted` of `api` UpdateMetadata and that `controller_epoch`, in
its own log (`broker<id>`). `metadata_current` decides this for one run from plain pandas
rows (pure; any thread); `metadata_frame` runs it per run on the executors' Python
workers (`applyInPandas`), built on the driver's thread.
"""

from __future__ import annotations

import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pipeline import schemas

__all__ = ["METADATA", "UPDATE_METADATA", "metadata_current", "metadata_frame"]

UPDATE_METADATA = "UpdateMetadata"
ELECTED, DONE = "controller_elected", "controller_failover_done"
SENT, ACCEPTED = "control_request_sent", "request_accepted"
#: The event columns `metadata_current` reads.
INPUT_COLUMNS = ("run_id", "ts", "node", "kind", "api", "controller_epoch", "broker_id")
#: What `metadata_current` returns per controller election.
METADATA = schemas.METADATA_CURRENT


def _none_if_na(value: object) -> int | None:
    return None if pd.isna(value) else int(value)  # type: ignore[call-overload]


def metadata_current(events: pd.DataFrame) -> pd.DataFrame:
    """One row of `METADATA` per `controller_elected` in `events` (one run's rows of
    `INPUT_COLUMNS`): `live_brokers` the new controller found live (0 when its failover
    never finished), `brokers_updated` how many of them applied an UpdateMetadata of its epoch, and
    `metadata_ms` when the last of them did (`pd.NA` unless all did)."""
    columns = [f.name for f in METADATA.fields]
    elected = events[events["kind"] == ELECTED]
    if elected.empty:
        return pd.DataFrame([], columns=columns).astype({"metadata_ms": "Int64"})
    done = events[events["kind"] == DONE].groupby(["node", "controller_epoch"])["ts"].min()
    sent = events[(events["kind"] == SENT) & (events["api"] == UPDATE_METADATA)]
    accepted = events[(events["kind"] == ACCEPTED) & (events["api"] == UPDATE_METADATA)]
    applied = accepted.groupby(["node", "controller_epoch"])["ts"].min()
    rows = []
    for e in elected.itertuples(index=False):
        done_ms = done.get((e.node, e.controller_epoch))
        brokers: list[int] = []
        if done_ms is not None:
            mine = sent[
                (sent["node"] == e.node)
                & (sent["controller_epoch"] == e.controller_epoch)
                & (sent["ts"] >= e.ts)
                & (sent["ts"] <= done_ms)
            ]
            brokers = sorted({int(b) for b in mine["broker_id"].dropna()})
        times = [applied.get((f"broker{b}", e.controller_epoch)) for b in brokers]
        got = [int(t) for t in times if t is not None]
        rows.append(
            {
                "run_id": e.run_id,
                "node": e.node,
                "controller_epoch": _none_if_na(e.controller_epoch),
                "live_brokers": len(brokers),
                "brokers_updated": len(got),
                "metadata_ms": max(got) if brokers and len(got) == len(brokers) else None,
            }
        )
    return pd.DataFrame(rows, columns=columns).astype({"metadata_ms": "Int64"})


def metadata_frame(events: DataFrame) -> DataFrame:
    """`metadata_current` of every run of `events` (the `RunFrames.events` frame). Only the
    first of equal rows but for `ts` goes to Python: `metadata_current` reads no other
    (an epoch's first election, failover end, request to a broker and application by a
    broker), so the answer is the same, from a few rows per run instead of every
    UpdateMetadata."""
    wanted = F.col("kind").isin(ELECTED, DONE) | (
        F.col("kind").isin(SENT, ACCEPTED) & (F.col("api") == UPDATE_METADATA)
    )
    keys = [c for c in INPUT_COLUMNS if c != "ts"]
    return (
        events.where(wanted)
        .groupBy(*keys)
        .agg(F.min("ts").alias("ts"))
        .select(*INPUT_COLUMNS)
        .groupBy("run_id")
        .applyInPandas(metadata_current, schema=METADATA)
    )
