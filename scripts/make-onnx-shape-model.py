#!/usr/bin/python3
"""Writes a random-weight transformer with the shape of multilingual-MiniLMv2-L6 (6 layers, hidden 384,
12 heads, FFN 1536) into a model folder, to measure on this machine what the real model's compute costs
(docs/models.md, "Memory and latency"). Its answers are meaningless; only its speed is of interest.

    /usr/bin/python3 scripts/make-onnx-shape-model.py ./minilm-shape
    npx tsc -p tsconfig.json && node dist/bench/onnx-engine.js --dir ./minilm-shape --reps 10

It reuses the tokenizer of test/fixtures/tiny-nli (so the embedding table is small: the real model's
250k x 384 table is a lookup and costs memory, not time) and takes input_ids and attention_mask only,
like XLM-R exports. Nothing it writes is committed (~45 MB of float32 weights).
"""

import json
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

LAYERS, HIDDEN, HEADS, FFN, LABELS = 6, 384, 12, 1536, 3
FIXTURE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "test", "fixtures", "tiny-nli")


def build(vocab_size):
    rng = np.random.default_rng(7)
    inits, nodes = [], []

    def w(name, *shape):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * 0.02).astype(np.float32), name))
        return name

    def c(name, value, dtype=np.float32):
        inits.append(numpy_helper.from_array(np.array(value, dtype=dtype), name))
        return name

    def n(op, ins, out, **kw):
        nodes.append(helper.make_node(op, ins, [out], **kw))
        return out

    head = HIDDEN // HEADS
    c("split_heads", [0, 0, HEADS, head], np.int64)
    c("merge_heads", [0, 0, HIDDEN], np.int64)
    c("ax12", [1, 2], np.int64)
    c("one", 1.0)
    c("neg", -10000.0)
    c("scale", 1.0 / np.sqrt(head))
    c("sqrt2", np.sqrt(2.0))
    c("half", 0.5)
    c("ones_h", np.ones(HIDDEN))
    c("zeros_h", np.zeros(HIDDEN))
    c("zero_idx", 0, np.int64)

    x = n("Gather", [w("word_emb", vocab_size, HIDDEN), "input_ids"], "emb")
    x = n("LayerNormalization", [x, "ones_h", "zeros_h"], "x0", axis=-1, epsilon=1e-5)
    m = n("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT)
    m = n("Sub", ["one", m], "mask_inv")
    m = n("Mul", [m, "neg"], "mask_neg")
    bias = n("Unsqueeze", [m, "ax12"], "mask_bias")  # [B, 1, 1, T]
    for i in range(LAYERS):
        p = f"l{i}_"

        def proj(src, name, d_in, d_out):
            y = n("MatMul", [src, w(p + name + "_w", d_in, d_out)], p + name + "_mm")
            return n("Add", [y, w(p + name + "_b", d_out)], p + name)

        q = n("Transpose", [n("Reshape", [proj(x, "q", HIDDEN, HIDDEN), "split_heads"], p + "q4")], p + "qt", perm=[0, 2, 1, 3])
        k = n("Transpose", [n("Reshape", [proj(x, "k", HIDDEN, HIDDEN), "split_heads"], p + "k4")], p + "kt", perm=[0, 2, 3, 1])
        v = n("Transpose", [n("Reshape", [proj(x, "v", HIDDEN, HIDDEN), "split_heads"], p + "v4")], p + "vt", perm=[0, 2, 1, 3])
        s = n("Mul", [n("MatMul", [q, k], p + "qk"), "scale"], p + "scores")
        a = n("Softmax", [n("Add", [s, bias], p + "masked")], p + "probs", axis=-1)
        ctx = n("Reshape", [n("Transpose", [n("MatMul", [a, v], p + "ctx4")], p + "ctxt", perm=[0, 2, 1, 3]), "merge_heads"], p + "ctx")
        x = n("LayerNormalization", [n("Add", [x, proj(ctx, "o", HIDDEN, HIDDEN)], p + "res1"), "ones_h", "zeros_h"], p + "ln1", axis=-1, epsilon=1e-5)
        h = proj(x, "ffn_in", HIDDEN, FFN)
        erf = n("Erf", [n("Div", [h, "sqrt2"], p + "h_scaled")], p + "erf")
        g = n("Mul", [n("Mul", [h, "half"], p + "h_half"), n("Add", [erf, "one"], p + "erf1")], p + "gelu")
        x = n("LayerNormalization", [n("Add", [x, proj(g, "ffn_out", FFN, HIDDEN)], p + "res2"), "ones_h", "zeros_h"], p + "ln2", axis=-1, epsilon=1e-5)
    cls = n("Gather", [x, "zero_idx"], "cls", axis=1)  # [B, H]
    pooled = n("Tanh", [n("Add", [n("MatMul", [cls, w("pool_w", HIDDEN, HIDDEN)], "pool_mm"), w("pool_b", HIDDEN)], "pool")], "pooled")
    n("Add", [n("MatMul", [pooled, w("cls_w", HIDDEN, LABELS)], "cls_mm"), w("cls_b", LABELS)], "logits")
    ins = [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"]) for name in ("input_ids", "attention_mask")]
    outs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", LABELS])]
    model = helper.make_model(helper.make_graph(nodes, "minilm-shape", ins, outs, inits), opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(os.path.join(out, "onnx"), exist_ok=True)
    for f in ("config.json", "tokenizer.json", "tokenizer_config.json", "svc-model.json"):
        shutil.copy(os.path.join(FIXTURE, f), os.path.join(out, f))
    with open(os.path.join(FIXTURE, "tokenizer.json"), encoding="utf-8") as f:
        vocab = len(json.load(f)["model"]["vocab"])
    onnx.save(build(vocab), os.path.join(out, "onnx", "model.onnx"))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
