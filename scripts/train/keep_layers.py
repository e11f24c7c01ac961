"""Put the served encoder's own integer layers back into a candidate's encoder graph below the layers a run trained
(`train_scorer.py --encoder-top`): build_base.py quantizes every layer again from float weights, and for layers that
did not change that only adds noise (a rebuild of svc-1.6.0's own weights flipped about ten of 595 judged answers).
Every initializer of layers 0..K-1 (`l<i>.*`: codes, scales, smoothing, biases, LayerNorms) is copied from the
served graph; shapes must match. Check: on --check texts of the dev split, the token states the candidate hands over
from below layer K (after layer 10 for K = 10, after 10 and 11 for K = 11) must equal the served graph's bit for bit.

    .venv/bin/python scripts/train/keep_layers.py --graph CAND/onnx/encoder.onnx --below 10

Inputs: --served (models/builtin/onnx/encoder.onnx), --graph (rewritten in place), --below K, the served tokenizer
and training/build/examples.jsonl for the check. No randomness; a few seconds on 2 cores.
"""
import argparse
import json
import os
import re
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper
from tokenizers import Tokenizer

from texts import cut

p = argparse.ArgumentParser()
p.add_argument("--served", default="models/builtin/onnx/encoder.onnx")
p.add_argument("--graph", required=True)
p.add_argument("--below", type=int, required=True, choices=(10, 11))
p.add_argument("--tokenizer", default="models/builtin/tokenizer.json")
p.add_argument("--examples", default="training/build/examples.jsonl")
p.add_argument("--check", type=int, default=32)
a = p.parse_args()

served = {i.name: i for i in onnx.load(a.served).graph.initializer}
model = onnx.load(a.graph)
layer = re.compile(r"l(\d+)\.")
copied = 0
for init in model.graph.initializer:
    m = layer.match(init.name)
    if not m or int(m.group(1)) >= a.below:
        continue
    theirs = served.get(init.name)
    if theirs is None or list(theirs.dims) != list(init.dims) or theirs.data_type != init.data_type:
        sys.exit(f"{init.name}: not in the served graph with the same shape and type")
    init.CopyFrom(theirs)
    copied += 1
onnx.save(model, a.graph)

tok = Tokenizer.from_file(a.tokenizer)
texts = []
for line in open(a.examples, encoding="utf-8"):
    e = json.loads(line)
    if e["split"] == "dev":
        texts.append(cut(tok.encode(e["state"]).ids, "state"))
    if len(texts) == a.check:
        break
width = 384 * (a.below - 9)  # the states handed over from below layer K: after layer 10 (and 11)
sessions = [ort.InferenceSession(path, providers=["CPUExecutionProvider"]) for path in (a.served, a.graph)]
for ids in texts:
    feed = {"input_ids": np.array([ids], np.int64), "attention_mask": np.ones((1, len(ids)), np.int64)}
    mine, theirs = (s.run(["hidden"], feed)[0][..., :width] for s in sessions)
    if not np.array_equal(mine, theirs):
        sys.exit(f"the states below layer {a.below + 1} differ from the served graph's: {np.abs(mine - theirs).max()}")
print(f"{copied} initializers of layers 1-{a.below} copied from {os.path.basename(a.served)}; the states below layer "
      f"{a.below + 1} equal the served graph's bit for bit on {len(texts)} dev states; wrote {a.graph}")
