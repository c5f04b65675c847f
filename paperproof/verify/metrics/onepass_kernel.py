"""The numba kernel behind ``onepass`` on the CPU: float32 logits [E, N, C] read once.

Each thread takes blocks of samples. Per epoch a block is transposed classes-first into a small
buffer, so that every later loop runs over samples and vectorises: the row maximum, the
exponentials, their sum and the statistics. ``exp`` is written out (exp(x) = 2^k · exp(r) with
|r| ≤ ln2/2, ln 2 split in two parts so that r is exact, and exp(r) by its Taylor series to r⁸,
whose truncation error, under 1e−9, is far below a float32 ulp) because numba's own ``np.exp`` is a
scalar libm call in these loops. Kept apart from ``onepass`` so that importing the
metric core never imports numba.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

_LOG2E = np.float32(1.4426950408889634)
_LN2_HI = np.float32(355 / 512)  # ln 2 to 9 bits, so k · _LN2_HI is exact for |k| < 2**15
_LN2_LO = np.float32(math.log(2) - 355 / 512)
# exp underflows below this; clamping keeps 2^k a normal float and changes the results by < 1e-37.
_X_MIN = np.float32(-87.0)


@njit(inline="always", fastmath={"contract"})
def _exp_parts(x):
    """exp(x) for x ≤ 0 as (exp(r), bits), r = x − k ln 2 and bits the float32 pattern of 2^k."""
    x = max(x, _X_MIN)
    k = np.floor(x * _LOG2E + np.float32(0.5))
    r = x - k * _LN2_HI - k * _LN2_LO
    # 1 + r + r²(1/2! + r/3! + … + r⁶/8!), by Horner's rule
    p = np.float32(1 / 40320) * r + np.float32(1 / 5040)
    p = p * r + np.float32(1 / 720)
    p = p * r + np.float32(1 / 120)
    p = p * r + np.float32(1 / 24)
    p = p * r + np.float32(1 / 6)
    p = p * r + np.float32(1 / 2)
    return p * r * r + r + np.float32(1.0), (np.int32(k) + np.int32(127)) << np.int32(23)


@njit(parallel=True, boundscheck=False, fastmath={"contract"}, cache=True)
def running_statistics(z, y, block):
    """Per sample: mean and M2 of the gold probability (float64), argmax hits counted, forgetting
    events (a hit followed by a miss), and whether it was ever learned.

    Buffers are allocated per block: measured, that costs less than splitting the block into a
    function of its own to hoist them per thread.
    """
    n_epochs, n, n_classes = z.shape
    mean_out = np.empty(n)
    m2_out = np.empty(n)
    count_out = np.empty(n, np.int64)
    events_out = np.empty(n, np.int64)
    learned_out = np.empty(n, np.bool_)
    for blk in prange((n + block - 1) // block):
        i0 = blk * block
        nb = min(block, n - i0)
        rows = np.empty((n_classes, block), np.float32)
        bits = np.empty((n_classes, block), np.int32)
        scale = bits.view(np.float32)
        top = np.empty(block, np.float32)
        total = np.empty(block, np.float32)
        gold = np.empty(block, np.float32)
        gold_mant = np.empty(block, np.float32)
        gold_bits = np.empty(block, np.int32)
        gold_scale = gold_bits.view(np.float32)
        n_top = np.empty(block, np.int32)
        hit = np.empty(block, np.bool_)
        mean = np.zeros(block)
        m2 = np.zeros(block)
        count = np.zeros(block, np.int64)
        events = np.zeros(block, np.int64)
        previous = np.zeros(block, np.bool_)
        learned = np.zeros(block, np.bool_)
        labels = np.empty(block, np.int64)
        for b in range(nb):
            labels[b] = y[i0 + b]
        for e in range(n_epochs):
            ze = z[e]
            for b in range(nb):
                gold[b] = ze[i0 + b, labels[b]]
                for c in range(n_classes):
                    rows[c, b] = ze[i0 + b, c]
            for b in range(nb):
                top[b] = rows[0, b]
            for c in range(1, n_classes):
                for b in range(nb):
                    v = rows[c, b]
                    top[b] = v if v > top[b] else top[b]
            for b in range(nb):
                n_top[b] = 0
                total[b] = 0
            for c in range(n_classes):
                for b in range(nb):
                    x = rows[c, b] - top[b]
                    n_top[b] += np.int32(x == np.float32(0))
                    mantissa, bits[c, b] = _exp_parts(x)
                    total[b] += mantissa * scale[c, b]  # read back as 2^k through the float view
            for b in range(nb):
                gold_mant[b], gold_bits[b] = _exp_parts(gold[b] - top[b])
            step = 1.0 / (e + 1)
            ties = 0
            for b in range(nb):
                p = np.float64(gold_mant[b] * gold_scale[b] / total[b])
                delta = p - mean[b]
                mean[b] += delta * step
                m2[b] += delta * (p - mean[b])
                hit[b] = (gold[b] == top[b]) & (n_top[b] == 1)
                ties += n_top[b] > 1
            if ties:  # the first maximum wins, as np.argmax; tie-free inputs never get here
                for b in range(nb):
                    if n_top[b] > 1 and gold[b] == top[b]:
                        first = 0
                        while rows[first, b] != top[b]:
                            first += 1
                        hit[b] = first == labels[b]
            for b in range(nb):
                h = hit[b]
                count[b] += h
                events[b] += previous[b] & ~h
                previous[b] = h
                learned[b] |= h
        for b in range(nb):
            mean_out[i0 + b] = mean[b]
            m2_out[i0 + b] = m2[b]
            count_out[i0 + b] = count[b]
            events_out[i0 + b] = events[b]
            learned_out[i0 + b] = learned[b]
    return mean_out, m2_out, count_out, events_out, learned_out
