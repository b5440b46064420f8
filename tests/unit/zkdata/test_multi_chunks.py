"""How the controller's fenced writes are cut into multis: by operation count and by bytes,
so that no multi reaches ZooKeeper's 1 MiB request limit (`zkdata.fenced_writes`)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from zkdata.fenced_writes import (
    MAX_MULTI_BYTES,
    MAX_OPS_PER_MULTI,
    Create,
    Delete,
    SetData,
    multi_chunks,
    op_bytes,
)

ZK_REQUEST_LIMIT = 1024 * 1024


def _state(i: int, data_bytes: int = 80) -> SetData:
    return SetData(f"/brokers/topics/t/partitions/{i}/state", b"x" * data_bytes, 0)


def test_small_writes_go_in_multis_of_the_operation_limit() -> None:
    ops = [_state(i) for i in range(2 * MAX_OPS_PER_MULTI + 1)]
    chunks = multi_chunks(ops)
    assert [len(c) for c in chunks] == [MAX_OPS_PER_MULTI, MAX_OPS_PER_MULTI, 1]
    assert [op for c in chunks for op in c] == ops


def test_large_writes_are_cut_by_bytes_below_the_request_limit() -> None:
    ops = [_state(i, data_bytes=4_000) for i in range(1_000)]  # ~4 MB in all
    chunks = multi_chunks(ops)
    assert len(chunks) > 4
    assert all(sum(op_bytes(op) for op in c) <= MAX_MULTI_BYTES for c in chunks)
    assert MAX_MULTI_BYTES < ZK_REQUEST_LIMIT
    assert [op for c in chunks for op in c] == ops


def test_an_operation_above_the_byte_limit_goes_alone() -> None:
    huge = Create("/big", b"y" * (MAX_MULTI_BYTES + 1))
    chunks = multi_chunks([_state(0), huge, _state(1)])
    assert [list(c) for c in chunks] == [[_state(0)], [huge], [_state(1)]]


def test_no_operations_make_no_multi() -> None:
    assert multi_chunks([]) == []


@given(
    st.lists(
        st.one_of(
            st.builds(lambda n: Delete(f"/d/{n}"), st.integers(0, 99)),
            st.builds(lambda n: Create(f"/c/{n}", b"z" * n), st.integers(0, 3_000)),
        ),
        max_size=300,
    ),
    st.integers(1, 50),
    st.integers(100, 20_000),
)
def test_chunks_keep_order_and_respect_both_limits(
    ops: list[Create | Delete], max_ops: int, max_bytes: int
) -> None:
    chunks = multi_chunks(ops, max_ops, max_bytes)
    assert [op for c in chunks for op in c] == ops
    for c in chunks:
        assert 1 <= len(c) <= max_ops
        assert len(c) == 1 or sum(op_bytes(op) for op in c) <= max_bytes
