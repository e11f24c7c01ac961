"""Accuracy of a trained scorer checkpoint on the training data's dev split, by source (MultiNLI, InferBR, the derived
yes/no questions, ...) with each source's majority baseline: shows whether a reading beats always giving the most
common answer. Inputs: training/build/examples.jsonl, training/build/feats, --ckpt. No randomness; about a minute
on 2 cores.
"""
import argparse
import collections
import json

import numpy as np
import torch

from feats import Feats
from scorer import TYPES, Scorer

p = argparse.ArgumentParser()
p.add_argument("--examples", default="training/build/examples.jsonl")
p.add_argument("--feats", default="training/build/feats")
p.add_argument("--ckpt", default="training/build/scorer.pt")
a = p.parse_args()
torch.set_num_threads(2)
cached = Feats(a.feats)


def feat(text):
    return torch.from_numpy(np.asarray(cached(text), np.float32))[None]


model = Scorer()
model.load_state_dict(torch.load(a.ckpt)["model"])
model.eval()
right, count, labels = collections.Counter(), collections.Counter(), collections.defaultdict(collections.Counter)
with torch.no_grad():
    for line in open(a.examples, encoding="utf-8"):
        e = json.loads(line)
        if e["split"] != "dev":
            continue
        opts = [feat(o)[0] for o in e["options"]]
        lo = max(len(o) for o in opts)
        O = torch.zeros(1, len(opts), lo, opts[0].shape[-1])
        om = torch.zeros(1, len(opts), lo, dtype=torch.long)
        for j, o in enumerate(opts):
            O[0, j, : len(o)] = o
            om[0, j, : len(o)] = 1
        S, Q = feat(e["state"]), feat(e["question"])
        sc = model(S, torch.ones(S.shape[:2], dtype=torch.long), Q, torch.ones(Q.shape[:2], dtype=torch.long), O, om, torch.tensor([TYPES[e["type"]]]))
        if e["type"] == "score":
            sc = model.read_scale(sc, torch.ones_like(sc, dtype=torch.bool))
        k = (e["src"], e["type"])
        right[k] += int(sc[0].argmax()) == e["label"]
        count[k] += 1
        labels[k][e["label"]] += 1
for k in sorted(count):
    print(f"{k[0]:>16} {k[1]:>6} {count[k]:5d}  accuracy {right[k] / count[k]:.3f}  majority {max(labels[k].values()) / count[k]:.3f}")
