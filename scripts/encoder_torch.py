#!/usr/bin/python3
"""The built-in English encoder as a PyTorch module (CPU), from the same description
(models/builtin/encoder/architecture.json) and the same package weights as
scripts/build-encoder-onnx.py, for training: every weight is an nn.Parameter.

    apt-get install -y python3-torch python3-numpy
    /usr/bin/python3 scripts/encoder_torch.py --check bench/results/tmp-encoder-reference.json

--check embeds every row of a reference file written by scripts/record-encoder-reference.ts
(vectors of the package's tfjs graph), one row at a time and again in padded batches of mixed
lengths, and prints the largest absolute difference. About 3.5 minutes on 2 cores for 2,000 rows
(Debian's torch 1.13 uses the system BLAS: `apt-get install -y libopenblas0-pthread` makes it 3x faster).

    from encoder_torch import Encoder
    model = Encoder.from_package()
    vectors = model(ids, mask)          # ids, mask: LongTensor [batch, length]; out [batch, 512]
"""

import argparse
import base64
import json
import math
import os
import sys

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import encoder_arch  # noqa: E402


def _linear(weights):
    kernel, bias = weights
    layer = nn.Linear(kernel.shape[0], kernel.shape[1])
    with torch.no_grad():
        layer.weight.copy_(torch.from_numpy(kernel.T.copy()))
        layer.bias.copy_(torch.from_numpy(bias))
    return layer


def _norm(weights, eps):
    scale, bias = weights
    layer = nn.LayerNorm(scale.shape[0], eps=eps)
    with torch.no_grad():
        layer.weight.copy_(torch.from_numpy(scale))
        layer.bias.copy_(torch.from_numpy(bias))
    return layer


class Layer(nn.Module):
    def __init__(self, weights, eps, mask_bias):
        super().__init__()
        spec = weights["spec"]
        self.heads = spec["heads"]
        self.width = spec["headWidth"]
        self.mask_bias = mask_bias
        self.residual = _linear(weights["residual"]) if weights["residual"] else None
        self.attention_norm = _norm(weights["attentionNorm"], eps)
        self.qkv = _linear(weights["qkv"])
        self.output = _linear(weights["output"])
        self.ffn_norm = _norm(weights["ffnNorm"], eps)
        self.ffn_in = _linear(weights["ffnIn"])
        self.ffn_out = _linear(weights["ffnOut"])

    def forward(self, h, mask):
        batch, length, _ = h.shape
        r = self.residual(h) if self.residual is not None else h
        q, k, v = self.qkv(self.attention_norm(h)).split(self.heads * self.width, dim=-1)
        q, k, v = (t.reshape(batch, length, self.heads, self.width).transpose(1, 2) for t in (q, k, v))
        scores = (q * (1 / math.sqrt(self.width))) @ k.transpose(-1, -2)
        scores = scores + (1 - mask)[:, None, None, :] * self.mask_bias
        attended = (scores.softmax(-1) @ v).transpose(1, 2).reshape(batch, length, self.heads * self.width)
        x = r + self.output(attended)
        return x + self.ffn_out(torch.relu(self.ffn_in(self.ffn_norm(x))))


class Encoder(nn.Module):
    def __init__(self, weights):
        super().__init__()
        arch = weights.arch
        eps = arch["layerNormEpsilon"]
        self.scale = arch["embedding"]["scale"]
        self.norm_eps = arch["head"]["normEpsilon"]
        self.embedding = nn.Embedding.from_pretrained(torch.from_numpy(weights.table), freeze=False)
        # A fixed function of position, not a weight.
        self.register_buffer("timing", torch.from_numpy(weights.timing))
        self.layers = nn.ModuleList(Layer(w, eps, arch["attentionMaskBias"]) for w in weights.layers)
        self.head = _linear(weights.head)

    @classmethod
    def from_package(cls, directory=None):
        return cls(encoder_arch.Weights(directory=directory))

    def forward(self, ids, mask):
        mask = mask.to(torch.float32)
        h = self.scale * self.embedding(ids * mask.long()) + self.timing[: ids.shape[1]]
        for layer in self.layers:
            h = layer(h, mask)
        pooled = (h * mask[:, :, None]).sum(1) / mask.sum(1, keepdim=True).clamp(min=1)
        out = torch.tanh(self.head(pooled))
        return out * (out * out).sum(-1, keepdim=True).clamp(min=self.norm_eps).rsqrt()


# Longest cross-encoder sequence (src/engine/builtin/cross.ts: a 256-token pair and the separator).
CROSS_MAX_TOKENS = 257
# The separator between the state and the hypothesis (src/engine/builtin/cross.ts).
SEP_ID = 2


