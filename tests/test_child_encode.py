"""What the record says of a value a case hands back: the child packs its contents, the trusted
side reads them strictly and summarises them as valid JSON, with honest ranges and stable digests."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from paperproof.catalogue.run_result import EncodedValue
from paperproof.runner import child, summary, wire

_PACKER = child._packer(256 * 1024**2)
next(_PACKER)


def handed_back(value) -> tuple[str, object]:
    """(kind, body) as the harness reads them from what the child's packer wrote for `value`."""
    kind, body = _PACKER.send(value)
    message = wire.read(wire.HEADER.pack(wire.MAGIC, kind, len(body)) + body)
    return message.kind, message.body


def encode(value) -> dict:
    kind, body = handed_back(value)
    assert kind == "V", body
    return summary.encode(body)

arrays = hnp.arrays(
    dtype=st.sampled_from([np.float32, np.float64, np.int64, np.bool_]),
    shape=hnp.array_shapes(min_dims=1, max_dims=3, max_side=6),
    elements=None,
)


@settings(max_examples=150, deadline=None)
@given(arrays)
def test_arrays_encode_to_valid_json_with_honest_ranges(array):
    encoded = encode(array)
    text = json.dumps(encoded, allow_nan=False)  # never NaN or Infinity on the wire
    value = EncodedValue.model_validate_json(text)
    assert value.shape == list(array.shape)
    flat = array.astype(np.float64).ravel()
    assert value.finite == bool(np.isfinite(flat).all())
    good = flat[np.isfinite(flat)]
    if good.size:
        assert value.min == good.min() and value.max == good.max()
    assert encode(array.copy())["digest"] == encoded["digest"]


@settings(max_examples=100, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=5), inner, max_size=5),
                    max_leaves=20))
def test_any_plain_value_encodes(value):
    encoded = encode(value)
    EncodedValue.model_validate_json(json.dumps(encoded, allow_nan=False))


def test_frames_tuples_and_objects():
    frame = pd.DataFrame({"guid": [1, 2], "confidence": [0.5, math.nan]})
    encoded = EncodedValue.model_validate(encode(frame))
    assert encoded.type == "DataFrame" and encoded.keys == ["guid", "confidence"]
    assert encoded.values["confidence"].finite is False
    pair = EncodedValue.model_validate(encode((frame, {"n": 2})))
    assert pair.type == "tuple" and pair.items[1].type == "dict"
    assert encode(object())["type"] == "object"


def test_a_value_whose_repr_raises_is_refused():
    class Evil:
        def __repr__(self):
            raise RuntimeError("no")

    kind, reason = handed_back(Evil())
    assert kind == "U" and "its repr raised RuntimeError" in reason


def test_values_over_the_cap_are_refused_before_they_are_read():
    view = np.broadcast_to(np.float64(1.0), (10**6, 10**6))  # 7.3 TiB claimed, nothing allocated
    kind, reason = handed_back(view)
    assert kind == "U" and "over the 256 MiB cap on returned values" in reason
    small = child._packer(512)
    next(small)
    assert small.send(list(range(100)))[0] == b"U"


def test_huge_integers_and_failing_reprs_do_not_crash_the_packer():
    assert encode(10**5000)["repr"] == f"<int of {(10**5000).bit_length()} bits>"

    class Exits:
        def __repr__(self):
            raise SystemExit(3)

    assert handed_back(Exits())[0] == "U"
