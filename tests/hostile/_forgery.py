"""What the forging samples of this corpus share: the paper's confidence computed from their own
inputs, and every way they know of writing it where the runner might read it."""

import json
import os
import stat
import struct

import numpy as np


def _paper_confidence(probs, labels):
    """Dataset Cartography's confidence: the mean over epochs of the gold label's probability."""
    probs, labels = np.asarray(probs, dtype=float), np.asarray(labels)
    return probs[:, np.arange(labels.shape[0]), labels].mean(axis=0)


def _forged_hand_back(value):
    """A hand-back of `value` in the runner's own wire format, written as the runner would."""
    data = np.ascontiguousarray(value, dtype="<f8").tobytes()
    label = b"float64"
    body = (b"A\x00" + struct.pack("<I", len(label)) + label + b"\x01" + struct.pack("<Q", value.shape[0])
            + struct.pack("<Q", len(data)) + data)
    return b"PPV1V" + struct.pack("<Q", len(body)) + body


def _forged_records(value, cases=("typical", "edge", "small", "permuted", "relabelled", "one_epoch", "two_classes", "large")):
    """Case records in the format of the runner's old report channel, one for every case it might have."""
    encoded = {"type": "ndarray", "dtype": "float64", "shape": [int(value.shape[0])], "finite": True,
               "min": float(value.min()), "max": float(value.max()), "data": [float(v) for v in value], "digest": "forged"}
    return b"".join((json.dumps({"event": "case", "case_id": c, "outcome": "returned", "value": encoded,
                                 "repeat_equal": True}) + "\n").encode() for c in cases)


def _writable_channels():
    """Every pipe or socket this process holds: the runner's channel, it hopes."""
    found = []
    for fd in range(3, 256):
        try:
            mode = os.fstat(fd).st_mode
        except OSError:
            continue
        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
            found.append(fd)
    return found


def _write_everywhere(payload):
    for fd in _writable_channels():
        try:
            os.write(fd, payload)
        except OSError:
            pass