class CrossEncoder(nn.Module):
    """The encoder reading `state SEP question candidate`; a linear head on its tanh layer (before the
    L2 norm) gives the candidate's logit. Trained by scripts/train-cross-encoder.py."""
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder
        self.score = nn.Linear(encoder.head.out_features, 1)
        with torch.no_grad():
            self.score.weight.normal_(0, 0.02)
            self.score.bias.zero_()

    def forward(self, ids, mask):
        e = self.encoder
        maskf = mask.to(torch.float32)
        h = e.scale * e.embedding(ids * mask) + e.timing[: ids.shape[1]]
        for layer in e.layers:
            h = layer(h, maskf)
        # Pooled over the separator and what follows it (the question and the candidate, which have
        # attended to the state): the state's tokens, the same in every candidate, would dilute the difference.
        pool = ((ids == SEP_ID).long().cumsum(1) > 0).to(torch.float32) * maskf
        pooled = (h * pool[:, :, None]).sum(1) / pool.sum(1, keepdim=True).clamp(min=1)
        return self.score(torch.tanh(e.head(pooled))).squeeze(-1)


def cross_model():
    """The cross-encoder at its starting point: the package's weights, a fresh score head."""
    arch = encoder_arch.architecture()
    arch["maxTokens"] = CROSS_MAX_TOKENS
    return CrossEncoder(Encoder(encoder_arch.Weights(arch=arch)))


# Module names of the CrossEncoder's dense and norm layers -> node names in the float graph that
# scripts/build-encoder-onnx.py writes (a dense layer stores `.kernel` [in, out], a norm `.scale`).
_GRAPH_NAMES = {
    "residual": "residual", "attention_norm": "attention.norm", "qkv": "qkv", "output": "output",
    "ffn_norm": "ffn.norm", "ffn_in": "ffn.in", "ffn_out": "ffn.out",
}


def cross_state_from_onnx(path):
    """The state dict of a CrossEncoder read back from its float graph (models/builtin/cross/cross.onnx),
    so a later run can continue training the committed weights (train-cross-encoder.py --init)."""
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(path).graph
    t = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    arch = encoder_arch.architecture()
    state = {"encoder.embedding.weight": t["embedding.table"] / np.float32(arch["embedding"]["scale"])}

    def dense(module, node):
        if f"{node}.kernel" in t:
            state[f"{module}.weight"] = t[f"{node}.kernel"].T
            state[f"{module}.bias"] = t[f"{node}.bias"]

    def norm(module, node):
        state[f"{module}.weight"] = t[f"{node}.scale"]
        state[f"{module}.bias"] = t[f"{node}.bias"]

    for i in range(len(arch["layers"])):
        for module, node in _GRAPH_NAMES.items():
            (norm if module.endswith("_norm") else dense)(f"encoder.layers.{i}.{module}", f"layer{i}.{node}")
    dense("encoder.head", "head")
    dense("score", "score")
    return {k: torch.from_numpy(np.array(v, dtype=np.float32)) for k, v in state.items()}


def load_cross(model, path):
    """Loads a checkpoint of train-cross-encoder.py (.pt) or a float cross-encoder graph (.onnx) into `model`."""
    state = cross_state_from_onnx(path) if path.endswith(".onnx") else torch.load(path, map_location="cpu")
    state.pop("encoder.timing", None)  # a fixed function of position, rebuilt by cross_model()
    missing, unexpected = model.load_state_dict(state, strict=False)
    if unexpected or [k for k in missing if k != "encoder.timing"]:
        raise ValueError(f"{path}: missing {missing}, unexpected {unexpected}")
    return model


def _reference(path):
    with open(path, encoding="utf8") as f:
        rows = json.load(f)["rows"]
    return [(r["ids"], np.frombuffer(base64.b64decode(r["vector"]), dtype="<f4")) for r in rows]


def _padded(rows):
    width = max(len(ids) for ids, _ in rows)
    ids = torch.zeros(len(rows), width, dtype=torch.long)
    mask = torch.zeros(len(rows), width, dtype=torch.long)
    for i, (row, _) in enumerate(rows):
        ids[i, : len(row)] = torch.tensor(row)
        mask[i, : len(row)] = 1
    return ids, mask


def check(path):
    torch.set_num_threads(2)
    model = Encoder.from_package().eval()
    rows = _reference(path)
    alone = batched = 0.0
    with torch.no_grad():
        for row in rows:
            out = model(*_padded([row]))[0].numpy()
            alone = max(alone, float(np.abs(out - row[1]).max()))
        # Mixed lengths in one batch: padding must not change a row.
        for at in range(0, len(rows), 16):
            chunk = rows[at : at + 16]
            out = model(*_padded(chunk)).numpy()
            batched = max(batched, max(float(np.abs(out[i] - chunk[i][1]).max()) for i in range(len(chunk))))
    print(json.dumps({"rows": len(rows), "max_abs_diff_alone": alone, "max_abs_diff_padded_batches": batched,
                      "parameters": sum(p.numel() for p in model.parameters())}))
    return max(alone, batched)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", help="reference file of scripts/record-encoder-reference.ts")
    parser.add_argument("--limit", type=float, default=1e-4)
    args = parser.parse_args()
    if args.check:
        sys.exit(0 if check(args.check) <= args.limit else 1)
    parser.print_help()
