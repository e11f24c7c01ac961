"""A training run's files, as `tune_encoder.py train` writes them and `join` reads them: the encoder's layers as
float16 differences from the image's weights in ENCODER_FILES .npz files (a device's files come back at most 16 MB
each), the scorer's state in two .pt files (its first block, then the rest), and tuned.json (step, dev accuracy,
arguments). scripts/train/average_runs.py writes the same files for an average of two models."""
import json
import math
import os

import numpy as np
import torch

ENCODER_FILES = 3
SCORER_FIRST = "blocks.0."  # scorer-0.pt: the names with this prefix; scorer-1.pt: the rest


def _replace(path, write):
    """Writes path whole under a temporary name, then moves it into place (a run's files are rewritten while it runs).
    write(f) writes into the open binary file f."""
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        write(f)
    os.replace(tmp, path)


def run_args(args):
    """A run's arguments (a dict) as tuned.json and scorer.json keep them: paths by file name only, so no file of a
    run names the machine that trained it."""
    return {k: os.path.basename(v) if isinstance(v, str) and os.sep in v else v for k, v in args.items()}


def write_run(out, deltas, scorer_state, info):
    """deltas: each layer tensor's name ("layers.<i>. ...") -> its float16 difference; scorer_state: name -> float32
    CPU tensor; info: tuned.json's content."""
    os.makedirs(out, exist_ok=True)
    per = math.ceil((1 + max(int(k.split(".")[1]) for k in deltas)) / ENCODER_FILES)
    for i in range(ENCODER_FILES):
        part = {k: v for k, v in deltas.items() if i * per <= int(k.split(".")[1]) < (i + 1) * per}
        _replace(os.path.join(out, f"encoder-{i}.npz"), lambda f: np.savez(f, **part))
    first = {k: v for k, v in scorer_state.items() if k.startswith(SCORER_FIRST)}
    rest = {k: v for k, v in scorer_state.items() if not k.startswith(SCORER_FIRST)}
    for i, part in enumerate((first, rest)):
        _replace(os.path.join(out, f"scorer-{i}.pt"), lambda f: torch.save(part, f))
    _replace(os.path.join(out, "tuned.json"), lambda f: f.write(json.dumps(info, indent=1).encode()))
