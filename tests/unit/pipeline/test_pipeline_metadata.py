"""Controller failover until every live broker's metadata is current, decided without Spark
from a synthetic run's event logs and from hand-made rows; every answer computed by hand."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from bench.pipeline.synthetic import write_runs
from pipeline.metadata import INPUT_COLUMNS, metadata_current
from pipeline.testing import ELECTED, FAULT_START, METADATA_CURRENT, T0, metadata_rows, write_run


def _by_epoch(frame: pd.DataFrame) -> dict[tuple[str, int], dict[str, Any]]:
    return {(r["node"], r["controller_epoch"]): r for r in frame.to_dict("records")}


def test_the_last_live_broker_to_apply_the_new_epoch_sets_the_time(tmp_path: Path) -> None:
    write_run(tmp_path, "clean")
    got = _by_epoch(metadata_current(metadata_rows(tmp_path / "clean")))
    assert set(got) == {("broker1", 1), ("broker2", 2)}
    # the first controller told brokers 1, 2, 3; they applied at +125, +130, +140
    assert got[("broker1", 1)]["live_brokers"] == 3
    assert got[("broker1", 1)]["brokers_updated"] == 3
    assert got[("broker1", 1)]["metadata_ms"] == T0 + 140
    # its successor told brokers 2 and 3 (1 was dead): 2 at +30, 3 at +180, after the
    # failover was done (+150)
    assert got[("broker2", 2)]["live_brokers"] == 2
    assert got[("broker2", 2)]["brokers_updated"] == 2
    assert got[("broker2", 2)]["metadata_ms"] == METADATA_CURRENT == ELECTED + 180
    assert METADATA_CURRENT - FAULT_START == 6_180


def test_a_controller_whose_failover_never_finished_found_no_live_broker(
    tmp_path: Path,
) -> None:
    write_run(tmp_path, "two", breaks=frozenset({"two_controllers"}))
    got = _by_epoch(metadata_current(metadata_rows(tmp_path / "two")))
    rival = got[("broker3", 2)]
    assert (rival["live_brokers"], rival["brokers_updated"]) == (0, 0)
    assert pd.isna(rival["metadata_ms"])
    assert got[("broker2", 2)]["metadata_ms"] == METADATA_CURRENT


def _event(ts: int, node: str, kind: str, epoch: int, **fields: Any) -> dict[str, Any]:
    return {"run_id": "r", "ts": ts, "node": node, "kind": kind, "controller_epoch": epoch} | fields


def _frame(*events: dict[str, Any]) -> pd.DataFrame:
    return pd.DataFrame(list(events), columns=list(INPUT_COLUMNS))


def _sent(ts: int, broker: int, epoch: int = 5) -> dict[str, Any]:
    return _event(
        ts, "broker1", "control_request_sent", epoch, api="UpdateMetadata", broker_id=broker
    )


def _applied(ts: int, broker: int, epoch: int = 5, api: str = "UpdateMetadata") -> dict[str, Any]:
    return _event(ts, f"broker{broker}", "request_accepted", epoch, api=api)


def test_a_live_broker_that_never_applied_the_epoch_leaves_it_not_current() -> None:
    frame = _frame(
        _event(100, "broker1", "controller_elected", 5),
        _sent(110, 1),
        _sent(110, 2),
        _applied(120, 1),
        _applied(130, 2, epoch=4),  # an older controller's
        _applied(140, 2, api="LeaderAndIsr"),  # not metadata
        _event(150, "broker1", "controller_failover_done", 5),
    )
    [row] = metadata_current(frame).to_dict("records")
    assert (row["live_brokers"], row["brokers_updated"]) == (2, 1)
    assert pd.isna(row["metadata_ms"])


def test_only_the_failovers_own_requests_name_the_live_brokers() -> None:
    frame = _frame(
        _event(100, "broker1", "controller_elected", 5),
        _sent(110, 1),
        _sent(110, 1),  # sent twice: one broker
        _event(150, "broker1", "controller_failover_done", 5),
        _sent(160, 3),  # after the failover: a broker that came later
        _sent(170, 2, epoch=6),  # another epoch
        _applied(180, 1),
        _applied(190, 1),  # applied again: the first one counts
    )
    [row] = metadata_current(frame).to_dict("records")
    assert (row["live_brokers"], row["brokers_updated"], row["metadata_ms"]) == (1, 1, 180)


def test_no_election_gives_no_rows() -> None:
    assert metadata_current(_frame(_applied(10, 1))).empty


def test_the_first_of_rows_equal_but_for_ts_gives_the_same_answer(tmp_path: Path) -> None:
    """What the Spark job hands over: one row per key, at its earliest `ts`."""
    made = write_runs(tmp_path, 8_000, seed=5)
    keys = [c for c in INPUT_COLUMNS if c != "ts"]
    for run in sorted(made.root.iterdir()):
        rows = metadata_rows(run)
        first = rows.groupby(keys, dropna=False, as_index=False)["ts"].min()
        assert len(first) < len(rows)
        whole = metadata_current(rows).sort_values(["node", "controller_epoch"])
        reduced = metadata_current(first[list(INPUT_COLUMNS)])
        pd.testing.assert_frame_equal(
            whole.reset_index(drop=True),
            reduced.sort_values(["node", "controller_epoch"]).reset_index(drop=True),
        )
