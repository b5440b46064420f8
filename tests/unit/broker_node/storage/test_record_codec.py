"""The on-disk record format: round trips, sizes, and every kind of damage detected."""

from __future__ import annotations

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


def test_fields_that_do_not_fit_raise_value_error() -> None:
    with pytest.raises(ValueError, match="does not fit"):
        encode_record(Record(0, 2**31, 0, None, b""))
