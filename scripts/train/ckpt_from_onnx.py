"""Rebuild a training checkpoint from the served scorer graph, so that a further run (train_scorer.py --init) can
start from the weights that serve when the checkpoint itself is not at hand (training/build/ is not committed).

Inputs: --model (models/builtin: onnx/scorer.onnx, model.json's ordinal_spread and ordinal_variance). Output: --ckpt (a train_scorer.py
checkpoint). Each exported matrix is found by the parameter-named bias its MatMul feeds; the constants folded out of
the role, gate and spread parameters by their node names. A served graph's integer products (quantize_scorer.py)
give their matrices back dequantized (int8.py dequantized). The rebuilt module is checked against the graph (max
abs difference printed): a float32 graph on random inputs, under 1e-4; an integer graph on real token states of
one request (the served encoder's), under 5% of the scores' spread, as its dequantized matrices and 8-bit inputs
differ from it by a few hundredths. A few seconds on 2 cores.
"""
import argparse
import json
import math
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
import torch
from onnx import numpy_helper

from scorer import H_IN, Scorer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "base"))
from int8 import dequantized  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--model", default="models/builtin")
p.add_argument("--ckpt", default="training/build/scorer.pt")
a = p.parse_args()

path = os.path.join(a.model, "onnx", "scorer.onnx")
g = onnx.load(path).graph
inits = {i.name: numpy_helper.to_array(i) for i in g.initializer}
consumers = {}
for n in g.node:
    for x in n.input:
        consumers.setdefault(x, []).append(n)

state = {}
for name, arr in inits.items():
    if name.startswith("m."):
        state[name[2:]] = torch.from_numpy(arr.copy())
folded = {"/m/Add": "role.0", "/m/Add_2": "role.1"}
for b in range(2):
    folded[f"/m/blocks.{b}/attn/Add"] = f"blocks.{b}.gate_state"
    folded[f"/m/blocks.{b}/attn_1/Add"] = f"blocks.{b}.gate_question"
role = torch.zeros(2, H_IN)
quantized = False
for n in g.node:
    ws = [x for x in n.input if x.startswith("int8.") and x.endswith(".ws")]
    if ws and n.op_type == "Mul":  # the integer product's last Mul; a shifted (GELU) input adds its shift after it
        quantized = True
        out = n.output[0]
        if out.endswith(".ws_"):
            out = consumers[out][0].output[0]
        bias = [x for c in consumers[out] for x in c.input if x.startswith("m.") and x.endswith(".bias")]
        name = bias[0][2:-5] + ".weight"
        if name not in state:  # the question's and the options' products share a matrix: the first is taken
            key = ws[0][:-3]  # quantize_scorer.py names a product's input key + ".x"; a GELU input has no smoothing
            w = dequantized(inits, key, key + ".x" if key + ".x.smooth" in inits else None)
            state[name] = torch.from_numpy(w.T.copy())
        continue
    consts = [x for x in n.input if x.startswith("onnx::") and x in inits]
    if not consts:
        continue
    if n.op_type == "MatMul":
        bias = [x for c in consumers[n.output[0]] for x in c.input if x.startswith("m.") and x.endswith(".bias")]
        state[bias[0][2:-5] + ".weight"] = torch.from_numpy(inits[consts[0]].T.copy())
    elif n.name in folded:
        target = folded[n.name]
        v = torch.from_numpy(inits[consts[0]].copy()).reshape(-1)
        if target.startswith("role."):
            role[int(target[-1])] = v
        else:
            state[target] = v
state["role"] = role
meta = json.load(open(os.path.join(a.model, "model.json")))
state["log_spread"] = torch.tensor(math.log(meta["ordinal_spread"]))
state["var_coef"] = torch.tensor(float(meta.get("ordinal_variance", 0.0)))

model = Scorer()
missing = set(model.state_dict()) - set(state)
assert not missing, f"not found in the graph: {sorted(missing)}"
model.load_state_dict(state)
model.eval()

if quantized:
    # An integer graph is compared on real token states: its smoothing was fitted to the encoder's activations, and
    # random ones exaggerate what 8-bit inputs lose.
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(os.path.join(a.model, "tokenizer.json"))
    enc = ort.InferenceSession(os.path.join(a.model, "onnx", "encoder.onnx"), providers=["CPUExecutionProvider"])

    def states(*texts):
        ids = [tok.encode(t).ids for t in texts]
        L = max(map(len, ids))
        x = np.ones((len(ids), L), np.int64)
        m = np.zeros((len(ids), L), np.int64)
        for i, t in enumerate(ids):
            x[i, : len(t)], m[i, : len(t)] = t, 1
        return enc.run(["hidden"], {"input_ids": x, "attention_mask": m})[0], m

    S, _ = states("I was charged twice for my subscription this month. Please refund the extra payment.")
    Q, _ = states("What is this message about?")
    O, om = states("billing: payments, charges, refunds", "technical problem", "account access")
else:
    rng = np.random.default_rng(0)
    S = rng.standard_normal((1, 9, 3 * H_IN), dtype=np.float32)
    Q = rng.standard_normal((1, 5, 3 * H_IN), dtype=np.float32)
    O = rng.standard_normal((3, 4, 3 * H_IN), dtype=np.float32)
    om = np.ones((3, 4), np.int64)
    om[1, 3] = 0
with torch.no_grad():
    skv = model.state_kv(torch.from_numpy(S))
    mine = model(torch.from_numpy(S), torch.ones(1, S.shape[1], dtype=torch.long), torch.from_numpy(Q), torch.ones(1, Q.shape[1], dtype=torch.long),
                 torch.from_numpy(O)[None], torch.from_numpy(om)[None], torch.tensor([1]), skv=skv)[0].numpy()
sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
theirs = sess.run(["scores"], {"state": S, "state_kv": skv.numpy(), "state_mask": np.ones((1, S.shape[1]), np.int64), "question": Q,
                               "question_mask": np.ones((1, Q.shape[1]), np.int64), "options": O, "options_mask": om, "qtype": np.array([1])})[0]
diff = float(np.abs(mine - theirs).max())
spread = float(np.abs(theirs - theirs.mean()).max())
print(f"max abs difference against {path}: {diff:.2e} (scores' spread {spread:.3f})")
assert diff < 0.05 * spread if quantized else diff < 1e-4
os.makedirs(os.path.dirname(os.path.abspath(a.ckpt)), exist_ok=True)
torch.save({"model": model.state_dict(), "args": {"from": path}, "step": 0, "dev": None}, a.ckpt)
print(f"wrote {a.ckpt}")
