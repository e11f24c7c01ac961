#!/usr/bin/python3
"""Fine-tunes the built-in English encoder (scripts/encoder_torch.py, the package's pretrained
weights) as a cross-encoder: the model reads `state SEP question candidate` (src/engine/builtin/cross.ts)
and a linear head on its pooled tanh layer gives the candidate's logit. Every example is a softmax
over its candidates (options, levels, or the yes and no sides of a noul), trained with cross-entropy;
score examples get an ordinal target (most mass on the gold level, some on its neighbours), so the
answer moves along the scale with the evidence.

    apt-get install -y python3-torch python3-numpy python3-onnx libopenblas0-pthread
    /usr/bin/python3 scripts/build-decision-examples.py --data ../shared/data
    node dist/scripts/tokenize-decisions.js training/build/public.tok.jsonl training/build/public.jsonl
    node dist/scripts/tokenize-decisions.js training/build/authored.tok.jsonl training/authored/examples.jsonl
    node dist/scripts/tokenize-decisions.js training/build/written.tok.jsonl training/authored/written/*.jsonl
    node dist/scripts/tokenize-decisions.js --split fit training/build/devfit.tok.jsonl eval/dev/*.jsonl
    /usr/bin/python3 scripts/train-cross-encoder.py --watch training/build/devfit.tok.jsonl --minutes 45

Inputs: the tokenized files above (.xz-compressed copies are read too). Output: training/build/cross.pt
(the fine-tuned weights; scripts/build-encoder-onnx.py --cross turns it into
models/builtin/cross/cross.onnx), and cross.pt.last (the last weights). Seeded (13 unless --seed):
the data order and the new head; torch on the CPU with --threads threads, or on a GPU (--device
cuda, the default where torch sees one; bfloat16 matrix products, not bit-for-bit repeatable). The
plan of steps is fixed from --rows (sequences to train on); --minutes stops early (saving what it
has) when the machine is slower than planned, and the learning rate decays by whichever of the two
runs out first. --watch scores the fit half of eval/dev every --watch-every steps (top candidate
right; a noul's yes side above its no side) and keeps the weights that scored best on --watch-key;
the test half is never read. --init continues from a checkpoint (.pt) or from the committed float
graph (models/builtin/cross/cross.onnx, read back by encoder_torch.cross_state_from_onnx). Measured
runtime and throughput are printed at the end and recorded in models/builtin/cross/SOURCE.md
(about 30-36 sequences/s on 2 CPU cores, 2,000-8,500 on one H100 shared by several runs).
"""

import argparse
import contextlib
import copy
import json
import lzma
import os
import random
import sys
import time

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from encoder_torch import CROSS_MAX_TOKENS, cross_model, load_cross  # noqa: E402

SEED = 13
MAX_CANDIDATES = 6


def load(path, weight):
    out = []
    with (lzma.open(path, "rt", encoding="utf8") if path.endswith(".xz") else open(path, encoding="utf8")) as f:
        for line in f:
            if line.strip():
                e = json.loads(line)
                e["weight"] = weight
                out.append(e)
    return out


def targets(example, rows):
    """Target distribution over the kept rows."""
    n = len(rows)
    t = [0.0] * n
    gold = example["label"]
    if example["type"] != "score" or n < 3:
        t[gold] = 1.0
        return t
    t[gold] = 0.8
    near = [i for i in (gold - 1, gold + 1) if 0 <= i < n]
    for i in near:
        t[i] = 0.2 / len(near)
    return t


def prepare(example, rng):
    rows = example["rows"]
    keep = list(range(len(rows)))
    if example["type"] == "choice" and len(rows) > MAX_CANDIDATES:
        others = [i for i in keep if i != example["label"]]
        keep = sorted([example["label"]] + rng.sample(others, MAX_CANDIDATES - 1))
    kept = [rows[i][:CROSS_MAX_TOKENS] for i in keep]
    label = keep.index(example["label"])
    return kept, targets(dict(example, label=label), kept), example["weight"], example["type"], example.get("lang", "en")


def batches(examples, rows_per_batch, rng):
    """Examples of similar length together (less padding), batches in random order."""
    order = sorted(examples, key=lambda e: (max(len(r) for r in e[0]), rng.random()))
    out, cur, n = [], [], 0
    for e in order:
        if n + len(e[0]) > rows_per_batch and cur:
            out.append(cur)
            cur, n = [], 0
        cur.append(e)
        n += len(e[0])
    if cur:
        out.append(cur)
    rng.shuffle(out)
    return out


