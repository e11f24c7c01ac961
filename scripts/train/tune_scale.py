"""Train how the scorer reads a scale, and nothing else: the score type's input vector (the scorer's qtype row for
`score`, added to the question's and the levels' tokens of scale questions only), the ordinal spread and how much the
spread grows with the variance of the level softmax (scorer.py, ordinal()). Every other weight stays as it serves, so
yes/no and choice answers do not change by a bit.

Inputs: --model (the served model folder: onnx/scorer.onnx, model.json, calibration.json), --ckpt (its weights as a
train_scorer.py checkpoint: ckpt_from_onnx.py), the scale examples of training/build/examples.jsonl (build_examples.py;
other types are skipped) and their cached token states from the served encoder (encode_texts.py).
Output: --out, a copy of --model in which onnx/scorer.onnx holds the new score vector (the graph otherwise byte for
byte as served), model.json the new ordinal_spread and ordinal_variance, calibration.json a score temperature refitted
on the dev split (choice and noul kept), and tune_scale.json: the dev split's scale numbers before and after.
The epoch kept is the one of least log loss on the dev split. Seed 35 (--seed). CPU, 2 threads (AMD EPYC): 9,477
training examples, 297 steps of 32 per epoch, about 118 s an epoch with its dev pass; 6 epochs: 12 minutes.
"""
import argparse
import json
import math
import os
import shutil
import time

import numpy as np
import onnx
import torch
from onnx import numpy_helper

from batching import batches, collate, fit_temperature, seeded_run, split_examples
from feats import Feats
from scorer import TYPES, Scorer

p = argparse.ArgumentParser()
p.add_argument("--model", default="models/builtin")
p.add_argument("--ckpt", default="training/build/served.pt")
p.add_argument("--examples", default="training/build/examples.jsonl")
p.add_argument("--feats", default="training/build/feats")
p.add_argument("--out", required=True)
p.add_argument("--epochs", type=int, default=6)
p.add_argument("--lr", type=float, default=3e-3)
p.add_argument("--var-init", type=float, default=0.25, help="the variance coefficient to start from when the served one is 0")
a, rng = seeded_run(p, 35)
cpu = torch.device("cpu")
SCORE = TYPES["score"]

feat = Feats(a.feats)
train, devset = split_examples(a.examples, feat, lambda e: e["type"] == "score")
print(f"{len(train)} train, {len(devset)} dev scale examples", flush=True)

model = Scorer()
model.load_state_dict(torch.load(a.ckpt)["model"])
served_qtype = model.qtype.detach().clone()
with torch.no_grad():
    if float(model.var_coef) == 0.0:
        model.var_coef.fill_(a.var_init)
for name, q in model.named_parameters():
    q.requires_grad = name in ("qtype", "log_spread", "var_coef")
keep = torch.ones_like(model.qtype)
keep[SCORE] = 0
model.qtype.register_hook(lambda g: g.masked_fill(keep.bool(), 0.0))  # only the score row learns
opt = torch.optim.Adam([q for q in model.parameters() if q.requires_grad], lr=a.lr)


def measure(m):
    """The dev split's scale questions under model m: right, log loss, ECE (10 bins of the top probability) and the
    log-probabilities with their labels."""
    m.eval()
    rows = []
    with torch.no_grad():
        for b in batches(devset, a.batch):
            S, sm, Q, qm, O, om, t, valid, y = collate(feat, b, cpu)
            lp = m.read_scale(m(S, sm, Q, qm, O, om, t), valid)
            rows += [(lp[i, : len(e["options"])].numpy(), e["label"]) for i, e in enumerate(b)]
    m.train()
    return summary(rows), rows


def summary(rows):
    right, nll, bins = 0, 0.0, np.zeros((10, 3))
    for lp, y in rows:
        pr = np.exp(lp - lp.max())
        pr /= pr.sum()
        k = int(pr.argmax())
        right += k == y
        nll -= math.log(max(pr[y], 1e-9))
        b = min(9, int(pr[k] * 10))
        bins[b] += (1, pr[k], k == y)
    ece = sum(abs(c - r) for n, c, r in bins if n) / len(rows)
    return {"right": right, "of": len(rows), "log_loss": round(nll / len(rows), 4), "ece": round(float(ece), 4)}


def tempered(rows, T):
    return [(lp / T, y) for lp, y in rows]


served_cal = json.load(open(os.path.join(a.model, "calibration.json")))
T0 = served_cal["score"]["temperature"]
ref = Scorer()
ref.load_state_dict(torch.load(a.ckpt)["model"])
before, rows = measure(ref)
before_cal = summary(tempered(rows, T0))
print(f"served reading: {before}; with its temperature {T0:.3f}: {before_cal}", flush=True)

t0 = time.time()
best, best_state, history = float("inf"), None, []
for epoch in range(1, a.epochs + 1):
    for step, b in enumerate(batches(train, a.batch, rng)):
        S, sm, Q, qm, O, om, t, valid, y = collate(feat, b, cpu)
        lp = model.read_scale(model(S, sm, Q, qm, O, om, t), valid)
        loss = -lp.gather(1, y[:, None]).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    res, _ = measure(model)
    res.update(epoch=epoch, spread=round(float(model.log_spread.detach().exp()), 4), variance=round(float(model.var_coef.detach().clamp(min=0)), 4),
               moved=round(float((model.qtype.detach()[SCORE] - served_qtype[SCORE]).norm() / served_qtype[SCORE].norm()), 4),
               seconds=round(time.time() - t0))
    history.append(res)
    print(res, flush=True)
    if res["log_loss"] < best:
        best, best_state = res["log_loss"], {k: v.detach().clone() for k, v in model.state_dict().items()}

model.load_state_dict(best_state)
_, rows = measure(model)
T = fit_temperature(rows)
after = summary(tempered(rows, T))
print(f"kept epoch {min(history, key=lambda r: r['log_loss'])['epoch']}; temperature {T:.3f}: {after}", flush=True)

shutil.copytree(a.model, a.out)
graph = onnx.load(os.path.join(a.out, "onnx", "scorer.onnx"))
for init in graph.graph.initializer:
    if init.name == "m.qtype":
        old = numpy_helper.to_array(init)
        new = old.copy()
        new[SCORE] = model.qtype[SCORE].detach().numpy()
        init.CopyFrom(numpy_helper.from_array(new.astype(old.dtype), init.name))
        break
else:
    raise SystemExit("m.qtype not found in the scorer graph")
onnx.save(graph, os.path.join(a.out, "onnx", "scorer.onnx"))
meta = json.load(open(os.path.join(a.out, "model.json")))
meta["ordinal_spread"] = round(float(model.log_spread.detach().exp()), 6)
meta["ordinal_variance"] = round(float(model.var_coef.detach().clamp(min=0)), 6)
json.dump(meta, open(os.path.join(a.out, "model.json"), "w"), indent=2, ensure_ascii=False)
cal = dict(served_cal)
cal["score"] = {"temperature": round(T, 6)}
json.dump(cal, open(os.path.join(a.out, "calibration.json"), "w"), indent=2)
args = {k: os.path.basename(v) if isinstance(v, str) else v for k, v in vars(a).items()}
report = {"args": args, "served": {"reading": before, "calibrated": before_cal, "temperature": T0}, "epochs": history,
          "kept": {"calibrated": after, "temperature": T, "spread": meta["ordinal_spread"], "variance": meta["ordinal_variance"]},
          "minutes": round((time.time() - t0) / 60, 1)}
json.dump(report, open(os.path.join(a.out, "tune_scale.json"), "w"), indent=2)
print(json.dumps(report["kept"]), flush=True)
