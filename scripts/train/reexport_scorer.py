"""Re-export a trained scorer in this version's graph (scorer.py) from the weights inside an earlier scorer.onnx, for
a scorer exported before the state's projections were shared among options (commit a3cc810~1). Its linear layers
sit in that export as transposed `onnx::MatMul_*` initializers in order of first use: the input projection, then per
block k, v, q, o, ff.0, ff.2; the role rows as the three `onnx::Add_*` vectors; the rest keep their names. The
script checks the new export against the old one on random inputs of three shapes and every question type.

    .venv/bin/python scripts/train/reexport_scorer.py --old OLD.onnx --out models/builtin/onnx/scorer.onnx

Inputs: OLD.onnx (e.g. `git show a3cc810~1:models/builtin/onnx/scorer.onnx`). Seed 23 for the check's inputs;
a few seconds on 2 cores. Measured: largest score difference 6.1e-5; the output is byte for byte the served
models/builtin/onnx/scorer.onnx.
"""
import argparse
import sys

import numpy as np
import onnx
import onnxruntime as ort
import torch
from onnx import numpy_helper

from scorer import Scorer, export_onnx

p = argparse.ArgumentParser()
p.add_argument("--old", required=True)
p.add_argument("--out", required=True)
a = p.parse_args()

W = {i.name: torch.from_numpy(numpy_helper.to_array(i).copy()) for i in onnx.load(a.old).graph.initializer}
by_use = lambda prefix: [W[k] for k in sorted((k for k in W if k.startswith(prefix)), key=lambda k: int(k.rsplit("_", 1)[1]))]
mm, adds = by_use("onnx::MatMul_"), by_use("onnx::Add_")
model = Scorer().eval()
sd = model.state_dict()
sd.update({k[2:]: v for k, v in W.items() if k.startswith("m.")})
for b in range(len(model.blocks)):
    for name, w in zip(["attn.k", "attn.v", "attn.q", "attn.o", "ff.0", "ff.2"], mm[1 + 6 * b : 7 + 6 * b]):
        sd[f"blocks.{b}.{name}.weight"] = w.T
sd["role"] = torch.stack(adds)
model.load_state_dict(sd)
export_onnx(model, a.out)

old, new = ort.InferenceSession(a.old), ort.InferenceSession(a.out)
rng = np.random.default_rng(23)
worst = 0.0
for t in (0, 1, 2):
    for n, lo, ls, lq in ((2, 3, 40, 8), (7, 9, 200, 20), (255, 12, 60, 15)):
        feed = {"state": rng.standard_normal((1, ls, 384), np.float32), "state_mask": np.ones((1, ls), np.int64),
                "question": rng.standard_normal((1, lq, 384), np.float32), "question_mask": np.ones((1, lq), np.int64),
                "options": rng.standard_normal((n, lo, 384), np.float32),
                "options_mask": (rng.random((n, lo)) < 0.8).astype(np.int64), "qtype": np.array([t])}
        feed["options_mask"][:, 0] = 1
        worst = max(worst, float(np.abs(old.run(None, feed)[0] - new.run(None, feed)[0]).max()))
print(f"largest score difference, old export against new: {worst:.2e}")
sys.exit(0 if worst < 1e-3 else 1)