def tensors(batch, device):
    """Token ids and mask of every row of a batch, and per example the indices of its candidates'
    logits (`pad` past its last candidate) and its target distribution."""
    rows = [r for e in batch for r in e[0]]
    width = max(len(r) for r in rows)
    ids = torch.zeros(len(rows), width, dtype=torch.long)
    mask = torch.zeros(len(rows), width, dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = torch.tensor(r)
        mask[i, : len(r)] = 1
    pad = len(rows)
    width_c = max(len(e[1]) for e in batch)
    index = torch.full((len(batch), width_c), pad, dtype=torch.long)
    target = torch.zeros(len(batch), width_c)
    at = 0
    for j, (r, t, _w, _type, _lang) in enumerate(batch):
        index[j, : len(r)] = torch.arange(at, at + len(r))
        target[j, : len(t)] = torch.tensor(t)
        at += len(r)
    weight = torch.tensor([e[2] for e in batch])
    return ids.to(device), mask.to(device), index.to(device), target.to(device), weight.to(device)


def loss_of(logits, index, target, weight):
    """Weighted cross-entropy of every example's softmax over its candidates, and which were right."""
    ext = torch.cat([logits.float(), logits.new_tensor([-1e4], dtype=torch.float32)])
    lp = torch.log_softmax(ext[index], 1)
    per = -(target * lp).sum(1)
    right = lp.argmax(1) == target.argmax(1)
    return (weight * per).sum() / weight.sum(), right


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--public", default="training/build/public.tok.jsonl")
    p.add_argument("--authored", default="training/build/authored.tok.jsonl")
    p.add_argument("--authored-repeat", type=int, default=2)
    p.add_argument("--written", default="training/build/written.tok.jsonl", help="the hand-written examples (training/authored/written)")
    p.add_argument("--written-repeat", type=int, default=4)
    p.add_argument("--nli-cap", type=int, default=8000, help="most English NLI examples (Portuguese: half)")
    p.add_argument("--rows", type=int, default=120000, help="sequences to train on (sets the schedule)")
    p.add_argument("--rows-per-batch", type=int, default=48)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--minutes", type=float, default=60)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu", help="cpu (the default without a GPU) or cuda")
    p.add_argument("--out", default="training/build/cross.pt")
    p.add_argument("--init", help="start from a checkpoint of an earlier run (.pt) or the committed float graph (.onnx) instead of the package's weights")
    p.add_argument("--seed", type=int, default=SEED, help="order of examples and batches (another seed continues on other examples)")
    p.add_argument("--watch", help="tokenized fit half of eval/dev (tokenize-decisions.js --split fit): scored every --watch-every steps; the best-scoring weights are what --out keeps")
    p.add_argument("--watch-every", type=int, default=500)
    p.add_argument("--watch-key", default="all", help="what picks the best checkpoint: all, or a type or language of the watched set")
    p.add_argument("--nli-balance", action="store_true", help="as many NLI yes as no answers (the sets have about two no for each yes)")
    p.add_argument("--types", default="noul,choice,score", help="question types to train on (comma-separated)")
    p.add_argument("--extra-layers", type=int, default=0, help="layers added on top, each a copy of the package's last layer (a deeper model)")
    p.add_argument("--freeze-embeddings", action="store_true", help="keep the package's token embeddings as they are")
    a = p.parse_args()
    torch.manual_seed(a.seed)
    rng = random.Random(a.seed)
    torch.set_num_threads(a.threads)
    device = torch.device(a.device)

    public = load(a.public, 1.0)
    rng.shuffle(public)
    # NLI is half of the public examples; capped per source so the decision-shaped sets weigh more.
    caps = {"nli-en": a.nli_cap, "nli-pt": a.nli_cap // 2}
    kept = {}
    data = []
    for e in public:
        source = e["id"].rsplit("-", 1)[0]
        cap = caps.get(source, len(public))
        if a.nli_balance and source.startswith("nli-") and e["type"] == "noul":
            source, cap = (source, e["label"]), cap // 2
        kept[source] = kept.get(source, 0) + 1
        if kept[source] <= cap:
            data.append(e)
    # The project's own examples are closest to real requests: seen `authored_repeat` times per pass;
    # the hand-written ones, the most varied of all, `written_repeat` times.
    repeat = {}
    for path, times in ((a.authored, a.authored_repeat), (a.written, a.written_repeat)):
        if path and os.path.exists(path):
            for e in load(path, 1.0):
                repeat[e["id"]] = times
                data.append(e)
    types = set(a.types.split(","))
    data = [e for e in data if e["type"] in types]
    rng.shuffle(data)
    # Held out before repeating, so no copy of a held example is trained on.
    held = data[:600]
    train = [e for e in data[600:] for _ in range(repeat.get(e["id"], 1))]
    prepared = [prepare(e, rng) for e in train]
    rows_per_pass = sum(len(e[0]) for e in prepared)
    plan = []
    while sum(len(e[0]) for b in plan for e in b) < a.rows:
        plan += batches(prepared, a.rows_per_batch, rng)
    done_rows = 0
    for i, b in enumerate(plan):
        done_rows += sum(len(e[0]) for e in b)
        if done_rows >= a.rows:
            plan = plan[: i + 1]
            break
    steps = max(1, len(plan))
    print(json.dumps({"examples": len(train), "rows_per_pass": rows_per_pass, "planned_rows": done_rows, "steps": steps, "device": str(device)}), flush=True)

    model = cross_model()
    for _ in range(a.extra_layers):
        model.encoder.layers.append(copy.deepcopy(model.encoder.layers[-1]))
    if a.init:
        load_cross(model, a.init)
    model.to(device)
    if a.freeze_embeddings:
        model.encoder.embedding.weight.requires_grad_(False)
    head_params = list(model.score.parameters())
    body = [q for n, q in model.named_parameters() if not n.startswith("score.") and q.requires_grad]
    opt = torch.optim.AdamW([{"params": body, "lr": a.lr}, {"params": head_params, "lr": a.lr * 10}], weight_decay=0.01)
    warm = max(1, steps // 20)
    t0 = time.time()
    # Linear decay by the plan's steps or by --minutes, whichever runs out first: a run cut short by a
    # slow or busy machine still ends at a low rate instead of stopping mid-schedule.
    progress = lambda s: max(s / steps, (time.time() - t0) / (a.minutes * 60))  # noqa: E731
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warm) * max(0.02, 1 - progress(s)))
    # bfloat16 matrix products on a GPU; float32 on the CPU.
    autocast = torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda" else contextlib.nullcontext()

    def forward(b):
        ids, mask, index, target, weight = tensors(b, device)
        with autocast:
            logits = model(ids, mask)
        return loss_of(logits, index, target, weight)

    def evaluate(sets):
        model.eval()
        loss = 0.0
        right, count = {}, {}
        with torch.no_grad():
            for b in sets:
                l, r = forward(b)
                loss += float(l) * len(b)
                for e, ok in zip(b, r.tolist()):
                    for key in ("all", e[3], e[4]):
                        right[key] = right.get(key, 0) + int(ok)
                        count[key] = count.get(key, 0) + 1
        model.train()
        return {"loss": round(loss / count["all"], 4), **{k: round(right[k] / count[k], 4) for k in sorted(count)}}

    held_batches = batches([prepare(e, rng) for e in held], 64, random.Random(1))
    watch = batches([prepare(e, random.Random(1)) for e in load(a.watch, 1.0)], 64, random.Random(1)) if a.watch else None
    best = None

    def checkpoint(step):
        nonlocal best
        report = {"step": step, "held": evaluate(held_batches)}
        if watch is not None:
            report["watch"] = evaluate(watch)
        if watch is None or best is None or report["watch"][a.watch_key] > best:
            best = report["watch"][a.watch_key] if watch is not None else None
            torch.save({k: v.detach().cpu() for k, v in model.state_dict().items()}, a.out)
            report["saved"] = a.out
        print(json.dumps(report), flush=True)

    checkpoint(0)
    if a.rows == 0:
        return
    seen = 0
    running = None
    model.train()
    for step, b in enumerate(plan):
        loss, _ = forward(b)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        seen += sum(len(e[0]) for e in b)
        running = float(loss) if running is None else 0.98 * running + 0.02 * float(loss)
        elapsed = time.time() - t0
        if step % 100 == 0 or step == steps - 1:
            print(json.dumps({"step": step, "loss": round(running, 4), "rows": seen, "rows_per_s": round(seen / max(elapsed, 1e-9), 1), "minutes": round(elapsed / 60, 1)}), flush=True)
        if step % a.watch_every == a.watch_every - 1:
            checkpoint(step)
        if elapsed > a.minutes * 60:
            print(json.dumps({"stopped_early_at_step": step, "of": steps}), flush=True)
            break
    checkpoint(step)
    # The last weights too (--out keeps the best watched): runs of several seeds can be averaged.
    torch.save({k: v.detach().cpu() for k, v in model.state_dict().items()}, a.out + ".last")
    print(json.dumps({"done": True, "steps": step + 1, "rows": seen, "minutes": round((time.time() - t0) / 60, 1),
                      "rows_per_s": round(seen / (time.time() - t0), 1), "best_watch": best}), flush=True)


if __name__ == "__main__":
    main()
