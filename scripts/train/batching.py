"""What the training scripts share: batches of examples grouped by option count, cached token states (feats.py) as
tensors, the dev split's temperature fit, seeding and the examples' split (train_scorer.py, tune_scale.py,
fit_probe.py; the grouping also tune_encoder.py)."""
import json
import math
import random

import numpy as np
import torch

from scorer import TYPES


def seeded_run(parser, seed):
    """Parse a CPU run's arguments, --batch, --threads and --seed (default seed) added; seed torch and return
    (args, random.Random of the seed)."""
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=seed)
    a = parser.parse_args()
    torch.manual_seed(a.seed)
    torch.set_num_threads(a.threads)
    return a, random.Random(a.seed)


def split_examples(path, feat, keep=lambda e: True):
    """The examples of a build_examples.py file whose texts all have cached states in feat (and that keep accepts),
    as (train, dev) by their split."""
    examples = [json.loads(l) for l in open(path, encoding="utf-8")]
    examples = [e for e in examples if keep(e) and e["state"] in feat and e["question"] in feat and all(o in feat for o in e["options"])]
    return [e for e in examples if e["split"] == "train"], [e for e in examples if e["split"] == "dev"]


def pad(arrs, L):
    out = np.zeros((len(arrs), L, 3 * 384), np.float32)
    m = np.zeros((len(arrs), L), np.int64)
    for i, x in enumerate(arrs):
        out[i, : len(x)] = x
        m[i, : len(x)] = 1
    return out, m


def collate(feat, batch, dev):
    """Tensors of one batch on device dev: S, smask, Q, qmask, O, omask, type, valid options, label."""
    S, sm = pad([feat(e["state"]) for e in batch], max(len(feat(e["state"])) for e in batch))
    Q, qm = pad([feat(e["question"]) for e in batch], max(len(feat(e["question"])) for e in batch))
    N = max(len(e["options"]) for e in batch)
    Lo = max(len(feat(o)) for e in batch for o in e["options"])
    O = np.zeros((len(batch), N, Lo, 3 * 384), np.float32)
    om = np.zeros((len(batch), N, Lo), np.int64)
    valid = np.zeros((len(batch), N), bool)
    for i, e in enumerate(batch):
        for j, o in enumerate(e["options"]):
            x = feat(o)
            O[i, j, : len(x)] = x
            om[i, j, : len(x)] = 1
            valid[i, j] = True
    om[~valid] = 0
    om[~valid, 0] = 1  # padded options read one zero token; their scores are masked out
    t = np.array([TYPES[e["type"]] for e in batch])
    y = np.array([e["label"] for e in batch])
    T = lambda x: torch.from_numpy(x).to(dev)
    return T(S), T(sm), T(Q), T(qm), T(O), T(om), T(t), T(valid), T(y)


def batches(data, size, rng=None, count=lambda e: len(e["options"]), by_count=False):
    """Examples grouped by option count (count(e); little padding); long lists in small batches; shuffled when rng is
    given. The groups are taken as first seen, or by option count with by_count (tune_encoder.py's order)."""
    buckets = {}
    for e in data:
        n = count(e)
        k = 0 if n <= 2 else 1 if n <= 4 else 2 if n <= 8 else 3 if n <= 30 else 4
        buckets.setdefault(k, []).append(e)
    out = []
    for k, es in sorted(buckets.items()) if by_count else buckets.items():
        if rng:
            rng.shuffle(es)
        n = size if k < 3 else max(1, size // 4) if k == 3 else 2
        out += [es[i : i + n] for i in range(0, len(es), n)]
    if rng:
        rng.shuffle(out)
    return out


def fit_temperature(rows):
    """One temperature on log-probabilities (choice, score) by NLL over a grid: deterministic. rows: (lp, label)."""
    best_t, best_nll = 1.0, float("inf")
    for T in np.exp(np.linspace(math.log(0.2), math.log(5), 81)):
        nll = 0.0
        for lp, y in rows:
            z = lp / T
            z = z - z.max()
            nll -= z[y] - math.log(np.exp(z).sum())
        if nll < best_nll:
            best_t, best_nll = float(T), nll
    return best_t
