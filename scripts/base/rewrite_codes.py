"""Rewrite served graphs built before int8.py made each token's codes with one QuantizeLinear: every Div, Round,
Clip, (Add 128,) Cast-to-uint8 chain in front of a MatMulInteger becomes int8.py's codes() (QuantizeLinear over
blocks of a whole row, opset 21; a graph of an earlier opset is converted first). The integers are the same: the
rewritten graph is run beside the original on random inputs and written only if every output is equal bit for bit.

    .venv/bin/python scripts/base/rewrite_codes.py models/builtin/onnx/encoder.onnx models/builtin/onnx/scorer.onnx

Inputs: the graphs (encoder.onnx of build_base.py, scorer.onnx of quantize_scorer.py); rewritten in place. No
randomness beyond the check's inputs (seed 0); about 3 s on 2 cores for both served graphs.
"""
import sys

import numpy as np
import onnx
import onnxruntime as ort

from int8 import Graph, Int8, at21


def rewrite(model):
    """The chains rewritten in place; returns how many."""
    at21(model)
    g = model.graph
    producer = {o: n for n in g.node for o in n.output}
    inits = {i.name: i for i in g.initializer}
    users = {}
    for n in g.node:
        for i in n.input:
            users.setdefault(i, []).append(n)
    built, replace, dropped = Graph(), {}, set()
    int8 = None
    for n in g.node:
        if n.op_type != "MatMulInteger" or n.input[0] not in producer or producer[n.input[0]].op_type != "Cast":
            continue
        chain = [producer[n.input[0]]]
        while chain[-1].op_type != "Div":
            chain.append(producer[chain[-1].input[0]])
        assert [c.op_type for c in chain] in (["Cast", "Add", "Clip", "Round", "Div"], ["Cast", "Clip", "Round", "Div"]), chain
        assert all(len(users[c.output[0]]) == 1 for c in chain[1:]), "a chain's step is read elsewhere"
        if int8 is None:  # the graph's own constants' prefix, from its zero point's name ("zp128" or "int8.zp128")
            int8 = Int8(built, n.input[2][: n.input[2].rindex("zp")])
        x, s = chain[-1].input
        cast = chain[0].output[0]
        first = len(built.nodes)
        int8.codes(x, s, inits[n.input[1]].dims[0], "zp128" if chain[1].op_type == "Add" else "zp0", cast.removesuffix(".u8"))
        built.nodes[-1].output[0] = cast  # the MatMulInteger reads the codes under the Cast's name
        replace[id(chain[0])] = built.nodes[first:]
        dropped.update(id(c) for c in chain[1:])
    nodes = []
    for n in g.node:
        if id(n) in replace:
            nodes += replace[id(n)]
        elif id(n) not in dropped:
            nodes.append(n)
    del g.node[:]
    g.node.extend(nodes)
    used = {i for n in nodes for i in n.input}
    have = {i.name for i in g.initializer}
    kept = [t for t in g.initializer if t.name in used] + [t for t in built.inits if t.name in used and t.name not in have]
    del g.initializer[:]
    g.initializer.extend(kept)
    return len(replace)


def feeds(model, rng):
    """Random inputs of the encoder (token ids, some rows padded) or the scorer (token states of three lengths)."""
    names = [i.name for i in model.graph.input]
    if names == ["input_ids", "attention_mask"]:
        rows = next(i for i in model.graph.initializer if i.name == "word.packed").dims[0]
        out = []
        for b, length in ((1, 60), (5, 13), (3, 200)):
            ids = rng.integers(5, rows, (b, length)).astype(np.int64)
            mask = np.ones((b, length), np.int64)
            mask[1:, length // 2:] = 0
            ids[mask == 0] = 1
            out.append({"input_ids": ids, "attention_mask": mask})
        return out
    width = 3 * 384
    out = []
    for qtype, (ls, lq, n, lo) in enumerate(((60, 15, 4, 13), (1, 3, 2, 1), (200, 20, 7, 5))):
        om = np.ones((n, lo), np.int64)
        om[1:, lo // 2 + 1:] = 0
        state = rng.standard_normal((1, ls, width)).astype(np.float32)
        kv = rng.standard_normal((1, ls, 4 * 384)).astype(np.float32)
        out.append({"state": state, "state_kv": kv, "state_mask": np.ones((1, ls), np.int64),
                    "question": rng.standard_normal((1, lq, width)).astype(np.float32), "question_mask": np.ones((1, lq), np.int64),
                    "options": rng.standard_normal((n, lo, width)).astype(np.float32), "options_mask": om,
                    "qtype": np.array([qtype], np.int64)})
    return out


def session(model):
    so = ort.SessionOptions()
    so.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


for path in sys.argv[1:]:
    before = onnx.load(path)
    after = onnx.load(path)
    n = rewrite(after)
    if n == 0:
        sys.exit(f"{path}: no Div/Round/Clip/Cast chain before a MatMulInteger (already rewritten?)")
    onnx.checker.check_model(after)
    a, b = session(before), session(after)
    inputs = feeds(before, np.random.default_rng(0))
    for f in inputs:
        for x, y in zip(a.run(None, f), b.run(None, f)):
            if not np.array_equal(x, y):
                sys.exit(f"{path}: the rewritten graph differs (max {np.abs(x - y).max()}); not written")
    onnx.save(after, path)
    print(f"{path}: {n} chains rewritten, outputs equal bit for bit on {len(inputs)} inputs; "
          f"{len(before.graph.node)} -> {len(after.graph.node)} nodes")
