"""The on-disk batch format: round trips, sizes, splits of consecutive batches, torn tails,
every kind of damage detected, and the earlier per-record format told apart."""

from __future__ import annotations

import struct
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from broker_node.storage import CorruptLogError, Record
from broker_node.storage.errors import InvalidRecordError
from broker_node.storage.record import (
    BATCH_HEADER_BYTES,
    RECORD_OVERHEAD,
    batch_header,
    decode_batch,
    encode_batch,
    encode_records,
    encoded_size,
    legacy_head,
    scan_batches,
    split_batches,
)

payloads = st.tuples(
    st.none() | st.binary(max_size=64),
    st.binary(max_size=256),
    st.integers(-(2**63), 2**63 - 1),
)
batches = st.tuples(
    st.integers(0, 2**62),
    st.integers(0, 2**31 - 1),
    st.lists(payloads, min_size=1, max_size=6),
)


Payload = list[tuple[bytes | None, bytes, int]]


def as_records(base: int, epoch: int, payload: Payload) -> list[Record]:
    return [Record(base + i, epoch, ts, key, value) for i, (key, value, ts) in enumerate(payload)]


@given(batches)
def test_every_batch_round_trips_and_has_its_predicted_size(
    batch: tuple[int, int, list[tuple[bytes | None, bytes, int]]],
) -> None:
    base, epoch, payload = batch
    data = encode_batch(base, epoch, payload)
    assert len(data) == BATCH_HEADER_BYTES + sum(encoded_size(k, v) for k, v, _ in payload)
    assert decode_batch(data, 0) == as_records(base, epoch, payload)
    header = batch_header(data[:BATCH_HEADER_BYTES], 0)
    assert header == (base, len(data), epoch, len(payload))
    assert header.next_offset == base + len(payload)
    assert not legacy_head(data, base)


def test_null_and_empty_keys_stay_distinct() -> None:
    records = decode_batch(encode_batch(0, 0, [(None, b"v", 0), (b"", b"v", 0)]), 0)
    assert [r.key for r in records] == [None, b""]


def test_an_empty_record_takes_the_fixed_overhead() -> None:
    assert len(encode_batch(0, 0, [(None, b"", 0)])) == BATCH_HEADER_BYTES + RECORD_OVERHEAD
    assert (BATCH_HEADER_BYTES, RECORD_OVERHEAD) == (45, 20)


@given(st.lists(batches, max_size=4))
def test_consecutive_batches_split_into_their_records_and_bytes(
    many: list[tuple[int, int, list[tuple[bytes | None, bytes, int]]]],
) -> None:
    encoded = [encode_batch(*batch) for batch in many]
    records, pieces = split_batches(b"".join(encoded))
    assert pieces == encoded
    assert records == [r for batch in many for r in as_records(*batch)]
    headers = scan_batches(b"".join(encoded))
    assert [(h.base_offset, h.size, h.leader_epoch) for h in headers] == [
        (base, len(one), epoch) for (base, epoch, _), one in zip(many, encoded, strict=True)
    ]


@given(st.lists(st.integers(0, 3), min_size=1, max_size=8), st.integers(0, 100))
def test_records_make_one_batch_per_run_of_one_epoch(steps: list[int], first: int) -> None:
    epochs = [sum(steps[: i + 1]) for i in range(len(steps))]
    records = [Record(first + i, epoch, i, None, b"v") for i, epoch in enumerate(epochs)]
    encoded = encode_records(records)
    assert len(encoded) == len(set(epochs))
    assert split_batches(b"".join(encoded))[0] == records


def test_records_with_a_gap_make_no_batch() -> None:
    with pytest.raises(ValueError, match="gap"):
        encode_records([Record(0, 0, 0, None, b""), Record(2, 0, 0, None, b"")])


@given(batches, st.data())
def test_any_flipped_byte_after_the_base_offset_is_detected(
    batch: tuple[int, int, list[tuple[bytes | None, bytes, int]]], data: st.DataObject
) -> None:
    """The base offset is checked by where the batch lands in a log, the length and epoch
    by the header checks and the append checks, every other byte by the CRC."""
    base, epoch, payload = batch
    encoded = bytearray(encode_batch(base, epoch, payload))
    position = data.draw(st.sampled_from([*range(8, 12), *range(16, len(encoded))]))
    encoded[position] ^= data.draw(st.integers(1, 255))
    with pytest.raises(InvalidRecordError):
        decode_batch(bytes(encoded), 7)
    with pytest.raises(InvalidRecordError):
        scan_batches(bytes(encoded))


