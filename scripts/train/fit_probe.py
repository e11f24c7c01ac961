"""How far the scorer alone can fit a slice of the training data: starting from a checkpoint (ckpt_from_onnx.py for
the served one), train every scorer weight on the slice's training examples, on the served encoder's cached token
states, and after each epoch report accuracy on a fixed sample of those training examples and on the slice's dev
split. A slice the scorer fits quickly is limited by training passes; one it cannot fit needs more than the
scorer's two layers over frozen token states (the encoder trained too, or more layers where the question reads the
state). Nothing is exported.

Inputs: --examples (a slice of training/build/examples.jsonl, e.g. its authored yes/no questions), --feats
(encode_texts.py over that slice), --ckpt. Seed 36 (--seed). CPU, 2 threads (AMD EPYC): the 10,740 authored yes/no
training examples, 336 steps of 32, about 107 s an epoch with both measurements; the 9,477 scale examples about
172 s (longer option lists).
"""
import argparse
import random
import time

import torch

from batching import batches, collate, seeded_run, split_examples
from feats import Feats
from scorer import Scorer

p = argparse.ArgumentParser()
p.add_argument("--examples", required=True)
p.add_argument("--feats", required=True)
p.add_argument("--ckpt", default="training/build/served.pt")
p.add_argument("--epochs", type=int, default=6)
p.add_argument("--lr", type=float, default=3e-4, help="the scorer's new parts (head, offsets, embeddings)")
p.add_argument("--lr-base", type=float, default=6e-5, help="its two pretrained blocks")
p.add_argument("--sample", type=int, default=1500, help="training examples measured after each epoch")
a, rng = seeded_run(p, 36)
cpu = torch.device("cpu")

feat = Feats(a.feats)
train, devset = split_examples(a.examples, feat)
sample = random.Random(a.seed).sample(train, min(a.sample, len(train)))
print(f"{len(train)} train ({len(sample)} measured), {len(devset)} dev examples", flush=True)

model = Scorer()
model.load_state_dict(torch.load(a.ckpt)["model"])
pretrained = [q for n, q in model.named_parameters() if n.startswith("blocks.") and ".gate_" not in n]
new = [q for n, q in model.named_parameters() if not (n.startswith("blocks.") and ".gate_" not in n)]
opt = torch.optim.AdamW([{"params": pretrained, "lr": a.lr_base}, {"params": new, "lr": a.lr}], weight_decay=0.01)


def logprobs(scores, t, valid):
    lp = torch.log_softmax(scores.masked_fill(~valid, -1e4), -1)
    is_score = (t == 2)[:, None]
    return torch.where(is_score, model.read_scale(scores, valid), lp) if is_score.any() else lp


def accuracy(data):
    model.eval()
    right = 0
    with torch.no_grad():
        for b in batches(data, a.batch):
            S, sm, Q, qm, O, om, t, valid, y = collate(feat, b, cpu)
            right += int((logprobs(model(S, sm, Q, qm, O, om, t), t, valid).argmax(-1) == y).sum())
    model.train()
    return round(right / len(data), 4)


t0 = time.time()
print({"epoch": 0, "train_sample": accuracy(sample), "dev": accuracy(devset)}, flush=True)
for epoch in range(1, a.epochs + 1):
    total = 0.0
    steps = 0
    for b in batches(train, a.batch, rng):
        S, sm, Q, qm, O, om, t, valid, y = collate(feat, b, cpu)
        loss = -logprobs(model(S, sm, Q, qm, O, om, t), t, valid).gather(1, y[:, None]).mean()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        total += float(loss.detach())
        steps += 1
    print({"epoch": epoch, "loss": round(total / steps, 4), "train_sample": accuracy(sample), "dev": accuracy(devset),
           "seconds": round(time.time() - t0)}, flush=True)
