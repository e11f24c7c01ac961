"""Top-1 agreement of the served encoder (MatMulNBits with int8 activations, accuracy_level 4) with the same
weights computed in float32 (accuracy_level 0), both followed by the same scorer, on every question of eval/dev.

Inputs: --model (models/builtin), --eval (eval/dev). Prints the share of questions whose chosen answer (choice
option, score level, noul side) is the same. Deterministic; about 2 minutes on 2 cores.
"""
import argparse
import glob
import json
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from tokenizers import Tokenizer

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "train"))
from texts import segments  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--model", default="models/builtin")
p.add_argument("--eval", default="eval/dev")
a = p.parse_args()

so = ort.SessionOptions()
so.intra_op_num_threads = 2
enc_path = os.path.join(a.model, "onnx", "encoder.onnx")
served = ort.InferenceSession(enc_path, so)
m = onnx.load(enc_path)
for n in m.graph.node:
    for at in n.attribute:
        if n.op_type == "MatMulNBits" and at.name == "accuracy_level":
            at.i = 0
float32 = ort.InferenceSession(m.SerializeToString(), so)
scorer = ort.InferenceSession(os.path.join(a.model, "onnx", "scorer.onnx"), so)
tok = Tokenizer.from_file(os.path.join(a.model, "tokenizer.json"))
TYPES = {"noul": 0, "choice": 1, "score": 2}


def ids(text, cap):
    x = tok.encode(text, add_special_tokens=False).ids[:cap]
    return np.array([[0] + x + [2]], dtype=np.int64)


def hidden(sess, x):
    return sess.run(None, {"input_ids": x, "attention_mask": np.ones_like(x)})[0]


def top1(sess, e):
    state = e["state"] if isinstance(e["state"], str) else json.dumps(e["state"], ensure_ascii=False)
    q, opts, _ = segments(e)
    S, Q = hidden(sess, ids(state, 200)), hidden(sess, ids(q, 128))
    O = [hidden(sess, ids(o, 64))[0] for o in opts]
    lo = max(len(o) for o in O)
    ob = np.zeros((len(O), lo, 384), np.float32)
    om = np.zeros((len(O), lo), np.int64)
    for i, o in enumerate(O):
        ob[i, : len(o)] = o
        om[i, : len(o)] = 1
    s = scorer.run(None, {"state": S, "state_mask": np.ones(S.shape[:2], np.int64), "question": Q,
                          "question_mask": np.ones(Q.shape[:2], np.int64), "options": ob, "options_mask": om,
                          "qtype": np.array([TYPES[e["type"]]], np.int64)})[0]
    if e["type"] == "score":  # the argmax of the cumulative-link reading is the level nearest its position z
        pz = np.exp(s - s.max())
        z = float((pz / pz.sum() * np.arange(len(s))).sum())
        return int(min(len(s) - 1, max(0, round(z))))
    return int(np.argmax(s))


items = [json.loads(l) for f in sorted(glob.glob(os.path.join(a.eval, "*.jsonl"))) for l in open(f, encoding="utf-8") if l.strip()]
same = sum(top1(served, e) == top1(float32, e) for e in items)
print(f"top-1 agreement of the served encoder with float32 compute: {same}/{len(items)} = {100 * same / len(items):.1f}%")