@given(st.lists(batches, min_size=1, max_size=3), st.data())
def test_a_torn_tail_is_detected_wherever_it_is_cut(
    many: list[tuple[int, int, list[tuple[bytes | None, bytes, int]]]], data: st.DataObject
) -> None:
    encoded = [encode_batch(*batch) for batch in many]
    joined = b"".join(encoded)
    cut = data.draw(st.integers(0, len(joined) - 1))
    ends = {sum(len(one) for one in encoded[:n]) for n in range(len(encoded) + 1)}
    if cut in ends:  # a cut between batches leaves whole batches
        assert len(scan_batches(joined[:cut])) == sorted(ends).index(cut)
        return
    with pytest.raises(InvalidRecordError, match="torn"):
        scan_batches(joined[:cut])
    with pytest.raises(InvalidRecordError, match="torn"):
        split_batches(joined[:cut])


def test_a_header_that_cannot_start_a_batch_is_invalid() -> None:
    good = encode_batch(5, 1, [(None, b"v", 0)])
    for damaged, reason in [
        (good[:16] + b"\x01" + good[17:], "magic"),
        (good[:8] + (3).to_bytes(4, "big") + good[12:], "below the minimum"),
        (good[:21] + (4).to_bytes(4, "big") + good[25:], "last offset delta"),
        (good[:10], "torn batch header"),
    ]:
        with pytest.raises(InvalidRecordError, match=reason) as excinfo:
            batch_header(damaged[:BATCH_HEADER_BYTES], 40)
        assert excinfo.value.position == 40
        assert isinstance(excinfo.value, CorruptLogError)


@pytest.mark.parametrize(
    ("field", "length", "reason"),
    [(0, -2, "key length"), (0, 5, "value length"), (5, 3, "after the last")],
    ids=["negative-key", "key-too-long", "value-too-short"],
)
def test_records_that_do_not_fill_their_batch_are_refused_even_under_a_good_crc(
    field: int, length: int, reason: str
) -> None:
    """A record whose key or value length disagrees with the batch, CRC computed over the
    wrong bytes, as only a broken leader would write it: a scan (which checks only the
    CRC) passes it, decoding refuses it."""
    data = bytearray(encode_batch(0, 0, [(b"k", b"value", 0)]))
    at = BATCH_HEADER_BYTES + 12 + field  # the key length field, or the value's
    data[at : at + 4] = length.to_bytes(4, "big", signed=True)
    data[17:21] = zlib.crc32(bytes(data[21:])).to_bytes(4, "big")
    assert len(scan_batches(bytes(data))) == 1
    with pytest.raises(InvalidRecordError, match=reason):
        decode_batch(bytes(data), 0)
    with pytest.raises(InvalidRecordError, match=reason):
        split_batches(bytes(data))


def test_fields_that_do_not_fit_raise_value_error() -> None:
    with pytest.raises(ValueError, match="does not fit"):
        encode_batch(0, 2**31, [(None, b"", 0)])
    with pytest.raises(ValueError, match="at least one"):
        encode_batch(0, 0, [])


def per_record(offset: int, epoch: int) -> bytes:
    """A record in the per-record format that preceded batches."""
    body = struct.pack(">qiqii", offset, epoch, 1000, -1, 1) + b"v"
    return struct.pack(">II", len(body) + 4, zlib.crc32(body)) + body


@given(st.integers(0, 2**40), st.integers(0, 2**31 - 1))
def test_a_segment_in_the_per_record_format_is_told_apart(base: int, epoch: int) -> None:
    old = per_record(base, epoch)
    assert legacy_head(old, base)
    assert legacy_head(old + per_record(base + 1, epoch), base)
    assert not legacy_head(encode_batch(base, epoch, [(None, b"v", 1000)]), base)
    assert not legacy_head(b"", base)
