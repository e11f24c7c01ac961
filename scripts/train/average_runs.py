"""Average two trained models weight by weight into a run folder in tune_encoder.py's layout (run_files.py:
encoder-<i>.npz, scorer-<i>.pt, tuned.json), which `tune_encoder.py join` and scripts/train/candidate.sh read like
any run's.

Each side is the encoder's layers as differences from the image's weights (an .npz: join's --tuned, or
layers_from_onnx.py's float32 output for the model that serves) and a scorer checkpoint (join's --ckpt, or
ckpt_from_onnx.py's for the model that serves). Every tensor becomes (1 - t) * A + t * B, computed in float32;
the layers are written as float16 differences, as a training run writes them.

  .venv/bin/python scripts/train/average_runs.py --layers-a training/build/served-layers.npz --scorer-a training/build/served.pt \
      --layers-b training/build/V.tuned.npz --scorer-b training/build/V.scorer.pt --t 0.5 --out training/build/W

Deterministic (no randomness); a few seconds.
"""
import argparse
import os

import numpy as np
import torch

from run_files import write_run

p = argparse.ArgumentParser()
p.add_argument("--layers-a", required=True)
p.add_argument("--scorer-a", required=True)
p.add_argument("--layers-b", required=True)
p.add_argument("--scorer-b", required=True)
p.add_argument("--t", type=float, default=0.5, help="the weight of B (0: A as it is, 1: B as it is)")
p.add_argument("--out", required=True)
a = p.parse_args()
if not 0.0 <= a.t <= 1.0:
    raise SystemExit("--t must lie in [0, 1]")


def mix(x, y):
    return (1.0 - a.t) * x + a.t * y


la, lb = np.load(a.layers_a), np.load(a.layers_b)
if set(la.files) != set(lb.files):
    raise SystemExit(f"the two layer files hold different tensors: {sorted(set(la.files) ^ set(lb.files))[:5]}")
layers = {k: mix(la[k].astype(np.float32), lb[k].astype(np.float32)).astype(np.float16) for k in la.files}

sa, sb = torch.load(a.scorer_a, map_location="cpu"), torch.load(a.scorer_b, map_location="cpu")
if set(sa["model"]) != set(sb["model"]):
    raise SystemExit("the two scorer checkpoints hold different tensors")
scorer = {k: mix(sa["model"][k].float(), sb["model"][k].float()) for k in sa["model"]}

names = {k: os.path.basename(getattr(a, k)) for k in ("layers_a", "scorer_a", "layers_b", "scorer_b")}
write_run(a.out, layers, scorer, {"step": 0, "dev_accuracy": float("nan"), "dev": {}, "minutes": 0, "args": {"average": names, "t": a.t}})
print(f"wrote {a.out}: {len(layers)} layer tensors and {len(scorer)} scorer tensors, {1 - a.t:g} A + {a.t:g} B")
