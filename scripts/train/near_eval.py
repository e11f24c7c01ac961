"""List (and with --drop remove) authored examples whose state reads like an eval/dev state: a second guard beside
test/authored-data.test.ts, which compares words (shared 8-word runs, word-3-gram Jaccard) and so misses a state
written in other words, or in another language, about the same situation.

Both sides are read by the encoder that serves (models/builtin/onnx/encoder.onnx): each state's final-layer token
states, mean-pooled and L2-normalised (e5's own sentence vector). An authored state is near eval/dev when its cosine
with some eval/dev state is at least --threshold, or when it shares at least --words of that state's content words
(lower case, four letters or more; as a share of the smaller set). Inputs: the authored files named (JSON Lines in
the eval/dev schema) and --eval's *.jsonl (eval/dev by default). It ends with the other direction: every eval state
that some authored state reads like by meaning (what keeps a newer eval set, such as eval/held-out, apart from
training data written before it). No randomness. Runtime on 2 Intel Xeon cores: 16 s for the 1,758 states of
training/authored/written/v6-*.jsonl against the states of eval/dev's 430 questions; 3.5 minutes for all of
training/authored/ (24,397 distinct states) against eval/held-out with nothing else running, 9-16 minutes beside a
training run.
"""
import argparse
import glob
import json
import os
import re

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

from texts import cut

p = argparse.ArgumentParser()
p.add_argument("files", nargs="+", help="authored JSON Lines files")
p.add_argument("--model", default="models/builtin")
p.add_argument("--eval", default="eval/dev")
p.add_argument("--threshold", type=float, default=0.87)
p.add_argument("--words", type=float, default=0.5)
p.add_argument("--drop", action="store_true", help="rewrite each file without its near examples")
a = p.parse_args()

tok = Tokenizer.from_file(os.path.join(a.model, "tokenizer.json"))
so = ort.SessionOptions()
so.intra_op_num_threads = 2
sess = ort.InferenceSession(os.path.join(a.model, "onnx", "encoder.onnx"), so)


def text(state):
    return state if isinstance(state, str) else json.dumps(state, ensure_ascii=False)


def vectors(texts):
    out = np.zeros((len(texts), 384), np.float32)
    for i, t in enumerate(texts):
        ids = np.array([cut(tok.encode(t).ids, "state")], np.int64)
        h = sess.run(["hidden"], {"input_ids": ids, "attention_mask": np.ones_like(ids)})[0][0, :, 768:]
        v = h.mean(0)
        out[i] = v / max(np.linalg.norm(v), 1e-9)
    return out


def words(t):
    return {w for w in re.findall(r"\w+", t.lower()) if len(w) >= 4 and not w.isdigit()}


ev = [json.loads(l) for f in sorted(glob.glob(os.path.join(a.eval, "*.jsonl"))) for l in open(f, encoding="utf-8") if l.strip()]
ev_texts = sorted({text(e["state"]) for e in ev})
ev_vec = vectors(ev_texts)
ev_words = [words(t) for t in ev_texts]
total = 0
ev_best = np.full(len(ev_texts), -1.0, np.float32)  # each eval state's highest cosine with any authored state
for f in a.files:
    rows = [json.loads(l) for l in open(f, encoding="utf-8") if l.strip()]
    texts = [text(e["state"]) for e in rows]
    sims = vectors(texts) @ ev_vec.T
    if len(texts):
        ev_best = np.maximum(ev_best, sims.max(0))
    near = set()
    for i, t in enumerate(texts):
        j = int(sims[i].argmax())
        w = words(t)
        shares = [len(w & ew) / max(1, min(len(w), len(ew))) for ew in ev_words]
        k = int(np.argmax(shares))
        if sims[i, j] >= a.threshold or shares[k] >= a.words:
            near.add(i)
            jj = j if sims[i, j] >= a.threshold else k
            print(f"{rows[i]['id']}\tcos {sims[i, jj]:.3f} words {shares[jj]:.2f}\t{t[:100]!r}\n\t\tnear {ev_texts[jj][:100]!r}")
    total += len(near)
    print(f"{f}: {len(near)} of {len(rows)} near {a.eval}")
    if a.drop and near:
        with open(f, "w", encoding="utf-8") as fh:
            for i, e in enumerate(rows):
                if i not in near:
                    fh.write(json.dumps(e, ensure_ascii=False) + "\n")
print(f"{total} near in all")
# The other direction, by meaning only: every eval state with some authored state at cosine >= --threshold (an
# authored state's line above names only its nearest eval state). The way to keep a newer eval set apart from
# training data written before it (eval/held-out/SOURCE.md).
near_ev = [i for i in range(len(ev_texts)) if ev_best[i] >= a.threshold]
ids = {}
for e in ev:
    ids.setdefault(text(e["state"]), []).append(e["id"])
for i in near_ev:
    print(f"eval\t{','.join(ids[ev_texts[i]])}\tcos {ev_best[i]:.3f}\t{ev_texts[i][:100]!r}")
print(f"{len(near_ev)} of {len(ev_texts)} eval states have an authored state at cosine >= {a.threshold}")
