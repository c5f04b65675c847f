"""The planted data map of a sample: confidence against variability on the planted training run, coloured by
the kind of hardness planted, with the samples the sample's score ranks hardest ringed.

The coordinates come from the reference core on the run (trained in the build's process, single-threaded,
seeded, and sent to the render processes in the job: they never train); the rings from the record's
`flagged` indices. Numbers are written at fixed precision, so the SVG is byte-identical
from build to build.
"""

from __future__ import annotations

from functools import lru_cache

from markupsafe import escape

from paperproof.catalogue.planted_record import PlantedHardness
from paperproof.fixtures import training
from paperproof.fixtures.planted_cases import PLANTED_DIMS, PLANTED_SEED

FILE = "planted-map.svg"  # beside the sample's page
WIDTH, HEIGHT, MARGIN, LEGEND = 420, 320, 40, 120
# One colour per planted kind (colour-blind-safe, distinct on white), grey for samples left as they were.
KIND_COLOURS = {"uniform": "#d55e00", "asymmetric": "#e69f00", "adjacent": "#cc79a7", "near_ood": "#0072b2",
                "far_ood": "#56b4e9", "atypical": "#009e73"}
UNPLANTED = "#bbbbbb"

Points = tuple[tuple[float, float, str], ...]  # (variability, confidence, planted kind or "") per sample


def run_of(record: PlantedHardness) -> tuple[int, int] | None:
    """The planted run a record's map is drawn on, (samples, percent made hard): its largest fraction's;
    None when it has no scored output."""
    if not record.scores or not record.scores[0].figures:
        return None
    last = record.fractions[-1]
    n = next(f.samples for f in record.scores[0].figures if f.fraction == last)
    return n, int(round(last * 100))


@lru_cache(maxsize=4)
def points(n: int, percent: int) -> Points:
    """(variability, confidence, kind) of every sample of the planted run of `n` samples."""
    from paperproof.fixtures.values import planted_dynamics
    from paperproof.verify.metrics.onepass import training_dynamics_onepass

    with training.single_threaded():
        logits, labels = planted_dynamics(PLANTED_SEED, PLANTED_DIMS["E"], n, PLANTED_DIMS["C"], PLANTED_DIMS["D"],
                                          percent)
    found = training_dynamics_onepass(logits.astype("float32"), labels)
    spec = training.RunSpec(seed=PLANTED_SEED, n=n, classes=PLANTED_DIMS["C"], epochs=PLANTED_DIMS["E"],
                            features=PLANTED_DIMS["D"], planted=percent / 100)
    kind_of = {i: kind for kind, idx in training.planted(spec).hard.items() for i in idx}
    conf, var = found["confidence"].tolist(), found["variability"].tolist()
    return tuple((float(v), float(c), kind_of.get(i, "")) for i, (c, v) in enumerate(zip(conf, var)))


def svg(record: PlantedHardness, entry: str, points: Points) -> str:
    """The map for one sample's planted record, drawn on `points` (those of `run_of(record)`)."""
    n, last = len(points), record.fractions[-1]
    span = max(max(p[0] for p in points), 1e-9)
    flagged = set(record.flagged)
    plot_w, plot_h = WIDTH - 2 * MARGIN, HEIGHT - 2 * MARGIN
    dots, rings = [], []
    for i, (v, c, kind) in enumerate(points):
        x, y = MARGIN + plot_w * v / span, HEIGHT - MARGIN - plot_h * c
        dots.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="{KIND_COLOURS.get(kind, UNPLANTED)}"/>')
        if i in flagged:
            rings.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4.5" fill="none" stroke="#000" stroke-width="0.8"/>')
    legend = [f'<rect x="{WIDTH + 4}" y="{MARGIN + 16 * i}" width="9" height="9" fill="{colour}"/>'
              f'<text x="{WIDTH + 17}" y="{MARGIN + 16 * i + 8}" font-size="10">{kind.replace("_", "-")}</text>'
              for i, (kind, colour) in enumerate([*KIND_COLOURS.items(), ("not planted", UNPLANTED)])]
    k = len(KIND_COLOURS) + 1
    legend.append(f'<circle cx="{WIDTH + 8.5}" cy="{MARGIN + 16 * k + 4}" r="4.5" fill="none" stroke="#000" '
                  f'stroke-width="0.8"/><text x="{WIDTH + 17}" y="{MARGIN + 16 * k + 8}" font-size="10">ranked '
                  'hardest</text>')
    bottom, right = HEIGHT - MARGIN, WIDTH - MARGIN
    name = escape(entry)
    text = f"""<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" class="planted-map" viewBox="0 0 {WIDTH + LEGEND} {HEIGHT}" width="{WIDTH + LEGEND}" height="{HEIGHT}" role="img" aria-labelledby="pm-title pm-desc">
<title id="pm-title">Planted data map</title>
<desc id="pm-desc">Confidence against variability for the {n} samples of the planted training run ({last:.0%} made hard), coloured by the kind planted; the {len(flagged)} samples {name} ranks hardest are ringed.</desc>
<rect width="100%" height="100%" fill="#ffffff"/>
<line x1="{MARGIN}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#333"/>
<line x1="{MARGIN}" y1="{MARGIN}" x2="{MARGIN}" y2="{bottom}" stroke="#333"/>
<text x="{WIDTH / 2:.0f}" y="{HEIGHT - 8}" font-size="11" text-anchor="middle">variability</text>
<text x="12" y="{HEIGHT / 2:.0f}" font-size="11" text-anchor="middle" transform="rotate(-90 12 {HEIGHT / 2:.0f})">confidence</text>
<text x="{MARGIN - 4}" y="{MARGIN + 4}" font-size="10" text-anchor="end">1</text>
<text x="{MARGIN - 4}" y="{bottom + 4}" font-size="10" text-anchor="end">0</text>
<text x="{right}" y="{bottom + 13}" font-size="10" text-anchor="middle">{span:.2f}</text>
{chr(10).join(legend)}
{chr(10).join(dots)}
{chr(10).join(rings)}
</svg>"""
    return text + "\n"
