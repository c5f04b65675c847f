"""Files from the training run, written in the format the reading code expects."""

from __future__ import annotations

import csv
import json

import numpy as np

from paperproof.fixtures.run_files import write
from paperproof.fixtures.training import RunSpec, dynamics


def test_per_epoch_json_lines_hold_ids_gold_labels_and_that_epochs_logits(tmp_path):
    logits, labels = dynamics(RunSpec(seed=2, n=24, epochs=3))
    files = [{"param": "model_dir", "parts": ["training_dynamics"], "format": "jsonl", "keys": []},
             {"param": "model_dir", "parts": ["training_dynamics", "dynamics_epoch_{}.jsonl"], "format": "jsonl",
              "keys": ["gold", "guid", "logits_epoch_{}"]}]
    write(str(tmp_path), files, logits, labels)
    folder = tmp_path / "training_dynamics"
    assert sorted(p.name for p in folder.iterdir()) == [f"dynamics_epoch_{e}.jsonl" for e in range(3)]
    for e in range(3):
        records = [json.loads(line) for line in (folder / f"dynamics_epoch_{e}.jsonl").read_text().splitlines()]
        assert [r["guid"] for r in records] == list(range(24))
        assert [r["gold"] for r in records] == labels.tolist()
        assert np.allclose([r[f"logits_epoch_{e}"] for r in records], logits[e], atol=1e-5)


def test_a_folder_alone_gets_the_cartography_logs_and_arrays_and_tables_their_content(tmp_path):
    logits, labels = dynamics(RunSpec(seed=3, n=16, epochs=2))
    write(str(tmp_path), [
        {"param": "d", "parts": ["logs"], "format": "jsonl", "keys": []},
        {"param": "d", "parts": ["train_labels.npy"], "format": "npy", "keys": []},
        {"param": "d", "parts": ["logits.npy"], "format": "npy", "keys": []},
        {"param": "d", "parts": ["scores.csv"], "format": "csv", "keys": ["guid", "label", "gold_prob"]},
    ], logits, labels)
    assert sorted(p.name for p in (tmp_path / "logs").iterdir()) == ["dynamics_epoch_0.jsonl", "dynamics_epoch_1.jsonl"]
    assert np.array_equal(np.load(tmp_path / "train_labels.npy"), labels)
    assert np.array_equal(np.load(tmp_path / "logits.npy"), logits)
    rows = list(csv.DictReader((tmp_path / "scores.csv").open()))
    assert [int(r["guid"]) for r in rows] == list(range(16)) and [int(r["label"]) for r in rows] == labels.tolist()
    assert all(0.0 < float(r["gold_prob"]) < 1.0 for r in rows)


def test_fields_read_by_position_are_flags_and_a_predicted_label_is_the_argmax(tmp_path):
    import ast

    from paperproof.catalogue.entry import Param
    from paperproof.fixtures.protocol import read_formats

    code = ("def read_logs(log_dir):\n"
            "    out = {}\n"
            "    with open(os.path.join(log_dir, 'epoch_{}.jsonl'.format(0))) as f:\n"
            "        for line in f:\n"
            "            r = json.loads(line)\n"
            "            out[r['guid']] = (r['flags'][0], r['flags'][2], r['predicted_label'], r['gold'])\n"
            "    return out\n")
    node = ast.parse(code).body[0]
    files = read_formats(node, [Param(name="log_dir")])
    assert files and all(f["lists"] == {"flags": 3} for f in files)
    logits, labels = dynamics(RunSpec(seed=4, n=12, epochs=2))
    spec = {**files[0], "parts": ["epoch_0.jsonl"]}
    write(str(tmp_path), [spec], logits, labels)
    records = [json.loads(line) for line in (tmp_path / "epoch_0.jsonl").read_text().splitlines()]
    assert [r["flags"] for r in records[:2]] == [[0, 1, 0], [1, 0, 1]]
    assert [r["predicted_label"] for r in records] == logits[-1].argmax(-1).tolist()
    assert [r["gold"] for r in records] == labels.tolist()
