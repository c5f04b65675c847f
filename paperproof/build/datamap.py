"""The data map figure: confidence against variability, coloured by correctness, from the metric core.

Drawn on a synthetic training run (the fixtures' generator), so every paper whose repositories
implement data-map metrics shows what the paper's definitions produce. The SVG is written by a
template with fixed-precision numbers, so it is byte-identical from build to build.
"""

from __future__ import annotations

from dataclasses import dataclass

from paperproof.fixtures.values import dynamics

DATA_MAP_METRICS = frozenset({"confidence", "variability", "correctness"})
SEED, EPOCHS, SAMPLES, CLASSES = 2020, 10, 400, 4
WIDTH, HEIGHT, MARGIN = 480, 400, 48
# Correctness bands, low to high; colours chosen for contrast on white and for colour-blind readers.
BANDS = ((0.2, "#b2182b"), (0.4, "#ef8a62"), (0.6, "#999999"), (0.8, "#67a9cf"), (1.01, "#2166ac"))


@dataclass(frozen=True)
class Point:
    x: float
    y: float
    colour: str


def points() -> tuple[list[Point], float]:
    """The samples as plot coordinates, and the largest variability (the x axis' extent)."""
    from paperproof.verify.metrics import confidence, correctness, variability

    logits, labels = dynamics(SEED, EPOCHS, SAMPLES, CLASSES)
    conf = confidence(logits, labels, device="cpu").numpy()
    var = variability(logits, labels, device="cpu").numpy()
    corr = correctness(logits, labels, device="cpu").numpy()
    span_x = max(float(var.max()), 1e-9)
    out = []
    for c, v, k in zip(conf, var, corr):
        colour = next(colour for limit, colour in BANDS if k < limit)
        x = MARGIN + (WIDTH - 2 * MARGIN) * float(v) / span_x
        y = HEIGHT - MARGIN - (HEIGHT - 2 * MARGIN) * float(c)
        out.append(Point(round(x, 1), round(y, 1), colour))
    return out, span_x


def svg() -> str:
    plotted, span_x = points()
    dots = "\n".join(f'<circle cx="{p.x:.1f}" cy="{p.y:.1f}" r="3" fill="{p.colour}" fill-opacity="0.8"/>' for p in plotted)
    legend = "\n".join(
        f'<rect x="{WIDTH - MARGIN + 6}" y="{MARGIN + 18 * i}" width="10" height="10" fill="{colour}"/>'
        f'<text x="{WIDTH - MARGIN + 20}" y="{MARGIN + 18 * i + 9}" font-size="10">'
        f'{"&lt;" if limit <= 1 else "≤"}{min(limit, 1.0):.1f}</text>'
        for i, (limit, colour) in enumerate(BANDS)
    )
    bottom, right = HEIGHT - MARGIN, WIDTH - MARGIN
    return f"""<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH + 40} {HEIGHT}" role="img" aria-labelledby="dm-title dm-desc">
<title id="dm-title">Data map</title>
<desc id="dm-desc">Confidence against variability for {SAMPLES} samples of a synthetic training run of {EPOCHS} epochs, coloured by correctness, computed by paperproof's reference metric core.</desc>
<rect width="100%" height="100%" fill="#ffffff"/>
<line x1="{MARGIN}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#333"/>
<line x1="{MARGIN}" y1="{MARGIN}" x2="{MARGIN}" y2="{bottom}" stroke="#333"/>
<text x="{WIDTH / 2:.0f}" y="{HEIGHT - 12}" font-size="12" text-anchor="middle">variability</text>
<text x="14" y="{HEIGHT / 2:.0f}" font-size="12" text-anchor="middle" transform="rotate(-90 14 {HEIGHT / 2:.0f})">confidence</text>
<text x="{MARGIN - 6}" y="{MARGIN + 4}" font-size="10" text-anchor="end">1</text>
<text x="{MARGIN - 6}" y="{bottom + 4}" font-size="10" text-anchor="end">0</text>
<text x="{MARGIN}" y="{bottom + 14}" font-size="10" text-anchor="middle">0</text>
<text x="{right}" y="{bottom + 14}" font-size="10" text-anchor="middle">{span_x:.2f}</text>
<text x="{right + 6}" y="{MARGIN - 8}" font-size="10">correctness</text>
{legend}
{dots}
</svg>
"""


def shows_data_map(fidelity_metrics: set[str]) -> bool:
    return bool(fidelity_metrics & DATA_MAP_METRICS)
