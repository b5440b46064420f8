"""Controller failover until every live broker's metadata is current: for each controller
election, when the last of the brokers the new controller found live applied an
UpdateMetadata of its epoch.

The brokers it found live are those it queued an UpdateMetadata of its epoch for
(`control_request_sent`, `api` UpdateMetadata) up to its `controller_failover_done`: the
failover's `update_metadata_sent` step tells every live broker. A broker applied it at
its first `request_accepted` of `api` UpdateMetadata and that `controller_epoch`, in
its own log (`broker<id>`). `metadata_current` decides this for one run from plain pandas
rows (pure; any thread): the report's per-run pass calls it on the executors' Python
workers (`pipeline.figures.failovers`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline import schemas

__all__ = [
    "ACCEPTED",
    "DONE",
    "ELECTED",
    "INPUT_COLUMNS",
    "METADATA",
    "SENT",
    "UPDATE_METADATA",
    "metadata_current",
]

UPDATE_METADATA = "UpdateMetadata"
ELECTED, DONE = "controller_elected", "controller_failover_done"
SENT, ACCEPTED = "control_request_sent", "request_accepted"
#: The event columns `metadata_current` reads.
INPUT_COLUMNS = ("run_id", "ts", "node", "kind", "api", "controller_epoch", "broker_id")
#: What `metadata_current` returns per controller election.
METADATA = schemas.METADATA_CURRENT


def metadata_current(events: pd.DataFrame) -> pd.DataFrame:
    """One row of `METADATA` per `controller_elected` in `events` (rows of `INPUT_COLUMNS`,
    of one run or of several, told apart by `run_id`): `live_brokers` the new controller
    found live (0 when its failover never finished), `brokers_updated` how many of them
    applied an UpdateMetadata of its epoch, and `metadata_ms` when the last of them did
    (`pd.NA` unless all did). A missing node or epoch matches nothing."""
    keys = ["run_id", "node", "controller_epoch"]
    kind, api = events["kind"], events["api"]
    elected = events.loc[kind == ELECTED, [*keys, "ts"]].reset_index(drop=True)
    elected["row"] = np.arange(len(elected))
    done = _first(events[kind == DONE], keys, "done_ms")
    found = elected.dropna(subset=keys).merge(done, on=keys)
    sent = events.loc[(kind == SENT) & (api == UPDATE_METADATA), [*keys, "ts", "broker_id"]]
    sent = sent.dropna(subset=[*keys, "broker_id"]).rename(columns={"ts": "sent_ms"})
    told = found.merge(sent, on=keys)
    told = told[(told["sent_ms"] >= told["ts"]) & (told["sent_ms"] <= told["done_ms"])]
    told = told[["row", "run_id", "controller_epoch", "broker_id"]].drop_duplicates(
        ["row", "broker_id"]
    )
    told["node"] = "broker" + told["broker_id"].astype("int64").astype(str)
    applied = _first(events[(kind == ACCEPTED) & (api == UPDATE_METADATA)], keys, "applied_ms")
    told = told.merge(applied, on=keys, how="left")
    per = told.groupby("row").agg(
        live_brokers=("broker_id", "size"),
        brokers_updated=("applied_ms", "count"),
        last_ms=("applied_ms", "max"),
    )
    out = elected.join(per, on="row")
    live = out["live_brokers"].fillna(0).astype("int64")
    updated = out["brokers_updated"].fillna(0).astype("int64")
    complete = (live > 0) & (updated == live)
    return pd.DataFrame(
        {
            "run_id": out["run_id"],
            "node": out["node"],
            "controller_epoch": pd.Series(
                [None if pd.isna(e) else int(e) for e in out["controller_epoch"]], dtype="object"
            ),
            "live_brokers": live,
            "brokers_updated": updated,
            "metadata_ms": out["last_ms"].where(complete).astype("Int64"),
        },
        columns=METADATA.names,
    )


def _first(rows: pd.DataFrame, keys: list[str], name: str) -> pd.DataFrame:
    """The earliest `ts` of `rows` per `keys` (missing keys left out), as `name`."""
    known = rows.dropna(subset=keys)
    return known.groupby(keys, sort=False)["ts"].min().rename(name).reset_index()
