"""The on-disk record format: round trips, sizes, and every kind of damage detected."""

from __future__ import annotations

import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from broker_node.storage import CorruptLogError, Record
from broker_node.storage.errors import InvalidRecordError
from broker_node.storage.record import (
    LENGTH_PREFIX_BYTES,
    PEEK_OFFSET_BYTES,
    RECORD_OVERHEAD,
    decode_record,
    encode_record,
    encoded_size,
    peek_offset,
    record_length,
    scan_encoded,
    split_records,
)

records = st.builds(
    Record,
    offset=st.integers(0, 2**63 - 1),
    leader_epoch=st.integers(0, 2**31 - 1),
    timestamp_ms=st.integers(-(2**63), 2**63 - 1),
    key=st.none() | st.binary(max_size=64),
    value=st.binary(max_size=256),
)


@given(records)
def test_every_record_round_trips_and_has_its_predicted_size(record: Record) -> None:
    data = encode_record(record)
    assert len(data) == encoded_size(record.key, record.value)
    assert record_length(data[:LENGTH_PREFIX_BYTES], 0) == len(data)
    assert decode_record(data, 0) == record
    assert peek_offset(data[:PEEK_OFFSET_BYTES]) == record.offset


def test_null_and_empty_keys_stay_distinct() -> None:
    null_key = Record(0, 0, 0, None, b"v")
    empty_key = Record(0, 0, 0, b"", b"v")
    assert decode_record(encode_record(null_key), 0).key is None
    assert decode_record(encode_record(empty_key), 0).key == b""


def test_an_empty_record_takes_the_fixed_overhead() -> None:
    assert len(encode_record(Record(0, 0, 0, None, b""))) == RECORD_OVERHEAD == 36


@given(records, st.data())
def test_any_flipped_byte_after_the_length_field_is_detected(
    record: Record, data: st.DataObject
) -> None:
    encoded = bytearray(encode_record(record))
    position = data.draw(st.integers(LENGTH_PREFIX_BYTES, len(encoded) - 1))
    encoded[position] ^= data.draw(st.integers(1, 255))
    with pytest.raises(InvalidRecordError):
        decode_record(bytes(encoded), 7)


@given(records, st.data())
def test_a_truncated_record_is_detected(record: Record, data: st.DataObject) -> None:
    encoded = encode_record(record)
    cut = data.draw(st.integers(0, len(encoded) - 1))
    with pytest.raises(InvalidRecordError):
        decode_record(encoded[:cut], 0)


def test_a_length_field_below_the_minimum_is_invalid() -> None:
    with pytest.raises(InvalidRecordError) as excinfo:
        record_length((3).to_bytes(4, "big"), 40)
    assert excinfo.value.position == 40
    assert isinstance(excinfo.value, CorruptLogError)


@given(st.lists(records, max_size=5))
def test_a_scan_names_the_records_that_a_split_decodes(batch: list[Record]) -> None:
    data = b"".join(encode_record(r) for r in batch)
    lengths, offsets, epochs = scan_encoded(data)
    decoded, encoded = split_records(data)
    assert lengths == [len(e) for e in encoded]
    assert offsets == [r.offset for r in decoded]
    assert epochs == [r.leader_epoch for r in decoded]


@given(st.lists(records, min_size=1, max_size=3), st.data())
def test_a_scan_refuses_exactly_what_a_split_refuses(
    batch: list[Record], data: st.DataObject
) -> None:
    encoded = bytearray(b"".join(encode_record(r) for r in batch))
    if data.draw(st.booleans()):
        position = data.draw(st.integers(0, len(encoded) - 1))
        encoded[position] ^= data.draw(st.integers(1, 255))
    else:
        del encoded[data.draw(st.integers(0, len(encoded) - 1)) :]
    damaged = bytes(encoded)
    try:
        split_records(damaged)
    except InvalidRecordError:
        with pytest.raises(InvalidRecordError):
            scan_encoded(damaged)
    else:
        scan_encoded(damaged)


@pytest.mark.parametrize(("key_length", "reason"), [(-2, "key length"), (5, "value length")])
def test_a_scan_refuses_lengths_that_disagree_even_under_a_good_crc(
    key_length: int, reason: str
) -> None:
    """A record whose key length does not fit its length field, with a CRC computed over
    the wrong bytes, as only a broken leader would write it."""
    body = bytearray(encode_record(Record(0, 0, 0, b"k", b"value"))[8:])
    body[20:24] = key_length.to_bytes(4, "big", signed=True)
    data = len(body + b"crc_").to_bytes(4, "big") + zlib.crc32(body).to_bytes(4, "big") + body
    with pytest.raises(InvalidRecordError, match=reason):
        scan_encoded(bytes(data))
    with pytest.raises(InvalidRecordError, match=reason):
        split_records(bytes(data))


def test_fields_that_do_not_fit_raise_value_error() -> None:
    with pytest.raises(ValueError, match="does not fit"):
        encode_record(Record(0, 2**31, 0, None, b""))
