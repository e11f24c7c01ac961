"""Rewrite the exported scorer graph (train_scorer.py writes it in float32) into the served one: every matrix product
with a weight matrix in integers (scripts/base/int8.py: per-token 8-bit inputs, 7-bit weights per output channel,
smoothing from the activations of calibration examples). The state graph stays float32 (it runs once per request).

Inputs: --model DIR (onnx/scorer.onnx as exported, onnx/state.onnx), the calibration examples: the first --n examples
of the dev split of training/build/examples.jsonl, their token states from training/build/feats (encode_texts.py).
Output: DIR/onnx/scorer.onnx rewritten in place (refused if it holds no float32 matrix product). No randomness;
about 30 s on 2 cores.
"""
import argparse
import json
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort

from feats import Feats
from scorer import TYPES

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "base"))
from int8 import integer_products  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--model", default="models/builtin")
p.add_argument("--examples", default="training/build/examples.jsonl")
p.add_argument("--feats", default="training/build/feats")
p.add_argument("--n", type=int, default=200)
a = p.parse_args()

feat = Feats(a.feats)
path = os.path.join(a.model, "onnx", "scorer.onnx")
state = ort.InferenceSession(os.path.join(a.model, "onnx", "state.onnx"), providers=["CPUExecutionProvider"])
examples = []
for line in open(a.examples, encoding="utf-8"):
    e = json.loads(line)
    if e["split"] == "dev" and e["state"] in feat and e["question"] in feat and all(o in feat for o in e["options"]):
        examples.append(e)
    if len(examples) == a.n:
        break

f32 = lambda t: np.asarray(feat(t), np.float32)
ones = lambda *shape: np.ones(shape, np.int64)
feeds = []
for e in examples:
    S, Q = f32(e["state"])[None], f32(e["question"])[None]
    lo = max(len(feat(o)) for o in e["options"])
    O = np.zeros((len(e["options"]), lo, S.shape[-1]), np.float32)
    om = np.zeros((len(e["options"]), lo), np.int64)
    for j, o in enumerate(e["options"]):
        O[j, : len(feat(o))] = f32(o)
        om[j, : len(feat(o))] = 1
    feeds.append({"state": S, "state_kv": state.run(None, {"state": S})[0], "state_mask": ones(1, S.shape[1]), "question": Q,
                  "question_mask": ones(1, Q.shape[1]), "options": O, "options_mask": om, "qtype": np.array([TYPES[e["type"]]])})

model = onnx.load(path)
done = integer_products(model, feeds)
if not done:
    sys.exit(f"{path} holds no float32 matrix product: already rewritten?")
onnx.save(model, path)
print(f"{len(done)} matrix products in integers, calibrated on {len(feeds)} dev examples; wrote {path} ({os.path.getsize(path) // 1024} KiB)")
